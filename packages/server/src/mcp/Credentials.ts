/**
 * The credential an MCP call sends: `headersFor(principal, connection)` gives the request headers (none; an API key
 * or an OAuth access token as `Authorization: Bearer …`), refreshing an OAuth token that expires within a minute
 * first.
 *
 * A refresh reads the token and its `credential_version`, calls the token endpoint outside any transaction (the
 * SDK's `refreshAuthorization` through the outbound guard), then writes with compare-and-set on the version read.
 * When the write finds another version, another refresh won: its token is read back and used, so a newer refresh
 * token is never overwritten. An authorization server that rotates refresh tokens refuses the loser's (already
 * used) one with `invalid_grant`: before calling that a rejection the loser waits a moment for the winner's write.
 */
import { InvalidGrantError } from "@modelcontextprotocol/sdk/server/auth/errors.js"
import type { AuthorizationServerMetadata, OAuthClientInformationMixed } from "@modelcontextprotocol/sdk/shared/auth.js"
import { ConnectionNotReady, type ServiceUnavailable } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { refreshAuthorization } from "../integrations/mcp/McpSdk.js"
import { Crypto } from "../platform/Crypto.js"
import { bind, type Binding, SecretColumns } from "../platform/SecretColumns.js"
import { Outbound } from "../platform/Outbound.js"
import type { Principal } from "../platform/Principal.js"
import { orUnavailable } from "../platform/Sql.js"
import { encryptTokens, type StoredCredential } from "../platform/StoredCredential.js"
import { now } from "../platform/Time.js"
import { awaitOtherRefresh, expired, expiring } from "../platform/TokenTiming.js"
import type { McpConnectionRow } from "./ConnectionsRepository.js"
import { CredentialsRepository, type CredentialTarget, tokenBindings } from "./CredentialsRepository.js"
import * as Readiness from "./Readiness.js"

/** The columns of a connection `headersFor` reads (of ConnectionsRepository's row). */
export type CredentialConnection = Pick<
  McpConnectionRow,
  | "id"
  | "organizationId"
  | "url"
  | "authType"
  | "credentialMode"
  | "apiKeyCiphertext"
  | "oauthClientId"
  | "oauthClientSecretCiphertext"
  | "oauthTokenEndpointAuthMethod"
  | "oauthMetadata"
  | "oauthIssuerReviewRequiredAt"
>

export const connectPath = (connectionId: string) => `POST /v1/mcp-connections/${connectionId}/connect`

const notReady = (message: string) => new ConnectionNotReady({ message })

/**
 * Why a stored credential cannot be used now, or undefined when it can: the readiness message (Readiness.ts) with
 * where to connect, or that the authorization server refused it.
 */
export const credentialProblem = (
  connection: Pick<CredentialConnection, "id" | "credentialMode" | "oauthIssuerReviewRequiredAt">,
  credential: StoredCredential | undefined
) => {
  if (connection.oauthIssuerReviewRequiredAt !== null) return Readiness.ISSUER_REVIEW
  const how = connection.credentialMode === "shared"
    ? `an admin connects it with ${connectPath(connection.id)}`
    : `connect your account with ${connectPath(connection.id)}`
  if (credential === undefined || credential.accessTokenCiphertext === null) {
    const message = connection.credentialMode === "shared" ? Readiness.CONNECT_SHARED : Readiness.CONNECT_YOUR_ACCOUNT
    return `${message} (${how})`
  }
  if (credential.credentialHealth === "reconnect_required") {
    return `The authorization server refused the stored credential${credential.credentialHealthReason ? ` (${credential.credentialHealthReason})` : ""}: reconnect (${how}).`
  }
  return undefined
}

/** The OAuth client as the SDK's helpers take it. */
export const clientInformationOf = (
  connection: Pick<CredentialConnection, "oauthClientId" | "oauthTokenEndpointAuthMethod">,
  secret: string | undefined
): OAuthClientInformationMixed => ({
  client_id: connection.oauthClientId ?? "",
  ...(secret === undefined ? {} : { client_secret: secret }),
  ...(connection.oauthTokenEndpointAuthMethod === null ? {} : { token_endpoint_auth_method: connection.oauthTokenEndpointAuthMethod })
})

/**
 * The stored authorization server metadata (`oauth_metadata`), if any. The SQL client turns the names of a row's
 * members into camelCase, JSON members included, so they are turned back into the RFC 8414 names here.
 */
export const metadataOf = (connection: Pick<CredentialConnection, "oauthMetadata">): AuthorizationServerMetadata | undefined => {
  const stored = typeof connection.oauthMetadata === "string" ? safeParse(connection.oauthMetadata) : connection.oauthMetadata
  if (stored === null || typeof stored !== "object" || Array.isArray(stored)) return undefined
  const metadata = Object.fromEntries(
    Object.entries(stored).map(([key, value]) => [key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`), value])
  )
  return typeof metadata.token_endpoint === "string" && typeof metadata.issuer === "string"
    ? (metadata as AuthorizationServerMetadata)
    : undefined
}

const safeParse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 200)

const make = Effect.gen(function*() {
  const repository = yield* CredentialsRepository
  const crypto = yield* Crypto
  const outbound = yield* Outbound
  const fetchFn = outbound.fetchWith({ destination: "user" })

  /**
   * A stored secret of the connection; one that does not decrypt (logged once, naming the key problem) makes the
   * connection not ready, with the reason, as a missing credential does.
   */
  const decrypt = (ciphertext: string, binding: Binding) =>
    Effect.mapError(crypto.decrypt(ciphertext, binding), (error) => notReady(error.message))

  /** The access token of a usable credential read back after another refresh won. */
  const usable = (connection: CredentialConnection, target: CredentialTarget, credential: Option.Option<StoredCredential>) => {
    const value = Option.getOrUndefined(credential)
    const problem = credentialProblem(connection, value)
    return problem !== undefined || value === undefined || value.accessTokenCiphertext === null
      ? Effect.fail(notReady(problem ?? "The connection has no credential."))
      : decrypt(value.accessTokenCiphertext, tokenBindings(target).access)
  }

  /**
   * Refreshes a credential read at `credential.credentialVersion` and answers the access token to use: the new
   * one, or the one a concurrent refresh stored.
   */
  const refresh = (
    connection: CredentialConnection,
    target: CredentialTarget,
    credential: StoredCredential
  ): Effect.Effect<string, ConnectionNotReady | ServiceUnavailable> =>
    Effect.gen(function*() {
      const at = yield* now
      const current = () =>
        expired(credential, at) || credential.accessTokenCiphertext === null
          ? Effect.fail(notReady(`The access token expired and cannot be refreshed: reconnect (${connectPath(connection.id)}).`))
          : decrypt(credential.accessTokenCiphertext, tokenBindings(target).access)
      const metadata = metadataOf(connection)
      if (credential.refreshTokenCiphertext === null || metadata === undefined || connection.oauthClientId === null) return yield* current()
      const refreshToken = yield* decrypt(credential.refreshTokenCiphertext, tokenBindings(target).refresh)
      const secret = connection.oauthClientSecretCiphertext === null
        ? undefined
        : yield* decrypt(connection.oauthClientSecretCiphertext, bind(SecretColumns.mcpOAuthClientSecret, connection.organizationId, connection.id))
      const answer = yield* Effect.result(Effect.tryPromise({
        try: () =>
          refreshAuthorization(metadata.issuer, {
            metadata,
            clientInformation: clientInformationOf(connection, secret),
            refreshToken,
            resource: new URL(connection.url),
            fetchFn
          }),
        catch: (error) => error
      }))
      if (answer._tag === "Failure") {
        const error = answer.failure
        if (!(error instanceof InvalidGrantError)) {
          yield* Effect.logWarning(`MCP connection ${connection.id}: token refresh failed: ${describe(error)}`)
          // Still valid for a moment: use it, the next call tries again.
          if (!expired(credential, at)) return yield* current()
          return yield* Effect.fail(notReady(`The access token expired and the authorization server did not refresh it (${describe(error)}); retry later or reconnect.`))
        }
        // Rotation: a concurrent refresh may have spent this refresh token; its write is the credential to use.
        const other = yield* awaitOtherRefresh(orUnavailable(repository.find(target)), credential.credentialVersion)
        if (Option.isSome(other)) return yield* usable(connection, target, other)
        const reason = "authorization_rejected"
        const marked = yield* orUnavailable(repository.markReconnectRequired(target, credential.credentialVersion, reason, yield* now))
        if (!marked) return yield* usable(connection, target, yield* orUnavailable(repository.find(target)))
        return yield* Effect.fail(notReady(
          `The authorization server refused to refresh the credential (invalid_grant): reconnect with ${connectPath(connection.id)}.`
        ))
      }
      const tokens = yield* Effect.mapError(
        Effect.provideService(encryptTokens(answer.success, at, credential.grantedScopes, tokenBindings(target)), Crypto, crypto),
        (error) => notReady(`The refreshed credential cannot be stored: ${error.message}`)
      )
      const written = yield* orUnavailable(repository.compareAndSet(target, credential.credentialVersion, tokens, yield* now))
      if (written) return answer.success.access_token
      return yield* usable(connection, target, yield* orUnavailable(repository.find(target)))
    })

  /** The stored credential of the caller for this connection: the shared one, or the member's own. */
  const targetOf = (principal: Principal, connection: CredentialConnection): Effect.Effect<CredentialTarget, ConnectionNotReady> => {
    if (connection.credentialMode === "shared") {
      return Effect.succeed({ organizationId: connection.organizationId, connectionId: connection.id, membershipId: null })
    }
    if (principal._tag !== "Member") {
      return Effect.fail(notReady("The connection uses each member's own account: background work has none."))
    }
    return Effect.succeed({ organizationId: connection.organizationId, connectionId: connection.id, membershipId: principal.membership.id })
  }

  /** The OAuth access token for the caller, refreshed first when it expires within `REFRESH_WINDOW` (platform/TokenTiming.ts). */
  const accessToken = Effect.fn("Credentials.accessToken")(function*(principal: Principal, connection: CredentialConnection) {
    if (connection.oauthIssuerReviewRequiredAt !== null) return yield* Effect.fail(notReady(Readiness.ISSUER_REVIEW))
    const target = yield* targetOf(principal, connection)
    const stored = Option.getOrUndefined(yield* orUnavailable(repository.find(target)))
    const problem = credentialProblem(connection, stored)
    if (problem !== undefined || stored === undefined || stored.accessTokenCiphertext === null) {
      return yield* Effect.fail(notReady(problem ?? "The connection has no credential."))
    }
    if (expiring(stored, yield* now)) return yield* refresh(connection, target, stored)
    return yield* decrypt(stored.accessTokenCiphertext, tokenBindings(target).access)
  })

  /** The headers an MCP request of `principal` to this connection carries. */
  const headersFor = Effect.fn("Credentials.headersFor")(function*(
    principal: Principal,
    connection: CredentialConnection
  ): Effect.fn.Return<Record<string, string>, ConnectionNotReady | ServiceUnavailable> {
    switch (connection.authType) {
      case "none":
        return {}
      case "apikey": {
        if (connection.apiKeyCiphertext === null) {
          return yield* Effect.fail(notReady("The connection has no API key: an admin sets one (PATCH /v1/mcp-connections/{connectionId})."))
        }
        return { authorization: `Bearer ${yield* decrypt(connection.apiKeyCiphertext, bind(SecretColumns.mcpApiKey, connection.organizationId, connection.id))}` }
      }
      case "oauth":
        return { authorization: `Bearer ${yield* accessToken(principal, connection)}` }
    }
  })

  /**
   * After the MCP server refused the OAuth token a request carried (HTTP 401): the headers to retry with, once,
   * when the credential could be renewed (another call already stored a newer token, or the refresh token gives
   * one); otherwise none, and the credential is marked `reconnect_required` (reason `resource_rejected`, or
   * `authorization_rejected` when the refresh itself was refused), which the connection's `needsReconnect` shows
   * and which stops its calls until someone connects again.
   */
  const renewAfterRejection = Effect.fn("Credentials.renewAfterRejection")(function*(
    principal: Principal,
    connection: CredentialConnection,
    rejected: Readonly<Record<string, string>>
  ): Effect.fn.Return<Option.Option<Record<string, string>>, ConnectionNotReady | ServiceUnavailable> {
    if (connection.authType !== "oauth") return Option.none()
    const target = yield* targetOf(principal, connection)
    const stored = Option.getOrUndefined(yield* orUnavailable(repository.find(target)))
    if (stored === undefined || stored.accessTokenCiphertext === null || stored.credentialHealth === "reconnect_required") {
      return Option.none()
    }
    const current = `Bearer ${yield* decrypt(stored.accessTokenCiphertext, tokenBindings(target).access)}`
    if (current !== rejected["authorization"]) return Option.some({ authorization: current })
    if (stored.refreshTokenCiphertext !== null) {
      const renewed = yield* refresh(connection, target, stored).pipe(
        Effect.map((token) => `Bearer ${token}`),
        // A refused refresh has marked the credential already.
        Effect.catchTag("ConnectionNotReady", () => Effect.succeed(undefined))
      )
      if (renewed === undefined) return Option.none()
      if (renewed !== rejected["authorization"]) return Option.some({ authorization: renewed })
    }
    yield* orUnavailable(repository.markReconnectRequired(target, stored.credentialVersion, "resource_rejected", yield* now))
    return Option.none()
  })

  return { headersFor, accessToken, renewAfterRejection } as const
})

export class Credentials extends Context.Service<Credentials>()("@orgplane/server/mcp/Credentials", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(CredentialsRepository.layer))
}

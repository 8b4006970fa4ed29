/**
 * OAuth for MCP connections: connect (discover the authorization server, register or pick the OAuth client, start
 * an authorization code flow with PKCE), the callback (check the signed state, exchange the code, store the
 * tokens), disconnect, and the client ID metadata document. The protocol work is the MCP SDK's
 * (`@modelcontextprotocol/sdk/client/auth.js`), every request through the outbound guard as a user-supplied
 * destination; nothing outside the database happens inside a transaction.
 *
 * `state` is `<organization id>.<authorization id>.<HMAC-SHA256>`: the organization and the pending authorization,
 * signed with a key derived from the instance's cursor key, checked in constant time. The row it names holds the
 * PKCE verifier (encrypted), whose credential the tokens become, and its expiry (10 minutes); it is used once.
 */
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  exchangeAuthorization,
  extractWWWAuthenticateParams,
  registerClient,
  startAuthorization
} from "@modelcontextprotocol/sdk/client/auth.js"
import { HttpServerRequest } from "@effect/platform"
import { OAuthError } from "@modelcontextprotocol/sdk/server/auth/errors.js"
import type { AuthorizationServerMetadata, OAuthProtectedResourceMetadata } from "@modelcontextprotocol/sdk/shared/auth.js"
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js"
import {
  Conflict,
  ConnectionValidationFailed,
  type ExternalMcpConnectionId,
  InvalidRequest,
  type McpClientMetadataDocument,
  type McpConnectResult,
  type McpDiagnostic,
  type McpOAuthCallbackQuery,
  type McpRegistrationSource,
  NotFound,
  type OrganizationId
} from "@orgplane/schema"
import { Duration, Effect, FiberRef, HashMap, Option } from "effect"
import * as NodeCrypto from "node:crypto"
import { ServerConfig, type ServerSettings } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { CursorKey } from "../platform/Keyset.js"
import { Outbound, originOf } from "../platform/Outbound.js"
import { authorize, can, type Principal } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { VERSION } from "../Version.js"
import { clientInformationOf, Credentials, encryptTokens, metadataOf } from "./Credentials.js"
import { Access, McpConnectionKind } from "../catalog/Access.js"
import { ConnectionsRepository, type McpConnectionRow } from "./ConnectionsRepository.js"
import { CredentialsRepository, type CredentialTarget } from "./CredentialsRepository.js"
import { pathHash } from "./Diagnostics.js"
import { outboundErrorOf } from "./Session.js"

/** How long an authorization URL stays valid. */
export const AUTHORIZATION_TTL = Duration.minutes(10)

export const CALLBACK_PATH = "/v1/mcp-connections/oauth/callback"
export const CLIENT_METADATA_PATH = "/v1/mcp-connections/oauth/client-metadata.json"

const connectionNotFound = () => new NotFound({ error: "connection_not_found", message: "The MCP connection does not exist." })

// The base URL ------------------------------------------------------------------------------------------------------

const HOST = /^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i

/**
 * The server's base URL for the callback and the client metadata document: `ORGPLANE_PUBLIC_URL`, else the address
 * the request reached (its `Host`, over http: a server without a public URL is a local one), else the configured
 * host and port.
 */
export const baseUrlOf = (settings: Pick<ServerSettings, "publicUrl" | "host" | "port">, host: string | undefined): string => {
  if (settings.publicUrl !== undefined) return settings.publicUrl.replace(/\/+$/, "")
  if (host !== undefined && HOST.test(host)) return `http://${host}`
  return `http://${settings.host}:${settings.port}`
}

/** The server's base URL for the request being handled: `ORGPLANE_PUBLIC_URL`, else the address it reached. */
export const requestBaseUrl = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const request = yield* HttpServerRequest.HttpServerRequest
  return baseUrlOf(settings, request.headers.host)
})

export const callbackUrlOf = (baseUrl: string) => `${baseUrl}${CALLBACK_PATH}`

export const clientMetadataDocument = (baseUrl: string): McpClientMetadataDocument => ({
  client_id: `${baseUrl}${CLIENT_METADATA_PATH}`,
  client_name: "orgplane",
  client_uri: baseUrl,
  redirect_uris: [callbackUrlOf(baseUrl)],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
  application_type: "web"
})

// State ---------------------------------------------------------------------------------------------------------------

/**
 * The key that signs states: derived from the cursor key, so it is the instance's and never leaves it; one per
 * purpose, so a state of one flow is refused by another's callback.
 */
export const stateKeyOf = (cursorKey: Buffer, purpose = "orgplane/mcp-oauth-state") =>
  NodeCrypto.createHmac("sha256", cursorKey).update(purpose).digest()

const mac = (key: Buffer, organizationId: string, authorizationId: string) =>
  NodeCrypto.createHmac("sha256", key).update(`${organizationId}.${authorizationId}`).digest()

export const signState = (key: Buffer, organizationId: string, authorizationId: string) =>
  `${organizationId}.${authorizationId}.${mac(key, organizationId, authorizationId).toString("base64url")}`

/** The organization and authorization a state names, if its signature is ours (compared in constant time). */
export const verifyState = (
  key: Buffer,
  state: string
): { readonly organizationId: OrganizationId; readonly authorizationId: string } | undefined => {
  const parts = state.split(".")
  if (parts.length !== 3) return undefined
  const [organizationId, authorizationId, signature] = parts
  if (organizationId === "" || authorizationId === "") return undefined
  const expected = mac(key, organizationId, authorizationId)
  const given = Buffer.from(signature, "base64url")
  if (given.length !== expected.length || !NodeCrypto.timingSafeEqual(given, expected)) return undefined
  return { organizationId: organizationId as OrganizationId, authorizationId }
}

// Callbacks -----------------------------------------------------------------------------------------------------------

/** A refusal only the server can make: a 400 whose detail carries a `code` (the README lists them). */
export const callbackRefused = (path: string, code: string, message: string) => new InvalidRequest({ details: [{ message, path: [path], code }] })
export const badState = (message: string, code = "oauth_state_invalid") => callbackRefused("state", code, message)

interface PendingAuthorization {
  readonly usedAt: Date | null
  readonly expiresAt: Date
}

/**
 * The checks every OAuth callback makes, in order: a `state` this server signed with `key`; the pending authorization
 * it names (`find`, else `unknown` says why it may be gone), neither used nor expired; an `error` from the
 * authorization server (`who` names it) spends the authorization (`spend`) and is refused; otherwise a `code`. The
 * authorization, its key, the code and the time of the checks.
 */
export const checkCallback = <A extends PendingAuthorization, E1, R1, E2, R2>(options: {
  readonly query: McpOAuthCallbackQuery
  readonly key: Buffer
  readonly find: (key: { readonly organizationId: OrganizationId; readonly id: string }) => Effect.Effect<Option.Option<A>, E1, R1>
  readonly spend: (key: { readonly organizationId: OrganizationId; readonly id: string }, at: Date) => Effect.Effect<unknown, E2, R2>
  readonly who: (authorization: A) => string
  readonly unknown: string
}) =>
  Effect.gen(function*() {
    const { query } = options
    if (query.state === undefined || query.state === "") return yield* Effect.fail(badState("The callback carries no `state`: start again with connect."))
    const named = verifyState(options.key, query.state)
    if (named === undefined) return yield* Effect.fail(badState("The `state` is not one this server issued: start again with connect."))
    const authorizationKey = { organizationId: named.organizationId, id: named.authorizationId }
    const authorization = Option.getOrUndefined(yield* options.find(authorizationKey))
    if (authorization === undefined) return yield* Effect.fail(badState(`The authorization is unknown (${options.unknown}): start again with connect.`))
    if (authorization.usedAt !== null) return yield* Effect.fail(badState("This authorization was already used: start again with connect.", "oauth_authorization_used"))
    const at = yield* now
    if (authorization.expiresAt.getTime() <= at.getTime()) {
      return yield* Effect.fail(badState("This authorization expired (they last 10 minutes): start again with connect.", "oauth_authorization_expired"))
    }
    if (query.error !== undefined) {
      // Spent: a refusal cannot be followed by a code for the same state.
      yield* options.spend(authorizationKey, at)
      const description = query.error_description === undefined ? "" : `: ${query.error_description.slice(0, 300)}`
      return yield* Effect.fail(callbackRefused(
        "error",
        query.error === "access_denied" ? "oauth_access_denied" : "oauth_authorization_refused",
        query.error === "access_denied"
          ? `The authorization was denied (access_denied${description}). Nothing was connected.`
          : `${options.who(authorization)} refused the authorization (${query.error.slice(0, 100)}${description}). Nothing was connected.`
      ))
    }
    if (query.code === undefined || query.code === "") {
      return yield* Effect.fail(callbackRefused("code", "oauth_code_missing", "The callback carries neither `code` nor `error`."))
    }
    return { authorization, authorizationKey, code: query.code, at }
  })

// Choices (pure) ----------------------------------------------------------------------------------------------------

/** Which authorization server: the configured issuer, else the one the MCP server names; several → the admin picks. */
export const chooseIssuer = (
  configured: string | null,
  resourceMetadata: Pick<OAuthProtectedResourceMetadata, "authorization_servers"> | undefined,
  mcpUrl: string
): { readonly issuer: string } | { readonly several: ReadonlyArray<string> } => {
  if (configured !== null) return { issuer: configured }
  const servers = resourceMetadata?.authorization_servers ?? []
  if (servers.length === 1) return { issuer: servers[0] }
  if (servers.length > 1) return { several: servers }
  // No protected-resource metadata: the MCP server's origin is its own authorization server (MCP 2025-03-26).
  return { issuer: new URL(mcpUrl).origin }
}

export type Registration =
  | { readonly _tag: "existing"; readonly source: McpRegistrationSource }
  | { readonly _tag: "client_metadata"; readonly clientId: string }
  | { readonly _tag: "dynamic" }
  | { readonly _tag: "required" }

/**
 * The OAuth client to use, in order: one an admin registered (`pre_registered`); one registered before with this
 * authorization server and callback; a client ID metadata document when the authorization server supports them and
 * the server's public URL is https (the authorization server must be able to fetch it); dynamic registration
 * (RFC 7591) when it has a registration endpoint; else an admin must register a client.
 */
export const chooseRegistration = (
  connection: Pick<McpConnectionRow, "oauthClientId" | "oauthRegistrationSource" | "oauthMetadata" | "oauthRedirectUri">,
  issuer: string,
  metadata: Pick<AuthorizationServerMetadata, "registration_endpoint"> & { readonly client_id_metadata_document_supported?: unknown },
  callbackUrl: string,
  publicBaseUrl: string | undefined
): Registration => {
  if (connection.oauthClientId !== null && (connection.oauthRegistrationSource === "pre_registered" || connection.oauthRegistrationSource === null)) {
    return { _tag: "existing", source: "pre_registered" }
  }
  if (
    connection.oauthClientId !== null && connection.oauthRegistrationSource !== null && metadataOf(connection)?.issuer === issuer &&
    connection.oauthRedirectUri === callbackUrl
  ) {
    return { _tag: "existing", source: connection.oauthRegistrationSource }
  }
  if (metadata.client_id_metadata_document_supported === true && publicBaseUrl !== undefined && publicBaseUrl.startsWith("https://")) {
    return { _tag: "client_metadata", clientId: clientMetadataDocument(publicBaseUrl).client_id }
  }
  if (typeof metadata.registration_endpoint === "string") return { _tag: "dynamic" }
  return { _tag: "required" }
}

/**
 * The scopes an authorization asks for: those the admin set; else those the MCP server's challenge names; else its
 * protected-resource metadata's `scopes_supported`; else none (the authorization server's default).
 */
export const scopesToRequest = (
  configured: ReadonlyArray<string>,
  challengeScope: string | undefined,
  supported: ReadonlyArray<string> | undefined
): ReadonlyArray<string> => {
  if (configured.length > 0) return configured
  const challenged = (challengeScope ?? "").split(" ").filter((scope) => scope !== "")
  if (challenged.length > 0) return challenged
  return supported ?? []
}

/** Issuers compare as URLs without a trailing slash (`https://as.example` and `https://as.example/` are one). */
export const sameIssuer = (a: string, b: string) => a.replace(/\/+$/, "") === b.replace(/\/+$/, "")

/** The token endpoint authentication a dynamically registered client asks for: public (PKCE) when allowed. */
const authMethodFor = (metadata: AuthorizationServerMetadata): "none" | "client_secret_basic" | "client_secret_post" => {
  const supported = metadata.token_endpoint_auth_methods_supported
  if (supported === undefined || supported.includes("none")) return "none"
  return supported.includes("client_secret_post") && !supported.includes("client_secret_basic") ? "client_secret_post" : "client_secret_basic"
}

/** The endpoints and capabilities kept in `oauth_metadata` (what refresh and the callback need). */
const keptMetadata = (metadata: AuthorizationServerMetadata) => {
  const keys = [
    "issuer",
    "authorization_endpoint",
    "token_endpoint",
    "registration_endpoint",
    "revocation_endpoint",
    "scopes_supported",
    "response_types_supported",
    "grant_types_supported",
    "code_challenge_methods_supported",
    "token_endpoint_auth_methods_supported",
    "client_id_metadata_document_supported"
  ]
  const record = metadata as Record<string, unknown>
  return Object.fromEntries(keys.filter((key) => record[key] !== undefined).map((key) => [key, record[key]]))
}

// Diagnostics ---------------------------------------------------------------------------------------------------------

const referenceId = Effect.map(FiberRef.get(FiberRef.currentLogAnnotations), (annotations) =>
  Option.match(HashMap.get(annotations, "requestId"), { onNone: () => "unknown", onSome: String }))

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 200)

/** A failed exchange with the MCP server's metadata or its authorization server, as a 502 with a diagnostic. */
const validationFailed = (phase: string, url: string, what: string, cause: unknown) =>
  Effect.map(referenceId, (reference) => {
    const outbound = outboundErrorOf(cause)
    const classified: Pick<McpDiagnostic, "category" | "code" | "retryable" | "operatorAction"> = outbound?.reason === "blocked"
      ? {
        category: "security_blocked",
        code: "MCP_URL_BLOCKED",
        retryable: false,
        operatorAction: "The authorization server's address is refused by the outbound guard: check the MCP server's metadata."
      }
      : outbound?.reason === "timeout"
      ? { category: "request_timeout", code: `MCP_${phase}_TIMEOUT`, retryable: true, operatorAction: "Retry later." }
      : outbound !== undefined
      ? { category: "network_failure", code: `MCP_${phase}_NETWORK`, retryable: true, operatorAction: "Retry later; check that the server is reachable." }
      : {
        category: "oauth_failure",
        code: `MCP_${phase}`,
        retryable: false,
        operatorAction: "Check the connection's OAuth settings (issuer, client) against the provider's documentation."
      }
    return new ConnectionValidationFailed({
      message: `${what}: ${outbound?.message ?? describe(cause)}`,
      diagnostic: {
        referenceId: reference,
        phase,
        message: what,
        outbound: { origin: originOf(url), pathHash: pathHash(url) },
        ...classified
      }
    })
  })

const attempt = <A>(phase: string, url: string, what: string, run: () => Promise<A>) =>
  Effect.tryPromise({ try: run, catch: (cause) => cause }).pipe(Effect.catchAll((cause) => Effect.flip(validationFailed(phase, url, what, cause))))

// The service ---------------------------------------------------------------------------------------------------------

export class OAuth extends Effect.Service<OAuth>()("@orgplane/server/mcp/OAuth", {
  effect: Effect.gen(function*() {
    const repository = yield* CredentialsRepository
    const connections = yield* ConnectionsRepository
    const access = yield* Access
    const credentials = yield* Credentials
    const crypto = yield* Crypto
    const settings = yield* ServerConfig
    const stateKey = stateKeyOf(yield* CursorKey)
    const fetchFn = (yield* Outbound).fetchWith({ destination: "user" })

    const encrypt = (plaintext: string) => Effect.orDie(crypto.encrypt(plaintext))

    const findConnection = (organizationId: OrganizationId, connectionId: ExternalMcpConnectionId) =>
      Effect.flatMap(
        orUnavailable(connections.findRow(organizationId, connectionId)),
        Option.match({ onNone: () => Effect.fail(connectionNotFound()), onSome: Effect.succeed })
      )

    /**
     * What the MCP server answers an `initialize` without a token: on 401, the `WWW-Authenticate` challenge's
     * `resource_metadata` and `scope` (MCP authorization); nothing otherwise, or when it cannot be reached.
     */
    const challengeOf = (url: string) =>
      Effect.tryPromise(async () => {
        const answer = await fetchFn(url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "orgplane", version: VERSION } }
          })
        })
        const params = answer.status === 401 ? extractWWWAuthenticateParams(answer) : {}
        await answer.body?.cancel().catch(() => undefined)
        return params
      }).pipe(Effect.orElseSucceed((): { readonly resourceMetadataUrl?: URL; readonly scope?: string } => ({})))

    const oauthOnly = (connection: McpConnectionRow) =>
      connection.authType === "oauth"
        ? Effect.void
        : Effect.fail(new Conflict({
          error: "mcp_connection_not_oauth",
          message: `The connection authenticates with \`${connection.authType}\`: it is connected when created or changed, not through OAuth.`
        }))

    /** Whose credential the caller connects, after the policy check for it. */
    const targetFor = (principal: Principal, connection: McpConnectionRow) =>
      Effect.gen(function*() {
        if (connection.credentialMode === "shared") {
          yield* authorize(principal, "mcp.manage")
          return { organizationId: connection.organizationId, connectionId: connection.id, membershipId: null } satisfies CredentialTarget
        }
        yield* authorize(principal, "mcp.connectOwn")
        yield* orUnavailable(access.requireUsable(principal, McpConnectionKind, connection.id))
        if (principal._tag !== "Member") {
          return yield* Effect.fail(new Conflict({ error: "mcp_connection_not_per_member", message: "Background work has no account of its own." }))
        }
        return { organizationId: connection.organizationId, connectionId: connection.id, membershipId: principal.membership.id } satisfies CredentialTarget
      })

    /** Whether the caller's credential is in place and usable (refreshed first when it is about to expire). */
    const alreadyConnected = (principal: Principal, connection: McpConnectionRow) =>
      credentials.accessToken(principal, connection).pipe(
        Effect.as(true),
        Effect.catchTag("ConnectionNotReady", () => Effect.succeed(false))
      )

    const connect = (
      principal: Principal,
      connectionId: ExternalMcpConnectionId,
      baseUrl: string
    ) =>
      Effect.gen(function*() {
        const connection = yield* findConnection(principal.organization.id, connectionId)
        yield* oauthOnly(connection)
        const target = yield* targetFor(principal, connection)
        if (yield* alreadyConnected(principal, connection)) return { status: "connected", authorizeUrl: null } satisfies McpConnectResult

        // Without ORGPLANE_PUBLIC_URL the callback is where the request came in, which varies with how people reach
        // the server (localhost, 127.0.0.1): once a client is registered, its redirect URI stays the connection's.
        const callbackUrl = settings.publicUrl === undefined && connection.oauthRedirectUri !== null
          ? connection.oauthRedirectUri
          : callbackUrlOf(baseUrl)
        // The server's challenge to a request without a token names its metadata and the scopes it wants.
        const challenge = yield* challengeOf(connection.url)
        // Discovery (RFC 9728): the MCP server's protected-resource metadata names its authorization servers.
        const resourceMetadata = yield* Effect.tryPromise(() =>
          discoverOAuthProtectedResourceMetadata(
            connection.url,
            challenge.resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl: challenge.resourceMetadataUrl },
            fetchFn
          )
        ).pipe(
          Effect.option,
          Effect.map(Option.getOrUndefined)
        )
        const chosen = chooseIssuer(connection.oauthIssuer, resourceMetadata, connection.url)
        if ("several" in chosen) {
          return yield* Effect.fail(new Conflict({
            error: "oauth_issuer_required",
            message: `The MCP server names several authorization servers (${
              chosen.several.slice(0, 5).join(", ")
            }): set \`oauth.authorizationServerIssuer\` on the connection to the one to use.`
          }))
        }
        const issuer = chosen.issuer
        const metadata = yield* attempt(
          "AUTH_ISSUER_DISCOVERY",
          issuer,
          "The authorization server's metadata could not be read",
          () => discoverAuthorizationServerMetadata(issuer, { fetchFn })
        )
        if (metadata === undefined) {
          return yield* Effect.flip(validationFailed(
            "AUTH_ISSUER_DISCOVERY",
            issuer,
            "The authorization server publishes no metadata (RFC 8414 or OpenID Connect discovery)",
            new Error("no metadata")
          ))
        }

        // The MCP server now names another authorization server than the one its tokens came from: an admin
        // connecting is the review; anyone else is stopped, and so are the connection's tools, until one does.
        const reviewing = can(principal, "mcp.manage")
        const previous = metadataOf(connection)?.issuer
        const changed = connection.oauthIssuer === null && previous !== undefined && sameIssuer(previous, metadata.issuer) === false
        if (!reviewing && (changed || connection.oauthIssuerReviewRequiredAt !== null)) {
          if (changed) yield* transaction(repository.requireIssuerReview({ organizationId: connection.organizationId, connectionId: connection.id }, yield* now))
          return yield* Effect.fail(new Conflict({
            error: "oauth_issuer_review_required",
            message:
              "The MCP server now names another authorization server than the one the connection used: an owner or admin must review it and connect before anyone connects or uses its tools."
          }))
        }

        // The client.
        const registration = chooseRegistration(connection, issuer, metadata, callbackUrl, settings.publicUrl?.replace(/\/+$/, ""))
        let client: {
          readonly clientId: string
          readonly secretCiphertext: string | null
          readonly secret: string | undefined
          readonly source: McpRegistrationSource
          readonly authMethod: string | null
        }
        switch (registration._tag) {
          case "existing": {
            client = {
              clientId: connection.oauthClientId!,
              secretCiphertext: connection.oauthClientSecretCiphertext,
              secret: connection.oauthClientSecretCiphertext === null
                ? undefined
                : yield* Effect.orDie(crypto.decrypt(connection.oauthClientSecretCiphertext)),
              source: registration.source,
              authMethod: connection.oauthTokenEndpointAuthMethod
            }
            break
          }
          case "client_metadata":
            client = { clientId: registration.clientId, secretCiphertext: null, secret: undefined, source: "client_metadata", authMethod: "none" }
            break
          case "dynamic": {
            const method = authMethodFor(metadata)
            const registered = yield* attempt(
              "AUTH_CLIENT_REGISTRATION",
              issuer,
              "Dynamic client registration failed",
              () =>
                registerClient(issuer, {
                  metadata,
                  clientMetadata: {
                    client_name: "orgplane",
                    redirect_uris: [callbackUrl],
                    grant_types: ["authorization_code", "refresh_token"],
                    response_types: ["code"],
                    token_endpoint_auth_method: method
                  },
                  fetchFn
                })
            )
            client = {
              clientId: registered.client_id,
              secretCiphertext: registered.client_secret === undefined ? null : yield* encrypt(registered.client_secret),
              secret: registered.client_secret,
              source: "dynamic",
              authMethod: registered.token_endpoint_auth_method ?? method
            }
            break
          }
          case "required":
            return yield* Effect.fail(new Conflict({
              error: "oauth_client_required",
              message:
                "The authorization server offers neither dynamic client registration nor client ID metadata documents: register an OAuth client with the provider (redirect URI " +
                `${callbackUrl}) and set \`oauth.clientId\` (and \`oauth.clientSecret\`) on the connection.`
            }))
        }

        const requested = scopesToRequest(connection.oauthRequestedScopes, challenge.scope, resourceMetadata?.scopes_supported)
        const authorizationId = (yield* crypto.newToken("moa")).replace(/\./g, "")
        const state = signState(stateKey, connection.organizationId, authorizationId)
        const started = yield* attempt("AUTH_USER_OR_WORKLOAD", issuer, "The authorization could not be started", () =>
          startAuthorization(issuer, {
            metadata,
            clientInformation: clientInformationOf({ oauthClientId: client.clientId, oauthTokenEndpointAuthMethod: client.authMethod }, client.secret),
            redirectUrl: callbackUrl,
            ...(requested.length > 0 ? { scope: requested.join(" ") } : {}),
            state,
            resource: new URL(connection.url)
          }))
        const verifier = yield* encrypt(started.codeVerifier)
        const at = yield* now
        yield* transaction(Effect.gen(function*() {
          yield* repository.setClient({
            organizationId: connection.organizationId,
            connectionId: connection.id,
            oauthClientId: client.clientId,
            oauthClientSecretCiphertext: client.secretCiphertext,
            oauthRegistrationSource: client.source,
            oauthTokenEndpointAuthMethod: client.authMethod,
            oauthRedirectUri: callbackUrl,
            oauthMetadata: keptMetadata(metadata),
            endReview: reviewing,
            at
          })
          yield* repository.deleteExpiredAuthorizations({ organizationId: connection.organizationId, connectionId: connection.id }, at)
          yield* repository.insertAuthorization({
            organizationId: connection.organizationId,
            id: authorizationId,
            mcpConnectionId: connection.id,
            membershipId: principal._tag === "Member" ? principal.membership.id : (yield* Effect.die("a system principal cannot connect")),
            target: target.membershipId === null ? "shared" : "member",
            codeVerifierCiphertext: verifier,
            redirectUri: callbackUrl,
            oauthClientId: client.clientId,
            createdAt: at,
            expiresAt: new Date(at.getTime() + Duration.toMillis(AUTHORIZATION_TTL)),
            usedAt: null
          })
        }))
        return { status: "needs_auth", authorizeUrl: started.authorizationUrl.toString() } satisfies McpConnectResult
      })

    const refused = callbackRefused

    const callback = (query: McpOAuthCallbackQuery) =>
      Effect.gen(function*() {
        const { at, authorization, authorizationKey: key, code } = yield* checkCallback({
          query,
          key: stateKey,
          find: (key) => orUnavailable(repository.findAuthorization(key)),
          spend: (key, at) => transaction(repository.markAuthorizationUsed(key, at)),
          who: () => "The authorization server",
          unknown: "its connection or member was removed"
        })
        const connection = yield* findConnection(authorization.organizationId, authorization.mcpConnectionId)
        const metadata = metadataOf(connection)
        if (connection.oauthClientId !== authorization.oauthClientId || metadata === undefined) {
          return yield* Effect.fail(badState("The connection's OAuth client changed since this authorization started: start again with connect.", "oauth_client_changed"))
        }
        if (query.iss !== undefined && query.iss !== metadata.issuer) {
          return yield* Effect.fail(refused("iss", "oauth_issuer_mismatch", "The callback comes from another authorization server than the one the authorization started with."))
        }
        const verifier = yield* Effect.orDie(crypto.decrypt(authorization.codeVerifierCiphertext))
        const secret = connection.oauthClientSecretCiphertext === null
          ? undefined
          : yield* Effect.orDie(crypto.decrypt(connection.oauthClientSecretCiphertext))
        const issuer = metadata.issuer
        const tokens = yield* Effect.tryPromise({
          try: () =>
            exchangeAuthorization(issuer, {
              metadata,
              clientInformation: clientInformationOf(connection, secret),
              authorizationCode: code,
              codeVerifier: verifier,
              redirectUri: authorization.redirectUri,
              resource: new URL(connection.url),
              fetchFn
            }),
          catch: (cause) => cause
        }).pipe(Effect.catchAll((cause): Effect.Effect<never, InvalidRequest | ConnectionValidationFailed> =>
          cause instanceof OAuthError
            ? Effect.fail(refused(
              "code",
              "oauth_code_rejected",
              `The authorization server refused the code (${cause.errorCode}): start again with connect.`
            ))
            : Effect.flip(validationFailed("AUTH_TOKEN_ACQUISITION", issuer, "The token endpoint did not answer", cause))
        ))
        const encrypted = yield* Effect.orDie(Effect.provideService(encryptTokens(tokens, at, []), Crypto, crypto))
        const target: CredentialTarget = {
          organizationId: authorization.organizationId,
          connectionId: authorization.mcpConnectionId,
          membershipId: authorization.target === "member" ? authorization.membershipId : null
        }
        yield* transaction(Effect.gen(function*() {
          const locked = yield* repository.lockAuthorization(key)
          if (Option.isNone(locked) || locked.value.usedAt !== null) {
            return yield* Effect.fail(badState("This authorization was already used: start again with connect.", "oauth_authorization_used"))
          }
          yield* repository.markAuthorizationUsed(key, at)
          yield* repository.store(target, encrypted, at)
        }))
        return { ok: true, connectionId: connection.id, status: "connected" } as const
      })

    const disconnect = (principal: Principal, connectionId: ExternalMcpConnectionId) =>
      Effect.gen(function*() {
        yield* authorize(principal, "mcp.manage")
        const connection = yield* findConnection(principal.organization.id, connectionId)
        yield* oauthOnly(connection)
        const at = yield* now
        const removed = yield* transaction(
          connection.credentialMode === "shared"
            ? repository.dropShared({ organizationId: connection.organizationId, connectionId }, at)
            : repository.dropAllMembers({ organizationId: connection.organizationId, connectionId })
        )
        return { ok: true, removed } as const
      })

    const disconnectMine = (principal: Principal, connectionId: ExternalMcpConnectionId) =>
      Effect.gen(function*() {
        yield* authorize(principal, "mcp.connectOwn")
        const connection = yield* findConnection(principal.organization.id, connectionId)
        if (connection.credentialMode !== "per_member" || principal._tag !== "Member") {
          return yield* Effect.fail(new Conflict({
            error: "mcp_connection_not_per_member",
            message: "The connection uses one shared credential, not each member's own: an admin disconnects it with POST /v1/mcp-connections/{connectionId}/disconnect."
          }))
        }
        const removed = yield* transaction(
          repository.dropMember({ organizationId: connection.organizationId, connectionId, membershipId: principal.membership.id })
        )
        return { ok: true, removed } as const
      })

    return { connect, callback, disconnect, disconnectMine } as const
  }),
  dependencies: [CredentialsRepository.Default, ConnectionsRepository.Default, Access.Default, Credentials.Default]
}) {}

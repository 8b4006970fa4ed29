/**
 * OAuth for MCP connections: connect (discover the authorization server, register or pick the OAuth client, start
 * an authorization code flow with PKCE), the callback (check the signed state, exchange the code, store the
 * tokens), and disconnect. The choices are OAuthChoices' (pure), what the server publishes OAuthClientMetadata's.
 * The protocol work is the MCP SDK's (`@modelcontextprotocol/sdk/client/auth.js`), every request through the
 * outbound guard as a user-supplied destination; nothing outside the database happens inside a transaction.
 *
 * `state` is signed (platform/OAuthState.ts) and checked as every callback checks it (platform/OAuthCallback.ts). The
 * pending authorization it names holds the PKCE verifier (encrypted), whose credential the tokens become, and its
 * expiry (10 minutes); it is used once.
 */
import { OAuthError } from "@modelcontextprotocol/sdk/server/auth/errors.js"
import {
  Conflict,
  type ConnectionValidationFailed,
  type ExternalMcpConnectionId,
  type InvalidRequest,
  type McpConnectResult,
  type McpOAuthCallbackQuery,
  type McpRegistrationSource,
  NotFound,
  type OrganizationId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { bind, type Binding, SecretColumns } from "../platform/SecretColumns.js"
import { CursorKey } from "../platform/Keyset.js"
import { AUTHORIZATION_TTL, badState, callbackRefused, checkCallback } from "../platform/OAuthCallback.js"
import { signState, stateKeyOf } from "../platform/OAuthState.js"
import { discoverAuthorizationServerMetadata, discoverOAuthProtectedResourceMetadata, exchangeAuthorization, mcpSdk, registerClient, startAuthorization } from "../integrations/mcp/McpSdk.js"
import { Outbound } from "../platform/Outbound.js"
import { authorize, can, type Principal } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { encryptTokens } from "../platform/StoredCredential.js"
import { now } from "../platform/Time.js"
import { VERSION } from "../Version.js"
import { Access, McpConnectionKind } from "../access/Access.js"
import { clientInformationOf, Credentials, metadataOf } from "./Credentials.js"
import { ConnectionsRepository, type McpConnectionRow } from "./ConnectionsRepository.js"
import { CredentialsRepository, type CredentialTarget, tokenBindings } from "./CredentialsRepository.js"
import { callbackUrlOf } from "./OAuthClientMetadata.js"
import { authMethodFor, chooseIssuer, chooseRegistration, keptMetadata, sameIssuer, scopesToRequest } from "./OAuthChoices.js"
import { attempt, validationFailed } from "./OAuthFailures.js"

const connectionNotFound = () => new NotFound({ error: "connection_not_found", message: "The MCP connection does not exist." })

const make = Effect.gen(function*() {
  const repository = yield* CredentialsRepository
  const connections = yield* ConnectionsRepository
  const access = yield* Access
  const credentials = yield* Credentials
  const crypto = yield* Crypto
  const settings = yield* ServerConfig
  const stateKey = stateKeyOf(yield* CursorKey)
  const fetchFn = (yield* Outbound).fetchWith({ destination: "user" })

  /** Fails only without a configured key (a defect, 500). */
  const encrypt = (plaintext: string, binding: Binding) => Effect.orDie(crypto.encrypt(plaintext, binding))

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
      const sdk = await mcpSdk()
      const answer = await fetchFn(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: sdk.LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "orgplane", version: VERSION } }
        })
      })
      const params = answer.status === 401 ? sdk.extractWWWAuthenticateParams(answer) : {}
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

  const connect = Effect.fn("OAuth.connect")(function*(
    principal: Principal,
    connectionId: ExternalMcpConnectionId,
    baseUrl: string
  ) {
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
            : yield* crypto.decrypt(
              connection.oauthClientSecretCiphertext,
              bind(SecretColumns.mcpOAuthClientSecret, connection.organizationId, connection.id)
            ),
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
          secretCiphertext: registered.client_secret === undefined
            ? null
            : yield* encrypt(registered.client_secret, bind(SecretColumns.mcpOAuthClientSecret, connection.organizationId, connection.id)),
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
    const verifier = yield* encrypt(started.codeVerifier, bind(SecretColumns.mcpCodeVerifier, connection.organizationId, authorizationId))
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

  const callback = Effect.fn("OAuth.callback")(function*(query: McpOAuthCallbackQuery) {
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
    const verifier = yield* crypto.decrypt(
      authorization.codeVerifierCiphertext,
      bind(SecretColumns.mcpCodeVerifier, authorization.organizationId, authorization.id)
    )
    const secret = connection.oauthClientSecretCiphertext === null
      ? undefined
      : yield* crypto.decrypt(connection.oauthClientSecretCiphertext, bind(SecretColumns.mcpOAuthClientSecret, connection.organizationId, connection.id))
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
    }).pipe(Effect.catch((cause): Effect.Effect<never, InvalidRequest | ConnectionValidationFailed> =>
      cause instanceof OAuthError
        ? Effect.fail(refused(
          "code",
          "oauth_code_rejected",
          `The authorization server refused the code (${cause.errorCode}): start again with connect.`
        ))
        : Effect.flip(validationFailed("AUTH_TOKEN_ACQUISITION", issuer, "The token endpoint did not answer", cause))
    ))
    const target: CredentialTarget = {
      organizationId: authorization.organizationId,
      connectionId: authorization.mcpConnectionId,
      membershipId: authorization.target === "member" ? authorization.membershipId : null
    }
    const encrypted = yield* Effect.orDie(Effect.provideService(encryptTokens(tokens, at, [], tokenBindings(target)), Crypto, crypto))
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

  const disconnect = Effect.fn("OAuth.disconnect")(function*(principal: Principal, connectionId: ExternalMcpConnectionId) {
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

  const disconnectMine = Effect.fn("OAuth.disconnectMine")(function*(principal: Principal, connectionId: ExternalMcpConnectionId) {
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
})

export class OAuth extends Context.Service<OAuth>()("@orgplane/server/mcp/OAuth", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      CredentialsRepository.layer,
      ConnectionsRepository.layer,
      Access.layer,
      Credentials.layer
    ])
  )
}

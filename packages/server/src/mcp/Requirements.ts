/**
 * Requirements discovery: a live look, without credentials, at one MCP endpoint (the reference's §1.4). It tries an
 * MCP `initialize` (and lists the tools when that works), then the protected-resource metadata (RFC 9728, at the
 * URL the server's challenge names when it names one) and the metadata of the authorization servers it names
 * (RFC 8414, then OpenID Connect discovery), all with the official SDK through the outbound guard (the endpoint is
 * a user-supplied destination; every answer at most 1 MiB), and derives what connecting needs: the kind of
 * authentication, scopes, how an OAuth client can be registered, and what an admin must do by hand.
 *
 * It changes nothing anywhere: no client registration, no credential, no connection.
 */
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { AuthorizationServerMetadata, OAuthProtectedResourceMetadata } from "@modelcontextprotocol/sdk/shared/auth.js"
import { checkResourceAllowed } from "@modelcontextprotocol/sdk/shared/auth-utils.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  McpAuthorizationServer,
  type McpDiscoveredTool,
  McpDiscovery,
  type McpDiscoveryAuthentication,
  type McpDiscoveryTools,
  type McpManualRequirement
} from "@orgplane/schema"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { discoverAuthorizationServerMetadata, discoverOAuthProtectedResourceMetadata, mcpSdk } from "../integrations/mcp/McpSdk.js"
import { Outbound } from "../platform/Outbound.js"
import * as Session from "./Session.js"
import { fromSessionError } from "./SessionErrors.js"

/** Largest answer read during discovery. */
export const MAX_BODY_BYTES = 1024 * 1024
/** `tools/list` pages read at most, and tools kept at most. */
export const MAX_TOOL_PAGES = 5
export const MAX_TOOLS = 100
/** Authorization servers looked at, at most, of those the protected resource names. */
export const MAX_AUTHORIZATION_SERVERS = 5

/**
 * The endpoint cannot be looked at: not an http(s) URL without credentials and fragment, or the guard refused it
 * (not public, not https, a refused redirect).
 */
export class DiscoveryRefused extends Data.TaggedError("DiscoveryRefused")<{ readonly message: string }> {}

/** The whole discovery took longer than allowed. */
export class DiscoveryTimedOut extends Data.TaggedError("DiscoveryTimedOut")<{ readonly message: string }> {}

export interface DiscoverOptions {
  readonly url: string
  /** For the whole discovery, every request included. */
  readonly timeout: Duration.Input
}

type Warning = { readonly code: string; readonly message: string }
type Tools = typeof McpDiscoveryTools.Type
type Manual = typeof McpManualRequirement.Type

/** What the exchanges showed: the last HTTP status, whether any was seen, and the server's challenge. */
interface Observed {
  lastStatus: number | undefined
  sawStatus: boolean
  challengeScope: string | undefined
  resourceMetadataUrl: string | undefined
}

/** Records every answer's status and, on 401/403, the `WWW-Authenticate` challenge (through the SDK's parser). */
const observing = (observed: Observed) => (fetch: FetchLike): FetchLike => async (input, init) => {
  const response = await fetch(input, init)
  observed.lastStatus = response.status
  observed.sawStatus = true
  if (response.status === 401 || response.status === 403) {
    const challenge = (await mcpSdk()).extractWWWAuthenticateParams(response)
    if (challenge.scope !== undefined) observed.challengeScope = challenge.scope
    if (challenge.resourceMetadataUrl !== undefined) observed.resourceMetadataUrl = challenge.resourceMetadataUrl.href
  }
  return response
}

const distinct = (values: ReadonlyArray<string>) => [...new Set(values)]
const withoutTrailingSlash = (value: string) => value.replace(/\/+$/, "")

/**
 * Whether metadata naming `found` as its issuer may stand for the issuer the protected resource advertised: the
 * same URL but for a trailing slash; and for a server that is its own authorization server (it advertises its
 * resource or the resource's origin), either of those two.
 */
export const sameIssuer = (advertised: string, found: string, resource: string | undefined): boolean => {
  const a = withoutTrailingSlash(advertised)
  const f = withoutTrailingSlash(found)
  if (a === f) return true
  if (resource === undefined || !URL.canParse(resource)) return false
  const own = [withoutTrailingSlash(resource), new URL(resource).origin]
  return own.includes(a) && own.includes(f)
}

/** Whether protected-resource metadata naming `resource` is about the endpoint `url` (same origin, the path within). */
export const resourceMatches = (url: string, resource: string): boolean => {
  try {
    return checkResourceAllowed({ requestedResource: url, configuredResource: resource })
  } catch {
    return false
  }
}

const toServer = (metadata: AuthorizationServerMetadata) =>
  new McpAuthorizationServer({
    issuer: metadata.issuer,
    authorizationEndpoint: metadata.authorization_endpoint,
    tokenEndpoint: metadata.token_endpoint,
    ...(metadata.registration_endpoint === undefined ? {} : { registrationEndpoint: metadata.registration_endpoint }),
    clientIdMetadataDocumentSupported: (metadata as { client_id_metadata_document_supported?: unknown }).client_id_metadata_document_supported === true,
    scopesSupported: metadata.scopes_supported ?? [],
    grantTypesSupported: metadata.grant_types_supported ?? [],
    codeChallengeMethodsSupported: metadata.code_challenge_methods_supported ?? [],
    tokenEndpointAuthMethodsSupported: metadata.token_endpoint_auth_methods_supported ?? []
  })

/** The tools, at most `MAX_TOOL_PAGES` pages and `MAX_TOOLS` tools; a failing page ends the listing with a warning. */
const listTools = (client: Client, timeout: Duration.Duration, warnings: Array<Warning>) =>
  Effect.gen(function*() {
    const items: Array<typeof McpDiscoveredTool.Type> = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_TOOL_PAGES && items.length < MAX_TOOLS; page++) {
      const listed = yield* Effect.result(
        Session.request((signal) => client.listTools(cursor === undefined ? undefined : { cursor }, { signal, timeout: Duration.toMillis(timeout) }))
      )
      if (Result.isFailure(listed)) {
        warnings.push({ code: "mcp_tools_list_failed", message: "The server answered initialize but listing its tools failed." })
        break
      }
      for (const tool of listed.success.tools.slice(0, MAX_TOOLS - items.length)) {
        const hints = tool.annotations ?? {}
        items.push({
          name: tool.name,
          ...(typeof hints.readOnlyHint === "boolean" ? { readOnlyHint: hints.readOnlyHint } : {}),
          ...(typeof hints.destructiveHint === "boolean" ? { destructiveHint: hints.destructiveHint } : {}),
          ...(typeof hints.openWorldHint === "boolean" ? { openWorldHint: hints.openWorldHint } : {})
        })
      }
      cursor = listed.success.nextCursor
      if (cursor === undefined) break
    }
    return items
  })

const manual = {
  clientRegistration: {
    code: "oauth_client_registration",
    label: "Register an OAuth client",
    reason:
      "No authorization server found accepts client ID metadata documents or dynamic registration: register a client with the provider and give its id (and secret) when creating the connection.",
    required: true
  },
  apiKey: {
    code: "api_key",
    label: "Provide an API key",
    reason: "The server asks for a credential and advertises no OAuth: create the connection with an API key (sent as a Bearer token).",
    required: true
  },
  serverSelection: {
    code: "authorization_server_selection",
    label: "Choose an authorization server",
    reason: "The server names more than one authorization server: choose the issuer the connection uses.",
    required: true
  },
  providerAccess: {
    code: "provider_access",
    label: "Provider account access",
    reason: "Whoever connects needs an account at the provider with access to what the tools reach.",
    required: false
  },
  networkTrust: {
    code: "network_trust",
    label: "Trust the server",
    reason: "Tool calls send the organization's requests and credentials to this server: make sure its operator is trusted.",
    required: false
  }
} as const satisfies Record<string, Manual>

/**
 * The discovery of one endpoint. Fails with `DiscoveryRefused` when the guard refuses the endpoint and with
 * `DiscoveryTimedOut` past `timeout`; everything else the endpoint does (errors, odd answers) is in the result.
 */
export const discover = (options: DiscoverOptions): Effect.Effect<McpDiscovery, DiscoveryRefused | DiscoveryTimedOut, Outbound> => {
  const timeout = Duration.fromInputUnsafe(options.timeout)
  return Effect.gen(function*() {
    const target = URL.canParse(options.url) ? new URL(options.url) : undefined
    if (target === undefined || (target.protocol !== "http:" && target.protocol !== "https:")) {
      return yield* new DiscoveryRefused({ message: "An MCP server URL must use HTTP or HTTPS." })
    }
    if (target.username !== "" || target.password !== "" || target.hash !== "" || options.url.includes("#")) {
      return yield* new DiscoveryRefused({ message: "An MCP server URL cannot contain credentials or a fragment." })
    }
    const outbound = yield* Outbound
    const observed: Observed = { lastStatus: undefined, sawStatus: false, challengeScope: undefined, resourceMetadataUrl: undefined }
    const record = observing(observed)
    const fetchFn = record(outbound.fetchWith({ destination: "user", maxBodyBytes: MAX_BODY_BYTES, timeout }))
    const warnings: Array<Warning> = []
    const url = options.url

    // Step 1: MCP initialize without credentials, then the tools.
    const initialized = yield* Effect.result(Effect.scoped(Effect.gen(function*() {
      const client = yield* Session.open({ url, timeout, maxBodyBytes: MAX_BODY_BYTES, wrapFetch: record })
      const protocolVersion = (client.transport as StreamableHTTPClientTransport | undefined)?.protocolVersion
      const tools = yield* listTools(client, timeout, warnings)
      return { protocolVersion, tools }
    })))
    let initialize: "succeeded" | "authentication_required" | "failed" = "succeeded"
    if (Result.isFailure(initialized)) {
      const error = initialized.failure
      const refused = Session.outboundErrorOf(error.cause)
      if (refused?.reason === "blocked") return yield* new DiscoveryRefused({ message: refused.message })
      const status = observed.lastStatus
      if (status === 401 || status === 403) initialize = "authentication_required"
      else {
        initialize = "failed"
        const diagnostic = fromSessionError(error, { referenceId: "discovery", url, phase: "MCP_INITIALIZE" })
        warnings.push({ code: status === undefined ? "mcp_unreachable" : `mcp_http_${status}`, message: diagnostic.message })
      }
    }
    const authRequired = initialize === "authentication_required"
    const protocolVersion = Result.isSuccess(initialized) ? initialized.success.protocolVersion : undefined
    // The challenge is the one initialize got, whatever later requests answer.
    const resourceMetadataUrl = observed.resourceMetadataUrl
    const challengeScope = observed.challengeScope

    // Step 2: the protected-resource metadata (RFC 9728), used only when it is about this endpoint (§3.3).
    const prm = yield* Effect.option(Effect.tryPromise(() =>
      discoverOAuthProtectedResourceMetadata(url, { ...(resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl }), ...(protocolVersion === undefined ? {} : { protocolVersion }) }, fetchFn)
    ))
    let resourceMetadata: OAuthProtectedResourceMetadata | undefined = prm._tag === "Some" ? prm.value : undefined
    if (resourceMetadata !== undefined && !resourceMatches(url, resourceMetadata.resource)) {
      warnings.push({ code: "oauth_resource_mismatch", message: "The protected-resource metadata found is about another resource; it is not used." })
      resourceMetadata = undefined
    } else if (resourceMetadata === undefined && authRequired) {
      warnings.push({ code: "oauth_resource_metadata_unavailable", message: "The server's protected-resource metadata (RFC 9728) could not be read." })
    }

    // Step 3: the authorization servers' metadata (RFC 8414, OpenID Connect discovery).
    const advertised = (resourceMetadata?.authorization_servers ?? []).slice(0, MAX_AUTHORIZATION_SERVERS)
    // At once; each answers a server or a warning, kept in the order advertised.
    const found = yield* Effect.forEach(advertised, (issuer) => {
      const shown = issuer.slice(0, 100)
      return Effect.tryPromise(() => discoverAuthorizationServerMetadata(issuer, { fetchFn, ...(protocolVersion === undefined ? {} : { protocolVersion }) })).pipe(
        Effect.map((metadata): McpAuthorizationServer | Warning =>
          metadata === undefined
            ? { code: "oauth_server_metadata_unavailable", message: `No authorization server metadata found for ${shown}.` }
            : !sameIssuer(issuer, metadata.issuer, resourceMetadata?.resource)
            ? { code: "oauth_issuer_mismatch", message: `The metadata found for ${shown} names another issuer; it is not used.` }
            : toServer(metadata)
        ),
        Effect.orElseSucceed((): Warning => ({ code: "oauth_server_metadata_unavailable", message: `The authorization server metadata of ${shown} could not be read.` }))
      )
    }, { concurrency: "unbounded" })
    for (const outcome of found) if (!(outcome instanceof McpAuthorizationServer)) warnings.push(outcome)
    const servers = found.filter((outcome): outcome is McpAuthorizationServer => outcome instanceof McpAuthorizationServer)

    // What it all means.
    const requiredScopes = distinct((challengeScope ?? "").split(/\s+/).filter((scope) => scope !== ""))
    const refreshes = servers.some((server) => server.grantTypesSupported.includes("refresh_token"))
    const offersOffline = servers.some((server) => server.scopesSupported.includes("offline_access"))
    const recommendedScopes = distinct([
      ...(requiredScopes.length > 0 ? requiredScopes : resourceMetadata?.scopes_supported ?? []),
      ...(refreshes && offersOffline ? ["offline_access"] : [])
    ])
    const metadataDocuments = servers.some((server) => server.clientIdMetadataDocumentSupported)
    const dynamic = servers.some((server) => server.registrationEndpoint !== undefined)
    const availableRegistrationMethods = [
      ...(metadataDocuments ? ["client_metadata" as const] : []),
      "pre_registered" as const,
      ...(dynamic ? ["dynamic" as const] : [])
    ]
    const recommendedRegistrationMethod = metadataDocuments ? "client_metadata" : dynamic ? "dynamic" : "pre_registered"
    const refreshSupport = refreshes ? "supported" : servers.length > 0 ? "not_advertised" : "unknown"
    const oauthDetected = resourceMetadata !== undefined || servers.length > 0

    const manualRequirements: Array<Manual> = [
      ...(authRequired && oauthDetected && !metadataDocuments && !dynamic ? [manual.clientRegistration] : []),
      ...(authRequired && !oauthDetected ? [manual.apiKey] : []),
      ...(servers.length > 1 ? [manual.serverSelection] : []),
      manual.providerAccess,
      manual.networkTrust
    ]
    const requiredManual = manualRequirements.some((requirement) => requirement.required)
    const status = initialize === "succeeded"
      ? "ready"
      : !authRequired && !observed.sawStatus
      ? "unreachable"
      : oauthDetected && !requiredManual
      ? "ready"
      : authRequired
      ? "manual_action_required"
      : "unsupported"
    const kind = initialize === "succeeded" ? "none" : oauthDetected ? "oauth" : authRequired ? "manual_bearer" : "unknown"

    const authentication: typeof McpDiscoveryAuthentication.Type = {
      kind,
      authorizationServers: servers,
      requiredScopes,
      recommendedScopes,
      availableRegistrationMethods,
      recommendedRegistrationMethod,
      refreshSupport,
      ...(resourceMetadata?.resource === undefined ? {} : { resource: resourceMetadata.resource }),
      ...(resourceMetadataUrl === undefined ? {} : { protectedResourceMetadataUrl: resourceMetadataUrl })
    }
    const tools: Tools = Result.isSuccess(initialized)
      ? { visibility: "available_without_auth", count: initialized.success.tools.length, items: initialized.success.tools }
      : { visibility: authRequired ? "requires_auth" : "unavailable" }

    return new McpDiscovery({
      server: { url, ...(protocolVersion === undefined ? {} : { protocolVersion }), initialize },
      status,
      authentication,
      tools,
      manualRequirements,
      warnings
    })
  }).pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () => Effect.fail(new DiscoveryTimedOut({ message: `no complete discovery within ${Duration.format(timeout)}` }))
    })
  )
}

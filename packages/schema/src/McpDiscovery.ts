/**
 * Resolving an MCP server: what `POST /v1/mcp-connections/resolve` takes and answers, and the requirements
 * discovery of one MCP endpoint (whether it answers MCP `initialize`, how it authenticates per RFC 9728 and
 * RFC 8414 / OpenID Connect discovery, its tools, and what an admin must do by hand). Nothing here is stored.
 */
import * as Schema from "effect/Schema"
import { Int } from "./Common.js"
import { McpPreset } from "./McpConnections.js"
import { exampleOf } from "./Examples.js"

const queryLength = { message: "must be 1 to 200 characters long" }

export const ResolveMcpRequest = Schema.Struct({
  query: Schema.String.check(Schema.isMinLength(1, queryLength), Schema.isMaxLength(200, queryLength)).annotate({
    description:
      "What the admin typed: an MCP endpoint URL (`https://mcp.example.com/mcp`), a bare host (`example.com`) or a product name (`Linear`); 1 to 200 characters as sent (white space around it is ignored when it is read)."
  })
}).annotate({ identifier: "ResolveMcpRequest", examples: [{ query: "Linear" }] })
export type ResolveMcpRequest = typeof ResolveMcpRequest.Type

export const McpInitializeOutcome = Schema.Literals(["succeeded", "authentication_required", "failed"]).annotate({
  identifier: "McpInitializeOutcome",
  description:
    "How the MCP `initialize` without credentials went: `succeeded`; `authentication_required` (HTTP 401 or 403); `failed` (anything else, see `warnings`)."
})

export const McpDiscoveryStatus = Schema.Literals(["ready", "manual_action_required", "unreachable", "unsupported"]).annotate({
  identifier: "McpDiscoveryStatus",
  description:
    "`ready`: usable as is (it answered `initialize`, or it uses OAuth the server can set up by itself); `manual_action_required`: it needs something of an admin (a credential, an OAuth client registered by hand, a choice of authorization server: see `manualRequirements`); `unreachable`: no HTTP answer at all; `unsupported`: it answered, but not as an MCP server."
})

export const McpAuthenticationKind = Schema.Literals(["none", "oauth", "manual_bearer", "unknown"]).annotate({
  identifier: "McpAuthenticationKind",
  description:
    "`none`: it answered `initialize` without credentials; `oauth`: it advertises OAuth (protected-resource or authorization-server metadata); `manual_bearer`: it wants a credential and advertises no OAuth (an API key, sent as a Bearer token); `unknown`: it did not say."
})

export const McpRegistrationMethod = Schema.Literals(["client_metadata", "dynamic", "pre_registered"]).annotate({
  identifier: "McpRegistrationMethod",
  description:
    "How the server's OAuth client can be known to the authorization server: `client_metadata` (a client ID metadata document), `dynamic` (RFC 7591 registration) or `pre_registered` (an admin registers one by hand and gives its id)."
})

export const McpRefreshSupport = Schema.Literals(["supported", "not_advertised", "unknown"]).annotate({
  identifier: "McpRefreshSupport",
  description:
    "`supported`: an authorization server offers the `refresh_token` grant; `not_advertised`: none of those found does; `unknown`: none was found."
})

export const McpToolsVisibility = Schema.Literals(["available_without_auth", "requires_auth", "unavailable"]).annotate({
  identifier: "McpToolsVisibility",
  description:
    "`available_without_auth`: listed without credentials (`count` and `items` are present); `requires_auth`: the list needs a credential; `unavailable`: the server did not answer MCP."
})

export const McpManualRequirementCode = Schema.Literals([
  "oauth_client_registration",
  "api_key",
  "authorization_server_selection",
  "provider_access",
  "network_trust"
]).annotate({
  identifier: "McpManualRequirementCode",
  description:
    "`oauth_client_registration`: an OAuth client must be registered by hand; `api_key`: the server wants a credential and offers no OAuth; `authorization_server_selection`: several authorization servers, one must be chosen; `provider_access` and `network_trust`: advice, always present."
})

const strings = (description: string) => Schema.Array(Schema.String).annotate({ description })

/** An authorization server the MCP server names, as its metadata (RFC 8414 or OpenID Connect discovery) describes it. */
export class McpAuthorizationServer extends Schema.Class<McpAuthorizationServer>("McpAuthorizationServer")(Schema.Struct({
  issuer: Schema.String,
  authorizationEndpoint: Schema.String,
  tokenEndpoint: Schema.String,
  registrationEndpoint: Schema.optionalKey(Schema.String).annotateKey({
    description: "Its dynamic client registration endpoint (RFC 7591), when it has one."
  }),
  clientIdMetadataDocumentSupported: Schema.Boolean.annotate({
    description: "Whether it accepts client ID metadata documents (its metadata says `client_id_metadata_document_supported: true`)."
  }),
  scopesSupported: strings("`scopes_supported`; empty when not advertised."),
  grantTypesSupported: strings("`grant_types_supported`; empty when not advertised."),
  codeChallengeMethodsSupported: strings("`code_challenge_methods_supported`; empty when not advertised."),
  tokenEndpointAuthMethodsSupported: strings("`token_endpoint_auth_methods_supported`; empty when not advertised.")
}).annotate({
  examples: [{
    issuer: "https://mcp.linear.app",
    authorizationEndpoint: "https://mcp.linear.app/authorize",
    tokenEndpoint: "https://mcp.linear.app/token",
    registrationEndpoint: "https://mcp.linear.app/register",
    clientIdMetadataDocumentSupported: false,
    scopesSupported: ["read", "write"],
    grantTypesSupported: ["authorization_code", "refresh_token"],
    codeChallengeMethodsSupported: ["S256"],
    tokenEndpointAuthMethodsSupported: ["client_secret_basic", "none"]
  }]
})) {}

export const McpDiscoveryAuthentication = Schema.Struct({
  kind: McpAuthenticationKind,
  authorizationServers: Schema.Array(McpAuthorizationServer).annotate({
    description: "The authorization servers (at most 5) whose metadata was found and names the issuer advertised."
  }),
  requiredScopes: strings("The scopes the server's `WWW-Authenticate` challenge asks for."),
  recommendedScopes: strings(
    "What to ask for: the required scopes, else the protected resource's `scopes_supported`; plus `offline_access` when an authorization server offers both it and refresh tokens."
  ),
  availableRegistrationMethods: Schema.Array(McpRegistrationMethod).annotate({
    description: "Always `pre_registered`; `client_metadata` first when an authorization server accepts it; `dynamic` when one has a registration endpoint."
  }),
  recommendedRegistrationMethod: McpRegistrationMethod,
  refreshSupport: McpRefreshSupport,
  resource: Schema.optionalKey(Schema.String).annotateKey({
    description: "The protected resource's identifier (its metadata's `resource`), when found."
  }),
  protectedResourceMetadataUrl: Schema.optionalKey(Schema.String).annotateKey({
    description: "Where the protected-resource metadata is, when the server's challenge named it (`resource_metadata`)."
  })
}).annotate({ identifier: "McpDiscoveryAuthentication" })

export const McpDiscoveredTool = Schema.Struct({
  name: Schema.String,
  readOnlyHint: Schema.optionalKey(Schema.Boolean),
  destructiveHint: Schema.optionalKey(Schema.Boolean),
  openWorldHint: Schema.optionalKey(Schema.Boolean)
}).annotate({
  identifier: "McpDiscoveredTool",
  description:
    "A tool and the hints its server declares (absent when it declares none; MCP reads an absent `readOnlyHint` as false, `destructiveHint` and `openWorldHint` as true)."
})

export const McpDiscoveryTools = Schema.Struct({
  visibility: McpToolsVisibility,
  count: Schema.optionalKey(Int).annotateKey({ description: "How many tools were listed (at most 100 are read)." }),
  items: Schema.optionalKey(Schema.Array(McpDiscoveredTool))
}).annotate({ identifier: "McpDiscoveryTools" })

export const McpManualRequirement = Schema.Struct({
  code: McpManualRequirementCode,
  label: Schema.String,
  reason: Schema.String,
  required: Schema.Boolean.annotate({ description: "Whether the connection cannot work without it (otherwise it is advice)." })
}).annotate({ identifier: "McpManualRequirement" })

export const McpDiscoveryWarning = Schema.Struct({
  code: Schema.String.annotate({
    description:
      "`mcp_http_<status>`, `mcp_unreachable`, `mcp_tools_list_failed`, `oauth_resource_metadata_unavailable`, `oauth_resource_mismatch`, `oauth_server_metadata_unavailable` or `oauth_issuer_mismatch`."
  }),
  message: Schema.String
}).annotate({ identifier: "McpDiscoveryWarning" })

/** What a live look at one MCP endpoint found, without credentials and without changing anything. */
export class McpDiscovery extends Schema.Class<McpDiscovery>("McpDiscovery")(Schema.Struct({
  server: Schema.Struct({
    url: Schema.String,
    protocolVersion: Schema.optionalKey(Schema.String).annotateKey({
      description: "The MCP protocol version negotiated in `initialize`, when it succeeded."
    }),
    initialize: McpInitializeOutcome
  }),
  status: McpDiscoveryStatus,
  authentication: McpDiscoveryAuthentication,
  tools: McpDiscoveryTools,
  manualRequirements: Schema.Array(McpManualRequirement),
  warnings: Schema.Array(McpDiscoveryWarning)
}).annotate({
  examples: [{
    server: { url: "https://mcp.linear.app/mcp", initialize: "authentication_required" },
    status: "ready",
    authentication: {
      kind: "oauth",
      authorizationServers: [exampleOf(McpAuthorizationServer)],
      requiredScopes: [],
      recommendedScopes: ["read", "write"],
      availableRegistrationMethods: ["dynamic", "pre_registered"],
      recommendedRegistrationMethod: "dynamic",
      refreshSupport: "supported",
      resource: "https://mcp.linear.app/mcp",
      protectedResourceMetadataUrl: "https://mcp.linear.app/.well-known/oauth-protected-resource"
    },
    tools: { visibility: "requires_auth" },
    manualRequirements: [
      {
        code: "provider_access",
        label: "Provider access",
        reason: "Members need a Linear account with access to the workspace.",
        required: false
      },
      {
        code: "network_trust",
        label: "Network trust",
        reason: "The server sends members' requests to mcp.linear.app.",
        required: false
      }
    ],
    warnings: []
  }]
})) {}

export const McpResolution = Schema.Literals(["preset", "discovered", "not_found"]).annotate({
  identifier: "McpResolution",
  description:
    "`preset`: the query named a curated preset (`preset`; `match` too when its endpoint answered as MCP); `discovered`: a candidate endpoint answered as MCP (`match`); `not_found`: nothing did (`reason` says why when the query itself was not usable)."
})

export const McpResolveMatch = Schema.Struct({
  url: Schema.String.annotate({ description: "The endpoint to register." }),
  suggestedName: Schema.String.annotate({ description: "A connection name from the preset or the host (`mcp.vercel.com` → `Vercel`)." }),
  discovery: McpDiscovery
}).annotate({ identifier: "McpResolveMatch" })

export const McpRefusedCandidate = Schema.Struct({
  url: Schema.String.annotate({ description: "The candidate endpoint." }),
  reason: Schema.String.annotate({
    description: "Why the outbound guard would not contact it, for example `The outbound URL is not allowed: 127.0.0.1 is a loopback address`."
  })
}).annotate({ identifier: "McpRefusedCandidate" })
export type McpRefusedCandidate = typeof McpRefusedCandidate.Type

export const McpResolveResult = Schema.Struct({
  resolution: McpResolution,
  attempted: strings("The endpoints probed, in order of preference (at most 5)."),
  reason: Schema.optionalKey(Schema.String).annotateKey({
    description:
      "`not_found` only: why the query could not be used, or the outbound guard's refusal of the first candidate it refused (a private address outside private mode, plain http)."
  }),
  refused: Schema.optionalKey(Schema.Array(McpRefusedCandidate)).annotateKey({
    description:
      "The candidates of `attempted` the outbound guard refused to contact (a loopback, private or link-local address while `ORGPLANE_OUTBOUND_ALLOW_PRIVATE` is off, a refused redirect), with why; absent when it refused none."
  }),
  preset: Schema.optionalKey(McpPreset),
  match: Schema.optionalKey(McpResolveMatch)
}).annotate({
  identifier: "McpResolveResult",
  examples: [{
    resolution: "preset",
    attempted: ["https://mcp.linear.app/mcp"],
    preset: exampleOf(McpPreset),
    match: { url: "https://mcp.linear.app/mcp", suggestedName: "Linear", discovery: exampleOf(McpDiscovery) }
  }]
})
export type McpResolveResult = typeof McpResolveResult.Type

export const McpPresetList = Schema.Struct({ presets: Schema.Array(McpPreset) }).annotate({ identifier: "McpPresetList" })

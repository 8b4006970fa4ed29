/**
 * External MCP connections: an organization's registration of a remote MCP server (`emc_`), how it
 * authenticates (`none`, `apikey`, `oauth`) and whose credential it uses (`shared`: one for the organization;
 * `per_member`: each member connects their own account, OAuth only). Secrets (API keys, tokens, client secrets)
 * go in and never come out.
 */
import * as Schema from "effect/Schema"
import { Timestamp, TrimmedText } from "./Common.js"
import { UrlOf } from "./Urls.js"
import { exampleId, ExternalMcpConnectionId, MembershipId, OrganizationId } from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { acme, ada, exampleOf, exampleTime } from "./Examples.js"

export const McpAuthType = Schema.Literals(["none", "apikey", "oauth"]).annotate({
  identifier: "McpAuthType",
  description: "How the MCP server authenticates the server's requests: `none`, `apikey` (sent as a Bearer token) or `oauth`."
})
export type McpAuthType = typeof McpAuthType.Type

export const McpCredentialMode = Schema.Literals(["shared", "per_member"]).annotate({
  identifier: "McpCredentialMode",
  description:
    "Whose credential calls use: `shared` (one credential of the organization) or `per_member` (each member connects their own account; `oauth` only)."
})
export type McpCredentialMode = typeof McpCredentialMode.Type

export const McpCredentialHealth = Schema.Literals(["unknown", "ready", "reconnect_required"]).annotate({
  identifier: "McpCredentialHealth",
  description: "`ready` once a credential worked, `reconnect_required` once the server or its authorization server refused it, `unknown` before."
})
export type McpCredentialHealth = typeof McpCredentialHealth.Type

/** The example connection: the organization's Linear MCP server, shared, through OAuth. */
const linear = { name: "Linear", url: "https://mcp.linear.app/mcp", issuer: "https://mcp.linear.app" }

/** Query members that carry secrets: refused in a connection URL (they would be stored and shown in clear). */
export const SECRET_QUERY_MEMBERS: ReadonlyArray<string> = [
  "access_token",
  "api_key",
  "client_secret",
  "token",
  "refresh_token",
  "id_token",
  "code_verifier"
]

/**
 * The MCP endpoint's URL, under the URL rule, without a query member that carries a secret. The server also refuses
 * `http` and non-public addresses unless private URLs are allowed (`ORGPLANE_OUTBOUND_ALLOW_PRIVATE`).
 */
export const McpServerUrl = UrlOf(
  { absolute: "http" },
  "The MCP endpoint, without a query member carrying a secret (`access_token`, `api_key`, `client_secret`, `token`, `refresh_token`, `id_token`, `code_verifier`).",
  {
    identifier: "McpServerUrl",
    refine: (text) => {
      for (const name of new URL(text).searchParams.keys()) {
        if (SECRET_QUERY_MEMBERS.includes(name.toLowerCase())) return `must not carry a secret in its query (\`${name}\`)`
      }
      return undefined
    }
  }
)

export const McpConnectionName = TrimmedText(1, 255, "Connection name, unique in the organization (ignoring case)")

export const McpScope = Schema.String.check(
  Schema.isMaxLength(255),
  Schema.isPattern(/^[\x21\x23-\x5B\x5D-\x7E]{1,255}$/u, {
    message: "must be an OAuth scope: 1 to 255 printable characters, no space, quote or backslash"
  })
).annotate({ description: "An OAuth scope (RFC 6749 §3.3)." })

export const McpRegistrationSource = Schema.Literals(["pre_registered", "client_metadata", "dynamic"]).annotate({
  identifier: "McpRegistrationSource",
  description:
    "How the server's OAuth client is known to the authorization server: `pre_registered` (an admin gave its id), `client_metadata` (a client ID metadata document the server publishes) or `dynamic` (RFC 7591 registration)."
})
export type McpRegistrationSource = typeof McpRegistrationSource.Type

/** What is disabled of a connection's tools, by whom and when. */
export class McpToolPolicy extends Schema.Class<McpToolPolicy>("McpToolPolicy")(Schema.Struct({
  allDisabled: Schema.Boolean.annotate({ description: "Every tool is disabled." }),
  disabledTools: Schema.Array(Schema.String).annotate({ description: "The tools disabled by name." }),
  updatedByOrgMembershipId: Schema.NullOr(MembershipId).annotate({ description: "Who set the policy last; null while never set." }),
  updatedAt: Schema.NullOr(Timestamp)
}).annotate({
  examples: [{ allDisabled: false, disabledTools: ["delete_issue"], updatedByOrgMembershipId: ada.membershipId, updatedAt: exampleTime(610) }]
})) {}

export const McpToolName = TrimmedText(1, 255, "Tool name")

export const UpdateMcpToolPolicyRequest = Schema.Struct({
  allDisabled: Schema.Boolean,
  disabledTools: Schema.Array(McpToolName).check(Schema.isMaxLength(500)).annotate({ description: "At most 500 tool names." })
}).annotate({ examples: [{ allDisabled: false, disabledTools: ["delete_issue"] }] })

/** The OAuth side of an `oauth` connection. Its client secret and tokens are never returned. */
export const McpOAuthSettings = Schema.Struct({
  clientConfigured: Schema.Boolean.annotate({ description: "Whether the server has an OAuth client for this connection." }),
  clientId: Schema.NullOr(Schema.String),
  registrationSource: Schema.NullOr(McpRegistrationSource),
  authorizationServerIssuer: Schema.NullOr(Schema.String).annotate({
    description: "The authorization server the connection uses; null until chosen (from discovery when the server names one)."
  }),
  requestedScopes: Schema.Array(Schema.String),
  grantedScopes: Schema.Array(Schema.String).annotate({ description: "What the shared credential was granted (empty for `per_member`)." }),
  issuerReviewRequired: Schema.Boolean.annotate({
    description: "The MCP server now names another authorization server: tools stay blocked until an admin reconnects."
  })
}).annotate({
  identifier: "McpOAuthSettings",
  examples: [{
    clientConfigured: true,
    clientId: "orgplane-acme",
    registrationSource: "dynamic",
    authorizationServerIssuer: linear.issuer,
    requestedScopes: ["read", "write"],
    grantedScopes: ["read", "write"],
    issuerReviewRequired: false
  }]
})

export class McpConnection extends Schema.Class<McpConnection>("McpConnection")(Schema.Struct({
  id: ExternalMcpConnectionId,
  organizationId: OrganizationId,
  name: Schema.String,
  url: Schema.String,
  authType: McpAuthType,
  credentialMode: McpCredentialMode,
  connected: Schema.Boolean.annotate({
    description: "`shared`: the organization's credential is in place (`none`: the server answered `initialize`). `per_member`: some member connected."
  }),
  connectedAt: Schema.NullOr(Timestamp),
  connectedForMe: Schema.Boolean.annotate({
    description: "Whether calls made by the caller have a credential: the shared one, or the caller's own for `per_member`."
  }),
  ready: Schema.Boolean.annotate({ description: "Whether the caller's tool calls can run now (they are refused with 409 `connection_not_ready` otherwise)." }),
  notReadyReason: Schema.NullOr(Schema.String).annotate({ description: "Why not, and what to do; null when ready." }),
  credentialHealth: McpCredentialHealth,
  credentialHealthReason: Schema.NullOr(Schema.String),
  needsReconnect: Schema.Boolean,
  oauth: Schema.NullOr(McpOAuthSettings).annotate({ description: "Null unless `authType` is `oauth`." }),
  oauthClientRequired: Schema.Boolean.annotate({
    description: "The URL's preset needs an OAuth client an admin registered with the provider (no dynamic registration)."
  }),
  toolPolicy: McpToolPolicy,
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({
  examples: [{
    id: exampleId("emc"),
    organizationId: acme.id,
    name: linear.name,
    url: linear.url,
    authType: "oauth",
    credentialMode: "shared",
    connected: true,
    connectedAt: exampleTime(605),
    connectedForMe: true,
    ready: true,
    notReadyReason: null,
    credentialHealth: "ready",
    credentialHealthReason: null,
    needsReconnect: false,
    oauth: exampleOf(McpOAuthSettings),
    oauthClientRequired: false,
    toolPolicy: exampleOf(McpToolPolicy),
    createdByOrgMembershipId: ada.membershipId,
    createdAt: exampleTime(600),
    updatedAt: exampleTime(610)
  }]
})) {}

export const McpConnectionResponse = Schema.Struct({ ok: Schema.Literal(true), item: McpConnection }).annotate({
  identifier: "McpConnectionResponse"
})
export const McpConnectionPage = Page(McpConnection).annotate({ identifier: "McpConnectionPage" })

/** Every bad member reported: the API's `HttpApi.QueryParseOptions` (`allErrors`), not an annotation here. */
export const McpConnectionListQuery = Schema.Struct({
  ...PageQueryFields,
  scope: Schema.optionalKey(Schema.Literals(["usable", "manageable"])).annotateKey({
    description:
      "`usable` (default): the connections a grant gives the caller. `manageable` (owners and admins): every connection of the organization."
  })
}).annotate({ examples: [{ scope: "manageable" }] })
export type McpConnectionListQuery = typeof McpConnectionListQuery.Type

export const McpConnectionPath = Schema.Struct({ connectionId: ExternalMcpConnectionId })

/** OAuth settings an admin gives: a pre-registered client, the issuer to use, the scopes to ask for. */
export const McpOAuthInput = Schema.Struct({
  clientId: Schema.optionalKey(TrimmedText(1, 512, "A client registered with the authorization server")),
  clientSecret: Schema.optionalKey(TrimmedText(1, 2048, "Its secret (for confidential clients); stored encrypted")),
  authorizationServerIssuer: Schema.optionalKey(McpServerUrl).annotateKey({
    description: "The authorization server to use when the MCP server names several."
  }),
  requestedScopes: Schema.optionalKey(Schema.Array(McpScope).check(Schema.isMaxLength(100)))
}).annotate({ examples: [{ requestedScopes: ["read", "write"] }] })

/** A connection's API key (`apikey` connections), sent as a Bearer token; stored encrypted. */
export const McpApiKey = TrimmedText(1, 4096, "The API key, sent as a Bearer token; stored encrypted")

/** The OAuth settings of a new connection: a client secret comes with its client id. */
const McpOAuthCreateInput = McpOAuthInput.check(
  Schema.makeFilter(
    (oauth) => oauth.clientSecret === undefined || oauth.clientId !== undefined || { path: ["clientSecret"], issue: "needs a `clientId`" },
    { toJsonSchema: () => ({ dependentRequired: { clientSecret: ["clientId"] } }) }
  )
)

const connectionFields = { name: McpConnectionName, url: McpServerUrl }

/** `shared`, the only credential mode of `none` and `apikey` connections. */
const sharedOnly = Schema.optionalKey(
  Schema.Literal("shared").annotate({ message: "`per_member` needs `authType: oauth` (each member connects their own account)" })
).annotateKey({ description: "`shared` (the default and only mode: `per_member` needs `authType: oauth`)." })

/**
 * One member of the union per `authType`: each takes the credential members of its type, and only those (the API's
 * `HttpApi.PayloadParseOptions`, `requestBody`, refuses the others).
 */
export const CreateMcpConnectionRequest = Schema.Union([
  Schema.Struct({ ...connectionFields, authType: Schema.Literal("none"), credentialMode: sharedOnly }).annotate({
    identifier: "CreateNoneMcpConnectionRequest",
    description: "A server that needs no credential.",
    examples: [{ name: "Docs search", url: "https://mcp.docs.acme.example/mcp", authType: "none" }]
  }),
  Schema.Struct({
    ...connectionFields,
    authType: Schema.Literal("apikey"),
    credentialMode: sharedOnly,
    apiKey: McpApiKey.annotateKey({ messageMissingKey: "is required when `authType` is `apikey`" })
  }).annotate({
    identifier: "CreateApiKeyMcpConnectionRequest",
    description: "A server authenticated with an API key.",
    examples: [{ name: "Build status", url: "https://mcp.ci.acme.example/mcp", authType: "apikey", apiKey: "ci_live_example_key" }]
  }),
  Schema.Struct({
    ...connectionFields,
    authType: Schema.Literal("oauth"),
    credentialMode: Schema.optionalKey(McpCredentialMode).annotateKey({ description: "Default `shared`." }),
    oauth: Schema.optionalKey(McpOAuthCreateInput)
  }).annotate({
    identifier: "CreateOAuthMcpConnectionRequest",
    description: "A server authorized with OAuth.",
    examples: [{ name: linear.name, url: linear.url, authType: "oauth", credentialMode: "shared", oauth: { requestedScopes: ["read", "write"] } }]
  })
]).annotate({ identifier: "CreateMcpConnectionRequest" })
export type CreateMcpConnectionRequest = typeof CreateMcpConnectionRequest.Type

export const UpdateMcpConnectionRequest = Schema.Struct({
  name: Schema.optionalKey(McpConnectionName),
  url: Schema.optionalKey(McpServerUrl).annotateKey({
    description: "A new URL drops the stored OAuth credentials (they were issued for the old server)."
  }),
  // Described on the wire side: Effect 4 writes no member description of a transformation (trimmed text) into the
  // JSON Schema, and this one replaces the key's own, as the document has it.
  apiKey: Schema.optionalKey(McpApiKey.pipe(Schema.annotateEncoded({ description: "A new API key (`apikey` connections only)." }))),
  oauth: Schema.optionalKey(
    McpOAuthInput.check(
      Schema.makeFilter(
        (oauth) => Object.keys(oauth).length > 0 || "give at least one of clientId, clientSecret, authorizationServerIssuer or requestedScopes",
        { toJsonSchema: () => ({ minProperties: 1 }) }
      )
    )
  ).annotateKey({ description: "New OAuth settings (`oauth` connections only); a `clientSecret` needs a `clientId`, given here or stored." })
}).check(
  Schema.makeFilter((body) => Object.keys(body).length > 0 || "give at least one of name, url, apiKey or oauth", {
    toJsonSchema: () => ({ minProperties: 1 })
  })
).annotate({ examples: [{ name: "Linear (engineering)" }] })
export type UpdateMcpConnectionRequest = typeof UpdateMcpConnectionRequest.Type

/** A curated MCP server: what `resolve` matches a product name or host against. */
export class McpPreset extends Schema.Class<McpPreset>("McpPreset")(Schema.Struct({
  presetId: Schema.String,
  displayName: Schema.String,
  description: Schema.String,
  url: Schema.String,
  authType: McpAuthType,
  requiresOAuthClient: Schema.Boolean.annotate({
    description: "The provider offers no dynamic registration: an admin registers an OAuth client and gives its id."
  }),
  authorizationServerIssuer: Schema.optionalKey(Schema.String),
  defaultOAuthScopes: Schema.optionalKey(Schema.Array(Schema.String))
}).annotate({
  examples: [{
    presetId: "linear",
    displayName: "Linear",
    description: "Linear issues, projects and cycles.",
    url: linear.url,
    authType: "oauth",
    requiresOAuthClient: false
  }]
})) {}

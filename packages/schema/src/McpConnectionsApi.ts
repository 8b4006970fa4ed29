/** External MCP connections: registering, changing, granting and reading an organization's remote MCP servers. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { McpConnectionAccessGrantPage, McpConnectionAccessGrantResponse, McpConnectionGrantPath } from "./Access.js"
import { accessEndpoints } from "./AccessApi.js"
import {
  ConflictResponse,
  ConnectionValidationFailedResponse,
  ForbiddenResponse,
  NotFoundResponse,
  storedCredentialUnreadable,
  StoredCredentialUnreadableResponse
} from "./Errors.js"
import {
  CreateMcpConnectionRequest,
  McpConnectionListQuery,
  McpConnectionPage,
  McpConnectionPath,
  McpConnectionResponse,
  McpToolPolicy,
  UpdateMcpConnectionRequest,
  UpdateMcpToolPolicyRequest
} from "./McpConnections.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import { audits } from "./AuditCatalog.js"

const notFound = "404 `connection_not_found` (also for another organization's connection)"

/** The rules create and update share, stated once. */
const rules =
  "URL rules: http or https, at most 2048 characters, no credentials (`user:password@`), no fragment, no query member carrying a secret (`access_token`, `api_key`, `client_secret`, `token`, `refresh_token`, `id_token`, `code_verifier`, any case); unless private destinations are allowed (`ORGPLANE_OUTBOUND_ALLOW_PRIVATE`), https only, and a host that is an IP address or resolves to an address that is not public (loopback, private, link-local, metadata, ...) is refused with 400 on `url` (\"The outbound URL is not allowed: …\"). " +
  "Credential rules: `per_member` needs `authType: oauth`; `apikey` needs `apiKey`, and `apiKey` is only for `apikey`; `oauth` settings are only for `oauth`; a `clientSecret` needs a `clientId` (given now or before). On create the body's `authType` selects its members (the schema's union says which); on update the connection's stored `authType` does. Each is 400 on the member at fault. " +
  "`none` and `apikey`: the server first opens an MCP session with the settings (`initialize`, the key sent as `Authorization: Bearer <key>`), outside any transaction, and stores nothing when it fails (502 `connection_validation_failed` with a `diagnostic`); on success the connection is connected and its credential `ready`. " +
  "`oauth`: nothing is contacted; the settings are stored (a `clientId` makes its registration `pre_registered`; without `requestedScopes`, a preset's default scopes for the URL's host) and the connection waits for the OAuth connect flow. " +
  "Secrets (`apiKey`, `clientSecret`, tokens) are stored encrypted and never returned."

/** Readiness, as every answer computes it for the caller. */
const readiness =
  "`ready` is computed for the caller, in this order: no grant reaching the caller (owners and admins included) → \"You have not been granted access to \\\"<name>\\\".\"; an OAuth issuer change awaiting an admin's review → \"An admin must review the connection's changed OAuth issuer before its tools can be used.\"; `per_member` without the caller's own access token → \"Connect your account before using this MCP's tools.\"; `shared` not connected → \"Connect this MCP before using its tools.\"."

const access = accessEndpoints({
  name: "mcpConnection",
  kind: "connection",
  base: "/v1/mcp-connections/:connectionId",
  path: McpConnectionPath,
  grantPath: McpConnectionGrantPath,
  grant: McpConnectionAccessGrantResponse,
  page: McpConnectionAccessGrantPage,
  action: "mcp.manage",
  who:
    "Only owners and admins grant MCP connections; a grant of any role (`viewer`, `editor` or `manager`) lets the member use the connection (list it as usable, read it, run its tools).",
  refusal: "403 `insufficient_role`"
})

// Each endpoint lists 403 (Effect 4 has no group-wide error).
export class McpConnectionsApi extends HttpApiGroup.make("mcpConnections")
  .add(
    HttpApiEndpoint.post("create", "/v1/mcp-connections", {
      payload: CreateMcpConnectionRequest,
      success: McpConnectionResponse.pipe(HttpApiSchema.status(201)),
      error: [ConflictResponse, ConnectionValidationFailedResponse, ForbiddenResponse]
    }).pipe(audits("mcp_connection.create"), requires("mcp.manage"))
      .annotate(OpenApi.Summary, "Create an MCP connection")
      .annotate(
        OpenApi.Description,
        `Registers a remote MCP server for the organization (\`credentialMode\` default \`shared\`) and answers it as the caller sees it. Nobody is granted it yet, its creator included: grant it (\`POST .../access\`) before anyone uses it. ${rules}\n\n${readiness}\n\nErrors: 409 \`mcp_connection_exists\` when the organization has a connection of that name (ignoring case); 502 \`connection_validation_failed\`.`
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/mcp-connections", {
      query: McpConnectionListQuery,
      success: McpConnectionPage,
      error: [ForbiddenResponse]
    }).pipe(requires("mcp.read", "mcp.manage"))
      .annotate(OpenApi.Summary, "List MCP connections")
      .annotate(
        OpenApi.Description,
        `The organization's MCP connections, oldest first. \`scope=usable\` (default): those a grant gives the caller, for every role (owners and admins are not exempt). \`scope=manageable\`: every connection, for owners and admins (\`mcp.manage\`). Changes nothing. ${readiness}\n\nErrors: 403 \`insufficient_role\` for \`scope=manageable\` by a member.`
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/mcp-connections/:connectionId", {
      params: McpConnectionPath,
      success: McpConnectionResponse,
      error: [NotFoundResponse, ForbiddenResponse]
    }).pipe(requires("mcp.read"))
      .annotate(OpenApi.Summary, "Get an MCP connection")
      .annotate(
        OpenApi.Description,
        `One MCP connection as the caller sees it. A member reads only connections a grant reaches; owners and admins read every one. Changes nothing. ${readiness}\n\nErrors: ${notFound}, and for a member no grant reaches.`
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/mcp-connections/:connectionId", {
      params: McpConnectionPath,
      payload: UpdateMcpConnectionRequest,
      success: McpConnectionResponse,
      error: [NotFoundResponse, ConflictResponse, ConnectionValidationFailedResponse, StoredCredentialUnreadableResponse, ForbiddenResponse]
    }).pipe(audits("mcp_connection.update"), requires("mcp.manage"))
      .annotate(OpenApi.Summary, "Update an MCP connection")
      .annotate(
        OpenApi.Description,
        `Changes a connection's name, URL, API key or OAuth settings (at least one member; its \`authType\` and \`credentialMode\` stay). ${rules} A \`none\` or \`apikey\` connection is checked again when its URL or key changes. A new URL of an \`oauth\` connection drops its shared tokens, every member's credential, pending authorizations and a dynamically registered client (they were issued for the old server). An empty \`oauth\` object is 400.\n\nErrors: ${notFound}; 409 \`mcp_connection_exists\`, \`mcp_connection_changed\` when another change of its URL or key came in while this one was being checked (nothing is written: read it again and retry); 502 \`connection_validation_failed\`. ${storedCredentialUnreadable}`
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/mcp-connections/:connectionId", {
      params: McpConnectionPath,
      success: HttpApiSchema.NoContent,
      error: [NotFoundResponse, ForbiddenResponse]
    }).pipe(audits("mcp_connection.delete"), requires("mcp.manage"))
      .annotate(OpenApi.Summary, "Delete an MCP connection")
      .annotate(
        OpenApi.Description,
        `Deletes a connection with its grants, its members' credentials and its pending OAuth authorizations. 204.\n\nErrors: ${notFound}.`
      )
  )
  .add(access.grant)
  .add(access.listAccess)
  .add(access.revoke)
  .add(
    HttpApiEndpoint.get("getToolPolicy", "/v1/mcp-connections/:connectionId/tool-policy", {
      params: McpConnectionPath,
      success: McpToolPolicy,
      error: [NotFoundResponse, ForbiddenResponse]
    }).pipe(requires("mcp.manage"))
      .annotate(OpenApi.Summary, "Get an MCP connection's tool policy")
      .annotate(
        OpenApi.Description,
        `Which of the connection's tools are disabled (all of them, or some by name), who set it last and when (null while never set). A disabled tool is refused to everyone with 403 \`tool_disabled\`. Changes nothing.\n\nErrors: ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.put("setToolPolicy", "/v1/mcp-connections/:connectionId/tool-policy", {
      params: McpConnectionPath,
      payload: UpdateMcpToolPolicyRequest,
      success: McpToolPolicy,
      error: [NotFoundResponse, ForbiddenResponse]
    }).pipe(audits("mcp_connection.tool_policy.update"), requires("mcp.manage"))
      .annotate(OpenApi.Summary, "Set an MCP connection's tool policy")
      .annotate(
        OpenApi.Description,
        `Replaces the connection's tool policy: \`allDisabled\` disables every tool; \`disabledTools\` names tools to disable (at most 500, each 1 to 255 characters, trimmed, kept once, in the order given; names need not exist on the server yet). Records the caller and the time, and answers the policy.\n\nErrors: ${notFound}.`
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "MCP Connections")
  .annotate(
    OpenApi.Description,
    "External MCP connections of the caller's active organization: remote MCP servers (`emc_`), how they authenticate (`none`, `apikey`, `oauth`), whose credential calls use (`shared`, or `per_member` for OAuth), who may use them (grants) and which of their tools are disabled. Members read the connections granted to them; owners and admins create, change, delete, grant and read every one. Secrets go in and never come out. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization; 403 `insufficient_role` when the caller's role does not allow the operation."
  )
{}

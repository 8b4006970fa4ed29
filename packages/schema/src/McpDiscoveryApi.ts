/** MCP discovery: resolving a URL, host or product name to an MCP server and its requirements; the curated presets. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { ForbiddenResponse } from "./Errors.js"
import { McpPresetList, McpResolveResult, ResolveMcpRequest } from "./McpDiscovery.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import { audits } from "./AuditCatalog.js"

// Each endpoint lists 403 (Effect 4 has no group-wide error).
export class McpDiscoveryApi extends HttpApiGroup.make("mcpDiscovery")
  .add(
    HttpApiEndpoint.post("resolve", "/v1/mcp-connections/resolve", {
      payload: ResolveMcpRequest,
      success: McpResolveResult,
      error: [ForbiddenResponse]
    }).pipe(audits("mcp_connection.resolve"), requires("mcp.resolve"))
      .annotate(OpenApi.Summary, "Resolve an MCP server")
      .annotate(
        OpenApi.Description,
        "For the add-connection flow: reads the query as a URL, a bare host (an IP address in any form is one) or a product name, matches the curated presets (by id, name or host), and otherwise probes at most 5 well-known candidate endpoints at once (`attempted`, in order of preference), each bounded by the probe timeout, through the outbound guard (a destination it refuses counts as no answer, and is listed in `refused` with why). The answer names the first candidate in order of preference (not the first to answer) that answered as MCP, or that asks for OAuth, or, unless the query was a bare product name, that asks for a credential; with its requirements discovery (MCP `initialize` without credentials, the protected-resource and authorization-server metadata, scopes, client registration methods, tools with their hints, what an admin must do). Always 200: a query that cannot be read answers `not_found` with `reason`, and so does one whose candidates the outbound guard refused (`reason` is the refusal of the first). Side-effect free: it registers no OAuth client, stores no credential and creates no connection.\n\nErrors: 403 `insufficient_role` for members."
      )
  )
  .add(
    HttpApiEndpoint.get("presets", "/v1/mcp-connections/presets", { success: McpPresetList, error: [ForbiddenResponse] })
      .pipe(requires("mcp.read"))
      .annotate(OpenApi.Summary, "List MCP presets")
      .annotate(
        OpenApi.Description,
        "The curated MCP servers `resolve` matches: the built-in list, or the operator's (`ORGPLANE_MCP_PRESETS_FILE`). Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "MCP discovery")
  .annotate(
    OpenApi.Description,
    "Finding external MCP servers before registering them: resolving what an admin typed to an MCP endpoint with its requirements, and the curated presets. Nothing here reads or writes the organization's data. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}

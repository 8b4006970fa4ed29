/** Running one tool of an external MCP connection, as an admin's diagnostic: the result with the exchange inspected. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { MaxBodyBytes } from "./BodyLimit.js"
import { JsonObject } from "./ConfigObjects.js"
import {
  ConnectionNotReadyResponse,
  ForbiddenResponse,
  McpConnectionNotFoundResponse,
  ToolCatalogFailedResponse,
  ToolExecutionFailedResponse
} from "./Errors.js"
import { McpConnectionPath, McpToolName, McpToolPolicy } from "./McpConnections.js"
import { ToolInspection } from "./McpDiagnostics.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import { exampleOf } from "./Examples.js"
import { audits } from "./AuditCatalog.js"

/** Bytes of request body a tool call accepts: its arguments must fit in 1 MiB. */
export const TOOL_CALL_BODY_BYTES = 1024 * 1024

export const McpToolCallRequest = Schema.Struct({
  toolName: McpToolName,
  /** The tool's arguments, sent as is (the tool's input schema decides what it accepts). */
  arguments: JsonObject
}).annotate({
  identifier: "McpToolCallRequest",
  examples: [{ toolName: "list_issues", arguments: { team: "Platform", limit: 2 } }]
})
export type McpToolCallRequest = typeof McpToolCallRequest.Type

export const McpToolCallResponse = Schema.Struct({
  referenceId: Schema.String.annotate({ description: "The request id: the server's log line for this call carries it." }),
  durationMs: Schema.Int.annotate({ description: "How long the whole run took (session, call, close), in milliseconds." }),
  result: Schema.Unknown.annotate({ description: "The MCP `CallToolResult` as the server sent it (`content`, `structuredContent`, ...)." }),
  inspection: ToolInspection
}).annotate({
  identifier: "McpToolCallResponse",
  examples: [{
    referenceId: "req_01jbx2c9e4",
    durationMs: 655,
    result: { content: [{ type: "text", text: "PLT-12 Rotate staging credentials" }] },
    inspection: exampleOf(ToolInspection)
  }]
})
export type McpToolCallResponse = typeof McpToolCallResponse.Type

export const McpListedTool = Schema.Struct({
  name: Schema.String,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  inputSchema: Schema.Unknown.annotate({ description: "The tool's input JSON Schema, as the server lists it." }),
  annotations: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)).annotateKey({
    description: "The server's hints (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`, ...): hints, not guarantees."
  }),
  disabled: Schema.Boolean.annotate({ description: "Whether the organization's tool policy disables it (a call answers 403 `tool_disabled`)." })
}).annotate({
  identifier: "McpListedTool",
  examples: [{
    name: "list_issues",
    title: "List issues",
    description: "Lists the issues of a team, newest first.",
    inputSchema: { type: "object", properties: { team: { type: "string" }, limit: { type: "integer" } }, required: ["team"] },
    annotations: { readOnlyHint: true },
    disabled: false
  }]
})

export const McpToolCatalog = Schema.Struct({
  referenceId: Schema.String.annotate({ description: "The request id: the server's log line for this read carries it." }),
  tools: Schema.Array(McpListedTool),
  truncated: Schema.Boolean.annotate({ description: "Whether the server listed more than was read (20 pages, 2000 tools)." }),
  policy: McpToolPolicy
}).annotate({
  identifier: "McpToolCatalog",
  examples: [{ referenceId: "req_01jbx2d7m1", tools: [exampleOf(McpListedTool)], truncated: false, policy: exampleOf(McpToolPolicy) }]
})
export type McpToolCatalog = typeof McpToolCatalog.Type

// Each endpoint lists 403 (Effect 4 has no group-wide error).
export class McpToolsApi extends HttpApiGroup.make("mcpTools")
  .add(
    HttpApiEndpoint.post("call", "/v1/mcp-connections/:connectionId/tools/call", {
      params: McpConnectionPath,
      payload: McpToolCallRequest,
      success: McpToolCallResponse,
      error: [McpConnectionNotFoundResponse, ConnectionNotReadyResponse, ToolExecutionFailedResponse, ForbiddenResponse]
    }).pipe(audits("mcp_connection.tool.call"), requires("mcp.callTools"))
      .annotate(MaxBodyBytes, TOOL_CALL_BODY_BYTES)
      .annotate(OpenApi.Summary, "Run an MCP tool")
      .annotate(
        OpenApi.Description,
        "Runs one tool of the connection with the given arguments, as a diagnostic: a fresh MCP session (initialize, then `tools/call`) with the connection's credential (the shared one, or the caller's own on a `per_member` connection), through the outbound guard. Answers the tool's result with an inspection of the actual `tools/call` HTTP request and response: method, URL (no credentials or fragment, every query value `[redacted]`), start time, headers (credential, cookie, session and key-like headers `[redacted]`, `authorization` keeping its scheme: `Bearer [redacted]`), bodies (UTF-8, at most 512 KiB shown, with their whole size and whether they were cut). The tool call has `ORGPLANE_MCP_TOOL_TIMEOUT` (default 120 seconds), the session's other requests 30 seconds; answers are read up to 4 MiB (JSON) or 16 MiB (event stream). Nothing is stored; the tool may change things at the provider (a destructive tool does what it says). The caller must hold a grant that reaches them on the connection: being an admin is not enough. The body is at most 1 MiB.\n\nErrors: 403 `insufficient_access` ('You have not been granted access to \"<name>\".'); 403 `tool_disabled` when the organization's tool policy disables the tool (or all tools; the message says who changed the policy and when); 404 `connection_not_found` (also for another organization's connection); 409 `connection_not_ready` when the credential the call needs is missing (the message says who connects it, and how); 413 `payload_too_large` over 1 MiB; 502 `tool_execution_failed` when the call failed on the way, at the server, or the tool answered an error (`isError`): `message` is 'Could not run \"<tool>\" on \"<name>\": <what failed> Reference: <referenceId>.', `diagnostic` says what failed and whose move it is (category, code, operator action, retryable, HTTP and JSON-RPC codes, the provider's status, code and request id, the hashed outbound path), `inspection` shows the exchange as far as it went. The tool's own error text is never put in `message` or `diagnostic` (it goes to the server's log under the reference id); the inspection shows the response body as received."
      )
  )
  .add(
    HttpApiEndpoint.get("listTools", "/v1/mcp-connections/:connectionId/tools", {
      params: McpConnectionPath,
      success: McpToolCatalog,
      error: [McpConnectionNotFoundResponse, ConnectionNotReadyResponse, ToolCatalogFailedResponse, ForbiddenResponse]
    }).pipe(requires("mcp.callTools"))
      .annotate(OpenApi.Summary, "List an MCP connection's tools")
      .annotate(
        OpenApi.Description,
        "Reads the connection's tool list from its server (`tools/list`, page by page, in a fresh session with the caller's credential, as a tool call does), at most 20 pages and 2000 tools (then `truncated`); a tool with a name over 512 bytes or an input schema over 512 KiB is left out, a title over 4 KiB or a description over 64 KiB is cut. Each tool says whether the organization's tool policy disables it; `policy` is that policy. Each request has 30 seconds (or `ORGPLANE_MCP_TOOL_TIMEOUT`, if shorter). Changes nothing. As for a call, the caller needs a grant on the connection.\n\nErrors: 403 `insufficient_access`; 404 `connection_not_found` (also for another organization's connection); 409 `connection_not_ready`; 502 `tool_catalog_failed` with a `diagnostic` when the list could not be read."
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "MCP Tools")
  .annotate(
    OpenApi.Description,
    "Running tools of the organization's external MCP connections, as a diagnostic for owners and admins who were granted the connection. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization, 403 `insufficient_role` below admin."
  )
{}

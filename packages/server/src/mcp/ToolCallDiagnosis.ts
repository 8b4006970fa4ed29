/**
 * The diagnosis of a tool call's inspection: the layer it ended in and one sentence.
 */
import type { McpDiagnostic } from "@orgplane/schema"
import type { Capture } from "./Inspection.js"

/** Where a tool call ended, for `inspection.diagnosis`. */
export type DiagnosisLayer = "network" | "mcp_connection" | "remote_http" | "mcp_tool" | "internal"

const connectionPhase = (phase: string | undefined) =>
  phase !== undefined &&
  (phase.startsWith("AUTH_") || phase.startsWith("CONTINUITY_") ||
    ["HTTP_ROUTING", "MCP_TRANSPORT", "MCP_VERSION", "MCP_INITIALIZE", "MCP_INITIALIZED", "MCP_TOOL_DISCOVERY"].includes(phase))

/** The layer and sentence of `inspection.diagnosis`: success, or where the failure happened. */
export const diagnose = (capture: Pick<Capture, "request" | "response">, diagnostic: McpDiagnostic | undefined): { readonly layer: DiagnosisLayer; readonly summary: string } => {
  if (diagnostic === undefined) return { layer: "mcp_tool", summary: "The tool ran and answered a result." }
  const blocked = diagnostic.category === "security_blocked"
  if (capture.request === undefined) {
    if (blocked) return { layer: "internal", summary: "The outbound guard refused the destination: the tool call was not sent." }
    if (diagnostic.phase?.startsWith("NETWORK_")) {
      return { layer: "network", summary: "The MCP server could not be reached: the tool call was not sent." }
    }
    if (connectionPhase(diagnostic.phase) || diagnostic.httpStatus !== undefined || diagnostic.category === "request_timeout") {
      return { layer: "mcp_connection", summary: `Opening the MCP session failed (${diagnostic.code}): the tool call was not sent.` }
    }
    return { layer: "internal", summary: "The call failed inside this server before the tool call was sent." }
  }
  if (capture.response === undefined) {
    if (blocked) return { layer: "internal", summary: "The outbound guard refused the tool call's destination." }
    if (diagnostic.category === "request_timeout") return { layer: "network", summary: "The remote MCP did not respond to the tool call before the deadline." }
    if (diagnostic.category === "response_too_large") {
      return { layer: "network", summary: "The remote MCP's answer to the tool call was larger than allowed, and was not read." }
    }
    return { layer: "network", summary: "The tool call was sent, but no response came back." }
  }
  const status = capture.response.status
  if (status < 200 || status >= 300) return { layer: "remote_http", summary: `The remote MCP returned HTTP ${status} to the tool call.` }
  if (diagnostic.phase === "MCP_TOOL_EXECUTION" || diagnostic.phase === "PROVIDER_EXECUTION") {
    return { layer: "mcp_tool", summary: `The tool ran and failed: a provider or tool failure (${diagnostic.code}).` }
  }
  return { layer: "mcp_tool", summary: `The remote MCP answered, but not with a result this server accepts (${diagnostic.code}).` }
}

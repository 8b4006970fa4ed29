/** McpDiagnostics.ts: the diagnostics an MCP failure is reported with, and a tool inspection, decoded and refused. */
import { describe, expect, it } from "@effect/vitest"
import * as McpDiagnostics from "../src/McpDiagnostics.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { refuses, roundTrips, takes } from "./support/Decoding.js"

const diagnostic = {
  referenceId: "req_01jbx2d7m1",
  category: "provider_throttled",
  code: "MCP_HTTP_429",
  operatorAction: "Wait and retry.",
  message: "The MCP server answered 429.",
  retryable: true
}

describe("McpDiagnostics", () => {
  it("decodes the document's examples and its own, and encodes them back", () => {
    roundTrips(McpDiagnostics.ToolInspection, examplesOfComponent("ToolInspection"))
    expect(wireExamples(McpDiagnostics.ToolInspection.ast)).toEqual(examplesOfComponent("ToolInspection").slice(0, 1))
    roundTrips(McpDiagnostics.McpDiagnostic, [
      diagnostic,
      { ...diagnostic, phase: "MCP_TOOL_EXECUTION", httpStatus: 429, providerStatus: 429, payloadBytes: 12, jsonRpcCode: -32603, outbound: { origin: "https://mcp.linear.app", pathHash: "sha256:0123456789abcdef" } }
    ])
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(McpDiagnostics.McpDiagnostic, [
      diagnostic
    ])
    refuses(McpDiagnostics.McpDiagnostic, [
      { ...diagnostic, httpStatus: 429.5 },
      { ...diagnostic, httpStatus: "429" },
      { ...diagnostic, retryable: "yes" },
      { ...diagnostic, phase: undefined },
      { ...diagnostic, outbound: { origin: "https://x" } },
      { referenceId: "req_1" }
    ])
    takes(McpDiagnostics.InspectedBody, [
      { text: "", bytes: 0, truncated: false, unavailable: true }
    ])
    refuses(McpDiagnostics.InspectedBody, [
      { text: "", bytes: 1.5, truncated: false, unavailable: true },
      { text: "", bytes: 0, truncated: false }
    ])
  })
})

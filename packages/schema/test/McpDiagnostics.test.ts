import { describe, expect, it } from "@effect/vitest"
import * as McpDiagnostics from "../src/McpDiagnostics.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { componentSchema, examplesOfComponent, jsonSchemaOf, roundTrips, sameOn, splitKey } from "./differential.js"
import { effect3 } from "./effect3.js"

const McpDiagnostics3 = effect3("McpDiagnostics")

const diagnostic = {
  referenceId: "req_01jbx2d7m1",
  category: "provider_throttled",
  code: "MCP_HTTP_429",
  operatorAction: "Wait and retry.",
  message: "The MCP server answered 429.",
  retryable: true
}

describe("McpDiagnostics on Effect 4", () => {
  it("gives the JSON Schema of the Effect 3 document", () => {
    for (const name of ["McpDiagnostic", "InspectedHeader", "InspectedBody"] as const) {
      expect(jsonSchemaOf(McpDiagnostics[name]), name).toEqual(componentSchema(name))
    }
    // A real difference, for the OpenAPI normalisation step: Effect 4 writes a schema's `examples` into its JSON
    // Schema only when they are JSON already; ToolInspection's hold a Date (`startedAt`), so it writes none, where
    // Effect 3 wrote them encoded. The encoded examples are `wireExamples`' (next test), which the step can add.
    const { value: examples, rest } = splitKey(componentSchema("ToolInspection"), "examples")
    expect(examples).toEqual(examplesOfComponent("ToolInspection"))
    expect(jsonSchemaOf(McpDiagnostics.ToolInspection)).toEqual(rest)
  })

  it("decodes the document's examples and its own, and encodes them back", () => {
    roundTrips(McpDiagnostics.ToolInspection, McpDiagnostics3.ToolInspection, examplesOfComponent("ToolInspection"))
    expect(wireExamples(McpDiagnostics.ToolInspection.ast)).toEqual(examplesOfComponent("ToolInspection").slice(0, 1))
    roundTrips(McpDiagnostics.McpDiagnostic, McpDiagnostics3.McpDiagnostic, [
      diagnostic,
      { ...diagnostic, phase: "MCP_TOOL_EXECUTION", httpStatus: 429, providerStatus: 429, payloadBytes: 12, jsonRpcCode: -32603, outbound: { origin: "https://mcp.linear.app", pathHash: "sha256:0123456789abcdef" } }
    ])
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(McpDiagnostics.McpDiagnostic, McpDiagnostics3.McpDiagnostic, [
      diagnostic,
      { ...diagnostic, httpStatus: 429.5 },
      { ...diagnostic, httpStatus: "429" },
      { ...diagnostic, retryable: "yes" },
      { ...diagnostic, phase: undefined },
      { ...diagnostic, outbound: { origin: "https://x" } },
      { referenceId: "req_1" }
    ])
    sameOn(McpDiagnostics.InspectedBody, McpDiagnostics3.InspectedBody, [
      { text: "", bytes: 0, truncated: false, unavailable: true },
      { text: "", bytes: 1.5, truncated: false, unavailable: true },
      { text: "", bytes: 0, truncated: false }
    ])
  })
})

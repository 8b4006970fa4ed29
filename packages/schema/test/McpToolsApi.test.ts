import { describe, expect, it } from "@effect/vitest"
import * as McpToolsApi from "../src/McpToolsApi.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { examplesOfComponent, type Json, roundTrips, sameSchemas } from "./differential.js"
import { addToMember, describeMember, sameOnBody } from "./mcpDifferential.js"
import { effect3 } from "./effect3.js"

const McpToolsApi3 = effect3("McpToolsApi")
const OpenApiExamples3 = effect3("OpenApiExamples")

// A real difference, for the OpenAPI normalisation step: Effect 4 writes nothing of a `Schema.Unknown` (it re-encodes
// it as JSON), its description included; Effect 3 wrote `{ description }`. (Unknown stays: a tool's result and input
// schema come from the MCP server through the SDK, and `Schema.Json` would refuse to encode an undefined member.)
const result = "The MCP `CallToolResult` as the server sent it (`content`, `structuredContent`, ...)."
const inputSchema = "The tool's input JSON Schema, as the server lists it."
const describeResult = (json: Json): Json => {
  const text = JSON.stringify(json)
  expect(text).toContain(`"result":{}`)
  return JSON.parse(text.replace(`"result":{}`, JSON.stringify({ result: { description: result } }).slice(1, -1)))
}

describe("McpToolsApi on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(McpToolsApi, McpToolsApi3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      McpToolCallResponse: describeResult,
      // And (as ConfigObjects.test.ts finds for JsonObject) Effect 4 leaves out a record's `additionalProperties` when
      // its values may be anything; Effect 3 wrote `{}`, the same meaning.
      McpListedTool: (schema) =>
        addToMember(describeMember(schema, ["inputSchema"], inputSchema), ["annotations"], { additionalProperties: {} })
    })
    expect(names).toHaveLength(4)
    expect(McpToolsApi.TOOL_CALL_BODY_BYTES).toBe(McpToolsApi3.TOOL_CALL_BODY_BYTES)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(McpToolsApi.McpToolCallRequest, McpToolsApi3.McpToolCallRequest, examplesOfComponent("McpToolCallRequest"))
    roundTrips(McpToolsApi.McpToolCallResponse, McpToolsApi3.McpToolCallResponse, examplesOfComponent("McpToolCallResponse"))
    roundTrips(McpToolsApi.McpListedTool, McpToolsApi3.McpListedTool, examplesOfComponent("McpListedTool"))
    roundTrips(McpToolsApi.McpToolCatalog, McpToolsApi3.McpToolCatalog, examplesOfComponent("McpToolCatalog"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOnBody(McpToolsApi.McpToolCallRequest, McpToolsApi3.McpToolCallRequest, [
      { toolName: "list_issues", arguments: {} }, { toolName: " list_issues ", arguments: { team: "Platform", nested: { a: [1] } } },
      { toolName: "", arguments: {} }, { toolName: "list_issues" }, { toolName: "list_issues", arguments: [] },
      { toolName: "list_issues", arguments: "x" }, { toolName: "list_issues", arguments: {}, extra: 1 }
    ])
  })

  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(McpToolsApi.McpToolsApi, McpToolsApi3.McpToolsApi, {
      // As above: the result's description.
      "POST /v1/mcp-connections/{connectionId}/tools/call": describeResult
    })).toHaveLength(2)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(McpToolsApi.McpToolsApi, McpToolsApi3.McpToolsApi)).toBeGreaterThan(0)
  })
})

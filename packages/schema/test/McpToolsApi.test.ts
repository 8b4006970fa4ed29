/** McpToolsApi.ts: a tool call's request and answer, their examples and refusals. */
import { describe, it } from "@effect/vitest"
import * as McpToolsApi from "../src/McpToolsApi.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { refusesBody, roundTrips, takesBody } from "./support/Decoding.js"

describe("McpToolsApi", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(McpToolsApi.McpToolCallRequest, examplesOfComponent("McpToolCallRequest"))
    roundTrips(McpToolsApi.McpToolCallResponse, examplesOfComponent("McpToolCallResponse"))
    roundTrips(McpToolsApi.McpListedTool, examplesOfComponent("McpListedTool"))
    roundTrips(McpToolsApi.McpToolCatalog, examplesOfComponent("McpToolCatalog"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takesBody(McpToolsApi.McpToolCallRequest, [
      { toolName: "list_issues", arguments: {} },
      { toolName: " list_issues ", arguments: { team: "Platform", nested: { a: [1] } } }
    ])
    refusesBody(McpToolsApi.McpToolCallRequest, [
      { toolName: "", arguments: {} },
      { toolName: "list_issues" },
      { toolName: "list_issues", arguments: [] },
      { toolName: "list_issues", arguments: "x" },
      { toolName: "list_issues", arguments: {}, extra: 1 }
    ])
  })
})

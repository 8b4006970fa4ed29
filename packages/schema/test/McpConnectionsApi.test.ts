import { describe, expect, it } from "@effect/vitest"
import { McpConnectionsApi } from "../src/McpConnectionsApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { atBody, describeMember } from "./mcpDifferential.js"
import { effect3 } from "./effect3.js"

const McpConnectionsApi3 = effect3("McpConnectionsApi").McpConnectionsApi

describe("McpConnectionsApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(McpConnectionsApi, McpConnectionsApi3, {
      // A real difference, for the OpenAPI normalisation step: Effect 3 wrote the create body's union as the OAuth
      // member beside an inner `anyOf` of the other two; Effect 4 writes the three members flat (the same bodies).
      "POST /v1/mcp-connections": (operation) => {
        const [none, apiKey, oauth] = ["None", "ApiKey", "OAuth"].map((kind) => ({ $ref: `ref:Create${kind}McpConnectionRequest` }))
        const flat = JSON.stringify({ anyOf: [apiKey, none, oauth] })
        expect(JSON.stringify(operation)).toContain(flat)
        return JSON.parse(JSON.stringify(operation).replace(flat, JSON.stringify({ anyOf: [oauth, { anyOf: [apiKey, none] }] })))
      },
      // The real differences McpConnections.test.ts names, for the OpenAPI normalisation step: a member's own
      // description of McpServerUrl is lost; Effect 3's generated description of requestedScopes.
      "PATCH /v1/mcp-connections/{connectionId}": (operation) =>
        atBody(operation, (body) =>
          describeMember(
            describeMember(
              describeMember(body, ["url"], "A new URL drops the stored OAuth credentials (they were issued for the old server)."),
              ["oauth", "authorizationServerIssuer"], "The authorization server to use when the MCP server names several."
            ),
            ["oauth", "requestedScopes"], "an array of at most 100 item(s)"
          ))
    })).toHaveLength(10)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(McpConnectionsApi, McpConnectionsApi3)).toBeGreaterThan(0)
  })
})

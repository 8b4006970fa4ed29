import { describe, expect, it } from "@effect/vitest"
import type { Schema } from "effect"
import * as McpConnections from "../src/McpConnections.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { examplesOfComponent, type Json, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { bodyRefusal, describeMember, sameOnBody } from "./mcpDifferential.js"
import { type Effect3, effect3 } from "./effect3.js"

const McpConnections3 = effect3("McpConnections")
const OpenApiExamples3 = effect3("OpenApiExamples")

// A real difference, for the OpenAPI normalisation step: a member's own description of McpServerUrl (a transformed
// named schema, as Timestamp is) does not reach Effect 4's JSON Schema; Effect 3 wrote it beside the reference.
const issuer = "The authorization server to use when the MCP server names several."
// A real difference, for the OpenAPI normalisation step: Effect 3 described a checked array by its last check;
// Effect 4 generates no description.
const scopes = "an array of at most 100 item(s)"
const oauthInput = (schema: Json, at: ReadonlyArray<string> = []) =>
  describeMember(describeMember(schema, [...at, "authorizationServerIssuer"], issuer), [...at, "requestedScopes"], scopes)

const url = "https://mcp.linear.app/mcp"

describe("McpConnections on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const compare = (name: string, port: Schema.Top, original: Effect3) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }
    const names = sameSchemas(McpConnections, McpConnections3, compare, {
      McpOAuthInput: (schema) => oauthInput(schema),
      UpdateMcpConnectionRequest: (schema) =>
        oauthInput(describeMember(schema, ["url"], "A new URL drops the stored OAuth credentials (they were issued for the old server)."), ["oauth"])
    })
    expect(names.length).toBe(21)
    // The union's members, each a component of the document.
    const [none, apiKey, oauth] = McpConnections.CreateMcpConnectionRequest.members
    const [none3, apiKey3, oauth3] = McpConnections3.CreateMcpConnectionRequest.members
    expect(sameSchemas(
      { CreateNoneMcpConnectionRequest: none, CreateApiKeyMcpConnectionRequest: apiKey, CreateOAuthMcpConnectionRequest: oauth },
      { CreateNoneMcpConnectionRequest: none3, CreateApiKeyMcpConnectionRequest: apiKey3, CreateOAuthMcpConnectionRequest: oauth3 },
      compare,
      { CreateOAuthMcpConnectionRequest: (schema) => oauthInput(schema, ["oauth"]) }
    )).toHaveLength(3)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(McpConnections.McpConnection, McpConnections3.McpConnection, examplesOfComponent("McpConnection"))
    roundTrips(McpConnections.McpToolPolicy, McpConnections3.McpToolPolicy, examplesOfComponent("McpToolPolicy"))
    roundTrips(McpConnections.McpOAuthSettings, McpConnections3.McpOAuthSettings, examplesOfComponent("McpOAuthSettings"))
    roundTrips(McpConnections.McpPreset, McpConnections3.McpPreset, examplesOfComponent("McpPreset"))
    roundTrips(McpConnections.McpConnectionResponse, McpConnections3.McpConnectionResponse, examplesOfComponent("McpConnectionResponse"))
    roundTrips(McpConnections.CreateMcpConnectionRequest, McpConnections3.CreateMcpConnectionRequest, [
      ...examplesOfComponent("CreateNoneMcpConnectionRequest"),
      ...examplesOfComponent("CreateApiKeyMcpConnectionRequest"),
      ...examplesOfComponent("CreateOAuthMcpConnectionRequest")
    ])
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(McpConnections.McpServerUrl, McpConnections3.McpServerUrl, [
      url, " https://mcp.linear.app/mcp ", "http://10.0.0.5:8080/mcp", "https://x.example/mcp?team=eng",
      "https://x.example/mcp?token=abc", "https://x.example/mcp?Access_Token=abc", "ftp://x.example/mcp", "/mcp",
      "https://user:pw@x.example/mcp", "https://x.example/mcp#a", ""
    ])
    sameOn(McpConnections.McpScope, McpConnections3.McpScope, ["read", "repo:status", "a b", "", "x".repeat(256), "a\"b", "a\\b"])
    sameOn(McpConnections.McpConnectionListQuery, McpConnections3.McpConnectionListQuery, [
      {}, { scope: "usable", limit: "10" }, { scope: "manageable" }, { scope: "all" }, { limit: "101" }
    ])
    sameOnBody(McpConnections.UpdateMcpToolPolicyRequest, McpConnections3.UpdateMcpToolPolicyRequest, [
      { allDisabled: false, disabledTools: ["delete_issue", " create_issue "] }, { allDisabled: true, disabledTools: [] },
      { allDisabled: false, disabledTools: Array.from({ length: 501 }, (_, i) => `tool_${i}`) },
      { allDisabled: false, disabledTools: [""] }, { disabledTools: [] }, { allDisabled: false, disabledTools: [], extra: 1 }
    ])
    sameOnBody(McpConnections.CreateMcpConnectionRequest, McpConnections3.CreateMcpConnectionRequest, [
      { name: "Docs", url, authType: "none" },
      { name: " Docs ", url: ` ${url} `, authType: "none", credentialMode: "shared" },
      { name: "CI", url, authType: "apikey", apiKey: "key" },
      { name: "Linear", url, authType: "oauth", credentialMode: "per_member" },
      { name: "Linear", url, authType: "oauth", oauth: { clientId: "c", clientSecret: "s", authorizationServerIssuer: "https://mcp.linear.app", requestedScopes: ["read"] } },
      { name: "Docs", url, authType: "none", credentialMode: "per_member" },
      { name: "Docs", url, authType: "none", apiKey: "key" },
      { name: "CI", url, authType: "apikey" },
      { name: "CI", url, authType: "apikey", apiKey: " " },
      { name: "CI", url, authType: "apikey", credentialMode: "per_member", apiKey: "key" },
      { name: "Linear", url, authType: "oauth", oauth: { clientSecret: "s" } },
      { name: "Linear", url, authType: "oauth", oauth: { requestedScopes: ["a b"] } },
      { name: "Linear", url, authType: "oauth", oauth: { scopes: ["read"] } },
      { name: "Linear", url: `${url}?api_key=1`, authType: "oauth" },
      { name: "", url, authType: "none" },
      { name: "Docs", url, authType: "basic" },
      { name: "Docs", url }
    ])
    sameOnBody(McpConnections.UpdateMcpConnectionRequest, McpConnections3.UpdateMcpConnectionRequest, [
      { name: "Linear (engineering)" }, { url }, { apiKey: "key" }, { oauth: { clientSecret: "s" } }, { oauth: { requestedScopes: [] } },
      {}, { oauth: {} }, { apiKey: "" }, { url: "https://x.example/mcp?refresh_token=1" }, { name: "Linear", authType: "none" },
      { oauth: { requestedScopes: Array.from({ length: 101 }, () => "read") } }
    ])
  })

  it("says what is wrong, as the Effect 3 schemas did", () => {
    const refusal = (input: unknown) => bodyRefusal(McpConnections.CreateMcpConnectionRequest, input)
    expect(refusal({ name: "CI", url, authType: "apikey" })).toContain("is required when `authType` is `apikey`")
    expect(refusal({ name: "Docs", url, authType: "none", credentialMode: "per_member" })).toContain("`per_member` needs `authType: oauth`")
    expect(refusal({ name: "Linear", url, authType: "oauth", oauth: { clientSecret: "s" } })).toMatch(/needs a `clientId`[\s\S]*clientSecret/)
    expect(refusal({ name: "Docs", url: `${url}?token=1`, authType: "none" })).toContain("must not carry a secret in its query (`token`)")
    expect(refusal({ name: "Linear", url, authType: "oauth", oauth: { requestedScopes: ["a b"] } })).toContain("must be an OAuth scope")
  })
})

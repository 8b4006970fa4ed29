/**
 * McpConnections.ts: the document's examples of MCP connections decode and encode back unchanged, the requests,
 * queries and paths taken and refused, and what a refusal says.
 */
import { describe, expect, it } from "@effect/vitest"
import * as McpConnections from "../src/McpConnections.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { bodyRefusal, refuses, refusesBody, roundTrips, takes, takesBody } from "./support/Decoding.js"

const url = "https://mcp.linear.app/mcp"

describe("McpConnections", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(McpConnections.McpConnection, examplesOfComponent("McpConnection"))
    roundTrips(McpConnections.McpToolPolicy, examplesOfComponent("McpToolPolicy"))
    roundTrips(McpConnections.McpOAuthSettings, examplesOfComponent("McpOAuthSettings"))
    roundTrips(McpConnections.McpPreset, examplesOfComponent("McpPreset"))
    roundTrips(McpConnections.McpConnectionResponse, examplesOfComponent("McpConnectionResponse"))
    roundTrips(McpConnections.CreateMcpConnectionRequest, [
      ...examplesOfComponent("CreateNoneMcpConnectionRequest"),
      ...examplesOfComponent("CreateApiKeyMcpConnectionRequest"),
      ...examplesOfComponent("CreateOAuthMcpConnectionRequest")
    ])
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(McpConnections.McpServerUrl, [
      url,
      " https://mcp.linear.app/mcp ",
      "http://10.0.0.5:8080/mcp",
      "https://x.example/mcp?team=eng"
    ])
    refuses(McpConnections.McpServerUrl, [
      "https://x.example/mcp?token=abc",
      "https://x.example/mcp?Access_Token=abc",
      "ftp://x.example/mcp",
      "/mcp",
      "https://user:pw@x.example/mcp",
      "https://x.example/mcp#a",
      ""
    ])
    takes(McpConnections.McpScope, ["read", "repo:status"])
    refuses(McpConnections.McpScope, ["a b", "", "x".repeat(256), "a\"b", "a\\b"])
    takes(McpConnections.McpConnectionListQuery, [
      {},
      { scope: "usable", limit: "10" },
      { scope: "manageable" }
    ])
    refuses(McpConnections.McpConnectionListQuery, [
      { scope: "all" },
      { limit: "101" }
    ])
    takesBody(McpConnections.UpdateMcpToolPolicyRequest, [
      { allDisabled: false, disabledTools: ["delete_issue", " create_issue "] },
      { allDisabled: true, disabledTools: [] }
    ])
    refusesBody(McpConnections.UpdateMcpToolPolicyRequest, [
      { allDisabled: false, disabledTools: Array.from({ length: 501 }, (_, i) => `tool_${i}`) },
      { allDisabled: false, disabledTools: [""] },
      { disabledTools: [] },
      { allDisabled: false, disabledTools: [], extra: 1 }
    ])
    takesBody(McpConnections.CreateMcpConnectionRequest, [
      { name: "Docs", url, authType: "none" },
      { name: " Docs ", url: ` ${url} `, authType: "none", credentialMode: "shared" },
      { name: "CI", url, authType: "apikey", apiKey: "key" },
      { name: "Linear", url, authType: "oauth", credentialMode: "per_member" },
      { name: "Linear", url, authType: "oauth", oauth: { clientId: "c", clientSecret: "s", authorizationServerIssuer: "https://mcp.linear.app", requestedScopes: ["read"] } }
    ])
    refusesBody(McpConnections.CreateMcpConnectionRequest, [
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
    takesBody(McpConnections.UpdateMcpConnectionRequest, [
      { name: "Linear (engineering)" },
      { url },
      { apiKey: "key" },
      { oauth: { clientSecret: "s" } },
      { oauth: { requestedScopes: [] } }
    ])
    refusesBody(McpConnections.UpdateMcpConnectionRequest, [
      {},
      { oauth: {} },
      { apiKey: "" },
      { url: "https://x.example/mcp?refresh_token=1" },
      { name: "Linear", authType: "none" },
      { oauth: { requestedScopes: Array.from({ length: 101 }, () => "read") } }
    ])
  })

  it("says what is wrong with a refused value", () => {
    const refusal = (input: unknown) => bodyRefusal(McpConnections.CreateMcpConnectionRequest, input)
    expect(refusal({ name: "CI", url, authType: "apikey" })).toContain("is required when `authType` is `apikey`")
    expect(refusal({ name: "Docs", url, authType: "none", credentialMode: "per_member" })).toContain("`per_member` needs `authType: oauth`")
    expect(refusal({ name: "Linear", url, authType: "oauth", oauth: { clientSecret: "s" } })).toMatch(/needs a `clientId`[\s\S]*clientSecret/)
    expect(refusal({ name: "Docs", url: `${url}?token=1`, authType: "none" })).toContain("must not carry a secret in its query (`token`)")
    expect(refusal({ name: "Linear", url, authType: "oauth", oauth: { requestedScopes: ["a b"] } })).toContain("must be an OAuth scope")
  })
})

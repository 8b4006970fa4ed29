/** McpDiscovery.ts: what discovering and resolving an MCP server answers, its examples and refusals. */
import { describe, expect, it } from "@effect/vitest"
import * as McpDiscovery from "../src/McpDiscovery.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { decode, refuses, refusesBody, roundTrips, takes, takesBody } from "./support/Decoding.js"

describe("McpDiscovery", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(McpDiscovery.ResolveMcpRequest, examplesOfComponent("ResolveMcpRequest"))
    roundTrips(McpDiscovery.McpAuthorizationServer, examplesOfComponent("McpAuthorizationServer"))
    roundTrips(McpDiscovery.McpDiscovery, examplesOfComponent("McpDiscovery"))
    roundTrips(McpDiscovery.McpResolveResult, examplesOfComponent("McpResolveResult"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takesBody(McpDiscovery.ResolveMcpRequest, [
      { query: "Linear" },
      { query: " linear.app " },
      { query: "x".repeat(200) }
    ])
    refusesBody(McpDiscovery.ResolveMcpRequest, [
      { query: "" },
      { query: "x".repeat(201) },
      {},
      { query: "Linear", url: "https://mcp.linear.app/mcp" }
    ])
    expect(decode(McpDiscovery.ResolveMcpRequest, { query: "" })).toMatchObject({ ok: false, message: expect.stringContaining("must be 1 to 200 characters long") })
    takes(McpDiscovery.McpDiscoveryTools, [
      { visibility: "requires_auth" },
      { visibility: "available_without_auth", count: 1, items: [{ name: "search", readOnlyHint: true }] }
    ])
    refuses(McpDiscovery.McpDiscoveryTools, [
      { visibility: "available_without_auth", count: 1.5 },
      { visibility: "hidden" },
      { visibility: "available_without_auth", items: [{ readOnlyHint: true }] }
    ])
    takes(McpDiscovery.McpResolveResult, [
      ...examplesOfComponent("McpResolveResult"),
      { resolution: "not_found", attempted: [], reason: "The query is not a URL, host or product name." },
      { resolution: "not_found", attempted: ["http://127.0.0.1/mcp"], refused: [{ url: "http://127.0.0.1/mcp", reason: "loopback" }] }
    ])
    refuses(McpDiscovery.McpResolveResult, [
      { resolution: "missing", attempted: [] },
      { resolution: "not_found", attempted: [], refused: [{ url: "http://127.0.0.1/mcp" }] }
    ])
  })
})

import { describe, expect, it } from "@effect/vitest"
import * as McpDiscovery from "../src/McpDiscovery.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { decode4, examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { sameOnBody, withNulRule } from "./mcpDifferential.js"
import { effect3 } from "./effect3.js"

const McpDiscovery3 = effect3("McpDiscovery")
const OpenApiExamples3 = effect3("OpenApiExamples")

describe("McpDiscovery on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(McpDiscovery, McpDiscovery3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, { ResolveMcpRequest: (schema) => withNulRule(schema, ["query"]) })
    expect(names).toHaveLength(20)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(McpDiscovery.ResolveMcpRequest, McpDiscovery3.ResolveMcpRequest, examplesOfComponent("ResolveMcpRequest"))
    roundTrips(McpDiscovery.McpAuthorizationServer, McpDiscovery3.McpAuthorizationServer, examplesOfComponent("McpAuthorizationServer"))
    roundTrips(McpDiscovery.McpDiscovery, McpDiscovery3.McpDiscovery, examplesOfComponent("McpDiscovery"))
    roundTrips(McpDiscovery.McpResolveResult, McpDiscovery3.McpResolveResult, examplesOfComponent("McpResolveResult"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOnBody(McpDiscovery.ResolveMcpRequest, McpDiscovery3.ResolveMcpRequest, [
      { query: "Linear" }, { query: " linear.app " }, { query: "x".repeat(200) },
      { query: "" }, { query: "x".repeat(201) }, {}, { query: "Linear", url: "https://mcp.linear.app/mcp" }
    ])
    expect(decode4(McpDiscovery.ResolveMcpRequest, { query: "" })).toMatchObject({ ok: false, message: expect.stringContaining("must be 1 to 200 characters long") })
    sameOn(McpDiscovery.McpDiscoveryTools, McpDiscovery3.McpDiscoveryTools, [
      { visibility: "requires_auth" },
      { visibility: "available_without_auth", count: 1, items: [{ name: "search", readOnlyHint: true }] },
      { visibility: "available_without_auth", count: 1.5 },
      { visibility: "hidden" },
      { visibility: "available_without_auth", items: [{ readOnlyHint: true }] }
    ])
    sameOn(McpDiscovery.McpResolveResult, McpDiscovery3.McpResolveResult, [
      ...examplesOfComponent("McpResolveResult"),
      { resolution: "not_found", attempted: [], reason: "The query is not a URL, host or product name." },
      { resolution: "not_found", attempted: ["http://127.0.0.1/mcp"], refused: [{ url: "http://127.0.0.1/mcp", reason: "loopback" }] },
      { resolution: "missing", attempted: [] },
      { resolution: "not_found", attempted: [], refused: [{ url: "http://127.0.0.1/mcp" }] }
    ])
  })
})

/**
 * The matching of declared MCP servers to connections by URL (pure). Readiness of an MCP connection for a caller
 * (the original's first half) joins when mcp/Readiness.ts is ported (it needs access/Access.ts).
 */
import { describe, expect, it } from "vitest"
import * as CloudReadiness from "../src/mcp/CloudReadiness.js"

describe("CloudReadiness", () => {
  it("reads servers under mcpServers or mcp, or the definition itself; local command servers are left out", () => {
    expect(CloudReadiness.serversOf({ mcpServers: { a: { url: " https://a.example/mcp ", authType: "oauth" }, b: { command: "x" } } }, "T"))
      .toEqual([{ serverName: "a", url: "https://a.example/mcp", authType: "oauth" }])
    expect(CloudReadiness.serversOf({ mcp: { c: { url: "https://c.example", authType: "bogus" } } }, "T"))
      .toEqual([{ serverName: "c", url: "https://c.example", authType: undefined }])
    expect(CloudReadiness.serversOf({ url: "https://d.example/mcp" }, "Title")).toEqual([{ serverName: "Title", url: "https://d.example/mcp", authType: undefined }])
    expect(CloudReadiness.serversOf({ url: "not a url" }, "T")).toEqual([])
    expect(CloudReadiness.serversOf(null, "T")).toEqual([])
  })

  it("compares URLs without case in scheme and host, default port or trailing slash; path case and query count", () => {
    expect(CloudReadiness.normalizeUrl("HTTPS://MCP.Example.com:443/mcp/")).toBe(CloudReadiness.normalizeUrl("https://mcp.example.com/mcp"))
    expect(CloudReadiness.normalizeUrl("https://mcp.example.com/MCP")).not.toBe(CloudReadiness.normalizeUrl("https://mcp.example.com/mcp"))
    expect(CloudReadiness.normalizeUrl("https://mcp.example.com/mcp?a=1")).not.toBe(CloudReadiness.normalizeUrl("https://mcp.example.com/mcp"))
  })
})

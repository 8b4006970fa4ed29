/** Readiness of an MCP connection for a caller (pure), and the matching of declared MCP servers to connections by URL. */
import { describe, expect, it } from "vitest"
import * as CloudReadiness from "../src/mcp/CloudReadiness.js"
import * as Readiness from "../src/mcp/Readiness.js"

const row = (overrides: Partial<Readiness.ReadinessRow & { name: string }> = {}) => ({
  name: "Docs",
  authType: "oauth" as const,
  credentialMode: "shared" as const,
  apiKeyCiphertext: null,
  accessTokenCiphertext: null,
  connectedAt: null,
  oauthIssuerReviewRequiredAt: null,
  ...overrides
})

describe("Readiness", () => {
  it("checks the issuer review first, then the caller's own token (per_member), then the shared credential", () => {
    const review = new Date()
    expect(Readiness.of(row({ oauthIssuerReviewRequiredAt: review, accessTokenCiphertext: "x" }), undefined)).toEqual({
      ready: false,
      message: Readiness.ISSUER_REVIEW
    })
    expect(Readiness.of(row({ credentialMode: "per_member", oauthIssuerReviewRequiredAt: review }), { accessTokenCiphertext: "x" }).message)
      .toBe(Readiness.ISSUER_REVIEW)
    expect(Readiness.of(row({ credentialMode: "per_member", accessTokenCiphertext: "shared" }), undefined)).toEqual({
      ready: false,
      message: "Connect your account before using this MCP's tools."
    })
    expect(Readiness.of(row({ credentialMode: "per_member" }), { accessTokenCiphertext: null }).ready).toBe(false)
    expect(Readiness.of(row({ credentialMode: "per_member" }), { accessTokenCiphertext: "mine" })).toEqual({ ready: true, message: null })
    expect(Readiness.of(row(), undefined)).toEqual({ ready: false, message: "Connect this MCP before using its tools." })
    expect(Readiness.of(row({ accessTokenCiphertext: "x" }), undefined).ready).toBe(true)
  })

  it("counts a shared credential as connected by auth type", () => {
    const at = new Date()
    expect(Readiness.sharedConnected(row({ authType: "none" }))).toBe(false)
    expect(Readiness.sharedConnected(row({ authType: "none", connectedAt: at }))).toBe(true)
    expect(Readiness.sharedConnected(row({ authType: "apikey", connectedAt: at }))).toBe(false)
    expect(Readiness.sharedConnected(row({ authType: "apikey", apiKeyCiphertext: "k", connectedAt: at }))).toBe(true)
    expect(Readiness.sharedConnected(row({ authType: "oauth", connectedAt: at }))).toBe(false)
  })

  it("refuses a caller no grant reaches before anything else", () => {
    expect(Readiness.forCaller(row({ oauthIssuerReviewRequiredAt: new Date() }), undefined, false)).toEqual({
      ready: false,
      message: 'You have not been granted access to "Docs".'
    })
    expect(Readiness.forCaller(row({ accessTokenCiphertext: "x" }), undefined, true).ready).toBe(true)
  })
})

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

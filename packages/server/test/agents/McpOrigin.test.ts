/**
 * The rule of the browser origins `/mcp` admits (src/agents/McpOrigin.ts), over the cases a server meets: listed
 * origins, its own (its public URL's, else the loopback address a request reached), and every other refused.
 */
import { describe, expect, it } from "vitest"
import * as McpOrigin from "../../src/agents/McpOrigin.js"

const listed = new Set(["https://agent.example.com"])
const local = { publicUrl: undefined }
const published = { publicUrl: "https://orgplane.example.com/mount" }

describe("McpOrigin.admits", () => {
  it.each([
    ["no Origin: no browser's", local, {}, true],
    ["a listed origin", local, { origin: "https://agent.example.com", host: "127.0.0.1:8787" }, true],
    ["the loopback address reached", local, { origin: "http://127.0.0.1:8787", host: "127.0.0.1:8787" }, true],
    ["localhost reached", local, { origin: "http://localhost:8787", host: "localhost:8787" }, true],
    ["[::1] reached", local, { origin: "http://[::1]:8787", host: "[::1]:8787" }, true],
    ["a Host written in capitals", local, { origin: "http://localhost:8787", host: "LOCALHOST:8787" }, true],
    ["another loopback name than the one reached", local, { origin: "http://localhost:8787", host: "127.0.0.1:8787" }, false],
    ["another port than the one reached", local, { origin: "http://127.0.0.1:9999", host: "127.0.0.1:8787" }, false],
    ["https to a local server", local, { origin: "https://127.0.0.1:8787", host: "127.0.0.1:8787" }, false],
    ["a rebound name (DNS rebinding)", local, { origin: "http://evil.example.com:8787", host: "evil.example.com:8787" }, false],
    ["a LAN address without a public URL", local, { origin: "http://192.168.1.5:8787", host: "192.168.1.5:8787" }, false],
    ["a loopback Origin without a Host", local, { origin: "http://127.0.0.1:8787" }, false],
    ["the public URL's origin", published, { origin: "https://orgplane.example.com", host: "10.0.0.7:8787" }, true],
    ["loopback once a public URL is set", published, { origin: "http://127.0.0.1:8787", host: "127.0.0.1:8787" }, false],
    ["the public URL's host over http", published, { origin: "http://orgplane.example.com", host: "orgplane.example.com" }, false],
    ["the string null (an opaque origin)", local, { origin: "null", host: "127.0.0.1:8787" }, false]
  ] as const)("%s", (_, settings, headers, admitted) => {
    expect(McpOrigin.admits(listed, settings, headers)).toBe(admitted)
  })
})

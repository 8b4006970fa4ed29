/**
 * The patches of effect 4.1.0's MCP server (patches/effect@4.1.0.patch, `ai/internal/mcpRuntime`, `mcpCore` and the
 * 2026-07-28 protocol's discovery, to be proposed upstream). The `completions` capability is declared only when a
 * completion is registered (it was declared always, with nothing behind it). And a request refused before it reaches the server's handlers is answered with a JSON-RPC error
 * object of `code`, `message` and `data` only (JSON-RPC 2.0 §5.1; it carried the error class's `_tag`), and input the
 * server cannot accept (not JSON, a message that is neither a request nor a response) with 400, as Streamable HTTP
 * asks ("If the server cannot accept the input, it MUST return an HTTP error status code"), where it was 200.
 * Held on `McpServer.layerHttp` alone, without orgplane.
 */
import * as McpProtocol from "effect/ai/McpProtocol"
import * as McpServer from "effect/ai/McpServer"
import * as Layer from "effect/Layer"
import { HttpRouter } from "effect/http"
import { afterAll, describe, expect, it } from "vitest"

const { dispose, handler } = HttpRouter.toWebHandler(
  McpServer.layerHttp({ name: "patch-test", version: "0.0.0", path: "/mcp", protocols: [McpProtocol.v2025_11_25] }).pipe(Layer.provide(HttpRouter.layer)),
  { disableLogger: true }
)
afterAll(() => dispose())

const post = (body: string, headers: Record<string, string> = {}) =>
  handler(new Request("http://127.0.0.1/mcp", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body
  }))

describe("effect's MCP server, patched", () => {
  it("declares the completions capability only when something can be completed", async () => {
    const response = await post(JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "patch-test", version: "0" } }
    }))
    expect(response.status).toBe(200)
    const text = await response.text()
    const answer = JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? text) as { result: { capabilities: Record<string, unknown> } }
    expect(answer.result.capabilities).toHaveProperty("logging")
    expect(answer.result.capabilities).not.toHaveProperty("completions")
  })

  it.each([
    ["a request without a session", JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }), 400, -32600, 7],
    ["not JSON", "{", 400, -32700, null],
    ["neither a request nor a response", JSON.stringify({ jsonrpc: "2.0", id: 8 }), 400, -32600, 8]
  ] as const)("answers %s with its status and a bare JSON-RPC error", async (_, body, status, code, id) => {
    const response = await post(body)
    expect(response.status).toBe(status)
    const answer: unknown = await response.json()
    expect(answer).toEqual({ jsonrpc: "2.0", id, error: { code, message: expect.any(String) } })
  })
})

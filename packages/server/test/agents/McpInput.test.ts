/**
 * What `/mcp` refuses of a POST's JSON-RPC input before the MCP server reads it (src/agents/McpInput.ts): a batch of
 * more than `maxBatch` messages, and an id JSON-RPC cannot echo exactly; everything else passes on, ids of every kind
 * it can echo among them (property-based).
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as McpInput from "../../src/agents/McpInput.js"

const ping = (id: unknown) => ({ jsonrpc: "2.0", id, method: "ping" })

describe("McpInput.refusalOf", () => {
  it("passes a batch of up to maxBatch messages, and refuses a larger one saying how large it may be", () => {
    const batch = (size: number) => JSON.stringify(Array.from({ length: size }, (_, i) => ping(i)))
    expect(McpInput.refusalOf(batch(McpInput.maxBatch))).toBeUndefined()
    const refused = McpInput.refusalOf(batch(4_000))
    expect(refused).toEqual({
      status: 400,
      body: { jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringContaining(`at most ${McpInput.maxBatch} messages and this one holds 4000`) } }
    })
  })

  it.each([
    ["1e999 (Infinity once read)", `{"jsonrpc":"2.0","id":1e999,"method":"ping"}`],
    ["a 30-digit integer", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`],
    ["2^53", `{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`],
    ["a fraction", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`],
    ["one message of a batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":-1e400,"method":"ping"}]`]
  ])("refuses an id it cannot echo exactly: %s", (_, text) => {
    expect(McpInput.refusalOf(text)?.body.error.message).toMatch(/cannot be echoed exactly/)
  })

  it("passes every message whose id it can echo: a string, a safe integer, null, or none", () => {
    const id = fc.oneof(fc.string(), fc.maxSafeInteger(), fc.constant(null), fc.constant(undefined))
    fc.assert(fc.property(fc.array(id, { minLength: 1, maxLength: McpInput.maxBatch }), fc.boolean(), (ids, batched) => {
      const messages = ids.map((value) => (value === undefined ? { jsonrpc: "2.0", method: "notifications/initialized" } : ping(value)))
      const text = JSON.stringify(batched ? messages : messages[0])
      expect(McpInput.refusalOf(text)).toBeUndefined()
    }))
  })

  it("leaves input that is not JSON, or not a message, to the MCP server", () => {
    for (const text of ["", "{", "[1,", "42", "\"text\"", "null"]) expect(McpInput.refusalOf(text), text).toBeUndefined()
  })
})

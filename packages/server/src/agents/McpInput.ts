/**
 * What `/mcp` refuses of a POST's JSON-RPC input before the MCP server reads it:
 *
 * - A batch (protocol 2025-03-26 accepts them) of more than `maxBatch` messages. Each message is bounded on its own
 *   (a tool's call is one API request, with its database bound); a batch of thousands was not, and held its request
 *   open for minutes. The body's bytes are bounded before this by the request edge (1 MiB, 413).
 * - An `id` JSON-RPC cannot echo exactly: a number that is not a safe integer (`1e999` read as Infinity was answered
 *   with `"id": null`, a 30-digit integer came back rounded). A string, or an integer up to 2^53 - 1, is echoed as
 *   received.
 *
 * Each refusal is HTTP 400 with a JSON-RPC error of `id: null` (the id is the problem, or there are many), code
 * -32600 Invalid Request, and a message saying what to send instead. Input that is not JSON is left to the MCP server
 * (-32700 Parse error).
 */

/** The most messages a JSON-RPC batch to `/mcp` may hold. */
export const maxBatch = 50

/** The answer to refused input: its HTTP status and JSON-RPC error. */
export interface Refusal {
  readonly status: 400
  readonly body: {
    readonly jsonrpc: "2.0"
    readonly id: null
    readonly error: { readonly code: -32600; readonly message: string }
  }
}

const refusal = (message: string): Refusal => ({ status: 400, body: { jsonrpc: "2.0", id: null, error: { code: -32600, message } } })

/** Why a message's `id` cannot be echoed exactly, or undefined when it can (or it has none). */
const idProblem = (message: unknown): string | undefined => {
  if (typeof message !== "object" || message === null || !("id" in message)) return undefined
  const id: unknown = message.id
  if (typeof id !== "number" || Number.isSafeInteger(id)) return undefined
  return `The id ${String(id)} cannot be echoed exactly: a JSON-RPC id is a string or an integer between -(2^53 - 1) and 2^53 - 1.`
}

/** The refusal of a POST body's JSON-RPC input (its text), or undefined when the MCP server may read it. */
export const refusalOf = (text: string): Refusal | undefined => {
  const start = text.trimStart()[0]
  if (start !== "{" && start !== "[") return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed]
  if (messages.length > maxBatch) {
    return refusal(`A JSON-RPC batch may hold at most ${maxBatch} messages and this one holds ${messages.length}: send them in batches of ${maxBatch} or fewer.`)
  }
  for (const message of messages) {
    const problem = idProblem(message)
    if (problem !== undefined) return refusal(problem)
  }
  return undefined
}

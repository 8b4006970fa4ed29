/**
 * The MCP session (the SDK's client through the outbound guard) against the MCP fakes on loopback: it initializes
 * and calls tools with plain credential headers, and a refused destination or a refused credential surfaces as a
 * session error whose diagnostic says so.
 */
import * as FakeMcp from "../../../packages/testkit/src/FakeMcp.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Session from "../src/mcp/Session.js"
import { fromSessionError } from "../src/mcp/SessionErrors.js"
import * as Outbound from "../src/platform/Outbound.js"
import * as AddressGuard from "../src/platform/AddressGuard.js"

const guard = (allowPrivate: boolean) =>
  Outbound.layer({ allowPrivate, timeout: "5 seconds" }).pipe(Layer.provide(AddressGuard.systemLayer))

const run = <A, E>(effect: Effect.Effect<A, E, Outbound.Outbound>, allowPrivate = true) =>
  Effect.runPromise(Effect.result(effect.pipe(Effect.provide(guard(allowPrivate)))))

let open: FakeMcp.FakeMcp
let keyed: FakeMcp.FakeMcp

beforeAll(async () => {
  open = await FakeMcp.start()
  keyed = await FakeMcp.start({ auth: { apiKey: "k-123" } })
})
afterAll(async () => {
  await open.close()
  await keyed.close()
})

describe("MCP session", () => {
  it("initializes and calls a tool on an open server", async () => {
    const result = await run(Effect.scoped(Effect.flatMap(Session.open({ url: open.url }), (client) =>
      Session.request((signal) => client.callTool({ name: "add", arguments: { a: 2, b: 3 } }, undefined, { signal })))))
    expect(result._tag).toBe("Success")
    if (result._tag === "Success") expect(result.success.structuredContent).toEqual({ sum: 5 })
  })

  it("sends the credential headers it is given", async () => {
    const ok = await run(Session.check({ url: keyed.url, headers: { authorization: "Bearer k-123" } }))
    expect(ok._tag).toBe("Success")
    const refused = await run(Session.check({ url: keyed.url, headers: { authorization: "Bearer wrong" } }))
    expect(refused._tag).toBe("Failure")
    if (refused._tag === "Failure") {
      const diagnostic = fromSessionError(refused.failure, { referenceId: "r1", url: keyed.url, phase: "MCP_INITIALIZE" })
      expect(diagnostic).toMatchObject({ code: "MCP_HTTP_401", httpStatus: 401, retryable: false, phase: "MCP_INITIALIZE" })
      expect(diagnostic.outbound?.pathHash).toMatch(/^sha256:[0-9a-f]{16}$/)
    }
  })

  it("is refused by the guard for a loopback server unless private destinations are allowed", async () => {
    const refused = await run(Session.check({ url: open.url }), false)
    expect(refused._tag).toBe("Failure")
    if (refused._tag === "Failure") {
      const diagnostic = fromSessionError(refused.failure, { referenceId: "r2", url: open.url })
      expect(diagnostic).toMatchObject({ category: "security_blocked", code: "MCP_URL_BLOCKED" })
    }
    expect(open.requests.filter((request) => request.rpcMethod === "initialize").length).toBe(1)
  })
})

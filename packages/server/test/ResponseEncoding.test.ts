/**
 * platform/ResponseEncoding.ts through HttpErrors.group, on an API of its own served by Node as Server.ts serves: a
 * success encoded without its schema's checks, and with them when `ORGPLANE_CHECK_RESPONSE_ENCODING=1` (the suite's).
 */
import { NodeHttpServer } from "@effect/platform-node"
import { apiOf, Timestamp } from "@orgplane/schema"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { createServer } from "node:http"
import * as HttpErrors from "../src/platform/HttpErrors.js"
import * as ResponseEncoding from "../src/platform/ResponseEncoding.js"
import * as TestServer from "./support/TestServer.js"

class Member extends Schema.Class<Member>("Member")({
  id: Schema.String.check(Schema.isPattern(/^mem_[a-z0-9]{4}$/)),
  joinedAt: Timestamp,
  count: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
}) {}

class ProbeApi extends HttpApiGroup.make("probe")
  .add(HttpApiEndpoint.get("valid", "/valid", { success: Member }))
  .add(HttpApiEndpoint.get("refined", "/refined", { success: Member }))
{}

const Api = apiOf(ProbeApi)

const joinedAt = new Date("2030-01-01T00:00:00Z")

const Handlers = HttpErrors.group(Api, "probe", (handlers) =>
  handlers
    .handle("valid", () => Effect.succeed(new Member({ id: "mem_abcd", joinedAt, count: 3 })))
    // Breaks the id's pattern and the count's bound: the shape is the schema's (a bug the checks would catch).
    .handle("refined", () => Effect.succeed(new Member({ id: "bad", joinedAt, count: -1 }, { disableChecks: true }))))

/** The API served with the suite's setting of `ORGPLANE_CHECK_RESPONSE_ENCODING` replaced by `setting`, read as the group builds. */
const serve = (setting: "0" | "1") =>
  Effect.gen(function*() {
    const saved = process.env["ORGPLANE_CHECK_RESPONSE_ENCODING"]
    process.env["ORGPLANE_CHECK_RESPONSE_ENCODING"] = setting
    const context = yield* Layer.build(
      HttpRouter.serve(HttpApiBuilder.layer(Api).pipe(Layer.provide(Handlers), Layer.provide(HttpErrors.layer)), { disableLogger: true }).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
      )
    ).pipe(Effect.ensuring(Effect.sync(() => {
      process.env["ORGPLANE_CHECK_RESPONSE_ENCODING"] = saved
    })))
    return HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address).replace(/\/$/, "")
  })

describe("ResponseEncoding", () => {
  it("the suite checks every answer", () => {
    expect(ResponseEncoding.checkingEverything()).toBe(true)
  })

  it.live("a valid value: the schema's JSON, its transformations applied, with or without the checks", () =>
    Effect.gen(function*() {
      for (const setting of ["0", "1"] as const) {
        const answer = yield* TestServer.get(yield* serve(setting), "/valid")
        expect(answer.status).toBe(200)
        expect(answer.headers.get("content-type")).toContain("application/json")
        expect(answer.body).toEqual({ id: "mem_abcd", joinedAt: "2030-01-01T00:00:00.000Z", count: 3 })
      }
    }).pipe(Effect.scoped))

  it.live("a value breaking its schema's refinements is sent as it is; checked, it is the server's bug (500)", () =>
    Effect.gen(function*() {
      const unchecked = yield* TestServer.get(yield* serve("0"), "/refined")
      expect(unchecked.status).toBe(200)
      expect(unchecked.body).toEqual({ id: "bad", joinedAt: "2030-01-01T00:00:00.000Z", count: -1 })
      const checked = yield* TestServer.get(yield* serve("1"), "/refined")
      expect(checked.status).toBe(500)
      expect(checked.body).toEqual({ error: "internal_error", message: "The server failed to handle this request." })
    }).pipe(Effect.scoped))

  it("a value of another shape still fails to encode without the checks (the platform's 500)", () => {
    const unchecked = Schema.encodeUnknownSync(Member, { disableChecks: true })
    expect(() => unchecked({ id: "mem_abcd", joinedAt, count: 3 })).toThrow()
    expect(() => unchecked(new Member({ id: "mem_abcd", joinedAt, count: 3 }))).not.toThrow()
  })
})

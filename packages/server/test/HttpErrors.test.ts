/**
 * platform/HttpErrors.ts, the server's `ApiErrors`, on an API of its own (SystemApi takes no input, so a request
 * failing its schema needs another endpoint): served by Node as Server.ts serves, through real HTTP.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { apiOf, ServiceUnavailable, ServiceUnavailableResponse } from "@orgplane/schema"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import * as SqlErrors from "effect/sql/SqlError"
import { createServer } from "node:http"
import * as HttpErrors from "../src/platform/HttpErrors.js"
import { retryAfterSeconds } from "../src/platform/Unavailable.js"
import * as TestServer from "./support/TestServer.js"

const Count = Schema.Struct({ n: Schema.Int })

class ProbeApi extends HttpApiGroup.make("probe")
  .add(HttpApiEndpoint.get("count", "/count", { query: { n: Schema.NumberFromString.check(Schema.isInt()) }, success: Count }))
  .add(HttpApiEndpoint.get("broken", "/broken", { success: Count }))
  .add(HttpApiEndpoint.get("down", "/down", { success: Count, error: [ServiceUnavailableResponse] }))
  .add(HttpApiEndpoint.get("lost", "/lost", { success: Count }))
  .add(HttpApiEndpoint.get("crash", "/crash", { success: Count }))
{}

const Api = apiOf(ProbeApi)

const lostConnection = new SqlErrors.SqlError({
  reason: new SqlErrors.ConnectionError({ cause: new Error("Connection terminated"), message: "PgConnection: Connection is closed", operation: "query" })
})

const Handlers = HttpApiBuilder.group(Api, "probe", (handlers) =>
  handlers
    .handle("count", ({ query }) => Effect.succeed({ n: query.n }))
    // A handler whose value fails its own success schema: the server's bug, not the caller's.
    .handle("broken", () => Effect.succeed({ n: 1.5 }))
    .handle("down", () => Effect.fail(new ServiceUnavailable({ message: "The database is not available right now; retry later." })))
    // A repository that still dies on a storage failure.
    .handle("lost", () => Effect.die(lostConnection))
    .handle("crash", () => Effect.die(new Error("boom"))))

const serve = Effect.gen(function*() {
  const context = yield* Layer.build(
    HttpRouter.serve(HttpApiBuilder.layer(Api).pipe(Layer.provide(Handlers), Layer.provide(HttpErrors.layer)), { disableLogger: true }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
    )
  )
  return HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address).replace(/\/$/, "")
})

describe("HttpErrors", () => {
  it.live("a request that fails its schema answers 400 invalid_request with the bad field", () =>
    Effect.gen(function*() {
      const url = yield* serve
      expect((yield* TestServer.get(url, "/count?n=3")).body).toEqual({ n: 3 })
      const refused = yield* TestServer.get(url, "/count?n=abc")
      expect(refused.status).toBe(400)
      expect(refused.body).toMatchObject({ error: "invalid_request", details: [{ path: ["n"] }] })
    }).pipe(Effect.scoped))

  it.live("a response that fails its own schema answers 500 internal_error, not 400", () =>
    Effect.gen(function*() {
      const answer = yield* TestServer.get(yield* serve, "/broken")
      expect(answer.status).toBe(500)
      expect(answer.body).toEqual({ error: "internal_error", message: "The server failed to handle this request." })
    }).pipe(Effect.scoped))

  it.live("ServiceUnavailable, and a storage failure that says the database is gone, answer 503 with Retry-After", () =>
    Effect.gen(function*() {
      const url = yield* serve
      for (const path of ["/down", "/lost"]) {
        const answer = yield* TestServer.get(url, path)
        expect(answer.status).toBe(503)
        expect(answer.headers.get("retry-after")).toBe(String(retryAfterSeconds))
        expect(answer.body).toEqual({ error: "service_unavailable", message: "The database is not available right now; retry later." })
      }
    }).pipe(Effect.scoped))

  it.live("a defect answers 500 internal_error", () =>
    Effect.gen(function*() {
      const answer = yield* TestServer.get(yield* serve, "/crash")
      expect(answer.status).toBe(500)
      expect(answer.body).toEqual({ error: "internal_error", message: "The server failed to handle this request." })
    }).pipe(Effect.scoped))
})

/**
 * The system group through real HTTP, on a fresh database: the embedded one, or Postgres when DATABASE_URL is set.
 * No test of a request failing its schema here: SystemApi's endpoints take no input (HttpErrors.test.ts checks the 400
 * on an API of its own).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Schedule from "effect/Schedule"
import * as TestClock from "effect/testing/TestClock"
import { ServiceUnavailable } from "@orgplane/schema"
import { DatabaseStatus } from "../src/platform/DatabaseStatus.js"
import { retryAfterSeconds } from "../src/platform/Unavailable.js"
import { readyDeadline } from "../src/system/Health.js"
import { readiness } from "../src/system/Http.js"
import * as TestDatabase from "./support/TestDatabase.js"
import * as TestServer from "./support/TestServer.js"

describe(`system on ${TestDatabase.kind}`, () => {
  it.live("/health answers 200 with the configured version", () =>
    Effect.gen(function*() {
      const server = yield* TestServer.start({ database: yield* TestDatabase.layer({ migrated: true }), version: "9.9.9-health" })
      const health = yield* TestServer.get(server.url, "/health")
      expect(health.status).toBe(200)
      expect(health.body).toEqual({ ok: true, version: "9.9.9-health" })
    }).pipe(Effect.scoped))

  it.live("/ready answers 200 when the database answers", () =>
    Effect.gen(function*() {
      const server = yield* TestServer.start({ database: yield* TestDatabase.layer({ migrated: true }) })
      const ready = yield* TestServer.get(server.url, "/ready")
      expect(ready.status).toBe(200)
      expect(ready.body).toEqual({ ok: true, checks: { database: "ok" } })
    }).pipe(Effect.scoped))

  it.live("/ready answers 200 on the database the configuration names (DATABASE_URL's, or the embedded one in memory)", () =>
    Effect.gen(function*() {
      const server = yield* TestServer.start(
        TestDatabase.postgresUrl === undefined ? { dataDir: "memory" } : { databaseUrl: yield* TestDatabase.freshPostgres(TestDatabase.postgresUrl) }
      )
      const ready = yield* TestServer.get(server.url, "/ready")
      expect(ready.body).toEqual({ ok: true, checks: { database: "ok" } })
    }).pipe(Effect.scoped))

  it.live("/ready answers 503 service_unavailable with Retry-After at its 2-second deadline when the database hangs", () =>
    Effect.gen(function*() {
      // Long database timeouts: only /ready's own deadline can answer.
      const database = yield* TestDatabase.behindProxy({ migrated: true, connectTimeout: "10 minutes", statementTimeout: "10 minutes" })
      const server = yield* TestServer.start({ database: database.layer })
      expect((yield* TestServer.get(server.url, "/ready")).status).toBe(200)

      database.proxy.pause()
      const ready = yield* TestServer.get(server.url, "/ready")
      expect(ready.status).toBe(503)
      expect(ready.headers.get("retry-after")).toBe(String(retryAfterSeconds))
      expect(ready.body).toEqual({ error: "service_unavailable", message: "The database does not answer." })
      expect(ready.millis).toBeGreaterThanOrEqual(Duration.toMillis(readyDeadline) - 50)
      expect(ready.millis).toBeLessThan(Duration.toMillis(readyDeadline) + 3_000)

      // The health check reads nothing: the hung database does not fail it.
      expect((yield* TestServer.get(server.url, "/health")).status).toBe(200)

      // Once the database answers again, so does /ready: at once, or once the pool has replaced the connection the
      // stuck check left (its cancel and drain may end it).
      database.proxy.resume()
      const again = yield* TestServer.get(server.url, "/ready").pipe(
        Effect.repeat({ until: (answer) => answer.status === 200, schedule: Schedule.spaced("100 millis"), times: 100 })
      )
      expect(again.body).toEqual({ ok: true, checks: { database: "ok" } })
    }).pipe(Effect.scoped))

  it.effect("/ready does not wait for the stuck check's interruption (a cancel, which needs the hung database too)", () =>
    Effect.gen(function*() {
      const status = yield* DatabaseStatus
      // A check that never answers and whose interruption never ends either.
      const stuck = Effect.onInterrupt(Effect.never, () => Effect.never)
      const answering = yield* Effect.forkChild(Effect.flip(readiness(stuck, status)))
      yield* TestClock.adjust(Duration.millis(Duration.toMillis(readyDeadline) - 1))
      expect(answering.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* Fiber.join(answering)).toEqual(new ServiceUnavailable({ message: "The database does not answer." }))
    }).pipe(Effect.provide(Layer.merge(DatabaseStatus.layer, Logger.layer([])))))
})

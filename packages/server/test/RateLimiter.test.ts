/**
 * platform/RateLimiter.ts on a migrated database (the embedded one, or Postgres with DATABASE_URL): windows counted,
 * reset and read on a clock the test sets, the keys' forgetting and refunds, concurrent hits sharing keys, and the
 * hourly expiry job's statement (it deletes the counts of windows that ended, and keeps the running ones).
 */
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Cron from "effect/Cron"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { migrations } from "../src/migrations/index.js"
import { migrate } from "../src/platform/Migrator.js"
import * as RateLimits from "../src/platform/RateLimiter.js"
import { RateLimiter } from "../src/platform/RateLimiter.js"
import * as TestDatabase from "./support/TestDatabase.js"
import { clockAt } from "./support/Clocks.js"

let time = Date.parse("2026-11-26T06:00:00Z")
const advance = (duration: Duration.Input) => (time += Duration.toMillis(duration))
const atTestTime = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Clock.Clock, clockAt(() => time))

const count = SqlClient.SqlClient.use((sql) => Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM rate_limits`, ([row]) => row!.n))

const database = Layer.unwrap(TestDatabase.layer({ migrated: true })).pipe((db) => Layer.provideMerge(Layer.effectDiscard(migrate(migrations)), db))

layer(Layer.provideMerge(RateLimiter.layer, database), { timeout: 120_000, excludeTestServices: true })(`RateLimiter on ${TestDatabase.kind}`, (it) => {
  it.effect("counts hits in a fixed window from the first, allows up to the limit, then says when the window resets", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const decisions = []
      for (let i = 0; i < 4; i++) {
        decisions.push(yield* limiter.hit("sign-in:a@example.com", 3, "15 minutes"))
        advance("1 minute")
      }
      expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, false])
      // The window started at the first hit, 4 minutes ago: 11 minutes left.
      expect(decisions[3]!.retryAfterSeconds).toBe(12 * 60)
      advance("11 minutes")
      // The window ended (the floor is inclusive): the next hit starts a new one.
      expect(yield* limiter.hit("sign-in:a@example.com", 3, "15 minutes")).toEqual({ allowed: true, retryAfterSeconds: 15 * 60 })
      advance("14 minutes")
      expect(yield* limiter.hit("sign-in:a@example.com", 1, "15 minutes")).toEqual({ allowed: false, retryAfterSeconds: 60 })
      advance("59.5 seconds")
      // At least a second, rounded up.
      expect((yield* limiter.hit("sign-in:a@example.com", 1, "15 minutes")).retryAfterSeconds).toBe(1)
    }).pipe(atTestTime))

  it.effect("hitEach counts each key once per statement, in one order, and answers each key's count; read counts nothing", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const first = yield* limiter.hitEach(["b:1", "a:1", "b:1"], "1 hour")
      expect([...first].sort((x, y) => x.key.localeCompare(y.key))).toEqual([
        { key: "a:1", count: 1, retryAfterSeconds: 3600 },
        { key: "b:1", count: 1, retryAfterSeconds: 3600 }
      ])
      advance("10 minutes")
      yield* limiter.hitEach(["a:1"], "1 hour")
      const read = yield* limiter.read(["a:1", "b:1", "c:1"], "1 hour")
      expect([...read].sort((x, y) => x.key.localeCompare(y.key))).toEqual([
        { key: "a:1", count: 2, retryAfterSeconds: 50 * 60 },
        { key: "b:1", count: 1, retryAfterSeconds: 50 * 60 }
      ])
      expect(yield* limiter.read(["a:1", "b:1"], "1 hour")).toHaveLength(2)
      // Read in a shorter window, the same rows started too long ago to count.
      expect(yield* limiter.read(["a:1", "b:1"], "5 minutes")).toEqual([])
    }).pipe(atTestTime))

  it.effect("a window longer than a day is a bug (a defect), not a decision", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const exit = yield* Effect.exit(limiter.hit("too-long", 1, "25 hours"))
      expect(Exit.isFailure(exit) && Exit.hasDies(exit)).toBe(true)
      expect((yield* limiter.read(["too-long"], "1 day")).length).toBe(0)
    }).pipe(atTestTime))

  it.effect("clear, clearPrefix (its % and _ literal), refund (never below zero) and clearMentioning forget what they say", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const keys = ["sign-in:x@example.com", "sign-in:y@example.com", "sign_up:x", "signXup:x", "org:org_123:llm", "member:org_123:9", "org:org_456:llm"]
      yield* limiter.hitEach(keys, "1 hour")
      yield* limiter.clear(["sign-in:y@example.com"])
      yield* limiter.clearPrefix("sign_")
      const left = (yield* limiter.read(keys, "1 hour")).map((standing) => standing.key).sort()
      expect(left).toEqual(["member:org_123:9", "org:org_123:llm", "org:org_456:llm", "sign-in:x@example.com", "signXup:x"])
      expect(yield* limiter.clearMentioning("org_123")).toBe(2)
      expect(yield* limiter.clearMentioning("org_123")).toBe(0)
      yield* limiter.refund("signXup:x")
      yield* limiter.refund("signXup:x")
      yield* limiter.refund("never-hit")
      const [refunded] = yield* limiter.read(["signXup:x"], "1 hour")
      expect(refunded!.count).toBe(0)
      yield* limiter.clear(keys)
    }).pipe(atTestTime))

  it.effect("concurrent hits sharing keys, named in every order, count every hit and never deadlock", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const keys = ["race:a", "race:b", "race:c", "race:d"]
      const orders = Array.from({ length: 24 }, (_, i) => i % 2 === 0 ? [...keys] : [...keys].reverse())
      const answers = yield* Effect.all(orders.map((order) => limiter.hitEach(order, "1 hour")), { concurrency: "unbounded" })
      for (const key of keys) {
        const counts = answers.map((standings) => standings.find((standing) => standing.key === key)!.count).sort((a, b) => a - b)
        expect(counts).toEqual(Array.from({ length: 24 }, (_, i) => i + 1))
      }
    }))

  it.effect("the hourly job deletes the counts of windows that ended, and keeps the running ones", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM rate_limits`
      const started = new Date()
      yield* limiter.hitEach(["sign-up:203.0.113.9", "sign-in:e@example.com:203.0.113.9", "sign-in:e@example.com", "sign-in:203.0.113.9"], "15 minutes")
      expect(yield* count).toBe(4)
      expect(yield* RateLimits.deleteExpired({ now: started })).toBe(0)
      expect(yield* count).toBe(4)
      const later = new Date(Date.now() + Duration.toMillis(RateLimits.LONGEST_WINDOW) + 60_000)
      expect(yield* RateLimits.deleteExpired({ now: later })).toBe(4)
      expect(yield* count).toBe(0)
      // Every hour at minute 23, UTC.
      expect(Cron.next(RateLimits.schedule, new Date("2026-11-26T06:30:00Z")).toISOString()).toBe("2026-11-26T07:23:00.000Z")
    }))
})

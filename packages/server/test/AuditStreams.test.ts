/**
 * The audit area's streams on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL): owners
 * create, read, change, pause, rotate, test and delete streams; the delivery loop (StreamDelivery's `loop`, what its
 * cluster singleton runs) sends the organization's events, signed, in order, to a receiver on loopback, moves the
 * cursor on a 2xx and counts a failure otherwise; with no stream due it looks twice a minute, and a stream created
 * meanwhile wakes it. The receiver is a small node:http server of this file's own.
 */
import { expect, layer } from "@effect/vitest"
import { AUDIT_STREAM_DELIVERY_HEADER, AUDIT_STREAM_SIGNATURE_HEADER, type AuditAction, type OrganizationId } from "@orgplane/schema"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Statement from "effect/sql/Statement"
import * as TestClock from "effect/testing/TestClock"
import * as NodeCrypto from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Partitions from "../src/audit/Partitions.js"
import { loop, MAX_IDLE_WAIT } from "../src/audit/StreamDelivery.js"
import * as StreamConfig from "../src/audit/StreamConfig.js"
import { Streams } from "../src/audit/Streams.js"
import { signatureHeader } from "../src/audit/StreamSignature.js"
import { StreamsRepository } from "../src/audit/StreamsRepository.js"
import { StreamWake } from "../src/audit/StreamWake.js"
import { AuditRecorder } from "../src/platform/AuditRecorder.js"
import * as Config from "../src/platform/Config.js"
import { Crypto, make as makeCrypto, parseKeys } from "../src/platform/Crypto.js"
import { IdGenerator } from "../src/platform/Ids.js"
import * as Outbound from "../src/platform/Outbound.js"
import * as Db from "./support/IdentityDatabase.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const cryptoLayer = Layer.effect(Crypto, makeCrypto({ passwordCost: 10, keys: parseKeys(`k1:${NodeCrypto.randomBytes(32).toString("base64")}`) }))

const testLayer = Layer.mergeAll(Streams.layer, StreamsRepository.layer, AuditRecorder.layer).pipe(
  Layer.provideMerge(Layer.effectDiscard(Partitions.ensureAhead)),
  Layer.provideMerge(Layer.mergeAll(
    Db.layer,
    StreamWake.layer,
    IdGenerator.layer,
    cryptoLayer,
    Config.layer({ outboundAllowPrivate: true }),
    Outbound.layer({ allowPrivate: true }),
    StreamConfig.layer({ auditStreamPollInterval: "100 millis", auditStreamSettle: "0 millis", auditStreamTimeout: "2 seconds", auditStreamBackoffBase: "100 millis" })
  ))
)

interface Received {
  readonly deliveryId: string | undefined
  readonly signature: string | undefined
  readonly body: string
}

/** A receiver on loopback: records each POST and answers `status`. */
const receiver = Effect.acquireRelease(
  Effect.promise(async () => {
    const received: Array<Received> = []
    const state = { status: 200 }
    const server = Http.createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const header = (name: string) => {
          const value = request.headers[name]
          return typeof value === "string" ? value : undefined
        }
        received.push({ deliveryId: header(AUDIT_STREAM_DELIVERY_HEADER), signature: header(AUDIT_STREAM_SIGNATURE_HEADER), body: Buffer.concat(chunks).toString("utf8") })
        response.writeHead(state.status, { "content-type": "application/json" })
        response.end("{}")
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as Net.AddressInfo
    return { url: `http://127.0.0.1:${port}/ingest`, received, state, server }
  }),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
)

/** Whether `signature` signs `body` with `secret` (at the time it names). */
const signedWith = (secret: string, body: string, signature: string | undefined) => {
  const at = Number(/^t=(\d+),/.exec(signature ?? "")?.[1])
  return signature === signatureHeader(secret, body, at)
}

const record = (organizationId: OrganizationId, action: AuditAction, reason: string) =>
  AuditRecorder.use((recorder) => recorder.recordSystem({ organizationId, job: "test", action, reason }))

/** Polls `check` until it holds (at most 20 seconds). */
const eventually = <A>(read: Effect.Effect<A, unknown, never>, check: (value: A) => boolean) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 200; attempt++) {
      const value = yield* read
      if (check(value)) return value
      yield* Effect.sleep("100 millis")
    }
    return yield* read
  })

const staffed = Effect.gen(function*() {
  const organization = Members.organization()
  const owner = Members.member(organization, "owner")
  const admin = Members.member(organization, "admin")
  yield* Members.seed(owner, admin)
  return { organization, owner, admin }
})

layer(testLayer, { timeout: 120_000, excludeTestServices: true })(`audit streams on ${TestDatabase.kind}`, (it) => {
  it.effect("owners create, change, pause, rotate and delete streams; admins read them; another organization finds none", () =>
    Effect.gen(function*() {
      const streams = yield* Streams
      const { admin, owner } = yield* staffed
      const other = yield* staffed
      const created = yield* streams.create(owner, { url: "http://127.0.0.1:9/a", description: "SIEM" })
      expect(created.secret).toMatch(/^whsec_/)
      expect(created.stream).toMatchObject({ url: "http://127.0.0.1:9/a", description: "SIEM", status: "active", delivery: { lastDeliveredEventId: null, consecutiveFailures: 0 } })
      const id = created.stream.id
      expect((yield* streams.get(admin, id)).stream).toEqual(created.stream)
      expect((yield* streams.list(admin, {})).items.map((stream) => stream.id)).toEqual([id])
      expect(yield* Effect.flip(streams.create(admin, { url: "http://127.0.0.1:9/b" }))).toMatchObject({ _tag: "Forbidden" })
      expect(yield* Effect.flip(streams.get(other.owner, id))).toMatchObject({ _tag: "NotFound", error: "audit_stream_not_found", message: "Audit stream not found." })
      const paused = yield* streams.update(owner, id, { status: "paused", description: null })
      expect(paused.stream).toMatchObject({ status: "paused", description: null, delivery: { nextAttemptAt: null } })
      const rotated = yield* streams.rotateSecret(owner, id)
      expect(rotated.secret).toMatch(/^whsec_/)
      expect(rotated.secret).not.toBe(created.secret)
      for (let n = 1; n < 5; n++) yield* streams.create(owner, { url: `http://127.0.0.1:9/${n}` })
      expect(yield* Effect.flip(streams.create(owner, { url: "http://127.0.0.1:9/6" }))).toMatchObject({
        _tag: "Conflict",
        error: "audit_stream_limit_reached",
        message: "The organization has 5 audit streams, the most it may have: delete one first."
      })
      yield* streams.remove(owner, id)
      expect(yield* Effect.flip(streams.get(owner, id))).toMatchObject({ error: "audit_stream_not_found" })
      expect(yield* Effect.flip(streams.remove(owner, id))).toMatchObject({ error: "audit_stream_not_found" })
    }))

  it.effect("sends a signed test ping; delivers the organization's events in order, signed, and counts failures", () =>
    Effect.gen(function*() {
      const streams = yield* Streams
      const target = yield* receiver
      const { organization, owner } = yield* staffed
      const created = yield* streams.create(owner, { url: target.url, status: "paused" })
      const id = created.stream.id
      const ping = yield* streams.test(owner, id)
      expect(ping).toMatchObject({ delivered: true, status: 200, error: null })
      expect(target.received[0]).toMatchObject({ deliveryId: ping.deliveryId, body: JSON.stringify({ events: [], test: true }) })
      expect(signedWith(created.secret, target.received[0]?.body ?? "", target.received[0]?.signature)).toBe(true)

      yield* record(organization.id, "audit.export", "one")
      yield* Effect.sleep("2 millis")
      yield* record(organization.id, "audit.export", "two")
      const delivery = yield* Effect.forkChild(loop)
      yield* streams.update(owner, id, { status: "active" })
      const delivered = yield* eventually(
        Effect.sync(() => target.received.slice(1).flatMap((received) => (JSON.parse(received.body).events as Array<{ reason: string }>).map((event) => event.reason))),
        (reasons) => reasons.includes("two")
      )
      // The stream's own update (recorded by nobody here: no request) is not among them; the two events are, in order.
      expect(delivered.filter((reason) => reason === "one" || reason === "two")).toEqual(["one", "two"])
      const sent = target.received[1]
      expect(signedWith(created.secret, sent?.body ?? "", sent?.signature)).toBe(true)
      expect(sent?.deliveryId).toMatch(/^asd_/)
      const after = yield* eventually(Effect.orDie(streams.get(owner, id)), ({ stream }) => stream.delivery.lastDeliveredEventId !== null)
      expect(after.stream.delivery).toMatchObject({ consecutiveFailures: 0, lastError: null })

      target.state.status = 500
      yield* record(organization.id, "audit.export", "three")
      const failing = yield* eventually(Effect.orDie(streams.get(owner, id)), ({ stream }) => stream.delivery.consecutiveFailures > 0)
      expect(failing.stream.delivery).toMatchObject({ lastError: "HTTP 500", lastDeliveredEventId: after.stream.delivery.lastDeliveredEventId })
      // The same batch again under the same delivery id once the receiver recovers.
      const failedId = target.received.at(-1)?.deliveryId
      target.state.status = 200
      yield* eventually(Effect.orDie(streams.get(owner, id)), ({ stream }) => stream.delivery.consecutiveFailures === 0)
      expect(target.received.at(-1)?.deliveryId).toBe(failedId)
      yield* Fiber.interrupt(delivery)
    }).pipe(Effect.scoped))
})

/**
 * A test clock for the delivery loop alone, which says when the loop is asleep: the sleeps under way (their
 * deadlines) and how many began. `advance` moves it and waits until the loop sleeps again (having looked, if a sleep
 * of it was due), so every look the loop makes in the time moved over is made.
 */
const loopClock = Effect.gen(function*() {
  const test = yield* TestClock.make()
  yield* test.setTime(Date.now())
  const pending = new Set<{ readonly due: number }>()
  const began = { count: 0 }
  const clock: Clock.Clock = {
    currentTimeMillisUnsafe: () => test.currentTimeMillisUnsafe(),
    currentTimeMillis: test.currentTimeMillis,
    currentTimeNanosUnsafe: () => test.currentTimeNanosUnsafe(),
    currentTimeNanos: test.currentTimeNanos,
    monotonicTimeNanosUnsafe: () => test.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: test.monotonicTimeNanos,
    sleep: (duration) =>
      Effect.suspend(() => {
        const entry = { due: test.currentTimeMillisUnsafe() + Duration.toMillis(duration) }
        pending.add(entry)
        began.count++
        return Effect.ensuring(test.sleep(duration), Effect.sync(() => pending.delete(entry)))
      })
  }
  /** Until the loop sleeps alone (no delivery in flight), past the clock's time, after `sleeps` sleeps began. */
  const asleep = (sleeps: number) =>
    Effect.gen(function*() {
      for (let attempt = 0; attempt < 2000; attempt++) {
        const at = test.currentTimeMillisUnsafe()
        if (began.count >= sleeps && pending.size === 1 && [...pending].every((entry) => entry.due > at)) return
        yield* Effect.sleep("5 millis")
      }
      return yield* Effect.die(new Error("The delivery loop did not look and go back to sleep"))
    })
  const advance = (step: Duration.Input) =>
    Effect.gen(function*() {
      const to = test.currentTimeMillisUnsafe() + Duration.toMillis(Duration.fromInputUnsafe(step))
      const wakes = [...pending].some((entry) => entry.due <= to)
      const sleeps = began.count + (wakes ? 1 : 0)
      yield* test.adjust(step)
      yield* asleep(sleeps)
    })
  return { clock, began, asleep, advance } as const
})

layer(testLayer, { timeout: 120_000, excludeTestServices: true })(`the delivery loop at idle on ${TestDatabase.kind}`, (it) => {
  it.effect("with no stream it looks twice a minute; a stream created after a long idle wakes it, and is delivered within a few polls", () =>
    Effect.gen(function*() {
      const streams = yield* Streams
      const target = yield* receiver
      const { organization, owner } = yield* staffed
      const { advance, asleep, began, clock } = yield* loopClock
      const statements = { count: 0 }
      const counted: Statement.Transformer = (statement) => Effect.sync(() => (statements.count++, statement))
      const delivery = yield* Effect.forkChild(loop.pipe(
        Effect.provideService(Statement.CurrentTransformer, counted),
        Effect.provideService(Clock.Clock, clock)
      ))
      yield* asleep(1)
      // Ten minutes with no stream, a second at a time: a look (the claim, then when a stream is next due) every
      // MAX_IDLE_WAIT, where a loop polling every `pollInterval` would have looked 6,000 times.
      const before = statements.count
      for (let second = 0; second < 600; second++) yield* advance("1 second")
      expect(Duration.toMillis(MAX_IDLE_WAIT)).toBe(30_000)
      expect(statements.count - before).toBe(2 * 20)

      // Created now, the stream wakes the loop at once: its first look takes it (nothing to send yet: the stream's
      // own events start at its creation), and the next, one poll later, sends the event.
      const sleeps = began.count
      const created = yield* streams.create(owner, { url: target.url })
      yield* asleep(sleeps + 1)
      // That look is over when the stream is due again one poll later (its lease released in the same statement).
      yield* eventually(Effect.orDie(streams.get(owner, created.stream.id)), ({ stream }) => stream.delivery.nextAttemptAt !== created.stream.delivery.nextAttemptAt)
      yield* record(organization.id, "audit.export", "after a long idle")
      // Within a few polls (each a look; one more after a failed attempt, whose backoff is a poll): the loop's clock
      // never reaches the idle wait, so only the wake can have had the stream looked at.
      const read = Effect.sync(() => target.received.flatMap((received) => (JSON.parse(received.body).events as Array<{ reason: string }>).map((event) => event.reason)))
      let reasons: Array<string> = []
      for (let poll = 0; poll < 5 && reasons.length === 0; poll++) {
        yield* advance("100 millis")
        for (let attempt = 0; attempt < 40 && reasons.length === 0; attempt++) {
          reasons = yield* read
          if (reasons.length === 0) yield* Effect.sleep("50 millis")
        }
      }
      // The receiver answers before the loop records the delivery: the stream's row says so a moment later.
      const { stream } = yield* eventually(Effect.orDie(streams.get(owner, created.stream.id)), ({ stream }) => stream.delivery.lastDeliveredEventId !== null)
      expect({ reasons, lastError: stream.delivery.lastError }).toEqual({ reasons: ["after a long idle"], lastError: null })
      expect(stream.delivery.lastDeliveredEventId).not.toBeNull()
      yield* Fiber.interrupt(delivery)
    }).pipe(Effect.scoped))
})

/**
 * Delivery of audit streams, on the durable engine: one loop per cluster (a cluster `Singleton`, so one runner runs
 * it and another takes over when that one goes away) looks for active streams whose next attempt is due, leases
 * them (`FOR UPDATE SKIP LOCKED` and `lease_until`, so two processes never deliver one stream at once, even while
 * the singleton moves), and delivers each in a fiber of its own, so a slow receiver holds back only its own stream.
 * (Not a `ClusterCron`: it persists one message per run, and cluster keeps processed messages, which at one run
 * every 2 seconds is 43,200 rows a day.)
 *
 * When it looks: every `pollInterval` while a stream is due within it (an active stream with nothing to send is due
 * again one `pollInterval` later, so any active stream keeps that pace); when a look claims nothing, it waits until
 * the earliest next attempt (`StreamsRepository.nextAttempt`: a stream backing off, or none at all), at most
 * `MAX_IDLE_WAIT`; and at once when a stream is created, changed or tested in this process (audit/StreamWake.ts).
 * An idle server with no active stream so runs two statements every 30 seconds rather than one every 2; a stream
 * made through another process of the cluster is found within `MAX_IDLE_WAIT`.
 *
 * A delivery: the events after the stream's cursor, oldest first by `(occurred_at, id)`, at most 100, and only
 * those before the settle horizon (`StreamsRepository.horizon`): an event is stamped inside its change's
 * transaction, so a slow transaction may commit an event older than one already sent; the horizon stays before
 * every open transaction's start and `settle` (5 s) behind the clock, so what is sent has nothing left to arrive
 * before it. The batch is fixed before it is sent (its delivery id and last event), so a retry sends the same
 * events under the same `Orgplane-Delivery-Id`. POST through the outbound guard as a user-supplied destination
 * (https and public addresses unless private mode; redirects refused) with a timeout; a 2xx moves the cursor to the
 * batch's last event, anything else counts a failure and waits `base × 2^(failures − 1)`, at most the cap.
 *
 * The guarantee: each event at least once (exactly once unless an acknowledged delivery's answer is lost, or a
 * process stops between the answer and the cursor's update: then the batch is sent again under the same delivery
 * id), in order of `occurredAt` then id, typically 5 to 10 seconds after it happened.
 */
import { AUDIT_STREAM_BATCH, AUDIT_STREAM_DELIVERY_HEADER, AUDIT_STREAM_SIGNATURE_HEADER, AuditEvent } from "@orgplane/schema"
import * as Singleton from "effect/cluster/Singleton"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Schema from "effect/Schema"
import { Crypto } from "../platform/Crypto.js"
import { makeId } from "../platform/Ids.js"
import { Outbound, type OutboundError } from "../platform/Outbound.js"
import { bind, SecretColumns } from "../platform/SecretColumns.js"
import { orUnavailable } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { backoff, StreamConfig } from "./StreamConfig.js"
import { signatureHeader } from "./StreamSignature.js"
import { type AuditStreamRow, type Position, StreamsRepository } from "./StreamsRepository.js"
import { StreamWake } from "./StreamWake.js"

/** Streams delivered at once by one runner; more wait for the next poll. */
const MAX_IN_FLIGHT = 20

/** The longest the loop waits between two looks (unless `pollInterval` is longer): how late it finds a stream made elsewhere. */
export const MAX_IDLE_WAIT = Duration.seconds(30)

/** A receiver's answer is not read beyond this. */
const MAX_ANSWER_BYTES = 64 * 1024

const encodeEvent = Schema.encodeSync(AuditEvent)

/** The outcome of one POST: acknowledged (a 2xx), or why not, in the words `delivery.lastError` uses. */
export interface SendResult {
  readonly delivered: boolean
  readonly status: number | null
  readonly error: string | null
}

const describe = (error: OutboundError): string => {
  switch (error.reason) {
    case "timeout":
      return `timeout: ${error.message}`
    case "too_large":
      return "answer too large"
    case "blocked":
      return `blocked: ${error.message}`
    case "network":
      return `network: ${error.code ?? error.message}`
  }
}

/** The body of a delivery: the events as the API shows them. */
export const bodyOf = (events: ReadonlyArray<AuditEvent>) => JSON.stringify({ events: events.map((event) => encodeEvent(event)) })

/** POSTs `body` to `url`, signed with `secret` at the current time and named `deliveryId`. */
export const send = Effect.fn("StreamDelivery.send")(function*(url: string, secret: string, deliveryId: string, body: string) {
  const outbound = yield* Outbound
  const config = yield* StreamConfig
  const at = yield* now
  const request = HttpClientRequest.post(url).pipe(
    HttpClientRequest.setHeaders({
      [AUDIT_STREAM_SIGNATURE_HEADER]: signatureHeader(secret, body, Math.floor(at.getTime() / 1000)),
      [AUDIT_STREAM_DELIVERY_HEADER]: deliveryId
    }),
    HttpClientRequest.bodyText(body, "application/json")
  )
  // The URL is the organization's: a user-supplied destination (https, public addresses unless private mode), and a
  // redirect is a failure, not followed (the signature is meant for the URL named).
  return yield* outbound.execute(request, { timeout: config.timeout, maxBodyBytes: MAX_ANSWER_BYTES, followRedirects: false, destination: "user" }).pipe(
    Effect.map((response): SendResult =>
      response.status >= 200 && response.status < 300
        ? { delivered: true, status: response.status, error: null }
        : { delivered: false, status: response.status, error: `HTTP ${response.status}` }
    ),
    Effect.catch((error) => Effect.succeed<SendResult>({ delivered: false, status: null, error: describe(error) }))
  )
})

/** One attempt for a leased stream: the pending batch again, or the next one under the horizon; nothing when there is none. */
const deliver = (row: AuditStreamRow) =>
  Effect.gen(function*() {
    const streams = yield* StreamsRepository
    const crypto = yield* Crypto
    const config = yield* StreamConfig
    const { id, organizationId } = row
    const cursor: Position = { occurredAt: row.cursorOccurredAt, id: row.cursorEventId }
    const at = yield* now
    let deliveryId: string
    let last: Position
    let events: ReadonlyArray<AuditEvent>
    if (row.pendingDeliveryId !== null && row.pendingLastOccurredAt !== null && row.pendingLastEventId !== null) {
      deliveryId = row.pendingDeliveryId
      last = { occurredAt: row.pendingLastOccurredAt, id: row.pendingLastEventId }
      events = yield* orUnavailable(streams.events(organizationId, cursor, { through: last }, AUDIT_STREAM_BATCH))
      if (events.length === 0) return yield* orUnavailable(streams.skipBatch(organizationId, id, deliveryId, last))
    } else {
      const horizon = yield* orUnavailable(streams.horizon(at, Duration.toMillis(config.settle)))
      events = yield* orUnavailable(streams.events(organizationId, cursor, { before: horizon }, AUDIT_STREAM_BATCH))
      const final = events.at(-1)
      if (final === undefined) return yield* orUnavailable(streams.idle(organizationId, id, new Date(at.getTime() + Duration.toMillis(config.pollInterval))))
      deliveryId = yield* makeId("asd")
      last = { occurredAt: final.occurredAt, id: final.id }
      // Another runner fixed a batch meanwhile (a lease that ran out): its delivery stands, this one stops.
      if (!(yield* orUnavailable(streams.fixBatch(organizationId, id, deliveryId, last)))) return
    }
    const result = yield* crypto.decrypt(row.secretCiphertext, bind(SecretColumns.auditStreamSecret, organizationId, id)).pipe(
      Effect.flatMap((secret) => send(row.url, secret, deliveryId, bodyOf(events))),
      Effect.catchTag("StoredCredentialUnreadable", () =>
        Effect.succeed<SendResult>({ delivered: false, status: null, error: "secret unreadable: the server's encryption keys changed; rotate the stream's secret" }))
    )
    const done = yield* now
    if (result.delivered) {
      // A full batch says more may be waiting: due again at once; otherwise at the next poll.
      const next = events.length === AUDIT_STREAM_BATCH ? done : new Date(done.getTime() + Duration.toMillis(config.pollInterval))
      yield* orUnavailable(streams.delivered(organizationId, id, deliveryId, last, done, next))
    } else {
      const wait = backoff(config, row.consecutiveFailures + 1)
      yield* orUnavailable(streams.failed(organizationId, id, deliveryId, result.error ?? "failed", done, new Date(done.getTime() + Duration.toMillis(wait))))
    }
  }).pipe(Effect.annotateLogs({ auditStreamId: row.id, organizationId: row.organizationId }))

/**
 * A database outage is told once, by platform/DatabaseStatus.ts, and the lease and the pending batch make the next
 * poll after it take up where this one stopped: nothing more to say at every poll.
 */
const quietWhileUnavailable = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(effect, (error) => error._tag === "ServiceUnavailable", () => Effect.void)

/**
 * Leases the due streams this runner has room for and starts their deliveries (not waiting for them); answers how
 * many it started, or null with no room.
 */
const tick = (inFlight: FiberSet.FiberSet<void, never>) =>
  Effect.gen(function*() {
    const streams = yield* StreamsRepository
    const config = yield* StreamConfig
    const room = MAX_IN_FLIGHT - (yield* FiberSet.size(inFlight))
    if (room <= 0) return null
    const at = yield* now
    // Longer than any attempt takes (its statements and the POST's timeout): a lease runs out only for a runner that stopped.
    const lease = new Date(at.getTime() + 2 * Duration.toMillis(config.timeout) + 30_000)
    const due = yield* orUnavailable(streams.claim(at, lease, room))
    for (const row of due) {
      yield* FiberSet.run(inFlight, deliver(row).pipe(quietWhileUnavailable, Effect.catchCause((cause) => Effect.logWarning("Audit stream delivery failed", cause))))
    }
    return due.length
  })

/**
 * The wait after a look that started `started` deliveries (null: no room): `pollInterval` when it started some or
 * had no room; else until the earliest next attempt, no less than `pollInterval` and no more than `MAX_IDLE_WAIT`.
 */
const waitAfter = (started: number | null) =>
  Effect.gen(function*() {
    const config = yield* StreamConfig
    const poll = Duration.toMillis(config.pollInterval)
    if (started !== 0) return config.pollInterval
    const longest = Math.max(poll, Duration.toMillis(MAX_IDLE_WAIT))
    const next = yield* orUnavailable((yield* StreamsRepository).nextAttempt)
    if (next === null) return Duration.millis(longest)
    const at = yield* now
    return Duration.millis(Math.min(longest, Math.max(poll, next.getTime() - at.getTime())))
  })

/**
 * The loop: a look, then a wait (`waitAfter`) cut short by a wake (audit/StreamWake.ts); a look that fails is logged
 * and the next one taken after `pollInterval`.
 */
export const loop = Effect.gen(function*() {
  const config = yield* StreamConfig
  const wake = yield* StreamWake
  const inFlight = yield* FiberSet.make<void, never>()
  const look = Effect.flatMap(tick(inFlight), waitAfter).pipe(
    Effect.catchIf((error) => error._tag === "ServiceUnavailable", () => Effect.succeed(config.pollInterval)),
    Effect.catchCause((cause) => Effect.as(Effect.logWarning("Audit streams: looking for due deliveries failed", cause), config.pollInterval))
  )
  return yield* Effect.forever(Effect.gen(function*() {
    // Taken before the look, so a wake during it (a stream made meanwhile) ends the wait that follows at once.
    yield* wake.take
    const wait = yield* look
    yield* Effect.raceFirst(Effect.sleep(wait), wake.await)
  }))
}).pipe(Effect.scoped)

export const layer = Singleton.make("audit-stream-delivery", loop)

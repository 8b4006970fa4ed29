/**
 * Safe retries of writes, as Stripe does them: a write that requires credentials and carries an `Idempotency-Key`
 * claims the key (scoped by its credential and organization), runs, and keeps its answer for 24 hours; the same
 * key with the same request answers the kept answer again. Two parts share the request's state, which the first
 * provides to the second (`CurrentRequest`):
 *
 * - `middleware`, around routing (inside the request guard, so the body is read): sees the response as sent, keeps
 *   it (or releases the key), and answers conflicts;
 * - `around`, around the handler of every operation that takes part (HttpErrors.group): after authentication,
 *   claims the key, replays a kept answer, and makes the key a party to the handler's outermost transactions
 *   (Sql.ts `TransactionParties`), so the change and the key commit together or not at all.
 *
 * The hard case is a COMMIT whose answer is lost: `transaction` then asks the key's row on another connection
 * whether it committed. When nobody can tell (the database is gone), the transactions' values stay in this
 * process's memory, and a retry that finds the key committed without an answer runs the request again with those
 * transactions answering their values instead of running; another process answers 409 `idempotency_response_lost`.
 */
import { type HttpApp, HttpApiSchema, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import {
  type Actor,
  CurrentActor,
  CurrentMember,
  CurrentWorker,
  errorResponseOf,
  IdempotencyConflict,
  IdempotencyConflictResponse,
  IdempotencyKeyReused,
  idempotencyKeyHeader,
  idempotencyKeyPattern,
  idempotentReplayedHeader,
  InvalidRequest
} from "@orgplane/schema"
import { Cause, Context, Data, Duration, Effect, Exit, Fiber, Layer, Option, Schedule, Schema, Stream } from "effect"
import * as NodeCrypto from "node:crypto"
import * as Keys from "./IdempotencyKeys.js"
import { orUnavailable, type TransactionParty, withTransactionParty } from "./Sql.js"
import * as StoredResponse from "./StoredResponse.js"
import { now } from "./Time.js"

const writes = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** A running request's hold on its key: renewed while it runs, so a key whose process died frees itself soon. */
export const leaseDuration = Duration.seconds(60)
const renewEvery = Duration.seconds(20)

/** How long to look whether a COMMIT that got no answer committed, before calling it unknown. */
const commitCheckTimeout = Duration.seconds(2)

/** Seconds a request that finds its key in use is asked to wait: requests are short. */
const inUseRetryAfterSeconds = 1

/** A transaction of a request that committed (or may have): its value, answered again when the request is resumed. */
interface Outcome {
  readonly ordinal: number
  readonly marker: string
  readonly value: unknown
}

/** What this process remembers of a key whose request ended without an answer kept. */
interface Memo {
  readonly at: number
  /** The request's lease when it could not be released (the database was unavailable): a retry here may take it. */
  readonly lease: string | undefined
  readonly outcomes: ReadonlyArray<Outcome>
}

/** Bounds the memory of keys left without an answer; past it the oldest is forgotten (its retry answers 409). */
const maxMemos = 1_000

export interface Service {
  readonly keys: Keys.IdempotencyKeys
  readonly memos: Map<string, Memo>
}

export class Idempotency extends Context.Tag("@orgplane/server/platform/Idempotency")<Idempotency, Service>() {}

export const layer = Layer.effect(Idempotency, Effect.map(Keys.make, (keys) => ({ keys, memos: new Map<string, Memo>() })))

/** One run of a request under its key. */
interface Run {
  readonly id: Keys.KeyId
  readonly lease: string
  /** Seals and opens the kept answer: derived from the credential. */
  readonly secret: Buffer
  /** True when an earlier run committed and this one finishes its work (its answer is then a replay). */
  readonly resumed: boolean
  /** The earlier run's committed transactions, by ordinal. */
  readonly earlier: ReadonlyMap<number, Outcome>
  /** This run's transactions that committed or may have. */
  readonly outcomes: Array<Outcome>
  /** False once the handler returned: transactions of work it left behind do not take part. */
  active: boolean
  /** Outermost transactions begun so far. */
  begun: number
}

interface RequestState {
  readonly service: Service
  /** The header as sent. */
  readonly key: string
  run: Run | undefined
}

/** The state of the request the middleware runs under its key, for the handler's `around`; undefined otherwise. */
class CurrentRequest extends Context.Reference<CurrentRequest>()("@orgplane/server/platform/Idempotency/CurrentRequest", {
  defaultValue: (): RequestState | undefined => undefined
}) {}

/** The transaction's key mark found another request holding the key (its lease ran out and was taken over). */
class LeaseLost extends Data.TaggedError("IdempotencyLeaseLost") {}

const sha256 = (data: string | Uint8Array) => NodeCrypto.createHash("sha256").update(data).digest("hex")

const memoKey = (id: Keys.KeyId) => `${id.scope}\n${id.key}`

/** The credential that authenticated the request, as the authentication middlewares read it. */
const credential = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const bearer = (request.headers["authorization"] ?? "").slice(7).trim()
  const worker = yield* Effect.serviceOption(CurrentWorker)
  if (Option.isSome(worker)) return { kind: "worker", token: bearer, organizationId: worker.value.organizationId }
  const member: Option.Option<Actor> = yield* Effect.serviceOption(CurrentMember)
  const caller = Option.isSome(member) ? member : yield* Effect.serviceOption(CurrentActor)
  if (Option.isNone(caller)) return undefined
  const { credential, organization } = caller.value
  const token = credential._tag === "ApiKey" ? (request.headers["x-api-key"] ?? "").trim() : bearer
  return { kind: credential._tag, token, organizationId: organization?.id ?? null }
})

/**
 * What the key was first used for: method, path and query, and the body bytes the request guard read (its stream
 * gives them exactly), as an HMAC keyed by the credential.
 */
const fingerprint = (token: string) => Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const hash = NodeCrypto.createHmac("sha256", StoredResponse.secretOf(token, "request")).update(`${request.method} ${request.url}\n`)
  yield* Effect.orDie(Stream.runForEach(request.stream, (chunk) => Effect.sync(() => hash.update(chunk))))
  return hash.digest("hex")
})

const freshMemo = (service: Service, id: Keys.KeyId, at: Date): Memo | undefined => {
  const memo = service.memos.get(memoKey(id))
  return memo !== undefined && at.getTime() - memo.at < Duration.toMillis(Keys.lifetime) ? memo : undefined
}

/** Remembers what a run committed (or may have) when its answer was not kept, and a lease it could not release. */
const remember = (service: Service, run: Run, lease: string | undefined, at: Date) => {
  const outcomes = [...run.earlier.values(), ...run.outcomes]
  const key = memoKey(run.id)
  service.memos.delete(key)
  if (outcomes.length === 0 && lease === undefined) return
  if (service.memos.size >= maxMemos) service.memos.delete(service.memos.keys().next().value!)
  service.memos.set(key, { at: at.getTime(), lease, outcomes })
}

/** The key as a party to one outermost transaction of the run (undefined once the handler returned). */
const party = (service: Service, run: Run): TransactionParty | undefined => {
  if (!run.active) return undefined
  const ordinal = run.begun++
  const earlier = run.earlier.get(ordinal)
  const marker = NodeCrypto.randomUUID()
  let wrote = false
  return {
    committedBefore: earlier === undefined ? Option.none() : Option.some(earlier.value),
    beforeCommit: () => Effect.flatMap(service.keys.mark({ ...run.id, lease: run.lease, marker }), (mark) => {
      wrote = mark.wrote
      return mark.wrote && !mark.marked ? Effect.die(new LeaseLost()) : Effect.void
    }),
    committed: service.keys.committed({ ...run.id, marker }).pipe(
      Effect.retry(Schedule.spaced("100 millis")),
      Effect.timeout(commitCheckTimeout),
      Effect.option
    ),
    // A transaction that wrote nothing needs no remembering: running it again changes nothing.
    settled: (value) => Effect.sync(() => wrote && run.outcomes.push({ ordinal, marker, value }))
  }
}

/** Extends the run's lease while the handler runs. */
const renewal = (service: Service, run: Run) =>
  Effect.forever(
    Effect.andThen(
      Effect.sleep(renewEvery),
      Effect.flatMap(now, (at) =>
        Effect.ignore(service.keys.renew({ ...run.id, lease: run.lease, until: new Date(at.getTime() + Duration.toMillis(leaseDuration)) })))
    )
  )

const invalidKey = InvalidRequest.field([idempotencyKeyHeader], "Must be 1 to 255 printable ASCII characters.")

const responseLost = new IdempotencyConflict({
  error: "idempotency_response_lost",
  message:
    "A request with this Idempotency-Key made its change, but its answer was lost before it could be kept: read the resource to see the outcome; a new attempt needs a new key."
})

/** Claims the key for this request: a run to go on with, or the answer to give instead (a replay, a conflict). */
const begin = (state: RequestState) =>
  Effect.gen(function*() {
    if (!idempotencyKeyPattern.test(state.key)) return yield* invalidKey
    const caller = yield* credential
    if (caller === undefined) return Option.none()
    const { service } = state
    const id: Keys.KeyId = { scope: sha256(`${caller.kind}\n${sha256(caller.token)}\n${caller.organizationId ?? ""}`), key: state.key }
    const secret = StoredResponse.secretOf(caller.token, "answer")
    const at = yield* now
    const memo = freshMemo(service, id, at)
    const lease = NodeCrypto.randomUUID()
    const request = yield* fingerprint(caller.token)
    const found = yield* orUnavailable(service.keys.claim({
      ...id,
      fingerprint: request,
      lease,
      at,
      leaseUntil: new Date(at.getTime() + Duration.toMillis(leaseDuration)),
      abandoned: memo?.lease ?? null
    }))
    if (Option.isNone(found)) return yield* IdempotencyConflict.inUse(inUseRetryAfterSeconds)
    const row = found.value
    if (!row.claimed) {
      if (row.fingerprint !== request) {
        return yield* new IdempotencyKeyReused({
          message: "This Idempotency-Key was used for another request (method, path, query or body) in the last 24 hours."
        })
      }
      if (row.response === null) return yield* IdempotencyConflict.inUse(inUseRetryAfterSeconds)
      const stored = StoredResponse.open(secret, memoKey(id), row.response)
      if (stored === undefined) {
        yield* Effect.logWarning("A kept idempotent answer could not be opened")
        return yield* responseLost
      }
      return Option.some(HttpServerResponse.setHeader(StoredResponse.toResponse(stored), idempotentReplayedHeader, "true"))
    }
    const committed = new Set(row.commitMarkers)
    const outcomes = memo?.outcomes.filter((outcome) => committed.has(outcome.marker)) ?? []
    if (outcomes.length < committed.size) {
      // Committed by a run whose values this process does not have: nothing can give its answer.
      yield* Effect.ignore(service.keys.release({ ...id, lease }))
      return yield* responseLost
    }
    state.run = {
      id,
      lease,
      secret,
      resumed: committed.size > 0,
      earlier: new Map(outcomes.map((outcome) => [outcome.ordinal, outcome])),
      outcomes: [],
      active: true,
      begun: 0
    }
    return Option.none()
  })

/**
 * The handler of an operation that takes an `Idempotency-Key`: with the header (and the middleware around), it runs
 * under the claimed key, or answers a replay or a conflict instead.
 */
export const around = <Request, A, E, R>(handler: (request: Request) => Effect.Effect<A, E, R>) => (request: Request) =>
  Effect.flatMap(CurrentRequest, (state): Effect.Effect<A | HttpServerResponse.HttpServerResponse, unknown, unknown> => {
    if (state === undefined) return handler(request)
    return Effect.flatMap(begin(state), (answer): Effect.Effect<A | HttpServerResponse.HttpServerResponse, unknown, unknown> => {
      if (Option.isSome(answer)) return Effect.succeed(answer.value)
      const run = state.run
      if (run === undefined) return handler(request)
      const enlist = Effect.sync(() => party(state.service, run))
      return Effect.acquireUseRelease(
        // Forked interruptible: a fiber forked while acquiring would inherit the acquisition's uninterruptibility.
        Effect.fork(Effect.interruptible(renewal(state.service, run))),
        () =>
          handler(request).pipe(
            withTransactionParty(enlist),
            Effect.catchSomeDefect((defect) =>
              defect instanceof LeaseLost ? Option.some(Effect.fail(IdempotencyConflict.inUse(inUseRetryAfterSeconds))) : Option.none()
            )
          ),
        (renewing) => Effect.andThen(Fiber.interrupt(renewing), Effect.sync(() => (run.active = false)))
      )
    })
  })

const encodeConflict = Schema.encodeSync(IdempotencyConflictResponse)

const conflictResponse = (error: IdempotencyConflict) =>
  HttpServerResponse.unsafeJson(encodeConflict(error), {
    status: 409,
    headers: error.retryAfterSeconds === undefined ? {} : { "retry-after": String(error.retryAfterSeconds) }
  })

/**
 * The answer to keep, if the operation gave one: a response below 500 (but 429: nothing was done), or one of the
 * API's errors below 500 (but 429 and the key's own conflicts), encoded as the platform would.
 */
const answerOf = (exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>): HttpServerResponse.HttpServerResponse | undefined => {
  if (Exit.isSuccess(exit)) return exit.value.status < 500 && exit.value.status !== 429 ? exit.value : undefined
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure) || failure.value instanceof IdempotencyConflict || failure.value instanceof IdempotencyKeyReused) return undefined
  const wire = errorResponseOf(failure.value)
  if (wire === undefined) return undefined
  const status = HttpApiSchema.getStatusError(wire)
  if (status >= 500 || status === 429) return undefined
  return HttpServerResponse.unsafeJson(Schema.encodeSync(wire as Schema.Schema<unknown, unknown>)(failure.value), { status })
}

/** After the run: keep its answer, or release the key so that a retry runs again. */
const finish = <E>(service: Service, run: Run, exit: Exit.Exit<HttpServerResponse.HttpServerResponse, E>) =>
  Effect.gen(function*() {
    const at = yield* now
    const answer = answerOf(exit)
    const stored = answer === undefined ? undefined : StoredResponse.capture(answer)
    if (answer !== undefined && stored !== undefined) {
      const kept = yield* service.keys.keep({
        ...run.id,
        lease: run.lease,
        status: stored.status,
        response: StoredResponse.seal(run.secret, memoKey(run.id), stored)
      }).pipe(Effect.orElseSucceed(() => false))
      if (kept) service.memos.delete(memoKey(run.id))
      else remember(service, run, run.lease, at)
      return run.resumed ? HttpServerResponse.setHeader(answer, idempotentReplayedHeader, "true") : answer
    }
    const released = yield* service.keys.release({ ...run.id, lease: run.lease }).pipe(Effect.as(true), Effect.orElseSucceed(() => false))
    remember(service, run, released ? undefined : run.lease, at)
    return yield* exit
  })

/**
 * Around routing, for writes that carry the header: gives the handler's `around` the request's state, keeps or
 * releases the key after the response (even when the request is interrupted), and answers the key's conflicts.
 */
export const middleware = (service: Service) => <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const key = request.headers[idempotencyKeyHeader]
    if (key === undefined || !writes.has(request.method)) return app
    const state: RequestState = { service, key, run: undefined }
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Effect.exit(restore(Effect.provideService(app, CurrentRequest, state))), (exit) =>
        state.run === undefined ? exit : finish(service, state.run, exit))
    ).pipe(
      Effect.catchSome((error) => error instanceof IdempotencyConflict ? Option.some(Effect.succeed(conflictResponse(error))) : Option.none())
    )
  })

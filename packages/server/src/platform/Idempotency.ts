/**
 * Safe retries of writes, as Stripe does them: a write that requires credentials and carries an `Idempotency-Key`
 * claims the key (scoped by its credential and organization), runs, and keeps its answer for 24 hours; the same
 * key with the same request answers the kept answer again. Two parts share the request's state, which the first
 * provides to the second (`CurrentRequest`):
 *
 * - `middleware`, around routing: sees the response as sent, keeps it (or releases the key);
 * - `around`, around the handler of every operation that takes part (HttpErrors.group): after authentication,
 *   claims the key, replays a kept answer, answers the key's conflicts, and makes the key a party to the handler's
 *   outermost transactions (Sql.ts `TransactionParties`), so the change and the key commit together or not at all.
 *
 * The hard case is a COMMIT whose answer is lost: `transaction` then asks the key's row on another connection
 * whether it committed. When nobody can tell (the database is gone), the transactions' values stay in this
 * process's memory, and a retry that finds the key committed without an answer runs the request again with those
 * transactions answering their values instead of running; another process answers 409 `idempotency_response_lost`.
 * A claim whose answer is lost is in doubt the same way: the database may take the key under the claim's lease (and,
 * frozen, commit it when it resumes) with no request running under it. The process remembers that lease with the
 * key, and its next claim of the key takes the lease over, so a retry here runs the write once (nothing ran under
 * the claim); another process finds the key in use until the lease runs out (`leaseDuration`).
 *
 * How it is wired:
 * - `middleware(service)` runs between the request guard and routing (HttpErrors.layerFor's `inner`, in the
 *   server's request edge); `middlewareLayer` is it as a global router middleware of its own, needing the
 *   `Idempotency` service. It must run outside the HttpApi (it keeps the response the platform encoded) and around
 *   the route's handler (it provides the state `around` reads). The HttpApi encodes an operation's declared errors
 *   inside it, so what the middleware sees is a response (a declared 4xx is kept like a success below 500). A
 *   request the guard refuses never reaches `around`, so no key is claimed.
 * - `around(handler)` wraps the handler of each operation that takes a key (`idempotentOperations(Api).ids`: writes
 *   that require credentials), around the audit recorder's and the authority's wrappers (HttpErrors.group). Without
 *   the middleware (no state) it runs the handler as it is. Only those operations: on any operation it wraps, a
 *   header that is not a key is refused (400) before the caller is known, and an anonymous call runs without the key.
 * - The key's 409s (with `Retry-After`) are answered by `around` itself as that response: the middleware cannot see
 *   the error (the HttpApi encodes it first, without the header). 422 `idempotency_key_reused` and the header's 400
 *   are failures of `around`, encoded by the platform as the `ApiErrors` middleware declares them.
 * - The body is read for the request's fingerprint from the request's cached bytes (`arrayBuffer`, which the payload
 *   decoder read already).
 */
import {
  type Actor,
  CurrentActor,
  CurrentMember,
  CurrentWorker,
  IdempotencyConflict,
  IdempotencyConflictResponse,
  IdempotencyKeyReused,
  idempotencyKeyHeader,
  idempotencyKeyPattern,
  idempotentReplayedHeader,
  InvalidRequest,
  type ServiceUnavailable
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Types from "effect/Types"
import * as Schema from "effect/Schema"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as NodeCrypto from "node:crypto"
import * as DatabaseWait from "./DatabaseWait.js"
import * as Keys from "./IdempotencyKeys.js"
import { orUnavailable, type TransactionParty, withTransactionParty } from "./Sql.js"
import * as StoredResponse from "./StoredResponse.js"
import { now } from "./Time.js"

const writes = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** A running request's hold on its key: renewed while it runs, so a key whose process died frees itself soon. */
export const leaseDuration = Duration.seconds(60)
const renewEvery = Duration.seconds(20)

/**
 * How long to look whether a COMMIT that got no answer committed, before calling it unknown (2 seconds): read once,
 * when the service is built (the tests that lose COMMITs on purpose look for less).
 */
export const CommitCheckTimeout = Context.Reference<Duration.Duration>("@orgplane/server/platform/Idempotency/CommitCheckTimeout", {
  defaultValue: () => Duration.seconds(2)
})

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
  /**
   * Leases of this process that the key's row may hold with no request running under them: a request's lease it
   * could not release (the database was unavailable), and the leases of claims that got no answer (the database may
   * have taken them, and commit them late, when it resumes). A retry here may take any of them over.
   */
  readonly leases: ReadonlyArray<string>
  readonly outcomes: ReadonlyArray<Outcome>
}

/** Bounds the leases a memo keeps (an outage of many retries); the oldest are left to run out. */
const maxLeases = 16

/** Bounds the memory of keys left without an answer; past it the oldest is forgotten (its retry answers 409). */
const maxMemos = 1_000

export interface Service {
  readonly keys: Keys.IdempotencyKeys
  readonly memos: Map<string, Memo>
  readonly commitCheckTimeout: Duration.Duration
}

const make = Effect.gen(function*() {
  const keys = yield* Keys.make
  const commitCheckTimeout = yield* CommitCheckTimeout
  return { keys, memos: new Map<string, Memo>(), commitCheckTimeout } satisfies Service
})

export class Idempotency extends Context.Service<Idempotency, Service>()("@orgplane/server/platform/Idempotency/Idempotency") {
  static readonly layer = Layer.effect(this, make)
}

export const layer = Idempotency.layer

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
  /**
   * True when the run lost its lease to another request (`LeaseLost`): its answer, the 409 `around` gave, is the
   * key's conflict and not the operation's, so it is not kept.
   */
  leaseLost: boolean
}

interface RequestState {
  readonly service: Service
  /** The header as sent. */
  readonly key: string
  run: Run | undefined
}

/** The state of the request the middleware runs under its key, for the handler's `around`; undefined otherwise. */
const CurrentRequest = Context.Reference<RequestState | undefined>("@orgplane/server/platform/Idempotency/CurrentRequest", {
  defaultValue: () => undefined
})

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
 * What the key was first used for: method, path and query, and the body bytes (the request's cached bytes, which
 * the payload decoder read, give them exactly), as an HMAC keyed by the credential.
 */
const fingerprint = (token: string) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const hash = NodeCrypto.createHmac("sha256", StoredResponse.secretOf(token, "request")).update(`${request.method} ${request.url}\n`)
    const body = yield* Effect.orDie(request.arrayBuffer)
    return hash.update(new Uint8Array(body)).digest("hex")
  })

const freshMemo = (service: Service, id: Keys.KeyId, at: Date): Memo | undefined => {
  const memo = service.memos.get(memoKey(id))
  return memo !== undefined && at.getTime() - memo.at < Duration.toMillis(Keys.lifetime) ? memo : undefined
}

/** Replaces the key's memo (none when there is nothing to remember), forgetting the oldest key past `maxMemos`. */
const store = (service: Service, id: Keys.KeyId, memo: Memo) => {
  const key = memoKey(id)
  service.memos.delete(key)
  if (memo.outcomes.length === 0 && memo.leases.length === 0) return
  if (service.memos.size >= maxMemos) {
    const oldest = service.memos.keys().next()
    if (oldest.done !== true) service.memos.delete(oldest.value)
  }
  service.memos.set(key, memo)
}

/** Remembers what a run committed (or may have) when its answer was not kept, and a lease it could not release. */
const remember = (service: Service, run: Run, lease: string | undefined, at: Date) =>
  store(service, run.id, {
    at: at.getTime(),
    leases: lease === undefined ? [] : [lease],
    outcomes: [...run.earlier.values(), ...run.outcomes]
  })

/**
 * Remembers the lease of a claim that got no answer (the database unavailable, or the request gone): the database
 * may have taken the key under it, and commit that when it resumes, with no request running under it. The key's
 * memo as it is now keeps its leases and outcomes: the claim may as well not have happened.
 */
const claimInDoubt = (service: Service, id: Keys.KeyId, lease: string, at: Date) => {
  const memo = freshMemo(service, id, at)
  store(service, id, {
    at: at.getTime(),
    leases: [...(memo?.leases ?? []), lease].slice(-maxLeases),
    outcomes: memo?.outcomes ?? []
  })
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
    beforeCommit: () =>
      Effect.flatMap(service.keys.mark({ ...run.id, lease: run.lease, marker }), (mark) => {
        wrote = mark.wrote
        return mark.wrote && !mark.marked ? Effect.die(new LeaseLost()) : Effect.void
      }),
    // Looks again until it can tell, for `commitCheckTimeout`, unless the request already waited its whole bound.
    committed: Effect.withFiber((fiber) => {
      const wait = fiber.getRef(DatabaseWait.CurrentWait)
      return service.keys.committed({ ...run.id, marker }).pipe(
        Effect.retry({ schedule: Schedule.spaced("100 millis"), while: () => !DatabaseWait.exhausted(wait) }),
        Effect.timeout(service.commitCheckTimeout),
        Effect.option
      )
    }),
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
    if (caller === undefined) return Option.none<HttpServerResponse.HttpServerResponse>()
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
      abandoned: memo?.leases ?? []
    })).pipe(Effect.onError(() => Effect.sync(() => claimInDoubt(service, id, lease, at))))
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
      begun: 0,
      leaseLost: false
    }
    return Option.none<HttpServerResponse.HttpServerResponse>()
  })

const encodeConflict = Schema.encodeSync(IdempotencyConflictResponse)

/** The key's 409, with `Retry-After` when the key is in use. */
const conflictResponse = (error: IdempotencyConflict) =>
  HttpServerResponse.jsonUnsafe(encodeConflict(error), {
    status: 409,
    headers: error.retryAfterSeconds === undefined ? {} : { "retry-after": String(error.retryAfterSeconds) }
  })

/** What `around` may fail with besides the handler's failures. */
export type Refusal = InvalidRequest | IdempotencyKeyReused | ServiceUnavailable

/**
 * The handler of an operation that takes an `Idempotency-Key`: with the header (and the middleware around), it runs
 * under the claimed key, or answers a replay or a conflict (409, see the module comment) instead.
 */
export const around = <Request, A, E, R>(handler: (request: Request) => Effect.Effect<A, E, R>) =>
(request: Request): Effect.Effect<A | HttpServerResponse.HttpServerResponse, E | Refusal, R | HttpServerRequest.HttpServerRequest> =>
  CurrentRequest.use((state) => {
    if (state === undefined) return handler(request)
    const run = (answer: Option.Option<HttpServerResponse.HttpServerResponse>) => {
      if (Option.isSome(answer)) return Effect.succeed(answer.value)
      const run = state.run
      if (run === undefined) return handler(request)
      const enlist = Effect.sync(() => party(state.service, run))
      return Effect.acquireUseRelease(
        // Forked interruptible: a fiber forked while acquiring would inherit the acquisition's uninterruptibility.
        Effect.forkChild(Effect.interruptible(renewal(state.service, run))),
        () =>
          handler(request).pipe(
            withTransactionParty(enlist),
            Effect.catchDefect((defect) => {
              if (!(defect instanceof LeaseLost)) return Effect.die(defect)
              run.leaseLost = true
              return Effect.succeed(conflictResponse(IdempotencyConflict.inUse(inUseRetryAfterSeconds)))
            })
          ),
        (renewing) => Effect.andThen(Fiber.interrupt(renewing), Effect.sync(() => (run.active = false)))
      )
    }
    return begin(state).pipe(
      Effect.catchIf(
        (error): error is IdempotencyConflict => error instanceof IdempotencyConflict,
        (conflict) => Effect.succeed(Option.some(conflictResponse(conflict)))
      ),
      Effect.flatMap(run)
    )
  })

/**
 * The answer to keep, if the operation gave one: a response below 500 (but 429: nothing was done). The operation's
 * declared errors reach the middleware as the responses the HttpApi encoded (the key's own conflicts too: `leaseLost`
 * leaves that one out), so a 4xx of the API is kept like a success; a failure that still reaches it (an
 * interruption, a defect no middleware answered) is not kept.
 */
const answerOf = (exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>): HttpServerResponse.HttpServerResponse | undefined =>
  Exit.isSuccess(exit) && exit.value.status < 500 && exit.value.status !== 429 ? exit.value : undefined

/** After the run: keep its answer, or release the key so that a retry runs again. */
const finish = <E>(service: Service, run: Run, exit: Exit.Exit<HttpServerResponse.HttpServerResponse, E>) =>
  Effect.gen(function*() {
    const at = yield* now
    const answer = run.leaseLost ? undefined : answerOf(exit)
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
 * Around routing, for writes that carry the header: gives the handler's `around` the request's state, and keeps or
 * releases the key after the response (even when the request is interrupted). The router's global middleware (see
 * the module comment).
 */
export const middleware = (service: Service) =>
<E, R>(
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  HttpServerRequest.HttpServerRequest.use((request) => {
    const key = request.headers[idempotencyKeyHeader]
    if (key === undefined || !writes.has(request.method)) return httpEffect
    const state: RequestState = { service, key, run: undefined }
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Effect.exit(restore(Effect.provideService(httpEffect, CurrentRequest, state))), (exit) =>
        state.run === undefined ? exit : finish(service, state.run, exit))
    )
  })

/** `middleware` as the router's global middleware, with the `Idempotency` service of the context. */
export const middlewareLayer = HttpRouter.middleware(
  Effect.map(Effect.service(Idempotency), (service) => {
    const apply = middleware(service)
    return (httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>) => apply(httpEffect)
  }),
  { global: true }
)

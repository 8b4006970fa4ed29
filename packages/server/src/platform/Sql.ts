/**
 * The storage boundary. Repositories fail with `SqlError`, typed; services end every unit of work in
 * `transaction` (writes, and reads that must see one state) or `orUnavailable` (plain reads), which turn what is
 * left of `SqlError` into the API's answer: the database is unavailable (503 `service_unavailable`), or a bug
 * (a defect: 500, logged). A transaction that loses a serialization conflict or a deadlock runs again.
 */
import { ServiceUnavailable } from "@orgplane/schema"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlErrors from "effect/sql/SqlError"
import { reportAvailable, reportUnavailable } from "./DatabaseStatus.js"

type SqlError = SqlErrors.SqlError

/**
 * The Postgres error code behind a SqlError, if any (for example `23505`, a unique violation). The SqlError
 * carries a classified `reason` whose `cause` is the server's error, its SQLSTATE as `code`.
 */
export const pgCode = (error: SqlError): string | undefined => {
  const code: unknown = typeof error.reason.cause === "object" && error.reason.cause !== null
    ? Reflect.get(error.reason.cause, "code")
    : undefined
  return typeof code === "string" ? code : undefined
}

export const isSqlError = (error: unknown): error is SqlError => SqlErrors.isSqlError(error)

/** Turns a unique violation into `onConflict`; every other storage failure stays a SqlError. */
export const catchUniqueViolation = <E>(onConflict: () => E) =>
<A, E1, R>(effect: Effect.Effect<A, E1 | SqlError, R>): Effect.Effect<A, E1 | SqlError | E, R> =>
  Effect.catchIf(
    effect,
    (error): error is SqlError => isSqlError(error) && pgCode(error) === "23505",
    () => Effect.fail(onConflict())
  )

export const first = <A>(rows: ReadonlyArray<A>): Option.Option<A> => Option.fromNullishOr(rows[0])

/**
 * Serializes, until the transaction ends, the transactions that take the lock named `limit` for one `scope`, what the
 * limit counts within: an organization ("at most 50 SSO connections"), a person (organizations owned), or the
 * instance (a closed instance's first account). A limit checked by counting rows and then inserting one holds only if
 * nobody inserts between another's count and its insert, which READ COMMITTED does not prevent (two transactions
 * each count 49 and both insert). A transaction-scoped advisory lock: it locks no row, so nothing but the same
 * limit's transactions waits on it. Take it first in the transaction, before the count, in every transaction that
 * adds to the limit.
 */
export const lockLimit = Effect.fn("Sql.lockLimit")(function*(limit: string, scope: string) {
  const sql = yield* SqlClient.SqlClient
  yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${limit}:${scope}`}, 0))`
})

/**
 * What a storage failure means:
 * - `concurrency`: a serialization failure or deadlock; running the whole transaction again may succeed;
 * - `unavailable`: the database cannot be reached or does not answer in time; the request may succeed later;
 * - `bug`: anything else (bad SQL, a constraint the code should have handled): retrying cannot help.
 */
export type Verdict = "concurrency" | "unavailable" | "bug"

const concurrencyCodes = new Set(["40001", "40P01"])
/** 57014 is a statement timeout (or a cancel); 57P01-03 are shutdowns and a server not yet accepting connections. */
const unavailableCodes = new Set(["57014", "57P01", "57P02", "57P03"])
/** Class 08: connection exception; class 53: insufficient resources (too many connections, out of memory, disk full). */
const unavailableClasses = new Set(["08", "53"])
/** Socket failures, as Node reports them (ENOENT: the embedded database's socket is gone). */
const socketCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EADDRNOTAVAIL",
  "ENOENT"
])

const SQLSTATE = /^[0-9A-Z]{5}$/

/**
 * Classifies a storage failure (see `Verdict`). The driver classifies it already (`error.reason`): a
 * `ConnectionError` is a connection that could not be made or was lost (the driver's timeouts included), a
 * `StatementTimeoutError` the server's statement timeout (57014), `SerializationError` and `DeadlockError` the two
 * conflicts. Every other reason is read by its SQLSTATE (shutdowns, class 53) or its socket error code.
 */
export const classify = (error: SqlError): Verdict => {
  const reason = error.reason
  switch (reason._tag) {
    case "ConnectionError":
    case "StatementTimeoutError":
      return "unavailable"
    case "SerializationError":
    case "DeadlockError":
      return "concurrency"
  }
  let current: unknown = reason.cause
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code: unknown = Reflect.get(current, "code")
    if (typeof code === "string") {
      if (SQLSTATE.test(code)) {
        if (concurrencyCodes.has(code)) return "concurrency"
        // A SQLSTATE is the server's verdict on this statement: it answered, so it is available.
        return unavailableCodes.has(code) || unavailableClasses.has(code.slice(0, 2)) ? "unavailable" : "bug"
      }
      if (socketCodes.has(code)) return "unavailable"
    }
    current = Reflect.get(current, "cause")
  }
  return "bug"
}

export const unavailableMessage = "The database is not available right now; retry later."
export const concurrencyMessage = "The database could not complete this change because of concurrent changes; retry."

/** Attempts of a transaction in all, counting the first. */
export const transactionAttempts = 4

/**
 * Waits between attempts: about 20, 40, 80 ms (each ±20%, from Effect's `Random`, so that transactions that
 * collided do not collide again in step), on Effect's `Clock`.
 */
export const retryPolicy = Schedule.max([
  Schedule.jittered(Schedule.exponential("20 millis", 2)),
  Schedule.recurs(transactionAttempts - 1)
])

/** The SqlError a cause carries: a failure, or a defect (repositories that still `orDie`, a failed COMMIT). */
const sqlErrorOf = (cause: Cause.Cause<unknown>): SqlError | undefined => {
  for (const reason of cause.reasons) {
    if (reason._tag === "Fail" && isSqlError(reason.error)) return reason.error
  }
  for (const reason of cause.reasons) {
    if (reason._tag === "Die" && isSqlError(reason.defect)) return reason.defect
  }
  return undefined
}

const isConcurrencyFailure = (cause: Cause.Cause<unknown>) => {
  const error = sqlErrorOf(cause)
  return error !== undefined && classify(error) === "concurrency"
}

/** Whether the cause's first failure (not a defect) is a SqlError. */
const failsWithSqlError = (cause: Cause.Cause<unknown>) => Option.exists(Cause.findErrorOption(cause), isSqlError)

/**
 * Turns what is left of SqlError into ServiceUnavailable or a defect. Inside an enclosing transaction a conflict
 * stays a defect carrying the SqlError, so that the outermost transaction sees it and runs again.
 */
const settle = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  enclosed: boolean
): Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, R> =>
  Effect.matchCauseEffect(effect, {
    onSuccess: (value) => Effect.as(reportAvailable, value),
    onFailure: (cause): Effect.Effect<never, Exclude<E, SqlError> | ServiceUnavailable> => {
      const error = sqlErrorOf(cause)
      if (error === undefined) return Effect.failCause(cause as Cause.Cause<Exclude<E, SqlError>>)
      const verdict = classify(error)
      if (verdict === "unavailable") {
        return Effect.andThen(reportUnavailable(error), Effect.fail(new ServiceUnavailable({ message: unavailableMessage })))
      }
      if (verdict === "concurrency" && !enclosed) {
        return Effect.andThen(
          Effect.logWarning(`Gave up on a transaction after ${transactionAttempts} attempts`, error.message),
          Effect.fail(new ServiceUnavailable({ message: concurrencyMessage }))
        )
      }
      // A bug, or a conflict for the enclosing transaction: keep the cause as it is, the SqlError as a defect.
      return failsWithSqlError(cause) ? Effect.die(error) : Effect.failCause(cause as Cause.Cause<Exclude<E, SqlError>>)
    }
  })

/**
 * Whether the effect runs inside a transaction of the SqlClient in its context. Each client keeps its open
 * transaction under a service of its own (`sql.transactionService`); without a client there is no transaction.
 */
const enclosingTransaction: Effect.Effect<boolean> = Effect.flatMap(
  Effect.serviceOption(SqlClient.SqlClient),
  (sql) => Option.isNone(sql) ? Effect.succeed(false) : Effect.map(Effect.serviceOption(sql.value.transactionService), Option.isSome)
)

/** Ends a unit of work that runs outside a transaction (plain reads): see the module comment. */
export const orUnavailable = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, R> =>
  Effect.flatMap(enclosingTransaction, (enclosed) => settle(effect, enclosed))

/**
 * A party to a request's outermost transactions: the request's idempotency key (Idempotency.ts), its audit event
 * (AuditRecorder.ts), which commit with the change or not at all, and the caller's authority (Authority.ts), read
 * again at commit under the locks that would end it. Services know nothing of them: `transaction` reads the
 * `TransactionParties` provided around the handler.
 */
export interface TransactionParty {
  /** The value this transaction committed in an earlier run of the same request: answered without running it again. */
  readonly committedBefore: Option.Option<unknown>
  /**
   * Wraps each attempt of the transaction, `beforeCommit` included (the body runs again after a serialization
   * failure), if given; called as each attempt starts. A party that keeps something for one attempt provides it here
   * as a service of the attempt, rather than setting it on the fiber, which Effect cannot do (Authority.ts: what
   * the attempt changed of its caller's own authority).
   */
  readonly around?: (<A, E, R>(attempt: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) | undefined
  /** Runs last inside the transaction, on its connection, given its value: a failure rolls the whole transaction back. */
  readonly beforeCommit: (value: unknown) => Effect.Effect<void, SqlError>
  /** Asked on another connection after the COMMIT got no answer: whether it committed after all (None: cannot tell). */
  readonly committed: Effect.Effect<Option.Option<boolean>>
  /** What became of the transaction: its value, committed (`true`) or perhaps (`"unknown"`: nobody could tell). */
  readonly settled: (value: unknown, committed: true | "unknown") => Effect.Effect<void>
}

/** Enlists each outermost transaction of the effect with parties (each may decline: undefined), in this order. */
const TransactionParties = Context.Reference<ReadonlyArray<Effect.Effect<TransactionParty | undefined>>>(
  "@orgplane/server/platform/Sql/TransactionParties",
  { defaultValue: () => [] }
)

/** Adds a party to the outermost transactions `effect` runs, after those already enlisted. */
export const withTransactionParty = (enlist: Effect.Effect<TransactionParty | undefined>) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  TransactionParties.use((parties) => Effect.provideService(effect, TransactionParties, [...parties, enlist]))

/** The parties' `around`s as one, the first party's outermost. */
const aroundAll = (parties: ReadonlyArray<TransactionParty>): TransactionParty["around"] => {
  const arounds = parties.flatMap((party) => (party.around === undefined ? [] : [party.around]))
  return arounds.length === 0
    ? undefined
    : arounds.length === 1
    ? arounds[0]
    : <A, E, R>(attempt: Effect.Effect<A, E, R>) => arounds.reduceRight((wrapped, around) => around(wrapped), attempt)
}

/**
 * Several parties as one: a value committed before by any of them answers the transaction; each takes its part
 * before COMMIT and hears how it settled, in order; whether a lost COMMIT happened is the first answer any can give.
 */
const together = (parties: ReadonlyArray<TransactionParty>): TransactionParty =>
  parties.length === 1 ? parties[0]! : {
    committedBefore: Option.firstSomeOf(parties.map((party) => party.committedBefore)),
    around: aroundAll(parties),
    beforeCommit: (value) => Effect.forEach(parties, (party) => party.beforeCommit(value), { discard: true }),
    committed: Effect.reduce(parties, () => Option.none<boolean>(), (known, party) => Option.isSome(known) ? Effect.succeed(known) : party.committed),
    settled: (value, committed) => Effect.forEach(parties, (party) => party.settled(value, committed), { discard: true })
  }

/**
 * The outermost transaction's body, run again after a serialization failure or deadlock. The first attempt runs
 * alone: the retry policy's schedule is set up only when it failed so, with that failure as its first (nearly every
 * write commits at once, and setting up the schedule for each cost about 3 KB a write).
 */
const retried = <A, E, R>(sql: SqlClient.SqlClient, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> => {
  const attempt = Effect.sandbox(sql.withTransaction(effect))
  return Effect.catch(attempt, (cause) => {
    if (!isConcurrencyFailure(cause)) return Effect.failCause(cause)
    let first = true
    const again = Effect.suspend(() => {
      if (!first) return attempt
      first = false
      return Effect.fail(cause)
    })
    return Effect.catch(Effect.retry(again, { schedule: retryPolicy, while: isConcurrencyFailure }), Effect.failCause)
  })
}

/**
 * The outermost transaction with a party. When its COMMIT fails for want of the database after the body and the
 * party's part ran, the change may have committed all the same (the answer to COMMIT was lost): the party looks,
 * and a transaction that did commit succeeds with its value.
 */
const withParty = <A, E, R>(sql: SqlClient.SqlClient, effect: Effect.Effect<A, E, R>, party: TransactionParty) =>
  Effect.suspend((): Effect.Effect<A, E | SqlError, R> => {
    if (Option.isSome(party.committedBefore)) return Effect.succeed(party.committedBefore.value as A)
    let ran: Option.Option<A> = Option.none()
    const body = Effect.suspend(() => {
      ran = Option.none()
      const attempt = Effect.tap(effect, (value) => Effect.map(party.beforeCommit(value), () => (ran = Option.some(value))))
      return party.around === undefined ? attempt : party.around(attempt)
    })
    return Effect.matchCauseEffect(retried(sql, body), {
      onSuccess: (value) => Effect.as(party.settled(value, true), value),
      onFailure: (cause) => {
        const error = sqlErrorOf(cause)
        if (Option.isNone(ran) || error === undefined || classify(error) !== "unavailable") return Effect.failCause(cause)
        const value = ran.value
        return Effect.flatMap(party.committed, (committed) =>
          Option.isNone(committed)
            ? Effect.andThen(party.settled(value, "unknown"), Effect.failCause(cause))
            : committed.value
            ? Effect.as(party.settled(value, true), value)
            : Effect.failCause(cause))
      }
    })
  })

/**
 * Runs `effect` in one transaction, then settles what is left of SqlError. A serialization failure or deadlock
 * runs the whole of `effect` again (up to `transactionAttempts` in all, see `retryPolicy`), so `effect` must not
 * do anything outside the database that cannot be repeated. Nested in another transaction it is a savepoint and
 * never retries on its own: only the outermost transaction can start over. The outermost transaction of a request
 * with an `Idempotency-Key` also commits the key (see `TransactionParty`).
 */
export const transaction = Effect.fn("Sql.transaction")(function*<A, E, R>(effect: Effect.Effect<A, E, R>) {
  const sql = yield* SqlClient.SqlClient
  if (yield* Effect.serviceOption(sql.transactionService).pipe(Effect.map(Option.isSome))) {
    return yield* settle(sql.withTransaction(effect), true)
  }
  const enlisters = yield* TransactionParties
  if (enlisters.length === 0) return yield* settle(retried(sql, effect), false)
  const parties = (yield* Effect.all(enlisters)).filter((party) => party !== undefined)
  return yield* settle(parties.length === 0 ? retried(sql, effect) : withParty(sql, effect, together(parties)), false)
})

/** What `transactionThen`'s body asks to run once it has committed; undefined outside one. */
const HeldUntilCommit = Context.Reference<Array<Effect.Effect<void>> | undefined>("@orgplane/server/platform/Sql/HeldUntilCommit", {
  defaultValue: () => undefined
})

/**
 * Runs `effect` (something outside the database: a mail leaving) now, or, inside `transactionThen`, once that
 * transaction has committed. A service calls it after its own transaction; when that transaction is one change of
 * a larger one (an organization document's apply), the whole must commit first.
 */
export const afterCommit = (effect: Effect.Effect<void>): Effect.Effect<void> =>
  HeldUntilCommit.use((held) => (held === undefined ? effect : Effect.sync(() => void held.push(effect))))

/**
 * `transaction`, holding what its body asks to run `afterCommit` until the transaction has committed, then running
 * it in order. An attempt that ran again after a conflict holds only its own; a rolled-back one's runs never.
 */
export const transactionThen = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    let held: Array<Effect.Effect<void>> = []
    const attempt = Effect.suspend(() => {
      held = []
      return Effect.provideService(effect, HeldUntilCommit, held)
    })
    return Effect.tap(transaction(attempt), () => Effect.forEach(held, (run) => run, { discard: true }))
  })

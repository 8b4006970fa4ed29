/**
 * platform/Sql.ts's units of work on a real database (the embedded one, or Postgres with DATABASE_URL), beside
 * http/Resilience.test.ts's transaction cases through the server: retries of serialization failures and deadlocks, the
 * outermost transaction's retry, what a bug and a give-up settle into; `orUnavailable`, `catchUniqueViolation`,
 * `first`, `lockLimit`, and the transaction parties.
 */
import { describe, expect, layer } from "@effect/vitest"
import { ServiceUnavailable } from "@orgplane/schema"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlErrors from "effect/sql/SqlError"
import {
  catchUniqueViolation,
  classify,
  concurrencyMessage,
  first,
  lockLimit,
  orUnavailable,
  retryPolicy,
  transaction,
  transactionAttempts,
  type TransactionParty,
  unavailableMessage,
  withTransactionParty
} from "../src/platform/Sql.js"
import * as TestDatabase from "./support/TestDatabase.js"

/** A real error of the given SQLSTATE, raised by the database itself. */
const raiseOn = (sql: SqlClient.SqlClient, code: string) =>
  sql.unsafe(`DO $$ BEGIN RAISE EXCEPTION 'raised %', '${code}' USING ERRCODE = '${code}'; END $$`)
const raise = (code: string) => SqlClient.SqlClient.use((sql) => raiseOn(sql, code))

/** The SqlError a failed or died effect carries. */
const sqlErrorOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) throw new Error("expected a failure")
    for (const reason of exit.cause.reasons) {
      const error = reason._tag === "Fail" ? reason.error : reason._tag === "Die" ? reason.defect : undefined
      if (SqlErrors.isSqlError(error)) return error
    }
    throw new Error(`expected a SqlError, got ${Cause.pretty(exit.cause)}`)
  })

/** The typed failure an exit ended with, if any (an exit compared whole would compare its stack annotations too). */
const failureOf = <A, E>(exit: Exit.Exit<A, E>): Option.Option<E> =>
  Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : Option.none()

const database = Layer.unwrap(TestDatabase.layer())

layer(database, { timeout: 60_000, excludeTestServices: true })(`transactions on ${TestDatabase.kind}`, (it) => {
  it.effect("retry a serialization failure (40001): two failures, then success on the third attempt", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      let attempts = 0
      const result = yield* transaction(
        Effect.suspend(() => ++attempts <= 2 ? raise("40001") : sql<{ n: number }>`SELECT 1 AS n`)
      )
      expect(result).toEqual([{ n: 1 }])
      expect(attempts).toBe(3)
    }))

  it.effect("give up on a deadlock (40P01) after the bounded attempts with ServiceUnavailable", () =>
    Effect.gen(function*() {
      let attempts = 0
      const error = yield* Effect.flip(transaction(Effect.suspend(() => (attempts++, raise("40P01")))))
      expect(error).toBeInstanceOf(ServiceUnavailable)
      expect(error.message).toBe(concurrencyMessage)
      expect(attempts).toBe(transactionAttempts)
    }))

  it.effect("retry a conflict that a repository turned into a defect (Effect.orDie)", () =>
    Effect.gen(function*() {
      let attempts = 0
      yield* transaction(Effect.suspend(() => ++attempts === 1 ? Effect.orDie(raise("40P01")) : Effect.void))
      expect(attempts).toBe(2)
    }))

  it.effect("do not retry a bug: a syntax error is a defect after one attempt", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      let attempts = 0
      const exit = yield* Effect.exit(transaction(Effect.suspend(() => (attempts++, sql`SELEC 1`))))
      expect(attempts).toBe(1)
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause) && !Cause.hasFails(exit.cause)).toBe(true)
    }))

  it.effect("keep a failure of the service's own as it is, and roll the transaction back", () =>
    Effect.gen(function*() {
      class Refused extends Data.TaggedError("Refused")<{}> {}
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE test_rolled_back (id int PRIMARY KEY)`
      const error = yield* Effect.flip(transaction(Effect.andThen(sql`INSERT INTO test_rolled_back VALUES (1)`, Effect.fail(new Refused()))))
      expect(error).toBeInstanceOf(Refused)
      expect(yield* sql`SELECT id FROM test_rolled_back`).toEqual([])
    }))

  it.effect("leave the retry to the outermost: a nested transaction does not start over on its own", () =>
    Effect.gen(function*() {
      let outer = 0
      let nested = 0
      yield* transaction(
        Effect.gen(function*() {
          outer++
          yield* transaction(Effect.suspend(() => ++nested === 1 ? raise("40001") : Effect.void))
        })
      )
      // Retrying by itself, the savepoint would have run twice inside one outer attempt.
      expect({ outer, nested }).toEqual({ outer: 2, nested: 2 })
    }))

  it.effect("a nested transaction is a savepoint: its rollback keeps the enclosing transaction's writes", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE test_savepoint (id int PRIMARY KEY)`
      yield* transaction(Effect.gen(function*() {
        yield* sql`INSERT INTO test_savepoint VALUES (1)`
        yield* Effect.ignore(transaction(Effect.andThen(sql`INSERT INTO test_savepoint VALUES (2)`, Effect.fail("undo"))))
      }))
      expect(yield* sql`SELECT id FROM test_savepoint`).toEqual([{ id: 1 }])
    }))

  it.effect("a conflict in a read inside a transaction restarts the transaction too", () =>
    Effect.gen(function*() {
      let attempts = 0
      yield* transaction(orUnavailable(Effect.suspend(() => ++attempts === 1 ? raise("40001") : Effect.void)))
      expect(attempts).toBe(2)
    }))

  it.effect("orUnavailable alone: an unavailable database is ServiceUnavailable, a conflict is not retried", () =>
    Effect.gen(function*() {
      const down = yield* Effect.flip(orUnavailable(raise("57P01")))
      expect(down).toEqual(new ServiceUnavailable({ message: unavailableMessage }))
      let attempts = 0
      const conflict = yield* Effect.flip(orUnavailable(Effect.suspend(() => (attempts++, raise("40001")))))
      expect(conflict).toEqual(new ServiceUnavailable({ message: concurrencyMessage }))
      expect(attempts).toBe(1)
    }))

  it.effect("wait 20, 40, 80 ms between attempts, each ±20%, then stop", () =>
    Effect.gen(function*() {
      const step = yield* Schedule.toStep(retryPolicy)
      const millis: Array<number> = []
      for (let attempt = 0; attempt < transactionAttempts; attempt++) {
        const next = yield* Effect.exit(step(0, undefined))
        if (Exit.isFailure(next)) break
        millis.push(Duration.toMillis(next.value[1]))
      }
      expect(millis).toHaveLength(transactionAttempts - 1)
      millis.forEach((delay, i) => {
        expect(delay).toBeGreaterThanOrEqual(20 * 2 ** i * 0.8)
        expect(delay).toBeLessThanOrEqual(20 * 2 ** i * 1.2)
      })
    }).pipe(Random.withSeed(42)))

  it.effect("catchUniqueViolation turns a unique violation into the conflict, and leaves other failures", () =>
    Effect.gen(function*() {
      class Taken extends Data.TaggedError("Taken")<{}> {}
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE test_unique (id int PRIMARY KEY)`
      const insert = sql`INSERT INTO test_unique VALUES (1)`.pipe(catchUniqueViolation(() => new Taken()))
      yield* insert
      expect(yield* Effect.flip(insert)).toBeInstanceOf(Taken)
      const other = yield* Effect.flip(sql`SELEC 1`.pipe(catchUniqueViolation(() => new Taken())))
      expect(SqlErrors.isSqlError(other)).toBe(true)
      // In a transaction, the conflict is the service's answer and rolls back.
      expect(yield* Effect.flip(transaction(insert))).toBeInstanceOf(Taken)
    }))

  it.effect("first: the first row, if any", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      expect(first(yield* sql<{ n: number }>`SELECT 1 AS n UNION ALL SELECT 2`)).toEqual(Option.some({ n: 1 }))
      expect(first(yield* sql<{ n: number }>`SELECT 1 AS n WHERE false`)).toEqual(Option.none())
    }))

  it.effect("lockLimit takes a transaction-scoped advisory lock, released at COMMIT", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // pg_locks lists the locks of every database of the server: this test's database's only (other test files'
      // cluster runners hold advisory shard locks in theirs meanwhile).
      const advisory = (granted: boolean) =>
        sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())${granted ? sql` AND granted` : sql``}`
      const held = yield* transaction(Effect.andThen(lockLimit("test_limit", "scope-1"), advisory(true)))
      expect(held).toEqual([{ n: 1 }])
      expect(yield* advisory(false)).toEqual([{ n: 0 }])
    }))
})

/** A party that records what it is told. */
const recordingParty = (options: {
  readonly committedBefore?: Option.Option<unknown>
  readonly committed?: Option.Option<boolean>
  readonly beforeCommit?: (value: unknown) => Effect.Effect<void, SqlErrors.SqlError>
  readonly label?: string
  readonly events?: Array<string>
} = {}) => {
  const events: Array<string> = options.events ?? []
  const party: TransactionParty = {
    committedBefore: options.committedBefore ?? Option.none(),
    around: (attempt) =>
      Effect.suspend(() => {
        events.push(`${options.label ?? ""}around`)
        return attempt
      }),
    beforeCommit: (value) =>
      Effect.suspend(() => {
        events.push(`${options.label ?? ""}beforeCommit ${JSON.stringify(value)}`)
        return options.beforeCommit?.(value) ?? Effect.void
      }),
    committed: Effect.sync(() => {
      events.push(`${options.label ?? ""}committed?`)
      return options.committed ?? Option.none()
    }),
    settled: (value, committed) => Effect.sync(() => void events.push(`${options.label ?? ""}settled ${JSON.stringify(value)} ${committed}`))
  }
  return { events, party }
}

layer(database, { timeout: 60_000, excludeTestServices: true })(`transaction parties on ${TestDatabase.kind}`, (it) => {
  it.effect("a party wraps each attempt, takes its part before COMMIT on the transaction's connection, and hears it settle", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE test_party (what text)`
      const { events, party } = recordingParty({ beforeCommit: () => Effect.asVoid(sql`INSERT INTO test_party VALUES ('party')`) })
      let attempts = 0
      const value = yield* transaction(Effect.suspend(() =>
        ++attempts === 1 ? Effect.andThen(raise("40001"), Effect.succeed("never")) : Effect.as(sql`INSERT INTO test_party VALUES ('body')`, "done")
      )).pipe(withTransactionParty(Effect.succeed(party)))
      expect(value).toBe("done")
      expect(events).toEqual(["around", "around", "beforeCommit \"done\"", "settled \"done\" true"])
      expect(yield* sql`SELECT what FROM test_party ORDER BY what`).toEqual([{ what: "body" }, { what: "party" }])
    }))

  it.effect("a party's failure before COMMIT rolls the whole transaction back", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE test_party_refused (what text)`
      const { events, party } = recordingParty({ beforeCommit: () => Effect.asVoid(sql`SELEC 1`) })
      const exit = yield* Effect.exit(
        transaction(sql`INSERT INTO test_party_refused VALUES ('body')`).pipe(withTransactionParty(Effect.succeed(party)))
      )
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
      expect(events).toEqual(["around", "beforeCommit []"])
      expect(yield* sql`SELECT what FROM test_party_refused`).toEqual([])
    }))

  it.effect("a value committed before answers without running the transaction; a declining party is left out", () =>
    Effect.gen(function*() {
      const { events, party } = recordingParty({ committedBefore: Option.some("earlier") })
      let ran = false
      const value = yield* transaction(Effect.sync(() => (ran = true, "now"))).pipe(
        withTransactionParty(Effect.succeed(undefined)),
        withTransactionParty(Effect.succeed(party))
      )
      expect({ value, ran, events }).toEqual({ value: "earlier", ran: false, events: [] })
      expect(yield* transaction(Effect.succeed("alone")).pipe(withTransactionParty(Effect.succeed(undefined)))).toBe("alone")
    }))

  it.effect("several parties: the outermost enlisting first, its around outermost; each takes its part in that order", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      const traced = (name: string): TransactionParty["around"] => (attempt) =>
        Effect.suspend(() => (events.push(`${name} in`), Effect.tap(attempt, () => Effect.sync(() => void events.push(`${name} out`)))))
      const a = recordingParty({ label: "a ", events })
      const b = recordingParty({ label: "b ", events })
      yield* transaction(Effect.succeed(1)).pipe(
        withTransactionParty(Effect.succeed({ ...a.party, around: traced("a") })),
        withTransactionParty(Effect.succeed({ ...b.party, around: traced("b") }))
      )
      expect(events).toEqual(["b in", "a in", "b beforeCommit 1", "a beforeCommit 1", "a out", "b out", "b settled 1 true", "a settled 1 true"])
    }))

  it.effect("only the outermost transaction enlists parties", () =>
    Effect.gen(function*() {
      const { events, party } = recordingParty()
      yield* transaction(transaction(Effect.succeed("inner"))).pipe(withTransactionParty(Effect.succeed(party)))
      expect(events).toEqual(["around", "beforeCommit \"inner\"", "settled \"inner\" true"])
    }))

  it.effect("a COMMIT lost for want of the database: the party says whether it committed", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // The database going away after the party's part ran (here: a shutdown's error then) stands for the lost
      // answer to COMMIT.
      const lost = (committed: Option.Option<boolean>) => {
        const recorded = recordingParty({ committed })
        const party: TransactionParty = {
          ...recorded.party,
          around: (attempt) => Effect.tap(attempt, () => Effect.orDie(raiseOn(sql, "57P01")))
        }
        return Effect.map(
          Effect.exit(transaction(Effect.succeed("value")).pipe(withTransactionParty(Effect.succeed(party)))),
          (exit) => ({ exit, events: recorded.events })
        )
      }
      const yes = yield* lost(Option.some(true))
      expect(yes.exit).toEqual(Exit.succeed("value"))
      expect(yes.events).toEqual(["beforeCommit \"value\"", "committed?", "settled \"value\" true"])

      const unknown = yield* lost(Option.none())
      expect(failureOf(unknown.exit)).toEqual(Option.some(new ServiceUnavailable({ message: unavailableMessage })))
      expect(unknown.events).toEqual(["beforeCommit \"value\"", "committed?", "settled \"value\" unknown"])

      const no = yield* lost(Option.some(false))
      expect(failureOf(no.exit)).toEqual(Option.some(new ServiceUnavailable({ message: unavailableMessage })))
      expect(no.events).toEqual(["beforeCommit \"value\"", "committed?"])
    }))
})

layer(database, { timeout: 60_000, excludeTestServices: true })(`classify, over errors from ${TestDatabase.kind}`, (it) => {
  it.effect("a serialization failure or a deadlock is a concurrency conflict", () =>
    Effect.gen(function*() {
      expect(classify(yield* sqlErrorOf(raise("40001")))).toBe("concurrency")
      expect(classify(yield* sqlErrorOf(raise("40P01")))).toBe("concurrency")
    }))

  it.effect("a shutdown, a cancel, a connection exception or exhausted resources mean unavailable", () =>
    Effect.gen(function*() {
      for (const code of ["57P01", "57P02", "57P03", "57014", "08006", "53300"]) {
        expect(classify(yield* sqlErrorOf(raise(code))), code).toBe("unavailable")
      }
    }))

  it.effect("a syntax error, a unique violation or a custom error are bugs", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      expect(classify(yield* sqlErrorOf(sql`SELEC 1`))).toBe("bug")
      yield* sql`CREATE TEMPORARY TABLE test_classify_probe (id int PRIMARY KEY)`
      yield* sql`INSERT INTO test_classify_probe VALUES (1)`
      expect(classify(yield* sqlErrorOf(sql`INSERT INTO test_classify_probe VALUES (1)`))).toBe("bug")
      expect(classify(yield* sqlErrorOf(raise("P0001")))).toBe("bug")
    }))
})

describe.runIf(TestDatabase.postgresUrl !== undefined)("on Postgres (needs real concurrency: Postgres only)", () => {
  layer(database, { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("a statement that runs past the statement timeout (57014) is unavailable", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const error = yield* sqlErrorOf(sql.withTransaction(Effect.andThen(sql`SET LOCAL statement_timeout = '100ms'`, sql`SELECT pg_sleep(2)`)))
        expect(classify(error)).toBe("unavailable")
      }))

    it.effect("two transactions that deadlock both complete, the loser retried", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE test_deadlock_probe (id int PRIMARY KEY, n int NOT NULL)`
        yield* sql`INSERT INTO test_deadlock_probe VALUES (1, 0), (2, 0)`
        const firstLocked = yield* Deferred.make<void>()
        const secondLocked = yield* Deferred.make<void>()
        let attempts = 0
        // Each locks its first row, waits until the other holds its own, then wants the other's: a deadlock on the
        // first attempt (later attempts find the latches open and run through).
        const crossing = (from: number, to: number, locked: Deferred.Deferred<void>, other: Deferred.Deferred<void>) =>
          transaction(
            Effect.gen(function*() {
              attempts++
              yield* sql`UPDATE test_deadlock_probe SET n = n + 1 WHERE id = ${from}`
              yield* Deferred.succeed(locked, undefined)
              yield* Deferred.await(other)
              yield* sql`UPDATE test_deadlock_probe SET n = n + 1 WHERE id = ${to}`
            })
          )
        yield* Effect.all([crossing(1, 2, firstLocked, secondLocked), crossing(2, 1, secondLocked, firstLocked)], {
          concurrency: 2
        })
        expect(attempts).toBe(3)
        expect(yield* sql<{ id: number; n: number }>`SELECT id, n FROM test_deadlock_probe ORDER BY id`).toEqual([{ id: 1, n: 2 }, { id: 2, n: 2 }])
      }))

    it.effect("lockLimit serializes the transactions of one limit and scope: a count-then-insert quota holds", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE test_quota (scope text NOT NULL, n int NOT NULL)`
        const held = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        // At most 1 row per scope, checked by counting: without the lock, two racing transactions would both count 0.
        const create = (scope: string, hold: boolean) =>
          transaction(Effect.gen(function*() {
            yield* lockLimit("test_quota", scope)
            const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM test_quota WHERE scope = ${scope}`
            if (hold) {
              yield* Deferred.succeed(held, undefined)
              yield* Deferred.await(release)
            }
            if (row!.n >= 1) return "refused"
            yield* sql`INSERT INTO test_quota VALUES (${scope}, 1)`
            return "created"
          }))
        const holder = yield* Effect.forkChild(create("a", true))
        yield* Deferred.await(held)
        const waiter = yield* Effect.forkChild(create("a", false))
        // Another scope does not wait on the held lock.
        expect(yield* create("b", false)).toBe("created")
        yield* Effect.sleep("200 millis")
        expect(waiter.pollUnsafe()).toBeUndefined()
        yield* Deferred.succeed(release, undefined)
        expect(yield* Fiber.join(holder)).toBe("created")
        expect(yield* Fiber.join(waiter)).toBe("refused")
        expect(yield* sql`SELECT scope FROM test_quota ORDER BY scope`).toEqual([{ scope: "a" }, { scope: "b" }])
      }))
  })
})

/**
 * The storage boundary. Repositories fail with `SqlError`, typed; services end every unit of work in
 * `transaction` (writes, and reads that must see one state) or `orUnavailable` (plain reads), which turn what is
 * left of `SqlError` into the API's answer: the database is unavailable (503 `service_unavailable`), or a bug
 * (a defect: 500, logged).
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { ServiceUnavailable } from "@orgplane/schema"
import { Effect, Option } from "effect"

/** The Postgres error code behind a SqlError, if any (for example `23505`, a unique violation). */
export const pgCode = (error: SqlError): string | undefined => (error.cause as { code?: string } | undefined)?.code

export const isSqlError = (error: unknown): error is SqlError => (error as { _tag?: unknown } | null)?._tag === "SqlError"

/** Turns a unique violation into `onConflict`; every other storage failure stays a SqlError. */
export const catchUniqueViolation = <E>(onConflict: () => E) =>
<A, E1, R>(effect: Effect.Effect<A, E1 | SqlError, R>): Effect.Effect<A, E1 | SqlError | E, R> =>
  Effect.catchIf(
    effect,
    (error): error is SqlError => isSqlError(error) && pgCode(error) === "23505",
    () => Effect.fail(onConflict())
  )

export const first = <A>(rows: ReadonlyArray<A>): Option.Option<A> => Option.fromNullable(rows[0])

/** What is left of a SqlError at the boundary: the database is unavailable (503), or a bug (defect). */
const settle = (error: SqlError): Effect.Effect<never, ServiceUnavailable> =>
  Effect.die(error)

/** Ends a unit of work that runs outside a transaction (plain reads): see the module comment. */
export const orUnavailable = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, R> =>
  Effect.catchIf(effect, isSqlError, settle) as Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, R>

/** Runs `effect` in one transaction (a savepoint when nested), then settles what is left of SqlError. */
export const transaction = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, R | SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => orUnavailable(sql.withTransaction(effect)))

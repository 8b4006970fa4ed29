/** Small helpers for repositories: storage failures are defects, constraint violations are values. */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"

/** The Postgres error code behind a SqlError, if any (for example `23505`, a unique violation). */
export const pgCode = (error: SqlError): string | undefined => (error.cause as { code?: string } | undefined)?.code

/** Turns a unique violation into `onConflict`, and every other storage failure into a defect. */
export const catchUniqueViolation = <E>(onConflict: () => E) =>
<A, E1, R>(effect: Effect.Effect<A, E1 | SqlError, R>): Effect.Effect<A, Exclude<E1, SqlError> | E, R> =>
  Effect.catchIf(
    effect,
    (error): error is SqlError => (error as any)?._tag === "SqlError",
    (error) => pgCode(error) === "23505" ? Effect.fail(onConflict()) : Effect.die(error)
  ) as any

export const first = <A>(rows: ReadonlyArray<A>): Option.Option<A> => Option.fromNullable(rows[0])

/** Runs `effect` in one transaction (a savepoint when nested); a storage failure is a defect and rolls back. */
export const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(effect).pipe(
      Effect.catchIf((error): error is SqlError => (error as any)?._tag === "SqlError", (error) => Effect.die(error))
    )) as Effect.Effect<A, Exclude<E, SqlError>, R | SqlClient.SqlClient>

/**
 * Forward-only migrations, run at start-up. The whole run is one transaction holding a Postgres advisory lock, so
 * several server processes starting at once apply each migration exactly once and never see a half-migrated schema.
 * A start with nothing to apply (the usual one) only reads which are applied, without the lock.
 *
 * A migration is a script of many statements, and the SQL client speaks only the extended query protocol, where a
 * statement is one command (several in one string fail with 42601, "cannot insert multiple commands into a prepared
 * statement"): `script` runs the text unchanged as one statement, a PL/pgSQL `EXECUTE`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

export interface Migration {
  readonly id: number
  readonly name: string
  readonly up: Effect.Effect<unknown, SqlError, SqlClient.SqlClient>
}

/**
 * Arbitrary but fixed: identifies orgplane's migration lock among other advisory locks (the start-up upgrade of
 * stored secrets takes it too).
 */
export const LOCK_KEY = 7_402_318_771

/** The dollar quotes `script` wraps a script in (a script holding either is refused: it would end the quote). */
const outerQuote = "$orgplane_script_block$"
const innerQuote = "$orgplane_script$"

/**
 * What a migration runs its SQL on: `unsafe(text)` runs `text`, a script of any number of statements, in the
 * current transaction, as one PL/pgSQL `EXECUTE` of the text as it is (dollar-quoted, so nothing in it needs
 * escaping). It answers no rows: a query whose rows a migration reads goes through the SqlClient itself.
 */
export const script = SqlClient.SqlClient.useSync((sql) => ({
  unsafe: (text: string) => runScript(sql, text)
}))

/** Runs a script of statements on `sql` (see `script`). */
export const runScript = (sql: SqlClient.SqlClient, text: string): Effect.Effect<void, SqlError> =>
  text.includes(outerQuote) || text.includes(innerQuote)
    ? Effect.die(new Error(`A migration script may not contain ${outerQuote} or ${innerQuote}`))
    : Effect.asVoid(sql.unsafe(`DO ${outerQuote} BEGIN EXECUTE ${innerQuote}${text}${innerQuote}; END ${outerQuote}`))

/**
 * The ids already applied, read without the lock (none while the table does not exist): the usual start, with
 * nothing to apply, is these two statements instead of the locked transaction's five.
 */
const appliedIds = Effect.fn("Migrator.appliedIds")(function*(sql: SqlClient.SqlClient) {
  const [table] = yield* sql<{ readonly present: boolean }>`SELECT to_regclass('orgplane_migrations') IS NOT NULL AS present`
  if (table?.present !== true) return new Set<number>()
  return new Set((yield* sql<{ readonly id: number }>`SELECT id FROM orgplane_migrations`).map((row) => row.id))
})

/** The migrations this build runs at start: what readiness holds the database to (`pending`). */
export class BuildMigrations extends Context.Service<BuildMigrations, ReadonlyArray<Migration>>()("@orgplane/server/platform/Migrator") {}

/**
 * The ids of this build's migrations the database does not have (none once it is migrated; migrations a newer build
 * applied are no concern of this one). Two statements, without the lock.
 */
export const pending = Effect.fn("Migrator.pending")(function*() {
  const seen = yield* appliedIds(yield* SqlClient.SqlClient)
  return (yield* BuildMigrations).filter((migration) => !seen.has(migration.id)).map((migration) => migration.id)
})

/** Applies the missing migrations in id order and returns the ones it applied. */
export const migrate = Effect.fn("Migrator.migrate")(function*(migrations: ReadonlyArray<Migration>) {
  const sql = yield* SqlClient.SqlClient
  const seen = yield* appliedIds(sql)
  const missing = migrations.filter((migration) => !seen.has(migration.id)).length
  if (missing === 0) return []
  // Applying them takes a while (the first start creates every table), and nothing else is said meanwhile.
  yield* Effect.logInfo(seen.size === 0 ? `Creating the database's tables (${missing} migrations)` : `Applying ${missing} new migrations to the database`)
  return yield* sql.withTransaction(
    Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(${LOCK_KEY})`
      yield* sql`CREATE TABLE IF NOT EXISTS orgplane_migrations (
          id integer PRIMARY KEY,
          name text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT now()
        )`
      const applied = new Set((yield* sql<{ id: number }>`SELECT id FROM orgplane_migrations`).map((row) => row.id))
      const pending = [...migrations].sort((a, b) => a.id - b.id).filter((migration) => !applied.has(migration.id))
      for (const migration of pending) {
        yield* migration.up
        yield* sql`INSERT INTO orgplane_migrations (id, name) VALUES (${migration.id}, ${migration.name})`
        yield* Effect.logDebug(`Applied migration ${migration.id}_${migration.name}`)
      }
      return pending.map(({ id, name }) => ({ id, name }))
    })
  )
})

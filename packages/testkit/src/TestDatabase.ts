/**
 * Databases for tests: a fresh embedded database per server, loaded from a migrated template (fast), or, when
 * `DATABASE_URL` is set, a fresh database created on that Postgres for each server and dropped afterwards.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Database, migrate, migrations } from "@orgplane/server"
import { Config, Effect, Layer, Option, Redacted } from "effect"

let template: Promise<Blob> | undefined

/** A dump of a freshly migrated embedded database, made once per test process. */
export const embeddedTemplate = (): Promise<Blob> => {
  template ??= Effect.runPromise(
    Effect.scoped(
      Effect.gen(function*() {
        const { db, socketDir } = yield* Database.embedded({ dataDir: "memory" })
        yield* migrate(migrations).pipe(
          Effect.provide(PgClient.layer({ host: socketDir, port: 5432, database: "postgres", username: "postgres", maxConnections: 1 }))
        )
        return yield* Effect.promise(() => db.dumpDataDir("none"))
      })
    )
  )
  return template
}

/** The Postgres URL the tests should use, from `DATABASE_URL`, if any. */
export const postgresUrl = Config.option(Config.redacted("DATABASE_URL")).pipe(
  Config.map(Option.filter((url) => Redacted.value(url).trim() !== ""))
)

const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/** A fresh, empty database on the Postgres at `url`, dropped when the scope closes. */
export const freshPostgres = (url: Redacted.Redacted) =>
  Layer.unwrapScoped(
    Effect.gen(function*() {
      const name = `orgplane_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
      const admin = yield* Layer.build(Database.layerUrl(url, { maxConnections: 1 }))
      const sql = admin.unsafeMap.get(SqlClient.SqlClient.key) as SqlClient.SqlClient
      yield* sql.unsafe(`CREATE DATABASE ${name}`).pipe(Effect.orDie)
      yield* Effect.addFinalizer(() => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore))
      return Database.layerUrl(Redacted.make(withDatabase(Redacted.value(url), name)), { maxConnections: 4 })
    })
  )

/** The database layer a test server runs on: Postgres when DATABASE_URL is set, else embedded from the template. */
export const layer: Layer.Layer<SqlClient.SqlClient | PgClient.PgClient> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const url = yield* Effect.orDie(postgresUrl)
    if (Option.isSome(url)) return freshPostgres(url.value)
    const loadDataDir = yield* Effect.promise(embeddedTemplate)
    return Database.layerEmbedded({ dataDir: "memory", loadDataDir })
  })
)

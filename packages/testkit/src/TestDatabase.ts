/**
 * Databases for tests: a fresh embedded database per server, loaded from a migrated template (fast), or, when
 * `DATABASE_URL` is set, a fresh database created on that Postgres for each server and dropped afterwards.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { AuditPartitions, Database, migrate, migrations, TelemetryPartitions } from "@orgplane/server"
import { Config, Context, Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import * as DatabaseProxy from "./DatabaseProxy.js"
import * as Tenancy from "./Tenancy.js"

let template: Promise<Blob> | undefined

/** Where the test run's global setup left a dumped template (see globalSetup.ts), if it did. */
const templateFile = Config.option(Config.string("ORGPLANE_TEST_TEMPLATE"))

/** A dump of a freshly migrated embedded database: made once per test run, or once per process without one. */
export const embeddedTemplate = (): Promise<Blob> => {
  template ??= Effect.runPromise(
    Effect.gen(function*() {
      const file = yield* Effect.orDie(templateFile)
      if (Option.isSome(file)) {
        const bytes = yield* Effect.promise(() => Fs.readFile(file.value).catch(() => undefined))
        if (bytes !== undefined) return new Blob([bytes])
      }
      return yield* makeTemplate
    })
  )
  return template
}

/** Creates a migrated embedded database and dumps it. */
export const makeTemplate: Effect.Effect<Blob> = Effect.scoped(
      Effect.gen(function*() {
        const { db, socketDir } = yield* Database.embedded({ dataDir: "memory" })
        // With telemetry's partitions of the default retention window and the audit log's months ahead, which every
        // server would otherwise create.
        const month = TelemetryPartitions.monthOf(new Date())
        yield* migrate(migrations).pipe(
          Effect.andThen(TelemetryPartitions.createRange(month - 13, month + 1)),
          Effect.andThen(AuditPartitions.createRange(month, month + 2)),
          Effect.provide(PgClient.layer({ host: socketDir, port: 5432, database: "postgres", username: "postgres", maxConnections: 1 }))
        )
        return yield* Effect.promise(() => db.dumpDataDir("none"))
      })
    ).pipe(Effect.orDie)

/**
 * Test files of vitest's "no-database" project (see vitest.config.ts) run without the template and without the
 * tenancy check: one of them that starts a database is misfiled, and fails here rather than go unchecked.
 */
const refuseOutsideDatabaseProject = Config.string("ORGPLANE_TEST_PROJECT").pipe(
  Config.withDefault("database"),
  Effect.orDie,
  Effect.flatMap((project) =>
    project === "no-database"
      ? Effect.dieMessage(
        "This test file starts a test database but is listed in vitest.config.ts as running without one (the " +
          "\"no-database\" project, which skips the tenancy check): remove it from that list."
      )
      : Effect.void
  )
)

/** The Postgres URL the tests should use, from `DATABASE_URL`, if any. */
export const postgresUrl = Config.option(Config.redacted("DATABASE_URL")).pipe(
  Config.map(Option.filter((url) => Redacted.value(url).trim() !== ""))
)

/**
 * Whether the tests run on a real Postgres. The embedded database has one connection, which serializes every
 * request: a concurrency test passes there even without the locks it is meant to check, so such tests run on
 * Postgres only (CI runs the server suite there too).
 */
export const onPostgres: boolean = Option.isSome(Effect.runSync(Effect.orDie(postgresUrl)))

const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/** The URL of a fresh, empty database on the Postgres at `url`, dropped when the scope closes. */
export const freshPostgresUrl = (url: Redacted.Redacted) =>
  Effect.gen(function*() {
    const name = `orgplane_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
    const admin = yield* Layer.build(Database.layerUrl(url, { maxConnections: 1 }))
    const sql = Context.get(admin, SqlClient.SqlClient)
    yield* sql.unsafe(`CREATE DATABASE ${name}`).pipe(Effect.orDie)
    yield* Effect.addFinalizer(() => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore))
    return Redacted.make(withDatabase(Redacted.value(url), name))
  })

/** A fresh, empty database on the Postgres at `url`, dropped when the scope closes. */
export const freshPostgres = (url: Redacted.Redacted) =>
  Layer.unwrapScoped(Effect.map(freshPostgresUrl(url), (fresh) => Database.layerUrl(fresh, { maxConnections: 4 })))

/**
 * A fresh, migrated database for one test server: on the Postgres at DATABASE_URL when set, else embedded,
 * loaded from the migrated template. Every statement run on it is recorded for the tenancy check (`Tenancy.ts`).
 */
export const layer: Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, unknown> = Layer.unwrapEffect(
  Effect.gen(function*() {
    yield* refuseOutsideDatabaseProject
    const url = yield* Effect.orDie(postgresUrl)
    if (Option.isSome(url)) {
      return Layer.effectDiscard(migrate(migrations)).pipe(Layer.provideMerge(freshPostgres(url.value)))
    }
    const loadDataDir = yield* Effect.promise(embeddedTemplate)
    return Database.layerEmbedded({ dataDir: "memory", loadDataDir })
  })
).pipe(Layer.provideMerge(Tenancy.recorder))

/**
 * A fresh database (embedded, or on the Postgres at DATABASE_URL) reachable only through a DatabaseProxy that tests
 * take down and bring back, and a database layer for a server that connects through it with the given timeouts.
 */
export const behindProxy = async (timeouts: Database.Timeouts & { readonly maxConnections?: number }) => {
  await Effect.runPromise(refuseOutsideDatabaseProject)
  const scope = Effect.runSync(Scope.make())
  const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Scope.extend(effect, scope))
  const postgres = Effect.runSync(Effect.orDie(postgresUrl))
  let target: DatabaseProxy.Target
  let via: (port: number) => string
  if (Option.isSome(postgres)) {
    const fresh = new URL(Redacted.value(await run(freshPostgresUrl(postgres.value))))
    target = { host: fresh.hostname, port: Number(fresh.port || 5432) }
    via = (port) => Object.assign(new URL(fresh), { hostname: "127.0.0.1", port: String(port) }).toString()
  } else {
    const { socketDir } = await run(Database.embedded({ dataDir: "memory", loadDataDir: await embeddedTemplate() }))
    target = { path: Path.join(socketDir, ".s.PGSQL.5432") }
    via = (port) => `postgres://postgres@127.0.0.1:${port}/postgres`
  }
  const proxy = await run(Effect.acquireRelease(Effect.promise(() => DatabaseProxy.start(target)), (proxy) => Effect.promise(proxy.close)))
  return {
    proxy,
    // The embedded database has one session: more connections would interleave.
    layer: Database.layerUrl(Redacted.make(via(proxy.port)), { maxConnections: Option.isSome(postgres) ? 4 : 1, ...timeouts }),
    /** Adds to the proxy's scope (a server started on `layer`, say), closed with it. */
    run,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

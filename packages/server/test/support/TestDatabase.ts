/**
 * A fresh database for each test server: on the Postgres at
 * `DATABASE_URL` when set (a new database, dropped afterwards), else embedded (PGlite loaded from a dumped template,
 * behind its unix socket).
 *
 * Empty, or `migrated`: a migrated one is copied from a template migrated once, not migrated again for each test
 * server (the migrations take seconds on PGlite, and far longer on a loaded machine). On PGlite the template is
 * platform/EmbeddedTemplate.ts's, the dump `--data memory` starts from, kept in the test run's cache folder
 * (vitest.config.ts) and made by the first file that needs it; on Postgres it is a database of its own,
 * `orgplane_test_template_<fingerprint>`, that fresh databases are created from (`CREATE DATABASE … TEMPLATE`).
 * Both are named after the migrations' code, so a changed migration makes a new template.
 */
import { PGlite } from "@electric-sql/pglite"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import * as Option from "effect/Option"
import * as Path from "node:path"
import { migrations, migrationsUrl } from "../../src/migrations/index.js"
import * as Database from "../../src/platform/Database.js"
import * as EmbeddedTemplate from "../../src/platform/EmbeddedTemplate.js"
import { migrate } from "../../src/platform/Migrator.js"
import * as DatabaseProxy from "./DatabaseProxy.js"

/** The Postgres the tests run on, or undefined for the embedded database. */
export const postgresUrl = (() => {
  const url = process.env["DATABASE_URL"]?.trim()
  return url === undefined || url === "" ? undefined : url
})()

export const kind = postgresUrl === undefined ? "PGlite" : "Postgres"

/** Whether the tests run on Postgres. */
export const onPostgres = postgresUrl !== undefined

/** An empty data folder dumped once: loading it takes a fraction of initdb's time. */
let template: Promise<File | Blob> | undefined
const emptyTemplate = () =>
  template ??= PGlite.create().then(async (db) => {
    const dump = await db.dumpDataDir("none")
    await db.close()
    return dump
  })

/** The embedded template's file for the current migrations: its name is their fingerprint. */
const templateFile = Effect.flatMap(Effect.orDie(EmbeddedTemplate.cacheDir), (dir) => EmbeddedTemplate.templateFile(dir, migrationsUrl))

/** The migrated embedded template: the saved one, or one made now (migrated from the empty one) and saved. */
let migratedTemplate: Promise<Blob> | undefined
const embeddedMigrated = () =>
  migratedTemplate ??= Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const file = yield* templateFile
    const saved = yield* EmbeddedTemplate.read(file)
    if (Option.isSome(saved)) return saved.value
    const { db, socketDir } = yield* Effect.orDie(Database.embedded({ dataDir: "memory", loadDataDir: yield* Effect.promise(emptyTemplate) }))
    yield* Effect.orDie(Effect.provide(migrate(migrations), Database.layerSocket(socketDir)))
    const dump = yield* Effect.promise(() => db.dumpDataDir("none"))
    yield* EmbeddedTemplate.save(file, dump)
    return dump
  })))

const withDatabase = (url: string, name: string) => Object.assign(new URL(url), { pathname: `/${name}` }).toString()

const TEMPLATE_PREFIX = "orgplane_test_template_"

/**
 * The name of the migrated template database on the Postgres at `url`, made if missing: migrated under a name of
 * its own, then renamed (so a concurrent file never copies a half-migrated one; the loser of a race drops its copy).
 * Templates of other migration sets are dropped.
 */
const postgresTemplate = Effect.fn("TestDatabase.postgresTemplate")(function*(url: string) {
  const name = TEMPLATE_PREFIX + Path.basename(yield* templateFile, ".tar").slice(-20)
  const admin = yield* Layer.build(Database.layerUrl(Redacted.make(url), { maxConnections: 1 }))
  const sql = Context.get(admin, SqlClient.SqlClient)
  const existing = yield* Effect.orDie(sql<{ datname: string }>`SELECT datname FROM pg_database WHERE datname LIKE ${TEMPLATE_PREFIX + "%"}`)
  if (existing.some(({ datname }) => datname === name)) return name
  const building = `orgplane_test_building_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  yield* Effect.orDie(sql.unsafe(`CREATE DATABASE ${building}`))
  yield* Effect.orDie(Effect.provide(migrate(migrations), Database.layerUrl(Redacted.make(withDatabase(url, building)), { maxConnections: 1 })))
  // The migration's connection may still be closing on the server's side: the rename waits for it. Another file
  // may have made the template meanwhile: then this copy goes.
  const made = sql<{ datname: string }>`SELECT datname FROM pg_database WHERE datname = ${name}`.pipe(Effect.orDie, Effect.map((rows) => rows.length > 0))
  for (let attempt = 0;; attempt++) {
    if (yield* made) {
      yield* Effect.ignore(sql.unsafe(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`))
      break
    }
    const renamed = yield* Effect.exit(sql.unsafe(`ALTER DATABASE ${building} RENAME TO ${name}`))
    if (renamed._tag === "Success") break
    if (attempt === 50) return yield* Effect.die(renamed.cause)
    yield* Effect.sleep("100 millis")
  }
  for (const { datname } of existing) {
    if (datname.startsWith(TEMPLATE_PREFIX) && datname !== name) yield* Effect.ignore(sql.unsafe(`DROP DATABASE IF EXISTS ${datname}`))
  }
  return name
}, Effect.scoped)

/** A new database on the Postgres at `url` (a copy of the migrated template when `migrated`), dropped (its connections ended) when the scope closes. */
export const freshPostgres = Effect.fn("TestDatabase.freshPostgres")(function*(url: string, options: { readonly migrated?: boolean } = {}) {
  const template = options.migrated === true ? yield* postgresTemplate(url) : undefined
  const name = `orgplane_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const admin = yield* Layer.build(Database.layerUrl(Redacted.make(url), { maxConnections: 1 }))
  const sql = Context.get(admin, SqlClient.SqlClient)
  yield* Effect.orDie(sql.unsafe(template === undefined ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE ${template}`))
  yield* Effect.addFinalizer(() => Effect.ignore(sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
  return withDatabase(url, name)
})

export interface Options extends Database.Timeouts {
  /** A database already migrated to the current schema (copied from a template), not an empty one. */
  readonly migrated?: boolean
}

/** Where a fresh database listens, for the scope: its URL (Postgres) or its socket folder (embedded), and its target. */
export const fresh = Effect.fn("TestDatabase.fresh")(function*(options: Options) {
  if (postgresUrl !== undefined) {
    const url = new URL(yield* freshPostgres(postgresUrl, options))
    return { url: url.toString(), target: { host: url.hostname, port: Number(url.port || 5432) } satisfies DatabaseProxy.Target }
  }
  const loadDataDir = yield* Effect.promise(options.migrated === true ? embeddedMigrated : emptyTemplate)
  const { socketDir } = yield* Effect.orDie(Database.embedded({ dataDir: "memory", loadDataDir }))
  return { socketDir, target: { path: Database.socketPath(socketDir) } satisfies DatabaseProxy.Target }
})

/** A fresh database's layer, reached the way the server reaches it (a URL's pool, or the embedded socket's). */
export const layer = Effect.fn("TestDatabase.layer")(function*(options: Options = {}) {
  const { migrated: _, ...timeouts } = options
  const database = yield* fresh(options)
  return "url" in database
    ? Database.layerUrl(Redacted.make(database.url), { maxConnections: 4, ...timeouts })
    : Database.layerSocket(database.socketDir, timeouts)
})

/** A fresh database behind a proxy the test can pause, and its layer through the proxy. */
export const behindProxy = Effect.fn("TestDatabase.behindProxy")(function*(options: Options = {}) {
  const { migrated: _, ...timeouts } = options
  const database = yield* fresh(options)
  const proxy = yield* DatabaseProxy.scoped(database.target)
  const via = "url" in database
    ? Object.assign(new URL(database.url), { hostname: "127.0.0.1", port: String(proxy.port) }).toString()
    : `postgres://postgres@127.0.0.1:${proxy.port}/postgres`
  // The embedded database has one session: more connections would interleave.
  const layer = Database.layerUrl(Redacted.make(via), { maxConnections: "url" in database ? 4 : 1, ...timeouts })
  return { proxy, layer }
})

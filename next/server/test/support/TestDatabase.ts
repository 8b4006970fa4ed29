/**
 * A fresh database for each test server, as packages/testkit's TestDatabase.ts gives one: on the Postgres at
 * `DATABASE_URL` when set (a new database, dropped afterwards), else embedded (PGlite loaded from an empty template,
 * made once per test file, behind its unix socket).
 */
import { PGlite } from "@electric-sql/pglite"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import * as Database from "../../src/platform/Database.js"
import * as DatabaseProxy from "./DatabaseProxy.js"

/** The Postgres the tests run on, or undefined for the embedded database. */
export const postgresUrl = (() => {
  const url = process.env["DATABASE_URL"]?.trim()
  return url === undefined || url === "" ? undefined : url
})()

export const kind = postgresUrl === undefined ? "PGlite" : "Postgres"

/** An empty data folder dumped once: loading it takes a fraction of initdb's time. */
let template: Promise<File | Blob> | undefined
const emptyTemplate = () =>
  template ??= PGlite.create().then(async (db) => {
    const dump = await db.dumpDataDir("none")
    await db.close()
    return dump
  })

const withDatabase = (url: string, name: string) => Object.assign(new URL(url), { pathname: `/${name}` }).toString()

/** A new database on the Postgres at `url`, dropped (its connections ended) when the scope closes. */
export const freshPostgres = Effect.fn("TestDatabase.freshPostgres")(function*(url: string) {
  const name = `orgplane_next_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const admin = yield* Layer.build(Database.layerUrl(Redacted.make(url), { maxConnections: 1 }))
  const sql = Context.get(admin, SqlClient.SqlClient)
  yield* Effect.orDie(sql.unsafe(`CREATE DATABASE ${name}`))
  yield* Effect.addFinalizer(() => Effect.ignore(sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
  return withDatabase(url, name)
})

/** Where a fresh database listens, for the scope. */
const fresh = Effect.fn("TestDatabase.fresh")(function*() {
  if (postgresUrl !== undefined) {
    const url = new URL(yield* freshPostgres(postgresUrl))
    return { url: url.toString(), target: { host: url.hostname, port: Number(url.port || 5432) } satisfies DatabaseProxy.Target }
  }
  const loadDataDir = yield* Effect.promise(emptyTemplate)
  const { socketDir } = yield* Effect.orDie(Database.embedded({ dataDir: "memory", loadDataDir }))
  return { socketDir, target: { path: Database.socketPath(socketDir) } satisfies DatabaseProxy.Target }
})

/** A fresh database's layer, reached the way the server reaches it (a URL's pool, or the embedded socket's). */
export const layer = Effect.fn("TestDatabase.layer")(function*(timeouts: Database.Timeouts = {}) {
  const database = yield* fresh()
  return "url" in database
    ? Database.layerUrl(Redacted.make(database.url), { maxConnections: 4, ...timeouts })
    : Database.layerSocket(database.socketDir, timeouts)
})

/** A fresh database behind a proxy the test can pause, and its layer through the proxy. */
export const behindProxy = Effect.fn("TestDatabase.behindProxy")(function*(timeouts: Database.Timeouts = {}) {
  const database = yield* fresh()
  const proxy = yield* DatabaseProxy.scoped(database.target)
  const via = "url" in database
    ? Object.assign(new URL(database.url), { hostname: "127.0.0.1", port: String(proxy.port) }).toString()
    : `postgres://postgres@127.0.0.1:${proxy.port}/postgres`
  // The embedded database has one session: more connections would interleave.
  const layer = Database.layerUrl(Redacted.make(via), { maxConnections: "url" in database ? 4 : 1, ...timeouts })
  return { proxy, layer }
})

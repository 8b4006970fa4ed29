/**
 * platform/Database.ts: the embedded database in a data folder, a database that cannot be reached at start, one that
 * answers nothing (the client's own cut-off), and the bound on waiting for a pooled connection.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"
import * as Fs from "node:fs/promises"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Database from "../src/platform/Database.js"
import { DataFolderInUse } from "../src/platform/DataFolderLock.js"
import { classify } from "../src/platform/Sql.js"
import * as TestDatabase from "./support/TestDatabase.js"

/** A loopback port nobody listens on: one the system gave and took back. */
const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = Net.createServer().listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 1))
    })
  })
)

describe("Database", () => {
  it.live("an embedded data folder keeps its data across restarts and is held by one user at a time", () =>
    Effect.gen(function*() {
      const dataDir = yield* Effect.acquireRelease(
        Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-test-data-"))),
        (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
      )
      const first = yield* Scope.make()
      const sql = Context.get(yield* Layer.buildWithScope(Database.layerEmbedded({ dataDir }), first), SqlClient.SqlClient)
      yield* sql`CREATE TABLE kept (name text)`
      yield* sql`INSERT INTO kept VALUES ('across restarts')`

      const second = yield* Effect.flip(Effect.scoped(Layer.build(Database.layerEmbedded({ dataDir }))))
      expect(second).toBeInstanceOf(DataFolderInUse)
      expect(second).toMatchObject({ where: "this process" })

      yield* Scope.close(first, Exit.void)
      const rows = yield* Effect.scoped(Effect.flatMap(Layer.build(Database.layerEmbedded({ dataDir })), (context) =>
        Context.get(context, SqlClient.SqlClient)`SELECT name FROM kept`))
      expect(rows).toEqual([{ name: "across restarts" }])
    }).pipe(Effect.scoped), 120_000)

  it.live("a database that cannot be reached fails the layer at start, with a connection error", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const error = yield* Effect.flip(Effect.scoped(Layer.build(
        Database.layerUrl(Redacted.make(`postgres://postgres@127.0.0.1:${port}/postgres`), { connectTimeout: "2 seconds" })
      )))
      expect(error).toMatchObject({ _tag: "SqlError", reason: { _tag: "ConnectionError" } })
    }))

  it.live("a statement the database does not answer fails after the statement timeout and a second, as a lost connection (503)", () =>
    Effect.gen(function*() {
      const database = yield* TestDatabase.behindProxy({ connectTimeout: "1 second", statementTimeout: "300 millis" })
      const sql = Context.get(yield* Layer.build(database.layer), SqlClient.SqlClient)
      database.proxy.pause()
      const started = performance.now()
      const error = yield* Effect.flip(sql.withTransaction(sql`SELECT 1`))
      // The cause says which deadline ended it: the driver's read timeout (statement timeout and a second), never
      // sooner; how much later depends on the machine's load, so no upper bound (the test's own timeout is one).
      expect(error).toMatchObject({ _tag: "SqlError", reason: { _tag: "ConnectionError", message: "Query read timeout" } })
      expect(classify(error)).toBe("unavailable")
      expect(performance.now() - started).toBeGreaterThanOrEqual(1_250)
      // The BEGIN the database gets late must not leave the next user inside a transaction.
      database.proxy.resume()
      const [before] = yield* sql<{ id: string }>`SELECT txid_current()::text AS id`
      const [after] = yield* sql<{ id: string }>`SELECT txid_current()::text AS id`
      expect(after?.id).not.toBe(before?.id)
    }).pipe(Effect.scoped), 60_000)

  it.live("a wait for a pooled connection fails after the connect timeout, as a lost connection (503)", () =>
    Effect.gen(function*() {
      const database = yield* TestDatabase.behindProxy({ connectTimeout: "500 millis", statementTimeout: "1 second" })
      const sql = Context.get(yield* Layer.build(database.layer), SqlClient.SqlClient)
      // Hold every connection of the pool (one on the embedded database, four on Postgres).
      for (let i = 0; i < (TestDatabase.postgresUrl === undefined ? 1 : 4); i++) yield* sql.reserve
      const started = performance.now()
      const error = yield* Effect.flip(sql`SELECT 1`)
      // Ended by the pool's connect timeout (its message says so), not before it.
      expect(error).toMatchObject({ _tag: "SqlError", reason: { _tag: "ConnectionError", message: "timeout exceeded when trying to connect" } })
      expect(performance.now() - started).toBeGreaterThanOrEqual(450)
      expect(classify(error)).toBe("unavailable")
    }).pipe(Effect.scoped), 60_000)

  it.live.runIf(TestDatabase.postgresUrl !== undefined)("the pool opens a connection for each concurrent statement, burst after burst, up to its size (Postgres only)", () =>
    Effect.gen(function*() {
      const url = yield* TestDatabase.freshPostgres(TestDatabase.postgresUrl ?? "")
      const database = new URL(url).pathname.slice(1)
      const pool = Context.get(yield* Layer.build(Database.layerUrl(Redacted.make(url), { maxConnections: 8 })), SqlClient.SqlClient)
      const holder = Context.get(yield* Layer.build(Database.layerUrl(Redacted.make(url), { maxConnections: 1 })), SqlClient.SqlClient)
      const observer = Context.get(yield* Layer.build(Database.layerUrl(Redacted.make(url), { maxConnections: 1 })), SqlClient.SqlClient)
      yield* pool`CREATE TABLE growth_probe (id int)`
      const release = yield* Deferred.make<void>()
      const locked = yield* Deferred.make<void>()
      const holding = yield* Effect.forkChild(holder.withTransaction(
        Effect.andThen(holder`LOCK TABLE growth_probe`, Effect.andThen(Deferred.succeed(locked, undefined), Deferred.await(release)))
      ))
      yield* Deferred.await(locked)
      /** The statements of this database waiting on the lock: each has a connection of its own. */
      const waiting = Effect.map(
        observer<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${database} AND wait_event_type = 'Lock'`,
        (rows) => rows[0]?.n ?? 0
      )
      const waitingReaches = (n: number) =>
        Effect.gen(function*() {
          for (let attempt = 0; attempt < 100 && (yield* waiting) < n; attempt++) yield* Effect.sleep("50 millis")
          return yield* waiting
        })
      const read = pool`SELECT * FROM growth_probe`
      const first = yield* Effect.forkChild(Effect.all([read, read, read], { concurrency: "unbounded" }))
      expect(yield* waitingReaches(3)).toBe(3)
      const second = yield* Effect.forkChild(Effect.all([read, pool.withTransaction(read), read, pool.withTransaction(read)], { concurrency: "unbounded" }))
      expect(yield* waitingReaches(7)).toBe(7)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holding)
      expect((yield* Fiber.join(first)).length + (yield* Fiber.join(second)).length).toBe(7)
    }).pipe(Effect.scoped), 60_000)
})

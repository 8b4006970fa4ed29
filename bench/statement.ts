/**
 * What one statement costs the client, outside any server (`pnpm bench:statement`, Postgres at DATABASE_URL): the
 * same prepared `SELECT` run 20,000 times over 32 concurrent callers and a pool of 10, through `pg` alone, through
 * `@effect/sql-pg`'s own client (`PgClient.layer`, tracing on and off), and through orgplane's database layer
 * (`platform/Database.ts`: the same client with its timeouts and statements prepared by name), each from one
 * Effect program (32 fibers) so that no `runPromise` is counted. Two rounds, interleaved; CPU time of this process
 * per statement (the kernel's share of a loopback write included) and statements per second.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import * as Path from "node:path"
import * as Pg from "pg"
import * as Database from "../packages/server/src/platform/Database.js"
import { serverDependencies } from "./dependency.js"

const url = process.env.DATABASE_URL?.trim()
if (!url) throw new Error("pnpm bench:statement needs DATABASE_URL (Postgres)")

// @effect/sql-pg as the server imports it (the root package does not depend on it).
const load = serverDependencies(Path.join(import.meta.dirname, "../packages/server"))

/** What this file uses of `@effect/sql-pg`: its client's layer, which provides the SQL client. */
interface SqlPg {
  readonly PgClient: {
    readonly layer: (config: { readonly url: Redacted.Redacted; readonly maxConnections: number }) => Layer.Layer<SqlClient.SqlClient, unknown>
  }
}
const isSqlPg = (module: unknown): module is SqlPg =>
  typeof module === "object" && module !== null && "PgClient" in module && typeof module.PgClient === "object" && module.PgClient !== null &&
  "layer" in module.PgClient && typeof module.PgClient.layer === "function"
const sqlPg = await load("@effect/sql-pg")
if (!isSqlPg(sqlPg)) throw new Error("@effect/sql-pg has no PgClient.layer")
const { PgClient } = sqlPg

const statements = 20_000
const callers = 32
const text = "SELECT $1::int AS a, $2::text AS b, now() AS c"

const measure = async (label: string, run: () => Promise<unknown>) => {
  const cpu = process.cpuUsage()
  const started = performance.now()
  await run()
  const used = process.cpuUsage(cpu)
  const seconds = (performance.now() - started) / 1000
  console.log(`${label.padEnd(44)} ${((used.user + used.system) / statements).toFixed(1).padStart(6)} µs   ${(statements / seconds).toFixed(0).padStart(6)}/s`)
}

const pool = new Pg.Pool({ connectionString: url, max: 10 })
const viaPg = async () => {
  let next = 0
  await Promise.all(Array.from({ length: callers }, async () => {
    while (next < statements) await pool.query({ name: "bench_statement", text, values: [next++, "x"] })
  }))
}

const effectLayer = PgClient.layer({ url: Redacted.make(url), maxConnections: 10 })
const orgplaneLayer: Layer.Layer<SqlClient.SqlClient, unknown> = Database.layerUrl(Redacted.make(url))
const viaEffect = (runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>, tracing: boolean) => () =>
  runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.forEach(
      Array.from({ length: statements }, (_, i) => i),
      (i) => sql`SELECT ${i}::int AS a, ${"x"}::text AS b, now() AS c`,
      { concurrency: callers, discard: true }
    )).pipe(Effect.withTracerEnabled(tracing)))

const effect = ManagedRuntime.make(effectLayer)
const orgplane = ManagedRuntime.make(orgplaneLayer)
// Warm up every path (connections, prepared statements, JIT).
for (const run of [viaPg, viaEffect(effect, false), viaEffect(orgplane, false)]) await run()

console.log(`${statements} statements, ${callers} callers, pool of 10: CPU per statement, statements per second`)
for (let round = 1; round <= 2; round++) {
  await measure("pg (named statement)", viaPg)
  await measure("@effect/sql-pg PgClient.layer, tracing on", viaEffect(effect, true))
  await measure("@effect/sql-pg PgClient.layer, tracing off", viaEffect(effect, false))
  await measure("orgplane's Database.layerUrl, tracing off", viaEffect(orgplane, false))
}
await pool.end()
await effect.dispose()
await orgplane.dispose()

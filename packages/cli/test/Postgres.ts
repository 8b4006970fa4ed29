/**
 * The Postgres the CLI's database tests restore into: DATABASE_URL's when set, else the one on 127.0.0.1:5432 as the
 * current user. `reachable` says whether one listens (the tests skip, saying so, where none does); `newDatabase`
 * makes an empty database, which `dropDatabases` drops after the tests.
 */
import { Database } from "@orgplane/server"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import * as Net from "node:net"
import * as Os from "node:os"

export const url = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== ""
  ? process.env.DATABASE_URL
  : `postgres://${Os.userInfo().username}@127.0.0.1:5432/postgres`

const listening = (target: URL) =>
  new Promise<boolean>((resolve) => {
    const socket = Net.connect(Number(target.port || 5432), target.hostname)
    socket.setTimeout(2000, () => (socket.destroy(), resolve(false)))
    socket.once("connect", () => (socket.end(), resolve(true)))
    socket.once("error", () => resolve(false))
  })

export const reachable = await listening(new URL(url))

/** What went wrong, with what caused it in turn (a SqlError's own message is only "PgConnection: Query failed"). */
const causes = (error: unknown): string =>
  error instanceof Error ? `${error.message}${error.cause === undefined ? "" : ` (${causes(error.cause)})`}` : String(error)

/** A refused statement as an Error naming it and Postgres's own words. */
const failure = (statement: string, cause: Cause.Cause<unknown>) => new Error(`${statement.slice(0, 80)}: ${causes(Cause.squash(cause))}`)

/**
 * The rows of `statement`, run on the database at `on` (default: the Postgres itself). Patient: CREATE and DROP
 * DATABASE wait on the disk (a checkpoint, a copy of template1), which the whole suite beside them keeps busy.
 */
export const query = (statement: string, on: string = url) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql.unsafe<Record<string, unknown>>(statement)
    }).pipe(
      Effect.provide(Database.layerUrl(Redacted.make(on), { maxConnections: 1, statementTimeout: "120 seconds", connectTimeout: "30 seconds" })),
      Effect.catchCause((cause) => Effect.die(failure(statement, cause)))
    )
  )

const made: Array<string> = []

/** A new, empty database on the Postgres (its URL), dropped by `dropDatabases`. */
export const newDatabase = async (prefix: string) => {
  const name = `${prefix}_${NodeCrypto.randomBytes(6).toString("hex")}`
  await query(`CREATE DATABASE "${name}"`)
  made.push(name)
  const target = new URL(url)
  target.pathname = `/${name}`
  return target.toString()
}

/**
 * Drops the databases `newDatabase` made. A database it cannot drop is left, with a warning naming it and why: what
 * the tests asserted stands, and a test database left on a test Postgres harms no later run (each makes its own).
 */
export const dropDatabases = async () => {
  for (const name of made.splice(0)) {
    await query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch((error: unknown) =>
      console.warn(`test database ${name} left on ${new URL(url).host}: ${error instanceof Error ? error.message : String(error)}`)
    )
  }
}

/**
 * The Postgres the CLI's database tests restore into: DATABASE_URL's when set, else the one on 127.0.0.1:5432 as the
 * current user. `reachable` says whether one listens (the tests skip, saying so, where none does); `newDatabase`
 * makes an empty database, which `dropDatabases` drops after the tests.
 */
import { Database } from "@orgplane/server"
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

/** The rows of `statement`, run on the database at `on` (default: the Postgres itself). */
export const query = (statement: string, on: string = url) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql.unsafe<Record<string, unknown>>(statement)
    }).pipe(Effect.provide(Database.layerUrl(Redacted.make(on), { maxConnections: 1 })))
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

export const dropDatabases = async () => {
  for (const name of made.splice(0)) await query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
}

/**
 * Several servers on one fresh Postgres database, as a deployment runs them (each its own pool and durable runner), and
 * a connection of the test's own on it that holds row locks, so a test can make requests wait at a chosen statement and
 * decide what commits first instead of hoping for an interleaving. Postgres only: the embedded database is one
 * process's, with one connection.
 *
 * The servers are HttpServer.ts's, on a fresh empty database from this folder's TestDatabase.ts, which the first
 * server migrates as it starts.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import * as Pg from "pg"
import * as Wait from "../../../../packages/testkit/src/Wait.js"
import * as Database from "../../src/platform/Database.js"
import * as TestServer from "./HttpServer.js"
import * as TestDatabase from "./TestDatabase.js"

export interface Shared {
  readonly url: string
  /** Servers on the database, started in order. */
  readonly servers: ReadonlyArray<TestServer.RunningServer>
  /** A statement on the database from the test's own connection (outside any held transaction). */
  readonly query: <Row = Record<string, unknown>>(text: string, params?: ReadonlyArray<unknown>) => Promise<ReadonlyArray<Row>>
  /** Opens a transaction on a connection of its own and runs `text` in it (say, `SELECT ... FOR UPDATE`): its locks stay held. */
  readonly hold: (text: string, params?: ReadonlyArray<unknown>) => Promise<Held>
  readonly close: () => Promise<void>
}

export interface Held {
  /** Until at least `count` other backends of this database wait for a lock (held here or by each other). */
  readonly waiters: (count: number) => Promise<void>
  /** Ends the transaction (ROLLBACK): its locks go, and whoever waited goes on. */
  readonly release: () => Promise<void>
}

/** One key for every server: a secret one server encrypted, another decrypts. */
const keys = `test:${randomBytes(32).toString("base64")}`

export const start = async (count: number, options: TestServer.Options = {}): Promise<Shared> => {
  const base = TestDatabase.postgresUrl
  if (base === undefined) throw new Error("SharedPostgres needs DATABASE_URL")
  const scope = Scope.makeUnsafe()
  const url = await Effect.runPromise(Scope.provide(scope)(TestDatabase.freshPostgres(base)))
  const servers: Array<TestServer.RunningServer> = []
  const clients: Array<Pg.Client> = []
  const connect = async () => {
    const client = new Pg.Client({ connectionString: url })
    await client.connect()
    clients.push(client)
    return client
  }
  const close = async () => {
    for (const client of clients) await client.end().catch(() => undefined)
    for (const server of servers.reverse()) await server.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  try {
    for (let i = 0; i < count; i++) {
      servers.push(
        await TestServer.start({
          database: Database.layerUrl(Redacted.make(url), { maxConnections: 8 }),
          encryptionKeys: keys,
          // The durable engine's own shard-lock timing, not Durable.test.ts's short one: no test here loses a runner,
          // and a 2-second lock deadline missed on a loaded machine makes a runner rebuild its lock connection.
          durable: { cluster: { port: 0 } },
          ...options
        })
      )
    }
    const own = await connect()
    const query = async <Row>(text: string, params: ReadonlyArray<unknown> = []) => (await own.query(text, [...params])).rows as ReadonlyArray<Row>
    const hold = async (text: string, params: ReadonlyArray<unknown> = []): Promise<Held> => {
      const holder = await connect()
      await holder.query("BEGIN")
      await holder.query(text, [...params])
      const pid = (await holder.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number
      return {
        waiters: (count) =>
          Wait.until(async () => {
            const [row] = await query<{ waiting: number }>(
              `SELECT count(*)::int AS waiting FROM pg_stat_activity
               WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
              [pid]
            )
            return row!.waiting >= count
          }, `${count} requests waiting for a lock`),
        release: async () => {
          await holder.query("ROLLBACK")
        }
      }
    }
    return { url, servers, query, hold, close }
  } catch (error) {
    await close()
    throw error
  }
}

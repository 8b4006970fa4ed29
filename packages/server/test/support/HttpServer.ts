/**
 * A real server on a loopback port for the HTTP tests, with a Promise API (`start`, `RunningServer`, `ShiftedClock`,
 * `testSettings`). Each server gets a fresh migrated database (TestDatabase.ts: embedded, or a new database on
 * `DATABASE_URL`'s Postgres, dropped when the server closes), and every statement it runs is recorded for the
 * tenancy check (Tenancy.ts).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { HttpServer } from "effect/http"
import * as Clock from "effect/Clock"
import * as Logger from "effect/Logger"
import * as SqlClient from "effect/sql/SqlClient"
import * as Server from "../../src/Server.js"
import { SETUP_TOKEN } from "../../../../packages/testkit/src/Http.js"
import { ShiftedClock } from "./Clocks.js"
import { watched } from "./Contract.js"
import * as Tenancy from "./Tenancy.js"
import * as TestDatabase from "./TestDatabase.js"
import { encryptionKeys } from "./TestServer.js"

export { ShiftedClock }

/**
 * Settings that keep tests fast and isolated: cheap password hashing, an encryption key of this process,
 * a known setup token (`Http.operator` redeems it; the server logs none of its own), warnings and errors logged only.
 */
export const testSettings: Server.ServerOptions = {
  passwordCost: 10,
  // Tests sign up hundreds of people from loopback; the limit's own tests set theirs.
  signUpsPerHour: 1_000_000,
  // Tests use reset and verification links from loopback by the dozen; the limit's own tests set theirs.
  recoveryRequestsPerAddress: 1_000_000,
  setupToken: SETUP_TOKEN,
  host: "127.0.0.1",
  port: 0,
  encryptionKeys,
  logLevel: "warn",
  // With DATABASE_URL every server is a runner of its database's cluster: on a free port, so tests run side by side.
  durable: { cluster: { port: 0 } }
}

export interface RunningServer {
  /** For example `http://127.0.0.1:41234`. */
  readonly url: string
  readonly close: () => Promise<void>
}

export type Options = Server.ServerOptions & {
  /** The clock the server reads the time from, for example a `ShiftedClock` to make things expire. */
  readonly clock?: Clock.Clock | undefined
  /** Receives the server's log entries, at every level (say, to assert on the per-request line), in place of its own lines. */
  readonly logger?: Logger.Logger<unknown, unknown> | undefined
}

/**
 * Servers of one test file start one after another: an embedded database's start takes a core, and several at
 * once on a loaded machine outlast the first connection's timeout.
 */
let starting: Promise<void> = Promise.resolve()

/** Starts a server on a free loopback port, on a fresh migrated database. */
export const start = async ({ clock, logger, ...options }: Options = {}): Promise<RunningServer> => {
  const previous = starting
  let done = () => {}
  starting = new Promise((resolve) => (done = resolve))
  await previous
  try {
    const settings = { ...testSettings, database: Layer.unwrap(TestDatabase.layer({ migrated: true })), ...options }
    // A logger of the test's is kept by the server's logging (it replaces only Effect's default logger). Without
    // one, the server's lines reach vitest's console (RequestLog.ts), which keeps them with the test that caused them
    // and shows them only when that test fails (`silent: "passed-only"`, vitest.config.ts).
    const logged = logger === undefined
      ? Server.layer(settings, watched)
      : Layer.provide(Server.layer({ ...settings, logLevel: "debug" }, watched), Logger.layer([logger]))
    // Every statement the server runs is recorded for the tenancy check (Tenancy.ts).
    const recorded = Layer.provide(logged, Tenancy.recorder)
    const runtime = ManagedRuntime.make(clock === undefined ? recorded : Layer.provide(recorded, Layer.succeed(Clock.Clock, clock)))
    // A server that refuses to start leaves nothing running behind.
    const address = await runtime.runPromise(Effect.map(Effect.service(HttpServer.HttpServer), (server) => server.address)).catch(async (error) => {
      await runtime.dispose()
      throw error
    })
    return { url: HttpServer.formatAddress(address).replace(/\/$/, ""), close: () => runtime.dispose() }
  } finally {
    done()
  }
}

/**
 * A server on a fresh migrated database that the test shares: `sql` runs statements on it, for what no endpoint
 * writes (bulk rows, a state to reach by hand).
 */
export const startSharingDatabase = async (options: Options = {}) => {
  const database = ManagedRuntime.make(Layer.provideMerge(Layer.unwrap(TestDatabase.layer({ migrated: true })), Tenancy.recorder))
  const context = await database.context()
  const server = await start({ ...options, database: Layer.succeedContext(context) })
  return {
    url: server.url,
    sql: <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => database.runPromise(Effect.flatMap(Effect.service(SqlClient.SqlClient), use)),
    close: async () => {
      await server.close()
      await database.dispose()
    }
  }
}

/** A server for the duration of a scope. */
export const scoped = (options: Options = {}) =>
  Effect.acquireRelease(Effect.promise(() => start(options)), (server) => Effect.promise(server.close))

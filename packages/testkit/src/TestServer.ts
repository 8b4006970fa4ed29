/** A real orgplane server on a loopback port, for tests, examples and benchmarks. */
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { ApiLayer, createHttpServer, type ServerOptions } from "@orgplane/server"
import { Clock, Duration, Effect, Layer, Logger, LogLevel, ManagedRuntime } from "effect"
import { randomBytes } from "node:crypto"
import * as ContractWatch from "./ContractWatch.js"
import { SETUP_TOKEN } from "./Http.js"
import * as TestDatabase from "./TestDatabase.js"

/**
 * Settings that keep tests fast and isolated: cheap password hashing, an encryption key of this process, a known
 * setup token (`Http.operator` redeems it; the server logs none of its own).
 */
export const testSettings: ServerOptions = {
  passwordCost: 10,
  // Tests sign up hundreds of people from loopback; the limit's own tests set theirs.
  signUpsPerHour: 1_000_000,
  // Tests use reset and verification links from loopback by the dozen; the limit's own tests set theirs.
  recoveryRequestsPerAddress: 1_000_000,
  setupToken: SETUP_TOKEN,
  dataDir: "memory",
  host: "127.0.0.1",
  port: 0,
  encryptionKeys: `test:${randomBytes(32).toString("base64")}`,
  // With DATABASE_URL every server is a runner of its database's cluster: on a free port, so tests run side by side.
  durable: { cluster: { port: 0 } }
}

/** A wall clock that tests can move forward: the server's `now` is real time plus `offsetMillis`. */
export class ShiftedClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  offsetMillis = 0
  private readonly real = Clock.make()
  advance(duration: Duration.DurationInput) {
    this.offsetMillis += Duration.toMillis(duration)
  }
  unsafeCurrentTimeMillis() {
    return this.real.unsafeCurrentTimeMillis() + this.offsetMillis
  }
  unsafeCurrentTimeNanos() {
    return this.real.unsafeCurrentTimeNanos() + BigInt(this.offsetMillis) * 1_000_000n
  }
  readonly currentTimeMillis = Effect.sync(() => this.unsafeCurrentTimeMillis())
  readonly currentTimeNanos = Effect.sync(() => this.unsafeCurrentTimeNanos())
  sleep(duration: Duration.Duration) {
    return this.real.sleep(duration)
  }
}

/** Every entry to `logger` when given; otherwise warnings and errors only, so a test run does not print a line per request. */
const logging = (logger: Logger.Logger<unknown, unknown> | undefined) =>
  logger === undefined
    ? Logger.minimumLogLevel(LogLevel.Warning)
    : Layer.merge(Logger.replace(Logger.defaultLogger, logger), Logger.minimumLogLevel(LogLevel.All))

const serverLayer = (options: ServerOptions, clock: Clock.Clock | undefined, logger: Logger.Logger<unknown, unknown> | undefined) =>
  HttpApiBuilder.serve().pipe(
    Layer.provide(ApiLayer({ ...testSettings, database: TestDatabase.layer, ...options })),
    // The standalone server's Node server: what its parser refuses is answered in the error shape, as in production.
    // Every answer it sends is held to the OpenAPI document (ContractWatch.ts).
    Layer.provideMerge(NodeHttpServer.layer(() => ContractWatch.watch(createHttpServer()), { port: 0, host: "127.0.0.1" })),
    clock === undefined ? (layer) => layer : Layer.provide(Layer.setClock(clock)),
    Layer.provide(logging(logger))
  )

export interface RunningServer {
  /** For example `http://127.0.0.1:41234`. */
  readonly url: string
  readonly close: () => Promise<void>
}

export type Options = ServerOptions & {
  /** The clock the server reads the time from, for example a `ShiftedClock` to make things expire. */
  readonly clock?: Clock.Clock | undefined
  /** Receives the server's log entries, at every level (say, to assert on the per-request line). */
  readonly logger?: Logger.Logger<unknown, unknown> | undefined
}

/**
 * Servers of one test file start one after another: an embedded database's start (its WebAssembly Postgres, the
 * template's restore) takes a core, and several at once on a loaded machine outlast the first connection's timeout.
 */
let starting: Promise<void> = Promise.resolve()

/** Starts a server on a free loopback port, on a fresh database. */
export const start = async ({ clock, logger, ...options }: Options = {}): Promise<RunningServer> => {
  const previous = starting
  let done = () => {}
  starting = new Promise((resolve) => (done = resolve))
  await previous
  try {
    const runtime = ManagedRuntime.make(serverLayer(options, clock, logger))
    // A server that refuses to start (its keys do not open the database, say) leaves nothing running behind.
    const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address)).catch(async (error) => {
      await runtime.dispose()
      throw error
    })
    if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
    return { url: `http://127.0.0.1:${address.port}`, close: () => runtime.dispose() }
  } finally {
    done()
  }
}

/**
 * A server on a fresh database that the test shares: `sql` runs statements on it, for what no endpoint writes yet
 * (a connector's memberships) or bulk rows. Its statements are recorded for the tenancy check like the server's.
 */
export const startSharingDatabase = async (options: Options = {}) => {
  const database = ManagedRuntime.make(TestDatabase.layer)
  const runtime = await database.runtime()
  const server = await start({ ...options, database: Layer.succeedContext(runtime.context) })
  return {
    url: server.url,
    sql: <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
      database.runPromise(Effect.flatMap(SqlClient.SqlClient, use)),
    close: async () => {
      await server.close()
      await database.dispose()
    }
  }
}

/** The same, as a scoped Effect. */
export const scoped = (options: Options = {}) =>
  Effect.acquireRelease(Effect.promise(() => start(options)), (server) => Effect.promise(server.close))

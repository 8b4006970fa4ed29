/**
 * The server the commands run against: the server package's own layer on a free loopback port with a throwaway
 * embedded database (what `orgplane serve --data memory` runs), in the test's process, reached over HTTP like any
 * server. Its settings are the `ORGPLANE_*` variables a test names, over a clean environment. A server on a data
 * folder (`options.data`) or on a Postgres (`DATABASE_URL`) is `orgplane serve` in a process of its own, as the
 * client's tests start it: a data folder's lock names the process that holds it, and the commands a test runs on
 * that folder are another process, as they are for a user.
 */
import { Server } from "@orgplane/server"
import * as Clock from "effect/Clock"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { HttpServer } from "effect/http"
import * as TestDatabase from "../../server/test/support/TestDatabase.js"
import * as Spawned from "../../client/test/RealServer.js"

export type { RealServer } from "../../client/test/RealServer.js"

/**
 * Starts a server with `environment` as its whole environment, sign-ups unthrottled (the tests sign up many accounts
 * from one address), password hashing cheap and only warnings logged, and returns once it listens. `options.data`
 * (or a `DATABASE_URL` in `environment`) starts `orgplane serve` out of process instead; `options.clock` is the clock
 * the server in this process reads the time from (a testkit `ShiftedClock`, moved forward to make things expire).
 */
export const start = async (
  environment: Readonly<Record<string, string>> = {},
  options: { readonly data?: string; readonly clock?: Clock.Clock } = {}
): Promise<Spawned.RealServer> => {
  if (options.data !== undefined || environment["DATABASE_URL"] !== undefined) return Spawned.start(environment, options)
  const env = { ORGPLANE_SIGN_UPS_PER_HOUR: "100000", ORGPLANE_PASSWORD_COST: "10", ORGPLANE_LOG_LEVEL: "warn", ...environment }
  // A migrated embedded database of the server suite's (TestDatabase.ts): loaded from the migrated template once per
  // worker, then brought back to it for the next file's server, not started anew for each (with DATABASE_URL set,
  // the server makes its own `memory` one, as `orgplane serve --data memory` does).
  const database = TestDatabase.onPostgres ? undefined : Layer.unwrap(TestDatabase.layer({ migrated: true }))
  const server = Server.layer({ host: "127.0.0.1", port: 0, dataDir: "memory", database }).pipe(
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))
  )
  const runtime = ManagedRuntime.make(options.clock === undefined ? server : Layer.provide(server, Layer.succeed(Clock.Clock, options.clock)))
  const address = await runtime.runPromise(Effect.map(Effect.service(HttpServer.HttpServer), (server) => server.address)).catch(
    async (error: unknown) => {
      await runtime.dispose()
      throw error
    }
  )
  return { url: HttpServer.formatAddress(address).replace(/\/$/, ""), close: () => runtime.dispose() }
}

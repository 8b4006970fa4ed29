/**
 * The orgplane server under benchmark, alone in its own process: `makeNodeListener` of the checkout at
 * ORGPLANE_BENCH_ROOT (default: this repository), its `packages/server` (Effect 4 since 0.2.0, Effect 3 before), configured
 * from the environment the harness gives it
 * (DATABASE_URL or the embedded database, cheap password hashing), served by a plain `node:http` server (child.ts).
 * The server's database is opened here and handed to it (its `database` option), so that the harness can seed in
 * bulk through the server's own connection (child.ts's `sql` message) what would take hours over HTTP. Started by run.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { serve } from "./child.js"
import { serverDependencies } from "./dependency.js"

interface NodeListener {
  readonly listener: (request: IncomingMessage, response: ServerResponse) => void
  readonly dispose: () => Promise<void>
}

interface ServerModule {
  readonly makeNodeListener: (options: { readonly passwordCost?: number; readonly dataDir?: string; readonly database?: unknown }) => Promise<NodeListener>
  /** Absent from older checkouts: they are measured without bulk seeding. */
  readonly Database?: { readonly layer: any }
  readonly configLayer?: (options: { readonly passwordCost?: number; readonly dataDir?: string }) => any
}

const root = Path.resolve(process.env.ORGPLANE_BENCH_ROOT ?? Path.join(import.meta.dirname, ".."))
const serverPackage = Path.join(root, "packages", "server")
// Imported by path, not by package name: the name would resolve in this repository, not in the checkout measured.
const server = (await import(pathToFileURL(Path.join(serverPackage, "src/index.ts")).href)) as ServerModule

/** A dependency as the checkout's server imports it (see dependency.ts). */
const dependency = serverDependencies(serverPackage)

// Without DATABASE_URL: a throwaway embedded database, as in tests.
// The quotas off (a benchmark makes far more accounts, keys and invitations from loopback); older servers ignore them.
const options = {
  passwordCost: 10,
  dataDir: "memory",
  signUpsPerHour: 1_000_000,
  organizationsPerUser: 1_000_000,
  apiKeysPerMember: 1_000_000,
  pendingInvitationsPerOrganization: 1_000_000
}

if (server.Database === undefined || server.configLayer === undefined) {
  const { listener, dispose } = await server.makeNodeListener(options)
  await serve(listener, dispose)
} else {
  const { Effect, Layer, ManagedRuntime } = await dependency("effect")
  // Effect 4 holds the SQL client in `effect/sql`; Effect 3 (a checkout before 0.2.0) in `@effect/sql`.
  const { SqlClient } = await dependency("effect", "sql").catch(() => dependency("@effect/sql"))
  const database = ManagedRuntime.make(server.Database.layer.pipe(Layer.provide(server.configLayer(options))))
  // Effect 4's ManagedRuntime answers its context; Effect 3's, a runtime holding it.
  const context = typeof database.context === "function" ? await database.context() : (await database.runtime()).context
  const { listener, dispose } = await server.makeNodeListener({ ...options, database: Layer.succeedContext(context) })
  const sql = (text: string, params: ReadonlyArray<unknown>) =>
    database.runPromise(Effect.gen(function*() {
      // A service key is an effect in Effect 3 and yieldable in both lines.
      const client: any = yield* SqlClient.SqlClient
      return yield* client.unsafe(text, params)
    })) as Promise<ReadonlyArray<unknown>>
  await serve(listener, async () => {
    await dispose()
    await database.dispose()
  }, sql)
}

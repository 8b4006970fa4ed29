/**
 * The orgplane server under benchmark, alone in its own process: `makeNodeListener` of the checkout at
 * ORGPLANE_BENCH_ROOT (default: this repository), its `packages/server` (Effect 4 since 0.2.0, Effect 3 before), configured
 * from the environment the harness gives it
 * (DATABASE_URL or the embedded database, cheap password hashing), served by a plain `node:http` server (child.ts).
 * The server's database is opened here and handed to it (its `database` option), so that the harness can seed in
 * bulk through the server's own connection (child.ts's `sql` message) what would take hours over HTTP. Started by run.ts.
 *
 * With ORGPLANE_BENCH_LEAVE_OUT (`pnpm bench --layers`, layers.ts), the steps of the request path it names are left out
 * (the server's platform/Ablation.ts: `LeftOut`, handed to the server beside its database, since no setting of the
 * server's sets it).
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

/** A value of the checkout's `effect` this file passes along without reading it: piped, provided, run. */
interface Pipeable {
  readonly pipe: (f: (self: unknown) => unknown) => unknown
}

interface ServerModule {
  readonly makeNodeListener: (options: { readonly passwordCost?: number; readonly dataDir?: string; readonly database?: unknown }) => Promise<NodeListener>
  /** Absent from older checkouts: they are measured without bulk seeding. */
  readonly Database?: { readonly layer: Pipeable }
  readonly configLayer?: (options: { readonly passwordCost?: number; readonly dataDir?: string }) => unknown
}

/** A ManagedRuntime of either line: Effect 4's answers its context (`context()`), Effect 3's a runtime holding it. */
interface Runtime {
  readonly context?: (() => Promise<unknown>) | undefined
  readonly runtime?: () => Promise<{ readonly context: unknown }>
  readonly runPromise: (effect: unknown) => Promise<unknown>
  readonly dispose: () => Promise<void>
}

/** What this file uses of the checkout's `effect` (Effect 4, or Effect 3 before 0.2.0). */
interface EffectModule {
  readonly Effect: { readonly gen: (body: () => Generator<unknown, unknown, unknown>) => unknown }
  readonly Layer: { readonly provide: (that: unknown) => (self: unknown) => unknown; readonly succeedContext: (context: unknown) => unknown }
  readonly ManagedRuntime: { readonly make: (layer: unknown) => Runtime }
  readonly Context: { readonly add: (self: unknown, key: unknown, service: unknown) => unknown }
}

/** What this file uses of the checkout's platform/Ablation.ts (absent from checkouts before `--layers`). */
interface AblationModule {
  readonly steps: ReadonlyArray<string>
  readonly LeftOut: unknown
}

/** The SQL client's key (yieldable in both lines: an effect in Effect 3, a service key in Effect 4), and the client. */
interface SqlModule {
  readonly SqlClient: { readonly SqlClient: Iterable<unknown, unknown, unknown> }
}
interface SqlClientLike {
  readonly unsafe: (text: string, params: ReadonlyArray<unknown>) => Iterable<unknown, unknown, unknown>
}

const has = (value: unknown, ...names: ReadonlyArray<string>) =>
  (typeof value === "object" || typeof value === "function") && value !== null && names.every((name) => name in value)
const isEffectModule = (module: unknown): module is EffectModule => has(module, "Effect", "Layer", "ManagedRuntime", "Context")
const isAblationModule = (module: unknown): module is AblationModule => has(module, "steps", "LeftOut")
const isSqlModule = (module: unknown): module is SqlModule => has(module, "SqlClient")
const isSqlClient = (client: unknown): client is SqlClientLike => has(client, "unsafe")

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

/** The database's context, with the steps ORGPLANE_BENCH_LEAVE_OUT names left out beside it (none when unset). */
async function leavingOut(effect: EffectModule, context: unknown) {
  const names = (process.env.ORGPLANE_BENCH_LEAVE_OUT ?? "").split(",").map((name) => name.trim()).filter((name) => name !== "")
  if (names.length === 0) return context
  const ablation: unknown = await import(pathToFileURL(Path.join(serverPackage, "src/platform/Ablation.ts")).href).catch(() => undefined)
  if (!isAblationModule(ablation)) throw new Error("ORGPLANE_BENCH_LEAVE_OUT: this checkout's server has no platform/Ablation.ts")
  const unknown = names.filter((name) => !ablation.steps.includes(name))
  if (unknown.length > 0) throw new Error(`ORGPLANE_BENCH_LEAVE_OUT: ${unknown.join(", ")} is none of ${ablation.steps.join(", ")}`)
  return effect.Context.add(context, ablation.LeftOut, new Set(names))
}

if (server.Database === undefined || server.configLayer === undefined) {
  const { listener, dispose } = await server.makeNodeListener(options)
  await serve(listener, dispose)
} else {
  const effect = await dependency("effect")
  // Effect 4 holds the SQL client in `effect/sql`; Effect 3 (a checkout before 0.2.0) in `@effect/sql`.
  const sqlModule = await dependency("effect", "sql").catch(() => dependency("@effect/sql"))
  if (!isEffectModule(effect) || !isSqlModule(sqlModule)) throw new Error("the checkout's effect has no Effect, Layer, ManagedRuntime or SqlClient")
  const { Effect, Layer, ManagedRuntime } = effect
  const { SqlClient } = sqlModule
  const database = ManagedRuntime.make(server.Database.layer.pipe(Layer.provide(server.configLayer(options))))
  // Effect 4's ManagedRuntime answers its context; Effect 3's, a runtime holding it.
  const context = typeof database.context === "function" ? await database.context() : (await database.runtime?.())?.context
  const { listener, dispose } = await server.makeNodeListener({ ...options, database: Layer.succeedContext(await leavingOut(effect, context)) })
  const sql = (text: string, params: ReadonlyArray<unknown>) =>
    database.runPromise(Effect.gen(function*() {
      // A service key is an effect in Effect 3 and yieldable in both lines.
      const client = yield* SqlClient.SqlClient
      if (!isSqlClient(client)) throw new Error("the SQL client has no unsafe")
      return yield* client.unsafe(text, params)
    })) as Promise<ReadonlyArray<unknown>>
  await serve(listener, async () => {
    await dispose()
    await database.dispose()
  }, sql)
}

/**
 * A server-like process for Durable.test.ts: the durable engine over a database (`DURABLE_DATABASE`: a Postgres
 * URL, then this process is a cluster runner on a free port; or `dir:<folder>`, the embedded database on disk with
 * the single runner; a new folder is loaded from the dumped database at `DURABLE_TEMPLATE` when set, not made by
 * initdb), with the test workflow registered. Driven over the IPC channel: `start` (a workflow, not
 * waiting for it), `runs` (the recorded activity executions), `openGate`; answers each with `{ id, ok | error }`.
 * The test kills it with SIGKILL to simulate a crash; it exits by itself when the test goes away.
 */
import * as Effect from "effect/Effect"
import * as Fs from "node:fs/promises"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as References from "effect/References"
import * as Database from "../../src/platform/Database.js"
import * as Durable from "../../src/platform/Durable.js"
import * as Workflows from "./Workflows.js"

/**
 * Short locks and polls, so a lost runner's shards move within seconds; shared with the test. Not shorter: a lock
 * operation that misses its deadline (the refresh interval) on a loaded machine makes the runner rebuild its lock
 * connection, which drops every advisory lock it holds while its entities still run.
 */
export const testTuning: Durable.Tuning = {
  entityMessagePollInterval: "200 millis",
  refreshAssignmentsInterval: "300 millis",
  shardLockRefreshInterval: "2 seconds",
  shardLockExpiration: "6 seconds",
  runnerHealthCheckInterval: "1 second",
  entityTerminationTimeout: "1 second"
}

export type Request =
  | { readonly id: number; readonly type: "start"; readonly payload: Workflows.Payload }
  | { readonly id: number; readonly type: "runs" }
  | { readonly id: number; readonly type: "openGate" }

const main = () => {
  const database = process.env["DURABLE_DATABASE"] ?? ""
  const embedded = database.startsWith("dir:")
  const template = process.env["DURABLE_TEMPLATE"]
  const newFolder = template === undefined
    ? undefined
    : { dump: Effect.promise(() => Fs.readFile(template).then((bytes) => new Blob([bytes]))), damaged: Effect.void }
  const layer = Workflows.layerWithSetup.pipe(
    Layer.provideMerge(
      embedded
        ? Durable.layerSingle({ sharding: testTuning })
        : Durable.layerCluster({ host: "127.0.0.1", listenHost: "127.0.0.1", port: 0 }, { sharding: testTuning })
    ),
    Layer.provideMerge(
      embedded
        ? Database.layerEmbedded({ dataDir: database.slice("dir:".length), newFolder })
        : Database.layerUrl(Redacted.make(database), { maxConnections: 4 })
    ),
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
  )
  const runtime = ManagedRuntime.make(layer)

  const handle = (request: Request): Effect.Effect<unknown, unknown, Layer.Success<typeof layer>> => {
    switch (request.type) {
      case "start":
        return Workflows.Sync.execute(request.payload, { discard: true })
      case "runs":
        return Workflows.runs
      case "openGate":
        return Workflows.openGate
    }
  }

  let stopping = false
  const stop = () => {
    if (stopping) return
    stopping = true
    void runtime.dispose().finally(() => process.exit(0))
    setTimeout(() => process.exit(0), 5000).unref()
  }
  process.on("SIGTERM", stop)
  process.on("disconnect", stop)
  process.on("message", (request: Request) => {
    runtime.runPromise(handle(request)).then(
      (value) => process.send?.({ id: request.id, ok: value }),
      (error) => process.send?.({ id: request.id, error: String(error) })
    )
  })
  runtime.context().then(
    () => process.send?.({ ready: process.pid }),
    (error) => {
      process.stderr.write(`runner failed to start: ${String(error)}\n`)
      process.exit(1)
    }
  )
}

if (process.env["DURABLE_DATABASE"] !== undefined) main()

/**
 * platform/Durable.ts: `effect/workflow` on `effect/cluster` over our own database layers. In process: a workflow
 * completes, a transient failure is retried with
 * backoff, a permanent one fails the workflow with its reason stored, a repeated execution id runs once. Across
 * processes (test/durable/runner.ts): a runner killed mid-workflow and a new one on the same database finish it
 * without re-running what completed; on Postgres, two runners share the work and one finishes what the other, killed,
 * left (the durable sync's crash recovery across two runners, ConnectorSyncDurable.test.ts's, on the test workflow).
 * Then what the whole server relies on: `Durable.layer`'s choice of runner and its pool check, the
 * cluster's tables under our prefix, the start behind the StartGate, an engine that cannot start.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as TestClock from "effect/testing/TestClock"
import type { WorkflowEngine } from "effect/workflow/WorkflowEngine"
import type * as Sharding from "effect/cluster/Sharding"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { ServerConfig, type ServerSettings, settingsConfig } from "../src/platform/Config.js"
import * as Database from "../src/platform/Database.js"
import * as Durable from "../src/platform/Durable.js"
import { StartGate } from "../src/platform/DurableStartGate.js"
import { type Request, testTuning } from "./durable/runner.js"
import * as Workflows from "./durable/Workflows.js"
import * as TestDatabase from "./support/TestDatabase.js"
import { v8Flags } from "../../../packages/testkit/src/ShortLived.js"

const onPostgres = TestDatabase.postgresUrl !== undefined

const engine = onPostgres
  ? Durable.layerCluster({ host: "127.0.0.1", listenHost: "127.0.0.1", port: 0 }, { sharding: testTuning })
  : Durable.layerSingle({ sharding: testTuning })

// The engine runs on real time (its locks, polls and retries sleep), so no TestClock here.
const Engine = Workflows.layerWithSetup.pipe(Layer.provideMerge(engine), Layer.provideMerge(Layer.unwrap(TestDatabase.layer({ migrated: true }))))

/** The typed failure an exit ended with, if any (an exit compared whole would compare its stack annotations too). */
const failureOf = <A, E>(exit: Exit.Exit<A, E>): Option.Option<E> =>
  Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : Option.none()

/** The defect an exit died with, if any. */
const defectOf = <A, E>(exit: Exit.Exit<A, E>): unknown => {
  if (Exit.isSuccess(exit)) return undefined
  const found = Cause.findDefect(exit.cause)
  return found._tag === "Success" ? found.success : undefined
}

const readClusterExit = (env: Record<string, string>) =>
  Effect.runPromiseExit(
    Effect.gen(function*() {
      return yield* Durable.clusterConfig
    }).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))
  )

/** The settings read from `env`, or the refusal's text. */
const readCluster = async (env: Record<string, string>) => {
  const exit = await readClusterExit(env)
  return Exit.isSuccess(exit) ? exit.value : Cause.pretty(exit.cause)
}

describe("the runner's settings", () => {
  it("documents its variables and defaults; keeps the tables' prefix the databases of earlier releases have", () => {
    expect(Durable.environment).toEqual([
      [
        "ORGPLANE_CLUSTER_HOST",
        "127.0.0.1",
        "With DATABASE_URL: the address other server processes reach this one at for background work (a private network: the runner protocol has no authentication)."
      ],
      [
        "ORGPLANE_CLUSTER_LISTEN_HOST",
        "ORGPLANE_CLUSTER_HOST",
        "Interface the runner listens on (for example 0.0.0.0 in a container whose ORGPLANE_CLUSTER_HOST is its service name)."
      ],
      ["ORGPLANE_CLUSTER_PORT", "34431", "Port the runner listens on; 0 picks a free port (announced to the others as it is)."]
    ])
    expect(Durable.defaults).toEqual({ entityTerminationTimeout: "5 seconds", refreshAssignmentsInterval: "10 seconds" })
    expect(Durable.defaultPrefix).toBe("orgplane_cluster")
    expect(Durable.defaultClusterPort).toBe(34431)
  })

  it("reads ORGPLANE_CLUSTER_*: the listen host defaults to the host, 0 is a free port, a port out of range is refused", async () => {
    expect(await readCluster({})).toEqual({ host: "127.0.0.1", listenHost: "127.0.0.1", port: 34431 })
    expect(await readCluster({ ORGPLANE_CLUSTER_HOST: "orgplane-1", ORGPLANE_CLUSTER_PORT: "0" })).toEqual({ host: "orgplane-1", listenHost: "orgplane-1", port: 0 })
    expect(await readCluster({ ORGPLANE_CLUSTER_HOST: "orgplane-1", ORGPLANE_CLUSTER_LISTEN_HOST: "0.0.0.0", ORGPLANE_CLUSTER_PORT: "4000" }))
      .toEqual({ host: "orgplane-1", listenHost: "0.0.0.0", port: 4000 })
    expect(await readCluster({ ORGPLANE_CLUSTER_PORT: "70000" })).toContain("must be a port number (0 for a free one)")
  })
})

describe("Durable.retry", () => {
  it.effect("waits a growing, jittered delay before each attempt: from its base, doubling, at 80-120%", () =>
    Effect.gen(function*() {
      // On the test clock: each attempt runs at the instant its delay ends.
      const attempts: Array<number> = []
      const flaky = Effect.flatMap(Clock.currentTimeMillis, (now) => {
        attempts.push(now)
        return attempts.length < 4 ? Effect.fail("transient" as const) : Effect.succeed("done")
      })
      const running = yield* Effect.forkChild(flaky.pipe(Durable.retry({ base: "100 millis", times: 4, while: () => true })))
      yield* TestClock.adjust("10 seconds")
      expect(yield* Fiber.join(running)).toBe("done")
      const gaps = attempts.slice(1).map((at, i) => at - attempts[i]!)
      expect(gaps).toHaveLength(3)
      gaps.forEach((gap, i) => {
        expect(gap).toBeGreaterThanOrEqual(100 * 2 ** i * 0.8)
        expect(gap).toBeLessThanOrEqual(100 * 2 ** i * 1.2)
      })
    }))

  it.effect("gives up after `times` retries with the last error, and never retries an error `while` refuses", () =>
    Effect.gen(function*() {
      let calls = 0
      const failing = Effect.suspend(() => Effect.fail(`failure ${++calls}`))
      const running = yield* Effect.forkChild(Effect.flip(failing.pipe(Durable.retry({ base: "10 millis", times: 2, while: () => true }))))
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(running)).toBe("failure 3")
      calls = 0
      expect(yield* Effect.flip(failing.pipe(Durable.retry({ base: "10 millis", times: 2, while: () => false })))).toBe("failure 1")
    }))
})

const runsOf = (executionId: string) =>
  Effect.map(Workflows.runs, (runs) => runs.filter((run) => run.executionId === executionId))

layer(Engine, { timeout: 60_000, excludeTestServices: true })(
  `durable engine, in process (${onPostgres ? "cluster runner on Postgres" : "single runner on the embedded database"})`,
  (it) => {
    it.effect("runs a workflow's activities in order to its result", () =>
      Effect.gen(function*() {
        const payload = { target: "acme/plain", revision: "r1", mode: "plain" } as const
        const result = yield* Workflows.Sync.execute(payload)
        expect(result).toEqual({ applied: "tree of acme/plain@r1" })
        const runs = yield* runsOf(yield* Workflows.Sync.executionId(payload))
        expect(runs.map((run) => run.activity)).toEqual(["fetch", "apply", "done"])
      }))

    it.effect("retries a transient failure with growing, jittered delays and completes", () =>
      Effect.gen(function*() {
        const payload = { target: "acme/flaky", revision: "r1", mode: "flaky" } as const
        const result = yield* Workflows.Sync.execute(payload)
        expect(result).toEqual({ applied: "tree of acme/flaky@r1" })
        const fetches = (yield* runsOf(yield* Workflows.Sync.executionId(payload))).filter((run) => run.activity === "fetch")
        // Each attempt is its own durable execution: 1 and 2 failed, 3 succeeded. (The delays between them are
        // Durable.retry's, checked on the test clock above.)
        expect(fetches.map((run) => run.attempt)).toEqual([1, 2, 3])
      }))

    it.effect("fails at once on a permanent error, with the reason stored for anyone who polls", () =>
      Effect.gen(function*() {
        const payload = { target: "acme/gone", revision: "r1", mode: "fatal" } as const
        const exit = yield* Effect.exit(Workflows.Sync.execute(payload))
        expect(failureOf(exit)).toEqual(Option.some(new Workflows.Permanent({ reason: "repository not found" })))
        const executionId = yield* Workflows.Sync.executionId(payload)
        const runs = yield* runsOf(executionId)
        expect(runs.map((run) => `${run.activity}/${run.attempt}`)).toEqual(["fetch/1"])
        // The outcome is in storage, not only in the caller's hands.
        const polled = Option.getOrUndefined(yield* Workflows.Sync.poll(executionId))
        expect(polled?._tag).toBe("Complete")
        expect(polled?._tag === "Complete" ? failureOf(polled.exit) : undefined).toEqual(
          Option.some(new Workflows.Permanent({ reason: "repository not found" }))
        )
      }))

    it.effect("runs one execution per (target, revision): a redelivery gets the first run's result", () =>
      Effect.gen(function*() {
        const first = { target: "acme/twice", revision: "r7", mode: "plain" } as const
        // Two deliveries at once: one execution, both callers get its result.
        const results = yield* Effect.all([Workflows.Sync.execute(first), Workflows.Sync.execute(first)], { concurrency: "unbounded" })
        // Same key, different rest of the payload, once the first has finished: still that execution's result (sent
        // concurrently, whichever payload reaches storage first would win, so that is not asserted).
        const again = { target: "acme/twice", revision: "r7", mode: "fatal" } as const
        const later = yield* Workflows.Sync.execute(again)
        expect(results).toEqual([{ applied: "tree of acme/twice@r7" }, { applied: "tree of acme/twice@r7" }])
        expect(later).toEqual({ applied: "tree of acme/twice@r7" })
        const runs = yield* runsOf(yield* Workflows.Sync.executionId(first))
        expect(runs.map((run) => run.activity)).toEqual(["fetch", "apply", "done"])
        // Another revision is another execution.
        yield* Workflows.Sync.execute({ ...first, revision: "r8" })
        expect(yield* runsOf(yield* Workflows.Sync.executionId({ ...first, revision: "r8" }))).toHaveLength(3)
      }))
  }
)

// --- Durable.layer: the runner it chooses, its checks, its start ---------------------------------------------------

/** The environment's settings with `over` on top. */
const serverConfig = (over: Partial<ServerSettings>) =>
  Layer.effect(ServerConfig, Effect.map(settingsConfig, (settings) => ({ ...settings, ...over })))

/** The tables of `prefix`'s cluster that exist. */
const clusterTables = (prefix: string) =>
  SqlClient.SqlClient.use((sql) =>
    sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_name LIKE ${`${prefix}_%`} ORDER BY table_name`
  ).pipe(Effect.map((rows) => rows.map((row) => row.name)), Effect.orDie)

const messageTables = (prefix: string) => [`${prefix}_messages`, `${prefix}_migrations`, `${prefix}_replies`]
const runnerTables = (prefix: string) => [`${prefix}_locks`, `${prefix}_runner_migrations`, `${prefix}_runners`]

/** A fresh database, the test workflow, and the engine `Durable.layer` chooses under `settings` on top of it. */
const serverEngine = (
  settings: Partial<ServerSettings>,
  options: Durable.Options,
  database: Layer.Layer<SqlClient.SqlClient, unknown> = Layer.unwrap(TestDatabase.layer({ migrated: true }))
) =>
  Workflows.layerWithSetup.pipe(
    Layer.provideMerge(Durable.layer(options)),
    Layer.provideMerge(database),
    Layer.provide(serverConfig(settings))
  )

/** A fresh database whose pool says it has one connection (over the URL pool's own size on Postgres). */
const oneConnection = Layer.unwrap(TestDatabase.layer({ migrated: true })).pipe(Layer.merge(Layer.succeed(Database.PoolSize, 1)))

const aUrl = Redacted.make("postgres://unused@127.0.0.1:1/unused")

describe("Durable.layer", () => {
  it.live("without DATABASE_URL: the single runner, its messages in the cluster's tables under our prefix", () =>
    Effect.gen(function*() {
      const result = yield* Workflows.Sync.execute({ target: "acme/single", revision: "r1", mode: "plain" })
      expect(result).toEqual({ applied: "tree of acme/single@r1" })
      // The runner storage is in memory: no runner tables.
      expect(yield* clusterTables(Durable.defaultPrefix)).toEqual(messageTables("orgplane_cluster"))
    }).pipe(Effect.provide(serverEngine({ databaseUrl: undefined }, { sharding: testTuning }))), 60_000)

  it.live("a prefix of our own names the cluster's tables", () =>
    Effect.gen(function*() {
      yield* Workflows.Sync.execute({ target: "acme/prefix", revision: "r1", mode: "plain" })
      expect(yield* clusterTables("host_app")).toEqual(messageTables("host_app"))
      expect(yield* clusterTables(Durable.defaultPrefix)).toEqual([])
    }).pipe(Effect.provide(serverEngine({ databaseUrl: undefined }, { sharding: testTuning, prefix: "host_app" }))), 60_000)

  it.live("with DATABASE_URL but a database of one connection given in code: the single runner", () =>
    Effect.gen(function*() {
      yield* Workflows.Sync.execute({ target: "acme/one", revision: "r1", mode: "plain" })
      expect(yield* clusterTables(Durable.defaultPrefix)).toEqual(messageTables("orgplane_cluster"))
    }).pipe(
      Effect.provide(serverEngine(
        { databaseUrl: aUrl, dbPoolSize: 10 },
        { sharding: testTuning },
        oneConnection
      ))
    ), 60_000)

  it.live("with DATABASE_URL and ORGPLANE_DB_POOL_SIZE 1: refused before anything starts", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Layer.build(
        serverEngine(
          { databaseUrl: aUrl, dbPoolSize: 1 },
          {},
          oneConnection
        )
      ))
      const defect = defectOf(exit)
      expect(defect).toBeInstanceOf(Error)
      expect(defect instanceof Error ? defect.message : undefined).toBe(
        "ORGPLANE_DB_POOL_SIZE must be at least 2 with DATABASE_URL: the durable engine keeps one connection for its shard locks"
      )
    }), 60_000)

  it.live.runIf(onPostgres)("a plain PgClient of one connection (no PoolSize): its maxConnections is the pool size checked (Postgres only)", () =>
    Effect.gen(function*() {
      const url = yield* TestDatabase.freshPostgres(TestDatabase.postgresUrl ?? "")
      const plain = PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })
      const exit = yield* Effect.exit(Layer.build(serverEngine({ databaseUrl: aUrl, dbPoolSize: 1 }, {}, plain)))
      const defect = defectOf(exit)
      expect(defect instanceof Error ? defect.message : undefined).toBe(
        "ORGPLANE_DB_POOL_SIZE must be at least 2 with DATABASE_URL: the durable engine keeps one connection for its shard locks"
      )
    }), 60_000)

  it.live.runIf(onPostgres)("with DATABASE_URL: a cluster runner, registered at its bound port, its tables under our prefix (Postgres only)", () =>
    Effect.gen(function*() {
      yield* Workflows.Sync.execute({ target: "acme/cluster", revision: "r1", mode: "plain" })
      expect(yield* clusterTables(Durable.defaultPrefix)).toEqual([...runnerTables("orgplane_cluster"), ...messageTables("orgplane_cluster")].sort())
      const runners = yield* SqlClient.SqlClient.use((sql) => sql<{ address: string }>`SELECT address FROM orgplane_cluster_runners`).pipe(Effect.orDie)
      expect(runners).toHaveLength(1)
      // Port 0 asked for a free port: the runner announces the one it bound.
      expect(runners[0]!.address).toMatch(/^127\.0\.0\.1:[1-9]\d*$/)
    }).pipe(
      Effect.provide(serverEngine(
        { databaseUrl: aUrl },
        { sharding: testTuning, cluster: { host: "127.0.0.1", listenHost: "127.0.0.1", port: 0 } }
      ))
    ), 60_000)

  it.live.runIf(onPostgres)("with DATABASE_URL and runner \"single\": the engine in this process alone, no runner port, and a second single runner on the database refused (Postgres only)", () =>
    Effect.gen(function*() {
      const url = Redacted.make(yield* TestDatabase.freshPostgres(TestDatabase.postgresUrl ?? ""))
      const single = (prefix?: string) =>
        serverEngine({ databaseUrl: aUrl }, { sharding: testTuning, runner: "single", ...(prefix === undefined ? {} : { prefix }) }, Database.layerUrl(url, { maxConnections: 4 }))
      const first = yield* Layer.build(single())
      const result = yield* Workflows.Sync.execute({ target: "acme/alone", revision: "r1", mode: "plain" }).pipe(Effect.provide(first))
      expect(result).toEqual({ applied: "tree of acme/alone@r1" })
      // Runner storage in memory: no runner tables, so no address announced and no port bound.
      expect(yield* clusterTables(Durable.defaultPrefix).pipe(Effect.provide(first))).toEqual(messageTables("orgplane_cluster"))
      const second = yield* Effect.exit(Layer.build(single()))
      const defect = defectOf(second)
      expect(defect).toBeInstanceOf(Durable.SingleRunnerTaken)
      expect(defect instanceof Error ? defect.message : undefined).toBe(
        `another orgplane process already runs the durable engine alone on this database (durable: { runner: "single" }, tables orgplane_cluster_*): only one process may. Run one process per database with runner "single", or every process as a cluster runner (the default; each on its own ORGPLANE_CLUSTER_PORT)`
      )
      // Another prefix is another engine's: its own lock.
      yield* Layer.build(single("host_app"))
    }).pipe(Effect.scoped), 60_000)

  it.live("starts once the StartGate opens: layers that register build at once, calls wait for the engine", () =>
    Effect.gen(function*() {
      const gate = yield* StartGate
      const payload = { target: "acme/gate", revision: "r1", mode: "plain" } as const
      const running = yield* Effect.forkChild(Workflows.Sync.execute(payload))
      yield* Effect.sleep("1500 millis")
      // Nothing of the engine has run: not even its tables exist.
      expect(running.pollUnsafe()).toBeUndefined()
      expect(yield* clusterTables(Durable.defaultPrefix)).toEqual([])
      expect(yield* Deferred.isDone(gate)).toBe(false)
      yield* StartGate.open
      expect(yield* Fiber.join(running)).toEqual({ applied: "tree of acme/gate@r1" })
      expect(yield* runsOf(yield* Workflows.Sync.executionId(payload))).toHaveLength(3)
    }).pipe(
      Effect.provide(serverEngine(
        { databaseUrl: onPostgres ? aUrl : undefined },
        { sharding: testTuning, cluster: { host: "127.0.0.1", listenHost: "127.0.0.1", port: 0 } }
      ).pipe(Layer.provideMerge(StartGate.layer)))
    ), 60_000)

  it.live("an engine that cannot start: every call waiting for it dies with that cause", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Workflows.Sync.execute({ target: "acme/broken", revision: "r1", mode: "plain" }))
      const defect = defectOf(exit)
      expect(defect).toBeInstanceOf(Error)
      expect(defect instanceof Error ? defect.message : undefined).toBe("no engine today")
    }).pipe(Effect.provide(
      Workflows.layer.pipe(
        Layer.provideMerge(Durable.inBackground(Layer.effectContext<WorkflowEngine | Sharding.Sharding, Error, never>(Effect.fail(new Error("no engine today"))))),
        Layer.provide(Layer.unwrap(TestDatabase.layer({ migrated: true })))
      )
    )), 30_000)
})

// --- Runner processes -------------------------------------------------------------------------------------------

const serverRoot = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")

/** A request without its id (the runner numbers them). */
type Call = Request extends infer R ? R extends Request ? Omit<R, "id"> : never : never

interface Runner {
  readonly pid: number
  readonly call: (request: Call) => Effect.Effect<unknown>
  readonly kill: Effect.Effect<void>
}

const Reply = Schema.Struct({ id: Schema.Number, ok: Schema.optional(Schema.Unknown), error: Schema.optional(Schema.String) })
const isReply = Schema.is(Reply)

/** Starts test/durable/runner.ts on `database` (with `env`); killed (if still alive) when the scope closes. */
const startRunner = ({ database, env }: { readonly database: string; readonly env: Record<string, string> }) =>
  Effect.gen(function*() {
    const child: ChildProcess = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, [...v8Flags, "--conditions=@orgplane/source", "--import", "tsx", "test/durable/runner.ts"], {
          cwd: serverRoot,
          env: { ...process.env, ...env, DURABLE_DATABASE: database },
          stdio: ["ignore", "inherit", "inherit", "ipc"]
        })
      ),
      (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
    )
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    const pending = new Map<number, (reply: typeof Reply.Type) => void>()
    let nextId = 0
    const ready = new Promise<number>((resolve, reject) => {
      child.on("message", (message: unknown) => {
        if (Predicate.hasProperty(message, "ready") && typeof message.ready === "number") resolve(message.ready)
        else if (isReply(message)) pending.get(message.id)?.(message)
      })
      void exited.then(() => reject(new Error("runner exited before it was ready")))
    })
    const pid = yield* Effect.promise(() => ready)
    const runner: Runner = {
      pid,
      call: (request) =>
        Effect.callback<unknown, Error>((resume) => {
          const id = nextId++
          pending.set(id, (reply) => resume(reply.error === undefined ? Effect.succeed(reply.ok) : Effect.fail(new Error(reply.error))))
          child.send({ ...request, id })
        }).pipe(Effect.orDie),
      kill: Effect.promise(() => {
        child.kill("SIGKILL")
        return exited
      })
    }
    return runner
  })

const RunRow = Schema.Struct({ executionId: Schema.String, activity: Schema.String, attempt: Schema.Number, pid: Schema.Number })
type RunRow = typeof RunRow.Type
const decodeRuns = Schema.decodeUnknownEffect(Schema.Array(RunRow))

/** The recorded activity executions, as a runner reports them. */
const runsFrom = (runner: Runner) => Effect.orDie(Effect.flatMap(runner.call({ type: "runs" }), decodeRuns))

/** Polls `read` until `done` holds (the engine's work happens in other processes, at its own pace). */
const eventually = <A>(read: Effect.Effect<A>, done: (value: A) => boolean, timeout: Duration.Input = "20 seconds") =>
  read.pipe(
    Effect.filterOrFail(done, () => "not yet"),
    Effect.retry(Schedule.spaced("100 millis")),
    Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.die(new Error("condition not reached in time")) }),
    Effect.orDie
  )

const count = (runs: ReadonlyArray<RunRow>, activity: string, executionId?: string) =>
  runs.filter((run) => run.activity === activity && (executionId === undefined || run.executionId === executionId)).length

/**
 * A fresh database for runner processes: a new data folder on disk, which the first runner loads from the tests'
 * migrated template (written beside it) rather than making it by initdb, or a new database on DATABASE_URL.
 */
const freshDatabase = Effect.gen(function*() {
  if (TestDatabase.postgresUrl !== undefined) return { database: yield* TestDatabase.freshPostgres(TestDatabase.postgresUrl), env: {} }
  const dir = yield* Effect.acquireRelease(
    Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-test-durable-"))),
    (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
  )
  const template = Path.join(dir, "template.tar")
  const dump = yield* Effect.promise(TestDatabase.embeddedMigrated)
  yield* Effect.promise(async () => Fs.writeFile(template, Buffer.from(await dump.arrayBuffer())))
  return { database: `dir:${Path.join(dir, "data")}`, env: { DURABLE_TEMPLATE: template } }
})

describe(`durable engine, across processes (${onPostgres ? "Postgres" : "embedded database on disk"})`, () => {
  it.live("a runner killed mid-workflow: a new one finishes it without re-running the completed activity", () =>
    Effect.gen(function*() {
      const database = yield* freshDatabase
      const payload = { target: "acme/crash", revision: "r1", mode: "gated" } as const
      const executionId = yield* Workflows.Sync.executionId(payload)

      const first = yield* startRunner(database)
      yield* first.call({ type: "start", payload })
      yield* eventually(runsFrom(first), (runs) => count(runs, "apply", executionId) === 1)
      yield* first.kill

      const second = yield* startRunner(database)
      yield* second.call({ type: "openGate" })
      const runs = yield* eventually(runsFrom(second), (runs) => count(runs, "done", executionId) === 1)
      const mine = runs.filter((run) => run.executionId === executionId)
      expect(mine.map((run) => `${run.activity}@${run.pid === first.pid ? "first" : "second"}`)).toEqual([
        "fetch@first",
        "apply@first",
        // The interrupted activity runs again (at least once); the completed one was read back, not re-run.
        "apply@second",
        "done@second"
      ])
    }), 60_000)

  it.live.runIf(onPostgres)("two runners share 20 workflows; when one is killed the other finishes its share and every workflow ends there (Postgres only)", () =>
    Effect.gen(function*() {
      const database = yield* freshDatabase
      const context = yield* Layer.build(Database.layerUrl(Redacted.make(database.database), { maxConnections: 2 }))
      const sql = Context.get(context, SqlClient.SqlClient)
      const a = yield* startRunner(database)
      const b = yield* startRunner(database)
      // Wait until both hold shards (advisory locks held by two backends), so the work can spread.
      yield* eventually(
        sql<{ holders: number }>`SELECT count(DISTINCT pid)::int AS holders FROM pg_locks
          WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`.pipe(
          Effect.orDie
        ),
        (rows) => rows[0]?.holders === 2
      )

      const payloads = Array.from({ length: 20 }, (_, i) => ({ target: `acme/repo-${i}`, revision: "r1", mode: "gated" as const }))
      const ids = yield* Effect.forEach(payloads, (payload) => Workflows.Sync.executionId(payload))
      yield* Effect.forEach(payloads, (payload) => a.call({ type: "start", payload }), { concurrency: 5 })
      const blocked = yield* eventually(runsFrom(a), (runs) => count(runs, "apply") === 20)
      const byB = blocked.filter((run) => run.activity === "apply" && run.pid === b.pid).length
      // Spread over both runners (300 shards, split about evenly: 20 workflows all on one side is ~2e-6 likely).
      expect(byB).toBeGreaterThan(0)
      expect(byB).toBeLessThan(20)

      yield* b.kill
      yield* a.call({ type: "openGate" })
      const runs = yield* eventually(runsFrom(a), (runs) => count(runs, "done") === 20, "40 seconds")
      // Activities are at-least-once (docs/ARCHITECTURE.md, "Durable work"): in CI's Postgres run of 2026-11-30, on a
      // busy machine, one workflow's `fetch` ran twice on A before its result was stored. What the engine promises is
      // held here: every workflow fetched, B's interrupted ones applied again on A, and each ended on A.
      for (const id of ids) {
        const story = JSON.stringify({ a: a.pid, b: b.pid, runs: runs.filter((run) => run.executionId === id) })
        expect(count(runs, "fetch", id), story).toBeGreaterThanOrEqual(1)
        expect(runs.some((run) => run.executionId === id && run.activity === "apply" && run.pid === a.pid), story).toBe(true)
        expect(count(runs, "done", id), story).toBeGreaterThanOrEqual(1)
      }
      expect(runs.filter((run) => run.activity === "done").every((run) => run.pid === a.pid)).toBe(true)
    }), 60_000)
})

describe("the cluster runner's port", () => {
  it.live("taken by another process: the runner dies naming its port and ORGPLANE_CLUSTER_PORT, not the HTTP port", () =>
    Effect.gen(function*() {
      const taken = Net.createServer()
      yield* Effect.acquireRelease(
        Effect.callback<void>((resume) => void taken.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.callback<void>((resume) => void taken.close(() => resume(Effect.void)))
      )
      const address = taken.address()
      const port = address !== null && typeof address === "object" ? address.port : 0
      const runner = Durable.layerCluster({ host: "127.0.0.1", listenHost: "127.0.0.1", port }, { sharding: testTuning })
      const exit = yield* Effect.exit(Layer.build(runner.pipe(Layer.provide(Layer.unwrap(TestDatabase.layer({ migrated: true }))))))
      const defect = defectOf(exit)
      expect(defect).toBeInstanceOf(Durable.RunnerPortInUse)
      expect(defect instanceof Durable.RunnerPortInUse ? defect.message : undefined).toBe(
        `port ${port} on 127.0.0.1 is already in use: it is the durable engine's runner port (with DATABASE_URL every server process is a runner; another one on this host?); choose another with ORGPLANE_CLUSTER_PORT (0 takes any free one)`
      )
    }), 30_000)
})

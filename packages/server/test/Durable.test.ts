/**
 * The durable engine spike (platform/Durable.ts): `@effect/workflow` on `@effect/cluster` over our own database
 * layers. In process: a workflow completes, a transient failure is retried with backoff, a permanent one fails the
 * workflow with its reason stored, a repeated execution id runs once. Across processes (test/durable/runner.ts):
 * a runner killed mid-workflow and a new one on the same database finish it without re-running what completed;
 * on Postgres, two runners share the work and one finishes what the other, killed, left.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { TestDatabase } from "@orgplane/testkit"
import { Cause, Clock, type Duration, Effect, Exit, Fiber, Layer, Option, Redacted, Schedule, TestClock } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Database from "../src/platform/Database.js"
import * as Durable from "../src/platform/Durable.js"
import { type Request, testTuning } from "./durable/runner.js"
import * as Workflows from "./durable/Workflows.js"

const engine = TestDatabase.onPostgres
  ? Durable.layerCluster({ host: "127.0.0.1", listenHost: "127.0.0.1", port: 0 }, { sharding: testTuning })
  : Durable.layerSingle({ sharding: testTuning })

// The engine runs on real time (its locks, polls and retries sleep), so no TestClock here.
const Engine = Workflows.layerWithSetup.pipe(Layer.provideMerge(engine), Layer.provideMerge(TestDatabase.layer))

describe("Durable.retry", () => {
  it.effect("waits a growing, jittered delay before each attempt: from its base, doubling, at 80-120%", () =>
    Effect.gen(function*() {
      // On the test clock: each attempt runs at the instant its delay ends.
      const attempts: Array<number> = []
      const flaky = Effect.flatMap(Clock.currentTimeMillis, (now) => {
        attempts.push(now)
        return attempts.length < 4 ? Effect.fail("transient" as const) : Effect.succeed("done")
      })
      const running = yield* Effect.fork(flaky.pipe(Durable.retry({ base: "100 millis", times: 4, while: () => true })))
      yield* TestClock.adjust("10 seconds")
      expect(yield* Fiber.join(running)).toBe("done")
      const gaps = attempts.slice(1).map((at, i) => at - attempts[i]!)
      expect(gaps).toHaveLength(3)
      gaps.forEach((gap, i) => {
        expect(gap).toBeGreaterThanOrEqual(100 * 2 ** i * 0.8)
        expect(gap).toBeLessThanOrEqual(100 * 2 ** i * 1.2)
      })
    }))
})

const runsOf = (executionId: string) =>
  Effect.map(Workflows.runs, (runs) => runs.filter((run) => run.executionId === executionId))

layer(Engine, { timeout: 60_000, excludeTestServices: true })(
  `durable engine, in process (${TestDatabase.onPostgres ? "cluster runner on Postgres" : "single runner on the embedded database"})`,
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
        // Durable.retry's, checked on the test clock below.)
        expect(fetches.map((run) => run.attempt)).toEqual([1, 2, 3])
      }))

    it.effect("fails at once on a permanent error, with the reason stored for anyone who polls", () =>
      Effect.gen(function*() {
        const payload = { target: "acme/gone", revision: "r1", mode: "fatal" } as const
        const exit = yield* Effect.exit(Workflows.Sync.execute(payload))
        expect(exit).toEqual(Exit.fail(new Workflows.Permanent({ reason: "repository not found" })))
        const executionId = yield* Workflows.Sync.executionId(payload)
        const runs = yield* runsOf(executionId)
        expect(runs.map((run) => `${run.activity}/${run.attempt}`)).toEqual(["fetch/1"])
        // The outcome is in storage, not only in the caller's hands.
        const polled = yield* Workflows.Sync.poll(executionId)
        expect(polled?._tag).toBe("Complete")
        expect(polled?._tag === "Complete" && polled.exit).toEqual(Exit.fail(new Workflows.Permanent({ reason: "repository not found" })))
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

// --- Runner processes -------------------------------------------------------------------------------------------

const serverRoot = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")

/** A request without its id (the runner numbers them). */
type Call = Request extends infer R ? R extends Request ? Omit<R, "id"> : never : never

interface Runner {
  readonly pid: number
  readonly call: (request: Call) => Effect.Effect<any>
  readonly kill: Effect.Effect<void>
}

/** Starts test/durable/runner.ts on `database`; killed (if still alive) when the scope closes. */
const startRunner = (database: string) =>
  Effect.gen(function*() {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, ["--conditions=@orgplane/source", "--import", "tsx", "test/durable/runner.ts"], {
          cwd: serverRoot,
          env: { ...process.env, DURABLE_DATABASE: database },
          stdio: ["ignore", "inherit", "inherit", "ipc"]
        })
      ),
      (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
    )
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    const pending = new Map<number, (reply: { ok?: unknown; error?: string }) => void>()
    let nextId = 0
    const ready = new Promise<number>((resolve, reject) => {
      child.on("message", (message: any) => {
        if (message.ready !== undefined) resolve(message.ready)
        else pending.get(message.id)?.(message)
      })
      void exited.then(() => reject(new Error("runner exited before it was ready")))
    })
    const pid = yield* Effect.promise(() => ready)
    const runner: Runner = {
      pid,
      call: (request) =>
        Effect.async<unknown, Error>((resume) => {
          const id = nextId++
          pending.set(id, (reply) => resume(reply.error === undefined ? Effect.succeed(reply.ok) : Effect.fail(new Error(reply.error))))
          ;(child as ChildProcess).send({ ...request, id })
        }).pipe(Effect.orDie),
      kill: Effect.promise(() => {
        child.kill("SIGKILL")
        return exited
      })
    }
    return runner
  })

type RunRow = Workflows.Run

/** Polls `read` until `done` holds (the engine's work happens in other processes, at its own pace). */
const eventually = <A>(read: Effect.Effect<A>, done: (value: A) => boolean, timeout: Duration.DurationInput = "20 seconds") =>
  read.pipe(
    Effect.filterOrFail(done, () => "not yet"),
    Effect.retry(Schedule.spaced("100 millis")),
    Effect.timeoutFail({ duration: timeout, onTimeout: () => new Error("condition not reached in time") }),
    Effect.orDie
  )

const count = (runs: ReadonlyArray<RunRow>, activity: string, executionId?: string) =>
  runs.filter((run) => run.activity === activity && (executionId === undefined || run.executionId === executionId)).length

/** A fresh database for runner processes: a data folder on disk, or a new database on DATABASE_URL. */
const freshDatabase = Effect.gen(function*() {
  const url = yield* Effect.orDie(TestDatabase.postgresUrl)
  if (Option.isSome(url)) return Redacted.value(yield* TestDatabase.freshPostgresUrl(url.value))
  const dir = yield* Effect.acquireRelease(
    Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-durable-"))),
    (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
  )
  return `dir:${dir}`
})

describe(`durable engine, across processes (${TestDatabase.onPostgres ? "Postgres" : "embedded database on disk"})`, () => {
  it.live("a runner killed mid-workflow: a new one finishes it without re-running the completed activity", () =>
    Effect.gen(function*() {
      const database = yield* freshDatabase
      const payload = { target: "acme/crash", revision: "r1", mode: "gated" } as const
      const executionId = yield* Workflows.Sync.executionId(payload)

      const first = yield* startRunner(database)
      yield* first.call({ type: "start", payload })
      yield* eventually(first.call({ type: "runs" }), (runs: Array<RunRow>) => count(runs, "apply", executionId) === 1)
      yield* first.kill

      const second = yield* startRunner(database)
      yield* second.call({ type: "openGate" })
      const runs: Array<RunRow> = yield* eventually(second.call({ type: "runs" }), (runs: Array<RunRow>) => count(runs, "done", executionId) === 1)
      const mine = runs.filter((run) => run.executionId === executionId)
      expect(mine.map((run) => `${run.activity}@${run.pid === first.pid ? "first" : "second"}`)).toEqual([
        "fetch@first",
        "apply@first",
        // The interrupted activity runs again (at least once); the completed one was read back, not re-run.
        "apply@second",
        "done@second"
      ])
    }).pipe(Effect.scoped), 60_000)

  it.live.runIf(TestDatabase.onPostgres)("two runners share 20 workflows; when one is killed the other finishes its share, each workflow once (Postgres only)", () =>
    Effect.gen(function*() {
      const database = yield* freshDatabase
      const context = yield* Layer.build(Database.layerUrl(Redacted.make(database), { maxConnections: 2 }))
      const sql = yield* Effect.provide(SqlClient.SqlClient, context)
      const a = yield* startRunner(database)
      const b = yield* startRunner(database)
      // Wait until both hold shards (advisory locks held by two backends), so the work can spread.
      yield* eventually(
        sql<{ holders: number }>`SELECT count(DISTINCT pid)::int AS holders FROM pg_locks
          WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`.pipe(
          Effect.orDie
        ),
        (rows) => rows[0].holders === 2
      )

      const payloads = Array.from({ length: 20 }, (_, i) => ({ target: `acme/repo-${i}`, revision: "r1", mode: "gated" as const }))
      const ids = yield* Effect.forEach(payloads, (payload) => Workflows.Sync.executionId(payload))
      yield* Effect.forEach(payloads, (payload) => a.call({ type: "start", payload }), { concurrency: 5 })
      const blocked: Array<RunRow> = yield* eventually(a.call({ type: "runs" }), (runs: Array<RunRow>) => count(runs, "apply") === 20)
      const byB = blocked.filter((run) => run.activity === "apply" && run.pid === b.pid).length
      // Spread over both runners (300 shards, split about evenly: 20 workflows all on one side is ~2e-6 likely).
      expect(byB).toBeGreaterThan(0)
      expect(byB).toBeLessThan(20)

      yield* b.kill
      yield* a.call({ type: "openGate" })
      const runs: Array<RunRow> = yield* eventually(a.call({ type: "runs" }), (runs: Array<RunRow>) => count(runs, "done") === 20, "40 seconds")
      for (const id of ids) {
        const story = JSON.stringify({ a: a.pid, b: b.pid, runs: runs.filter((run) => run.executionId === id) })
        expect(count(runs, "fetch", id), story).toBe(1)
        expect(count(runs, "done", id)).toBe(1)
      }
      // B's interrupted activities ran again on A; A's own ran once.
      expect(runs.filter((run) => run.activity === "apply" && run.pid === a.pid)).toHaveLength(20)
      expect(runs.filter((run) => run.activity === "done").every((run) => run.pid === a.pid)).toBe(true)
    }).pipe(Effect.scoped), 60_000)
})

describe("the cluster runner's port", () => {
  it.live("taken by another process: the runner dies naming its port and ORGPLANE_CLUSTER_PORT, not the HTTP port", () =>
    Effect.gen(function*() {
      const taken = Net.createServer()
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => void taken.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.async<void>((resume) => void taken.close(() => resume(Effect.void)))
      )
      const port = (taken.address() as Net.AddressInfo).port
      const runner = Durable.layerCluster({ host: "127.0.0.1", listenHost: "127.0.0.1", port }, { sharding: testTuning })
      const exit = yield* Effect.exit(Layer.build(runner.pipe(Layer.provide(TestDatabase.layer))))
      const defect = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.dieOption(exit.cause)) : undefined
      expect(defect).toBeInstanceOf(Durable.RunnerPortInUse)
      expect((defect as Durable.RunnerPortInUse).message).toBe(
        `port ${port} on 127.0.0.1 is already in use: it is the durable engine's runner port (with DATABASE_URL every server process is a runner; another one on this host?); choose another with ORGPLANE_CLUSTER_PORT (0 takes any free one)`
      )
    }).pipe(Effect.scoped), 30_000)
})

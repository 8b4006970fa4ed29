/**
 * The test workflow of Durable.test.ts, shared with the runner processes it starts (runner.ts): a sync of one target
 * at one revision, whose activities record every execution (with the process and the attempt) in
 * `test_durable_runs`, so the test can count what ran where.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as Activity from "effect/workflow/Activity"
import * as Workflow from "effect/workflow/Workflow"
import { WorkflowInstance } from "effect/workflow/WorkflowEngine"
import * as Durable from "../../src/platform/Durable.js"

export class Transient extends Schema.TaggedError<Transient>()("Transient", { reason: Schema.String }) {}
export class Permanent extends Schema.TaggedError<Permanent>()("Permanent", { reason: Schema.String }) {}

/**
 * - `plain`: fetch, apply, done.
 * - `flaky`: fetch fails twice with a transient error, then succeeds (retried with backoff).
 * - `fatal`: fetch fails with a permanent error: no retry, the workflow fails with that reason.
 * - `gated`: apply waits until `test_durable_gate` is open (the crash tests kill the process while it waits).
 */
export const Mode = Schema.Literals(["plain", "flaky", "fatal", "gated"])

export const Sync = Workflow.make("TestSync", {
  payload: { target: Schema.String, revision: Schema.String, mode: Mode },
  success: Schema.Struct({ applied: Schema.String }),
  error: Schema.Union([Transient, Permanent]),
  // A redelivered (target, revision) is the same execution, whatever else the payload says.
  idempotencyKey: ({ revision, target }) => `${target}@${revision}`
})

export type Payload = typeof Sync.payloadSchema.Type

export const setup = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS test_durable_runs (
    execution_id text NOT NULL, activity text NOT NULL, attempt integer NOT NULL, pid integer NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp())`
  yield* sql`CREATE TABLE IF NOT EXISTS test_durable_gate (open boolean NOT NULL)`
})

export interface Run {
  readonly executionId: string
  readonly activity: string
  readonly attempt: number
  readonly pid: number
  readonly at: Date
}

export const runs = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql<Run>`SELECT execution_id, activity, attempt, pid, at FROM test_durable_runs ORDER BY at`
})

export const openGate = SqlClient.SqlClient.use((sql) => sql`INSERT INTO test_durable_gate VALUES (true)`)

const record = (activity: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { executionId } = yield* WorkflowInstance
    const attempt = yield* Activity.CurrentAttempt
    yield* sql`INSERT INTO test_durable_runs (execution_id, activity, attempt, pid)
      VALUES (${executionId}, ${activity}, ${attempt}, ${process.pid})`
    return attempt
  }).pipe(Effect.orDie)

const gateOpen = SqlClient.SqlClient.use((sql) => sql<{ open: boolean }>`SELECT open FROM test_durable_gate`).pipe(
  Effect.map((rows) => rows.length > 0),
  Effect.orDie
)

export const layer = Sync.toLayer(Effect.fnUntraced(function*(payload) {
  const fetch = Activity.make({
    name: "fetch",
    success: Schema.String,
    error: Schema.Union([Transient, Permanent]),
    execute: Effect.gen(function*() {
      const attempt = yield* record("fetch")
      if (payload.mode === "fatal") return yield* new Permanent({ reason: "repository not found" })
      if (payload.mode === "flaky" && attempt <= 2) return yield* new Transient({ reason: `rate limited (attempt ${attempt})` })
      return `tree of ${payload.target}@${payload.revision}`
    })
  })
  const tree = yield* fetch.pipe(Durable.retry({ base: "100 millis", times: 4, while: (error) => error._tag === "Transient" }))
  yield* Activity.make({
    name: "apply",
    execute: Effect.gen(function*() {
      yield* record("apply")
      if (payload.mode === "gated") {
        yield* gateOpen.pipe(Effect.repeat({ until: (open) => open, schedule: Schedule.spaced("100 millis") }))
      }
    })
  })
  yield* Activity.make({ name: "done", execute: record("done") })
  return { applied: tree }
}))

/** The workflow, registered once its tables exist. */
export const layerWithSetup = layer.pipe(Layer.provide(Layer.effectDiscard(setup)))

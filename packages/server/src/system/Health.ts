/**
 * The health probes' answers (`/health/live`, `/health/started`, `/health/ready`): each component's state from the
 * database, the migrations this build runs and the durable engine, as fixed codes (the probes are public).
 */
import { type HealthCheck, HealthDown } from "@orgplane/schema"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as SqlClient from "effect/sql/SqlClient"
import { disconnect } from "../platform/Database.js"
import { DatabaseStatus } from "../platform/DatabaseStatus.js"
import { DurableHealth } from "../platform/DurableHealth.js"
import { BuildMigrations, pending } from "../platform/Migrator.js"

/** Load balancers and probes poll with short timeouts of their own: the readiness probes answer within this, whatever the database does. */
export const readyDeadline = Duration.seconds(2)

/**
 * `check` (statements on the database) within `readyDeadline`, reported to `status`: its value, or why the database
 * did not give it (`timeout`, `unavailable`). Disconnected: on timeout, answer now and let the stuck check's
 * interruption (a cancel, which needs the hung database too) finish behind.
 */
export const withinDeadline = Effect.fn("Health.withinDeadline")(function*<A, E>(check: Effect.Effect<A, E>, status: DatabaseStatus["Service"]) {
  return yield* disconnect(check).pipe(
    Effect.timeout(readyDeadline),
    Effect.matchEffect({
      onFailure: (error) =>
        Cause.isTimeoutError(error)
          ? Effect.andThen(status.unavailable(`no answer within ${Duration.format(readyDeadline)}`), Effect.fail("timeout" as const))
          : Effect.andThen(status.unavailable(error), Effect.fail("unavailable" as const)),
      onSuccess: (value) => Effect.as(status.available, value)
    })
  )
})

const up = (name: HealthCheck["name"]): HealthCheck => ({ name, status: "up" })
const down = (name: HealthCheck["name"], reason: NonNullable<HealthCheck["data"]>["reason"]): HealthCheck => ({ name, status: "down", data: { reason } })

/** 200 when every check is up, else the 503 listing them all. */
const report = (checks: ReadonlyArray<HealthCheck>) =>
  checks.every((check) => check.status === "up") ? Effect.succeed({ status: "up" as const, checks }) : Effect.fail(new HealthDown({ checks }))

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const status = yield* DatabaseStatus
  const durable = yield* DurableHealth
  const migrations = yield* BuildMigrations
  const pendingMigrations = pending().pipe(
    Effect.provideService(SqlClient.SqlClient, sql),
    Effect.provideService(BuildMigrations, migrations)
  )
  return {
    /** The process serves requests: nothing else is checked, the database least of all. */
    live: Effect.succeed({ status: "up" as const, checks: [] }),
    /**
     * The start is finished. Answering at all means the migrations are applied and the routes built (the server
     * builds its routes after migrating); the durable engine starts after the server listens.
     */
    started: Effect.fn("Health.started")(function*() {
      const state = yield* durable.state
      return yield* report([state === "starting" || state === "failed" ? down("durable_engine", state) : up("durable_engine")])
    }),
    /** The server can serve now: the database answers within `readyDeadline`, with every migration of this build, and the durable engine runs. */
    ready: Effect.fn("Health.ready")(function*() {
      const [missing, state] = yield* Effect.all([Effect.result(withinDeadline(pendingMigrations, status)), durable.state], { concurrency: 2 })
      const database = Result.isSuccess(missing) ? up("database") : down("database", missing.failure)
      const migrated = Result.isFailure(missing)
        ? down("migrations", "not_checked")
        : missing.success.length === 0
        ? up("migrations")
        : down("migrations", "pending")
      return yield* report([database, migrated, state === "running" ? up("durable_engine") : down("durable_engine", state)])
    })
  }
})

export class Health extends Context.Service<Health>()("@orgplane/server/system/Health", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

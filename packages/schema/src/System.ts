/** The probes' answers: `/health` and `/ready`, and the component reports of `/health/live`, `/health/started` and `/health/ready`. */
import * as Schema from "effect/Schema"

export const Health = Schema.Struct({
  ok: Schema.Literal(true),
  version: Schema.String
}).annotate({ identifier: "Health", examples: [{ ok: true, version: "1.4.0" }] })

export const Ready = Schema.Struct({
  ok: Schema.Literal(true),
  checks: Schema.Struct({ database: Schema.Literal("ok") })
}).annotate({ identifier: "Ready" })

/** Whether a probe, or one component it checks, is well: MicroProfile Health's `UP` and `DOWN`, in lower case. */
export const HealthStatus = Schema.Literals(["up", "down"]).annotate({
  identifier: "HealthStatus",
  description: "`up` or `down`."
})

/** The components the probes check. */
export const HealthCheckName = Schema.Literals(["database", "migrations", "durable_engine"]).annotate({
  identifier: "HealthCheckName",
  description:
    "`database`: a statement answers within 2 seconds. `migrations`: every migration this build runs is applied. `durable_engine`: the engine that runs background work (connector syncs, audit streams, scheduled jobs) has started and runs."
})

/**
 * Why a component is down, as a fixed code: never a database's error text, a host name or a dependency's version
 * (the probes are public). The server's log says more.
 */
export const HealthDownReason = Schema.Literals(["timeout", "unavailable", "not_checked", "pending", "starting", "failed", "stopped"]).annotate({
  identifier: "HealthDownReason",
  description:
    "Why the component is down. `database`: `timeout` (no answer within 2 seconds) or `unavailable` (the statement failed: refused, connection lost). `migrations`: `pending` (this build's migrations are not all applied: another process is migrating, or an older build's database) or `not_checked` (the database did not answer). `durable_engine`: `starting`, `failed` (it could not start: the server's log says why; a restart is needed) or `stopped` (the server is stopping). The server's log has the details; the probes never show an error's text."
})

export const HealthCheck = Schema.Struct({
  name: HealthCheckName,
  status: HealthStatus,
  data: Schema.optionalKey(Schema.Struct({ reason: HealthDownReason })).annotateKey({
    description: "Present when `status` is `down`: why."
  })
}).annotate({
  identifier: "HealthCheck",
  description: "One component's state, in MicroProfile Health's shape (`name`, `status`, `data`)."
})
export type HealthCheck = typeof HealthCheck.Type

/** A probe's 200 answer: every component it checks is up (`/health/live` checks none). Its 503 is `HealthDown` (Errors.ts). */
export const HealthReport = Schema.Struct({
  status: Schema.Literal("up"),
  checks: Schema.Array(HealthCheck)
}).annotate({
  identifier: "HealthReport",
  description: "All is well: `status` `up`, and each component the probe checks, up.",
  examples: [
    { status: "up", checks: [{ name: "database", status: "up" }, { name: "migrations", status: "up" }, { name: "durable_engine", status: "up" }] },
    { status: "up", checks: [{ name: "durable_engine", status: "up" }] },
    { status: "up", checks: [] }
  ]
})

/**
 * Workers: the agent runtimes an organization's members register (on their machine or in the cloud), the instance
 * each runtime reports (the newest is "the" instance), the worker tokens runtimes authenticate with, and the
 * upgrade request the server forwards to a runtime.
 */
import * as Schema from "effect/Schema"
import { Int, Timestamp, TrimmedText } from "./Common.js"
import { UrlOf } from "./Urls.js"
import { JsonObject } from "./ConfigObjects.js"
import { exampleId, OrganizationId, UserId, WorkerId } from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { acme, exampleTime, exampleToken, grace } from "./Examples.js"
import { publishedAs } from "./internal/published.js"

/** Where a worker runs: on a member's machine or in the cloud. */
export const WorkerDestination = Schema.Literals(["local", "cloud"]).annotate({
  identifier: "WorkerDestination",
  description: "Where the worker runs: `local` (a member's machine) or `cloud`."
})

/**
 * A worker's state. `provisioning` from registration until its runtime's first heartbeat; then what the runtime
 * reports (`online`, `offline`, `error`). An `online` worker whose connectivity is `offline` (no heartbeat for
 * `ORGPLANE_WORKER_OFFLINE_AFTER`, 3 minutes by default) reads as `offline`: a runtime that died cannot say so itself.
 */
export const WorkerStatus = Schema.Literals(["provisioning", "online", "offline", "error"]).annotate({
  identifier: "WorkerStatus",
  description:
    "`provisioning` until the runtime's first heartbeat, then what the runtime reports: `online`, `offline` or `error`. An `online` worker without a heartbeat for `ORGPLANE_WORKER_OFFLINE_AFTER` (3 minutes by default) reads as `offline`."
})
export type WorkerStatus = typeof WorkerStatus.Type

/** 3 minutes, the default of `ORGPLANE_WORKER_OFFLINE_AFTER`: a runtime beats every 30 seconds, so this survives a few lost beats. */
export const HEARTBEAT_STALE_MILLIS = 3 * 60 * 1000

/**
 * Whether the server hears from a worker's runtime, derived on read from when its last heartbeat arrived (the
 * server's clock, not the runtime's): `online` within two heartbeat intervals, `stale` until the offline bound,
 * `offline` after it, and before any heartbeat.
 */
export const WorkerConnectivity = Schema.Literals(["online", "stale", "offline"]).annotate({
  identifier: "WorkerConnectivity",
  description:
    "Derived on read from when the last heartbeat arrived (the server's clock): `online` within two heartbeat intervals (`ORGPLANE_WORKER_HEARTBEAT_INTERVAL`, 30 seconds by default: 1 minute), `stale` from then until `ORGPLANE_WORKER_OFFLINE_AFTER` (3 minutes by default), `offline` after that and before the first heartbeat."
})
export type WorkerConnectivity = typeof WorkerConnectivity.Type

/** The statuses a runtime reports in its heartbeat (`provisioning` is the server's own). */
export const ReportedWorkerStatus = Schema.Literals(["online", "offline", "error"]).annotate({
  identifier: "ReportedWorkerStatus",
  description: "The runtime's state: `online`, `offline` or `error`."
})

/** A short lower-case name: a sandbox backend, an instance provider or an instance status. */
const slug = (what: string, examples: string) =>
  Schema.String.check(
    Schema.isPattern(/^[a-z][a-z0-9_-]{0,31}$/u, {
      message: "must be 1 to 32 lower-case letters, digits, `-` or `_`, starting with a letter",
      toJsonSchema: () => ({ minLength: 1, maxLength: 32, pattern: "^[a-z][a-z0-9_-]{0,31}$" })
    })
  ).annotate({
    description: `${what}: 1 to 32 lower-case letters, digits, \`-\` or \`_\`, starting with a letter (${examples}).`,
    // Published as this JSON Schema alone (its description not written in it).
    ...publishedAs({ type: "string", minLength: 1, maxLength: 32, pattern: "^[a-z][a-z0-9_-]{0,31}$" })
  })

export const SandboxBackend = slug("The sandbox the worker runs its sessions in", "for example `docker`, `microsandbox`, `none`")
export const InstanceProvider = slug("Who runs the instance", "for example `local`, `static`, `fly`, `aws`")
export const InstanceStatus = slug("The instance's state as its provider names it", "for example `starting`, `running`, `stopped`, `failed`")

export const WorkerName = TrimmedText(1, 255, "Worker name")
export const WorkerDescription = TrimmedText(0, 2000, "Worker description")
export const WorkspacePath = TrimmedText(1, 1024, "The folder the worker works in, on its own machine")
export const ImageVersion = TrimmedText(1, 128, "The runtime's version (an image tag or a release)")

/** A runtime's base URL, under the URL rule, without a query (the server appends `/runtime/upgrade` to it). */
export const RuntimeUrl = UrlOf(
  { absolute: "http", query: false },
  "The runtime's base URL; `/runtime/upgrade` is appended to it. Checked by the outbound guard when the instance is registered and again at every call."
)

export class Worker extends Schema.Class<Worker>("Worker")(Schema.Struct({
  id: WorkerId,
  orgId: OrganizationId,
  createdByUserId: Schema.NullOr(UserId).annotate({ description: "The person who registered it; null once their account is gone." }),
  isMine: Schema.Boolean.annotate({ description: "Whether the caller registered it." }),
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  destination: WorkerDestination,
  status: WorkerStatus,
  imageVersion: Schema.NullOr(Schema.String).annotate({ description: "The runtime's version, as its last heartbeat reported it." }),
  workspacePath: Schema.NullOr(Schema.String),
  sandboxBackend: Schema.NullOr(Schema.String),
  lastHeartbeatAt: Schema.NullOr(Timestamp).annotate({
    description: "The newest `sentAt` a heartbeat reported (the runtime's clock; the time of arrival for a heartbeat without one). Never moves backwards."
  }),
  lastActiveAt: Schema.NullOr(Timestamp).annotate({
    description: "The runtime's last activity: the newest `lastActivityAt` it reported, or the `sentAt` of a heartbeat with `active: true`."
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  connectivity: WorkerConnectivity,
  lastSeenAt: Schema.NullOr(Timestamp).annotate({
    description: "When the server received the heartbeat that set `lastHeartbeatAt` (its own clock); `connectivity` is derived from it."
  }),
  openSessions: Schema.NullOr(Int).annotate({ description: "The open sessions the last heartbeat reported, or null when it reported none." })
}).annotate({
  examples: [{
    id: exampleId("wrk"),
    orgId: acme.id,
    createdByUserId: grace.userId,
    isMine: true,
    name: "Grace's laptop",
    description: "Runs the nightly dependency updates.",
    destination: "local",
    status: "online",
    imageVersion: "2026.11.1",
    workspacePath: "/home/grace/work",
    sandboxBackend: "docker",
    lastHeartbeatAt: exampleTime(90),
    lastActiveAt: exampleTime(85),
    createdAt: exampleTime(60),
    updatedAt: exampleTime(90),
    connectivity: "online",
    lastSeenAt: exampleTime(90),
    openSessions: 2
  }]
})) {}

/** What a runtime reported about where it runs. Its credential is stored encrypted and never returned. */
export class WorkerInstance extends Schema.Class<WorkerInstance>("WorkerInstance")(Schema.Struct({
  provider: Schema.String,
  region: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  status: Schema.String,
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({
  examples: [{
    provider: "fly",
    region: "fra",
    url: "https://grace-worker.fly.dev",
    status: "running",
    createdAt: exampleTime(70),
    updatedAt: exampleTime(70)
  }]
})) {}

export const WorkerPage = Page(Worker).annotate({ identifier: "WorkerPage" })

export const WorkerListQuery = Schema.Struct({
  ...PageQueryFields,
  mine: Schema.optionalKey(Schema.Literals(["true", "false"])).annotateKey({
    description: "`true`: only the workers the caller registered; `false` or absent: all of the organization's."
  })
}).annotate({ examples: [{ mine: "true" }] })
export type WorkerListQuery = typeof WorkerListQuery.Type

/**
 * The spec's worker ids are plain strings: any id is accepted here, and one that is not a worker id (`wrk_…`)
 * answers 404 `worker_not_found` like a missing one.
 */
export const WorkerPath = Schema.Struct({
  id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255)).annotate({ description: "The worker's id (`wrk_…`)." })
}).annotate({ examples: [{ id: exampleId("wrk") }] })

export const WorkerResponse = Schema.Struct({
  worker: Worker,
  instance: Schema.NullOr(WorkerInstance).annotate({ description: "The newest instance its runtime reported, or null before any." })
}).annotate({ identifier: "WorkerResponse" })

export const WorkerToken = Schema.String.annotate({
  description: "The worker token (`opw_…`): the runtime sends it as `Authorization: Bearer <token>` to `/v1/worker-runtime/*`. Shown only once.",
  examples: [exampleToken("opw")]
})

export const RegisteredWorker = Schema.Struct({ worker: Worker, token: WorkerToken }).annotate({ identifier: "RegisteredWorker" })

export const RegisterWorkerRequest = Schema.Struct({
  name: WorkerName,
  description: Schema.optionalKey(WorkerDescription),
  destination: WorkerDestination,
  sandboxBackend: Schema.optionalKey(SandboxBackend),
  workspacePath: Schema.optionalKey(WorkspacePath)
}).annotate({
  examples: [{
    name: "Grace's laptop",
    description: "Runs the nightly dependency updates.",
    destination: "local",
    sandboxBackend: "docker",
    workspacePath: "/home/grace/work"
  }]
})

export const UpdateWorkerRequest = Schema.Struct({
  name: Schema.optionalKey(WorkerName),
  description: Schema.optionalKey(Schema.NullOr(WorkerDescription)).annotateKey({
    description: "The new description; null clears it."
  }),
  workspacePath: Schema.optionalKey(Schema.NullOr(WorkspacePath)).annotateKey({
    description: "The new workspace path; null clears it."
  }),
  sandboxBackend: Schema.optionalKey(Schema.NullOr(SandboxBackend)).annotateKey({
    description: "The new sandbox backend; null clears it."
  })
}).check(
  Schema.makeFilter((body) => Object.keys(body).length > 0 || "give name, description, workspacePath or sandboxBackend", {
    toJsonSchema: () => ({ minProperties: 1 })
  })
).annotate({ examples: [{ name: "Grace's workstation", description: null }] })
export type UpdateWorkerRequest = typeof UpdateWorkerRequest.Type

/** Any JSON object, passed to the runtime as is; arrays and scalars are refused. */
export const RuntimeUpgradeRequest = JsonObject.annotate({ examples: [{ version: "2026.11.2" }] })

export const RuntimeUpgradeResponse = Schema.Struct({
  status: Schema.Int.annotate({ description: "The HTTP status the runtime answered with." }),
  // On the key: Effect 4's JSON Schema leaves out what Unknown itself is annotated with.
  body: Schema.Unknown.annotateKey({
    description: "The runtime's answer: its JSON as sent; text that is not JSON as `{message: <text>}`; an empty answer as null."
  })
}).annotate({ identifier: "RuntimeUpgradeResponse", examples: [{ status: 202, body: { upgrading: true, version: "2026.11.2" } }] })

// The runtime's own operations (worker token) ------------------------------------------------------------------

/** 5 minutes: a heartbeat's `sentAt` may be this far ahead of the server's clock (skew), no further. */
export const HEARTBEAT_MAX_CLOCK_AHEAD_MILLIS = 5 * 60 * 1000

/** Open sessions a heartbeat may report. */
export const MAX_OPEN_SESSIONS = 1_000_000

export const HeartbeatRequest = Schema.Struct({
  status: Schema.optionalKey(ReportedWorkerStatus).annotateKey({ description: "Default `online`." }),
  imageVersion: Schema.optionalKey(ImageVersion),
  active: Schema.optionalKey(Schema.Boolean).annotateKey({
    description: "Whether the runtime is working on something now; `true` moves `lastActiveAt` to `lastActivityAt`, or to `sentAt` without it. Default false."
  }),
  sentAt: Schema.optionalKey(Timestamp).annotateKey({
    description:
      "When the runtime sent the heartbeat, by its clock. Heartbeats are ordered by it: one not newer than the last applied changes nothing. At most 5 minutes ahead of the server's clock (400 otherwise); any past time is accepted. Without it, the time the server received the heartbeat."
  }),
  lastActivityAt: Schema.optionalKey(Timestamp).annotateKey({
    description: "When the runtime last did something, by its clock; not after `sentAt` (400 otherwise). Moves `lastActiveAt` forward, whatever `active` says."
  }),
  openSessions: Schema.optionalKey(
    Schema.Int.check(
      Schema.isBetween({ minimum: 0, maximum: MAX_OPEN_SESSIONS }, { message: `must be an integer from 0 to ${MAX_OPEN_SESSIONS}` })
    )
  ).annotateKey({ description: "The sessions open on the runtime now." })
}).annotate({
  examples: [{
    status: "online",
    imageVersion: "2026.11.1",
    active: true,
    sentAt: exampleTime(90),
    lastActivityAt: exampleTime(89),
    openSessions: 2
  }]
})

/** What the server did with a heartbeat: `applied` is false for a late one (not newer than the last), which changed nothing. */
export const HeartbeatReceipt = Schema.Struct({
  applied: Schema.Boolean.annotate({
    description: "Whether the heartbeat was recorded: false when its `sentAt` is not newer than the worker's `lastHeartbeatAt` (a late or repeated heartbeat), which changed nothing."
  }),
  workerId: WorkerId,
  connectivity: WorkerConnectivity,
  lastHeartbeatAt: Timestamp,
  lastActiveAt: Schema.NullOr(Timestamp),
  openSessions: Schema.NullOr(Int),
  heartbeatIntervalSeconds: Schema.Int.annotate({
    description: "How often the server expects a heartbeat (`ORGPLANE_WORKER_HEARTBEAT_INTERVAL`): a runtime should beat at least this often."
  })
}).annotate({
  identifier: "HeartbeatReceipt",
  examples: [{
    applied: true,
    workerId: exampleId("wrk"),
    connectivity: "online",
    lastHeartbeatAt: exampleTime(90),
    lastActiveAt: exampleTime(89),
    openSessions: 2,
    heartbeatIntervalSeconds: 30
  }]
})

export const RegisterInstanceRequest = Schema.Struct({
  provider: InstanceProvider,
  region: Schema.optionalKey(TrimmedText(1, 64, "Where the instance runs (a provider's region)")),
  url: Schema.optionalKey(RuntimeUrl),
  status: InstanceStatus,
  credential: Schema.optionalKey(
    Schema.String.check(
      Schema.isMinLength(1),
      Schema.isMaxLength(4096),
      Schema.isPattern(/^[\x21-\x7e]+$/u, { message: "must be printable ASCII without spaces (it travels in an HTTP header)" })
    )
  ).annotateKey({
    description:
      "The runtime's own secret: the server sends it as `Authorization: Bearer <credential>` when it calls the runtime. Stored encrypted; never returned."
  })
}).annotate({
  examples: [{
    provider: "fly",
    region: "fra",
    url: "https://grace-worker.fly.dev",
    status: "running",
    credential: "rt_9f2c4e7a1b8d3f60"
  }]
})

export const WorkerInstanceResponse = Schema.Struct({ instance: WorkerInstance }).annotate({ identifier: "WorkerInstanceResponse" })

/**
 * Worker activity: a worker's recent heartbeats (the last 100 applied are kept) and its recorded transitions
 * between `online` and `offline`, read newest first as one feed.
 */
import * as Schema from "effect/Schema"
import { Int, Timestamp } from "./Common.js"
import { exampleTime } from "./Examples.js"
import { exampleId, WorkerActivityEventId, WorkerHeartbeatId } from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { ReportedWorkerStatus } from "./Workers.js"

/** Heartbeats kept per worker: older ones are deleted as a new one is recorded. */
export const HEARTBEATS_KEPT = 100

/** The two states transitions are recorded between (`stale` is a read-time nuance, not a recorded state). */
export const WorkerActivityState = Schema.Literals(["online", "offline"]).annotate({
  identifier: "WorkerActivityState",
  description: "`online` from the heartbeat that brings the worker back, `offline` once no heartbeat arrived for `ORGPLANE_WORKER_OFFLINE_AFTER`."
})
export type WorkerActivityState = typeof WorkerActivityState.Type

/** What caused a transition. */
export const WorkerTransitionCause = Schema.Literals(["heartbeat", "no_heartbeat"]).annotate({
  identifier: "WorkerTransitionCause",
  description: "`heartbeat`: a heartbeat arrived (the first one, or one after the worker went offline); `no_heartbeat`: the server's periodic check found none for `ORGPLANE_WORKER_OFFLINE_AFTER`."
})

export class WorkerHeartbeat extends Schema.Class<WorkerHeartbeat>("WorkerHeartbeat")(Schema.Struct({
  kind: Schema.Literal("heartbeat"),
  id: WorkerHeartbeatId,
  at: Timestamp.annotateKey({ description: "When the server received it (its clock)." }),
  sentAt: Timestamp.annotateKey({ description: "When the runtime sent it (its clock), or `at` when it did not say." }),
  status: ReportedWorkerStatus,
  active: Schema.Boolean,
  lastActivityAt: Schema.NullOr(Timestamp),
  openSessions: Schema.NullOr(Int),
  imageVersion: Schema.NullOr(Schema.String)
}).annotate({
  description: "A heartbeat as the runtime reported it.",
  examples: [{
    kind: "heartbeat",
    id: exampleId("whb"),
    at: exampleTime(90),
    sentAt: exampleTime(90),
    status: "online",
    active: true,
    lastActivityAt: exampleTime(89),
    openSessions: 2,
    imageVersion: "2026.11.1"
  }]
})) {}

export class WorkerTransition extends Schema.Class<WorkerTransition>("WorkerTransition")(Schema.Struct({
  kind: Schema.Literal("transition"),
  id: WorkerActivityEventId,
  at: Timestamp.annotateKey({
    description: "When it happened: the heartbeat's arrival for `online`; for `offline`, the arrival of the last heartbeat plus `ORGPLANE_WORKER_OFFLINE_AFTER`."
  }),
  from: WorkerActivityState,
  to: WorkerActivityState,
  cause: WorkerTransitionCause,
  recordedAt: Timestamp.annotateKey({ description: "When the server recorded it (the periodic check runs every minute)." })
}).annotate({
  description: "A change of the worker's recorded state, kept for the audit log and notifications.",
  examples: [{
    kind: "transition",
    id: exampleId("wae"),
    at: exampleTime(93),
    from: "online",
    to: "offline",
    cause: "no_heartbeat",
    recordedAt: exampleTime(94)
  }]
})) {}

export const WorkerActivityEntry = Schema.Union([WorkerHeartbeat, WorkerTransition]).annotate({
  identifier: "WorkerActivityEntry",
  description: "A heartbeat or a transition, told apart by `kind`."
})
export type WorkerActivityEntry = typeof WorkerActivityEntry.Type

export const WorkerActivityPage = Page(WorkerActivityEntry).annotate({ identifier: "WorkerActivityPage" })

export const WorkerActivityQuery = Schema.Struct({
  ...PageQueryFields,
  kind: Schema.optionalKey(Schema.Literals(["heartbeat", "transition"])).annotateKey({
    description: "Only heartbeats, or only transitions; both when absent."
  })
}).annotate({ examples: [{ kind: "transition" }] })
export type WorkerActivityQuery = typeof WorkerActivityQuery.Type

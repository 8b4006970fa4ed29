/**
 * Storage of worker activity: the last heartbeats of each worker and its transitions between online and offline.
 */
import {
  HEARTBEATS_KEPT,
  OrganizationId,
  WorkerActivityEventId,
  type WorkerActivityEntry,
  WorkerActivityState,
  WorkerHeartbeat,
  WorkerHeartbeatId,
  WorkerId,
  WorkerTransition,
  WorkerTransitionCause
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import * as Keyset from "../platform/Keyset.js"
import { DateColumn, execute, findAll } from "../platform/Statements.js"

export class WorkerHeartbeatRow extends Model.Class<WorkerHeartbeatRow>("WorkerHeartbeatRow")({
  id: Model.GeneratedByApp(WorkerHeartbeatId),
  organizationId: OrganizationId,
  workerId: WorkerId,
  receivedAt: DateColumn,
  sentAt: DateColumn,
  status: WorkerHeartbeat.fields.status,
  active: Schema.Boolean,
  lastActivityAt: Schema.NullOr(DateColumn),
  openSessions: Schema.NullOr(Schema.Int),
  imageVersion: Schema.NullOr(Schema.String)
}) {}

export class WorkerActivityEventRow extends Model.Class<WorkerActivityEventRow>("WorkerActivityEventRow")({
  id: Model.GeneratedByApp(WorkerActivityEventId),
  organizationId: OrganizationId,
  workerId: WorkerId,
  fromState: WorkerActivityState,
  toState: WorkerActivityState,
  at: DateColumn,
  cause: WorkerTransitionCause,
  recordedAt: DateColumn
}) {}

/** One row of the feed: a heartbeat's columns or a transition's, the other's null. */
const FeedRow = Schema.Struct({
  kind: Schema.Literals(["heartbeat", "transition"]),
  id: Schema.String,
  at: DateColumn,
  sentAt: Schema.NullOr(DateColumn),
  status: Schema.NullOr(Schema.String),
  active: Schema.NullOr(Schema.Boolean),
  lastActivityAt: Schema.NullOr(DateColumn),
  openSessions: Schema.NullOr(Schema.Int),
  imageVersion: Schema.NullOr(Schema.String),
  fromState: Schema.NullOr(Schema.String),
  toState: Schema.NullOr(Schema.String),
  cause: Schema.NullOr(Schema.String),
  recordedAt: Schema.NullOr(DateColumn)
})

/** A column the row's kind always fills (the statement's own `UNION`): null there is a bug. */
const filled = <A>(value: A | null, column: string): A => {
  if (value === null) throw new Error(`A worker activity row has no ${column}`)
  return value
}

/** The feed's entries as the API shows them; a row that is neither is a bug. */
const entryOf = (row: typeof FeedRow.Type): WorkerActivityEntry =>
  row.kind === "heartbeat"
    ? WorkerHeartbeat.make({
      kind: "heartbeat",
      id: row.id as WorkerHeartbeatId,
      at: row.at,
      sentAt: filled(row.sentAt, "sent_at"),
      status: row.status as WorkerHeartbeat["status"],
      active: filled(row.active, "active"),
      lastActivityAt: row.lastActivityAt,
      openSessions: row.openSessions,
      imageVersion: row.imageVersion
    })
    : WorkerTransition.make({
      kind: "transition",
      id: row.id as WorkerActivityEventId,
      at: row.at,
      from: row.fromState as WorkerActivityState,
      to: row.toState as WorkerActivityState,
      cause: row.cause as WorkerTransition["cause"],
      recordedAt: filled(row.recordedAt, "recorded_at")
    })

/** Newest first; heartbeat and transition ids have different prefixes, so `id` breaks ties across both. */
const newestFirst = Keyset.make<WorkerActivityEntry>("worker-activity", "desc", [
  { column: "a.at", value: (entry) => entry.at.toISOString(), compare: (value, sql) => sql`${value}::timestamptz` },
  { column: "a.id", value: (entry) => entry.id }
])

const Scoped = Schema.Struct({ organizationId: OrganizationId, workerId: WorkerId })

/** A worker found silent by the offline check. */
export const SilentWorker = Schema.Struct({ organizationId: OrganizationId, id: WorkerId })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insertHeartbeat = execute({
    Request: WorkerHeartbeatRow.insert,
    execute: (row) => sql`INSERT INTO worker_heartbeats ${sql.insert(row)}`
  })

  /** Keeps the worker's newest `HEARTBEATS_KEPT` heartbeats (by the index, newest first): the history stays bounded. */
  const trimHeartbeats = execute({
    Request: Scoped,
    execute: ({ organizationId, workerId }) =>
      sql`DELETE FROM worker_heartbeats
            WHERE organization_id = ${organizationId} AND worker_id = ${workerId}
              AND (received_at, id) < (
                SELECT received_at, id FROM worker_heartbeats
                WHERE organization_id = ${organizationId} AND worker_id = ${workerId}
                ORDER BY received_at DESC, id DESC OFFSET ${HEARTBEATS_KEPT - 1} LIMIT 1)`
  })

  /** Records a transition once: the same worker, state and instant again records nothing. */
  const insertTransition = execute({
    Request: WorkerActivityEventRow.insert,
    execute: (row) => sql`INSERT INTO worker_activity_events ${sql.insert(row)} ON CONFLICT DO NOTHING`
  })

  const feedRows = findAll({
    Request: Schema.Struct({
      ...Scoped.fields,
      heartbeats: Schema.Boolean,
      transitions: Schema.Boolean,
      page: Keyset.PageRequest
    }),
    Result: FeedRow,
    execute: ({ heartbeats, organizationId, page, transitions, workerId }) =>
      sql`SELECT a.* FROM (
              SELECT 'heartbeat' AS kind, h.id, h.received_at AS at, h.sent_at, h.status, h.active, h.last_activity_at,
                     h.open_sessions, h.image_version, NULL::text AS from_state, NULL::text AS to_state, NULL::text AS cause,
                     NULL::timestamptz AS recorded_at
              FROM worker_heartbeats h
              WHERE h.organization_id = ${organizationId} AND h.worker_id = ${workerId} AND ${heartbeats}
              UNION ALL
              SELECT 'transition', e.id, e.at, NULL, NULL, NULL, NULL, NULL, NULL, e.from_state, e.to_state, e.cause, e.recorded_at
              FROM worker_activity_events e
              WHERE e.organization_id = ${organizationId} AND e.worker_id = ${workerId} AND ${transitions}
            ) a
            WHERE ${page.after} ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })

  const feed = Effect.fn("ActivityRepository.feed")((
    scope: typeof Scoped.Type,
    query: { readonly cursor?: string | undefined; readonly limit?: number | undefined; readonly kind?: "heartbeat" | "transition" | undefined }
  ) =>
    Keyset.page(newestFirst, query, (page) =>
      Effect.map(
        feedRows({ ...scope, heartbeats: query.kind !== "transition", transitions: query.kind !== "heartbeat", page }),
        (rows) => rows.map(entryOf)
      )))

  /** Workers recorded online but not seen since `offlineBefore`, oldest silence first, at most `limit`. */
  const silent = findAll({
    Request: Schema.Struct({ offlineBefore: DateColumn, limit: Schema.Int }),
    Result: SilentWorker,
    execute: ({ limit, offlineBefore }) =>
      sql`/* instance-wide: workers gone silent, for the offline check (workers/Activity.ts) */
            SELECT organization_id, id FROM workers
            WHERE activity_state = 'online' AND deleted_at IS NULL AND last_seen_at <= ${offlineBefore}
            ORDER BY last_seen_at LIMIT ${limit}`
  })

  /**
   * Marks one worker offline and records its transition, in one statement: only while it is still recorded online
   * and still unseen since `offlineBefore` (a heartbeat that came in between wins), so concurrent or repeated checks
   * record the transition once. Whether it did.
   */
  const markOffline = Effect.fn("ActivityRepository.markOffline")(function*(input: {
    readonly organizationId: OrganizationId
    readonly workerId: WorkerId
    readonly eventId: WorkerActivityEventId
    readonly offlineBefore: Date
    readonly offlineAfterMillis: number
    readonly recordedAt: Date
  }) {
    const rows = yield* sql<{ id: string }>`
        WITH gone AS (
          UPDATE workers SET activity_state = 'offline'
          WHERE organization_id = ${input.organizationId} AND id = ${input.workerId}
            AND activity_state = 'online' AND deleted_at IS NULL AND last_seen_at <= ${input.offlineBefore}
          RETURNING organization_id, id, last_seen_at
        )
        INSERT INTO worker_activity_events (organization_id, id, worker_id, from_state, to_state, at, cause, recorded_at)
        SELECT organization_id, ${input.eventId}, id, 'online', 'offline',
               last_seen_at + ${input.offlineAfterMillis}::double precision * interval '1 millisecond', 'no_heartbeat', ${input.recordedAt}
        FROM gone
        ON CONFLICT DO NOTHING
        RETURNING id`
    return rows.length > 0
  })

  return { insertHeartbeat, trimHeartbeats, insertTransition, feed, silent, markOffline } as const
})

export class ActivityRepository extends Context.Service<ActivityRepository>()("@orgplane/server/workers/ActivityRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

/**
 * Storage of sync events (`connector_sync_events`): recording one with its dedupe key, the state changes its
 * workflow makes, an instance's history as a keyset over `connector_sync_events_list_idx`, and the events left
 * queued that the recovery starts again.
 */
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import {
  ConnectorInstanceId,
  ConnectorSyncEvent,
  ConnectorSyncEventId,
  type ConnectorSyncEventListQuery,
  ConnectorTargetId,
  OrganizationId,
  SyncEventType,
  SyncSummary
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { makeId } from "../platform/Ids.js"
import * as Keyset from "../platform/Keyset.js"
import { classRow, DateColumn, execute, findAll, findOne, trustedClassRow, withColumns } from "../platform/Statements.js"
import { now } from "../platform/Time.js"

export class ConnectorSyncEventRow extends Model.Class<ConnectorSyncEventRow>("ConnectorSyncEventRow")({
  id: Model.GeneratedByApp(ConnectorSyncEventId),
  organizationId: OrganizationId,
  connectorInstanceId: ConnectorInstanceId,
  connectorTargetId: ConnectorTargetId,
  eventType: SyncEventType,
  externalEventRef: ConnectorSyncEvent.fields.externalEventRef,
  sourceRevisionRef: ConnectorSyncEvent.fields.sourceRevisionRef,
  /** See Sync.ts: set while pending for the events that dedupe, cleared when they finish. */
  dedupeKey: Schema.NullOr(Schema.String),
  status: ConnectorSyncEvent.fields.status,
  attempts: ConnectorSyncEvent.fields.attempts,
  lastError: ConnectorSyncEvent.fields.lastError,
  summaryJson: Schema.fromJsonString(Schema.NullOr(SyncSummary)),
  startedAt: Schema.NullOr(DateColumn),
  completedAt: Schema.NullOr(DateColumn),
  createdAt: DateColumn
}) {}

/** Newest first, as the index orders them. */
const newestEvents = Keyset.make<ConnectorSyncEvent>("connector_sync_events", "desc", [
  { column: "e.created_at", value: (event) => event.createdAt.toISOString() },
  { column: "e.id", value: (event) => event.id }
])

/** An event as `columns` reads it (its summary as JSON text). */
const Event = classRow(ConnectorSyncEvent, { json: ["summary"] })

/**
 * The dedupe key of a new event (see Sync.ts): a `push` or a `sync_now` of a known commit is one event per target
 * and commit while it is pending; `resync` and `apply` always run.
 */
export const dedupeKeyOf = (eventType: SyncEventType, revision: string | null): string | null =>
  (eventType === "push" || eventType === "sync_now") && revision !== null ? revision : null

/** What an event is recorded with: what `Sync.enqueue` is asked for (Sync.ts's `EnqueueInput`, of the same shape). */
export interface RecordInput {
  readonly organizationId: OrganizationId
  readonly connectorInstanceId: ConnectorInstanceId
  readonly connectorTargetId: ConnectorTargetId
  readonly eventType: SyncEventType
  /** The commit to sync; null: the workflow reads the branch head first. */
  readonly revision: string | null
  /** The webhook delivery id, for `push`. */
  readonly externalEventRef?: string | null | undefined
}

/** How many times `record` tries when the pending event it collided with finished before it could be read. */
const recordAttempts = 3

/** The pending event an insert collided with finished (its key was cleared) before it could be read. */
class FinishedMeanwhile extends Data.TaggedError("FinishedMeanwhile") {}

/** An event's organization and id: what its workflow is started with. */
export const QueuedEvent = Schema.Struct({ organizationId: OrganizationId, id: ConnectorSyncEventId })
export type QueuedEvent = typeof QueuedEvent.Type

const Scoped = QueuedEvent
const Updated = Schema.Struct({ id: ConnectorSyncEventId })

const makeSyncEventsRepository = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql`e.id, e.connector_instance_id, e.connector_target_id, e.event_type, e.external_event_ref,
      e.source_revision_ref, e.status, e.attempts, e.last_error, e.summary_json::text AS summary, e.created_at,
      e.started_at, e.completed_at`

  const findRow = findOne({
    Request: Scoped,
    Result: Event,
    execute: ({ id, organizationId }) => sql`SELECT ${columns} FROM connector_sync_events e WHERE e.organization_id = ${organizationId} AND e.id = ${id}`
  })
  const find = (organizationId: OrganizationId, id: ConnectorSyncEventId) => findRow({ organizationId, id })

  const findForWorkRow = findOne({
    Request: Scoped,
    Result: withColumns(Event, { organizationDeleted: Schema.Boolean }),
    execute: ({ id, organizationId }) =>
      sql`SELECT ${columns}, (o.deleted_at IS NOT NULL) AS organization_deleted
            FROM connector_sync_events e JOIN organizations o ON o.id = e.organization_id
            WHERE e.organization_id = ${organizationId} AND e.id = ${id}`
  })
  /** The event as its sync's workflow reads it: with whether its organization was deleted (its syncs stop then). */
  const findForWork = (organizationId: OrganizationId, id: ConnectorSyncEventId) =>
    Effect.map(findForWorkRow({ organizationId, id }), Option.map(({ organizationDeleted, row }) => ({ event: row, organizationDeleted })))

  const findPendingRow = findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, targetId: ConnectorTargetId, dedupeKey: Schema.String }),
    Result: Event,
    execute: ({ dedupeKey, organizationId, targetId }) =>
      sql`SELECT ${columns} FROM connector_sync_events e
            WHERE e.organization_id = ${organizationId} AND e.connector_target_id = ${targetId} AND e.dedupe_key = ${dedupeKey}`
  })
  const findPending = (organizationId: OrganizationId, targetId: ConnectorTargetId, dedupeKey: string) =>
    findPendingRow({ organizationId, targetId, dedupeKey })

  const latestRow = findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, targetId: ConnectorTargetId }),
    Result: withColumns(Event, { mappingsChanged: Schema.Boolean }),
    execute: ({ organizationId, targetId }) =>
      sql`SELECT ${columns}, EXISTS (SELECT 1 FROM connector_mappings m
                     WHERE m.organization_id = e.organization_id AND m.connector_target_id = e.connector_target_id
                       AND m.updated_at >= e.started_at) AS mappings_changed
            FROM connector_sync_events e
            WHERE e.organization_id = ${organizationId} AND e.connector_instance_id = (
                    SELECT t.connector_instance_id FROM connector_targets t WHERE t.organization_id = ${organizationId} AND t.id = ${targetId})
              AND e.connector_target_id = ${targetId}
            ORDER BY e.created_at DESC, e.id DESC LIMIT 1`
  })
  /**
   * The target's newest event, when it syncs `revision` (of any kind: the one an apply queued too) and will read
   * the target's mappings as they are: queued, or running or completed with no mapping of the target changed since
   * it started. "Sync now" at that head answers it rather than syncing the same commit a second time.
   */
  const syncedAt = (organizationId: OrganizationId, targetId: ConnectorTargetId, revision: string) =>
    Effect.map(latestRow({ organizationId, targetId }), (latest) =>
      Option.flatMap(latest, ({ mappingsChanged, row }) =>
        row.sourceRevisionRef === revision &&
          (row.status === "queued" || ((row.status === "running" || row.status === "completed") && !mappingsChanged))
          ? Option.some(row)
          : Option.none()))

  const insertRow = findOne({
    Request: ConnectorSyncEventRow.insert,
    Result: Updated,
    execute: (row) =>
      sql`INSERT INTO connector_sync_events ${sql.insert(row)}
            ON CONFLICT (organization_id, connector_target_id, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING RETURNING id`
  })

  /**
   * Records a queued event, or finds the pending one with the same dedupe key (`created` false). When that one
   * finished between the insert and the read (its key is cleared then), the insert is tried again, at once, up to
   * `recordAttempts` in all.
   */
  const record = (input: RecordInput) => {
    const dedupeKey = dedupeKeyOf(input.eventType, input.revision)
    const attempt = Effect.gen(function*() {
      const id = yield* makeId("cse")
      const inserted = yield* insertRow({
        id,
        organizationId: input.organizationId,
        connectorInstanceId: input.connectorInstanceId,
        connectorTargetId: input.connectorTargetId,
        eventType: input.eventType,
        externalEventRef: input.externalEventRef ?? null,
        sourceRevisionRef: input.revision,
        dedupeKey,
        status: "queued",
        attempts: 0,
        lastError: null,
        summaryJson: null,
        startedAt: null,
        completedAt: null,
        createdAt: yield* now
      })
      if (Option.isSome(inserted)) {
        const event = yield* find(input.organizationId, id)
        return { event: Option.getOrThrow(event), created: true }
      }
      // Only an event with a dedupe key collides.
      const pending = yield* findPending(input.organizationId, input.connectorTargetId, dedupeKey!)
      if (Option.isSome(pending)) return { event: pending.value, created: false }
      return yield* new FinishedMeanwhile()
    })
    return attempt.pipe(
      Effect.retry({ schedule: Schedule.recurs(recordAttempts - 1), while: (error) => error._tag === "FinishedMeanwhile" }),
      Effect.catchTag("FinishedMeanwhile", () =>
        Effect.die(new Error(`sync event of ${input.connectorTargetId} at ${input.revision}: no row after ${recordAttempts} attempts`)))
    )
  }

  const listRows = findAll({
    Request: Schema.Struct({
      organizationId: OrganizationId,
      instanceId: ConnectorInstanceId,
      query: Schema.Struct({ connectorTargetId: Schema.optional(ConnectorTargetId), status: Schema.optional(ConnectorSyncEvent.fields.status) }),
      page: Keyset.PageRequest
    }),
    Result: trustedClassRow(ConnectorSyncEvent, { json: ["summary"] }),
    execute: ({ instanceId, organizationId, page, query }) =>
      sql`SELECT ${columns} FROM connector_sync_events e WHERE ${
          sql.and([
            sql`e.organization_id = ${organizationId}`,
            sql`e.connector_instance_id = ${instanceId}`,
            query.connectorTargetId !== undefined ? sql`e.connector_target_id = ${query.connectorTargetId}` : sql`true`,
            query.status !== undefined ? sql`e.status = ${query.status}` : sql`true`,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })
  const list = (organizationId: OrganizationId, instanceId: ConnectorInstanceId, query: ConnectorSyncEventListQuery) =>
    Keyset.page(newestEvents, query, (page) =>
      listRows({ organizationId, instanceId, query: { connectorTargetId: query.connectorTargetId, status: query.status }, page }))

  const startRow = findOne({
    Request: Schema.Struct({ ...Scoped.fields, at: DateColumn }),
    Result: Updated,
    execute: ({ at, id, organizationId }) =>
      sql`UPDATE connector_sync_events SET status = 'running', started_at = COALESCE(started_at, ${at})
            WHERE organization_id = ${organizationId} AND id = ${id} AND status IN ('queued', 'running') RETURNING id`
  })
  const runningBesideRow = findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, targetId: ConnectorTargetId, id: ConnectorSyncEventId }),
    Result: Updated,
    execute: ({ id, organizationId, targetId }) =>
      sql`SELECT id FROM connector_sync_events
            WHERE organization_id = ${organizationId} AND connector_target_id = ${targetId} AND status = 'running' AND id <> ${id}
            LIMIT 1`
  })
  /**
   * Another event of the target that is running, if any: a sync starts only when none is (read under the target's
   * lock, `ConnectorsRepository.lockTarget`, so two cannot both start).
   */
  const runningBeside = (organizationId: OrganizationId, targetId: ConnectorTargetId, id: ConnectorSyncEventId) =>
    runningBesideRow({ organizationId, targetId, id })

  /** Marks a queued event running (a running one stays as it is): false when it had already finished. */
  const start = (organizationId: OrganizationId, id: ConnectorSyncEventId) =>
    Effect.flatMap(now, (at) => Effect.map(startRow({ organizationId, id, at }), Option.isSome))

  const setRevisionRow = execute({
    Request: Schema.Struct({ ...Scoped.fields, revision: Schema.String }),
    execute: ({ id, organizationId, revision }) =>
      sql`UPDATE connector_sync_events SET source_revision_ref = COALESCE(source_revision_ref, ${revision})
            WHERE organization_id = ${organizationId} AND id = ${id}`
  })
  /** The commit a sync without one read from the branch head (the first one stored stays). */
  const setRevision = (organizationId: OrganizationId, id: ConnectorSyncEventId, revision: string) =>
    setRevisionRow({ organizationId, id, revision })

  const attemptRow = execute({
    Request: Schema.Struct({ ...Scoped.fields, lastError: Schema.String }),
    execute: ({ id, lastError, organizationId }) =>
      sql`UPDATE connector_sync_events SET attempts = attempts + 1, last_error = ${lastError}
            WHERE organization_id = ${organizationId} AND id = ${id}`
  })
  /** One transient failure retried: counted, and its reason kept. */
  const attempt = (organizationId: OrganizationId, id: ConnectorSyncEventId, lastError: string) =>
    attemptRow({ organizationId, id, lastError })

  const finishRow = execute({
    Request: Schema.Struct({
      ...Scoped.fields,
      status: Schema.Literals(["completed", "failed", "ignored"]),
      summaryJson: ConnectorSyncEventRow.fields.summaryJson,
      lastError: Schema.optional(Schema.String),
      at: DateColumn
    }),
    execute: ({ at, id, lastError, organizationId, status, summaryJson }) =>
      sql`UPDATE connector_sync_events SET status = ${status}, dedupe_key = NULL, completed_at = ${at},
              started_at = COALESCE(started_at, ${at}),
              summary_json = ${summaryJson}::jsonb,
              last_error = ${lastError !== undefined ? sql`${lastError}` : sql`last_error`}
            WHERE organization_id = ${organizationId} AND id = ${id} AND status IN ('queued', 'running')`
  })
  /**
   * Finishes a pending event. The dedupe key is cleared, so a later sync of the same commit (with other
   * mappings, say) runs again; an event that had already finished is left as it was.
   */
  const finish = (
    organizationId: OrganizationId,
    id: ConnectorSyncEventId,
    status: "completed" | "failed" | "ignored",
    fields: { readonly summary?: SyncSummary | undefined; readonly lastError?: string | undefined }
  ) =>
    Effect.flatMap(now, (at) =>
      finishRow({ organizationId, id, status, summaryJson: fields.summary ?? null, lastError: fields.lastError, at }))

  const complete = (organizationId: OrganizationId, id: ConnectorSyncEventId, summary: SyncSummary) =>
    finish(organizationId, id, "completed", { summary })
  const fail = (organizationId: OrganizationId, id: ConnectorSyncEventId, reason: string) =>
    finish(organizationId, id, "failed", { lastError: reason })
  const ignore = (organizationId: OrganizationId, id: ConnectorSyncEventId, reason: string) =>
    finish(organizationId, id, "ignored", { lastError: reason })

  const completedOnInstance = execute({
    Request: Schema.Struct({ organizationId: OrganizationId, instanceId: ConnectorInstanceId, revision: Schema.NullOr(Schema.String), at: DateColumn }),
    execute: ({ at, instanceId, organizationId, revision }) =>
      sql`UPDATE connector_instances SET last_sync_status = 'completed', last_synced_at = ${at}, last_sync_cursor = ${revision}
            WHERE organization_id = ${organizationId} AND id = ${instanceId}`
  })
  const failedOnInstance = execute({
    Request: Schema.Struct({ organizationId: OrganizationId, instanceId: ConnectorInstanceId }),
    execute: ({ instanceId, organizationId }) =>
      sql`UPDATE connector_instances SET last_sync_status = 'failed' WHERE organization_id = ${organizationId} AND id = ${instanceId}`
  })
  /** The instance's last sync: its outcome, and when completed, when and at which commit. */
  const recordOnInstance = (
    organizationId: OrganizationId,
    instanceId: ConnectorInstanceId,
    outcome: { readonly status: "completed" | "failed"; readonly revision?: string }
  ) =>
    outcome.status === "completed"
      ? Effect.flatMap(now, (at) => completedOnInstance({ organizationId, instanceId, revision: outcome.revision ?? null, at }))
      : failedOnInstance({ organizationId, instanceId })

  /**
   * Events of every organization still queued since before `before`, oldest first, at most `limit`: those whose
   * workflow may not have started (the process that recorded them stopped before starting it).
   */
  const queuedBefore = findAll({
    Request: Schema.Struct({ before: DateColumn, limit: Schema.Int }),
    Result: QueuedEvent,
    execute: ({ before, limit }) =>
      sql`/* instance-wide: sync events left queued, whose workflows the recovery starts (connectors/SyncWorkflow.ts) */
            SELECT e.organization_id, e.id FROM connector_sync_events e
            WHERE e.status = 'queued' AND e.created_at < ${before}
              AND NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = e.organization_id AND o.deleted_at IS NOT NULL)
            ORDER BY e.created_at, e.id LIMIT ${limit}`
  })

  return {
    recordOnInstance,
    record,
    find,
    findPending,
    syncedAt,
    list,
    runningBeside,
    start,
    setRevision,
    attempt,
    complete,
    fail,
    ignore,
    queuedBefore,
    findForWork
  } as const
})

export class SyncEventsRepository extends Context.Service<SyncEventsRepository>()("@orgplane/server/connectors/SyncEventsRepository", { make: makeSyncEventsRepository }) {
  static readonly layer = Layer.effect(this, this.make)
}

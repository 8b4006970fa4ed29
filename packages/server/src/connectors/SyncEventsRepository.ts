/**
 * Storage of sync events (`connector_sync_events`): recording one with its dedupe key, the state changes its
 * workflow makes, and an instance's history as a keyset over `connector_sync_events_list_idx`.
 */
import { SqlClient } from "@effect/sql"
import {
  type ConnectorInstanceId,
  ConnectorSyncEvent,
  type ConnectorSyncEventId,
  type ConnectorSyncEventListQuery,
  type ConnectorTargetId,
  type OrganizationId,
  type SyncEventType,
  type SyncSummary
} from "@orgplane/schema"
import { Effect, Option } from "effect"
import { makeId } from "../platform/Ids.js"
import * as Keyset from "../platform/Keyset.js"
import { first } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { parseJson } from "./ConnectorsRepository.js"
import type { EnqueueInput } from "./Sync.js"

type Row = { readonly [column: string]: unknown }

/** Newest first, as the index orders them. */
const newestEvents = Keyset.make<ConnectorSyncEvent>("connector_sync_events", "desc", [
  { column: "e.created_at", value: (event) => event.createdAt.toISOString() },
  { column: "e.id", value: (event) => event.id }
])

export const toSyncEvent = (row: Row) => new ConnectorSyncEvent({ ...row, summary: parseJson(row.summary) } as any, true)

/**
 * The dedupe key of a new event (see Sync.ts): a `push` or a `sync_now` of a known commit is one event per target
 * and commit while it is pending; `resync` and `apply` always run.
 */
export const dedupeKeyOf = (eventType: SyncEventType, revision: string | null): string | null =>
  (eventType === "push" || eventType === "sync_now") && revision !== null ? revision : null

/** What an event records: what `Sync.enqueue` is asked for. */
export type RecordInput = EnqueueInput

/** How many times `record` tries when the pending event it collided with finished before it could be read. */
const recordAttempts = 3

export class SyncEventsRepository extends Effect.Service<SyncEventsRepository>()("@orgplane/server/SyncEventsRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`e.id, e.connector_instance_id, e.connector_target_id, e.event_type, e.external_event_ref,
      e.source_revision_ref, e.status, e.attempts, e.last_error, e.summary_json::text AS summary, e.created_at,
      e.started_at, e.completed_at`

    const find = (organizationId: OrganizationId, id: ConnectorSyncEventId) =>
      sql<Row>`SELECT ${columns} FROM connector_sync_events e WHERE e.organization_id = ${organizationId} AND e.id = ${id}`.pipe(
        Effect.map((rows) => Option.map(first(rows), toSyncEvent))
      )

    const findPending = (organizationId: OrganizationId, targetId: ConnectorTargetId, dedupeKey: string) =>
      sql<Row>`SELECT ${columns} FROM connector_sync_events e
               WHERE e.organization_id = ${organizationId} AND e.connector_target_id = ${targetId} AND e.dedupe_key = ${dedupeKey}`.pipe(
        Effect.map((rows) => Option.map(first(rows), toSyncEvent))
      )

    /**
     * The target's newest event, when it completed a sync of `revision` and no mapping of the target changed since
     * it started: "sync now" at that head answers it rather than reading the same files again.
     */
    const syncedAt = (organizationId: OrganizationId, targetId: ConnectorTargetId, revision: string) =>
      sql<Row>`SELECT ${columns} FROM connector_sync_events e
               WHERE e.organization_id = ${organizationId} AND e.connector_instance_id = (
                       SELECT t.connector_instance_id FROM connector_targets t WHERE t.organization_id = ${organizationId} AND t.id = ${targetId})
                 AND e.connector_target_id = ${targetId}
               ORDER BY e.created_at DESC, e.id DESC LIMIT 1`.pipe(
        Effect.flatMap((rows) => {
          const latest = Option.map(first(rows), toSyncEvent)
          if (Option.isNone(latest) || latest.value.status !== "completed" || latest.value.sourceRevisionRef !== revision) {
            return Effect.succeed(Option.none<ConnectorSyncEvent>())
          }
          return sql<{ changed: boolean }>`SELECT EXISTS (SELECT 1 FROM connector_mappings m
                   WHERE m.organization_id = ${organizationId} AND m.connector_target_id = ${targetId}
                     AND m.updated_at >= ${latest.value.startedAt}) AS changed`.pipe(
            Effect.map(([row]) => (row.changed ? Option.none() : latest))
          )
        })
      )

    /**
     * Records a queued event, or finds the pending one with the same dedupe key (`created` false). When that one
     * finished between the insert and the read (its key is cleared then), the insert is tried again.
     */
    const record = (input: RecordInput) =>
      Effect.gen(function*() {
        const dedupeKey = dedupeKeyOf(input.eventType, input.revision)
        for (let attempt = 1; ; attempt++) {
          const id = yield* makeId("cse")
          const inserted = yield* sql<{ id: string }>`INSERT INTO connector_sync_events ${
            sql.insert({
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
              summaryJson: "null",
              startedAt: null,
              completedAt: null,
              createdAt: yield* now
            })
          } ON CONFLICT (organization_id, connector_target_id, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING RETURNING id`
          if (inserted.length > 0) {
            const event = yield* find(input.organizationId, id)
            return { event: Option.getOrThrow(event), created: true }
          }
          const pending = yield* findPending(input.organizationId, input.connectorTargetId, dedupeKey!)
          if (Option.isSome(pending)) return { event: pending.value, created: false }
          if (attempt >= recordAttempts) return yield* Effect.dieMessage(`sync event of ${input.connectorTargetId} at ${input.revision}: no row after ${attempt} attempts`)
        }
      })

    const list = (organizationId: OrganizationId, instanceId: ConnectorInstanceId, query: ConnectorSyncEventListQuery) =>
      Keyset.page(newestEvents, query, (page) =>
        sql<Row>`SELECT ${columns} FROM connector_sync_events e WHERE ${
          sql.and([
            sql`e.organization_id = ${organizationId}`,
            sql`e.connector_instance_id = ${instanceId}`,
            query.connectorTargetId !== undefined ? sql`e.connector_target_id = ${query.connectorTargetId}` : sql`true`,
            query.status !== undefined ? sql`e.status = ${query.status}` : sql`true`,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`.pipe(Effect.map((rows) => rows.map(toSyncEvent))))

    /** Marks a queued event running (a running one stays as it is): false when it had already finished. */
    const start = (organizationId: OrganizationId, id: ConnectorSyncEventId) =>
      Effect.flatMap(now, (at) =>
        sql<{ id: string }>`UPDATE connector_sync_events SET status = 'running', started_at = COALESCE(started_at, ${at})
            WHERE organization_id = ${organizationId} AND id = ${id} AND status IN ('queued', 'running') RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0)
        ))

    /** The commit a sync without one read from the branch head (the first one stored stays). */
    const setRevision = (organizationId: OrganizationId, id: ConnectorSyncEventId, revision: string) =>
      sql`UPDATE connector_sync_events SET source_revision_ref = COALESCE(source_revision_ref, ${revision})
          WHERE organization_id = ${organizationId} AND id = ${id}`

    /** One transient failure retried: counted, and its reason kept. */
    const attempt = (organizationId: OrganizationId, id: ConnectorSyncEventId, lastError: string) =>
      sql`UPDATE connector_sync_events SET attempts = attempts + 1, last_error = ${lastError}
          WHERE organization_id = ${organizationId} AND id = ${id}`

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
        sql`UPDATE connector_sync_events SET status = ${status}, dedupe_key = NULL, completed_at = ${at},
              started_at = COALESCE(started_at, ${at}),
              summary_json = ${fields.summary !== undefined ? JSON.stringify(fields.summary) : "null"}::jsonb,
              last_error = ${fields.lastError !== undefined ? sql`${fields.lastError}` : sql`last_error`}
            WHERE organization_id = ${organizationId} AND id = ${id} AND status IN ('queued', 'running')`)

    const complete = (organizationId: OrganizationId, id: ConnectorSyncEventId, summary: SyncSummary) =>
      finish(organizationId, id, "completed", { summary })
    const fail = (organizationId: OrganizationId, id: ConnectorSyncEventId, reason: string) =>
      finish(organizationId, id, "failed", { lastError: reason })
    const ignore = (organizationId: OrganizationId, id: ConnectorSyncEventId, reason: string) =>
      finish(organizationId, id, "ignored", { lastError: reason })

    /** The instance's last sync: its outcome, and when completed, when and at which commit. */
    const recordOnInstance = (
      organizationId: OrganizationId,
      instanceId: ConnectorInstanceId,
      outcome: { readonly status: "completed" | "failed"; readonly revision?: string }
    ) =>
      Effect.flatMap(now, (at) =>
        outcome.status === "completed"
          ? sql`UPDATE connector_instances SET last_sync_status = 'completed', last_synced_at = ${at},
                  last_sync_cursor = ${outcome.revision ?? null}
                WHERE organization_id = ${organizationId} AND id = ${instanceId}`
          : sql`UPDATE connector_instances SET last_sync_status = 'failed'
                WHERE organization_id = ${organizationId} AND id = ${instanceId}`)

    return { recordOnInstance, record, find, findPending, syncedAt, list, start, setRevision, attempt, complete, fail, ignore } as const
  })
}) {}

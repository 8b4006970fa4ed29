/**
 * Sync of connector targets: the contract the webhook, discovery apply and the sync endpoints use.
 *
 * A sync is a `connector_sync_events` row and a durable workflow (`SyncWorkflow`) whose execution id is the event's
 * id, so the engine never runs one event twice.
 *
 * Dedupe rule: `push` and `sync_now` with a revision get `dedupe_key` = the revision, unique per (organization,
 * target, key); `resync` and `apply` get none and always run. The key is cleared when the event completes, fails or
 * is ignored, so a redelivered push or a repeated "sync now" finds the pending event, while a later sync of the same
 * commit (after mappings changed, say) runs again. "Sync now" also answers the target's newest event when it
 * completed at the same head and no mapping of the target changed since it started (the API's "already synced").
 *
 * The implementation (`layer`) lives with the workflow in SyncWorkflow.ts.
 */
import {
  type CodeHostApiError,
  Conflict,
  type ConnectorInstanceId,
  type ConnectorSyncEvent,
  type ConnectorSyncEventId,
  type ConnectorSyncEventListQuery,
  type ConnectorTargetId,
  type Forbidden,
  type InvalidRequest,
  type NotFound,
  type ServiceUnavailable,
  type OrganizationId,
  type SyncEventType
} from "@orgplane/schema"
import * as Workflow from "@effect/workflow/Workflow"
import type { Principal } from "../platform/Principal.js"
import { Context, type Effect, Schema } from "effect"
import { OrganizationId as OrganizationIdSchema, ConnectorSyncEventId as SyncEventIdSchema } from "@orgplane/schema"

type Caller = Principal

export const instanceDisabled = () =>
  new Conflict({ error: "connector_instance_disabled", message: "The connector instance is disabled; enable it first." })
export const targetRequired = () =>
  new Conflict({ error: "connector_target_required", message: "The connector instance has no target yet: add one first." })

export interface EnqueueInput {
  readonly organizationId: OrganizationId
  readonly connectorInstanceId: ConnectorInstanceId
  readonly connectorTargetId: ConnectorTargetId
  readonly eventType: SyncEventType
  /** The commit to sync; null: the workflow reads the branch head first. */
  readonly revision: string | null
  /** The webhook delivery id, for `push`. */
  readonly externalEventRef?: string | null | undefined
}

export interface Enqueued {
  readonly event: ConnectorSyncEvent
  /** False when a queued or running event of the same target and revision was found instead. */
  readonly created: boolean
}

export interface SyncService {
  /**
   * Records a sync event and starts its workflow (no access check: callers have done theirs). `push`, `sync_now`
   * with a revision dedupe on (target, revision) while pending; `resync` and `apply` always create a new event.
   *
   * The event is written in the caller's transaction when there is one, but the workflow starts at once: call it
   * once the rows the sync reads (mappings, targets) are committed, ideally after the transaction.
   */
  readonly enqueue: (input: EnqueueInput) => Effect.Effect<Enqueued, ServiceUnavailable>
  readonly syncNow: (
    caller: Caller,
    instanceId: ConnectorInstanceId
  ) => Effect.Effect<
    { readonly ok: true; readonly items: ReadonlyArray<ConnectorSyncEvent> },
    NotFound | Forbidden | Conflict | CodeHostApiError | ServiceUnavailable
  >
  readonly resync: (
    caller: Caller,
    targetId: ConnectorTargetId
  ) => Effect.Effect<{ readonly ok: true; readonly item: ConnectorSyncEvent }, NotFound | Forbidden | Conflict | ServiceUnavailable>
  readonly listEvents: (
    caller: Caller,
    instanceId: ConnectorInstanceId,
    query: ConnectorSyncEventListQuery
  ) => Effect.Effect<
    { readonly items: ReadonlyArray<ConnectorSyncEvent>; readonly nextCursor: string | null },
    NotFound | Forbidden | InvalidRequest | ServiceUnavailable
  >
  readonly getEvent: (
    caller: Caller,
    eventId: ConnectorSyncEventId
  ) => Effect.Effect<{ readonly item: ConnectorSyncEvent }, NotFound | Forbidden | ServiceUnavailable>
}

export class Sync extends Context.Tag("@orgplane/server/Sync")<Sync, SyncService>() {}

/** One sync: the event says which target, revision and kind; its id is the execution id. */
export const SyncWorkflow = Workflow.make({
  name: "orgplane/ConnectorSync",
  payload: { organizationId: OrganizationIdSchema, syncEventId: SyncEventIdSchema },
  success: Schema.Void,
  idempotencyKey: ({ syncEventId }) => syncEventId
})

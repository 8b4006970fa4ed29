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
 * The event is recorded first and its workflow started once the recording transaction has committed, never inside
 * it: a transaction may run again (a serialization failure), and a workflow started for a row that was rolled
 * back would be an execution without its event, the retry's event a second one. The row is the durable record:
 * when a process stops (or the start fails) after the commit, the event stays `queued`, and the recovery
 * (SyncRecovery.ts) starts the workflows of events queued for longer than `recoveryPolicy.after`. Starting one
 * twice is harmless: the engine runs one execution per event id.
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
  type StoredCredentialUnreadable,
  type OrganizationId,
  type SyncEventType
} from "@orgplane/schema"
import { OrganizationId as OrganizationIdSchema, ConnectorSyncEventId as SyncEventIdSchema } from "@orgplane/schema"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as Workflow from "effect/workflow/Workflow"
import type { WorkflowEngine } from "effect/workflow/WorkflowEngine"
import type { IdGenerator } from "../platform/Ids.js"
import type { CursorKey } from "../platform/Keyset.js"
import type { Principal } from "../platform/Principal.js"

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

/** An event's organization and id: what its workflow is started with. */
export interface EventRef {
  readonly organizationId: OrganizationId
  readonly id: ConnectorSyncEventId
}

/** What recording an event and starting its workflow use. */
export type Requirements = SqlClient.SqlClient | IdGenerator | WorkflowEngine

export interface SyncService {
  /**
   * Records a sync event (no access check: callers have done theirs) in its own transaction, then starts its
   * workflow: for callers outside a transaction, once the rows the sync reads (mappings, targets) are committed.
   * `push`, `sync_now` with a revision dedupe on (target, revision) while pending; `resync` and `apply` always
   * create a new event. A pending event found is started again too (see `start`).
   */
  readonly enqueue: (input: EnqueueInput) => Effect.Effect<Enqueued, ServiceUnavailable, Requirements>
  /** Records a sync event as `enqueue` does, in the caller's transaction; `start` it after the commit. */
  readonly record: (input: EnqueueInput) => Effect.Effect<Enqueued, SqlError, SqlClient.SqlClient | IdGenerator>
  /**
   * Starts the workflows of recorded events, after the transaction that recorded them committed. Never fails: a
   * start that fails is logged, and the event, still `queued`, is left to the recovery.
   */
  readonly start: (events: ReadonlyArray<EventRef>) => Effect.Effect<void, never, WorkflowEngine>
  readonly syncNow: (
    caller: Caller,
    instanceId: ConnectorInstanceId
  ) => Effect.Effect<
    { readonly ok: true; readonly items: ReadonlyArray<ConnectorSyncEvent> },
    NotFound | Forbidden | Conflict | CodeHostApiError | ServiceUnavailable | StoredCredentialUnreadable,
    Requirements
  >
  readonly resync: (
    caller: Caller,
    targetId: ConnectorTargetId
  ) => Effect.Effect<
    { readonly ok: true; readonly item: ConnectorSyncEvent },
    NotFound | Forbidden | Conflict | ServiceUnavailable,
    Requirements
  >
  readonly listEvents: (
    caller: Caller,
    instanceId: ConnectorInstanceId,
    query: ConnectorSyncEventListQuery
  ) => Effect.Effect<
    { readonly items: ReadonlyArray<ConnectorSyncEvent>; readonly nextCursor: string | null },
    NotFound | Forbidden | InvalidRequest | ServiceUnavailable,
    SqlClient.SqlClient | CursorKey
  >
  readonly getEvent: (
    caller: Caller,
    eventId: ConnectorSyncEventId
  ) => Effect.Effect<{ readonly item: ConnectorSyncEvent }, NotFound | Forbidden | ServiceUnavailable>
}

export class Sync extends Context.Service<Sync, SyncService>()("@orgplane/server/connectors/Sync") {}

/** One sync: the event says which target, revision and kind; its id is the execution id. */
export const SyncWorkflow = Workflow.make("orgplane/ConnectorSync", {
  payload: { organizationId: OrganizationIdSchema, syncEventId: SyncEventIdSchema },
  success: Schema.Void,
  idempotencyKey: ({ syncEventId }) => syncEventId
})

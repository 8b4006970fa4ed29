/**
 * Storage of audit streams (`audit_streams`), always by organization, but for the delivery loop's claim of due
 * streams and its look at when the next one is due (instance-wide, said so in the statements). Rows carry the signing secret encrypted
 * (`secretCiphertext`): decrypt it with platform/Crypto.ts and never return or log it. Also the reads of events in
 * a stream's order: `(occurred_at, id)` after the stream's cursor.
 */
import {
  AuditEvent,
  AuditEventId,
  AuditStream,
  AuditStreamDeliveryId,
  AuditStreamId,
  type AuditStreamListQuery,
  MembershipId,
  OrganizationId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import * as Keyset from "../platform/Keyset.js"
import { DateColumn, execute, findAll, findOne, trustedClassRow } from "../platform/Statements.js"
import { eventColumns, eventJson } from "./AuditRepository.js"

/** A row of `audit_streams`, as stored (the secret encrypted). */
export class AuditStreamRow extends Model.Class<AuditStreamRow>("AuditStreamRow")({
  id: Model.GeneratedByApp(AuditStreamId),
  organizationId: OrganizationId,
  url: AuditStream.fields.url,
  description: AuditStream.fields.description,
  status: AuditStream.fields.status,
  secretCiphertext: Model.Sensitive(Schema.String),
  createdByMembershipId: Schema.NullOr(MembershipId),
  createdAt: DateColumn,
  updatedAt: DateColumn,
  /** The last acknowledged event's time and id (the stream's creation time and `''` before the first). */
  cursorOccurredAt: DateColumn,
  cursorEventId: Schema.String,
  /** The batch in flight: its delivery id and last event, kept until acknowledged so a retry sends the same. */
  pendingDeliveryId: Schema.NullOr(AuditStreamDeliveryId),
  pendingLastOccurredAt: Schema.NullOr(DateColumn),
  pendingLastEventId: Schema.NullOr(AuditEventId),
  lastAttemptAt: Schema.NullOr(DateColumn),
  lastSuccessAt: Schema.NullOr(DateColumn),
  consecutiveFailures: Schema.Int,
  lastError: Schema.NullOr(Schema.String),
  nextAttemptAt: Schema.NullOr(DateColumn),
  leaseUntil: Schema.NullOr(DateColumn)
}) {}

/** The resource the API shows of a row: never the secret, the cursor as the last delivered event. */
export const toStream = (row: AuditStreamRow): AuditStream =>
  new AuditStream({
    id: row.id,
    organizationId: row.organizationId,
    url: row.url,
    description: row.description,
    status: row.status,
    delivery: {
      lastDeliveredEventId: row.cursorEventId === "" ? null : (row.cursorEventId as AuditEventId),
      lastDeliveredAt: row.cursorEventId === "" ? null : row.cursorOccurredAt,
      lastAttemptAt: row.lastAttemptAt,
      lastSuccessAt: row.lastSuccessAt,
      consecutiveFailures: row.consecutiveFailures,
      lastError: row.lastError,
      nextAttemptAt: row.status === "paused" ? null : row.nextAttemptAt
    },
    createdByOrgMembershipId: row.createdByMembershipId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt
  })

/** Oldest first, over `audit_streams_list_idx`. */
const byCreation = Keyset.make<AuditStreamRow>("audit_streams", "asc", [
  { column: "s.created_at", value: (row) => row.createdAt.toISOString(), compare: (value, sql) => sql`${value}::timestamptz` },
  { column: "s.id", value: (row) => row.id }
])

const Scoped = Schema.Struct({ organizationId: OrganizationId, id: AuditStreamId })

/** A position in a stream's order. */
export interface Position {
  readonly occurredAt: Date
  readonly id: string
}

export interface Changes {
  readonly url?: string | undefined
  readonly description?: string | null | undefined
  readonly status?: AuditStreamRow["status"] | undefined
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = execute({
    Request: AuditStreamRow.insert,
    execute: (row) =>
      sql`INSERT INTO audit_streams (id, organization_id, url, description, status, secret_ciphertext, created_by_membership_id,
              created_at, updated_at, cursor_occurred_at, cursor_event_id, consecutive_failures, next_attempt_at)
            VALUES (${row.id}, ${row.organizationId}, ${row.url}, ${row.description}, ${row.status}, ${row.secretCiphertext},
              ${row.createdByMembershipId}, ${row.createdAt}, ${row.updatedAt}, ${row.cursorOccurredAt}, ${row.cursorEventId},
              0, ${row.nextAttemptAt})`
  })

  const count = (organizationId: OrganizationId) =>
    Effect.map(
      sql<{ count: number }>`SELECT count(*)::int AS count FROM audit_streams WHERE organization_id = ${organizationId}`,
      ([row]) => row?.count ?? 0
    )

  const find = findOne({
    Request: Scoped,
    Result: AuditStreamRow,
    execute: ({ id, organizationId }) => sql`SELECT s.* FROM audit_streams s WHERE s.organization_id = ${organizationId} AND s.id = ${id}`
  })

  const listRows = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, page: Keyset.PageRequest }),
    Result: AuditStreamRow,
    execute: ({ organizationId, page }) =>
      sql`SELECT s.* FROM audit_streams s WHERE s.organization_id = ${organizationId} AND ${page.after}
            ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })

  const list = (organizationId: OrganizationId, query: AuditStreamListQuery) =>
    Keyset.page(byCreation, query, (page) => listRows({ organizationId, page }))

  /**
   * Applies `changes`; a new URL, or resuming, makes the next attempt due at `at` with failures forgotten (the
   * cursor stays); pausing clears the next attempt. A lease stays: a delivery under way finishes first.
   */
  const update = (organizationId: OrganizationId, id: AuditStreamId, changes: Changes, at: Date) => {
    const fresh = changes.url !== undefined || changes.status === "active"
    const sets = [
      changes.url === undefined ? undefined : sql`url = ${changes.url}`,
      changes.description === undefined ? undefined : sql`description = ${changes.description}`,
      changes.status === undefined ? undefined : sql`status = ${changes.status}`,
      changes.status === "paused" ? sql`next_attempt_at = NULL` : undefined,
      fresh && changes.status !== "paused"
        ? sql`next_attempt_at = ${at}, consecutive_failures = 0, last_error = NULL`
        : undefined,
      sql`updated_at = ${at}`
    ].filter((set) => set !== undefined)
    return Effect.map(
      sql`UPDATE audit_streams SET ${sql.csv(sets)} WHERE organization_id = ${organizationId} AND id = ${id} RETURNING id`,
      (rows) => rows.length > 0
    )
  }

  const setSecret = (organizationId: OrganizationId, id: AuditStreamId, ciphertext: string, at: Date) =>
    Effect.map(
      sql`UPDATE audit_streams SET secret_ciphertext = ${ciphertext}, updated_at = ${at}
            WHERE organization_id = ${organizationId} AND id = ${id} RETURNING id`,
      (rows) => rows.length > 0
    )

  const remove = (organizationId: OrganizationId, id: AuditStreamId) =>
    Effect.map(
      sql`DELETE FROM audit_streams WHERE organization_id = ${organizationId} AND id = ${id} RETURNING id`,
      (rows) => rows.length > 0
    )

  // --- Delivery (audit/StreamDelivery.ts) ------------------------------------------------------------------------

  const claimRows = findAll({
    Request: Schema.Struct({ at: DateColumn, leaseUntil: DateColumn, limit: Schema.Int }),
    Result: AuditStreamRow,
    execute: ({ at, leaseUntil, limit }) =>
      sql`/* instance-wide: audit streams with a delivery due, leased to this runner for one attempt (audit/StreamDelivery.ts) */
            UPDATE audit_streams s SET lease_until = ${leaseUntil}
            WHERE s.id IN (
              SELECT d.id FROM audit_streams d
              WHERE d.status = 'active' AND d.next_attempt_at <= ${at} AND (d.lease_until IS NULL OR d.lease_until <= ${at})
                AND NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = d.organization_id AND o.deleted_at IS NOT NULL)
              ORDER BY d.next_attempt_at LIMIT ${limit}
              FOR UPDATE SKIP LOCKED
            )
            RETURNING s.*`
  })

  /**
   * Up to `limit` active streams due at `at`, leased until `leaseUntil` (skipping rows another process is claiming);
   * a deleted organization's streams are not due (restored, they take up where their cursor is).
   */
  const claim = (at: Date, leaseUntil: Date, limit: number) => claimRows({ at, leaseUntil, limit })

  /**
   * The settle horizon at `at`: events at or after it may still be joined by older ones being committed, so
   * delivery stops before it. The earlier of `at - settle` and the start of the oldest other open transaction on
   * this database (an event is stamped inside its change's transaction, after that transaction began).
   */
  const horizon = (at: Date, settleMillis: number) =>
    Effect.map(
      sql<{ horizon: Date }>`SELECT least(${at}::timestamptz - ${settleMillis} * interval '1 millisecond', (
              SELECT min(a.xact_start) FROM pg_stat_activity a
              WHERE a.pid <> pg_backend_pid() AND a.xact_start IS NOT NULL AND a.datname = current_database()
                AND a.backend_type IN ('client backend', 'standalone backend')
            )) AS horizon`,
      ([row]) => {
        // A SELECT without FROM answers one row.
        if (row === undefined) throw new Error("The settle horizon's statement answered no row")
        return row.horizon
      }
    )

  const eventsAfter = findAll({
    Request: Schema.Struct({
      organizationId: OrganizationId,
      afterOccurredAt: DateColumn,
      afterId: Schema.String,
      before: Schema.NullOr(DateColumn),
      throughOccurredAt: Schema.NullOr(DateColumn),
      throughId: Schema.NullOr(Schema.String),
      limit: Schema.Int
    }),
    Result: trustedClassRow(AuditEvent, { json: eventJson }),
    execute: (request) =>
      sql`SELECT ${sql.literal(eventColumns)} FROM audit_events e
            WHERE ${
          sql.and([
            sql`e.organization_id = ${request.organizationId}`,
            sql`(e.occurred_at, e.id) > (${request.afterOccurredAt}, ${request.afterId})`,
            request.before === null ? sql`true` : sql`e.occurred_at < ${request.before}`,
            request.throughOccurredAt === null ? sql`true` : sql`(e.occurred_at, e.id) <= (${request.throughOccurredAt}, ${request.throughId})`
          ])
        }
            ORDER BY e.occurred_at ASC, e.id ASC LIMIT ${request.limit}`
  })

  /** The events after `after`, oldest first: before `before`, or through `through` (a pending batch), at most `limit`. */
  const events = (
    organizationId: OrganizationId,
    after: Position,
    bound: { readonly before: Date } | { readonly through: Position },
    limit: number
  ) =>
    eventsAfter({
      organizationId,
      afterOccurredAt: after.occurredAt,
      afterId: after.id,
      before: "before" in bound ? bound.before : null,
      throughOccurredAt: "through" in bound ? bound.through.occurredAt : null,
      throughId: "through" in bound ? bound.through.id : null,
      limit
    })

  /** Fixes the batch about to be sent, unless one is fixed already (a claim that raced); whether it was fixed. */
  const fixBatch = (organizationId: OrganizationId, id: AuditStreamId, deliveryId: string, last: Position) =>
    Effect.map(
      sql`UPDATE audit_streams SET pending_delivery_id = ${deliveryId}, pending_last_occurred_at = ${last.occurredAt},
              pending_last_event_id = ${last.id}
            WHERE organization_id = ${organizationId} AND id = ${id} AND pending_delivery_id IS NULL RETURNING id`,
      (rows) => rows.length > 0
    )

  /**
   * The batch `deliveryId` was acknowledged at `at`: the cursor moves to its last event, failures are forgotten and
   * the next attempt is due at `next` (unless paused meanwhile). Compare-and-set on the delivery id: a runner whose
   * lease ran out cannot move a cursor another one already moved.
   */
  const delivered = (organizationId: OrganizationId, id: AuditStreamId, deliveryId: string, last: Position, at: Date, next: Date) =>
    sql`UPDATE audit_streams SET cursor_occurred_at = ${last.occurredAt}, cursor_event_id = ${last.id},
            pending_delivery_id = NULL, pending_last_occurred_at = NULL, pending_last_event_id = NULL,
            last_attempt_at = ${at}, last_success_at = ${at}, consecutive_failures = 0, last_error = NULL,
            next_attempt_at = CASE WHEN status = 'active' THEN ${next}::timestamptz END, lease_until = NULL
          WHERE organization_id = ${organizationId} AND id = ${id} AND pending_delivery_id = ${deliveryId}`

  /** The batch `deliveryId` failed at `at` with `error`: one more failure, the next attempt due at `next`. */
  const failed = (organizationId: OrganizationId, id: AuditStreamId, deliveryId: string, error: string, at: Date, next: Date) =>
    sql`UPDATE audit_streams SET last_attempt_at = ${at}, consecutive_failures = consecutive_failures + 1, last_error = ${error},
            next_attempt_at = CASE WHEN status = 'active' THEN ${next}::timestamptz END, lease_until = NULL
          WHERE organization_id = ${organizationId} AND id = ${id} AND pending_delivery_id = ${deliveryId}`

  /**
   * The earliest next attempt of an active stream of an organization not deleted, leased or not (a leased one is
   * due already, its delivery under way); null when there is none: what the delivery loop waits for when it claimed
   * nothing.
   */
  const nextAttempt = Effect.map(
    sql<{ next: Date | string | null }>`/* instance-wide: when an audit stream is next due (audit/StreamDelivery.ts) */
          SELECT min(d.next_attempt_at) AS next FROM audit_streams d
          WHERE d.status = 'active' AND d.next_attempt_at IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = d.organization_id AND o.deleted_at IS NOT NULL)`,
    ([row]) => row === undefined || row.next === null ? null : new Date(row.next)
  )

  /** Nothing to send: the lease is released and the stream looked at again at `next`. */
  const idle = (organizationId: OrganizationId, id: AuditStreamId, next: Date) =>
    sql`UPDATE audit_streams SET next_attempt_at = CASE WHEN status = 'active' THEN ${next}::timestamptz END, lease_until = NULL
          WHERE organization_id = ${organizationId} AND id = ${id}`

  /** A pending batch whose events are all gone (retention deleted them): the cursor moves past it. */
  const skipBatch = (organizationId: OrganizationId, id: AuditStreamId, deliveryId: string, last: Position) =>
    sql`UPDATE audit_streams SET cursor_occurred_at = ${last.occurredAt}, cursor_event_id = ${last.id},
            pending_delivery_id = NULL, pending_last_occurred_at = NULL, pending_last_event_id = NULL, lease_until = NULL
          WHERE organization_id = ${organizationId} AND id = ${id} AND pending_delivery_id = ${deliveryId}`

  return {
    insert,
    count,
    find,
    list,
    update,
    setSecret,
    remove,
    claim,
    nextAttempt,
    horizon,
    events,
    fixBatch,
    delivered,
    failed,
    idle,
    skipBatch
  } as const
})

export class StreamsRepository extends Context.Service<StreamsRepository>()("@orgplane/server/audit/StreamsRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

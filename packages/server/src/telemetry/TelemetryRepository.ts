/**
 * Storage of telemetry: events (one multi-row INSERT per batch) and session dimensions (one upsert per batch).
 */
import type { MembershipId, OrganizationId, TelemetryDimensionId, TelemetryEventId, TelemetrySource, UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"

/** One event as stored; organization, member, user and reception time are the batch's. */
export interface EventRow {
  readonly id: TelemetryEventId
  readonly event_type: string
  readonly occurred_at: string
  readonly source: TelemetrySource | null
  readonly session_id: string | null
  readonly duration_ms: number | null
  readonly success: boolean | null
}

export interface Batch {
  readonly organizationId: OrganizationId
  readonly membershipId: MembershipId
  readonly userId: UserId | null
  readonly receivedAt: Date
}

/** One dimension of a session; `value` left out keeps the stored one, and `derived` is used when there is none. */
export interface DimensionRow {
  readonly id: TelemetryDimensionId
  readonly source: TelemetrySource | "unknown"
  readonly session_id: string
  readonly dimension_type: string
  readonly value?: string
  readonly derived: string
  readonly label: string
  readonly metadata?: unknown
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** The rows travel as one JSON parameter: the statement's text is the same whatever the batch's size. */
  const insertEvents = Effect.fn("TelemetryRepository.insertEvents")(function*(batch: Batch, rows: ReadonlyArray<EventRow>) {
    yield* sql`
        INSERT INTO telemetry_events (organization_id, id, membership_id, user_id, event_type, occurred_at, source,
                                      session_id, duration_ms, success, received_at)
        SELECT ${batch.organizationId}, e.id, ${batch.membershipId}, ${batch.userId}, e.event_type, e.occurred_at, e.source,
               e.session_id, e.duration_ms, e.success, ${batch.receivedAt}
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          AS e(id text, event_type text, occurred_at timestamptz, source text, session_id text, duration_ms integer, success boolean)`
  })

  /**
   * Upserts dimensions, one row per (organization, source, session, type): the label and metadata are replaced,
   * the value only when one was sent. Rows must be distinct on that key (Postgres refuses to update a row twice).
   */
  const upsertDimensions = Effect.fn("TelemetryRepository.upsertDimensions")(function*(
    organizationId: OrganizationId,
    rows: ReadonlyArray<DimensionRow>,
    at: Date
  ) {
    yield* sql`
        WITH input AS (
          SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
            AS i(id text, source text, session_id text, dimension_type text, value text, derived text, label text, metadata jsonb)
        )
        INSERT INTO telemetry_session_dimensions AS d (organization_id, id, source, session_id, dimension_type,
                                                       dimension_value, dimension_label, metadata, created_at, updated_at, last_seen_at)
        SELECT ${organizationId}, i.id, i.source, i.session_id, i.dimension_type, COALESCE(i.value, i.derived), i.label,
               i.metadata, ${at}, ${at}, ${at}
        FROM input i
        ON CONFLICT (organization_id, source, session_id, dimension_type) DO UPDATE SET
          dimension_value = COALESCE(
            (SELECT i.value FROM input i
             WHERE i.source = EXCLUDED.source AND i.session_id = EXCLUDED.session_id AND i.dimension_type = EXCLUDED.dimension_type),
            d.dimension_value),
          dimension_label = EXCLUDED.dimension_label,
          metadata = EXCLUDED.metadata,
          updated_at = EXCLUDED.updated_at,
          last_seen_at = EXCLUDED.last_seen_at`
  })

  return { insertEvents, upsertDimensions } as const
})

export class TelemetryRepository extends Context.Service<TelemetryRepository>()("@orgplane/server/telemetry/TelemetryRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

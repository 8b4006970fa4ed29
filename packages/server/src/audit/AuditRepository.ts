/**
 * Reading the audit log by an organization's filters (events are written by platform/AuditRecorder.ts).
 */
import { AuditEvent, type AuditEventsQuery, type AuditFilters, AuditSettings, OrganizationId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as Keyset from "../platform/Keyset.js"
import { classRow, DateColumn, findAll, findOne, Fragment, trustedClassRow } from "../platform/Statements.js"

/** The columns of an event, shaped as the resource (the nested members built as JSON text, parsed by the row). */
const columns = `e.id, e.organization_id, e.occurred_at, e.action, e.category, e.outcome,
  json_build_object('type', e.actor_type, 'id', e.actor_id, 'membershipId', e.actor_membership_id, 'label', e.actor_label)::text AS actor,
  json_build_object('credentialId', e.credential_id, 'ssoConnectionId', e.sso_connection_id, 'ip', e.ip, 'userAgent', e.user_agent, 'channel', e.channel, 'planHash', e.plan_hash)::text AS via,
  e.targets::text AS targets, e.changes::text AS changes, e.reason, e.request_id`

const json = ["actor", "via", "targets", "changes"] as const

/** The same columns and JSON members for audit/StreamsRepository.ts, which reads events in a stream's order. */
export { columns as eventColumns, json as eventJson }

const keysets = {
  desc: Keyset.make<AuditEvent>("audit-events", "desc", [
    { column: "e.occurred_at", value: (event) => event.occurredAt.toISOString(), compare: (value, sql) => sql`${value}::timestamptz` },
    { column: "e.id", value: (event) => event.id }
  ]),
  asc: Keyset.make<AuditEvent>("audit-events", "asc", [
    { column: "e.occurred_at", value: (event) => event.occurredAt.toISOString(), compare: (value, sql) => sql`${value}::timestamptz` },
    { column: "e.id", value: (event) => event.id }
  ])
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const get = findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, id: Schema.String }),
    Result: classRow(AuditEvent, { json }),
    execute: ({ id, organizationId }) =>
      sql`SELECT ${sql.literal(columns)} FROM audit_events e WHERE e.organization_id = ${organizationId} AND e.id = ${id}`
  })

  const pageRows = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, where: Fragment, page: Keyset.PageRequest }),
    Result: trustedClassRow(AuditEvent, { json }),
    execute: ({ organizationId, page, where }) =>
      sql`SELECT ${sql.literal(columns)} FROM audit_events e
            WHERE e.organization_id = ${organizationId} AND ${where} AND ${page.after}
            ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })

  /** The filters as one condition over `e` (true when there are none). */
  const filtered = (query: AuditFilters) => {
    const conditions = [
      query.from === undefined ? undefined : sql`e.occurred_at >= ${query.from}`,
      query.to === undefined ? undefined : sql`e.occurred_at < ${query.to}`,
      query.action === undefined
        ? undefined
        : query.action.endsWith(".*")
        ? sql`e.action LIKE ${`${query.action.slice(0, -1)}%`}`
        : sql`e.action = ${query.action}`,
      query.actorId === undefined ? undefined : sql`e.actor_id = ${query.actorId}`,
      query.targetId === undefined ? undefined : sql`e.target_ids @> ARRAY[${query.targetId}]::text[]`,
      query.outcome === undefined ? undefined : sql`e.outcome = ${query.outcome}`,
      query.credentialId === undefined ? undefined : sql`e.credential_id = ${query.credentialId}`,
      query.requestId === undefined ? undefined : sql`e.request_id = ${query.requestId}`
    ].filter((condition) => condition !== undefined)
    return conditions.length === 0 ? sql`true` : sql.and(conditions)
  }

  /** One page of the organization's events under the query's filters. */
  const list = Effect.fn("AuditRepository.list")((organizationId: OrganizationId, query: AuditEventsQuery) =>
    Keyset.page(keysets[query.order ?? "desc"], query, (page) => pageRows({ organizationId, where: filtered(query), page }), {
      follow: query.order === "asc"
    }))

  /** Up to `limit` events under the filters after `after` (oldest first), for an export read batch by batch. */
  const batch = (organizationId: OrganizationId, query: AuditFilters, after: AuditEvent | undefined, limit: number) =>
    pageRows({
      organizationId,
      where: filtered(query),
      page: {
        after: after === undefined ? sql`true` : sql`(e.occurred_at, e.id) > (${after.occurredAt}, ${after.id})`,
        orderBy: sql`e.occurred_at ASC, e.id ASC`,
        fetch: limit
      }
    })

  /** The organization's settings, if an owner set them. */
  const settings = findOne({
    Request: OrganizationId,
    Result: classRow(AuditSettings),
    execute: (organizationId) =>
      sql`SELECT retention_days, updated_at FROM audit_settings WHERE organization_id = ${organizationId}`
  })

  const saveSettings = findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, retentionDays: Schema.Int, updatedAt: DateColumn }),
    Result: classRow(AuditSettings),
    execute: ({ organizationId, retentionDays, updatedAt }) =>
      sql`INSERT INTO audit_settings (organization_id, retention_days, updated_at)
            VALUES (${organizationId}, ${retentionDays}, ${updatedAt})
            ON CONFLICT (organization_id) DO UPDATE SET retention_days = EXCLUDED.retention_days, updated_at = EXCLUDED.updated_at
            RETURNING retention_days, updated_at`
  })

  /** Organizations holding events older than their retention at `now`, with that retention. */
  const expiring = findAll({
    Request: Schema.Struct({ now: DateColumn, defaultDays: Schema.Int }),
    Result: Schema.Struct({ organizationId: OrganizationId, retentionDays: Schema.Int }),
    execute: ({ defaultDays, now }) =>
      sql`/* instance-wide: organizations with audit events past their retention (audit/Retention.ts) */
            SELECT o.id AS organization_id, coalesce(s.retention_days, ${defaultDays}) AS retention_days
            FROM organizations o LEFT JOIN audit_settings s ON s.organization_id = o.id
            WHERE EXISTS (
              SELECT 1 FROM audit_events e
              WHERE e.organization_id = o.id AND e.occurred_at < ${now}::timestamptz - coalesce(s.retention_days, ${defaultDays}) * interval '1 day'
            )`
  })

  /** The longest retention any organization keeps (the default when none keeps longer). */
  const longestRetention = Effect.fn("AuditRepository.longestRetention")(function*(defaultDays: number) {
    const rows = yield* sql<{ days: number }>`/* instance-wide: the longest retention, to drop whole months nobody keeps (audit/Retention.ts) */
          SELECT greatest(${defaultDays}::int, coalesce(max(retention_days), 0)) AS days FROM audit_settings`
    // An aggregate without GROUP BY answers one row.
    return rows[0]?.days ?? defaultDays
  })

  /** Deletes up to `limit` of the organization's events before `before`; how many it deleted. */
  const deleteBefore = Effect.fn("AuditRepository.deleteBefore")(function*(organizationId: OrganizationId, before: Date, limit: number) {
    const rows = yield* sql<{ id: string }>`DELETE FROM audit_events WHERE organization_id = ${organizationId} AND (occurred_at, id) IN (
              SELECT occurred_at, id FROM audit_events WHERE organization_id = ${organizationId} AND occurred_at < ${before} LIMIT ${limit}
            ) RETURNING id`
    return rows.length
  })

  /**
   * A deleted person's events, kept with the person named by their pseudonym (the accounts area, in the deletion's
   * transaction): every event they made in the organization (as themselves, through one of its memberships, or an
   * API key of one: `actor_membership_id`) says `pseudonym` where it said `Name <email>`, and the events that changed
   * their own account (`user.*` naming them as a target) keep which fields changed, their values redacted. Ids,
   * actions, times, addresses and agents stay: the organization's record of what happened, kept until its retention
   * ends. Events are neither signed nor chained, so nothing else needs to follow; events a stream already delivered
   * are the receiver's. Answers how many events changed.
   */
  const pseudonymise = Effect.fn("AuditRepository.pseudonymise")(function*(input: {
    readonly organizationId: OrganizationId
    readonly userId: string
    readonly membershipIds: ReadonlyArray<string>
    readonly pseudonym: string
    readonly redacted: string
  }) {
    const acted = yield* sql`UPDATE audit_events SET actor_label = ${input.pseudonym}
          WHERE organization_id = ${input.organizationId} AND actor_label IS DISTINCT FROM ${input.pseudonym}
            AND (actor_id = ${input.userId}
                 ${input.membershipIds.length === 0 ? sql`` : sql`OR actor_membership_id IN ${sql.in(input.membershipIds)}`})
          RETURNING 1`
    const redactAll = (side: "before" | "after") =>
      sql`(SELECT COALESCE(jsonb_object_agg(k, to_jsonb(${input.redacted}::text)), '{}'::jsonb)
               FROM jsonb_object_keys(COALESCE(changes -> ${sql.literal(`'${side}'`)}, '{}'::jsonb)) k)`
    const changed = yield* sql`UPDATE audit_events SET changes = jsonb_build_object(
              'before', CASE WHEN jsonb_typeof(changes -> 'before') = 'object' THEN ${redactAll("before")} ELSE changes -> 'before' END,
              'after', CASE WHEN jsonb_typeof(changes -> 'after') = 'object' THEN ${redactAll("after")} ELSE changes -> 'after' END,
              'changedFields', changes -> 'changedFields')
          WHERE organization_id = ${input.organizationId} AND action LIKE 'user.%' AND changes IS NOT NULL
            AND target_ids @> ARRAY[${input.userId}]::text[]
          RETURNING 1`
    return acted.length + changed.length
  })

  return { get, list, batch, settings, saveSettings, expiring, longestRetention, deleteBefore, pseudonymise } as const
})

export class AuditRepository extends Context.Service<AuditRepository>()("@orgplane/server/audit/AuditRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

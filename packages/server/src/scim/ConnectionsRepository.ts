/**
 * Storage of SCIM connections as admins manage them (`scim_connections`, with their counts and health), their tokens
 * (`scim_tokens`, hashed) and the reading of their event log (`scim_events`). Every statement names the organization.
 */
import {
  Conflict,
  type MembershipId,
  OrganizationId,
  ScimConnection,
  ScimConnectionHealth,
  ScimConnectionId,
  ScimEvent,
  type ScimEventListQuery,
  ScimToken,
  ScimTokenId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as Keyset from "../platform/Keyset.js"
import { catchUniqueViolation } from "../platform/Sql.js"
import { DateColumn, execute, findAll, findOne, single, trusted } from "../platform/Statements.js"

const connection = ScimConnection.fields
const health = ScimConnectionHealth.fields

/** A connection's row: the resource's fields as stored (instants as Dates, rules as JSON text), less the base URL. */
const ConnectionRow = Schema.Struct({
  id: connection.id,
  organizationId: connection.organizationId,
  name: connection.name,
  groupMappingMode: connection.groupMappingMode,
  defaultRole: connection.defaultRole,
  roleRules: Schema.fromJsonString(connection.roleRules),
  users: connection.users,
  groups: connection.groups,
  activeTokens: connection.activeTokens,
  lastSuccessAt: Schema.toType(health.lastSuccessAt),
  lastFailureAt: Schema.toType(health.lastFailureAt),
  unresolvedFailures: health.unresolvedFailures,
  createdByOrgMembershipId: connection.createdByOrgMembershipId,
  createdAt: Schema.toType(connection.createdAt),
  updatedAt: Schema.toType(connection.updatedAt)
})
type ConnectionRow = typeof ConnectionRow.Type

/** The resource, with the connection's SCIM base URL under the server's `base`. */
export const toConnection = (row: ConnectionRow, base: string) => {
  const { lastFailureAt, lastSuccessAt, unresolvedFailures, ...rest } = row
  return new ScimConnection({
    ...rest,
    baseUrl: `${base}/scim/v2/${row.id}`,
    health: { lastSuccessAt, lastFailureAt, unresolvedFailures }
  }, { disableChecks: true })
}

const oldestFirst = Keyset.make<ConnectionRow>("scim-connections", "asc", [
  { column: "c.created_at", value: (row) => row.createdAt.toISOString() },
  { column: "c.id", value: (row) => row.id }
])

const tokensNewestFirst = Keyset.make<ScimToken>("scim-tokens", "desc", [
  { column: "t.created_at", value: (token) => token.createdAt.toISOString() },
  { column: "t.id", value: (token) => token.id }
])

/** Event ids are time-ordered: the id alone is the order. */
const eventsNewestFirst = Keyset.make<ScimEvent>("scim-events", "desc", [{ column: "e.id", value: (event) => event.id }])

export const connectionExists = (name: string) =>
  new Conflict({ error: "scim_connection_exists", message: `The organization already has a SCIM connection named "${name}".` })

const Scoped = Schema.Struct({ organizationId: OrganizationId, id: ScimConnectionId })
export type Scoped = typeof Scoped.Type

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const select = (at: Date) =>
    sql`
      SELECT c.id, c.organization_id, c.name, c.group_mapping_mode, c.default_role, c.role_rules::text AS role_rules,
             (SELECT count(*)::int FROM scim_users u
              WHERE u.organization_id = c.organization_id AND u.connection_id = c.id AND u.deleted_at IS NULL) AS users,
             (SELECT count(*)::int FROM scim_groups g
              WHERE g.organization_id = c.organization_id AND g.connection_id = c.id) AS groups,
             (SELECT count(*)::int FROM scim_tokens t
              WHERE t.organization_id = c.organization_id AND t.connection_id = c.id AND t.revoked_at IS NULL
                AND (t.expires_at IS NULL OR t.expires_at > ${at})) AS active_tokens,
             c.last_success_at, c.last_failure_at, c.failures_since_success AS unresolved_failures,
             c.created_by_membership_id AS created_by_org_membership_id, c.created_at, c.updated_at
      FROM scim_connections c`

  const find = findOne({
    Request: Schema.Struct({ ...Scoped.fields, at: DateColumn }),
    Result: ConnectionRow,
    execute: ({ at, id, organizationId }) => sql`${select(at)} WHERE c.organization_id = ${organizationId} AND c.id = ${id}`
  })

  const listRows = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, at: DateColumn, page: Keyset.PageRequest }),
    Result: ConnectionRow,
    execute: ({ at, organizationId, page }) =>
      sql`${select(at)} WHERE c.organization_id = ${organizationId} AND ${page.after} ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })
  const list = (organizationId: OrganizationId, at: Date, query: Keyset.PageQuery) =>
    Keyset.page(oldestFirst, query, (page) => listRows({ organizationId, at, page }))

  /** Locks the connection for the rest of the transaction; false when the organization has no such connection. */
  const lock = ({ id, organizationId }: Scoped) =>
    Effect.map(
      sql`SELECT id FROM scim_connections WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`,
      (rows) => rows.length > 0
    )

  const insert = (row: {
    readonly id: ScimConnectionId
    readonly organizationId: OrganizationId
    readonly name: string
    readonly groupMappingMode: ScimConnection["groupMappingMode"]
    readonly defaultRole: ScimConnection["defaultRole"]
    readonly roleRules: ScimConnection["roleRules"]
    readonly createdByMembershipId: MembershipId | null
    readonly at: Date
  }) =>
    sql`INSERT INTO scim_connections (id, organization_id, name, group_mapping_mode, default_role, role_rules,
                                        created_by_membership_id, created_at, updated_at)
          VALUES (${row.id}, ${row.organizationId}, ${row.name}, ${row.groupMappingMode}, ${row.defaultRole},
                  ${JSON.stringify(row.roleRules)}::jsonb, ${row.createdByMembershipId}, ${row.at}, ${row.at})`

  const update = (scoped: Scoped, change: {
    readonly name?: string | undefined
    readonly groupMappingMode?: ScimConnection["groupMappingMode"] | undefined
    readonly defaultRole?: ScimConnection["defaultRole"] | undefined
    readonly roleRules?: ScimConnection["roleRules"] | undefined
  }, at: Date) =>
    sql`UPDATE scim_connections SET ${
        sql.csv([
          sql`updated_at = ${at}`,
          ...(change.name === undefined ? [] : [sql`name = ${change.name}`]),
          ...(change.groupMappingMode === undefined ? [] : [sql`group_mapping_mode = ${change.groupMappingMode}`]),
          ...(change.defaultRole === undefined ? [] : [sql`default_role = ${change.defaultRole}`]),
          ...(change.roleRules === undefined ? [] : [sql`role_rules = ${JSON.stringify(change.roleRules)}::jsonb`])
        ])
      } WHERE organization_id = ${scoped.organizationId} AND id = ${scoped.id}`

  /** Deletes the connection (its tokens, Users, Groups and events go with it; its teams stay, released). */
  const remove = (scoped: Scoped) =>
    Effect.map(
      sql`DELETE FROM scim_connections WHERE organization_id = ${scoped.organizationId} AND id = ${scoped.id} RETURNING id`,
      (rows) => rows.length > 0
    )

  const tokenColumns = (at: Date) =>
    sql`t.id, t.connection_id, t.name,
          CASE WHEN t.revoked_at IS NOT NULL THEN 'revoked'
               WHEN t.expires_at IS NOT NULL AND t.expires_at <= ${at} THEN 'expired' ELSE 'active' END AS state,
          t.created_by_membership_id AS created_by_org_membership_id, t.created_at, t.expires_at, t.last_used_at, t.revoked_at`

  const insertToken = execute({
    Request: Schema.Struct({
      id: ScimTokenId,
      organizationId: OrganizationId,
      connectionId: ScimConnectionId,
      name: Schema.String,
      tokenHash: Schema.String,
      createdByMembershipId: Schema.NullOr(Schema.String),
      createdAt: DateColumn,
      expiresAt: Schema.NullOr(DateColumn)
    }),
    execute: (row) => sql`INSERT INTO scim_tokens ${sql.insert(row)}`
  })

  const findTokenRow = single({
    Request: Schema.Struct({ ...Scoped.fields, tokenId: ScimTokenId, at: DateColumn }),
    Result: trusted<ScimToken>(),
    execute: ({ at, id, organizationId, tokenId }) =>
      sql`SELECT ${tokenColumns(at)} FROM scim_tokens t
            WHERE t.organization_id = ${organizationId} AND t.connection_id = ${id} AND t.id = ${tokenId}`
  })
  /** A token just written (it exists). */
  const findToken = (request: typeof Scoped.Type & { readonly tokenId: ScimTokenId; readonly at: Date }) =>
    Effect.map(findTokenRow(request), (row) => new ScimToken(row, { disableChecks: true }))

  const listTokenRows = findAll({
    Request: Schema.Struct({ ...Scoped.fields, at: DateColumn, page: Keyset.PageRequest }),
    Result: trusted<ScimToken>(),
    execute: ({ at, id, organizationId, page }) =>
      sql`SELECT ${tokenColumns(at)} FROM scim_tokens t
            WHERE t.organization_id = ${organizationId} AND t.connection_id = ${id} AND ${page.after}
            ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })
  const listTokens = (scoped: Scoped, at: Date, query: Keyset.PageQuery) =>
    Keyset.page(tokensNewestFirst, query, (page) =>
      Effect.map(listTokenRows({ ...scoped, at, page }), (rows) => rows.map((row) => new ScimToken(row, { disableChecks: true }))))

  /** Marks the token revoked (once: a second revoke keeps the first instant); false when the connection has no such token. */
  const revokeToken = (scoped: Scoped, tokenId: ScimTokenId, at: Date) =>
    Effect.map(
      sql`UPDATE scim_tokens SET revoked_at = COALESCE(revoked_at, ${at})
            WHERE organization_id = ${scoped.organizationId} AND connection_id = ${scoped.id} AND id = ${tokenId}
            RETURNING id`,
      (rows) => rows.length > 0
    )

  const listEventRows = findAll({
    Request: Schema.Struct({ ...Scoped.fields, query: trusted<ScimEventListQuery>(), page: Keyset.PageRequest }),
    Result: trusted<ScimEvent>(),
    execute: ({ id, organizationId, page, query }) =>
      sql`SELECT e.id, e.connection_id, e.token_id, e.method, e.path, e.resource_type, e.resource_id, e.status,
                   CASE WHEN e.status < 400 THEN 'succeeded' WHEN e.status < 500 THEN 'refused' ELSE 'failed' END AS outcome,
                   e.scim_type, e.detail, e.created_at
            FROM scim_events e
            WHERE ${
          sql.and([
            sql`e.organization_id = ${organizationId} AND e.connection_id = ${id}`,
            query.outcome === "succeeded"
              ? sql`e.status < 400`
              : query.outcome === "refused"
              ? sql`e.status >= 400 AND e.status < 500`
              : query.outcome === "failed"
              ? sql`e.status >= 500`
              : sql`true`,
            query.resourceType === undefined ? sql`true` : sql`e.resource_type = ${query.resourceType}`,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })
  const listEvents = (scoped: Scoped, query: ScimEventListQuery) =>
    Keyset.page(eventsNewestFirst, query, (page) =>
      Effect.map(listEventRows({ ...scoped, query, page }), (rows) => rows.map((row) => new ScimEvent(row, { disableChecks: true }))))

  return {
    find,
    list,
    lock,
    insert: (row: Parameters<typeof insert>[0]) => insert(row).pipe(catchUniqueViolation(() => connectionExists(row.name))),
    update: (scoped: Scoped, change: Parameters<typeof update>[1], at: Date) =>
      update(scoped, change, at).pipe(catchUniqueViolation(() => connectionExists(change.name ?? ""))),
    remove,
    insertToken,
    findToken,
    listTokens,
    revokeToken,
    listEvents
  } as const
})

export class ConnectionsRepository extends Context.Service<ConnectionsRepository>()("@orgplane/server/scim/ConnectionsRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

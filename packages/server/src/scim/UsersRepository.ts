/**
 * Storage of SCIM Users (`scim_users`): a connection's record of a membership, with what the directory sent.
 *
 * A row is read by a schema (`UserColumns`), which takes the jsonb columns as JSON text or already parsed.
 */
import { MembershipId, OrganizationId, ScimConnectionId, UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { DateColumn } from "../platform/Statements.js"
import { UserResourceType } from "./Attributes.js"
import { userMapping } from "./Filter.js"

/** A connection, as a request of its directory knows it. */
export interface ScimScope {
  readonly organizationId: OrganizationId
  readonly connectionId: ScimConnectionId
}

/** A jsonb column, as the driver gives it: parsed, or JSON text. */
const jsonb = <S extends Schema.Top>(schema: S) => Schema.Union([Schema.fromJsonString(schema), schema])
const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

/** A row of `scim_users` as the statements below select it. */
const UserColumns = Schema.Struct({
  organizationId: OrganizationId,
  membershipId: MembershipId,
  connectionId: ScimConnectionId,
  userId: UserId,
  userName: Schema.String,
  externalId: Schema.NullOr(Schema.String),
  active: Schema.Boolean,
  displayName: Schema.NullOr(Schema.String),
  emails: jsonb(Schema.Array(JsonObject)),
  resource: jsonb(JsonObject),
  version: Schema.Number,
  createdAt: DateColumn,
  updatedAt: DateColumn
})
export type ScimUserRow = typeof UserColumns.Type

// Our own rows: one that does not read is a bug (a defect), as Statements.ts's statements have it.
const toRows = Schema.decodeUnknownEffect(Schema.Array(UserColumns))
const readRows = (rows: ReadonlyArray<unknown>) => Effect.orDie(toRows(rows))
const readRow = (rows: ReadonlyArray<unknown>) => Effect.map(readRows(rows.slice(0, 1)), (read): ScimUserRow | undefined => read[0])
/** The row a write returned: a write of a row the caller locked (none is a bug). */
const readOne = (rows: ReadonlyArray<unknown>) =>
  Effect.flatMap(readRow(rows), (row) => row === undefined ? Effect.die(new Error("The written scim_users row was not returned.")) : Effect.succeed(row))
const readTotals = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ total: Schema.Number })))

/** What a write stores: the resource's columns and the rest of it. */
export interface ScimUserValues {
  readonly userName: string
  readonly externalId: string | null
  readonly active: boolean
  readonly displayName: string | null
  readonly emails: ReadonlyArray<unknown>
  readonly resource: Record<string, unknown>
}

const columns = `u.organization_id, u.membership_id, u.connection_id, u.user_id, u.user_name, u.external_id, u.active,
  u.display_name, u.emails, u.resource, u.version, u.created_at, u.updated_at`

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const select = sql.literal(`SELECT ${columns} FROM scim_users u`)

  /** A live (not deleted) User of the connection; `lock` takes its row lock until the transaction ends. */
  const find = (scope: ScimScope, id: MembershipId, options: { readonly lock?: boolean } = {}) =>
    sql`${select} WHERE u.organization_id = ${scope.organizationId} AND u.connection_id = ${scope.connectionId}
            AND u.membership_id = ${id} AND u.deleted_at IS NULL ${sql.literal(options.lock ? "FOR UPDATE" : "")}`.pipe(
      Effect.flatMap(readRow),
      Effect.map(Option.fromUndefinedOr)
    )

  /**
   * What a new or changed User would clash with in the connection: another live User with the userName (without
   * case) or the externalId. Index-backed: both have unique indexes.
   */
  const clash = (scope: ScimScope, values: { readonly userName: string; readonly externalId: string | null }, except?: MembershipId) =>
    sql<{ membershipId: string; userName: string; externalId: string | null }>`
        SELECT u.membership_id, u.user_name, u.external_id FROM scim_users u
        WHERE u.organization_id = ${scope.organizationId} AND u.connection_id = ${scope.connectionId} AND u.deleted_at IS NULL
          AND (lower(u.user_name) = ${values.userName.toLowerCase()}
               ${values.externalId === null ? sql`` : sql`OR u.external_id = ${values.externalId}`})
          ${except === undefined ? sql`` : sql`AND u.membership_id <> ${except}`}
        LIMIT 1`.pipe(Effect.map((rows) => Option.fromNullishOr(rows[0])))

  /** A live SCIM record of the membership in any connection of the organization (a member is one connection's User). */
  const linkedConnection = (organizationId: OrganizationId, id: MembershipId) =>
    sql<{ connectionId: string }>`
        SELECT u.connection_id FROM scim_users u
        WHERE u.organization_id = ${organizationId} AND u.membership_id = ${id} AND u.deleted_at IS NULL`.pipe(
      Effect.map((rows) => Option.fromNullishOr(rows[0]?.connectionId))
    )

  /** A record of the membership left by an earlier deletion: it keeps the primary key, so a new one replaces it. */
  const dropDeleted = (organizationId: OrganizationId, id: MembershipId) =>
    sql`DELETE FROM scim_users WHERE organization_id = ${organizationId} AND membership_id = ${id} AND deleted_at IS NOT NULL`

  const insert = (
    scope: ScimScope,
    row: ScimUserValues & { readonly membershipId: MembershipId; readonly userId: UserId; readonly at: Date }
  ) =>
    sql`INSERT INTO scim_users (organization_id, membership_id, connection_id, user_id, user_name, external_id, active,
            display_name, emails, resource, version, created_at, updated_at)
          VALUES (${scope.organizationId}, ${row.membershipId}, ${scope.connectionId}, ${row.userId}, ${row.userName},
            ${row.externalId}, ${row.active}, ${row.displayName}, ${JSON.stringify(row.emails)}::jsonb,
            ${JSON.stringify(row.resource)}::jsonb, 1, ${row.at}, ${row.at})
          RETURNING ${sql.literal(columns.replace(/u\./g, ""))}`.pipe(Effect.flatMap(readOne))

  const update = (scope: ScimScope, id: MembershipId, row: ScimUserValues & { readonly at: Date }) =>
    sql`UPDATE scim_users SET user_name = ${row.userName}, external_id = ${row.externalId}, active = ${row.active},
            display_name = ${row.displayName}, emails = ${JSON.stringify(row.emails)}::jsonb,
            resource = ${JSON.stringify(row.resource)}::jsonb, version = version + 1, updated_at = ${row.at}
          WHERE organization_id = ${scope.organizationId} AND connection_id = ${scope.connectionId}
            AND membership_id = ${id} AND deleted_at IS NULL
          RETURNING ${sql.literal(columns.replace(/u\./g, ""))}`.pipe(Effect.flatMap(readOne))

  const markDeleted = (scope: ScimScope, id: MembershipId, at: Date) =>
    sql`UPDATE scim_users SET deleted_at = ${at}, active = false, version = version + 1, updated_at = ${at}
          WHERE organization_id = ${scope.organizationId} AND connection_id = ${scope.connectionId}
            AND membership_id = ${id} AND deleted_at IS NULL`

  /**
   * A page of live Users matching `condition` (from Filter.ts over alias `u`), oldest first: SCIM's `startIndex` is
   * an offset; the total comes with each row (`count(*) OVER ()`), or from a count when the page is past the end.
   */
  const list = Effect.fn("ScimUsersRepository.list")(function*(scope: ScimScope, condition: Statement.Fragment, offset: number, limit: number) {
    const scoped = sql`u.organization_id = ${scope.organizationId} AND u.connection_id = ${scope.connectionId}
          AND u.deleted_at IS NULL AND (${condition})`
    if (limit === 0) {
      const [{ total }] = yield* sql<{ total: number }>`SELECT count(*)::int AS total FROM scim_users u WHERE ${scoped}`
      return { total, rows: [] as ReadonlyArray<ScimUserRow> }
    }
    const rows = yield* sql`SELECT ${sql.literal(columns)}, count(*) OVER ()::int AS total FROM scim_users u
          WHERE ${scoped} ORDER BY u.created_at, u.membership_id OFFSET ${offset} LIMIT ${limit}`
    if (rows.length === 0 && offset > 0) {
      const [{ total }] = yield* sql<{ total: number }>`SELECT count(*)::int AS total FROM scim_users u WHERE ${scoped}`
      return { total, rows: [] as ReadonlyArray<ScimUserRow> }
    }
    const totals = yield* Effect.orDie(readTotals(rows))
    return { total: totals[0]?.total ?? 0, rows: yield* readRows(rows.map(({ total: _total, ...row }) => row)) }
  })

  /** The connection's default role, or none when the organization has no such connection. */
  const connection = (scope: ScimScope) =>
    sql<{ defaultRole: "admin" | "member" }>`
        SELECT default_role FROM scim_connections WHERE organization_id = ${scope.organizationId} AND id = ${scope.connectionId}`.pipe(
      Effect.map((rows) => Option.fromNullishOr(rows[0]))
    )

  const mapping = userMapping(sql, "u", UserResourceType)

  /**
   * The person's account is being deleted (the accounts area, in its transaction): their live Users in the
   * organization, in any connection, are marked deleted as a directory's DELETE marks them, and what the directory
   * sent of them is forgotten (`user_name` the pseudonym, no display name or emails, the resource its bare
   * identifiers). A directory reading them gets 404 from then on, and one that still assigns the person creates
   * them again: a new account. Answers how many.
   */
  const forgetPerson = (input: { readonly organizationId: OrganizationId; readonly userId: UserId; readonly pseudonym: string; readonly at: Date }) =>
    sql`UPDATE scim_users SET deleted_at = COALESCE(deleted_at, ${input.at}), active = false, user_name = ${input.pseudonym},
            display_name = NULL, emails = '[]'::jsonb, resource = jsonb_build_object('userName', ${input.pseudonym}::text),
            version = version + 1, updated_at = ${input.at}
          WHERE organization_id = ${input.organizationId} AND user_id = ${input.userId}
          RETURNING deleted_at = ${input.at} AS now_deleted`.pipe(Effect.map((rows) => rows.filter((row) => row.nowDeleted === true).length))

  return { find, clash, linkedConnection, dropDeleted, insert, update, markDeleted, list, connection, mapping, sql, forgetPerson } as const
})

export class UsersRepository extends Context.Service<UsersRepository>()("@orgplane/server/scim/UsersRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

/**
 * Storage of organizations (the tenant root: an organization's id is the `organization_id` of every tenant row):
 * their profile, and their deletion state (deleted, until when restorable, what the purge removed so far). A
 * deleted organization is none to every read here but the lifecycle's own (`lockLifecycle`, the operator's list).
 * Which one operates the instance is OperatorRepository's.
 */
import {
  AdminOrganization,
  type AdminOrganizationListQuery,
  Organization,
  OrganizationDetails,
  OrganizationId,
  type UserId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import * as Keyset from "../platform/Keyset.js"
import { classRow, DateColumn, execute, findAll, findOne, likePattern, trustedClassRow } from "../platform/Statements.js"

export class OrganizationRow extends Model.Class<OrganizationRow>("OrganizationRow")({
  id: Model.GeneratedByApp(OrganizationId),
  name: Organization.fields.name,
  plan: Organization.fields.plan,
  provisional: Organization.fields.provisional,
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

/** The API's organization from a row (decoded, so valid: the class does not check it again). */
export const toOrganization = (row: Pick<OrganizationRow, "id" | "name" | "plan" | "provisional" | "createdAt">) =>
  new Organization({ id: row.id, name: row.name, plan: row.plan, provisional: row.provisional, createdAt: row.createdAt }, { disableChecks: true })

/** An organization with its deletion state, as deleting, restoring and purging read it (locked). */
export const LifecycleRow = Schema.Struct({
  ...OrganizationRow.fields,
  deletedAt: Schema.NullOr(DateColumn),
  purgeAfter: Schema.NullOr(DateColumn),
  deletedBy: Schema.NullOr(Schema.String)
})
export type LifecycleRow = typeof LifecycleRow.Type

/**
 * Whether an organization's own owners may restore its deletion, by who asked for it (`deleted_by`): one of its
 * members (`om_…`: an owner) yes; the instance's operator (`operator:…`) and the system (`system:…`: its last
 * member's account deleted, an unclaimed workspace expired) no, only the operator restores those.
 * `ownersMayRestoreSql` is the same rule in a statement, over the organization row `alias`.
 */
export const ownersMayRestore = (deletedBy: string | null): boolean => deletedBy !== null && deletedBy.startsWith("om_")
export const ownersMayRestoreSql = (sql: SqlClient.SqlClient, alias: string) => sql`left(${sql.literal(alias)}.deleted_by, 3) = 'om_'`

/** What the purge removed so far, per table (it accumulates across the purge's transactions). */
const PurgedRows = Schema.fromJsonString(Schema.Record(Schema.String, Schema.Int))

/** The operator's list: every organization, oldest first. */
const adminOrder = Keyset.make<AdminOrganization>("admin-organizations", "asc", [{ column: "o.id", value: (organization) => organization.id }])

const DetailsRow = classRow(OrganizationDetails, { json: ["metadata"] })
const AdminRow = trustedClassRow(AdminOrganization)

const make = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertRow = execute({
      Request: OrganizationRow.insert,
      execute: (row) => sql`INSERT INTO organizations ${sql.insert(row)}`
    })

    /** A new organization (never the instance's operator by being first: see identity/Operator.ts). */
    const insert = (row: typeof OrganizationRow.insert.Type) => Effect.as(insertRow(row), toOrganization(row))

    const findRow = findOne({
      Request: OrganizationId,
      Result: OrganizationRow,
      execute: (organizationId) => sql`SELECT * FROM organizations WHERE id = ${organizationId} AND deleted_at IS NULL`
    })
    /** The organization, none when it does not exist or is deleted. */
    const find = (organizationId: OrganizationId) => Effect.map(findRow(organizationId), Option.map(toOrganization))

    /** The organization as `GET /v1/organization` shows it: its profile and member count; none once deleted. */
    const details = findOne({
      Request: OrganizationId,
      Result: DetailsRow,
      execute: (organizationId) =>
        sql`SELECT o.id, o.name, o.plan, o.provisional, o.created_at, o.updated_at, o.logo_url, o.metadata::text AS metadata,
                (SELECT count(*)::int FROM memberships m WHERE m.organization_id = o.id AND m.removed_at IS NULL) AS member_count
              FROM organizations o WHERE o.id = ${organizationId} AND o.deleted_at IS NULL`
    })

    const updateRow = findOne({
      Request: Schema.Struct({
        id: OrganizationId,
        name: Schema.optional(Organization.fields.name),
        plan: Schema.optional(Organization.fields.plan),
        provisional: Schema.optional(Schema.Boolean),
        logoUrl: Schema.optional(Schema.NullOr(Schema.String)),
        // Written as JSON text: Postgres reads it as the jsonb column's value.
        metadata: Schema.optional(Schema.String),
        updatedAt: DateColumn
      }),
      Result: OrganizationRow,
      execute: ({ id, ...changes }) =>
        sql`UPDATE organizations SET ${sql.update(changes)} WHERE id = ${id} AND deleted_at IS NULL RETURNING *`
    })
    /** Changes the organization; none when it does not exist or is deleted. */
    const update = (
      organizationId: OrganizationId,
      changes: {
        readonly name?: string
        readonly plan?: Organization["plan"]
        readonly provisional?: boolean
        readonly logoUrl?: string | null
        readonly metadata?: Readonly<Record<string, string>>
      },
      at: Date
    ) => {
      const { metadata, ...rest } = changes
      return Effect.map(
        updateRow({ id: organizationId, ...rest, ...(metadata === undefined ? {} : { metadata: JSON.stringify(metadata) }), updatedAt: at }),
        Option.map(toOrganization)
      )
    }

    /**
     * Serializes every change to the organization's memberships (see `Memberships.lock`), and its deletion,
     * restoration and purge: the row lock on the organization, held until the transaction ends. False when there
     * is no such organization.
     */
    const lock = (organizationId: OrganizationId) =>
      sql`SELECT id FROM organizations WHERE id = ${organizationId} FOR UPDATE`.pipe(Effect.map((rows) => rows.length > 0))

    /** The organization, deleted or not, locked (the organization's lock): what deleting and restoring decide on. */
    const lockLifecycle = findOne({
      Request: OrganizationId,
      Result: LifecycleRow,
      execute: (organizationId) =>
        sql`SELECT id, name, plan, provisional, created_at, updated_at, deleted_at, purge_after, deleted_by
              FROM organizations WHERE id = ${organizationId} FOR UPDATE`
    })

    /** Marks it deleted: it stops serving now, and the purge may take it after `purgeAfter`. */
    const markDeleted = execute({
      Request: Schema.Struct({ id: OrganizationId, at: DateColumn, purgeAfter: DateColumn, deletedBy: Schema.String }),
      execute: ({ at, deletedBy, id, purgeAfter }) =>
        sql`UPDATE organizations SET deleted_at = ${at}, purge_after = ${purgeAfter}, deleted_by = ${deletedBy}, updated_at = ${at}
              WHERE id = ${id} AND deleted_at IS NULL`
    })

    /** Brings it back: it serves again as it was. */
    const markRestored = execute({
      Request: Schema.Struct({ id: OrganizationId, at: DateColumn }),
      execute: ({ at, id }) =>
        sql`UPDATE organizations SET deleted_at = NULL, purge_after = NULL, deleted_by = NULL, purged_rows = '{}'::jsonb, updated_at = ${at}
              WHERE id = ${id}`
    })

    /**
     * Unclaimed provisional workspaces made at or before `madeBefore` (no person is an active member: only the
     * bootstrap's placeholder owner), marked deleted at `at` with their purge due at once; their ids.
     */
    const expireUnclaimed = (input: { readonly madeBefore: Date; readonly at: Date; readonly limit: number }) =>
      Effect.map(
        sql<{ id: OrganizationId }>`UPDATE organizations SET deleted_at = ${input.at}, purge_after = ${input.at},
                deleted_by = 'system:provisional-expiry', updated_at = ${input.at}
              WHERE id IN (
                SELECT o.id FROM organizations o
                WHERE o.provisional AND o.deleted_at IS NULL AND o.created_at <= ${input.madeBefore}
                  AND NOT EXISTS (SELECT 1 FROM memberships m
                                  WHERE m.organization_id = o.id AND m.user_id IS NOT NULL AND m.removed_at IS NULL)
                ORDER BY o.created_at LIMIT ${input.limit}
                FOR UPDATE SKIP LOCKED)
              RETURNING id`,
        (rows) => rows.map((row) => row.id)
      )

    /** Deleted organizations whose grace ended at `at`, the longest due first, at most `limit`. */
    const dueForPurge = (input: { readonly at: Date; readonly limit: number }) =>
      Effect.map(
        sql<{ id: OrganizationId }>`SELECT id FROM organizations
              WHERE deleted_at IS NOT NULL AND purge_after <= ${input.at}
              ORDER BY purge_after, id LIMIT ${input.limit}`,
        (rows) => rows.map((row) => row.id)
      )

    /** The organization if it is deleted and due for its purge at `at`, locked; none otherwise (restored, or gone). */
    const lockDue = findOne({
      Request: Schema.Struct({ id: OrganizationId, at: DateColumn }),
      Result: Schema.Struct({ ...LifecycleRow.fields, purgedRows: PurgedRows }),
      execute: ({ at, id }) =>
        sql`SELECT id, name, plan, provisional, created_at, updated_at, deleted_at, purge_after, deleted_by,
                purged_rows::text AS purged_rows
              FROM organizations WHERE id = ${id} AND deleted_at IS NOT NULL AND purge_after <= ${at} FOR UPDATE`
    })

    /** Adds `count` rows of `table` to what the purge removed of the organization. */
    const addPurged = execute({
      Request: Schema.Struct({ id: OrganizationId, table: Schema.String, count: Schema.Int }),
      execute: ({ count, id, table }) =>
        sql`UPDATE organizations
              SET purged_rows = jsonb_set(purged_rows, ARRAY[${table}]::text[], to_jsonb(COALESCE((purged_rows ->> ${table})::int, 0) + ${count}::int))
              WHERE id = ${id}`
    })

    /** The organization's own row, last of all it held: whether there was one. */
    const remove = (organizationId: OrganizationId) =>
      sql`DELETE FROM organizations WHERE id = ${organizationId} AND deleted_at IS NOT NULL RETURNING id`.pipe(Effect.map((rows) => rows.length > 0))

    const adminRows = findAll({
      Request: Schema.Struct({
        q: Schema.optional(Schema.String),
        deleted: Schema.optional(Schema.Boolean),
        lifetimeMillis: Schema.Number,
        page: Keyset.PageRequest
      }),
      Result: AdminRow,
      execute: ({ deleted, lifetimeMillis, page, q }) =>
        sql`SELECT o.id, o.name, o.plan, o.provisional, o.created_at, o.deleted_at,
                (SELECT count(*)::int FROM memberships m WHERE m.organization_id = o.id AND m.removed_at IS NULL) AS member_count,
                CASE
                  WHEN o.deleted_at IS NOT NULL THEN o.purge_after
                  WHEN o.provisional AND NOT EXISTS (SELECT 1 FROM memberships p
                                                     WHERE p.organization_id = o.id AND p.user_id IS NOT NULL AND p.removed_at IS NULL)
                    THEN o.created_at + ${lifetimeMillis}::float8 * interval '1 millisecond'
                END AS purge_after
              FROM organizations o
              WHERE ${q === undefined ? sql`true` : sql`o.name ILIKE ${likePattern(q)}`}
                AND ${deleted === undefined ? sql`true` : deleted ? sql`o.deleted_at IS NOT NULL` : sql`o.deleted_at IS NULL`}
                AND ${page.after}
              ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
    })

    /** Every organization of the instance, for its operator (`lifetimeMillis`: unclaimed workspaces' lifetime). */
    const listForAdmin = (query: AdminOrganizationListQuery, lifetimeMillis: number) =>
      Keyset.page(adminOrder, query, (page) => adminRows({ q: query.q, deleted: query.deleted, lifetimeMillis, page }))

    /** The people owning the organization (their memberships not removed, suspended ones too), by id. */
    const ownersOf = (organizationId: OrganizationId) =>
      sql<{ userId: UserId }>`SELECT user_id FROM memberships
            WHERE organization_id = ${organizationId} AND role = 'owner' AND removed_at IS NULL AND user_id IS NOT NULL
            ORDER BY user_id`.pipe(Effect.map((rows) => rows.map((row) => row.userId)))

    /** The organizations the person is an active owner of, deleted ones aside (deleting one makes room). */
    const countOwnedBy = (userId: UserId) =>
      sql<{ count: number }>`SELECT count(*)::int AS count FROM memberships m
            JOIN organizations o ON o.id = m.organization_id AND o.deleted_at IS NULL
            WHERE m.user_id = ${userId} AND m.role = 'owner' AND m.removed_at IS NULL`.pipe(Effect.map((rows) => rows[0]?.count ?? 0))

    return {
      insert,
      find,
      details,
      update,
      lock,
      lockLifecycle,
      markDeleted,
      markRestored,
      expireUnclaimed,
      dueForPurge,
      lockDue,
      addPurged,
      remove,
      listForAdmin,
      countOwnedBy,
      ownersOf
    } as const
  })

export class OrganizationsRepository extends Context.Service<OrganizationsRepository>()("@orgplane/server/identity/OrganizationsRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

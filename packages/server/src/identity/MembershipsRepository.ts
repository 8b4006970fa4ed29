/** Storage of memberships: who belongs to which organization, with which role. */
import { Model, SqlClient } from "@effect/sql"
import {
  Membership,
  MembershipId,
  OrganizationId,
  OrganizationWithMembership,
  Role,
  User,
  UserId
} from "@orgplane/schema"
import { Effect, Option, Schema } from "effect"
import * as Keyset from "../platform/Keyset.js"
import { DateColumn, execute, findAll, findOne } from "../platform/Statements.js"
import { OrganizationRow, toOrganization } from "./OrganizationsRepository.js"

export class MembershipRow extends Model.Class<MembershipRow>("MembershipRow")({
  id: Model.GeneratedByApp(MembershipId),
  organizationId: OrganizationId,
  userId: Membership.fields.userId,
  role: Role,
  createdAt: DateColumn,
  updatedAt: DateColumn,
  removedAt: Schema.NullOr(DateColumn)
}) {}

/** The API's membership from a row (decoded, so valid: the class does not check it again). */
export const toMembership = (row: Pick<MembershipRow, "id" | "organizationId" | "userId" | "role" | "createdAt">) =>
  new Membership({ id: row.id, organizationId: row.organizationId, userId: row.userId, role: row.role, createdAt: row.createdAt }, true)

/** A user's organizations, oldest membership first. */
const myOrganizations = Keyset.make<typeof OrganizationWithMembership.Type>("my-organizations", "asc", [
  { column: "m.id", value: (entry) => entry.membership.id }
])

/** A membership row with its organization's columns, prefixed. */
const MyOrganizationRow = Schema.Struct({
  ...MembershipRow.fields,
  organizationName: OrganizationRow.fields.name,
  organizationPlan: OrganizationRow.fields.plan,
  organizationProvisional: OrganizationRow.fields.provisional,
  organizationCreatedAt: DateColumn
})

/** The organization of a row that carries its columns prefixed with `organization_`. */
const organizationOf = (row: {
  readonly organizationId: OrganizationId
  readonly organizationName: string
  readonly organizationPlan: OrganizationRow["plan"]
  readonly organizationProvisional: boolean
  readonly organizationCreatedAt: Date
}) =>
  toOrganization({
    id: row.organizationId,
    name: row.organizationName,
    plan: row.organizationPlan,
    provisional: row.organizationProvisional,
    createdAt: row.organizationCreatedAt
  })

/**
 * The membership and organization a request acts in, as authentication resolves them in its one statement:
 * `callerColumns` over the person `u`, a membership `m` and its organization `o`, the latter two LEFT JOINed (null
 * for a person without one).
 */
export const CallerColumns = Schema.Struct({
  userId: UserId,
  userEmail: User.fields.email,
  userName: User.fields.name,
  userCreatedAt: DateColumn,
  membershipId: Schema.NullOr(MembershipId),
  organizationId: Schema.NullOr(OrganizationId),
  role: Schema.NullOr(Role),
  membershipCreatedAt: Schema.NullOr(DateColumn),
  organizationName: Schema.NullOr(OrganizationRow.fields.name),
  organizationPlan: Schema.NullOr(OrganizationRow.fields.plan),
  organizationProvisional: Schema.NullOr(OrganizationRow.fields.provisional),
  organizationCreatedAt: Schema.NullOr(DateColumn)
})

export const callerColumns = (sql: SqlClient.SqlClient) =>
  sql`u.id AS user_id, u.email AS user_email, u.name AS user_name, u.created_at AS user_created_at,
      m.id AS membership_id, m.organization_id, m.role, m.created_at AS membership_created_at,
      o.name AS organization_name, o.plan AS organization_plan, o.provisional AS organization_provisional,
      o.created_at AS organization_created_at`

/** The caller, and their organization and membership (or nulls), from `CallerColumns`. */
export const toCaller = (row: typeof CallerColumns.Type) => ({
  user: new User({ id: row.userId, email: row.userEmail, name: row.userName, createdAt: row.userCreatedAt }, true),
  ...toMembershipOf(row)
})

type CallerRow = typeof CallerColumns.Type

/** Whether the caller's row found a membership (the LEFT JOINed columns are all there). */
const hasMembership = (row: CallerRow): row is { readonly [K in keyof CallerRow]: NonNullable<CallerRow[K]> } =>
  row.membershipId !== null && row.organizationId !== null && row.role !== null && row.membershipCreatedAt !== null &&
  row.organizationName !== null && row.organizationPlan !== null && row.organizationProvisional !== null &&
  row.organizationCreatedAt !== null

const toMembershipOf = (row: CallerRow) =>
  hasMembership(row)
    ? {
      organization: organizationOf(row),
      membership: toMembership({
        id: row.membershipId,
        organizationId: row.organizationId,
        userId: row.userId,
        role: row.role,
        createdAt: row.membershipCreatedAt
      })
    }
    : { organization: null, membership: null }

const Scoped = Schema.Struct({ organizationId: OrganizationId, id: MembershipId })
const ScopedUser = Schema.Struct({ organizationId: OrganizationId, userId: UserId })

export class MembershipsRepository extends Effect.Service<MembershipsRepository>()("@orgplane/server/MembershipsRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertRow = execute({ Request: MembershipRow.insert, execute: (row) => sql`INSERT INTO memberships ${sql.insert(row)}` })
    const insert = (row: Omit<typeof MembershipRow.insert.Type, "updatedAt" | "removedAt">) =>
      Effect.as(insertRow({ ...row, updatedAt: row.createdAt, removedAt: null }), toMembership(row))

    const findActiveById = findOne({
      Request: Scoped,
      Result: MembershipRow,
      execute: ({ id, organizationId }) =>
        sql`SELECT * FROM memberships WHERE organization_id = ${organizationId} AND id = ${id} AND removed_at IS NULL`
    })
    const findActiveOfUser = findOne({
      Request: ScopedUser,
      Result: MembershipRow,
      execute: ({ organizationId, userId }) =>
        sql`SELECT * FROM memberships WHERE organization_id = ${organizationId} AND user_id = ${userId} AND removed_at IS NULL`
    })
    /** The active membership of a user (or with an id) in the organization. */
    const findActive = (organizationId: OrganizationId, who: { readonly userId: UserId } | { readonly id: MembershipId }) =>
      Effect.map(
        "userId" in who ? findActiveOfUser({ organizationId, userId: who.userId }) : findActiveById({ organizationId, id: who.id }),
        Option.map(toMembership)
      )

    /** Whether the user was a member of the organization and has been removed (and is not a member again). */
    const wasRemoved = (organizationId: OrganizationId, userId: UserId) =>
      sql<{ removed: boolean }>`SELECT bool_and(removed_at IS NOT NULL) AS removed FROM memberships
                                WHERE organization_id = ${organizationId} AND user_id = ${userId}`.pipe(
        Effect.map((rows) => rows[0]?.removed === true)
      )

    /** The organization of the user's oldest active membership: where a new session starts. */
    const oldestOrganizationOf = (userId: UserId) =>
      sql<{ organizationId: OrganizationId }>`SELECT organization_id FROM memberships
                                              WHERE user_id = ${userId} AND removed_at IS NULL ORDER BY id LIMIT 1`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0]?.organizationId))
      )

    const listForUserRows = findAll({
        Request: Schema.Struct({ userId: UserId, page: Keyset.PageRequest }),
        Result: MyOrganizationRow,
        execute: ({ page, userId: id }) =>
          sql`SELECT m.*, o.name AS organization_name, o.plan AS organization_plan,
                     o.provisional AS organization_provisional, o.created_at AS organization_created_at
              FROM memberships m JOIN organizations o ON o.id = m.organization_id
              WHERE m.user_id = ${id} AND m.removed_at IS NULL AND ${page.after}
              ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
      })

    /** The user's organizations with their membership in each. */
    const listForUser = (userId: UserId, query: Keyset.PageQuery) =>
      Keyset.page(myOrganizations, query, (page) =>
        Effect.map(listForUserRows({ userId, page }), (rows) =>
          rows.map((row) => ({ organization: organizationOf(row), membership: toMembership(row) }))))

    const changeRole = execute({
      Request: Schema.Struct({ ...Scoped.fields, role: Role, updatedAt: DateColumn }),
      execute: ({ id, organizationId, role, updatedAt }) =>
        sql`UPDATE memberships SET role = ${role}, updated_at = ${updatedAt}
            WHERE organization_id = ${organizationId} AND id = ${id}`
    })

    /** Marks the membership removed, takes it out of every team and deletes the API keys it created. */
    const remove = execute({
      Request: Schema.Struct({ ...Scoped.fields, removedAt: DateColumn }),
      execute: ({ id, organizationId, removedAt }) =>
        Effect.all([
          sql`UPDATE memberships SET removed_at = ${removedAt}, updated_at = ${removedAt}
              WHERE organization_id = ${organizationId} AND id = ${id}`,
          sql`DELETE FROM team_members WHERE organization_id = ${organizationId} AND membership_id = ${id}`,
          sql`DELETE FROM api_keys WHERE organization_id = ${organizationId} AND membership_id = ${id}`
        ], { discard: true })
    })

    return { insert, findActive, wasRemoved, oldestOrganizationOf, listForUser, changeRole, remove } as const
  })
}) {}

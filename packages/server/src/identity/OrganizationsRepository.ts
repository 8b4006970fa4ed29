/** Storage of organizations, their memberships, and which organization operates the instance. */
import { SqlClient, type Statement } from "@effect/sql"
import { Membership, type MembershipId, Organization, type OrganizationId, type Plan, type Role, type UserId } from "@orgplane/schema"
import { Effect, Option } from "effect"
import type { PageRequest } from "../platform/Cursor.js"
import { first } from "../platform/Sql.js"

interface OrganizationRow {
  readonly id: OrganizationId
  readonly name: string
  readonly plan: Plan
  readonly provisional: boolean
  readonly createdAt: Date
}

interface MembershipRow {
  readonly id: MembershipId
  readonly organizationId: OrganizationId
  readonly userId: UserId | null
  readonly role: Role
  readonly createdAt: Date
}

const toOrganization = (row: OrganizationRow) => new Organization(row)
const toMembership = (row: MembershipRow) => new Membership(row)

export class OrganizationsRepository extends Effect.Service<OrganizationsRepository>()(
  "@orgplane/server/OrganizationsRepository",
  {
    effect: Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const insert = (row: OrganizationRow) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO organizations ${sql.insert({ ...row, updatedAt: row.createdAt })}`
          // The first organization of an instance operates it, unless configuration names another.
          yield* sql`INSERT INTO instance_settings (key, value) VALUES ('operator_organization_id', ${row.id})
                     ON CONFLICT (key) DO NOTHING`
          return toOrganization(row)
        }).pipe(Effect.orDie)

      const findById = (id: OrganizationId) =>
        sql<OrganizationRow>`SELECT id, name, plan, provisional, created_at FROM organizations WHERE id = ${id}`.pipe(
          Effect.map((rows) => Option.map(first(rows), toOrganization)),
          Effect.orDie
        )

      const update = (id: OrganizationId, changes: Partial<Pick<OrganizationRow, "plan" | "provisional" | "name">>, at: Date) =>
        sql<OrganizationRow>`UPDATE organizations SET ${sql.update({ ...changes, updatedAt: at })} WHERE id = ${id}
                             RETURNING id, name, plan, provisional, created_at`.pipe(
          Effect.map((rows) => Option.map(first(rows), toOrganization)),
          Effect.orDie
        )

      const operatorOrganizationId = sql<{ value: OrganizationId }>`
        SELECT value FROM instance_settings WHERE key = 'operator_organization_id'`.pipe(
        Effect.map((rows) => Option.map(first(rows), (row) => row.value)),
        Effect.orDie
      )

      /**
       * Serializes every change to the organization's memberships (role changes, removals, invitations, claims):
       * each such transaction takes this lock first, so checks like "at least one owner stays" see the state they
       * change.
       */
      const lockMemberships = (organizationId: OrganizationId) =>
        sql`SELECT id FROM organizations WHERE id = ${organizationId} FOR UPDATE`.pipe(Effect.asVoid, Effect.orDie)

      const insertMembership = (row: MembershipRow) =>
        sql`INSERT INTO memberships ${sql.insert({ ...row, updatedAt: row.createdAt })}`.pipe(
          Effect.as(toMembership(row)),
          Effect.orDie
        )

      /** The first membership matching `condition` (a WHERE clause, optionally followed by ORDER BY). */
      const membershipWhere = (condition: Statement.Fragment) =>
        sql<MembershipRow>`SELECT id, organization_id, user_id, role, created_at FROM memberships WHERE ${condition}`.pipe(
          Effect.map((rows) => Option.map(first(rows), toMembership)),
          Effect.orDie
        )

      /** The user's active membership in the organization. */
      const findMembership = (organizationId: OrganizationId, userId: UserId) =>
        membershipWhere(sql`organization_id = ${organizationId} AND user_id = ${userId} AND removed_at IS NULL`)

      /** Whether the user was a member of the organization and has been removed (and is not a member again). */
      const wasRemoved = (organizationId: OrganizationId, userId: UserId) =>
        sql<{ removed: boolean }>`SELECT bool_and(removed_at IS NOT NULL) AS removed FROM memberships
                                  WHERE organization_id = ${organizationId} AND user_id = ${userId}`.pipe(
          Effect.map((rows) => rows[0]?.removed === true),
          Effect.orDie
        )

      const findMembershipById = (organizationId: OrganizationId, id: MembershipId) =>
        membershipWhere(sql`organization_id = ${organizationId} AND id = ${id} AND removed_at IS NULL`)

      /** The user's oldest active membership: where a session without an active organization lands. */
      const firstMembershipOf = (userId: UserId) =>
        membershipWhere(sql`user_id = ${userId} AND removed_at IS NULL ORDER BY id LIMIT 1`)

      const updateMembership = (id: MembershipId, changes: { readonly role?: Role; readonly removedAt?: Date }, at: Date) =>
        sql`UPDATE memberships SET ${sql.update({ ...changes, updatedAt: at })} WHERE id = ${id}`.pipe(Effect.orDie)

      /** The user's active memberships with their organizations, oldest membership first. */
      const listForUser = (userId: UserId, page: PageRequest) =>
        sql<OrganizationRow & { readonly membershipId: MembershipId; readonly role: Role; readonly joinedAt: Date }>`
          SELECT o.id, o.name, o.plan, o.provisional, o.created_at, m.id AS membership_id, m.role, m.created_at AS joined_at
          FROM memberships m JOIN organizations o ON o.id = m.organization_id
          WHERE m.user_id = ${userId} AND m.removed_at IS NULL
            ${page.after ? sql`AND m.id > ${page.after[0]}` : sql``}
          ORDER BY m.id LIMIT ${page.limit + 1}`.pipe(
          Effect.map((rows) =>
            rows.map(({ joinedAt, membershipId, role, ...organization }) => ({
              organization: toOrganization(organization),
              membership: toMembership({ id: membershipId, organizationId: organization.id, userId, role, createdAt: joinedAt })
            }))
          ),
          Effect.orDie
        )

      return {
        listForUser,
        insert,
        findById,
        update,
        operatorOrganizationId,
        lockMemberships,
        insertMembership,
        findMembership,
        findMembershipById,
        wasRemoved,
        firstMembershipOf,
        updateMembership
      } as const
    })
  }
) {}

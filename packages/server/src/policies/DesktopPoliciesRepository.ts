/**
 * Storage of desktop policies and their assignments to members and teams.
 */
import {
  DesktopPolicy,
  DesktopPolicyDocument,
  DesktopPolicyId,
  type DesktopPolicyListQuery,
  MembershipId,
  OrganizationId,
  TeamId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as Keyset from "../platform/Keyset.js"
import { classRow, findAll, findOne, trustedClassRow } from "../platform/Statements.js"
/** Oldest first: the default policy, created on first use, leads. */
const byCreation = Keyset.make<DesktopPolicy>("desktop-policies", "asc", [
  { column: "p.created_at", value: (policy) => policy.createdAt.toISOString(), compare: (value, sql) => sql`${value}::timestamptz` },
  { column: "p.id", value: (policy) => policy.id }
])

const Scoped = Schema.Struct({ organizationId: OrganizationId, id: DesktopPolicyId })
type Scoped = typeof Scoped.Type

/** A policy that applies to one member, with how it reaches them, in the order the resolution reads them. */
export const Applicable = Schema.Struct({
  id: DesktopPolicyId,
  policyName: Schema.String,
  isDefault: Schema.Boolean,
  direct: Schema.Boolean,
  policy: Schema.toType(DesktopPolicyDocument)
})

export interface NewPolicy {
  readonly organizationId: OrganizationId
  readonly id: DesktopPolicyId
  readonly policyName: string
  readonly isDefault: boolean
  readonly isEnabled: boolean
  readonly priority: number
  readonly policy: DesktopPolicyDocument
  readonly createdByMembershipId: MembershipId | null
  readonly at: Date
}

const makeDesktopPoliciesRepository = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const select = sql`
        SELECT p.id, p.organization_id, p.policy_name, p.is_default, p.is_enabled, p.priority, p.policy,
               p.created_by_membership_id AS created_by_org_membership_id, p.created_at, p.updated_at, p.deleted_at,
               ARRAY(SELECT m.membership_id FROM desktop_policy_members m
                     WHERE m.organization_id = p.organization_id AND m.desktop_policy_id = p.id ORDER BY m.membership_id) AS member_ids,
               ARRAY(SELECT t.team_id FROM desktop_policy_teams t
                     WHERE t.organization_id = p.organization_id AND t.desktop_policy_id = p.id ORDER BY t.team_id) AS team_ids
        FROM desktop_policies p`

    /** A policy that is not deleted. */
    const find = findOne({
      Request: Scoped,
      Result: classRow(DesktopPolicy),
      execute: ({ id, organizationId }) =>
        sql`${select} WHERE p.organization_id = ${organizationId} AND p.id = ${id} AND p.deleted_at IS NULL`
    })

    /** Locks a policy that is not deleted for the rest of the transaction; whether it is the default, or undefined. */
    const lock = ({ id, organizationId }: Scoped) =>
      sql<{ isDefault: boolean }>`
          SELECT is_default FROM desktop_policies
          WHERE organization_id = ${organizationId} AND id = ${id} AND deleted_at IS NULL FOR UPDATE`.pipe(
        Effect.map((rows) => rows[0]?.isDefault)
      )

    const listRows = findAll({
      Request: Schema.Struct({ organizationId: OrganizationId, page: Keyset.PageRequest }),
      Result: trustedClassRow(DesktopPolicy),
      execute: ({ organizationId, page }) =>
        sql`${select} WHERE ${
            sql.and([sql`p.organization_id = ${organizationId}`, sql`p.deleted_at IS NULL`, page.after])
          } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
    })
    const list = (organizationId: OrganizationId, query: DesktopPolicyListQuery) =>
      Keyset.page(byCreation, query, (page) => listRows({ organizationId, page }))

    const hasDefault = (organizationId: OrganizationId) =>
      sql`SELECT 1 FROM desktop_policies WHERE organization_id = ${organizationId} AND is_default`.pipe(
        Effect.map((rows) => rows.length > 0)
      )

    /** Inserts a policy; a second default of an organization is not inserted (the first stays). */
    const insert = (row: NewPolicy) =>
      sql`
          INSERT INTO desktop_policies (id, organization_id, policy_name, is_default, is_enabled, priority, policy,
                                        created_by_membership_id, created_at, updated_at)
          VALUES (${row.id}, ${row.organizationId}, ${row.policyName}, ${row.isDefault}, ${row.isEnabled}, ${row.priority},
                  ${JSON.stringify(row.policy)}::jsonb, ${row.createdByMembershipId}, ${row.at}, ${row.at})
          ON CONFLICT (organization_id) WHERE is_default DO NOTHING`.pipe(Effect.asVoid)

    /** Sets the members given (the others keep their values). */
    const update = (
      policy: Scoped,
      fields: {
        readonly policyName?: string | undefined
        readonly policy?: DesktopPolicyDocument | undefined
        readonly priority?: number | undefined
        readonly isEnabled?: boolean | undefined
      },
      at: Date
    ) =>
      sql`
          UPDATE desktop_policies SET
            policy_name = COALESCE(${fields.policyName ?? null}::text, policy_name),
            policy = COALESCE(${fields.policy === undefined ? null : JSON.stringify(fields.policy)}::jsonb, policy),
            priority = COALESCE(${fields.priority ?? null}::integer, priority),
            is_enabled = COALESCE(${fields.isEnabled ?? null}::boolean, is_enabled),
            updated_at = ${at}
          WHERE organization_id = ${policy.organizationId} AND id = ${policy.id}`.pipe(Effect.asVoid)

    // `sql.insert` of many rows takes a non-empty array: the first row, then the others.
    const replaceMembers = (policy: Scoped, memberIds: ReadonlyArray<MembershipId>, at: Date) => {
      const row = (membershipId: MembershipId) => ({
        organizationId: policy.organizationId,
        desktopPolicyId: policy.id,
        membershipId,
        createdAt: at
      })
      const [first, ...rest] = memberIds
      return Effect.andThen(
        sql`DELETE FROM desktop_policy_members WHERE organization_id = ${policy.organizationId} AND desktop_policy_id = ${policy.id}`,
        first === undefined ? Effect.void : sql`INSERT INTO desktop_policy_members ${
            sql.insert([row(first), ...rest.map(row)])
          }`.pipe(Effect.asVoid)
      )
    }

    const replaceTeams = (policy: Scoped, teamIds: ReadonlyArray<TeamId>, at: Date) => {
      const row = (teamId: TeamId) => ({ organizationId: policy.organizationId, desktopPolicyId: policy.id, teamId, createdAt: at })
      const [first, ...rest] = teamIds
      return Effect.andThen(
        sql`DELETE FROM desktop_policy_teams WHERE organization_id = ${policy.organizationId} AND desktop_policy_id = ${policy.id}`,
        first === undefined ? Effect.void : sql`INSERT INTO desktop_policy_teams ${
            sql.insert([row(first), ...rest.map(row)])
          }`.pipe(Effect.asVoid)
      )
    }

    /** Soft-deletes a policy other than the default: it stops applying; the record and its assignments stay. */
    const softDelete = ({ id, organizationId }: Scoped, at: Date) =>
      sql`
          UPDATE desktop_policies SET deleted_at = ${at}, is_enabled = false, updated_at = ${at}
          WHERE organization_id = ${organizationId} AND id = ${id} AND deleted_at IS NULL AND NOT is_default`.pipe(Effect.asVoid)

    /** The ids among `ids` that are not teams of the organization; locks the others against deletion. */
    const missingTeams = (organizationId: OrganizationId, ids: ReadonlyArray<TeamId>) =>
      ids.length === 0
        ? Effect.succeed([] as ReadonlyArray<TeamId>)
        : sql<{ id: TeamId }>`
              SELECT id FROM teams WHERE organization_id = ${organizationId} AND id IN ${sql.in(ids)} FOR SHARE`.pipe(
            Effect.map((rows) => {
              const found = new Set(rows.map((row) => row.id))
              return ids.filter((id) => !found.has(id))
            })
          )

    /**
     * The enabled policies that apply to a member: assigned directly or through one of their teams, highest priority
     * first (ties: older first), then the default policy.
     */
    const applicable = findAll({
      Request: Schema.Struct({ organizationId: OrganizationId, membershipId: MembershipId }),
      Result: Applicable,
      execute: ({ membershipId, organizationId }) =>
        sql`
            SELECT p.id, p.policy_name, p.is_default, p.policy,
                   EXISTS (SELECT 1 FROM desktop_policy_members m
                           WHERE m.organization_id = p.organization_id AND m.desktop_policy_id = p.id
                             AND m.membership_id = ${membershipId}) AS direct
            FROM desktop_policies p
            WHERE p.organization_id = ${organizationId} AND p.deleted_at IS NULL AND p.is_enabled AND (
              p.is_default
              OR EXISTS (SELECT 1 FROM desktop_policy_members m
                         WHERE m.organization_id = p.organization_id AND m.desktop_policy_id = p.id
                           AND m.membership_id = ${membershipId})
              OR EXISTS (SELECT 1 FROM desktop_policy_teams dt
                         JOIN team_members tm ON tm.organization_id = dt.organization_id AND tm.team_id = dt.team_id
                         WHERE dt.organization_id = p.organization_id AND dt.desktop_policy_id = p.id
                           AND tm.membership_id = ${membershipId}))
            ORDER BY p.is_default, p.priority DESC, p.created_at, p.id`
    })

    return { find, lock, list, hasDefault, insert, update, replaceMembers, replaceTeams, softDelete, missingTeams, applicable } as const
  })

export class DesktopPoliciesRepository extends Context.Service<DesktopPoliciesRepository>()(
  "@orgplane/server/policies/DesktopPoliciesRepository",
  { make: makeDesktopPoliciesRepository }
) {
  static readonly layer = Layer.effect(this, this.make)
}

/** Memberships seen as members: with the person's name and email. */
import { SqlClient } from "@effect/sql"
import { Member, MembershipId, MemberListQuery, OrganizationId } from "@orgplane/schema"
import { Effect, Schema } from "effect"
import * as Keyset from "../platform/Keyset.js"
import { classRow, findAll, findOne, trustedClassRow } from "../platform/Statements.js"

/** `%` and `_` match themselves in a containment search. */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** Oldest first. */
const oldestFirst = Keyset.make<Member>("members", "asc", [{ column: "m.id", value: (member) => member.id }])

const MemberRow = classRow(Member)
/** Lists skip validating each row: see `trustedClassRow`. */
const MemberListRow = trustedClassRow(Member)
const Scoped = Schema.Struct({ organizationId: OrganizationId, id: MembershipId })

export class MembersRepository extends Effect.Service<MembersRepository>()("@orgplane/server/MembersRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const select = sql`SELECT m.id, m.organization_id, m.user_id, u.name, u.email, m.role, m.created_at, m.removed_at
                       FROM memberships m LEFT JOIN users u ON u.id = m.user_id`

    /** The member with this id in the organization, removed or not. */
    const find = findOne({
      Request: Scoped,
      Result: MemberRow,
      execute: ({ id, organizationId }) => sql`${select} WHERE m.organization_id = ${organizationId} AND m.id = ${id}`
    })

    /** The member, only while active. */
    const findActive = findOne({
      Request: Scoped,
      Result: MemberRow,
      execute: ({ id, organizationId }) =>
        sql`${select} WHERE m.organization_id = ${organizationId} AND m.id = ${id} AND m.removed_at IS NULL`
    })

    /** The active member with this email (case-insensitive). */
    const findActiveByEmail = findOne({
      Request: Schema.Struct({ organizationId: OrganizationId, email: Schema.String }),
      Result: MemberRow,
      execute: ({ email, organizationId }) =>
        sql`${select} WHERE m.organization_id = ${organizationId} AND lower(u.email) = lower(${email}) AND m.removed_at IS NULL`
    })

    const listRows = findAll({
      Request: Schema.Struct({ organizationId: OrganizationId, query: Schema.typeSchema(MemberListQuery), page: Keyset.PageRequest }),
      Result: MemberListRow,
      execute: ({ organizationId, page, query }) =>
        sql`${select} WHERE ${
          sql.and([
            sql`m.organization_id = ${organizationId}`,
            query.includeRemoved ? sql`true` : sql`m.removed_at IS NULL`,
            query.role ? sql`m.role = ${query.role}` : sql`true`,
            query.q ? sql`(u.name ILIKE ${likePattern(query.q)} OR u.email ILIKE ${likePattern(query.q)})` : sql`true`,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
    })

    const list = (organizationId: OrganizationId, query: MemberListQuery) =>
      Keyset.page(oldestFirst, query, (page) => listRows({ organizationId, query, page }))

    /** How many active owners the organization has. */
    const countOwners = (organizationId: OrganizationId) =>
      sql<{ count: number }>`SELECT count(*)::int AS count FROM memberships
                             WHERE organization_id = ${organizationId} AND role = 'owner' AND removed_at IS NULL`.pipe(
        Effect.map((rows) => rows[0].count)
      )

    /**
     * Which of `ids` are not active members of the organization. The found rows stay share-locked until the
     * transaction ends, so a member being added to a team cannot be removed from the organization meanwhile.
     */
    const missingActive = (organizationId: OrganizationId, ids: ReadonlyArray<MembershipId>) =>
      ids.length === 0
        ? Effect.succeed([] as ReadonlyArray<MembershipId>)
        : sql<{ id: MembershipId }>`
            SELECT id FROM memberships
            WHERE organization_id = ${organizationId} AND removed_at IS NULL AND id IN ${sql.in(ids)}
            FOR SHARE`.pipe(
            Effect.map((rows) => {
              const found = new Set(rows.map((row) => row.id))
              return ids.filter((id) => !found.has(id))
            })
          )

    return { find, findActive, findActiveByEmail, list, countOwners, missingActive } as const
  })
}) {}

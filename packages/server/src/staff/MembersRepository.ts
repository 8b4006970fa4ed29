/** Storage views of memberships as members (with the person's name and email), and the locks that guard them. */
import { SqlClient, type Statement } from "@effect/sql"
import { Member, type MembershipId, type OrganizationId, type Role } from "@orgplane/schema"
import { Effect } from "effect"
import type { PageRequest } from "../platform/Cursor.js"
import { first } from "../platform/Sql.js"

/** `%` and `_` match themselves in a containment search. */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

export class MembersRepository extends Effect.Service<MembersRepository>()("@orgplane/server/MembersRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const select = (condition: Statement.Fragment) =>
      sql<Member>`
        SELECT m.id, m.organization_id, m.user_id, u.name, u.email, m.role, m.created_at, m.removed_at
        FROM memberships m LEFT JOIN users u ON u.id = m.user_id
        WHERE ${condition}`.pipe(
        // Rows of our own tables: the response schema validates on the way out, not the constructor here.
        Effect.map((rows) => rows.map((row) => new Member(row, true))),
        Effect.orDie
      )

    /** The member with this id in the organization, removed or not. */
    const find = (organizationId: OrganizationId, id: MembershipId) =>
      Effect.map(select(sql`m.organization_id = ${organizationId} AND m.id = ${id}`), first)

    /** The member, only while active. */
    const findActive = (organizationId: OrganizationId, id: MembershipId) =>
      Effect.map(select(sql`m.organization_id = ${organizationId} AND m.id = ${id} AND m.removed_at IS NULL`), first)

    /** The active member with this email (case-insensitive). */
    const findActiveByEmail = (organizationId: OrganizationId, email: string) =>
      Effect.map(
        select(sql`m.organization_id = ${organizationId} AND lower(u.email) = lower(${email}) AND m.removed_at IS NULL`),
        first
      )

    const list = (
      organizationId: OrganizationId,
      filter: { readonly role?: Role | undefined; readonly q?: string | undefined; readonly includeRemoved?: boolean | undefined },
      page: PageRequest
    ) =>
      select(sql`${sql.and([
        sql`m.organization_id = ${organizationId}`,
        filter.includeRemoved ? sql`true` : sql`m.removed_at IS NULL`,
        filter.role ? sql`m.role = ${filter.role}` : sql`true`,
        filter.q
          ? sql`(u.name ILIKE ${likePattern(filter.q)} OR u.email ILIKE ${likePattern(filter.q)})`
          : sql`true`,
        page.after ? sql`m.id > ${page.after[0]}` : sql`true`
      ])} ORDER BY m.id LIMIT ${page.limit + 1}`)

    /** How many active owners the organization has. */
    const countOwners = (organizationId: OrganizationId) =>
      sql<{ count: number }>`SELECT count(*)::int AS count FROM memberships
                             WHERE organization_id = ${organizationId} AND role = 'owner' AND removed_at IS NULL`.pipe(
        Effect.map((rows) => rows[0].count),
        Effect.orDie
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
            }),
            Effect.orDie
          )

    const setRole = (id: MembershipId, role: Role, at: Date) =>
      sql`UPDATE memberships SET role = ${role}, updated_at = ${at} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

    /** Marks the membership removed, takes it out of every team and revokes the API keys it created. */
    const remove = (id: MembershipId, at: Date) =>
      Effect.all([
        sql`UPDATE memberships SET removed_at = ${at}, updated_at = ${at} WHERE id = ${id}`,
        sql`DELETE FROM team_members WHERE membership_id = ${id}`,
        sql`DELETE FROM api_keys WHERE membership_id = ${id}`
      ], { discard: true }).pipe(Effect.orDie)

    return { find, findActive, findActiveByEmail, list, countOwners, missingActive, setRole, remove } as const
  })
}) {}

/** Storage of teams and their members. */
import { SqlClient, type Statement } from "@effect/sql"
import { Conflict, type MembershipId, type OrganizationId, Team, type TeamId } from "@orgplane/schema"
import { Effect } from "effect"
import type { PageRequest } from "../platform/Cursor.js"
import { catchUniqueViolation, first } from "../platform/Sql.js"
import { likePattern } from "./MembersRepository.js"

const teamExists = (name: string) =>
  new Conflict({ error: "team_exists", message: `The organization already has a team named "${name}".` })

export class TeamsRepository extends Effect.Service<TeamsRepository>()("@orgplane/server/TeamsRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const select = (condition: Statement.Fragment) =>
      sql<Team>`
        SELECT t.id, t.organization_id, t.name, t.created_by_membership_id AS created_by_org_membership_id,
               t.created_at, t.updated_at,
               ARRAY(SELECT tm.membership_id FROM team_members tm WHERE tm.team_id = t.id ORDER BY tm.membership_id)
                 AS member_ids
        FROM teams t
        WHERE ${condition}`.pipe(
        // Rows of our own tables: the response schema validates on the way out, not the constructor here.
        Effect.map((rows) => rows.map((row) => new Team(row, true))),
        Effect.orDie
      )

    const find = (organizationId: OrganizationId, id: TeamId) =>
      Effect.map(select(sql`t.organization_id = ${organizationId} AND t.id = ${id}`), first)

    /** Locks the team row for the rest of the transaction; false when the organization has no such team. */
    const lock = (organizationId: OrganizationId, id: TeamId) =>
      sql`SELECT id FROM teams WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    /** By name (case-insensitive), then id; keyset over both. */
    const list = (
      organizationId: OrganizationId,
      filter: { readonly q?: string | undefined; readonly memberId?: MembershipId | undefined },
      page: PageRequest
    ) =>
      select(sql`${sql.and([
        sql`t.organization_id = ${organizationId}`,
        filter.q ? sql`t.name ILIKE ${likePattern(filter.q)}` : sql`true`,
        filter.memberId
          ? sql`EXISTS (SELECT 1 FROM team_members tm WHERE tm.team_id = t.id AND tm.membership_id = ${filter.memberId})`
          : sql`true`,
        // The cursor holds the last name as is: Postgres lowers both sides the same way.
        page.after ? sql`(lower(t.name), t.id) > (lower(${page.after[0]}), ${page.after[1]})` : sql`true`
      ])} ORDER BY lower(t.name), t.id LIMIT ${page.limit + 1}`)

    const insert = (row: {
      readonly id: TeamId
      readonly organizationId: OrganizationId
      readonly name: string
      readonly createdByMembershipId: MembershipId
      readonly createdAt: Date
    }) =>
      sql`INSERT INTO teams ${sql.insert({ ...row, updatedAt: row.createdAt })}`.pipe(
        catchUniqueViolation(() => teamExists(row.name)),
        Effect.asVoid
      )

    const rename = (id: TeamId, name: string, at: Date) =>
      sql`UPDATE teams SET name = ${name}, updated_at = ${at} WHERE id = ${id}`.pipe(
        catchUniqueViolation(() => teamExists(name)),
        Effect.asVoid
      )

    const touch = (id: TeamId, at: Date) =>
      sql`UPDATE teams SET updated_at = ${at} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

    const addMembers = (id: TeamId, memberIds: ReadonlyArray<MembershipId>, at: Date) =>
      memberIds.length === 0
        ? Effect.void
        : sql`INSERT INTO team_members ${sql.insert(memberIds.map((membershipId) => ({ teamId: id, membershipId, createdAt: at })))}
              ON CONFLICT DO NOTHING`.pipe(Effect.asVoid, Effect.orDie)

    /** Removes the given members, or every member not in `keep`. */
    const removeMembers = (id: TeamId, which: { readonly only: ReadonlyArray<MembershipId> } | { readonly keep: ReadonlyArray<MembershipId> }) =>
      ("only" in which
        ? which.only.length === 0
          ? Effect.succeed([])
          : sql`DELETE FROM team_members WHERE team_id = ${id} AND membership_id IN ${sql.in(which.only)}`
        : which.keep.length === 0
        ? sql`DELETE FROM team_members WHERE team_id = ${id}`
        : sql`DELETE FROM team_members WHERE team_id = ${id} AND membership_id NOT IN ${sql.in(which.keep)}`).pipe(
          Effect.asVoid,
          Effect.orDie
        )

    const remove = (organizationId: OrganizationId, id: TeamId) =>
      sql`DELETE FROM teams WHERE organization_id = ${organizationId} AND id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    return { find, lock, list, insert, rename, touch, addMembers, removeMembers, remove } as const
  })
}) {}

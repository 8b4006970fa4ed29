/**
 * Storage of teams and their members.
 */
import { Conflict, MembershipId, OrganizationId, ScimConnectionId, Team, TeamId, TeamListQuery } from "@orgplane/schema"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import * as Keyset from "../platform/Keyset.js"
import { catchUniqueViolation } from "../platform/Sql.js"
import { classRow, DateColumn, execute, findAll, findOne, likePattern, trustedClassRow } from "../platform/Statements.js"

export class TeamRow extends Model.Class<TeamRow>("TeamRow")({
  id: Model.GeneratedByApp(TeamId),
  organizationId: OrganizationId,
  name: Team.fields.name,
  createdByMembershipId: Schema.NullOr(MembershipId),
  externalKey: Schema.NullOr(Schema.String),
  scimConnectionId: Schema.NullOr(ScimConnectionId),
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

/** By name (case-insensitive), then id. The cursor holds the name as is: Postgres lowers both sides the same way. */
const byName = Keyset.make<Team>("teams", "asc", [
  { column: "lower(t.name)", value: (team) => team.name, compare: (value, sql) => sql`lower(${value})` },
  { column: "t.id", value: (team) => team.id }
])

const teamExists = (name: string) =>
  new Conflict({ error: "team_exists", message: `The organization already has a team named "${name}".` })

export const externalKeyTaken = (key: string) =>
  new Conflict({ error: "team_external_key_taken", message: `Another team of the organization has the external key "${key}".` })

const Scoped = Schema.Struct({ organizationId: OrganizationId, id: TeamId })
const Members = Schema.Struct({ ...Scoped.fields, memberIds: Schema.Array(MembershipId) })

const makeTeamsRepository = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const select = sql`
      SELECT t.id, t.organization_id, t.name, t.created_by_membership_id AS created_by_org_membership_id,
             t.external_key, t.scim_connection_id, t.created_at, t.updated_at,
             ARRAY(SELECT tm.membership_id FROM team_members tm
                   WHERE tm.organization_id = t.organization_id AND tm.team_id = t.id ORDER BY tm.membership_id) AS member_ids
      FROM teams t`

  const find = findOne({
    Request: Scoped,
    Result: classRow(Team),
    execute: ({ id, organizationId }) => sql`${select} WHERE t.organization_id = ${organizationId} AND t.id = ${id}`
  })

  /** Locks the team row for the rest of the transaction; false when the organization has no such team. */
  const lock = ({ id, organizationId }: typeof Scoped.Type) =>
    sql`SELECT id FROM teams WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`.pipe(
      Effect.map((rows) => rows.length > 0)
    )

  const listRows = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, query: Schema.toType(TeamListQuery), page: Keyset.PageRequest }),
    Result: trustedClassRow(Team),
    execute: ({ organizationId, page, query }) =>
      sql`${select} WHERE ${
        sql.and([
          sql`t.organization_id = ${organizationId}`,
          query.q ? sql`t.name ILIKE ${likePattern(query.q)}` : sql`true`,
          query.memberId
            ? sql`EXISTS (SELECT 1 FROM team_members tm WHERE tm.organization_id = t.organization_id
                            AND tm.team_id = t.id AND tm.membership_id = ${query.memberId})`
            : sql`true`,
          page.after
        ])
      } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })

  const list = (organizationId: OrganizationId, query: TeamListQuery) =>
    Keyset.page(byName, query, (page) => listRows({ organizationId, query, page }))

  const insertRow = execute({ Request: TeamRow.insert, execute: (row) => sql`INSERT INTO teams ${sql.insert(row)}` })
  const insert = (row: typeof TeamRow.insert.Type) => insertRow(row).pipe(catchUniqueViolation(() => teamExists(row.name)))

  const renameRow = execute({
    Request: Schema.Struct({ ...Scoped.fields, name: Team.fields.name, at: DateColumn }),
    execute: ({ at, id, name, organizationId }) =>
      sql`UPDATE teams SET name = ${name}, updated_at = ${at} WHERE organization_id = ${organizationId} AND id = ${id}`
  })
  const rename = (team: typeof Scoped.Type, name: string, at: Date) =>
    renameRow({ ...team, name, at }).pipe(catchUniqueViolation(() => teamExists(name)))

  /** Whether another team of the organization (than `except`) has this external key. */
  const externalKeyInUse = (organizationId: OrganizationId, key: string, except: TeamId | null) =>
    sql`SELECT 1 FROM teams WHERE organization_id = ${organizationId} AND external_key = ${key}
          AND id IS DISTINCT FROM ${except}`.pipe(Effect.map((rows) => rows.length > 0))

  const setExternalKeyRow = execute({
    Request: Schema.Struct({ ...Scoped.fields, externalKey: Schema.NullOr(Schema.String) }),
    execute: ({ externalKey, id, organizationId }) =>
      sql`UPDATE teams SET external_key = ${externalKey} WHERE organization_id = ${organizationId} AND id = ${id}`
  })
  const setExternalKey = (team: typeof Scoped.Type, externalKey: string | null) =>
    setExternalKeyRow({ ...team, externalKey }).pipe(catchUniqueViolation(() => externalKeyTaken(externalKey ?? "")))

  /** The SCIM connection that manages the team, if any (none also when there is no such team). */
  const managedBy = ({ id, organizationId }: typeof Scoped.Type) =>
    sql<{ scimConnectionId: ScimConnectionId | null }>`SELECT scim_connection_id FROM teams
                                                         WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
      Effect.map((rows) => rows[0]?.scimConnectionId ?? null)
    )

  const touch = execute({
    Request: Schema.Struct({ ...Scoped.fields, at: DateColumn }),
    execute: ({ at, id, organizationId }) =>
      sql`UPDATE teams SET updated_at = ${at} WHERE organization_id = ${organizationId} AND id = ${id}`
  })

  const addMembers = execute({
    Request: Schema.Struct({ ...Members.fields, at: DateColumn }),
    execute: ({ at, id, memberIds, organizationId }) => {
      const row = (membershipId: string) => ({ organizationId, teamId: id, membershipId, createdAt: at })
      const [first, ...rest] = memberIds
      return first === undefined
        ? Effect.void
        : sql`INSERT INTO team_members ${sql.insert([row(first), ...rest.map(row)])} ON CONFLICT DO NOTHING`
    }
  })

  /** Removes the given members from the team. */
  const removeMembers = execute({
    Request: Members,
    execute: ({ id, memberIds, organizationId }) =>
      memberIds.length === 0
        ? Effect.void
        : sql`DELETE FROM team_members WHERE organization_id = ${organizationId} AND team_id = ${id}
                AND membership_id IN ${sql.in(memberIds)}`
  })

  /** Makes the team's members exactly `memberIds` (some may be added afterwards with `addMembers`). */
  const keepOnlyMembers = execute({
    Request: Members,
    execute: ({ id, memberIds, organizationId }) =>
      memberIds.length === 0
        ? sql`DELETE FROM team_members WHERE organization_id = ${organizationId} AND team_id = ${id}`
        : sql`DELETE FROM team_members WHERE organization_id = ${organizationId} AND team_id = ${id}
                AND membership_id NOT IN ${sql.in(memberIds)}`
  })

  /** Deletes the team with its memberships; false when the organization has no such team. */
  const remove = ({ id, organizationId }: typeof Scoped.Type) =>
    sql`DELETE FROM teams WHERE organization_id = ${organizationId} AND id = ${id} RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0)
    )

  /**
   * Every team of the organization with its members' ids, in two statements (the teams, then all their members):
   * what its document names.
   */
  const every = (organizationId: OrganizationId) =>
    Effect.gen(function*() {
      const teams = yield* sql<{ readonly id: TeamId; readonly name: string; readonly externalKey: string | null; readonly scimConnectionId: ScimConnectionId | null }>`
          SELECT id, name, external_key, scim_connection_id FROM teams WHERE organization_id = ${organizationId}`
      const members = yield* sql<{ readonly teamId: TeamId; readonly membershipId: MembershipId }>`
          SELECT team_id, membership_id FROM team_members WHERE organization_id = ${organizationId} ORDER BY membership_id`
      const byTeam = Arr.groupBy(members, (member) => member.teamId)
      return teams.map((team) => ({ ...team, memberIds: (byTeam[team.id] ?? []).map((member) => member.membershipId) }))
    })

  return {
    every,
    find,
    lock,
    list,
    insert,
    rename,
    externalKeyInUse,
    setExternalKey,
    managedBy,
    touch,
    addMembers,
    removeMembers,
    keepOnlyMembers,
    remove
  } as const
})

export class TeamsRepository extends Context.Service<TeamsRepository>()("@orgplane/server/teams/TeamsRepository", { make: makeTeamsRepository }) {
  static readonly layer = Layer.effect(this, this.make)
}

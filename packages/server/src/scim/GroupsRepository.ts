/**
 * Storage of SCIM Groups (`scim_groups`) and their members (`scim_group_members`). Every statement names the
 * organization and the connection: a group of another connection is as missing as one that never existed. Member
 * lists travel as one array parameter (`unnest`), so a 10,000-member change is a few statements, not 10,000; they
 * are compared as `IN (SELECT … FROM unnest(…))`, which Postgres hashes (`= ANY(array)` compares each row with the
 * whole array: 10,000 × 10,000 comparisons).
 */
import { MembershipId, OrganizationId, ScimConnectionId, ScimGroupId, TeamId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import { DateColumn, execute, findAll, findOne, Fragment, single } from "../platform/Statements.js"

export class ScimGroupRow extends Model.Class<ScimGroupRow>("ScimGroupRow")({
  id: Model.GeneratedByApp(ScimGroupId),
  organizationId: OrganizationId,
  connectionId: ScimConnectionId,
  displayName: Schema.String,
  externalId: Schema.NullOr(Schema.String),
  teamId: Schema.NullOr(TeamId),
  version: Schema.Int,
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

/** A member of a group as the protocol shows it: the SCIM User's id and its display (displayName, else userName). */
export const GroupMember = Schema.Struct({ value: MembershipId, display: Schema.String })
export type GroupMember = typeof GroupMember.Type

/** A group with its members (`members` null when the caller excluded them: Entra's `excludedAttributes=members`). */
export const GroupWithMembers = Schema.Struct({
  row: ScimGroupRow,
  members: Schema.NullOr(Schema.Array(GroupMember))
})
export type GroupWithMembers = typeof GroupWithMembers.Type

const Connection = Schema.Struct({ organizationId: OrganizationId, connectionId: ScimConnectionId })
export type Connection = typeof Connection.Type
const Scoped = Schema.Struct({ ...Connection.fields, id: ScimGroupId })
export type Scoped = typeof Scoped.Type
const MemberIds = Schema.Array(MembershipId)
const Members = Schema.Struct({ ...Scoped.fields, memberIds: MemberIds })

const rowColumns = `g.id, g.organization_id, g.connection_id, g.display_name, g.external_id, g.team_id, g.version,
  g.created_at, g.updated_at`

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(rowColumns)

  const find = findOne({
    Request: Scoped,
    Result: ScimGroupRow,
    execute: ({ connectionId, id, organizationId }) =>
      sql`SELECT ${columns} FROM scim_groups g
            WHERE g.organization_id = ${organizationId} AND g.connection_id = ${connectionId} AND g.id = ${id}`
  })

  /** The group, locked for the rest of the transaction (None: the connection has no such group). */
  const lock = findOne({
    Request: Scoped,
    Result: ScimGroupRow,
    execute: ({ connectionId, id, organizationId }) =>
      sql`SELECT ${columns} FROM scim_groups g
            WHERE g.organization_id = ${organizationId} AND g.connection_id = ${connectionId} AND g.id = ${id} FOR UPDATE`
  })

  /** Every group of the connection (reconcile), oldest first. */
  const all = findAll({
    Request: Connection,
    Result: ScimGroupRow,
    execute: ({ connectionId, organizationId }) =>
      sql`SELECT ${columns} FROM scim_groups g
            WHERE g.organization_id = ${organizationId} AND g.connection_id = ${connectionId} ORDER BY g.created_at, g.id`
  })

  /** The groups of the connection that have the member (a member's state changed: their teams follow). */
  const ofMember = findAll({
    Request: Schema.Struct({ ...Connection.fields, membershipId: MembershipId }),
    Result: ScimGroupRow,
    execute: ({ connectionId, membershipId, organizationId }) =>
      sql`SELECT ${columns} FROM scim_groups g
            JOIN scim_group_members gm ON gm.organization_id = g.organization_id AND gm.group_id = g.id
            WHERE g.organization_id = ${organizationId} AND g.connection_id = ${connectionId}
              AND gm.membership_id = ${membershipId} ORDER BY g.created_at, g.id`
  })

  /**
   * One page of the connection's groups matching `where` (a condition on `g`, from the filter), in creation order,
   * with the number of all matches. SCIM pages by a 1-based `startIndex` (RFC 7644 §3.4.2.4), an offset by
   * definition; the list index (organization, connection, created_at, id) keeps the scan short.
   */
  const page = findAll({
    Request: Schema.Struct({
      ...Connection.fields,
      where: Fragment,
      offset: Schema.Int,
      limit: Schema.Int,
      withMembers: Schema.Boolean
    }),
    Result: Schema.Struct({
      row: ScimGroupRow,
      members: Schema.NullOr(Schema.fromJsonString(Schema.Array(GroupMember))),
      total: Schema.Number
    }),
    execute: ({ connectionId, limit, offset, organizationId, where, withMembers }) =>
      sql`SELECT ${columns}, count(*) OVER ()::int AS total,
                   ${withMembers ? membersJson : sql`NULL`} AS members
            FROM scim_groups g
            WHERE g.organization_id = ${organizationId} AND g.connection_id = ${connectionId} AND ${where}
            ORDER BY g.created_at, g.id OFFSET ${offset} LIMIT ${limit}`.pipe(
        Effect.map((rows) => rows.map(({ members, total, ...row }) => ({ row, members, total })))
      )
  })

  /** The count alone, for a page past the end (`count=0`, or a `startIndex` beyond the matches). */
  const count = single({
    Request: Schema.Struct({ ...Connection.fields, where: Fragment }),
    Result: Schema.Struct({ total: Schema.Number }),
    execute: ({ connectionId, organizationId, where }) =>
      sql`SELECT count(*)::int AS total FROM scim_groups g
            WHERE g.organization_id = ${organizationId} AND g.connection_id = ${connectionId} AND ${where}`
  })

  /** The members of a group as JSON text: `[{value, display}]` in id order (an outer `g` names the group). */
  const membersJson = sql`(SELECT coalesce(json_agg(json_build_object('value', gm.membership_id,
                               'display', coalesce(u.display_name, u.user_name)) ORDER BY gm.membership_id), '[]')::text
                             FROM scim_group_members gm
                             JOIN scim_users u ON u.organization_id = gm.organization_id AND u.membership_id = gm.membership_id
                             WHERE gm.organization_id = g.organization_id AND gm.group_id = g.id)`

  const members = single({
    Request: Scoped,
    Result: Schema.Struct({ members: Schema.fromJsonString(Schema.Array(GroupMember)) }),
    execute: ({ connectionId, id, organizationId }) =>
      sql`SELECT ${membersJson} AS members FROM scim_groups g
            WHERE g.organization_id = ${organizationId} AND g.connection_id = ${connectionId} AND g.id = ${id}`
  })

  const insert = execute({
    Request: ScimGroupRow.insert,
    execute: (row) => sql`INSERT INTO scim_groups ${sql.insert(row)}`
  })

  /** The group as it is after a change: name, externalId, team; its version one higher. */
  const update = execute({
    Request: Schema.Struct({
      ...Scoped.fields,
      displayName: Schema.String,
      externalId: Schema.NullOr(Schema.String),
      teamId: Schema.NullOr(TeamId),
      at: DateColumn
    }),
    execute: ({ at, connectionId, displayName, externalId, id, organizationId, teamId }) =>
      sql`UPDATE scim_groups SET display_name = ${displayName}, external_id = ${externalId}, team_id = ${teamId},
                   version = version + 1, updated_at = ${at}
            WHERE organization_id = ${organizationId} AND connection_id = ${connectionId} AND id = ${id}`
  })

  /** Only the team a group maps onto (reconcile: the team is gone, or a linked one appeared). */
  const setTeam = execute({
    Request: Schema.Struct({ ...Scoped.fields, teamId: Schema.NullOr(TeamId) }),
    execute: ({ connectionId, id, organizationId, teamId }) =>
      sql`UPDATE scim_groups SET team_id = ${teamId}
            WHERE organization_id = ${organizationId} AND connection_id = ${connectionId} AND id = ${id}`
  })

  const remove = execute({
    Request: Scoped,
    execute: ({ connectionId, id, organizationId }) =>
      sql`DELETE FROM scim_groups
            WHERE organization_id = ${organizationId} AND connection_id = ${connectionId} AND id = ${id}`
  })

  /**
   * The ids that are not SCIM Users of this connection (unknown, another connection's, or deleted), sorted: a
   * group may only hold the connection's own users.
   */
  const notUsers = findAll({
    Request: Schema.Struct({ ...Connection.fields, memberIds: Schema.Array(Schema.String) }),
    Result: Schema.Struct({ id: Schema.String }),
    // A set difference rather than NOT EXISTS per id: its plan stays linear even when the planner's statistics
    // have not caught up with a bulk of new Users (a nested anti join over them was quadratic).
    execute: ({ connectionId, memberIds, organizationId }) =>
      sql`SELECT k AS id FROM unnest(${memberIds}::text[]) AS k
            EXCEPT
            SELECT u.membership_id FROM scim_users u
            WHERE u.organization_id = ${organizationId} AND u.membership_id = ANY(${memberIds}::text[])
              AND u.connection_id = ${connectionId} AND u.deleted_at IS NULL
            ORDER BY id`
  })

  /** Adds members (those already in stay as they are). */
  const addMembers = execute({
    Request: Schema.Struct({ ...Members.fields, at: DateColumn }),
    execute: ({ at, id, memberIds, organizationId }) =>
      memberIds.length === 0
        ? Effect.void
        : sql`INSERT INTO scim_group_members (organization_id, group_id, membership_id, created_at)
                SELECT ${organizationId}, ${id}, m, ${at} FROM unnest(${memberIds}::text[]) AS m
                ON CONFLICT DO NOTHING`
  })

  const removeMembers = execute({
    Request: Members,
    execute: ({ id, memberIds, organizationId }) =>
      memberIds.length === 0
        ? Effect.void
        : sql`DELETE FROM scim_group_members
                WHERE organization_id = ${organizationId} AND group_id = ${id}
                  AND membership_id IN (SELECT k FROM unnest(${memberIds}::text[]) AS k)`
  })

  const keepOnlyMembers = execute({
    Request: Members,
    execute: ({ id, memberIds, organizationId }) =>
      sql`DELETE FROM scim_group_members
            WHERE organization_id = ${organizationId} AND group_id = ${id}
              AND membership_id NOT IN (SELECT k FROM unnest(${memberIds}::text[]) AS k)`
  })

  /** Makes the group's members exactly `memberIds`. */
  const replaceMembers = (input: typeof Members.Type & { readonly at: Date }) =>
    Effect.andThen(keepOnlyMembers(input), addMembers(input))

  /**
   * The members of the group a team should hold: SCIM Users of the connection that are active, not deleted, and
   * whose membership is neither suspended nor removed.
   */
  const activeMemberIds = findAll({
    Request: Scoped,
    Result: Schema.Struct({ membershipId: MembershipId }),
    execute: ({ connectionId, id, organizationId }) =>
      sql`SELECT gm.membership_id FROM scim_group_members gm
            JOIN scim_users u ON u.organization_id = gm.organization_id AND u.membership_id = gm.membership_id
            JOIN memberships m ON m.organization_id = gm.organization_id AND m.id = gm.membership_id
            WHERE gm.organization_id = ${organizationId} AND gm.group_id = ${id} AND u.connection_id = ${connectionId}
              AND u.active AND u.deleted_at IS NULL AND m.removed_at IS NULL AND m.suspended_at IS NULL
            ORDER BY gm.membership_id`
  })

  /**
   * For each of these members (those still in the organization): their role and the groups of the connection that
   * hold them, for the role rules, in one statement however many members changed.
   */
  const rolesAndGroups = findAll({
    Request: Schema.Struct({ ...Connection.fields, memberIds: MemberIds }),
    Result: Schema.Struct({
      id: MembershipId,
      role: Schema.Literals(["owner", "admin", "member"]),
      groups: Schema.fromJsonString(Schema.Array(Schema.Struct({ displayName: Schema.String, externalId: Schema.NullOr(Schema.String) })))
    }),
    execute: ({ connectionId, memberIds, organizationId }) =>
      sql`SELECT m.id, m.role,
                   (SELECT coalesce(json_agg(json_build_object('displayName', g.display_name, 'externalId', g.external_id)), '[]')::text
                    FROM scim_group_members gm
                    JOIN scim_groups g ON g.organization_id = gm.organization_id AND g.id = gm.group_id
                    WHERE gm.organization_id = m.organization_id AND gm.membership_id = m.id
                      AND g.connection_id = ${connectionId}) AS groups
            FROM memberships m
            WHERE m.organization_id = ${organizationId} AND m.id IN (SELECT k FROM unnest(${memberIds}::text[]) AS k) AND m.removed_at IS NULL
            ORDER BY m.id`
  })

  /** The members a team holds now (reconcile compares them with the group's active members). */
  const teamMemberIds = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, teamId: TeamId }),
    Result: Schema.Struct({ membershipId: MembershipId }),
    execute: ({ organizationId, teamId }) =>
      sql`SELECT tm.membership_id FROM team_members tm
            WHERE tm.organization_id = ${organizationId} AND tm.team_id = ${teamId} ORDER BY tm.membership_id`
  })

  /** Each SCIM User of the connection with its membership's state (reconcile). */
  const userStates = findAll({
    Request: Connection,
    Result: Schema.Struct({
      membershipId: MembershipId,
      active: Schema.Boolean,
      deleted: Schema.Boolean,
      suspended: Schema.Boolean,
      removed: Schema.Boolean
    }),
    execute: ({ connectionId, organizationId }) =>
      sql`SELECT u.membership_id, u.active, u.deleted_at IS NOT NULL AS deleted,
                   m.suspended_at IS NOT NULL AS suspended, m.removed_at IS NOT NULL AS removed
            FROM scim_users u
            JOIN memberships m ON m.organization_id = u.organization_id AND m.id = u.membership_id
            WHERE u.organization_id = ${organizationId} AND u.connection_id = ${connectionId}
            ORDER BY u.created_at, u.membership_id`
  })

  /** The connection's group settings (None: no such connection in the organization). */
  const connection = findOne({
    Request: Connection,
    Result: Schema.Struct({
      groupMappingMode: Schema.Literals(["metadata_only", "create_teams", "link_by_external_key"]),
      defaultRole: Schema.Literals(["admin", "member"]),
      roleRules: Schema.fromJsonString(Schema.Array(Schema.Struct({ group: Schema.String, role: Schema.Literals(["admin", "member"]) })))
    }),
    execute: ({ connectionId, organizationId }) =>
      sql`SELECT c.group_mapping_mode, c.default_role, c.role_rules::text AS role_rules FROM scim_connections c
            WHERE c.organization_id = ${organizationId} AND c.id = ${connectionId}`
  })

  return {
    connection,
    teamMemberIds: (organizationId: OrganizationId, teamId: TeamId) =>
      Effect.map(teamMemberIds({ organizationId, teamId }), (rows) => rows.map((row) => row.membershipId)),
    userStates,
    find,
    lock,
    all,
    ofMember,
    page,
    count,
    members: (scoped: Scoped) => Effect.map(members(scoped), (row) => row.members),
    insert,
    update,
    setTeam,
    remove,
    notUsers: (connection: Connection, memberIds: ReadonlyArray<string>) =>
      memberIds.length === 0
        ? Effect.succeed([] as ReadonlyArray<string>)
        : Effect.map(notUsers({ ...connection, memberIds }), (rows) => rows.map((row) => row.id)),
    addMembers,
    removeMembers,
    replaceMembers,
    activeMemberIds: (scoped: Scoped) => Effect.map(activeMemberIds(scoped), (rows) => rows.map((row) => row.membershipId)),
    rolesAndGroups
  } as const
})

export class GroupsRepository extends Context.Service<GroupsRepository>()("@orgplane/server/scim/GroupsRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

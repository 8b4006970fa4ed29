/**
 * What a SCIM Group does to the organization: the team it maps onto (per the connection's mode) with the group's
 * active members, and the roles the connection's explicit group → role rules give. Runs inside the caller's
 * transaction (a SCIM write), after the group's own rows changed.
 *
 * - `metadata_only`: no team.
 * - `create_teams`: a team per group, named after its displayName (`"<name> (SCIM)"` when the organization has a
 *   team of that name), owned by the connection (manual edits refused); renaming the group renames it.
 * - `link_by_external_key`: the team whose `external_key` is the group's externalId (none: no team); the team keeps
 *   its name, and is the connection's while linked (manual edits refused, released when the group goes).
 *
 * A team holds the group's members that are active SCIM Users (not suspended, not deleted, membership not removed),
 * so a member the directory suspends or deletes leaves the directory's teams (`memberChanged`).
 *
 * Roles: a member in a group that a rule names (displayName or externalId, case-insensitively) gets the rule's role
 * when it is higher than the connection's default role; a member in no such group has the default role. An owner is
 * never demoted, and nothing else about a group name ever grants a role.
 *
 * Its `layer` leaves DirectoryTeams to the caller.
 */
import type { MembershipId, OrganizationId, Role, ScimConnectionId, TeamId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Memberships } from "../identity/Memberships.js"
import { DirectoryTeams } from "../teams/DirectoryTeams.js"
import { type Connection, GroupsRepository, ScimGroupRow } from "./GroupsRepository.js"

export type GroupMappingMode = "metadata_only" | "create_teams" | "link_by_external_key"

/** What a sync needs to know of the connection. */
export interface SyncConnection {
  readonly organizationId: OrganizationId
  readonly connectionId: ScimConnectionId
  readonly groupMappingMode: GroupMappingMode
  readonly defaultRole: "admin" | "member"
  readonly roleRules: ReadonlyArray<{ readonly group: string; readonly role: "admin" | "member" }>
}

const rank: Record<Role, number> = { member: 0, admin: 1, owner: 2 }

/** The role the rules give a member of these groups (pure). */
export const ruleRole = (
  connection: Pick<SyncConnection, "defaultRole" | "roleRules">,
  groups: ReadonlyArray<{ readonly displayName: string; readonly externalId: string | null }>
): "admin" | "member" => {
  const names = new Set(groups.flatMap((group) => [group.displayName, group.externalId ?? ""]).filter((name) => name !== "").map((name) => name.toLowerCase()))
  let role = connection.defaultRole
  for (const rule of connection.roleRules) {
    if (names.has(rule.group.toLowerCase()) && rank[rule.role] > rank[role]) role = rule.role
  }
  return role
}

/**
 * The role a member should have now: the rules' role, except an owner stays an owner (None: leave it as it is).
 * An admin the directory made can become a member again when they leave the group that made them one.
 */
export const roleChange = (current: Role, wanted: "admin" | "member"): Option.Option<Role> =>
  current === "owner" || current === wanted ? Option.none() : Option.some(wanted)

const make = Effect.gen(function*() {
  const groups = yield* GroupsRepository
  const teams = yield* DirectoryTeams
  const memberships = yield* Memberships

  /** The team a new (or newly named) group maps onto in this mode: created, linked, or none. */
  const teamForGroup = Effect.fn("TeamSync.teamForGroup")(function*(connection: SyncConnection, group: { readonly displayName: string; readonly externalId: string | null }) {
    switch (connection.groupMappingMode) {
      case "metadata_only":
        return null
      case "create_teams":
        return yield* teams.create({
          organizationId: connection.organizationId,
          connectionId: connection.connectionId,
          name: group.displayName
        })
      case "link_by_external_key": {
        if (group.externalId === null) return null
        const linked = yield* teams.findByExternalKey(connection.organizationId, group.externalId)
        if (Option.isNone(linked)) return null
        yield* teams.claim(connection.organizationId, linked.value, connection.connectionId)
        return linked.value
      }
    }
  })

  /** The team's members become the group's active members. */
  const syncMembers = Effect.fn("TeamSync.syncMembers")((connection: Connection, group: ScimGroupRow) => {
    const teamId = group.teamId
    return teamId === null
      ? Effect.void
      : Effect.flatMap(
        groups.activeMemberIds({ ...connection, id: group.id }),
        (memberIds) => teams.setMembers(connection.organizationId, teamId, memberIds)
      )
  })

  /**
   * After a group was created or replaced: the team it should map onto now (a created team renamed with the
   * group; a linked team found by the new externalId), and that team's members. Answers the team id to store.
   */
  const groupChanged = Effect.fn("TeamSync.groupChanged")(function*(
    connection: SyncConnection,
    group: ScimGroupRow,
    previous: { readonly displayName: string; readonly externalId: string | null } | null
  ) {
    let teamId: TeamId | null = group.teamId
    if (connection.groupMappingMode === "create_teams") {
      if (teamId === null) teamId = yield* teamForGroup(connection, group)
      else if (previous !== null && previous.displayName !== group.displayName) {
        yield* teams.rename(connection.organizationId, teamId, group.displayName)
      }
    } else if (connection.groupMappingMode === "link_by_external_key" && (previous === null || previous.externalId !== group.externalId)) {
      const linked = yield* teamForGroup(connection, group)
      if (teamId !== null && teamId !== linked) yield* teams.release(connection.organizationId, teamId)
      teamId = linked
    }
    yield* syncMembers(connection, new ScimGroupRow({ ...group, teamId }))
    return teamId
  })

  /**
   * A group the directory deleted: its team stays, released (a team the directory created becomes an ordinary team
   * with the members it has, a linked team is the organization's again): the organization decides what becomes of it.
   */
  const groupDeleted = Effect.fn("TeamSync.groupDeleted")((connection: SyncConnection, group: ScimGroupRow) =>
    group.teamId === null ? Effect.void : teams.release(connection.organizationId, group.teamId))

  /**
   * The members' roles per the rules, applied under the membership lock (an owner is never demoted): one read for
   * all of them, a change only where the role differs. Answers who changed.
   */
  const applyRoleRules = Effect.fn("TeamSync.applyRoleRules")(function*(connection: SyncConnection, memberIds: ReadonlyArray<MembershipId>) {
    if (connection.roleRules.length === 0 || memberIds.length === 0) return []
    yield* memberships.lock(connection.organizationId)
    const changed: Array<{ readonly id: MembershipId; readonly role: Role }> = []
    for (const member of yield* groups.rolesAndGroups({ ...connection, memberIds })) {
      const change = roleChange(member.role, ruleRole(connection, member.groups))
      if (Option.isNone(change)) continue
      yield* memberships.changeRole(connection.organizationId, member.id, change.value)
      changed.push({ id: member.id, role: change.value })
    }
    return changed
  })

  /** After members joined or left a group: its team, and the roles of those members. */
  const membersChanged = Effect.fn("TeamSync.membersChanged")(function*(connection: SyncConnection, group: ScimGroupRow, changed: ReadonlyArray<MembershipId>) {
    yield* syncMembers(connection, group)
    return yield* applyRoleRules(connection, changed)
  })

  /**
   * A SCIM User's state changed (activated, suspended, deleted): the teams of its groups follow, and its role per
   * the rules. The Users operations call it in their transaction.
   */
  const memberChanged = Effect.fn("TeamSync.memberChanged")(function*(connection: SyncConnection, membershipId: MembershipId) {
    for (const group of yield* groups.ofMember({ ...connection, membershipId })) yield* syncMembers(connection, group)
    yield* applyRoleRules(connection, [membershipId])
  })

  return { teamForGroup, syncMembers, groupChanged, groupDeleted, applyRoleRules, membersChanged, memberChanged } as const
})

export class TeamSync extends Context.Service<TeamSync>()("@orgplane/server/scim/TeamSync", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      GroupsRepository.layer,
      Memberships.layer
    ])
  )
}

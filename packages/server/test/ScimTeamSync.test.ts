/**
 * scim/TeamSync.ts on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL): a group's team in
 * each mapping mode (created and renamed with the group, linked by its externalId and released), the team holding
 * the group's active members, and the roles the connection's rules give (an owner never demoted).
 */
import { expect, layer } from "@effect/vitest"
import { MembershipId, type OrganizationId, type Role, ScimConnectionId, ScimGroupId, TeamId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { IdGenerator } from "../src/platform/Ids.js"
import { ConnectionsRepository } from "../src/scim/ConnectionsRepository.js"
import { GroupsRepository } from "../src/scim/GroupsRepository.js"
import { type GroupMappingMode, type SyncConnection, TeamSync } from "../src/scim/TeamSync.js"
import { UsersRepository } from "../src/scim/UsersRepository.js"
import { DirectoryTeams } from "../src/teams/DirectoryTeams.js"
import * as Db from "./support/IdentityDatabase.js"
import * as TestDatabase from "./support/TestDatabase.js"

const later = (ms: number) => new Date(Db.at.getTime() + ms)

/** An organization with a connection of `mode` whose rule makes the "Admins" group's members admins. */
const setUp = Effect.fn("ScimTeamSync.setUp")(function*(mode: GroupMappingMode) {
  const connections = yield* ConnectionsRepository
  const organizationId: OrganizationId = yield* Db.insertOrganization()
  const connectionId = Schema.decodeUnknownSync(ScimConnectionId)(Db.newId("scc"))
  const connection: SyncConnection = { organizationId, connectionId, groupMappingMode: mode, defaultRole: "member", roleRules: [{ group: "Admins", role: "admin" }] }
  yield* connections.insert({ id: connectionId, organizationId, name: connectionId, groupMappingMode: mode, defaultRole: "member", roleRules: connection.roleRules, createdByMembershipId: null, at: Db.at })
  return connection
})

/** A member with a SCIM User of the connection. */
const addUser = Effect.fn("ScimTeamSync.addUser")(function*(connection: SyncConnection, userName: string, role: Role = "member") {
  const users = yield* UsersRepository
  const person = yield* Db.insertUser(`${userName}@${connection.organizationId}.test`)
  const membershipId = Schema.decodeUnknownSync(MembershipId)(yield* Db.insertMembership(connection.organizationId, person, role))
  yield* users.insert(connection, { membershipId, userId: person, userName, externalId: null, active: true, displayName: null, emails: [], resource: { userName }, at: Db.at })
  return membershipId
})

/** A group of the connection with these members (no team yet). */
const addGroup = Effect.fn("ScimTeamSync.addGroup")(function*(connection: SyncConnection, displayName: string, externalId: string | null, memberIds: ReadonlyArray<MembershipId>) {
  const groups = yield* GroupsRepository
  const id = Schema.decodeUnknownSync(ScimGroupId)(Db.newId("scg"))
  yield* groups.insert({ id, organizationId: connection.organizationId, connectionId: connection.connectionId, displayName, externalId, teamId: null, version: 1, createdAt: Db.at, updatedAt: Db.at })
  yield* groups.addMembers({ organizationId: connection.organizationId, connectionId: connection.connectionId, id, memberIds, at: Db.at })
  return Option.getOrThrow(yield* groups.find({ organizationId: connection.organizationId, connectionId: connection.connectionId, id }))
})

const teamOf = (organizationId: OrganizationId, teamId: TeamId) =>
  SqlClient.SqlClient.use((sql) =>
    Effect.map(
      sql<{ name: string; scimConnectionId: string | null }>`SELECT name, scim_connection_id FROM teams WHERE organization_id = ${organizationId} AND id = ${teamId}`,
      (rows) => rows[0]
    ))
const membersOf = (organizationId: OrganizationId, teamId: TeamId) =>
  GroupsRepository.use((groups) => groups.teamMemberIds(organizationId, teamId))
const roleOf = (organizationId: OrganizationId, id: MembershipId) =>
  SqlClient.SqlClient.use((sql) =>
    Effect.map(sql<{ role: Role }>`SELECT role FROM memberships WHERE organization_id = ${organizationId} AND id = ${id}`, (rows) => rows[0]?.role))

const testLayer = Layer.mergeAll(TeamSync.layer.pipe(Layer.provideMerge(DirectoryTeams.layer)), ConnectionsRepository.layer, UsersRepository.layer, GroupsRepository.layer).pipe(
  Layer.provideMerge(Layer.merge(Db.layer, IdGenerator.layer))
)

layer(testLayer, { timeout: 120_000, excludeTestServices: true })(`SCIM team sync on ${TestDatabase.kind}`, (it) => {
  it.effect("create_teams: a team per group, named after it (renamed with it), holding its active members; released when the group goes", () =>
    Effect.gen(function*() {
      const sync = yield* TeamSync
      const groups = yield* GroupsRepository
      const sql = yield* SqlClient.SqlClient
      const connection = yield* setUp("create_teams")
      const [ada, bob] = [yield* addUser(connection, "ada"), yield* addUser(connection, "bob")]
      const group = yield* addGroup(connection, "Engineering", null, [ada, bob])
      const teamId = yield* sql.withTransaction(sync.groupChanged(connection, group, null))
      expect(teamId).not.toBeNull()
      const team = Schema.decodeUnknownSync(TeamId)(teamId)
      expect(yield* teamOf(connection.organizationId, team)).toEqual({ name: "Engineering", scimConnectionId: connection.connectionId })
      expect(yield* membersOf(connection.organizationId, team)).toEqual([ada, bob].sort())
      yield* groups.update({ organizationId: connection.organizationId, connectionId: connection.connectionId, id: group.id, displayName: "Eng", externalId: null, teamId: team, at: later(1) })
      const renamed = Option.getOrThrow(yield* groups.find({ organizationId: connection.organizationId, connectionId: connection.connectionId, id: group.id }))
      expect(yield* sql.withTransaction(sync.groupChanged(connection, renamed, { displayName: "Engineering", externalId: null }))).toBe(team)
      expect((yield* teamOf(connection.organizationId, team))?.name).toBe("Eng")
      // A member the directory deactivated leaves the team when the sync runs for them.
      yield* sql`UPDATE scim_users SET active = false WHERE organization_id = ${connection.organizationId} AND membership_id = ${bob}`
      yield* sql.withTransaction(sync.memberChanged(connection, bob))
      expect(yield* membersOf(connection.organizationId, team)).toEqual([ada])
      yield* sql.withTransaction(sync.groupDeleted(connection, renamed))
      expect(yield* teamOf(connection.organizationId, team)).toEqual({ name: "Eng", scimConnectionId: null })
      expect(yield* membersOf(connection.organizationId, team)).toEqual([ada])
    }))

  it.effect("link_by_external_key: the team with the group's externalId, claimed while linked; none without one", () =>
    Effect.gen(function*() {
      const sync = yield* TeamSync
      const sql = yield* SqlClient.SqlClient
      const connection = yield* setUp("link_by_external_key")
      const ada = yield* addUser(connection, "ada")
      const team = Schema.decodeUnknownSync(TeamId)(Db.newId("tem"))
      yield* sql`INSERT INTO teams (id, organization_id, name, external_key, created_at, updated_at) VALUES (${team}, ${connection.organizationId}, 'Platform', 'ext-platform', ${Db.at}, ${Db.at})`
      const linked = yield* addGroup(connection, "Platform group", "ext-platform", [ada])
      expect(yield* sql.withTransaction(sync.groupChanged(connection, linked, null))).toBe(team)
      expect(yield* teamOf(connection.organizationId, team)).toEqual({ name: "Platform", scimConnectionId: connection.connectionId })
      expect(yield* membersOf(connection.organizationId, team)).toEqual([ada])
      const unlinked = yield* addGroup(connection, "Other", "ext-none", [ada])
      expect(yield* sql.withTransaction(sync.groupChanged(connection, unlinked, null))).toBeNull()
      const metadata = yield* setUp("metadata_only")
      expect(yield* sync.teamForGroup(metadata, { displayName: "Anything", externalId: "ext-platform" })).toBeNull()
    }))

  it.effect("role rules: a member of a group a rule names gets its role, and the default back on leaving; an owner stays an owner", () =>
    Effect.gen(function*() {
      const sync = yield* TeamSync
      const groups = yield* GroupsRepository
      const sql = yield* SqlClient.SqlClient
      const connection = yield* setUp("metadata_only")
      const [ada, bob, olga] = [yield* addUser(connection, "ada"), yield* addUser(connection, "bob"), yield* addUser(connection, "olga", "owner")]
      const admins = yield* addGroup(connection, "admins", null, [ada, olga])
      expect(yield* sql.withTransaction(sync.membersChanged(connection, admins, [ada, bob, olga]))).toEqual([{ id: ada, role: "admin" }])
      expect([yield* roleOf(connection.organizationId, ada), yield* roleOf(connection.organizationId, bob), yield* roleOf(connection.organizationId, olga)])
        .toEqual(["admin", "member", "owner"])
      yield* groups.removeMembers({ organizationId: connection.organizationId, connectionId: connection.connectionId, id: admins.id, memberIds: [ada, olga] })
      expect(yield* sql.withTransaction(sync.applyRoleRules(connection, [ada, olga]))).toEqual([{ id: ada, role: "member" }])
      expect(yield* roleOf(connection.organizationId, olga)).toBe("owner")
      expect(yield* sync.applyRoleRules({ ...connection, roleRules: [] }, [ada])).toEqual([])
    }))
})

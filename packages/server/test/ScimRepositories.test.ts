/**
 * The SCIM area's data layer on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL):
 * connections with their counts, tokens and event log (DirectoryEvents writing it), Users and Groups with their
 * members, written and read back through each repository; another organization's or connection's rows never found.
 */
import { expect, layer } from "@effect/vitest"
import { Conflict, MembershipId, type OrganizationId, ScimConnectionId, ScimGroupId, ScimTokenId, TeamId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { IdGenerator } from "../src/platform/Ids.js"
import { ConnectionsRepository } from "../src/scim/ConnectionsRepository.js"
import { DirectoryEvents } from "../src/scim/DirectoryEvents.js"
import { GroupsRepository } from "../src/scim/GroupsRepository.js"
import { UsersRepository } from "../src/scim/UsersRepository.js"
import * as Db from "./support/IdentityDatabase.js"
import * as TestDatabase from "./support/TestDatabase.js"

const later = (ms: number) => new Date(Db.at.getTime() + ms)
const decode = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) => Schema.decodeUnknownSync(schema)
const connectionId = () => decode(ScimConnectionId)(Db.newId("scc"))
const groupId = () => decode(ScimGroupId)(Db.newId("scg"))
const tokenId = () => decode(ScimTokenId)(Db.newId("sct"))
const membershipId = decode(MembershipId)

/** An enterprise organization with a connection of the given mode. */
const setUp = Effect.fn("ScimRepositories.setUp")(function*(mode: "metadata_only" | "create_teams" | "link_by_external_key" = "create_teams") {
  const connections = yield* ConnectionsRepository
  const organizationId = yield* Db.insertOrganization({ name: "Initech" })
  const id = connectionId()
  yield* connections.insert({
    id,
    organizationId,
    name: `Okta ${id}`,
    groupMappingMode: mode,
    defaultRole: "member",
    roleRules: [{ group: "Admins", role: "admin" }],
    createdByMembershipId: null,
    at: Db.at
  })
  return { organizationId, connectionId: id }
})

/** A person with a membership and its SCIM User in the connection. */
const addUser = Effect.fn("ScimRepositories.addUser")(function*(
  scope: { readonly organizationId: OrganizationId; readonly connectionId: ScimConnectionId },
  userName: string,
  options: { readonly externalId?: string | null; readonly active?: boolean; readonly at?: Date } = {}
) {
  const users = yield* UsersRepository
  const person = (yield* Db.insertUser(`${userName}@${scope.organizationId}.test`))
  const member = membershipId(yield* Db.insertMembership(scope.organizationId, person, "member"))
  const row = yield* users.insert(scope, {
    membershipId: member,
    userId: person,
    userName,
    externalId: options.externalId ?? null,
    active: options.active ?? true,
    displayName: null,
    emails: [{ value: `${userName}@example.com`, primary: true }],
    resource: { userName, name: { givenName: userName }, "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": { employeeNumber: "7" } },
    at: options.at ?? Db.at
  })
  return row
})

const testLayer = Layer.mergeAll(ConnectionsRepository.layer, UsersRepository.layer, GroupsRepository.layer, DirectoryEvents.layer).pipe(
  Layer.provideMerge(Layer.merge(Db.layer, IdGenerator.layer))
)

layer(testLayer, { timeout: 120_000, excludeTestServices: true })(`SCIM repositories on ${TestDatabase.kind}`, (it) => {
  it.effect("ConnectionsRepository: insert, find with counts, list by cursor, update, name clash, lock, remove", () =>
    Effect.gen(function*() {
      const connections = yield* ConnectionsRepository
      const scope = yield* setUp()
      const found = Option.getOrThrow(yield* connections.find({ organizationId: scope.organizationId, id: scope.connectionId, at: Db.at }))
      expect(found).toMatchObject({
        id: scope.connectionId,
        organizationId: scope.organizationId,
        groupMappingMode: "create_teams",
        defaultRole: "member",
        roleRules: [{ group: "Admins", role: "admin" }],
        users: 0,
        groups: 0,
        activeTokens: 0,
        lastSuccessAt: null,
        lastFailureAt: null,
        unresolvedFailures: 0,
        createdByOrgMembershipId: null,
        createdAt: Db.at
      })
      yield* addUser(scope, "ada")
      const deleted = yield* addUser(scope, "bob")
      yield* (yield* UsersRepository).markDeleted(scope, deleted.membershipId, later(1))
      expect(Option.getOrThrow(yield* connections.find({ organizationId: scope.organizationId, id: scope.connectionId, at: Db.at })).users).toBe(1)
      // Another organization's id finds nothing, and its lock says so.
      const other = yield* Db.insertOrganization({ name: "Other" })
      expect(yield* connections.find({ organizationId: other, id: scope.connectionId, at: Db.at })).toEqual(Option.none())
      expect(yield* connections.lock({ organizationId: other, id: scope.connectionId })).toBe(false)
      expect(yield* connections.lock({ organizationId: scope.organizationId, id: scope.connectionId })).toBe(true)

      const second = connectionId()
      yield* connections.insert({ ...found, id: second, name: "Entra", createdByMembershipId: null, at: later(10) })
      const clash = yield* Effect.flip(connections.insert({ ...found, id: connectionId(), name: "ENTRA", createdByMembershipId: null, at: later(20) }))
      expect(clash).toEqual(new Conflict({ error: "scim_connection_exists", message: `The organization already has a SCIM connection named "ENTRA".` }))
      const first = yield* connections.list(scope.organizationId, Db.at, { limit: 1 })
      expect(first.items.map((row) => row.id)).toEqual([scope.connectionId])
      expect(first.nextCursor).not.toBeNull()
      const next = yield* connections.list(scope.organizationId, Db.at, { limit: 1, cursor: first.nextCursor ?? undefined })
      expect(next.items.map((row) => row.id)).toEqual([second])
      expect(next.nextCursor).toBeNull()

      yield* connections.update({ organizationId: scope.organizationId, id: second }, { defaultRole: "admin", roleRules: [] }, later(30))
      expect(Option.getOrThrow(yield* connections.find({ organizationId: scope.organizationId, id: second, at: Db.at })))
        .toMatchObject({ name: "Entra", defaultRole: "admin", roleRules: [], updatedAt: later(30) })
      const renamed = yield* Effect.flip(connections.update({ organizationId: scope.organizationId, id: second }, { name: found.name.toUpperCase() }, later(40)))
      expect(renamed).toEqual(new Conflict({ error: "scim_connection_exists", message: `The organization already has a SCIM connection named "${found.name.toUpperCase()}".` }))
      expect(yield* connections.remove({ organizationId: other, id: second })).toBe(false)
      expect(yield* connections.remove({ organizationId: scope.organizationId, id: second })).toBe(true)
      expect(yield* connections.find({ organizationId: scope.organizationId, id: second, at: Db.at })).toEqual(Option.none())
    }))

  it.effect("ConnectionsRepository: tokens (states, newest first, revoke once); the event log written by DirectoryEvents, with the health", () =>
    Effect.gen(function*() {
      const connections = yield* ConnectionsRepository
      const events = yield* DirectoryEvents
      const scope = yield* setUp()
      const scoped = { organizationId: scope.organizationId, id: scope.connectionId }
      const [a, b, c] = [tokenId(), tokenId(), tokenId()]
      const token = (id: ScimTokenId, createdAt: Date, expiresAt: Date | null) =>
        connections.insertToken({ id, organizationId: scope.organizationId, connectionId: scope.connectionId, name: id, tokenHash: `hash-${id}`, createdByMembershipId: null, createdAt, expiresAt })
      yield* token(a, Db.at, null)
      yield* token(b, later(1), later(100))
      yield* token(c, later(2), null)
      expect(yield* connections.revokeToken(scoped, c, later(50))).toBe(true)
      expect(yield* connections.revokeToken(scoped, c, later(60))).toBe(true)
      expect(yield* connections.revokeToken({ ...scoped, organizationId: yield* Db.insertOrganization() }, a, later(60))).toBe(false)
      expect(yield* connections.findToken({ ...scoped, tokenId: c, at: later(200) })).toMatchObject({ id: c, state: "revoked", revokedAt: later(50) })
      expect(yield* connections.findToken({ ...scoped, tokenId: b, at: later(200) })).toMatchObject({ id: b, state: "expired", expiresAt: later(100) })
      expect(yield* connections.findToken({ ...scoped, tokenId: a, at: later(200) })).toMatchObject({ id: a, state: "active", lastUsedAt: null })
      const page = yield* connections.listTokens(scoped, later(10), { limit: 2 })
      expect(page.items.map((item) => [item.id, item.state])).toEqual([[c, "revoked"], [b, "active"]])
      const older = yield* connections.listTokens(scoped, later(10), { limit: 2, cursor: page.nextCursor ?? undefined })
      expect(older.items.map((item) => item.id)).toEqual([a])
      expect(Option.getOrThrow(yield* connections.find({ ...scoped, at: later(10) })).activeTokens).toBe(2)

      const caller = { ...scope, tokenId: a }
      yield* events.record(caller, { method: "POST", path: "/scim/v2/x/Users", resourceType: "User" }, { status: 201, resourceId: "om_1" })
      yield* events.recordFailure(caller, { method: "PATCH", path: "/scim/v2/x/Groups/g", resourceType: "Group" }, { status: "409", scimType: "uniqueness", detail: "taken" })
      yield* events.recordFailure(caller, { method: "PUT", path: "/scim/v2/x/Users/u", resourceType: "User" }, new Error("boom"))
      yield* events.record({ ...scope, tokenId: null }, { method: "POST", path: "/v1/scim/connections/x/reconcile", resourceType: null }, { status: 200, resourceId: null })
      const health = Option.getOrThrow(yield* connections.find({ ...scoped, at: later(10) }))
      expect(health.unresolvedFailures).toBe(2)
      expect(health.lastSuccessAt).not.toBeNull()
      expect(health.lastFailureAt).not.toBeNull()
      const all = yield* connections.listEvents(scoped, {})
      // Event ids are time-ordered; these four may share a millisecond, so their order is not asserted.
      expect(all.items.map((event) => [event.method, event.status, event.outcome, event.scimType, event.detail, event.tokenId, event.resourceType])
        .sort((x, y) => Number(x[1]) - Number(y[1]))).toEqual([
        ["POST", 200, "succeeded", null, null, null, null],
        ["POST", 201, "succeeded", null, null, a, "User"],
        ["PATCH", 409, "refused", "uniqueness", "taken", a, "Group"],
        ["PUT", 500, "failed", null, null, a, "User"]
      ])
      expect(all.items.map((event) => event.id)).toEqual(all.items.map((event) => event.id).sort().reverse())
      expect((yield* connections.listEvents(scoped, { outcome: "refused" })).items.map((event) => event.method)).toEqual(["PATCH"])
      expect((yield* connections.listEvents(scoped, { outcome: "failed" })).items.map((event) => event.method)).toEqual(["PUT"])
      expect((yield* connections.listEvents(scoped, { outcome: "succeeded", resourceType: "User" })).items.map((event) => event.resourceId)).toEqual(["om_1"])
      const paged = yield* connections.listEvents(scoped, { limit: 3 })
      const rest = yield* connections.listEvents(scoped, { limit: 3, ...(paged.nextCursor === null ? {} : { cursor: paged.nextCursor }) })
      expect([...paged.items, ...rest.items]).toEqual(all.items)
      expect(rest.nextCursor).toBeNull()
      expect((yield* connections.listEvents({ ...scoped, organizationId: yield* Db.insertOrganization() }, {})).items).toEqual([])
    }))

  it.effect("UsersRepository: insert, find, clash, update, list with its total, delete and replace; scoped to the connection", () =>
    Effect.gen(function*() {
      const users = yield* UsersRepository
      const sql = yield* SqlClient.SqlClient
      const scope = yield* setUp()
      const ada = yield* addUser(scope, "Ada", { externalId: "ext-ada" })
      expect(ada).toMatchObject({
        organizationId: scope.organizationId,
        connectionId: scope.connectionId,
        userName: "Ada",
        externalId: "ext-ada",
        active: true,
        displayName: null,
        emails: [{ value: "Ada@example.com", primary: true }],
        resource: { userName: "Ada", name: { givenName: "Ada" }, "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": { employeeNumber: "7" } },
        version: 1,
        createdAt: Db.at,
        updatedAt: Db.at
      })
      expect(Option.getOrThrow(yield* users.find(scope, ada.membershipId))).toEqual(ada)
      expect(Option.getOrThrow(yield* sql.withTransaction(users.find(scope, ada.membershipId, { lock: true })))).toEqual(ada)
      const elsewhere = yield* setUp()
      expect(yield* users.find(elsewhere, ada.membershipId)).toEqual(Option.none())
      expect(yield* users.find({ ...scope, connectionId: elsewhere.connectionId }, ada.membershipId)).toEqual(Option.none())

      expect(Option.getOrThrow(yield* users.clash(scope, { userName: "ADA", externalId: null }))).toMatchObject({ membershipId: ada.membershipId, userName: "Ada" })
      expect(Option.getOrThrow(yield* users.clash(scope, { userName: "other", externalId: "ext-ada" }))).toMatchObject({ externalId: "ext-ada" })
      expect(yield* users.clash(scope, { userName: "ada", externalId: "ext-ada" }, ada.membershipId)).toEqual(Option.none())
      expect(yield* users.clash(elsewhere, { userName: "ada", externalId: "ext-ada" })).toEqual(Option.none())
      expect(yield* users.linkedConnection(scope.organizationId, ada.membershipId)).toEqual(Option.some(scope.connectionId))
      expect(yield* users.connection(scope)).toEqual(Option.some({ defaultRole: "member" }))
      expect(yield* users.connection({ ...elsewhere, connectionId: scope.connectionId })).toEqual(Option.none())

      const updated = yield* users.update(scope, ada.membershipId, {
        userName: "ada.l",
        externalId: null,
        active: false,
        displayName: "Ada Lovelace",
        emails: [],
        resource: { userName: "ada.l", displayName: "Ada Lovelace" },
        at: later(5)
      })
      expect(updated).toMatchObject({ userName: "ada.l", externalId: null, active: false, displayName: "Ada Lovelace", emails: [], version: 2, updatedAt: later(5), createdAt: Db.at })
      const bob = yield* addUser(scope, "bob", { at: later(1) })
      const cy = yield* addUser(scope, "cy", { at: later(2) })
      const all = yield* users.list(scope, sql`true`, 0, 10)
      expect(all.total).toBe(3)
      expect(all.rows.map((row) => row.userName)).toEqual(["ada.l", "bob", "cy"])
      expect(all.rows[0]).toEqual(updated)
      const second = yield* users.list(scope, sql`u.active`, 1, 1)
      expect(second).toEqual({ total: 2, rows: [cy] })
      expect(yield* users.list(scope, sql`true`, 0, 0)).toEqual({ total: 3, rows: [] })
      expect(yield* users.list(scope, sql`true`, 10, 5)).toEqual({ total: 3, rows: [] })
      expect(yield* users.list(scope, sql`false`, 0, 5)).toEqual({ total: 0, rows: [] })
      expect(yield* users.list(elsewhere, sql`true`, 0, 5)).toEqual({ total: 0, rows: [] })

      yield* users.markDeleted(scope, bob.membershipId, later(9))
      expect(yield* users.find(scope, bob.membershipId)).toEqual(Option.none())
      expect(yield* users.linkedConnection(scope.organizationId, bob.membershipId)).toEqual(Option.none())
      const [stored] = yield* sql<{ active: boolean; version: number }>`SELECT active, version FROM scim_users
        WHERE organization_id = ${scope.organizationId} AND membership_id = ${bob.membershipId}`
      expect(stored).toEqual({ active: false, version: 2 })
      // Its name is free again, and the deleted record gives way to a new one of the same membership.
      expect(yield* users.clash(scope, { userName: "bob", externalId: null })).toEqual(Option.none())
      yield* users.dropDeleted(scope.organizationId, bob.membershipId)
      const again = yield* users.insert(scope, { ...bob, userName: "bob", at: later(20) })
      expect(again).toMatchObject({ membershipId: bob.membershipId, version: 1, createdAt: later(20) })
    }))

  it.effect("UsersRepository: forgetPerson marks the person's Users deleted in every connection and forgets what the directory sent", () =>
    Effect.gen(function*() {
      const users = yield* UsersRepository
      const sql = yield* SqlClient.SqlClient
      const scope = yield* setUp()
      const ada = yield* addUser(scope, "ada")
      yield* users.markDeleted(scope, ada.membershipId, later(1))
      expect(yield* users.forgetPerson({ organizationId: scope.organizationId, userId: ada.userId, pseudonym: "deleted-1", at: later(5) })).toBe(0)
      const bob = yield* addUser(scope, "bob", { externalId: "ext-bob" })
      expect(yield* users.forgetPerson({ organizationId: yield* Db.insertOrganization(), userId: bob.userId, pseudonym: "x", at: later(5) })).toBe(0)
      expect(yield* users.forgetPerson({ organizationId: scope.organizationId, userId: bob.userId, pseudonym: "deleted-2", at: later(6) })).toBe(1)
      const [row] = yield* sql<{ userName: string; displayName: string | null; active: boolean; deletedAt: Date }>`
        SELECT user_name, display_name, active, deleted_at, emails::text AS emails, resource::text AS resource FROM scim_users
        WHERE organization_id = ${scope.organizationId} AND membership_id = ${bob.membershipId}`
      expect(row).toEqual({ userName: "deleted-2", displayName: null, active: false, deletedAt: later(6), emails: "[]", resource: `{"userName": "deleted-2"}` })
      const [first] = yield* sql<{ deletedAt: Date; userName: string }>`SELECT deleted_at, user_name FROM scim_users
        WHERE organization_id = ${scope.organizationId} AND membership_id = ${ada.membershipId}`
      expect(first).toEqual({ deletedAt: later(1), userName: "deleted-1" })
    }))

  it.effect("GroupsRepository: groups, members by set operations, the connection's users only, pages with their total", () =>
    Effect.gen(function*() {
      const groups = yield* GroupsRepository
      const users = yield* UsersRepository
      const sql = yield* SqlClient.SqlClient
      const scope = yield* setUp()
      const [ada, bob, cy] = [yield* addUser(scope, "ada"), yield* addUser(scope, "bob"), yield* addUser(scope, "cy")]
      yield* users.update(scope, bob.membershipId, { ...bob, displayName: "Bob B", at: later(1) })
      const elsewhere = yield* setUp()
      const stranger = yield* addUser(elsewhere, "dan")
      const eng = groupId()
      yield* groups.insert({ id: eng, ...scope, displayName: "Engineering", externalId: "ext-eng", teamId: null, version: 1, createdAt: Db.at, updatedAt: Db.at })
      const ops = groupId()
      yield* groups.insert({ id: ops, ...scope, displayName: "Admins", externalId: null, teamId: null, version: 1, createdAt: later(1), updatedAt: later(1) })
      const engScope = { ...scope, id: eng }
      expect(Option.getOrThrow(yield* groups.find(engScope))).toMatchObject({ id: eng, displayName: "Engineering", externalId: "ext-eng", teamId: null, version: 1 })
      expect(yield* groups.find({ ...elsewhere, id: eng })).toEqual(Option.none())
      expect(yield* groups.find({ ...scope, connectionId: elsewhere.connectionId, id: eng })).toEqual(Option.none())
      expect(Option.isSome(yield* sql.withTransaction(groups.lock(engScope)))).toBe(true)
      expect((yield* groups.all(scope)).map((row) => row.id)).toEqual([eng, ops])

      expect(yield* groups.notUsers(scope, [])).toEqual([])
      expect(yield* groups.notUsers(scope, [cy.membershipId, stranger.membershipId, "om_unknown", ada.membershipId]))
        .toEqual([stranger.membershipId, "om_unknown"].sort())
      yield* groups.addMembers({ ...engScope, memberIds: [ada.membershipId, bob.membershipId], at: Db.at })
      yield* groups.addMembers({ ...engScope, memberIds: [bob.membershipId], at: Db.at })
      yield* groups.addMembers({ ...engScope, memberIds: [], at: Db.at })
      const members = (yield* groups.members(engScope))
      expect([...members].sort((x, y) => x.value.localeCompare(y.value)))
        .toEqual([{ value: ada.membershipId, display: "ada" }, { value: bob.membershipId, display: "Bob B" }].sort((x, y) => x.value.localeCompare(y.value)))
      yield* groups.removeMembers({ ...engScope, memberIds: [ada.membershipId] })
      yield* groups.removeMembers({ ...engScope, memberIds: [] })
      expect((yield* groups.members(engScope)).map((member) => member.value)).toEqual([bob.membershipId])
      yield* groups.replaceMembers({ ...engScope, memberIds: [ada.membershipId, cy.membershipId], at: later(2) })
      expect((yield* groups.activeMemberIds(engScope))).toEqual([ada.membershipId, cy.membershipId].sort())
      // A suspended member, an inactive or deleted SCIM User, is not among the active members.
      yield* sql`UPDATE memberships SET suspended_at = ${later(3)} WHERE organization_id = ${scope.organizationId} AND id = ${cy.membershipId}`
      expect((yield* groups.activeMemberIds(engScope))).toEqual([ada.membershipId])
      yield* users.update(scope, ada.membershipId, { ...ada, active: false, at: later(3) })
      expect((yield* groups.activeMemberIds(engScope))).toEqual([])
      expect((yield* groups.ofMember({ ...scope, membershipId: ada.membershipId })).map((row) => row.id)).toEqual([eng])
      expect(yield* groups.ofMember({ ...elsewhere, membershipId: ada.membershipId })).toEqual([])

      yield* groups.addMembers({ ...scope, id: ops, memberIds: [ada.membershipId], at: later(4) })
      const roles = yield* groups.rolesAndGroups({ ...scope, memberIds: [ada.membershipId, bob.membershipId, stranger.membershipId] })
      expect(roles.map((row) => ({ ...row, groups: [...row.groups].sort((x, y) => x.displayName.localeCompare(y.displayName)) })))
        .toEqual([
          { id: ada.membershipId, role: "member", groups: [{ displayName: "Admins", externalId: null }, { displayName: "Engineering", externalId: "ext-eng" }] },
          { id: bob.membershipId, role: "member", groups: [] }
        ].sort((x, y) => x.id.localeCompare(y.id)))

      const pageOf = (where: Statement.Fragment, offset: number, limit: number, withMembers: boolean) =>
        groups.page({ ...scope, where, offset, limit, withMembers })
      const first = yield* pageOf(sql`true`, 0, 1, true)
      expect(first.map(({ row, ...rest }) => ({ id: row.id, ...rest }))).toEqual([
        { id: eng, total: 2, members: [{ value: ada.membershipId, display: "ada" }, { value: cy.membershipId, display: "cy" }].sort((x, y) => x.value.localeCompare(y.value)) }
      ])
      const second = yield* pageOf(sql`g.display_name = ${"Admins"}`, 0, 5, false)
      expect(second.map(({ row, ...rest }) => ({ id: row.id, ...rest }))).toEqual([{ id: ops, total: 1, members: null }])
      expect(yield* pageOf(sql`true`, 5, 5, true)).toEqual([])
      expect(yield* groups.count({ ...scope, where: sql`true` })).toEqual({ total: 2 })
      expect(yield* groups.count({ ...elsewhere, where: sql`true` })).toEqual({ total: 0 })

      const team = decode(TeamId)(Db.newId("tem"))
      yield* sql`INSERT INTO teams (id, organization_id, name, created_at, updated_at) VALUES (${team}, ${scope.organizationId}, 'Eng', ${Db.at}, ${Db.at})`
      yield* groups.update({ ...engScope, displayName: "Eng", externalId: null, teamId: team, at: later(6) })
      expect(Option.getOrThrow(yield* groups.find(engScope))).toMatchObject({ displayName: "Eng", externalId: null, teamId: team, version: 2, updatedAt: later(6) })
      yield* groups.setTeam({ ...engScope, teamId: null })
      expect(Option.getOrThrow(yield* groups.find(engScope))).toMatchObject({ teamId: null, version: 2 })
      yield* sql`INSERT INTO team_members (organization_id, team_id, membership_id, created_at) VALUES (${scope.organizationId}, ${team}, ${bob.membershipId}, ${Db.at})`
      expect(yield* groups.teamMemberIds(scope.organizationId, team)).toEqual([bob.membershipId])
      expect(yield* groups.teamMemberIds(elsewhere.organizationId, team)).toEqual([])

      expect(Option.getOrThrow(yield* groups.connection(scope))).toEqual({ groupMappingMode: "create_teams", defaultRole: "member", roleRules: [{ group: "Admins", role: "admin" }] })
      expect(yield* groups.connection({ ...elsewhere, connectionId: scope.connectionId })).toEqual(Option.none())
      yield* users.markDeleted(scope, cy.membershipId, later(7))
      const byId = (x: { readonly membershipId: string }, y: { readonly membershipId: string }) => x.membershipId.localeCompare(y.membershipId)
      expect([...(yield* groups.userStates(scope))].sort(byId)).toEqual([
        { membershipId: ada.membershipId, active: false, deleted: false, suspended: false, removed: false },
        { membershipId: bob.membershipId, active: true, deleted: false, suspended: false, removed: false },
        { membershipId: cy.membershipId, active: false, deleted: true, suspended: true, removed: false }
      ].sort(byId))

      yield* groups.remove({ ...elsewhere, id: eng })
      expect(Option.isSome(yield* groups.find(engScope))).toBe(true)
      yield* groups.remove(engScope)
      expect(yield* groups.find(engScope)).toEqual(Option.none())
      expect((yield* groups.all(scope)).map((row) => row.id)).toEqual([ops])
    }))
})

/**
 * SCIM Users and Groups on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL), through the
 * Users, Groups and Reconcile services as the protocol's handlers call them (the HTTP surface is http/ScimUsers.test.ts's,
 * ScimGroups.test.ts's and ScimIdentity.test.ts's).
 *
 * Groups: the three mapping modes, Okta's and Entra's sequences, the role rules, ETags, uniqueness, a connection's
 * confinement, and a 10,000-member PATCH as set-based statements.
 *
 * Users: the behaviours of http/ScimUsers.test.ts and ScimIdentity.test.ts that live in the service:
 * creating (an account found or made, a member linked by email), filtering and paging, patching (Entra's forms,
 * primary emails), replacing, deactivating (the membership suspended, its sessions and API keys ended), deleting
 * (removed, kept as deprovisioned), projection, If-Match, uniqueness, bad input as SCIM 400s, and tenancy.
 */
import { expect, layer } from "@effect/vitest"
import { type OrganizationId, type ScimConnectionId, UserId } from "@orgplane/schema"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { Memberships } from "../src/identity/Memberships.js"
import * as Config from "../src/platform/Config.js"
import { Crypto } from "../src/platform/Crypto.js"
import { AuditRecorder } from "../src/platform/AuditRecorder.js"
import { IdGenerator, makeId } from "../src/platform/Ids.js"
import { Groups } from "../src/scim/Groups.js"
import { Reconcile } from "../src/scim/Reconcile.js"
import { Users } from "../src/scim/Users.js"
import { DirectoryTeams } from "../src/teams/DirectoryTeams.js"
import * as Db from "./support/IdentityDatabase.js"
import * as TestDatabase from "./support/TestDatabase.js"

const settings = Config.layer({ dataDir: "memory", passwordCost: 10 }).pipe(
  Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} })))
)

const Services = Layer.mergeAll(Groups.layer, Reconcile.layer, Users.layer, Memberships.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(DirectoryTeams.layer, AuditRecorder.layer)),
  Layer.provideMerge(Layer.mergeAll(IdGenerator.layer, Crypto.layer.pipe(Layer.provideMerge(settings)))),
  Layer.provideMerge(Db.layer)
)

const at = new Date("2026-11-01T00:00:00Z")
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"
const USER = "urn:ietf:params:scim:schemas:core:2.0:User"
const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
type Mode = "metadata_only" | "create_teams" | "link_by_external_key"

let directories = 0

/** An organization with an owner, a SCIM connection in `mode`, and `users` SCIM Users of it (members). */
const directory = (mode: Mode, options: { readonly users?: number; readonly roleRules?: ReadonlyArray<{ group: string; role: string }> } = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const n = ++directories
    const organizationId: OrganizationId = yield* makeId("org")
    const connectionId: ScimConnectionId = yield* makeId("scc")
    yield* sql`INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES (${organizationId}, ${`Org ${n}`}, 'enterprise', ${at}, ${at})`
    const person = (email: string, role: string) =>
      Effect.gen(function*() {
        const userId = yield* makeId("usr")
        const membershipId = yield* makeId("om")
        yield* sql`INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES (${userId}, ${email}, ${email}, 'x', ${at}, ${at})`
        // A member who joined by the organization's invitation (or made it): their address is proven to it.
        yield* sql`INSERT INTO memberships (id, organization_id, user_id, role, created_at, updated_at, email_verified_at)
                   VALUES (${membershipId}, ${organizationId}, ${userId}, ${role}, ${at}, ${at}, ${at})`
        return { userId, membershipId }
      })
    const owner = yield* person(`owner${n}@corp.example`, "owner")
    yield* sql`INSERT INTO scim_connections (id, organization_id, name, group_mapping_mode, default_role, role_rules, created_at, updated_at)
               VALUES (${connectionId}, ${organizationId}, 'Okta', ${mode}, 'member', ${JSON.stringify(options.roleRules ?? [])}, ${at}, ${at})`
    const scimUser = (email: string, role = "member") =>
      Effect.gen(function*() {
        const { membershipId, userId } = yield* person(email, role)
        yield* sql`INSERT INTO scim_users (organization_id, membership_id, connection_id, user_id, user_name, active, display_name, resource, created_at, updated_at)
                   VALUES (${organizationId}, ${membershipId}, ${connectionId}, ${userId}, ${email}, true, ${`Person ${email}`}, '{}', ${at}, ${at})`
        return membershipId as string
      })
    const users: Array<string> = []
    for (let i = 0; i < (options.users ?? 3); i++) users.push(yield* scimUser(`u${i}.d${n}@corp.example`))
    const caller = { organizationId, connectionId, tokenId: null }
    const place = { baseUrl: `https://orgplane.example/scim/v2/${connectionId}` }
    const request = (method: string, path: string) => ({ method, path, resourceType: "Group" as const })
    const groups = yield* Groups
    const create = (body: Record<string, unknown>) => groups.create(caller, request("POST", "/Groups"), place, { schemas: [GROUP], ...body })
    const patch = (id: string, Operations: ReadonlyArray<unknown>, ifMatch?: string) =>
      groups.patch(caller, request("PATCH", `/Groups/${id}`), place, id, Operations, ifMatch)
    const teams = sql<{ id: string; name: string; scimConnectionId: string | null }>`
      SELECT t.id, t.name, t.scim_connection_id FROM teams t WHERE t.organization_id = ${organizationId} ORDER BY t.name`
    const teamMembers = (teamId: string) =>
      Effect.map(
        sql<{ membershipId: string }>`SELECT tm.membership_id FROM team_members tm
          WHERE tm.organization_id = ${organizationId} AND tm.team_id = ${teamId} ORDER BY tm.membership_id`,
        (rows) => rows.map((row) => row.membershipId)
      )
    const teamOf = (groupId: string) =>
      Effect.map(
        sql<{ teamId: string | null }>`SELECT g.team_id FROM scim_groups g WHERE g.organization_id = ${organizationId} AND g.id = ${groupId}`,
        (rows) => rows[0]?.teamId ?? null
      )
    const role = (membershipId: string) =>
      Effect.map(
        sql<{ role: string }>`SELECT m.role FROM memberships m WHERE m.organization_id = ${organizationId} AND m.id = ${membershipId}`,
        (rows) => rows[0]?.role
      )
    const events = Effect.map(
      sql<{ method: string; status: number; scimType: string | null }>`SELECT e.method, e.status, e.scim_type FROM scim_events e
        WHERE e.organization_id = ${organizationId} AND e.connection_id = ${connectionId} ORDER BY e.id`,
      (rows) => rows.map((row) => `${row.method} ${row.status}${row.scimType ? ` ${row.scimType}` : ""}`)
    )
    return { sql, organizationId, connectionId, owner, users, scimUser, person, caller, place, request, groups, create, patch, teams, teamMembers, teamOf, role, events }
  })

const sorted = (ids: ReadonlyArray<string | undefined>) => [...ids].sort()
const Members = Schema.Struct({ members: Schema.optional(Schema.Array(Schema.Struct({ value: Schema.String }))) })
/** The member ids of a group as answered (projected or not), sorted. */
const values = (group: unknown) => sorted((Schema.decodeUnknownSync(Members)(group).members ?? []).map((member) => member.value))
/** The failure an effect ends with (a success is a defect: the test expected a refusal). */
const failure = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<E, never, R> =>
  Effect.flip(effect).pipe(Effect.catch((value) => Effect.die(new Error(`expected a failure, got ${JSON.stringify(value)}`))))

let people = 0
const newUser = (overrides: Record<string, unknown> = {}) => {
  const email = `person${++people}.${Math.random().toString(36).slice(2, 8)}@corp.example`
  return {
    schemas: [USER],
    userName: email,
    name: { givenName: "Pat", familyName: `Person${people}` },
    emails: [{ value: email, type: "work", primary: true }],
    active: true,
    ...overrides
  }
}

/** The Users operations of a connection of `dir`, as the handlers call them. */
const usersOf = (dir: { readonly caller: { readonly organizationId: OrganizationId; readonly connectionId: ScimConnectionId; readonly tokenId: null }; readonly place: { readonly baseUrl: string } }) =>
  Effect.gen(function*() {
    const users = yield* Users
    const request = (method: string, path: string) => ({ method, path, resourceType: "User" as const })
    const base = dir.place.baseUrl
    return {
      create: (body: unknown) => users.create(dir.caller, request("POST", "/Users"), body, base),
      list: (parameters: Parameters<typeof users.list>[1] = {}) => users.list(dir.caller, parameters, base),
      get: (id: string, query: Parameters<typeof users.get>[2] = {}) => users.get(dir.caller, id, query, base),
      replace: (id: string, body: unknown, ifMatch?: string) => users.replace(dir.caller, request("PUT", `/Users/${id}`), id, body, ifMatch, base),
      patch: (id: string, operations: ReadonlyArray<unknown>, ifMatch?: string) =>
        users.patch(dir.caller, request("PATCH", `/Users/${id}`), id, operations, ifMatch, base),
      remove: (id: string, ifMatch?: string) => users.remove(dir.caller, request("DELETE", `/Users/${id}`), id, ifMatch)
    }
  })

/** A directory with no SCIM Users yet, its Users operations, and the membership rows they change. */
const userDirectory = Effect.fn("test.userDirectory")(function*(defaultRole: "admin" | "member" = "member") {
  const dir = yield* directory("create_teams", { users: 0 })
  yield* dir.sql`UPDATE scim_connections SET default_role = ${defaultRole} WHERE organization_id = ${dir.organizationId} AND id = ${dir.connectionId}`
  const scim = yield* usersOf(dir)
  const membership = (id: string) =>
    Effect.map(
      dir.sql<{ role: string; email: string; suspended: boolean; removed: boolean }>`
        SELECT m.role, u.email, m.suspended_at IS NOT NULL AS suspended, m.removed_at IS NOT NULL AS removed
        FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = ${dir.organizationId} AND m.id = ${id}`,
      (rows) => rows[0]
    )
  return { ...dir, scim, membership }
})

const primaries = (user: { readonly emails?: ReadonlyArray<{ readonly value?: string | undefined; readonly primary?: boolean | undefined }> | undefined }) =>
  (user.emails ?? []).filter((email) => email.primary === true).map((email) => email.value)

layer(Services, { timeout: 300_000, excludeTestServices: true })(`SCIM Groups and Users on ${TestDatabase.kind}`, (it) => {
  it.effect("create_teams: Okta's push (POST, PATCH add and remove, PUT rename) keeps one team in step; DELETE releases it", () =>
    Effect.gen(function*() {
      const dir = yield* directory("create_teams")
      const [a, b, c] = dir.users
      const group = yield* dir.create({ displayName: "Engineering", externalId: "okta-eng", members: [{ value: a }] })
      expect(group).toMatchObject({ schemas: [GROUP], displayName: "Engineering", externalId: "okta-eng", meta: { resourceType: "Group", version: 'W/"1"' } })
      expect(group.members).toEqual([{ value: a, display: expect.stringContaining("Person"), $ref: `${dir.place.baseUrl}/Users/${a}`, type: "User" }])
      const teamId = (yield* dir.teamOf(group.id))!
      expect(yield* dir.teams).toEqual([{ id: teamId, name: "Engineering", scimConnectionId: dir.connectionId }])
      expect(yield* dir.teamMembers(teamId)).toEqual([a])

      yield* dir.patch(group.id, [{ op: "add", path: "members", value: [{ value: b }, { value: c }] }])
      expect(yield* dir.teamMembers(teamId)).toEqual(sorted([a, b, c]))
      const removed = yield* dir.patch(group.id, [{ op: "remove", path: `members[value eq "${a}"]` }])
      expect(values(removed)).toEqual(sorted([b, c]))
      expect(yield* dir.teamMembers(teamId)).toEqual(sorted([b, c]))

      const renamed = yield* dir.groups.replace(dir.caller, dir.request("PUT", `/Groups/${group.id}`), dir.place, group.id, {
        schemas: [GROUP],
        id: group.id,
        displayName: "Platform Engineering",
        externalId: "okta-eng",
        members: [{ value: c }]
      }, undefined)
      expect(renamed.meta.version).toBe('W/"4"')
      expect((yield* dir.teams)[0]).toMatchObject({ id: teamId, name: "Platform Engineering" })
      expect(yield* dir.teamMembers(teamId)).toEqual([c])

      yield* dir.groups.remove(dir.caller, dir.request("DELETE", `/Groups/${group.id}`), group.id, undefined)
      expect((yield* failure(dir.groups.get(dir.caller, dir.place, group.id, {})))._tag).toBe("ScimNotFound")
      expect(yield* dir.teams).toEqual([{ id: teamId, name: "Platform Engineering", scimConnectionId: null }])
      expect(yield* dir.teamMembers(teamId)).toEqual([c])
      expect(yield* dir.events).toEqual(["POST 201", "PATCH 200", "PATCH 200", "PUT 200", "DELETE 204"])
    }))

  it.effect("create_teams: a name the organization has gets \" (SCIM)\"; a suspended member leaves the team and reconcile repairs drift", () =>
    Effect.gen(function*() {
      const dir = yield* directory("create_teams")
      const [a, b] = dir.users
      const teamId = yield* makeId("tem")
      yield* dir.sql`INSERT INTO teams (id, organization_id, name, created_at, updated_at) VALUES (${teamId}, ${dir.organizationId}, 'design', ${at}, ${at})`
      const group = yield* dir.create({ displayName: "Design", members: [{ value: a }, { value: b }] })
      const directoryTeam = (yield* dir.teamOf(group.id))!
      expect((yield* dir.teams).map((team) => team.name).sort()).toEqual(["Design (SCIM)", "design"])

      // The directory deactivated b (the membership suspended) and someone added the owner to the team by hand.
      yield* dir.sql`UPDATE scim_users SET active = false WHERE organization_id = ${dir.organizationId} AND membership_id = ${b}`
      yield* dir.sql`INSERT INTO team_members (organization_id, team_id, membership_id, created_at)
                     VALUES (${dir.organizationId}, ${directoryTeam}, ${dir.owner.membershipId}, ${at})`
      const reconcile = yield* Reconcile
      const result = Option.getOrThrow(yield* reconcile.reconcile(dir))
      expect(result.checked).toBe(3 + 1)
      expect(result.repaired).toEqual([
        { resourceType: "User", resourceId: b, change: "membership suspended: the User is inactive in the directory" },
        { resourceType: "Group", resourceId: group.id, change: "team members: 0 added, 2 removed" }
      ])
      expect(yield* dir.teamMembers(directoryTeam)).toEqual([a])
      // The group keeps the directory's view; nothing is left to repair.
      expect(values(yield* dir.groups.get(dir.caller, dir.place, group.id, {}))).toEqual(sorted([a, b]))
      expect(Option.getOrThrow(yield* reconcile.reconcile(dir)).repaired).toEqual([])
      // Reactivated in the directory: restored, and back in the team.
      yield* dir.sql`UPDATE scim_users SET active = true WHERE organization_id = ${dir.organizationId} AND membership_id = ${b}`
      expect(Option.getOrThrow(yield* reconcile.reconcile(dir)).repaired.map((repair) => repair.change)).toEqual([
        "membership restored: the User is active in the directory",
        "team members: 1 added, 0 removed"
      ])
      expect(yield* dir.teamMembers(directoryTeam)).toEqual(sorted([a, b]))
    }))

  it.effect("metadata_only makes no team; link_by_external_key maps onto the team with the externalId as key, or none", () =>
    Effect.gen(function*() {
      const meta = yield* directory("metadata_only")
      const plain = yield* meta.create({ displayName: "Everyone", members: meta.users.map((value) => ({ value })) })
      expect(values(plain)).toEqual(sorted(meta.users))
      expect(yield* meta.teams).toEqual([])

      const link = yield* directory("link_by_external_key")
      const teamId = yield* makeId("tem")
      yield* link.sql`INSERT INTO teams (id, organization_id, name, external_key, created_at, updated_at)
                      VALUES (${teamId}, ${link.organizationId}, 'Sales', 'sales-key', ${at}, ${at})`
      const linked = yield* link.create({ displayName: "Sales group", externalId: "sales-key", members: [{ value: link.users[0] }] })
      expect(yield* link.teamOf(linked.id)).toBe(teamId)
      expect(yield* link.teams).toEqual([{ id: teamId, name: "Sales", scimConnectionId: link.connectionId }])
      expect(yield* link.teamMembers(teamId)).toEqual([link.users[0]])
      const unlinked = yield* link.create({ displayName: "Nobody's", externalId: "no-such-key" })
      expect(yield* link.teamOf(unlinked.id)).toBeNull()
      // A renamed group leaves the linked team's name alone; deleting it releases the team.
      yield* link.patch(linked.id, [{ op: "Replace", path: "displayName", value: "Sales EMEA" }])
      expect((yield* link.teams)[0]!.name).toBe("Sales")
      yield* link.groups.remove(link.caller, link.request("DELETE", `/Groups/${linked.id}`), linked.id, undefined)
      expect(yield* link.teams).toEqual([{ id: teamId, name: "Sales", scimConnectionId: null }])
    }))

  it.effect("gives a role only through an explicit rule, follows membership, never demotes an owner", () =>
    Effect.gen(function*() {
      const dir = yield* directory("metadata_only", { roleRules: [{ group: "Platform Admins", role: "admin" }] })
      const [a, b] = dir.users
      const ownerUser = yield* dir.scimUser(`owner-scim.${dir.organizationId}@corp.example`, "owner")
      yield* dir.create({ displayName: "Admins", members: [{ value: b }] })
      expect(yield* dir.role(b!)).toBe("member")
      const admins = yield* dir.create({ displayName: "platform admins", members: [{ value: a }, { value: ownerUser }] })
      expect(yield* dir.role(a!)).toBe("admin")
      expect(yield* dir.role(ownerUser)).toBe("owner")
      yield* dir.patch(admins.id, [{ op: "Remove", path: "members" }])
      expect(yield* dir.role(a!)).toBe("member")
      expect(yield* dir.role(ownerUser)).toBe("owner")
    }))

  it.effect("Entra: filter by displayName, excludedAttributes=members, members.value, paging, capitalised ops, no-path replace", () =>
    Effect.gen(function*() {
      const dir = yield* directory("create_teams")
      const [a, b] = dir.users
      const absent = yield* dir.groups.list(dir.caller, dir.place, { filter: 'displayName eq "Finance"' })
      expect(absent).toMatchObject({ schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"], totalResults: 0, Resources: [] })
      const group = yield* dir.create({ displayName: "Finance", externalId: "entra-fin" })
      const found = yield* dir.groups.list(dir.caller, dir.place, { filter: 'displayName eq "finance"', excludedAttributes: "members" })
      expect(found.totalResults).toBe(1)
      expect(found.Resources[0]).toMatchObject({ id: group.id })
      expect("members" in found.Resources[0]!).toBe(false)

      const patched = yield* dir.patch(group.id, [
        { op: "Replace", path: "displayName", value: "Finance & Ops" },
        { op: "Add", path: "members", value: [{ value: a }, { value: b }] },
        { op: "Remove", path: `members[value eq "${a}"]` }
      ])
      expect(patched.displayName).toBe("Finance & Ops")
      expect(values(patched)).toEqual([b])
      const byMember = yield* dir.groups.list(dir.caller, dir.place, { filter: `members[value eq "${b}"]`, attributes: "displayName" })
      expect(byMember.Resources).toEqual([{ schemas: [GROUP], id: group.id, displayName: "Finance & Ops", meta: expect.anything() }])
      const renamed = yield* dir.patch(group.id, [{ op: "replace", value: { id: group.id, displayName: "Finance" } }])
      expect(renamed.displayName).toBe("Finance")
      expect((yield* dir.teams).map((team) => team.name)).toEqual(["Finance"])

      for (const name of ["G2", "G3"]) yield* dir.create({ displayName: name })
      const page = yield* dir.groups.list(dir.caller, dir.place, { startIndex: "2", count: "1" })
      expect(page).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 })
      expect(page.Resources.map((resource) => resource.displayName)).toEqual(["G2"])
      const counted = yield* dir.groups.list(dir.caller, dir.place, { count: "0", filter: 'meta.lastModified lt "2100-01-01T00:00:00Z"' })
      expect(counted).toMatchObject({ totalResults: 3, itemsPerPage: 0, Resources: [] })
      expect((yield* failure(dir.groups.list(dir.caller, dir.place, { filter: "displayName eq" }))).scimType).toBe("invalidFilter")
      expect((yield* failure(dir.groups.list(dir.caller, dir.place, { filter: 'nickName eq "x"' }))).scimType).toBe("invalidFilter")
    }))

  it.effect("refuses clashes (409 uniqueness), stale versions (412) and unknown members (400 invalidValue, nothing written)", () =>
    Effect.gen(function*() {
      const dir = yield* directory("create_teams")
      const other = yield* directory("create_teams")
      const group = yield* dir.create({ displayName: "Ops", externalId: "x-1", members: [{ value: dir.users[0] }] })
      for (const body of [{ displayName: "OPS" }, { displayName: "Other", externalId: "x-1" }]) {
        expect(yield* failure(dir.create(body))).toMatchObject({ _tag: "ScimConflict", status: "409", scimType: "uniqueness" })
      }
      expect((yield* failure(dir.patch(group.id, [{ op: "replace", path: "displayName", value: "V2" }], 'W/"7"')))._tag).toBe("ScimPreconditionFailed")
      expect((yield* dir.patch(group.id, [{ op: "replace", path: "displayName", value: "V2" }], 'W/"1"')).meta.version).toBe('W/"2"')

      for (const value of [other.users[0], "om_00000000000000000000000000", "not an id"]) {
        const refused = yield* failure(dir.patch(group.id, [
          { op: "replace", path: "displayName", value: "Changed" },
          { op: "add", path: "members", value: [{ value }] }
        ]))
        expect(refused).toMatchObject({ _tag: "ScimBadRequest", scimType: "invalidValue" })
      }
      const after = yield* dir.groups.get(dir.caller, dir.place, group.id, {})
      expect(after).toMatchObject({ displayName: "V2", meta: { version: 'W/"2"' } })
      expect(values(after)).toEqual([dir.users[0]])
      expect((yield* dir.teams).map((team) => team.name)).toEqual(["V2"])
      for (const [operations, scimType] of [
        [[{ op: "explode", path: "members" }], "invalidSyntax"],
        [[{ op: "replace", path: "owner", value: 1 }], "invalidPath"],
        [[{ op: "add", path: "members", value: [{ value: 5 }] }], "invalidValue"],
        [[], "invalidValue"]
      ] as const) {
        expect((yield* failure(dir.patch(group.id, operations))).scimType).toBe(scimType)
      }
      expect((yield* failure(dir.create({ displayName: 42 }))).scimType).toBe("invalidValue")
      expect((yield* dir.events).filter((event) => event.startsWith("PATCH 400"))).toHaveLength(7)
    }))

  it.effect("a connection sees only its own groups: another connection's or organization's id is 404", () =>
    Effect.gen(function*() {
      const a = yield* directory("create_teams")
      const b = yield* directory("create_teams")
      const group = yield* a.create({ displayName: "Secret", members: [{ value: a.users[0] }] })
      expect((yield* failure(b.groups.get(b.caller, b.place, group.id, {})))._tag).toBe("ScimNotFound")
      expect((yield* failure(b.patch(group.id, [{ op: "remove", path: "members" }])))._tag).toBe("ScimNotFound")
      expect((yield* failure(b.groups.remove(b.caller, b.request("DELETE", "/Groups/x"), group.id, undefined)))._tag).toBe("ScimNotFound")
      // A's connection id with B's organization (a token can only carry its own pair): no connection, 404.
      const crossed = { ...b.caller, connectionId: a.connectionId }
      expect((yield* failure(b.groups.get(crossed, b.place, group.id, {})))._tag).toBe("ScimNotFound")
      expect((yield* b.groups.list(b.caller, b.place, {})).totalResults).toBe(0)
      expect(values(yield* a.groups.get(a.caller, a.place, group.id, {}))).toEqual([a.users[0]])
    }))

  it.effect("a 10,000-member PATCH is one transaction of set-based statements: refused whole, or applied", () =>
    Effect.gen(function*() {
      const dir = yield* directory("create_teams", { users: 0 })
      const sql = dir.sql
      // 10,000 SCIM Users, written set-based for the test's own speed.
      const users = yield* Effect.forEach(Array.from({ length: 10_000 }), () => Effect.zip(makeId("usr"), makeId("om")))
      yield* sql`INSERT INTO users (id, email, name, password_hash, created_at, updated_at)
                 SELECT u, u || '@bulk.example', u, 'x', ${at}, ${at} FROM unnest(${users.map(([u]) => u)}::text[]) AS u`
      yield* sql`INSERT INTO memberships (id, organization_id, user_id, role, created_at, updated_at)
                 SELECT m, ${dir.organizationId}, u, 'member', ${at}, ${at}
                 FROM unnest(${users.map(([, m]) => m)}::text[], ${users.map(([u]) => u)}::text[]) AS x (m, u)`
      yield* sql`INSERT INTO scim_users (organization_id, membership_id, connection_id, user_id, user_name, active, resource, created_at, updated_at)
                 SELECT ${dir.organizationId}, m, ${dir.connectionId}, u, u || '@bulk.example', true, '{}', ${at}, ${at}
                 FROM unnest(${users.map(([, m]) => m)}::text[], ${users.map(([u]) => u)}::text[]) AS x (m, u)`
      // What autovacuum does after such a bulk: the planner's statistics see the new rows.
      yield* sql`ANALYZE users, memberships, scim_users`
      const ids = users.map(([, m]) => m as string)
      const group = yield* dir.create({ displayName: "Everyone" })
      const teamId = (yield* dir.teamOf(group.id))!

      const refused = yield* failure(dir.patch(group.id, [{ op: "Add", path: "members", value: [...ids.slice(1), "om_unknown"].map((value) => ({ value })) }]))
      expect(refused).toMatchObject({ scimType: "invalidValue", detail: expect.stringContaining("om_unknown") })
      expect(yield* dir.teamMembers(teamId)).toEqual([])

      const added = yield* dir.patch(group.id, [{ op: "Add", path: "members", value: ids.map((value) => ({ value })) }])
      expect(added.members).toHaveLength(10_000)
      expect((yield* dir.teamMembers(teamId)).length).toBe(10_000)
      const halved = yield* dir.patch(group.id, [{ op: "Remove", path: "members", value: ids.slice(0, 5_000).map((value) => ({ value })) }])
      expect(halved.members).toHaveLength(5_000)
      expect((yield* dir.teamMembers(teamId)).length).toBe(5_000)
      yield* dir.patch(group.id, [{ op: "remove", path: "members" }])
      expect(yield* dir.teamMembers(teamId)).toEqual([])
    }))
  it.effect("filters by userName (any case) with startIndex/count, creates, deactivates with PATCH and replaces with PUT", () =>
    Effect.gen(function*() {
      const dir = yield* userDirectory()
      const body = newUser({ externalId: "00u1okta" })
      const filter = `userName eq "${body.userName.toUpperCase()}"`
      expect(yield* dir.scim.list({ filter, startIndex: "1", count: "100" })).toEqual({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
        totalResults: 0,
        startIndex: 1,
        itemsPerPage: 0,
        Resources: []
      })

      const user = yield* dir.scim.create({ ...body, password: "Secret-Passw0rd" })
      expect(user.id).toMatch(/^om_/)
      expect(user).toMatchObject({ userName: body.userName, externalId: "00u1okta", active: true, name: body.name, emails: body.emails })
      expect(user).not.toHaveProperty("password")
      expect(user.meta).toMatchObject({ resourceType: "User", version: "W/\"1\"", location: `${dir.place.baseUrl}/Users/${user.id}` })
      expect(yield* dir.membership(user.id)).toEqual({ role: "member", email: body.userName, suspended: false, removed: false })

      const found = yield* dir.scim.list({ filter, startIndex: "1", count: "100" })
      expect(found.totalResults).toBe(1)
      expect(found.Resources[0]!.id).toBe(user.id)

      const deactivated = yield* dir.scim.patch(user.id, [{ op: "replace", value: { active: false } }])
      expect(deactivated.active).toBe(false)
      expect(deactivated.meta.version).toBe("W/\"2\"")
      expect((yield* dir.membership(user.id))?.suspended).toBe(true)

      const replaced = yield* dir.scim.replace(user.id, {
        schemas: [USER],
        id: user.id,
        userName: body.userName,
        externalId: "00u1okta",
        name: { givenName: "Patricia", familyName: "Person" },
        emails: [{ value: body.userName, type: "work", primary: true }],
        active: true,
        password: "An0ther-Secret"
      })
      expect(replaced).toMatchObject({ active: true, name: { givenName: "Patricia", familyName: "Person" } })
      expect(replaced).not.toHaveProperty("password")
      expect(replaced).not.toHaveProperty("title")
      expect((yield* dir.membership(user.id))?.suspended).toBe(false)
      expect(yield* dir.scim.get(user.id)).toEqual(replaced)
      expect(yield* dir.events).toEqual(["POST 201", "PATCH 200", "PUT 200"])
    }))

  it.effect("pages with 1-based startIndex and count, totalResults counting every match", () =>
    Effect.gen(function*() {
      const dir = yield* userDirectory()
      const ids: Array<string> = []
      for (let index = 0; index < 3; index++) ids.push((yield* dir.scim.create(newUser())).id)
      const page = yield* dir.scim.list({ startIndex: "2", count: "1" })
      expect(page).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 })
      expect(page.Resources.map((user) => user.id)).toEqual([ids[1]])
      expect(yield* dir.scim.list({ count: "0" })).toMatchObject({ totalResults: 3, itemsPerPage: 0, Resources: [] })
      expect(yield* dir.scim.list({ startIndex: "10" })).toMatchObject({ totalResults: 3, itemsPerPage: 0, startIndex: 10 })
      expect(yield* dir.scim.list({ startIndex: "0", count: "5000" })).toMatchObject({ totalResults: 3, startIndex: 1, itemsPerPage: 3 })
      expect(yield* failure(dir.scim.list({ count: "many" }))).toMatchObject({ _tag: "ScimBadRequest", scimType: "invalidValue" })
      // What `/.search` sends: numbers, and the attributes.
      const searched = yield* dir.scim.list({ filter: "active eq true", startIndex: 3, count: 10, attributes: "userName" })
      expect(searched.Resources.map((user) => Object.keys(user).sort())).toEqual([["id", "meta", "schemas", "userName"]])
    }))

  it.effect("Entra: capitalised ops, \"False\" strings, dotted keys and the enterprise manager path; filters on emails, active and extensions", () =>
    Effect.gen(function*() {
      const dir = yield* userDirectory()
      const manager = yield* dir.scim.create(newUser())
      const body = newUser({ externalId: "7f3c-entra" })
      expect((yield* dir.scim.list({ filter: `userName eq "${body.userName}"` })).totalResults).toBe(0)
      const user = yield* dir.scim.create(body)

      const patched = yield* dir.scim.patch(user.id, [
        { op: "Replace", path: "displayName", value: "Pat P." },
        { op: "Replace", value: { "name.givenName": "Patty", "emails[type eq \"work\"].value": body.userName.toUpperCase() } },
        { op: "Add", path: `${ENTERPRISE}:manager`, value: manager.id },
        { op: "Add", path: `${ENTERPRISE}:department`, value: "Research" },
        { op: "Replace", path: "active", value: "False" }
      ])
      expect(patched).toMatchObject({
        displayName: "Pat P.",
        name: { givenName: "Patty", familyName: body.name.familyName },
        emails: [{ value: body.userName.toUpperCase(), type: "work", primary: true }],
        active: false,
        [ENTERPRISE]: { manager: { value: manager.id }, department: "Research" }
      })
      expect(patched.schemas).toEqual([USER, ENTERPRISE])
      expect((yield* dir.membership(user.id))?.suspended).toBe(true)

      const byEmail = yield* dir.scim.list({ filter: `emails[type eq "work" and value co "${body.userName.slice(0, 9)}"]` })
      expect(byEmail.Resources.map((found) => found.id)).toEqual([user.id])
      const inactive = yield* dir.scim.list({ filter: "active eq false and displayName sw \"pat\"" })
      expect(inactive.Resources.map((found) => found.id)).toEqual([user.id])
      expect((yield* dir.scim.list({ filter: `${ENTERPRISE}:department eq "research"` })).totalResults).toBe(1)

      expect((yield* dir.scim.patch(user.id, [{ op: "Replace", path: "active", value: "True" }])).active).toBe(true)
      expect((yield* dir.membership(user.id))?.suspended).toBe(false)
    }))

  it.effect("projects by attributes and excludedAttributes; id, schemas and meta always", () =>
    Effect.gen(function*() {
      const dir = yield* userDirectory()
      const user = yield* dir.scim.create(newUser({ externalId: "proj-1" }))
      expect(yield* dir.scim.get(user.id, { attributes: "userName,name.givenName" }))
        .toEqual({ schemas: user.schemas, id: user.id, userName: user.userName, name: { givenName: "Pat" }, meta: user.meta })
      const without = yield* dir.scim.get(user.id, { excludedAttributes: "emails,name,meta" })
      expect(without).not.toHaveProperty("emails")
      expect(without).not.toHaveProperty("name")
      expect(without.meta).toEqual(user.meta)
      expect((yield* dir.scim.list({ attributes: "externalId" })).Resources).toEqual([{ schemas: user.schemas, id: user.id, externalId: "proj-1", meta: user.meta }])
    }))

  it.effect("If-Match with another version is 412; the current one or * passes", () =>
    Effect.gen(function*() {
      const dir = yield* userDirectory()
      const user = yield* dir.scim.create(newUser())
      const first = yield* dir.scim.patch(user.id, [{ op: "replace", path: "title", value: "Engineer" }], "W/\"1\"")
      expect(first.meta.version).toBe("W/\"2\"")
      expect((yield* failure(dir.scim.patch(user.id, [{ op: "replace", path: "title", value: "Boss" }], "W/\"1\"")))._tag).toBe("ScimPreconditionFailed")
      expect((yield* failure(dir.scim.replace(user.id, newUser(), "\"7\"")))._tag).toBe("ScimPreconditionFailed")
      expect((yield* failure(dir.scim.remove(user.id, "W/\"1\"")))._tag).toBe("ScimPreconditionFailed")
      const star = yield* dir.scim.patch(user.id, [{ op: "remove", path: "title" }], "*")
      expect(star).not.toHaveProperty("title")
      expect(star.meta.version).toBe("W/\"3\"")
    }))

  it.effect("a duplicate userName (any case) or externalId is 409 uniqueness", () =>
    Effect.gen(function*() {
      const dir = yield* userDirectory()
      const user = yield* dir.scim.create(newUser({ externalId: "dup-1" }))
      const conflict = { _tag: "ScimConflict", status: "409", scimType: "uniqueness" }
      expect(yield* failure(dir.scim.create(newUser({ userName: user.userName!.toUpperCase() })))).toMatchObject(conflict)
      expect(yield* failure(dir.scim.create(newUser({ externalId: "dup-1" })))).toMatchObject(conflict)
      const other = yield* dir.scim.create(newUser())
      expect(yield* failure(dir.scim.patch(other.id, [{ op: "replace", path: "userName", value: user.userName }]))).toMatchObject(conflict)
      expect((yield* dir.events).filter((event) => event.startsWith("POST 409") || event.startsWith("PATCH 409"))).toEqual([
        "POST 409 uniqueness",
        "POST 409 uniqueness",
        "PATCH 409 uniqueness"
      ])
    }))

  it.effect("DELETE removes the membership (kept as deprovisioned), keeps the account, and the User is gone", () =>
    Effect.gen(function*() {
      const dir = yield* userDirectory()
      const memberships = yield* Memberships
      const user = yield* dir.scim.create(newUser())
      const person = (yield* dir.membership(user.id))!
      yield* dir.scim.remove(user.id)
      expect(yield* dir.membership(user.id)).toEqual({ ...person, suspended: true, removed: true })
      expect((yield* failure(dir.scim.get(user.id)))._tag).toBe("ScimNotFound")
      expect((yield* failure(dir.scim.remove(user.id)))._tag).toBe("ScimNotFound")
      expect((yield* dir.scim.list()).totalResults).toBe(0)
      const account = yield* dir.sql<{ id: string }>`SELECT id FROM users WHERE lower(email) = lower(${person.email})`
      expect(account).toHaveLength(1)
      expect(yield* memberships.isDeprovisioned(dir.organizationId, Schema.decodeUnknownSync(UserId)(account[0]!.id))).toBe(true)
      // The directory provisions the person again: a new membership, the same account.
      const again = yield* dir.scim.create(newUser({ userName: user.userName, emails: user.emails }))
      expect(again.id).not.toBe(user.id)
      expect(yield* dir.sql`SELECT id FROM users WHERE lower(email) = lower(${person.email})`).toEqual(account)
    }))

  it.effect("links an existing member by email instead of adding a second membership", () =>
    Effect.gen(function*() {
      const dir = yield* userDirectory()
      const existing = yield* dir.person(`existing.${dir.organizationId}@corp.example`, "member")
      const email = `existing.${dir.organizationId}@corp.example`
      const linked = yield* dir.scim.create(newUser({ userName: email, emails: [{ value: email, primary: true }] }))
      expect(linked.id).toBe(existing.membershipId)
      // The same member in a second connection of the organization is refused.
      const secondId: ScimConnectionId = yield* makeId("scc")
      yield* dir.sql`INSERT INTO scim_connections (id, organization_id, name, group_mapping_mode, default_role, created_at, updated_at)
                     VALUES (${secondId}, ${dir.organizationId}, 'Entra', 'metadata_only', 'member', ${at}, ${at})`
      const second = yield* usersOf({ caller: { ...dir.caller, connectionId: secondId }, place: dir.place })
      expect(yield* failure(second.create(newUser({ userName: email, emails: [{ value: email, primary: true }] }))))
        .toMatchObject({ _tag: "ScimConflict", scimType: "uniqueness", detail: `${email} is already a User of a SCIM connection of this organization.` })
    }))

  it.effect("a User of a connection with defaultRole admin joins as admin; deactivation suspends the membership and ends its sessions and API keys", () =>
    Effect.gen(function*() {
      const dir = yield* userDirectory("admin")
      const user = yield* dir.scim.create(newUser())
      const { email } = (yield* dir.membership(user.id))!
      expect((yield* dir.membership(user.id))?.role).toBe("admin")
      const [{ userId }] = yield* dir.sql<{ userId: string }>`SELECT user_id FROM memberships WHERE organization_id = ${dir.organizationId} AND id = ${user.id}`
      const sessionId = Db.newId("ses")
      const keyId = Db.newId("apk")
      const far = new Date(Date.now() + 86_400_000)
      yield* dir.sql`INSERT INTO sessions (id, user_id, token_hash, active_organization_id, created_at, expires_at)
                     VALUES (${sessionId}, ${userId}, ${sessionId}, ${dir.organizationId}, ${at}, ${far})`
      yield* dir.sql`INSERT INTO api_keys (id, organization_id, membership_id, name, prefix, key_hash, created_at)
                     VALUES (${keyId}, ${dir.organizationId}, ${user.id}, 'key', 'opk_x', ${keyId}, ${at})`
      yield* dir.scim.patch(user.id, [{ op: "replace", path: "active", value: false }])
      expect(yield* dir.membership(user.id)).toEqual({ role: "admin", email, suspended: true, removed: false })
      expect(yield* dir.sql`SELECT id FROM sessions WHERE id = ${sessionId} AND revoked_at IS NULL`).toEqual([])
      expect(yield* dir.sql`SELECT id FROM api_keys WHERE organization_id = ${dir.organizationId} AND id = ${keyId}`).toEqual([])
      // Removing `active` unassigns it: the membership stays as it was, and the User reads without it.
      const unassigned = yield* dir.scim.patch(user.id, [{ op: "remove", path: "active" }])
      expect(unassigned).not.toHaveProperty("active")
      expect((yield* dir.membership(user.id))?.suspended).toBe(true)
      // A PUT without `active` keeps the membership as it is.
      const { id: _id, meta: _meta, ...resource } = unassigned
      yield* dir.scim.replace(user.id, { ...resource, displayName: "Kept" })
      expect((yield* dir.membership(user.id))?.suspended).toBe(true)
    }))

  it.effect("primary emails: two sent is 400 invalidValue creating nothing; a PATCH that makes one primary makes the other not; one stored with two reads with the first", () =>
    Effect.gen(function*() {
      const dir = yield* userDirectory()
      const body = newUser()
      const twice = { ...body, emails: [...body.emails, { value: `other.${body.userName}`, type: "home", primary: true }] }
      expect(yield* failure(dir.scim.create(twice))).toMatchObject({ _tag: "ScimBadRequest", scimType: "invalidValue" })
      expect((yield* dir.scim.list()).totalResults).toBe(0)
      const home = `home.${body.userName}`
      const user = yield* dir.scim.create({ ...body, emails: [...body.emails, { value: home, type: "home" }] })
      expect(yield* failure(dir.scim.replace(user.id, { ...twice, userName: user.userName }))).toMatchObject({ _tag: "ScimBadRequest", scimType: "invalidValue" })
      const patched = yield* dir.scim.patch(user.id, [{ op: "replace", path: "emails[type eq \"home\"].primary", value: true }])
      expect(primaries(patched)).toEqual([home])
      expect(primaries(yield* dir.scim.get(user.id))).toEqual([home])
      const added = yield* dir.scim.patch(user.id, [{ op: "add", path: "emails", value: [{ value: `third.${body.userName}`, primary: true }] }])
      expect(primaries(added)).toEqual([`third.${body.userName}`])
      expect((yield* dir.scim.list()).Resources.map(primaries)).toEqual([[`third.${body.userName}`]])

      const stored = yield* dir.scim.create(newUser())
      const second = { value: `second.${stored.userName}`, type: "home", primary: true }
      const emails = JSON.stringify([...(stored.emails ?? []), second])
      yield* dir.sql`UPDATE scim_users SET resource = jsonb_set(resource, '{emails}', ${emails}::jsonb)
                     WHERE organization_id = ${dir.organizationId} AND membership_id = ${stored.id}`
      const read = yield* dir.scim.get(stored.id)
      expect(read.emails).toEqual([stored.emails![0], { ...second, primary: false }])
      expect((yield* dir.scim.list({ filter: `userName eq "${stored.userName}"` })).Resources[0]!.emails).toEqual(read.emails)
      // A PATCH of something else stores it so.
      expect((yield* dir.scim.patch(stored.id, [{ op: "replace", path: "title", value: "Engineer" }])).emails).toEqual(read.emails)
    }))

  it.effect("bad input is a SCIM 400: filters, wrong types, unknown paths, read-only targets, removes that match nothing, NUL characters", () =>
    Effect.gen(function*() {
      const dir = yield* userDirectory()
      for (const filter of ["userName eq", "userName eq \"a\" and", "((userName eq \"a\")", "nickName eq \"x\"", "active eq \"yes\"", "meta.lastModified gt \"soon\"", "emails[type eq \"work\"", "userName zz \"a\""]) {
        expect(yield* failure(dir.scim.list({ filter })), filter).toMatchObject({ _tag: "ScimBadRequest", scimType: "invalidFilter" })
      }
      expect((yield* dir.scim.list({ filter: "userName co \"%\"" })).totalResults).toBe(0)
      const invalid = { _tag: "ScimBadRequest", status: "400", scimType: "invalidValue" }
      expect(yield* failure(dir.scim.create(newUser({ active: "maybe" })))).toMatchObject(invalid)
      expect(yield* failure(dir.scim.create(newUser({ userName: 42 })))).toMatchObject(invalid)
      expect(yield* failure(dir.scim.create({ ...newUser(), userName: undefined }))).toMatchObject(invalid)
      expect(yield* failure(dir.scim.create(newUser({ userName: "no-email", emails: [] })))).toMatchObject(invalid)
      expect(yield* failure(dir.scim.create(newUser({ displayName: "a\u0000b" })))).toMatchObject({ _tag: "ScimBadRequest" })
      const user = yield* dir.scim.create(newUser())
      for (const [operation, scimType] of [
        [{ op: "add", path: "nickName", value: "x" }, "invalidPath"],
        [{ op: "replace", path: "id", value: "om_x" }, "mutability"],
        [{ op: "remove", path: "emails[type eq \"home\"]" }, "noTarget"],
        // A replace too (RFC 7644 §3.5.2.3): it adds no value.
        [{ op: "replace", path: "emails[type eq \"home\"].value", value: "home@corp.example" }, "noTarget"],
        [{ op: "replace", path: "active", value: 3 }, "invalidValue"],
        [{ op: "jump", path: "title", value: "x" }, "invalidSyntax"]
      ] as const) {
        expect(yield* failure(dir.scim.patch(user.id, [operation])), JSON.stringify(operation)).toMatchObject({ _tag: "ScimBadRequest", scimType })
      }
      // A refused PATCH changed nothing; nothing else was created.
      expect((yield* dir.scim.get(user.id)).meta.version).toBe("W/\"1\"")
      expect((yield* dir.scim.list()).totalResults).toBe(1)
      // A malformed or unknown User id is 404.
      for (const id of ["not-an-id", "om_01jxxxxxxxxxxxxxxxxxxxxxxx"]) expect((yield* failure(dir.scim.get(id)))._tag).toBe("ScimNotFound")
      expect((yield* failure(dir.scim.patch("nope", [{ op: "replace", path: "title", value: "x" }])))._tag).toBe("ScimNotFound")
    }))

  it.effect("another organization's or connection's Users are never reached", () =>
    Effect.gen(function*() {
      const a = yield* userDirectory()
      const b = yield* userDirectory()
      const user = yield* a.scim.create(newUser())
      expect((yield* failure(b.scim.get(user.id)))._tag).toBe("ScimNotFound")
      expect((yield* failure(b.scim.patch(user.id, [{ op: "replace", path: "active", value: false }])))._tag).toBe("ScimNotFound")
      expect((yield* failure(b.scim.replace(user.id, newUser())))._tag).toBe("ScimNotFound")
      expect((yield* failure(b.scim.remove(user.id)))._tag).toBe("ScimNotFound")
      expect((yield* b.scim.list()).totalResults).toBe(0)
      expect((yield* a.scim.get(user.id)).active).toBe(true)
      expect((yield* a.membership(user.id))?.suspended).toBe(false)
      // A's connection id with B's organization: no such connection, nothing created.
      const crossed = yield* usersOf({ caller: { ...b.caller, connectionId: a.connectionId }, place: b.place })
      expect(yield* failure(crossed.create(newUser()))).toMatchObject({ _tag: "ScimNotFound", detail: "No such SCIM connection." })
      expect((yield* failure(crossed.get(user.id)))._tag).toBe("ScimNotFound")
      expect((yield* a.scim.list()).totalResults).toBe(1)
    }))

  it.effect("reconcile: a membership changed by hand follows the directory again; a linked team that appeared is linked, one whose key went is unlinked", () =>
    Effect.gen(function*() {
      const reconcile = yield* Reconcile
      const dir = yield* directory("link_by_external_key", { users: 0 })
      const scim = yield* usersOf(dir)
      const [ada, bob, cy] = [yield* scim.create(newUser()), yield* scim.create(newUser()), yield* scim.create(newUser())]
      yield* scim.remove(ada.id)
      yield* scim.patch(bob.id, [{ op: "replace", path: "active", value: false }])
      // By hand, behind the directory's back: the deleted member back, the deactivated one admitted again.
      yield* dir.sql`UPDATE memberships SET removed_at = NULL WHERE organization_id = ${dir.organizationId} AND id = ${ada.id}`
      yield* dir.sql`UPDATE memberships SET suspended_at = NULL WHERE organization_id = ${dir.organizationId} AND id = ${bob.id}`
      const group = yield* dir.create({ displayName: "Sales", externalId: "sales-key", members: [{ value: cy.id }, { value: bob.id }] })
      expect(yield* dir.teamOf(group.id)).toBeNull()
      // A team with the group's externalId appears.
      const teamId = yield* makeId("tem")
      yield* dir.sql`INSERT INTO teams (id, organization_id, name, external_key, created_at, updated_at)
                     VALUES (${teamId}, ${dir.organizationId}, 'Sales team', 'sales-key', ${at}, ${at})`
      const first = Option.getOrThrow(yield* reconcile.reconcile(dir))
      expect(first).toEqual({
        checked: 3 + 1,
        repaired: [
          { resourceType: "User", resourceId: ada.id, change: "membership removed: the directory deleted the User" },
          { resourceType: "User", resourceId: bob.id, change: "membership suspended: the User is inactive in the directory" },
          { resourceType: "Group", resourceId: group.id, change: `team ${teamId} now maps the group` },
          { resourceType: "Group", resourceId: group.id, change: "team members: 1 added, 0 removed" }
        ]
      })
      expect(yield* dir.teamOf(group.id)).toBe(teamId)
      expect(yield* dir.teamMembers(teamId)).toEqual([cy.id])
      expect(yield* dir.teams).toEqual([{ id: teamId, name: "Sales team", scimConnectionId: dir.connectionId }])
      // The team's key changes by hand: the group is unlinked and the team released.
      yield* dir.sql`UPDATE teams SET external_key = 'other-key' WHERE organization_id = ${dir.organizationId} AND id = ${teamId}`
      expect(Option.getOrThrow(yield* reconcile.reconcile(dir)).repaired).toEqual([
        { resourceType: "Group", resourceId: group.id, change: "team unlinked: no team has the group's externalId" }
      ])
      expect(yield* dir.teamOf(group.id)).toBeNull()
      expect(yield* dir.teams).toEqual([{ id: teamId, name: "Sales team", scimConnectionId: null }])
      // Another organization's connection id in this organization: none such.
      const other = yield* directory("metadata_only", { users: 0 })
      expect(yield* reconcile.reconcile({ organizationId: other.organizationId, connectionId: dir.connectionId })).toEqual(Option.none())
    }))

  it.effect("a User the directory deactivates or deletes leaves the directory's teams; restored, they come back", () =>
    Effect.gen(function*() {
      const dir = yield* userDirectory()
      const [ada, bob] = [yield* dir.scim.create(newUser()), yield* dir.scim.create(newUser())]
      const group = yield* dir.create({ displayName: "Research", members: [{ value: ada.id }, { value: bob.id }] })
      const teamId = (yield* dir.teamOf(group.id))!
      expect(yield* dir.teamMembers(teamId)).toEqual(sorted([ada.id, bob.id]))
      yield* dir.scim.patch(bob.id, [{ op: "replace", path: "active", value: false }])
      expect(yield* dir.teamMembers(teamId)).toEqual([ada.id])
      yield* dir.scim.patch(bob.id, [{ op: "replace", path: "active", value: true }])
      expect(yield* dir.teamMembers(teamId)).toEqual(sorted([ada.id, bob.id]))
      yield* dir.scim.remove(ada.id)
      expect(yield* dir.teamMembers(teamId)).toEqual([bob.id])
    }))
})

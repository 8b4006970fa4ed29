/**
 * SCIM Groups on a real database, through the Groups and Reconcile services (the protocol's HTTP surface needs the
 * SCIM token middleware, tested in ScimGroups.test.ts): the three mapping modes, Okta's and Entra's sequences, the
 * role rules, ETags, uniqueness, a connection's confinement, and a 10,000-member PATCH as set-based statements.
 */
import * as NodeCrypto from "node:crypto"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import type { OrganizationId, ScimConnectionId } from "@orgplane/schema"
import { TestDatabase } from "@orgplane/testkit"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { IdGenerator, makeId } from "../src/platform/Ids.js"
import { CursorKey } from "../src/platform/Keyset.js"
import { Groups } from "../src/scim/Groups.js"
import { Reconcile } from "../src/scim/Reconcile.js"
import * as DirectoryTeams from "../src/teams/DirectoryTeams.js"

const Services = Layer.mergeAll(Groups.layer, Reconcile.layer).pipe(
  Layer.provideMerge(DirectoryTeams.layer),
  Layer.provideMerge(Layer.mergeAll(IdGenerator.Live, Layer.succeed(CursorKey, NodeCrypto.randomBytes(32)))),
  Layer.provideMerge(TestDatabase.layer)
)

const at = new Date("2026-11-01T00:00:00Z")
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"
type Mode = "metadata_only" | "create_teams" | "link_by_external_key"

let directories = 0

/** An organization with an owner, a SCIM connection in `mode`, and `users` SCIM Users of it (members). */
const directory = (mode: Mode, options: { readonly users?: number; readonly roleRules?: ReadonlyArray<{ group: string; role: string }> } = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const n = ++directories
    const organizationId = (yield* makeId("org")) as OrganizationId
    const connectionId = (yield* makeId("scc")) as ScimConnectionId
    yield* sql`INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES (${organizationId}, ${`Org ${n}`}, 'enterprise', ${at}, ${at})`
    const person = (email: string, role: string) =>
      Effect.gen(function*() {
        const userId = yield* makeId("usr")
        const membershipId = yield* makeId("om")
        yield* sql`INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES (${userId}, ${email}, ${email}, 'x', ${at}, ${at})`
        yield* sql`INSERT INTO memberships (id, organization_id, user_id, role, created_at, updated_at)
                   VALUES (${membershipId}, ${organizationId}, ${userId}, ${role}, ${at}, ${at})`
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
        (rows) => rows[0]!.role
      )
    const events = Effect.map(
      sql<{ method: string; status: number; scimType: string | null }>`SELECT e.method, e.status, e.scim_type FROM scim_events e
        WHERE e.organization_id = ${organizationId} AND e.connection_id = ${connectionId} ORDER BY e.id`,
      (rows) => rows.map((row) => `${row.method} ${row.status}${row.scimType ? ` ${row.scimType}` : ""}`)
    )
    return { sql, organizationId, connectionId, owner, users, scimUser, caller, place, request, groups, create, patch, teams, teamMembers, teamOf, role, events }
  })

const sorted = (ids: ReadonlyArray<string>) => [...ids].sort()
const values = (group: { readonly members?: ReadonlyArray<{ readonly value: string }> | undefined }) =>
  sorted((group.members ?? []).map((member) => member.value))
/** The failure an effect ends with (undefined when it succeeds). */
const failure = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<any, never, R> =>
  Effect.map(Effect.exit(effect), (exit) => (Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined))

describe("SCIM Groups on the database", () => {
  it.layer(Services, { timeout: 120_000 })((it) => {
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
        expect(yield* dir.teamMembers(teamId)).toEqual(sorted([a!, b!, c!]))
        const removed = yield* dir.patch(group.id, [{ op: "remove", path: `members[value eq "${a}"]` }])
        expect(values(removed)).toEqual(sorted([b!, c!]))
        expect(yield* dir.teamMembers(teamId)).toEqual(sorted([b!, c!]))

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
        expect(values((yield* dir.groups.get(dir.caller, dir.place, group.id, {})) as any)).toEqual(sorted([a!, b!]))
        expect(Option.getOrThrow(yield* reconcile.reconcile(dir)).repaired).toEqual([])
        // Reactivated in the directory: restored, and back in the team.
        yield* dir.sql`UPDATE scim_users SET active = true WHERE organization_id = ${dir.organizationId} AND membership_id = ${b}`
        expect(Option.getOrThrow(yield* reconcile.reconcile(dir)).repaired.map((repair) => repair.change)).toEqual([
          "membership restored: the User is active in the directory",
          "team members: 1 added, 0 removed"
        ])
        expect(yield* dir.teamMembers(directoryTeam)).toEqual(sorted([a!, b!]))
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
        expect(page.Resources.map((resource: any) => resource.displayName)).toEqual(["G2"])
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
        const after = (yield* dir.groups.get(dir.caller, dir.place, group.id, {})) as any
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
        expect(values((yield* a.groups.get(a.caller, a.place, group.id, {})) as any)).toEqual([a.users[0]])
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
  })
})

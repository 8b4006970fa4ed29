/**
 * SCIM connections as admins manage them, on a fresh migrated database (the embedded one, or Postgres with
 * DATABASE_URL), through the Connections service as the management handlers call it (the behaviours of
 * http/ScimConnections.test.ts that live in the service): settings, the plan and roles (and a recent
 * sign-in for changes), tokens (shown once, hashed, several at once so rotation overlaps, expiring, revoked), health
 * and the event log of the directory's writes (the Users service), reconcile and the effect of a settings change,
 * deletion, and another organization's connection as not found on every operation.
 */
import { expect, layer } from "@effect/vitest"
import { type MemberContext, type Organization, PageQuery, ScimEventListQuery, ScimTokenId } from "@orgplane/schema"
import * as Clock from "effect/Clock"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { createHash } from "node:crypto"
import * as Config from "../src/platform/Config.js"
import { Crypto } from "../src/platform/Crypto.js"
import { AuditRecorder } from "../src/platform/AuditRecorder.js"
import { IdGenerator } from "../src/platform/Ids.js"
import { Connections } from "../src/scim/Connections.js"
import { Groups } from "../src/scim/Groups.js"
import { Users } from "../src/scim/Users.js"
import { DirectoryTeams } from "../src/teams/DirectoryTeams.js"
import { clockAt } from "./support/Clocks.js"
import * as Db from "./support/IdentityDatabase.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const settings = Config.layer({ dataDir: "memory", passwordCost: 10 }).pipe(
  Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} })))
)

const Services = Layer.mergeAll(Connections.layer, Users.layer, Groups.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(DirectoryTeams.layer, AuditRecorder.layer)),
  Layer.provideMerge(Layer.mergeAll(IdGenerator.layer, Crypto.layer.pipe(Layer.provideMerge(settings)))),
  Layer.provideMerge(Db.layer)
)

const BASE = "https://orgplane.example"
const USER = "urn:ietf:params:scim:schemas:core:2.0:User"
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"

/** The failure an effect ends with (a success is a defect: the test expected a refusal). */
const failure = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<E, never, R> =>
  Effect.flip(effect).pipe(Effect.catch((value) => Effect.die(new Error(`expected a failure, got ${JSON.stringify(value)}`))))

const page = Schema.decodeUnknownSync(PageQuery)
const eventQuery = Schema.decodeUnknownSync(ScimEventListQuery)

/** An enterprise organization with an owner, an admin and a member (their rows seeded), each signed in just now. */
const staffed = Effect.fn("test.staffed")(function*(plan: Organization["plan"] = "enterprise") {
  const organization = Members.organization(plan)
  const owner = Members.member(organization, "owner")
  const admin = Members.member(organization, "admin")
  const member = Members.member(organization, "member")
  yield* Members.seed(owner, admin, member)
  return { organization, owner, admin, member }
})

let people = 0
const newUser = (overrides: Record<string, unknown> = {}) => {
  const email = `person${++people}.${Math.random().toString(36).slice(2, 8)}@corp.example`
  return { schemas: [USER], userName: email, externalId: `ext-${email}`, emails: [{ value: email, primary: true }], active: true, ...overrides }
}

/** A connection of the owner's organization made through the service, with a first token, and its directory's calls. */
const directory = Effect.fn("test.directory")(function*(owner: MemberContext, input: { readonly groupMappingMode?: "metadata_only" | "create_teams" } = {}) {
  const connections = yield* Connections
  const users = yield* Users
  const groups = yield* Groups
  const { connection } = yield* connections.create(owner, { name: `Okta ${++people}`, ...input }, BASE)
  const issued = yield* connections.createToken(owner, connection.id, { name: "first" }, BASE)
  const caller = { organizationId: owner.organization.id, connectionId: connection.id, tokenId: issued.scimToken.id }
  const base = `${BASE}/scim/v2/${connection.id}`
  const request = (method: string, path: string, resourceType: "User" | "Group") => ({ method, path: `/scim/v2/${connection.id}${path}`, resourceType })
  return {
    connection,
    token: issued.token,
    tokenId: issued.scimToken.id,
    base,
    createUser: (body: unknown) => users.create(caller, request("POST", "/Users", "User"), body, base),
    patchUser: (id: string, operations: ReadonlyArray<unknown>) => users.patch(caller, request("PATCH", `/Users/${id}`, "User"), id, operations, undefined, base),
    createGroup: (body: Record<string, unknown>) => groups.create(caller, request("POST", "/Groups", "Group"), { baseUrl: base }, { schemas: [GROUP], ...body })
  }
})

const teamsOf = (organization: Organization) =>
  SqlClient.SqlClient.use((sql) =>
    sql<{ id: string; name: string; scimConnectionId: string | null; memberIds: string | null }>`
      SELECT t.id, t.name, t.scim_connection_id,
             (SELECT string_agg(tm.membership_id, ',' ORDER BY tm.membership_id) FROM team_members tm
              WHERE tm.organization_id = t.organization_id AND tm.team_id = t.id) AS member_ids
      FROM teams t WHERE t.organization_id = ${organization.id} ORDER BY t.name`)

const roleOf = (organization: Organization, id: string) =>
  SqlClient.SqlClient.use((sql) =>
    Effect.map(
      sql<{ role: string; removed: boolean }>`SELECT role, removed_at IS NOT NULL AS removed FROM memberships WHERE organization_id = ${organization.id} AND id = ${id}`,
      (rows) => rows[0]
    ))

layer(Services, { timeout: 300_000, excludeTestServices: true })(`SCIM connections, their tokens, events and reconcile on ${TestDatabase.kind}`, (it) => {
  it.effect("are created, listed, read, renamed and deleted by owners and admins, with their base URL, counts and health", () =>
    Effect.gen(function*() {
      const connections = yield* Connections
      const org = yield* staffed()
      const { connection } = yield* connections.create(org.admin, {
        name: "Okta",
        groupMappingMode: "create_teams",
        roleRules: [{ group: "Platform admins", role: "admin" }]
      }, BASE)
      expect(connection).toMatchObject({
        id: expect.stringMatching(/^scc_/),
        organizationId: org.organization.id,
        name: "Okta",
        baseUrl: `${BASE}/scim/v2/${connection.id}`,
        groupMappingMode: "create_teams",
        defaultRole: "member",
        roleRules: [{ group: "Platform admins", role: "admin" }],
        users: 0,
        groups: 0,
        activeTokens: 0,
        health: { lastSuccessAt: null, lastFailureAt: null, unresolvedFailures: 0 },
        createdByOrgMembershipId: org.admin.membership.id
      })

      const second = yield* connections.create(org.owner, { name: "Entra" }, BASE)
      expect(second.connection).toMatchObject({ groupMappingMode: "metadata_only", defaultRole: "member", roleRules: [] })
      expect(yield* failure(connections.create(org.owner, { name: "okta" }, BASE))).toMatchObject({ _tag: "Conflict", error: "scim_connection_exists" })

      const listed = yield* connections.list(org.owner, page({ limit: "1" }), BASE)
      expect(listed.items.map((item) => item.id)).toEqual([connection.id])
      const rest = yield* connections.list(org.owner, page({ limit: "1", cursor: listed.nextCursor }), BASE)
      expect(rest.items.map((item) => item.id)).toEqual([second.connection.id])
      expect(rest.nextCursor).toBeNull()

      const renamed = yield* connections.update(org.admin, connection.id, { name: "Okta (production)" }, BASE)
      expect(renamed).toMatchObject({ connection: { name: "Okta (production)" }, reconciled: null })
      expect(yield* failure(connections.update(org.admin, connection.id, { name: "Entra" }, BASE))).toMatchObject({ error: "scim_connection_exists" })
      expect((yield* connections.get(org.owner, connection.id, BASE)).connection.name).toBe("Okta (production)")

      yield* connections.remove(org.admin, second.connection.id)
      expect(yield* failure(connections.get(org.admin, second.connection.id, BASE))).toMatchObject({ _tag: "NotFound", error: "scim_connection_not_found" })
      expect(yield* failure(connections.remove(org.admin, second.connection.id))).toMatchObject({ _tag: "NotFound", error: "scim_connection_not_found" })
    }))

  it.effect("are refused to members (403), outside the enterprise plan (402, feature scim), and changed only after a recent sign-in", () =>
    Effect.gen(function*() {
      const connections = yield* Connections
      const org = yield* staffed()
      const { connection } = yield* connections.create(org.owner, { name: "Okta" }, BASE)
      expect(yield* failure(connections.list(org.member, page({}), BASE))).toMatchObject({ _tag: "Forbidden", reason: "insufficient_role" })
      expect((yield* failure(connections.create(org.member, { name: "Mine" }, BASE)))._tag).toBe("Forbidden")
      expect((yield* failure(connections.createToken(org.member, connection.id, { name: "x" }, BASE)))._tag).toBe("Forbidden")

      const team = yield* staffed("team")
      expect(yield* failure(connections.list(team.owner, page({}), BASE))).toMatchObject({ _tag: "PlanRequired", feature: "scim" })
      expect(yield* failure(connections.create(team.owner, { name: "Okta" }, BASE))).toMatchObject({ _tag: "PlanRequired", feature: "scim" })

      // A session signed in hours ago reads, but changes nothing that provisions people.
      const stale = Members.member(org.organization, "owner", { authenticatedAt: new Date(Date.now() - 3 * 3_600_000) })
      yield* Members.seed(stale)
      expect((yield* connections.list(stale, page({}), BASE)).items.map((item) => item.id)).toEqual([connection.id])
      expect(yield* failure(connections.create(stale, { name: "Later" }, BASE))).toMatchObject({ _tag: "Forbidden", reason: "recent_authentication_required" })
      expect(yield* failure(connections.createToken(stale, connection.id, { name: "later" }, BASE))).toMatchObject({ reason: "recent_authentication_required" })
      expect(yield* failure(connections.remove(stale, connection.id))).toMatchObject({ reason: "recent_authentication_required" })
      expect((yield* connections.get(org.owner, connection.id, BASE)).connection.name).toBe("Okta")
    }))

  it.effect("answer 404 for another organization's connection, on every operation", () =>
    Effect.gen(function*() {
      const connections = yield* Connections
      const a = yield* staffed()
      const b = yield* staffed()
      const dir = yield* directory(a.owner)
      const id = dir.connection.id
      const refusals = [
        failure(connections.get(b.owner, id, BASE)),
        failure(connections.update(b.owner, id, { name: "Mine" }, BASE)),
        failure(connections.remove(b.owner, id)),
        failure(connections.createToken(b.owner, id, { name: "mine" }, BASE)),
        failure(connections.listTokens(b.owner, id, page({}))),
        failure(connections.revokeToken(b.owner, id, dir.tokenId)),
        failure(connections.listEvents(b.owner, id, eventQuery({}))),
        failure(connections.reconcile(b.owner, id))
      ]
      for (const refusal of refusals) expect(yield* refusal).toMatchObject({ _tag: "NotFound", error: "scim_connection_not_found" })
      expect((yield* connections.list(b.owner, page({}), BASE)).items).toEqual([])
      // A's connection is untouched, and its token still active.
      const tokens = yield* connections.listTokens(a.owner, id, page({}))
      expect(tokens.items.map((token) => [token.id, token.state])).toEqual([[dir.tokenId, "active"]])
      expect((yield* connections.get(a.owner, id, BASE)).connection.name).toBe(dir.connection.name)
    }))

  it.effect("refuse a token that expires in the past with 400 on expiresAt, writing nothing", () =>
    Effect.gen(function*() {
      const connections = yield* Connections
      const org = yield* staffed()
      const { connection } = yield* connections.create(org.owner, { name: "Okta" }, BASE)
      const past = yield* failure(connections.createToken(org.owner, connection.id, { name: "old", expiresAt: new Date(Date.now() - 60_000) }, BASE))
      expect(past).toMatchObject({ _tag: "InvalidRequest" })
      expect(JSON.stringify(past)).toContain("expiresAt")
      expect((yield* connections.listTokens(org.owner, connection.id, page({}))).items).toEqual([])
    }))
  it.effect("tokens are shown once and kept hashed; several work at once, so rotation overlaps; revoked ones are revoked at once", () =>
    Effect.gen(function*() {
      const connections = yield* Connections
      const sql = yield* SqlClient.SqlClient
      const org = yield* staffed()
      const first = yield* directory(org.owner)
      const issued = yield* connections.createToken(org.owner, first.connection.id, { name: "rotation" }, BASE)
      expect(issued).toMatchObject({
        token: expect.stringMatching(/^scim_[A-Za-z0-9_-]{43}$/),
        baseUrl: `${BASE}/scim/v2/${first.connection.id}`,
        scimToken: { name: "rotation", state: "active", connectionId: first.connection.id, lastUsedAt: null, revokedAt: null, expiresAt: null }
      })
      const second = { token: issued.token, id: issued.scimToken.id }

      // Hashed at rest: the table holds the SHA-256 of each token, never the token.
      const stored = yield* sql<{ tokenHash: string }>`SELECT token_hash FROM scim_tokens WHERE organization_id = ${org.organization.id} AND connection_id = ${first.connection.id}`
      expect(stored.map((row) => row.tokenHash).sort()).toEqual([first.token, second.token].map((token) => createHash("sha256").update(token).digest("hex")).sort())
      const listed = yield* connections.listTokens(org.owner, first.connection.id, page({}))
      expect(listed.items.map((item) => item.id)).toEqual([second.id, first.tokenId])
      expect(JSON.stringify(listed)).not.toContain(second.token)
      expect(JSON.stringify(listed)).not.toContain(first.token)
      expect((yield* connections.get(org.owner, first.connection.id, BASE)).connection.activeTokens).toBe(2)

      yield* connections.revokeToken(org.owner, first.connection.id, first.tokenId)
      yield* connections.revokeToken(org.owner, first.connection.id, first.tokenId)
      const after = (yield* connections.listTokens(org.owner, first.connection.id, page({}))).items
      expect(after.find((item) => item.id === first.tokenId)).toMatchObject({ state: "revoked", revokedAt: expect.any(Date) })
      expect(after.find((item) => item.id === second.id)).toMatchObject({ state: "active", revokedAt: null })
      expect((yield* connections.get(org.owner, first.connection.id, BASE)).connection.activeTokens).toBe(1)

      const unknown = Schema.decodeUnknownSync(ScimTokenId)("sct_01jc0000000000000000000000")
      expect(yield* failure(connections.revokeToken(org.owner, first.connection.id, unknown))).toMatchObject({ _tag: "NotFound", error: "scim_token_not_found" })
      // A token of another connection of the organization is not this connection's.
      const other = yield* directory(org.owner)
      expect(yield* failure(connections.revokeToken(org.owner, first.connection.id, other.tokenId))).toMatchObject({ error: "scim_token_not_found" })
      expect((yield* connections.listTokens(org.owner, other.connection.id, page({}))).items.map((item) => item.state)).toEqual(["active"])
    }))

  it.effect("tokens expire: past their time they read as expired and no longer count as active", () =>
    Effect.gen(function*() {
      const connections = yield* Connections
      const org = yield* staffed()
      const { connection } = yield* connections.create(org.owner, { name: "Okta" }, BASE)
      let time = Date.now()
      const atTime = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Clock.Clock, clockAt(() => time))
      const expiresAt = new Date(time + 60 * 60_000)
      const issued = yield* atTime(connections.createToken(org.owner, connection.id, { name: "an hour", expiresAt }, BASE))
      expect(issued.scimToken).toMatchObject({ expiresAt, state: "active" })
      expect((yield* atTime(connections.get(org.owner, connection.id, BASE))).connection.activeTokens).toBe(1)
      time += 61 * 60_000
      const [token] = (yield* atTime(connections.listTokens(org.owner, connection.id, page({})))).items
      expect(token).toMatchObject({ id: issued.scimToken.id, state: "expired" })
      // The owner's session was made an hour ago by then: reading needs no recent sign-in.
      expect((yield* atTime(connections.get(org.owner, connection.id, BASE))).connection.activeTokens).toBe(0)
    }))

  it.effect("the event log records each write with its outcome, counts failures since the last success, and filters", () =>
    Effect.gen(function*() {
      const connections = yield* Connections
      const org = yield* staffed()
      const dir = yield* directory(org.owner)
      const body = newUser()
      const created = yield* dir.createUser(body)
      expect((yield* failure(dir.createUser({ ...body, externalId: "another" })))._tag).toBe("ScimConflict")
      expect((yield* failure(dir.patchUser(created.id, [{ op: "replace", path: "nickName", value: 1 }])))._tag).toBe("ScimBadRequest")

      const health = Effect.map(connections.get(org.owner, dir.connection.id, BASE), (answer) => answer.connection)
      const connection = yield* health
      expect(connection.users).toBe(1)
      expect(connection.health).toMatchObject({ lastSuccessAt: expect.any(Date), lastFailureAt: expect.any(Date), unresolvedFailures: 2 })

      const events = (yield* connections.listEvents(org.owner, dir.connection.id, eventQuery({}))).items
      // Newest first; reads are not recorded.
      expect(events.map((event) => [event.method, event.status, event.outcome, event.resourceType])).toEqual([
        ["PATCH", 400, "refused", "User"],
        ["POST", 409, "refused", "User"],
        ["POST", 201, "succeeded", "User"]
      ])
      expect(events[2]).toMatchObject({ path: `/scim/v2/${dir.connection.id}/Users`, resourceId: created.id, tokenId: dir.tokenId, scimType: null, detail: null })
      expect(events[1]).toMatchObject({ scimType: "uniqueness", detail: expect.any(String), resourceId: null })
      const refused = yield* connections.listEvents(org.owner, dir.connection.id, eventQuery({ outcome: "refused", limit: "1" }))
      expect(refused.items.map((event) => event.status)).toEqual([400])
      const next = yield* connections.listEvents(org.owner, dir.connection.id, eventQuery({ outcome: "refused", limit: "1", cursor: refused.nextCursor }))
      expect(next.items.map((event) => event.status)).toEqual([409])
      expect(next.nextCursor).toBeNull()
      expect((yield* connections.listEvents(org.owner, dir.connection.id, eventQuery({ outcome: "succeeded" }))).items).toHaveLength(1)
      expect((yield* connections.listEvents(org.owner, dir.connection.id, eventQuery({ resourceType: "Group" }))).items).toEqual([])
      // A cursor of other filters is refused.
      expect((yield* failure(connections.listEvents(org.owner, dir.connection.id, eventQuery({ outcome: "succeeded", cursor: refused.nextCursor }))))._tag)
        .toBe("InvalidRequest")

      // A later success clears the count.
      yield* dir.patchUser(created.id, [{ op: "replace", path: "displayName", value: "Pat" }])
      expect((yield* health).health.unresolvedFailures).toBe(0)
    }))

  it.effect("a new group mapping mode and role rules apply at once, answering what they changed; reconcile repairs drift and is logged", () =>
    Effect.gen(function*() {
      const connections = yield* Connections
      const sql = yield* SqlClient.SqlClient
      const org = yield* staffed()
      const dir = yield* directory(org.owner)
      const alice = (yield* dir.createUser(newUser())).id
      const group = yield* dir.createGroup({ displayName: "Platform admins", members: [{ value: alice }] })
      expect(yield* teamsOf(org.organization)).toEqual([])

      const changed = yield* connections.update(org.owner, dir.connection.id, {
        groupMappingMode: "create_teams",
        roleRules: [{ group: "platform ADMINS", role: "admin" }]
      }, BASE)
      expect(changed.connection).toMatchObject({ groupMappingMode: "create_teams", groups: 1, users: 1 })
      const [team] = yield* teamsOf(org.organization)
      expect(team).toMatchObject({ name: "Platform admins", scimConnectionId: dir.connection.id, memberIds: alice })
      expect(changed.reconciled?.repaired).toEqual(expect.arrayContaining([
        { resourceType: "Group", resourceId: group.id, change: `team ${team!.id} now maps the group` },
        { resourceType: "User", resourceId: alice, change: "role set to admin by the connection's group rules" }
      ]))
      expect((yield* roleOf(org.organization, alice))?.role).toBe("admin")

      // Nothing drifted: reconcile repairs nothing, and says what it compared.
      expect(yield* connections.reconcile(org.owner, dir.connection.id)).toEqual({ checked: 2, repaired: [] })

      // Drift made behind the directory's back (a team member row gone) is repaired and recorded.
      yield* sql`DELETE FROM team_members WHERE organization_id = ${org.organization.id} AND team_id = ${team!.id}`
      const repaired = yield* connections.reconcile(org.owner, dir.connection.id)
      expect(repaired.repaired).toEqual([{ resourceType: "Group", resourceId: group.id, change: "team members: 1 added, 0 removed" }])
      expect((yield* teamsOf(org.organization))[0]?.memberIds).toBe(alice)
      const [event] = (yield* connections.listEvents(org.owner, dir.connection.id, eventQuery({ limit: "1" }))).items
      expect(event).toMatchObject({ method: "POST", path: `/v1/scim/connections/${dir.connection.id}/reconcile`, resourceType: null, tokenId: null, outcome: "succeeded" })

      // Back to metadata_only: the team is released (kept, no longer the directory's).
      const released = yield* connections.update(org.owner, dir.connection.id, { groupMappingMode: "metadata_only" }, BASE)
      expect(released.reconciled?.repaired).toContainEqual({ resourceType: "Group", resourceId: group.id, change: "team released: the connection maps no teams" })
      expect((yield* teamsOf(org.organization))[0]).toMatchObject({ id: team!.id, scimConnectionId: null })
    }))

  it.effect("deleting a connection drops its tokens, Users and Groups and keeps the organization's members and teams", () =>
    Effect.gen(function*() {
      const connections = yield* Connections
      const sql = yield* SqlClient.SqlClient
      const org = yield* staffed()
      const dir = yield* directory(org.owner, { groupMappingMode: "create_teams" })
      const alice = (yield* dir.createUser(newUser())).id
      yield* dir.createGroup({ displayName: "Research", members: [{ value: alice }] })
      yield* connections.remove(org.owner, dir.connection.id)
      expect(yield* sql`SELECT id FROM scim_tokens WHERE organization_id = ${org.organization.id} AND connection_id = ${dir.connection.id}`).toEqual([])
      expect(yield* sql`SELECT membership_id FROM scim_users WHERE organization_id = ${org.organization.id} AND connection_id = ${dir.connection.id}`).toEqual([])
      const [team] = yield* teamsOf(org.organization)
      expect(team).toMatchObject({ name: "Research", scimConnectionId: null, memberIds: alice })
      expect(yield* roleOf(org.organization, alice)).toEqual({ role: "member", removed: false })
      // The directory's next write finds no connection.
      expect(yield* failure(dir.createUser(newUser()))).toMatchObject({ _tag: "ScimNotFound", detail: "No such SCIM connection." })
    }))
})

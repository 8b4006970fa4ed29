/**
 * SCIM connections as admins manage them, through HTTP: settings, tokens (shown once, hashed, overlapping for rotation,
 * expiring, revoked), health and the event log, reconcile, the effect of a settings change, deletion, plan and roles,
 * tenancy and bad input.
 */
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Wait from "../../../../packages/testkit/src/Wait.js"
import { createHash } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const clock = new TestServer.ShiftedClock()
let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  server = await TestServer.startSharingDatabase({ defaultPlan: "enterprise", clock })
})
afterAll(() => server?.close())

const { post } = Http.verbs(() => server.url)
const { members, scimConnections, scimGroups, scimUsers, teams } = calls(() => server.url)

const USER = "urn:ietf:params:scim:schemas:core:2.0:User"
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"

const SCIM_JSON = { "content-type": "application/scim+json" }

/** A directory's calls of the SCIM protocol, each named by its method and path (whose answers only their status is read). */
const scimCall = (base: string, token: string) => (method: string, path: string, body?: unknown) =>
  Http.request(server.url, method, `${base}${path}`, {
    token,
    headers: SCIM_JSON,
    ...(body === undefined ? {} : { body })
  })

let people = 0
const newUser = (overrides: Record<string, unknown> = {}) => {
  const email = `person${++people}.${Math.random().toString(36).slice(2, 8)}@corp.example`
  return { schemas: [USER], userName: email, externalId: `ext-${email}`, emails: [{ value: email, primary: true }], active: true, ...overrides }
}

const connectionPath = (id: string) => `/v1/scim/connections/${id}`

/** The User a directory provisions, as the server answers it. */
const provisionUser = async (directory: { readonly connection: { readonly id: string }; readonly token: string }, payload: Record<string, unknown>) =>
  ok(await scimUsers.create({ token: directory.token, path: { connectionId: directory.connection.id }, headers: SCIM_JSON, payload }), 201)

describe("SCIM connections", () => {
  it("are created, listed, read, renamed and deleted by owners and admins, with their base URL, counts and health", async () => {
    const org = await Http.staffed(server.url)
    const created = await scimConnections.create({
      token: org.admin.token,
      payload: { name: "Okta", groupMappingMode: "create_teams", roleRules: [{ group: "Platform admins", role: "admin" }] }
    })
    expect(created.status, created.text).toBe(201)
    const { connection } = ok(created, 201)
    expect(connection).toMatchObject({
      id: expect.stringMatching(/^scc_/),
      organizationId: org.organizationId,
      name: "Okta",
      baseUrl: `${server.url}/scim/v2/${connection.id}`,
      groupMappingMode: "create_teams",
      defaultRole: "member",
      roleRules: [{ group: "Platform admins", role: "admin" }],
      users: 0,
      groups: 0,
      activeTokens: 0,
      health: { lastSuccessAt: null, lastFailureAt: null, unresolvedFailures: 0 },
      createdByOrgMembershipId: org.admin.membership.id
    })

    const second = ok(await scimConnections.create({ token: org.owner.token, payload: { name: "Entra" } }), 201)
    expect(second.connection).toMatchObject({ groupMappingMode: "metadata_only", defaultRole: "member", roleRules: [] })
    const taken = await scimConnections.create({ token: org.owner.token, payload: { name: "okta" } })
    expect(taken.status).toBe(409)
    expect(taken.body).toMatchObject({ error: "scim_connection_exists" })

    const listed = ok(await scimConnections.list({ token: org.owner.token, query: { limit: "1" } }), 200)
    expect(listed.items.map((item) => item.id)).toEqual([connection.id])
    const rest = ok(await scimConnections.list({ token: org.owner.token, query: { limit: "1", cursor: `${listed.nextCursor}` } }), 200)
    expect(rest.items.map((item) => item.id)).toEqual([second.connection.id])
    expect(rest.nextCursor).toBeNull()

    const path = { connectionId: connection.id }
    const renamed = await scimConnections.update({ token: org.admin.token, path, payload: { name: "Okta (production)" } })
    expect(renamed.status, renamed.text).toBe(200)
    expect(renamed.body).toMatchObject({ connection: { name: "Okta (production)" }, reconciled: null })
    expect((await scimConnections.update({ token: org.admin.token, path, payload: { name: "Entra" } })).body).toMatchObject({
      error: "scim_connection_exists"
    })
    expect(ok(await scimConnections.get({ token: org.owner.token, path }), 200).connection.name).toBe("Okta (production)")

    const secondPath = { connectionId: second.connection.id }
    expect((await scimConnections.delete({ token: org.admin.token, path: secondPath })).status).toBe(204)
    const gone = await scimConnections.get({ token: org.admin.token, path: secondPath })
    expect(gone.status).toBe(404)
    expect(gone.body).toMatchObject({ error: "scim_connection_not_found" })
    expect((await scimConnections.delete({ token: org.admin.token, path: secondPath })).status).toBe(404)
  })

  it("are refused to members (403) and outside the enterprise plan (402, feature scim), whose directories get a SCIM 403", async () => {
    const org = await Http.staffed(server.url)
    const directory = await Http.scimDirectory(server.url, org.owner.token)
    const denied = await scimConnections.list({ token: org.member.token })
    expect(denied.status).toBe(403)
    expect(denied.body).toMatchObject({ reason: "insufficient_role" })
    expect((await scimConnections.create({ token: org.member.token, payload: { name: "Mine" } })).status).toBe(403)
    expect((await scimConnections.createToken({ token: org.member.token, path: { connectionId: directory.connection.id }, payload: { name: "x" } })).status)
      .toBe(403)

    await server.sql((sql) => sql`UPDATE organizations SET plan = 'team' WHERE id = ${org.organizationId}`)
    const plan = await scimConnections.list({ token: org.owner.token })
    expect(plan.status).toBe(402)
    expect(plan.body).toMatchObject({ error: "enterprise_plan_required", feature: "scim" })
    const scim = await scimCall(directory.base, directory.token)("GET", "/Users")
    expect(scim.status).toBe(403)
    expect(scim.headers.get("content-type")).toContain("application/scim+json")
    expect(scim.body).toMatchObject({ schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: "403" })

    await server.sql((sql) => sql`UPDATE organizations SET plan = 'enterprise' WHERE id = ${org.organizationId}`)
    expect((await scimCall(directory.base, directory.token)("GET", "/Users")).status).toBe(200)
  })

  it("answer 404 for another organization's connection, on every operation", async () => {
    const a = await Http.staffed(server.url)
    const b = await Http.owner(server.url)
    const directory = await Http.scimDirectory(server.url, a.owner.token)
    const path = connectionPath(directory.connection.id)
    const tries: ReadonlyArray<readonly [string, string, unknown?]> = [
      ["GET", path],
      ["PATCH", path, { name: "Mine" }],
      ["DELETE", path],
      ["POST", `${path}/tokens`, { name: "mine" }],
      ["GET", `${path}/tokens`],
      ["DELETE", `${path}/tokens/${directory.tokenId}`],
      ["GET", `${path}/events`],
      ["POST", `${path}/reconcile`]
    ]
    for (const [method, where, body] of tries) {
      const response = await Http.request(server.url, method, where, { token: b.token, ...(body === undefined ? {} : { body }) })
      expect(response.status, `${method} ${where}`).toBe(404)
      expect(response.body).toMatchObject({ error: "scim_connection_not_found" })
    }
    expect(ok(await scimConnections.list({ token: b.token }), 200).items).toEqual([])
    // A's connection is untouched, and its token still works.
    expect((await scimCall(directory.base, directory.token)("GET", "/Users")).status).toBe(200)
    // A token of A's connection does not open another connection of A's.
    const other = await Http.scimDirectory(server.url, a.owner.token)
    expect((await scimCall(other.base, directory.token)("GET", "/Users")).status).toBe(401)
  })

  it("refuse bad input with 400 on the member, writing nothing", async () => {
    const org = await Http.owner(server.url)
    const bad: ReadonlyArray<[unknown, string]> = [
      [{}, "name"],
      [{ name: "" }, "name"],
      [{ name: "x".repeat(101) }, "name"],
      [{ name: "Okta", groupMappingMode: "teams" }, "groupMappingMode"],
      [{ name: "Okta", defaultRole: "owner" }, "defaultRole"],
      [{ name: "Okta", roleRules: Array.from({ length: 101 }, (_, i) => ({ group: `g${i}`, role: "admin" })) }, "roleRules"],
      [{ name: "Okta", roleRules: [{ group: "g", role: "owner" }] }, "roleRules"],
      [{ name: "Okta", tokens: 3 }, "tokens"],
      [{ name: "Ok\u0000ta" }, "name"]
    ]
    for (const [body, member] of bad) {
      const response = await post("/v1/scim/connections", { token: org.token, body })
      expect(response.status, JSON.stringify(body)).toBe(400)
      const refused = invalid(response)
      expect(refused.error).toBe("invalid_request")
      expect(JSON.stringify(refused.details), JSON.stringify(body)).toContain(member)
    }
    expect(ok(await scimConnections.list({ token: org.token }), 200).items).toEqual([])
    const directory = await Http.scimDirectory(server.url, org.token)
    const path = { connectionId: directory.connection.id }
    expect((await scimConnections.update({ token: org.token, path, payload: {} })).status).toBe(400)
    const past = await scimConnections.createToken({
      token: org.token,
      path,
      payload: { name: "old", expiresAt: new Date(Date.now() - 60_000).toISOString() }
    })
    expect(past.status).toBe(400)
    expect(JSON.stringify(invalid(past).details)).toContain("expiresAt")
  })
})

describe("SCIM tokens", () => {
  it("are shown once and kept hashed; several work at once, so rotation overlaps; revoked ones stop at once", async () => {
    const org = await Http.owner(server.url)
    const first = await Http.scimDirectory(server.url, org.token)
    const path = { connectionId: first.connection.id }
    const issued = await scimConnections.createToken({ token: org.token, path, payload: { name: "rotation" } })
    expect(issued.status, issued.text).toBe(201)
    expect(issued.body).toMatchObject({
      token: expect.stringMatching(/^scim_[A-Za-z0-9_-]{43}$/),
      baseUrl: `${server.url}/scim/v2/${first.connection.id}`,
      scimToken: { name: "rotation", state: "active", connectionId: first.connection.id, lastUsedAt: null, revokedAt: null, expiresAt: null }
    })
    const secondIssued = ok(issued, 201)
    const second = { token: secondIssued.token, id: secondIssued.scimToken.id }

    // Hashed at rest: the table holds the SHA-256 of each token, never the token.
    const stored = await server.sql((sql) => sql<{ tokenHash: string }>`SELECT token_hash FROM scim_tokens WHERE organization_id = ${org.organization.id} AND connection_id = ${first.connection.id}`)
    const hashes = stored.map((row) => row.tokenHash).sort()
    expect(hashes).toEqual([first.token, second.token].map((token) => createHash("sha256").update(token).digest("hex")).sort())
    const listed = ok(await scimConnections.listTokens({ token: org.token, path }), 200)
    expect(listed.items.map((item) => item.id)).toEqual([second.id, first.tokenId])
    expect(JSON.stringify(listed)).not.toContain(second.token)
    expect(JSON.stringify(listed)).not.toContain(first.token)

    const directory = (token: string) => scimCall(first.base, token)
    expect((await directory(first.token)("GET", "/Users")).status).toBe(200)
    expect((await directory(second.token)("GET", "/Users")).status).toBe(200)
    await Wait.until(async () => {
      const items = ok(await scimConnections.listTokens({ token: org.token, path }), 200).items
      return items.every((item) => item.lastUsedAt !== null)
    }, "both tokens' lastUsedAt")
    expect(ok(await scimConnections.get({ token: org.token, path }), 200).connection.activeTokens).toBe(2)

    const firstToken = { ...path, tokenId: first.tokenId }
    expect((await scimConnections.revokeToken({ token: org.token, path: firstToken })).status).toBe(204)
    expect((await scimConnections.revokeToken({ token: org.token, path: firstToken })).status).toBe(204)
    const refused = await directory(first.token)("GET", "/Users")
    expect(refused.status).toBe(401)
    expect(refused.body).toMatchObject({ status: "401" })
    expect((await directory(second.token)("GET", "/Users")).status).toBe(200)
    const after = ok(await scimConnections.listTokens({ token: org.token, path }), 200).items
    expect(after.find((item) => item.id === first.tokenId)).toMatchObject({ state: "revoked", revokedAt: expect.any(String) })

    const unknown = await scimConnections.revokeToken({ token: org.token, path: { ...path, tokenId: "sct_01jc0000000000000000000000" } })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toMatchObject({ error: "scim_token_not_found" })
    // A token of another connection of the organization is not this connection's.
    const other = await Http.scimDirectory(server.url, org.token)
    expect((await scimConnections.revokeToken({ token: org.token, path: { ...path, tokenId: other.tokenId } })).status).toBe(404)
    expect((await scimCall(other.base, other.token)("GET", "/Users")).status).toBe(200)
  })

  it("stop working when they expire", async () => {
    const org = await Http.owner(server.url)
    const directory = await Http.scimDirectory(server.url, org.token)
    const path = { connectionId: directory.connection.id }
    const expiresAt = new Date(clock.currentTimeMillisUnsafe() + 60 * 60_000).toISOString()
    const issued = ok(await scimConnections.createToken({ token: org.token, path, payload: { name: "an hour", expiresAt } }), 201)
    expect(issued.scimToken.expiresAt).toBe(expiresAt)
    expect((await scimCall(directory.base, issued.token)("GET", "/Users")).status).toBe(200)
    clock.advance("61 minutes")
    try {
      expect((await scimCall(directory.base, issued.token)("GET", "/Users")).status).toBe(401)
      const token = ok(await scimConnections.listTokens({ token: org.token, path }), 200).items.find((item) => item.id === issued.scimToken.id)
      expect(token?.state).toBe("expired")
      expect(ok(await scimConnections.get({ token: org.token, path }), 200).connection.activeTokens).toBe(1)
    } finally {
      clock.advance("-61 minutes")
    }
  })
})

describe("SCIM provisioning log and health", () => {
  it("records each write with its outcome, counts failures since the last success, and filters", async () => {
    const org = await Http.owner(server.url)
    const directory = await Http.scimDirectory(server.url, org.token)
    const scim = scimCall(directory.base, directory.token)
    const body = newUser()
    const created = await provisionUser(directory, body)
    expect((await scim("GET", `/Users/${created.id}`)).status).toBe(200)
    expect((await scim("POST", "/Users", { ...body, externalId: "another" })).status).toBe(409)
    expect((await scim("PATCH", `/Users/${created.id}`, { schemas: [PATCH_OP], Operations: [{ op: "replace", path: "nickName", value: 1 }] })).status).toBe(400)

    const path = { connectionId: directory.connection.id }
    const health = async () => ok(await scimConnections.get({ token: org.token, path }), 200).connection
    let connection = await health()
    expect(connection.users).toBe(1)
    expect(connection.health).toMatchObject({ lastSuccessAt: expect.any(String), lastFailureAt: expect.any(String), unresolvedFailures: 2 })

    const events = ok(await scimConnections.listEvents({ token: org.token, path }), 200).items
    // Newest first; the read (GET) is not recorded.
    expect(events.map((event) => [event.method, event.status, event.outcome, event.resourceType])).toEqual([
      ["PATCH", 400, "refused", "User"],
      ["POST", 409, "refused", "User"],
      ["POST", 201, "succeeded", "User"]
    ])
    expect(events[2]).toMatchObject({
      path: `${directory.base}/Users`,
      resourceId: created.id,
      tokenId: directory.tokenId,
      scimType: null,
      detail: null
    })
    expect(events[1]).toMatchObject({ scimType: "uniqueness", detail: expect.any(String), resourceId: null })
    const refused = ok(await scimConnections.listEvents({ token: org.token, path, query: { outcome: "refused", limit: "1" } }), 200)
    expect(refused.items.map((event) => event.status)).toEqual([400])
    const cursor = `${refused.nextCursor}`
    const next = ok(await scimConnections.listEvents({ token: org.token, path, query: { outcome: "refused", limit: "1", cursor } }), 200)
    expect(next.items.map((event) => event.status)).toEqual([409])
    expect(next.nextCursor).toBeNull()
    expect(ok(await scimConnections.listEvents({ token: org.token, path, query: { outcome: "succeeded" } }), 200).items).toHaveLength(1)
    expect(ok(await scimConnections.listEvents({ token: org.token, path, query: { resourceType: "Group" } }), 200).items).toEqual([])
    // A cursor of other filters is refused.
    expect((await scimConnections.listEvents({ token: org.token, path, query: { outcome: "succeeded", cursor } })).status).toBe(400)

    // A later success clears the count.
    expect((await scim("PATCH", `/Users/${created.id}`, { schemas: [PATCH_OP], Operations: [{ op: "replace", path: "displayName", value: "Pat" }] })).status).toBe(200)
    connection = await health()
    expect(connection.health.unresolvedFailures).toBe(0)
  })
})

describe("SCIM settings and reconcile", () => {
  it("apply a new group mapping mode and role rules at once, and answer what they changed", async () => {
    const org = await Http.owner(server.url)
    const directory = await Http.scimDirectory(server.url, org.token)
    const alice = (await provisionUser(directory, newUser())).id
    const group = ok(await scimGroups.create({
      token: directory.token,
      path: { connectionId: directory.connection.id },
      headers: SCIM_JSON,
      payload: { schemas: [GROUP], displayName: "Platform admins", members: [{ value: alice }] }
    }), 201)
    const teamsNow = async () => ok(await teams.list({ token: org.token }), 200).items
    expect(await teamsNow()).toEqual([])

    const path = { connectionId: directory.connection.id }
    const changed = await scimConnections.update({
      token: org.token,
      path,
      payload: { groupMappingMode: "create_teams", roleRules: [{ group: "platform ADMINS", role: "admin" }] }
    })
    expect(changed.status, changed.text).toBe(200)
    const { connection, reconciled } = ok(changed, 200)
    expect(connection).toMatchObject({ groupMappingMode: "create_teams", groups: 1, users: 1 })
    const [team] = await teamsNow()
    expect(team).toMatchObject({ name: "Platform admins", scimConnectionId: directory.connection.id, memberIds: [alice] })
    expect(reconciled?.repaired).toEqual(expect.arrayContaining([
      { resourceType: "Group", resourceId: group.id, change: `team ${team.id} now maps the group` },
      { resourceType: "User", resourceId: alice, change: "role set to admin by the connection's group rules" }
    ]))
    const member = ok(await members.get({ token: org.token, path: { memberId: alice } }), 200)
    expect(member.member.role).toBe("admin")

    // Nothing drifted: reconcile repairs nothing, and says what it compared.
    const quiet = ok(await scimConnections.reconcile({ token: org.token, path }), 200)
    expect(quiet).toEqual({ checked: 2, repaired: [] })

    // Drift made behind the directory's back (a team member row gone) is repaired and recorded.
    await server.sql((sql) => sql`DELETE FROM team_members WHERE organization_id = ${org.organization.id} AND team_id = ${team.id}`)
    const repaired = ok(await scimConnections.reconcile({ token: org.token, path }), 200)
    expect(repaired.repaired).toEqual([{ resourceType: "Group", resourceId: group.id, change: "team members: 1 added, 0 removed" }])
    expect((await teamsNow())[0].memberIds).toEqual([alice])
    const [event] = ok(await scimConnections.listEvents({ token: org.token, path, query: { limit: "1" } }), 200).items
    expect(event).toMatchObject({ method: "POST", path: `/v1/scim/connections/${directory.connection.id}/reconcile`, resourceType: null, tokenId: null, outcome: "succeeded" })

    // Back to metadata_only: the team is released (kept, no longer the directory's).
    const released = ok(await scimConnections.update({ token: org.token, path, payload: { groupMappingMode: "metadata_only" } }), 200)
    expect(released.reconciled?.repaired).toContainEqual({ resourceType: "Group", resourceId: group.id, change: "team released: the connection maps no teams" })
    expect((await teamsNow())[0]).toMatchObject({ id: team.id, scimConnectionId: null })
  })

  it("deleting a connection stops its tokens and keeps the organization's members and teams", async () => {
    const org = await Http.owner(server.url)
    const directory = await Http.scimDirectory(server.url, org.token, { groupMappingMode: "create_teams" })
    const scim = scimCall(directory.base, directory.token)
    const alice = (await provisionUser(directory, newUser())).id
    const path = { connectionId: directory.connection.id }
    ok(await scimGroups.create({
      token: directory.token,
      path,
      headers: SCIM_JSON,
      payload: { schemas: [GROUP], displayName: "Research", members: [{ value: alice }] }
    }), 201)
    expect((await scimConnections.delete({ token: org.token, path })).status).toBe(204)
    expect((await scim("GET", "/Users")).status).toBe(401)
    const [team] = ok(await teams.list({ token: org.token }), 200).items
    expect(team).toMatchObject({ name: "Research", scimConnectionId: null, memberIds: [alice] })
    // An ordinary team again: admins may edit it.
    expect((await teams.update({ token: org.token, path: { teamId: team.id }, payload: { name: "Research (kept)" } })).status).toBe(200)
    expect((await members.get({ token: org.token, path: { memberId: alice } })).status).toBe(200)
  })
})

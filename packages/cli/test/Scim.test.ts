/**
 * `orgplane scim`: the CLI in-process (see Harness.ts) against one real server on the enterprise plan. The issue's
 * "Done" scenario: an admin sets up a connection and a token with the CLI alone, Okta's and Entra's recorded
 * sequences provision through it, and the CLI shows members and teams appear, change and go. The server is
 * RealServer.ts's.
 */
import {
  CreatedScimToken,
  MemberPage,
  ScimConnectionPage,
  ScimConnectionResponse,
  ScimEventPage,
  ScimReconcileReport,
  ScimTokenPage,
  TeamPage,
  UpdatedScimConnection
} from "@orgplane/schema"
import * as Schema from "effect/Schema"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as Scim from "../../../packages/testkit/src/scim/index.js"
import * as Wait from "../../../packages/testkit/src/Wait.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, type Result } from "./Harness.js"
import * as RealServer from "./RealServer.js"

let server: RealServer.RealServer
/** The instance's operator organization (its owner redeemed the setup token), whose owner may change other organizations' plans. */
let operator: Awaited<ReturnType<typeof Http.operator>>

beforeAll(async () => {
  server = await RealServer.start({ ORGPLANE_DEFAULT_PLAN: "enterprise", ORGPLANE_SETUP_TOKEN: Http.SETUP_TOKEN })
  operator = await Http.operator(server.url, "Operator")
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

const as = (token: string) => ({ ORGPLANE_URL: server.url, ORGPLANE_TOKEN: token })

/** The command's `--json` output, decoded with the API's own schema (so a wrong shape fails here). */
const decoded = <A, I>(schema: Schema.Codec<A, I>, result: Result): A => {
  expect(result.code, result.stderr).toBe(0)
  return Schema.decodeUnknownSync(schema)(json(result))
}

/** An organization with an owner, an admin and a member, and a CLI for its admin. */
const organization = async (name: string) => {
  const org = await Http.staffed(server.url, name)
  const { cli } = await fresh()
  const run = (args: ReadonlyArray<string>) => cli(args, as(org.admin.token))
  return { ...org, cli, run }
}

/** The steps of a recorded sequence from the step named `first` through the one named `last`, ids filled in. */
const steps = (sequence: ReadonlyArray<Scim.Step>, first: string | null, last: string | null, ids: Readonly<Record<string, string>> = {}) => {
  const index = (name: string) => {
    const found = sequence.findIndex((step) => step.name === name)
    if (found === -1) throw new Error(`no step named "${name}"`)
    return found
  }
  const slice = sequence.slice(first === null ? 0 : index(first), last === null ? sequence.length : index(last) + 1)
  const text = Object.entries(ids).reduce((filled, [name, value]) => filled.replaceAll(`\${${name}}`, value), JSON.stringify(slice))
  return JSON.parse(text) as ReadonlyArray<Scim.Step>
}

/** Replays steps as the directory sends them; every one must pass. */
const replay = async (target: Scim.Target, part: ReadonlyArray<Scim.Step>) => {
  const results = await Scim.replay(target, part)
  expect(results.filter((result) => result.status !== "passed")).toEqual([])
  expect(results).toHaveLength(part.length)
}

describe("orgplane scim", { timeout: 180_000 }, () => {
  it("the Done scenario: an admin sets up create_teams from the CLI; Okta's and Entra's sequences provision, change and deprovision members and teams", async () => {
    const org = await organization("Directory Org")
    const mark = Math.random().toString(36).slice(2, 8)
    const okta = Scim.Okta.sequence(mark)
    const entra = Scim.Entra.sequence(mark)
    const oktaGroup = `Okta Group ${mark}`
    const entraGroup = `Entra Group ${mark}`

    // Set up from the CLI alone: the connection (a team per group; the Okta group's members are admins) and a token.
    const created = decoded(
      ScimConnectionResponse,
      await org.run(["scim", "connections", "create", "Okta", "--group-mapping", "create_teams", "--role-rule", `${oktaGroup}=admin`, "--json"])
    ).connection
    expect(created).toMatchObject({
      name: "Okta",
      groupMappingMode: "create_teams",
      defaultRole: "member",
      roleRules: [{ group: oktaGroup, role: "admin" }],
      users: 0,
      groups: 0,
      activeTokens: 0,
      health: { lastSuccessAt: null, lastFailureAt: null, unresolvedFailures: 0 },
      createdByOrgMembershipId: org.admin.membership.id,
      baseUrl: `${server.url}/scim/v2/${created.id}`
    })
    const issued = decoded(CreatedScimToken, await org.run(["scim", "tokens", "create", created.id, "--name", "Okta 2026", "--json"]))
    expect(issued.baseUrl).toBe(created.baseUrl)
    expect(issued.token).toMatch(/^scim_/)
    expect(issued.scimToken).toMatchObject({ connectionId: created.id, name: "Okta 2026", state: "active", expiresAt: null, revokedAt: null })
    const directory: Scim.Target = { baseUrl: issued.baseUrl, token: issued.token }
    // The sequences are replayed in parts, checked through the CLI between them; together, every step once.
    const played: Array<string> = []
    const play = async (part: ReadonlyArray<Scim.Step>) => {
      await replay(directory, part)
      played.push(...part.map((step) => step.name))
    }

    const connection = async () => decoded(ScimConnectionResponse, await org.run(["scim", "connections", "get", created.id, "--json"])).connection
    const member = async (email: string) =>
      decoded(MemberPage, await org.run(["members", "list", "--include-removed", "--all", "--json"])).items.find((entry) => entry.email === email)
    const team = async (name: string) => decoded(TeamPage, await org.run(["teams", "list", "--all", "--json"])).items.find((entry) => entry.name === name)

    // Okta: the user appears as a member with the default role.
    const oktaEmail = `okta.${mark}@example.com`
    await play(steps(okta, null, "look the user up by userName: found"))
    const oktaMember = (await member(oktaEmail))!
    expect(oktaMember).toMatchObject({ role: "member", suspendedAt: null, removedAt: null, name: "Ada Okta" })
    const user = oktaMember.id
    expect(await connection()).toMatchObject({ users: 1, groups: 0, activeTokens: 1, health: { unresolvedFailures: 0, lastFailureAt: null } })
    expect((await connection()).health.lastSuccessAt).not.toBeNull()

    // A profile update keeps the member; deactivation suspends it, reactivation restores it.
    await play(steps(okta, "profile update: PUT full replace with password", "the user reads deactivated", { user }))
    expect((await member(oktaEmail))?.suspendedAt).not.toBeNull()
    await play(steps(okta, "reactivate: replace with value {active:true}", "the user reads active", { user }))
    expect((await member(oktaEmail))?.suspendedAt).toBeNull()

    // Group push: a team named after the group, managed by the connection, holding the member, whom the rule makes an admin.
    await play(steps(okta, "group push: create the group", "group push: create the group", { user }))
    const groupEvents = decoded(ScimEventPage, await org.run(["scim", "events", created.id, "--resource-type", "Group", "--json"])).items
    expect(groupEvents.map((event) => [event.method, event.status, event.outcome])).toEqual([["POST", 201, "succeeded"]])
    const group = groupEvents[0]!.resourceId!
    expect(group).toMatch(/^scg_/)
    expect(await team(oktaGroup)).toMatchObject({ memberIds: [], scimConnectionId: created.id })
    await play(steps(okta, "group push: add the member", "the group lists the member", { user, group }))
    expect(await team(oktaGroup)).toMatchObject({ memberIds: [user], scimConnectionId: created.id })
    expect((await member(oktaEmail))?.role).toBe("admin")
    expect(await connection()).toMatchObject({ users: 1, groups: 1 })

    // The member leaves the group: out of the team, back to the default role.
    await play(steps(okta, "group push: remove the member", "the group has no member", { user, group }))
    expect((await team(oktaGroup))?.memberIds).toEqual([])
    expect((await member(oktaEmail))?.role).toBe("member")

    // Renamed by PUT with the member: the team follows the name; the rule names the old one, so no admin.
    await play(steps(okta, "group push: rename by PUT", "find the renamed group", { user, group }))
    expect(await team(oktaGroup)).toBeUndefined()
    const renamed = (await team(`${oktaGroup} renamed`))!
    expect(renamed).toMatchObject({ memberIds: [user], scimConnectionId: created.id })
    expect((await member(oktaEmail))?.role).toBe("member")

    // Okta stops pushing the group: the team stays, released as an ordinary team with its members.
    await play(steps(okta, "stop pushing the group: delete it", "the group is gone", { user, group }))
    expect(await team(`${oktaGroup} renamed`)).toMatchObject({ id: renamed.id, memberIds: [user], scimConnectionId: null })
    expect(await connection()).toMatchObject({ users: 1, groups: 0 })

    // Unassigned: Okta deactivates (never deletes); the member stays listed, suspended.
    await play(steps(okta, "unassign: deactivate the user (Okta never deletes)", null, { user }))
    expect(await member(oktaEmail)).toMatchObject({ id: user, removedAt: null })
    expect((await member(oktaEmail))?.suspendedAt).not.toBeNull()

    // Entra on the same connection: the user and the manager appear.
    const entraEmail = `entra.${mark}@example.com`
    const managerEmail = `entra.manager.${mark}@example.com`
    await play(steps(entra, null, "create the manager"))
    const entraUser = (await member(entraEmail))!.id
    const manager = (await member(managerEmail))!.id
    expect(await member(entraEmail)).toMatchObject({ role: "member", suspendedAt: null })
    expect(await member(managerEmail)).toMatchObject({ role: "member", suspendedAt: null })
    expect(await connection()).toMatchObject({ users: 3 })
    const ids = { user: entraUser, manager }

    // Entra's soft delete ("False") suspends, "True" restores.
    await play(steps(entra, "capitalised ops: Replace displayName, Add title", "the user reads inactive", ids))
    expect((await member(entraEmail))?.suspendedAt).not.toBeNull()
    await play(steps(entra, 'reactivate: Replace active with the string "True"', "create the group", ids))
    expect((await member(entraEmail))?.suspendedAt).toBeNull()

    const entraGroupId = decoded(ScimEventPage, await org.run(["scim", "events", created.id, "--resource-type", "Group", "--limit", "1", "--json"]))
      .items[0]!.resourceId!
    const entraIds = { ...ids, group: entraGroupId }
    await play(steps(entra, "Add members by path", "the group has both members", entraIds))
    expect(await team(entraGroup)).toMatchObject({ memberIds: [entraUser, manager].sort(), scimConnectionId: created.id })
    await play(steps(entra, "the group read with excludedAttributes=members", "one member left", entraIds))
    expect((await team(entraGroup))?.memberIds).toEqual([entraUser])
    await play(steps(entra, "Replace the group's displayName", "find the renamed group by displayName eq", entraIds))
    expect(await team(`${entraGroup} renamed`)).toMatchObject({ memberIds: [entraUser], scimConnectionId: created.id })

    // Suspended again (a real boolean with ?aadOptscim062020), then out of the group: the team is empty.
    await play(steps(entra, "?aadOptscim062020: lowercase ops and a real boolean", "?aadOptscim062020: the group has no member", entraIds))
    expect((await member(entraEmail))?.suspendedAt).not.toBeNull()
    expect((await team(`${entraGroup} renamed`))?.memberIds).toEqual([])

    // Hard delete: the members are removed (kept suspended, so they cannot come back by themselves); the team is released.
    await play(steps(entra, "?aadOptscim062020: Remove the manager", null, entraIds))
    for (const email of [entraEmail, managerEmail]) {
      const gone = (await member(email))!
      expect(gone.removedAt).not.toBeNull()
      expect(gone.suspendedAt).not.toBeNull()
    }
    const current = decoded(MemberPage, await org.run(["members", "list", "--all", "--json"])).items.map((entry) => entry.id)
    expect(current).not.toContain(entraUser)
    expect(current).not.toContain(manager)
    expect(current).toContain(user)
    expect(await team(`${entraGroup} renamed`)).toMatchObject({ memberIds: [], scimConnectionId: null })
    expect(await connection()).toMatchObject({ users: 1, groups: 0, activeTokens: 1, health: { unresolvedFailures: 0 } })

    expect(played).toEqual([...okta, ...entra].map((step) => step.name))

    // The event log: every write, newest first, without queries; reads are not recorded.
    const log = decoded(ScimEventPage, await org.run(["scim", "events", created.id, "--all", "--json"])).items
    expect(log.every((event) => event.outcome === "succeeded" && event.tokenId === issued.scimToken.id)).toBe(true)
    expect(log.some((event) => event.method === "GET")).toBe(false)
    expect(log.some((event) => event.path.includes("?"))).toBe(false)
    expect(log.at(-1)).toMatchObject({ method: "POST", path: `/scim/v2/${created.id}/Users`, resourceType: "User", resourceId: user, status: 201 })
    expect(log[0]).toMatchObject({ method: "DELETE", path: `/scim/v2/${created.id}/Users/${manager}`, resourceId: manager, status: 204 })
    const users = decoded(ScimEventPage, await org.run(["scim", "events", created.id, "--resource-type", "User", "--all", "--json"])).items
    expect(users.length + decoded(ScimEventPage, await org.run(["scim", "events", created.id, "--resource-type", "Group", "--all", "--json"])).items.length)
      .toBe(log.length)
    expect(decoded(ScimEventPage, await org.run(["scim", "events", created.id, "--outcome", "refused", "--json"])).items).toEqual([])

    // Human output: the connection with its base URL, mode, counts and health; the event table.
    const shown = await org.run(["scim", "connections", "get", created.id])
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain(`Okta (${created.id})`)
    expect(shown.stdout).toMatch(new RegExp(`base URL +${created.baseUrl.replaceAll(".", "\\.")}`))
    expect(shown.stdout).toMatch(/group mapping +create_teams/)
    expect(shown.stdout).toContain(`"${oktaGroup}" → admin`)
    expect(shown.stdout).toMatch(/provisioned +1 user, 0 groups/)
    expect(shown.stdout).toMatch(/active tokens +1/)
    expect(shown.stdout).toMatch(/last success +\d{4}-\d\d-\d\dT/)
    expect(shown.stdout).toMatch(/health +no unresolved failures/)
    const table = await org.run(["scim", "events", created.id, "--limit", "2"])
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toMatch(/^AT +REQUEST +RESOURCE +STATUS +OUTCOME +ERROR$/m)
    expect(table.stdout).toContain(`DELETE /Users/${manager}`)
    expect(table.stderr).toContain(`More events: orgplane scim events ${created.id} --cursor `)

    // Okta never deletes: an admin removes the suspended member by hand when they leave for good.
    expect((await org.run(["members", "remove", user])).code).toBe(0)
    expect((await member(oktaEmail))?.removedAt).not.toBeNull()
  })

  it("tokens: shown once with the base URL, several at a time to rotate; a revoked token's next request is 401", async () => {
    const org = await organization("Token Org")
    const { connection } = decoded(ScimConnectionResponse, await org.run(["scim", "connections", "create", "Entra ID", "--json"]))
    expect(connection).toMatchObject({ groupMappingMode: "metadata_only", defaultRole: "member", roleRules: [] })

    const first = await org.run(["scim", "tokens", "create", connection.id, "--name", "first"])
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toContain(`SCIM base URL  ${connection.baseUrl}`)
    expect(first.stdout).toContain("shown only this once")
    expect(first.stdout).toContain("Okta")
    expect(first.stdout).toContain("Microsoft Entra ID")
    const firstToken = /token +(scim_\S+)/.exec(first.stdout)![1]!
    const firstDirectory = Scim.client({ baseUrl: connection.baseUrl, token: firstToken })
    expect((await firstDirectory.get("/Users")).status).toBe(200)

    // Rotation: a second token works beside the first until the first is revoked.
    const second = decoded(CreatedScimToken, await org.run(["scim", "tokens", "create", connection.id, "--name", "second", "--expires-at", "2099-01-01T00:00:00Z", "--json"]))
    expect(second.scimToken.expiresAt?.toISOString()).toBe("2099-01-01T00:00:00.000Z")
    const secondDirectory = Scim.client({ baseUrl: second.baseUrl, token: second.token })
    expect((await secondDirectory.get("/Users")).status).toBe(200)
    const tokens = async () => decoded(ScimTokenPage, await org.run(["scim", "tokens", "list", connection.id, "--json"])).items
    await Wait.until(async () => (await tokens()).every((token) => token.lastUsedAt !== null), "both tokens' lastUsedAt")
    expect((await tokens()).map((token) => [token.name, token.state])).toEqual([["second", "active"], ["first", "active"]])
    expect(decoded(ScimConnectionResponse, await org.run(["scim", "connections", "get", connection.id, "--json"])).connection.activeTokens).toBe(2)

    const firstId = (await tokens()).find((token) => token.name === "first")!.id
    const revoked = await org.run(["scim", "tokens", "revoke", connection.id, firstId, "--json"])
    expect(revoked.code, revoked.stderr).toBe(0)
    expect(json(revoked)).toEqual({ ok: true, connection: connection.id, revoked: firstId })
    const refused = await firstDirectory.get("/Users")
    expect(refused.status).toBe(401)
    expect(refused.body).toMatchObject({ schemas: [Scim.URN.error], status: "401" })
    expect((await secondDirectory.get("/Users")).status).toBe(200)
    const table = await org.run(["scim", "tokens", "list", connection.id])
    expect(table.stdout).toMatch(/^ID +NAME +STATE +CREATED +EXPIRES +LAST USED$/m)
    expect(table.stdout).toMatch(new RegExp(`^${firstId} +first +revoked `, "m"))
    expect(table.stdout).toContain("2099-01-01T00:00:00Z")
    expect(table.stdout).not.toContain("scim_")
    // Revoking again changes nothing; a token of no connection of the organization is 404.
    expect((await org.run(["scim", "tokens", "revoke", connection.id, firstId])).code).toBe(0)
    const unknown = await org.run(["scim", "tokens", "revoke", connection.id, "sct_00000000000000000000000000"])
    expect(unknown.code).toBe(4)
    expect(unknown.stderr).toContain("scim_token_not_found")
    const past = await org.run(["scim", "tokens", "create", connection.id, "--name", "late", "--expires-at", "2001-01-01T00:00:00Z"])
    expect(past.code).toBe(1)
    expect(past.stderr).toContain("expiresAt")

    // Deleting the connection stops the directory at once.
    const deleted = await org.run(["scim", "connections", "delete", connection.id, "--json"])
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(json(deleted)).toEqual({ ok: true, deleted: connection.id })
    expect((await secondDirectory.get("/Users")).status).toBe(401)
    const gone = await org.run(["scim", "connections", "get", connection.id])
    expect(gone.code).toBe(4)
    expect(gone.stderr).toContain("scim_connection_not_found")
  })

  it("update applies settings at once, reconcile repairs drift, the event log and health show refused writes", async () => {
    const org = await organization("Reconcile Org")
    const { connection } = decoded(ScimConnectionResponse, await org.run(["scim", "connections", "create", "Okta", "--role-rule", "Engineering=admin", "--json"]))
    const { token } = decoded(CreatedScimToken, await org.run(["scim", "tokens", "create", connection.id, "--name", "okta", "--json"]))
    const directory = Scim.client({ baseUrl: connection.baseUrl, token })
    const email = `pat.${Math.random().toString(36).slice(2, 8)}@example.com`
    const body = { schemas: [Scim.URN.user], userName: email, emails: [{ value: email, primary: true }], name: { givenName: "Pat", familyName: "Doe" }, active: true }
    const created = (await directory.post("/Users", body)).body
    expect(created).toMatchObject({ id: expect.any(String) })
    const user = typeof created === "object" && created !== null && "id" in created ? String(created.id) : ""
    expect((await directory.post("/Groups", { schemas: [Scim.URN.group], displayName: "Engineering", externalId: "eng", members: [{ value: user }] })).status).toBe(201)
    const role = async () => decoded(MemberPage, await org.run(["members", "list", "--all", "--json"])).items.find((entry) => entry.id === user)?.role
    const team = async (name: string) => decoded(TeamPage, await org.run(["teams", "list", "--all", "--json"])).items.find((entry) => entry.name === name)
    expect(await role()).toBe("admin")
    expect(await team("Engineering")).toBeUndefined()

    // Nothing drifted yet.
    const clean = await org.run(["scim", "reconcile", connection.id])
    expect(clean.code, clean.stderr).toBe(0)
    expect(clean.stdout).toMatch(/^Nothing had drifted \(checked 2 SCIM Users and Groups\)\.$/m)

    // A role changed by hand is set back by the rules.
    expect((await org.cli(["members", "role", user, "member"], as(org.owner.token))).code).toBe(0)
    const repaired = await org.run(["scim", "reconcile", connection.id])
    expect(repaired.code, repaired.stderr).toBe(0)
    expect(repaired.stdout).toContain("repaired 1:")
    expect(repaired.stdout).toContain(`User ${user}: role set to admin by the connection's group rules`)
    expect(await role()).toBe("admin")
    const again = decoded(ScimReconcileReport, await org.run(["scim", "reconcile", connection.id, "--json"]))
    expect(again).toEqual({ checked: 2, repaired: [] })

    // A new mode applies at once: the group gets its team; a rename alone reconciles nothing.
    const renamed = decoded(UpdatedScimConnection, await org.run(["scim", "connections", "update", connection.id, "--name", "Okta (prod)", "--json"]))
    expect(renamed).toMatchObject({ connection: { name: "Okta (prod)", groupMappingMode: "metadata_only" }, reconciled: null })
    const moded = await org.run(["scim", "connections", "update", connection.id, "--group-mapping", "create_teams"])
    expect(moded.code, moded.stderr).toBe(0)
    expect(moded.stdout).toMatch(/group mapping +create_teams/)
    expect(moded.stdout).toMatch(/Applied at once\. Checked 2 SCIM Users and Groups; repaired 2:\n {2}Group (scg_\S+): team tem_\S+ now maps the group\n {2}Group \1: team members: 1 added, 0 removed$/m)
    expect(await team("Engineering")).toMatchObject({ memberIds: [user], scimConnectionId: connection.id })
    const cleared = decoded(UpdatedScimConnection, await org.run(["scim", "connections", "update", connection.id, "--clear-role-rules", "--json"]))
    expect(cleared.connection.roleRules).toEqual([])
    const listed = decoded(ScimConnectionPage, await org.run(["scim", "connections", "list", "--json"])).items
    expect(listed.map((entry) => [entry.name, entry.users, entry.groups, entry.activeTokens])).toEqual([["Okta (prod)", 1, 1, 1]])
    const listTable = await org.run(["scim", "connections", "list"])
    expect(listTable.stdout).toMatch(/^ID +NAME +MODE +USERS +GROUPS +TOKENS +LAST SUCCESS +FAILURES +BASE URL$/m)
    expect(listTable.stdout).toContain(connection.baseUrl)

    // A write the server refuses is an event and counts against the connection's health until a write succeeds.
    const duplicate = await directory.post("/Users", body)
    expect(duplicate.status).toBe(409)
    const refused = decoded(ScimEventPage, await org.run(["scim", "events", connection.id, "--outcome", "refused", "--json"])).items
    expect(refused).toMatchObject([{ method: "POST", path: `/scim/v2/${connection.id}/Users`, status: 409, outcome: "refused", scimType: "uniqueness", resourceId: null }])
    const unhealthy = await org.run(["scim", "connections", "get", connection.id])
    expect(unhealthy.stdout).toContain(`1 write refused or failed since the last success`)
    expect(unhealthy.stdout).toContain(`see 'orgplane scim events ${connection.id}'`)
    const eventTable = await org.run(["scim", "events", connection.id, "--outcome", "refused"])
    expect(eventTable.stdout).toMatch(/POST \/Users +- +409 +refused +uniqueness: /)
    // An admin's reconcile is logged, but the health is the directory's: the failure stays unresolved.
    const before = decoded(ScimConnectionResponse, await org.run(["scim", "connections", "get", connection.id, "--json"])).connection.health
    expect(before.unresolvedFailures).toBe(1)
    expect((await org.run(["scim", "reconcile", connection.id])).code).toBe(0)
    expect(decoded(ScimConnectionResponse, await org.run(["scim", "connections", "get", connection.id, "--json"])).connection.health).toEqual(before)
    expect(decoded(ScimEventPage, await org.run(["scim", "events", connection.id, "--limit", "1", "--json"])).items).toMatchObject([
      { tokenId: null, method: "POST", path: `/v1/scim/connections/${connection.id}/reconcile`, resourceType: null, status: 200, outcome: "succeeded" }
    ])
    expect((await directory.patch(`/Users/${user}`, { schemas: [Scim.URN.patchOp], Operations: [{ op: "replace", path: "title", value: "Lead" }] })).status).toBe(200)
    expect(decoded(ScimConnectionResponse, await org.run(["scim", "connections", "get", connection.id, "--json"])).connection.health)
      .toMatchObject({ unresolvedFailures: 0 })
  })

  it("answers 402 off the enterprise plan and 403 to members; a name taken is 409", async () => {
    const org = await organization("Team Plan Org")
    const { connection } = decoded(ScimConnectionResponse, await org.run(["scim", "connections", "create", "Okta", "--json"]))
    const taken = await org.run(["scim", "connections", "create", "OKTA"])
    expect(taken.code).toBe(1)
    expect(taken.stderr).toContain("scim_connection_exists")
    const member = await org.cli(["scim", "connections", "list"], as(org.member.token))
    expect(member.code).toBe(1)
    expect(member.stderr).toContain("insufficient_role")

    Http.expectStatus("plan", await Http.request(server.url, "PATCH", `/v1/admin/organizations/${org.organizationId}/plan`, {
      token: operator.token,
      body: { plan: "team" }
    }), 200)
    for (const args of [["scim", "connections", "list"], ["scim", "connections", "get", connection.id], ["scim", "reconcile", connection.id]]) {
      const refused = await org.run(args)
      expect(refused.code, args.join(" ")).toBe(1)
      expect(refused.stderr).toContain("enterprise_plan_required (402)")
    }
    const asJson = await org.run(["scim", "tokens", "create", connection.id, "--name", "x", "--json"])
    expect(asJson.code).toBe(1)
    expect(JSON.parse(asJson.stderr)).toMatchObject({ error: "enterprise_plan_required", feature: "scim" })
  })

  it("bad inputs are usage errors, before anything is sent", async () => {
    const org = await organization("Usage Org")
    const id = "scc_00000000000000000000000000"
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["scim", "connections", "get", "okta"], "connectionId"],
      [["scim", "connections", "create", "   "], "name"],
      [["scim", "connections", "create", "Okta", "--group-mapping", "teams"], "metadata_only, create_teams, link_by_external_key"],
      [["scim", "connections", "create", "Okta", "--default-role", "owner"], "admin, member"],
      [["scim", "connections", "create", "Okta", "--role-rule", "Admins"], "<group>=<role>"],
      [["scim", "connections", "create", "Okta", "--role-rule", "Admins=owner"], "--role-rule"],
      [["scim", "connections", "create", "Okta", "--role-rule", "=admin"], "--role-rule"],
      [["scim", "connections", "update", id], "give something to change"],
      [["scim", "connections", "update", id, "--role-rule", "a=admin", "--clear-role-rules"], "not both"],
      [["scim", "tokens", "create", id], "name"],
      [["scim", "tokens", "create", id, "--name", "x", "--expires-at", "tomorrow"], "--expires-at"],
      [["scim", "tokens", "revoke", id, "apk_00000000000000000000000000"], "tokenId"],
      [["scim", "events", id, "--outcome", "maybe"], "succeeded, refused, failed"],
      [["scim", "events", id, "--resource-type", "Team"], "User, Group"],
      [["scim", "reconcile"], "connectionId"]
    ]
    for (const [args, mention] of cases) {
      const result = await org.run(args)
      expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(2)
      expect(result.stderr, args.join(" ")).toContain(mention)
    }
    const asJson = await org.run(["scim", "connections", "create", "Okta", "--role-rule", "Admins", "--json"])
    expect(asJson.code).toBe(2)
    expect(JSON.parse(asJson.stderr)).toMatchObject({ error: "usage" })
    expect(decoded(ScimConnectionPage, await org.run(["scim", "connections", "list", "--json"])).items).toEqual([])
    const help = await org.run(["scim", "--help"])
    expect(help.stdout).toMatch(/COMMANDS\n {2}connections +The organization's SCIM connections/)
  })
})

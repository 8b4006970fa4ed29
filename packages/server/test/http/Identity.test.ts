import { Actions } from "@orgplane/schema"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
/** The server's clock: API keys expire when it is moved past their expiry. */
const clock = new TestServer.ShiftedClock()
beforeAll(async () => {
  server = await TestServer.start({ bootstrapPerHour: 1000, clock })
})
afterAll(() => server.close())

const { post } = Http.verbs(() => server.url)
const api = calls(() => server.url)

/** A provisional workspace claimed by an owner and a member. */
const staffedWorkspace = async () => {
  const workspace = await api.bootstrap.workspace({ payload: { workspaceName: "Team", claimRoles: ["owner", "member"] } })
  expect(workspace.status).toBe(201)
  const [ownerLink, memberLink] = ok(workspace, 201).claimLinks
  const owner = await Http.signUp(server.url, "Claimer")
  const member = await Http.signUp(server.url, "Member")
  expect((await api.bootstrap.acceptClaim({ token: owner.token, payload: { token: ownerLink.token } })).status).toBe(200)
  expect((await api.bootstrap.acceptClaim({ token: member.token, payload: { token: memberLink.token } })).status).toBe(200)
  return { organizationId: ok(workspace, 201).organization.id, owner, member }
}

describe("sign-up and sign-in", () => {
  it("signs up, then signs in with the same password", async () => {
    const user = await Http.signUp(server.url, "Ann")
    expect(user.token).toMatch(/^ops_[A-Za-z0-9_-]{43}$/)
    const signIn = await api.users.signIn({ payload: { email: user.email.toUpperCase(), password: user.password } })
    expect(signIn.status).toBe(200)
    expect(ok(signIn, 200).user).toEqual(user.user)
    expect(ok(signIn, 200).session.token).not.toBe(user.token)
  })

  it("rejects a second account for the same email, whatever its case", async () => {
    const user = await Http.signUp(server.url, "Dup")
    const again = await api.users.signUp({ payload: { email: user.email.toUpperCase(), password: "another password", name: "Dup" } })
    expect(again.status).toBe(409)
    expect(again.body).toEqual({ error: "email_taken", message: "An account with this email already exists." })
  })

  it("answers a wrong password and an unknown email identically", async () => {
    const user = await Http.signUp(server.url, "Bob")
    const wrong = await api.users.signIn({ payload: { email: user.email, password: "not the password" } })
    const unknown = await api.users.signIn({ payload: { email: "nobody@example.com", password: "not the password" } })
    expect(wrong.status).toBe(401)
    expect(unknown.status).toBe(401)
    expect(wrong.body).toEqual({ error: "unauthorized", reason: "invalid_credentials", message: "Wrong email or password." })
    expect(unknown.text).toBe(wrong.text)
  })

  it("signs out: the token stops working, other sessions keep working", async () => {
    const user = await Http.signUp(server.url, "Cy")
    const other = ok(await api.users.signIn({ payload: { email: user.email, password: user.password } }), 200)
    const out = await api.users.signOut({ token: user.token })
    expect(out.status).toBe(204)
    expect((await api.users.me({ token: user.token })).status).toBe(401)
    expect((await api.users.me({ token: other.session.token })).status).toBe(200)
  })
})

describe("organizations and the active organization", () => {
  it("a new user has no organization until they create one, and becomes its owner", async () => {
    const user = await Http.signUp(server.url, "Dee")
    const before = await api.users.me({ token: user.token })
    expect(before.body).toEqual({
      user: user.user,
      organization: null,
      membership: null,
      // Without an organization, no action of the policy table.
      credential: { type: "session", id: expect.stringMatching(/^ses_/), scopes: null, readOnly: false, actions: [] }
    })
    const created = await api.organizations.create({ token: user.token, payload: { name: "Dee's" } })
    expect(created.status).toBe(201)
    expect(ok(created, 201).organization).toMatchObject({ name: "Dee's", plan: "free", provisional: false })
    expect(ok(created, 201).organization.id).toMatch(/^org_[0-7][0-9a-hjkmnp-tv-z]{25}$/)
    expect(ok(created, 201).membership.id).toHaveLength(29)
    expect(ok(created, 201).membership).toMatchObject({ role: "owner", userId: user.user.id })
    const after = ok(await api.users.me({ token: user.token }), 200)
    expect(after.organization?.id).toBe(ok(created, 201).organization.id)
    // Its owner now: every action of the table.
    expect(after.credential.actions).toEqual(Actions)
  })

  it("switches between own organizations, and not into another's", async () => {
    const user = await Http.owner(server.url, "First")
    const second = ok(await api.organizations.create({ token: user.token, payload: { name: "Second" } }), 201)
    expect(ok(await api.users.me({ token: user.token }), 200).organization?.id).toBe(second.organization.id)
    const back = await api.users.switchOrganization({ token: user.token, payload: { organizationId: user.organization.id } })
    expect(back.status).toBe(200)
    expect(ok(back, 200).organization?.id).toBe(user.organization.id)
    const stranger = await Http.owner(server.url, "Elsewhere")
    const denied = await api.users.switchOrganization({ token: user.token, payload: { organizationId: stranger.organization.id } })
    expect(denied.status).toBe(404)
    expect(denied.body).toEqual({ error: "organization_not_found", message: "No such organization, or you are not a member of it." })
  })

  it("a member without an organization gets organization_not_found from organization routes", async () => {
    const user = await Http.signUp(server.url, "Lonely")
    const response = await api.apiKeys.list({ token: user.token })
    expect(response.status).toBe(404)
    expect(response.body).toMatchObject({
      error: "organization_not_found",
      message: expect.stringMatching(/^You are not a member of any organization: create one with POST \/v1\/organizations/)
    })
  })
})

describe("API keys", () => {
  it("are shown once, stored hashed, and act as their creator in their organization", async () => {
    const owner = await Http.owner(server.url, "Keys")
    const created = await api.apiKeys.create({ token: owner.token, payload: { name: "ci", scopes: ["apiKeys.manage"] } })
    expect(created.status).toBe(201)
    expect(ok(created, 201).key).toMatch(/^opk_/)
    expect(ok(created, 201).apiKey.prefix).toBe(ok(created, 201).key.slice(0, 12))
    const me = await api.users.me({ apiKey: ok(created, 201).key })
    expect(me.status).toBe(200)
    expect(ok(me, 200).organization?.id).toBe(owner.organization.id)
    expect(ok(me, 200).membership?.id).toBe(owner.membership.id)
    const listed = await api.apiKeys.list({ apiKey: ok(created, 201).key })
    expect(ok(listed, 200).items.map((key) => key.id)).toEqual([ok(created, 201).apiKey.id])
    expect(JSON.stringify(listed.body)).not.toContain(ok(created, 201).key)
  })

  it("stay scoped to their organization when the user switches the session's organization", async () => {
    const owner = await Http.owner(server.url, "Scoped")
    const key = ok(await api.apiKeys.create({ token: owner.token, payload: { name: "scoped" } }), 201).key
    await api.organizations.create({ token: owner.token, payload: { name: "Other" } })
    expect(ok(await api.users.me({ token: owner.token }), 200).organization?.name).toBe("Other")
    expect(ok(await api.users.me({ apiKey: key }), 200).organization?.id).toBe(owner.organization.id)
  })

  it("cannot act as a person: no sign-out, no new organization, no claim", async () => {
    const owner = await Http.owner(server.url, "Robots")
    const key = ok(await api.apiKeys.create({ token: owner.token, payload: { name: "bot" } }), 201).key
    for (const path of ["/v1/auth/sign-out", "/v1/organizations"]) {
      const response = await post(path, { apiKey: key, body: path === "/v1/organizations" ? { name: "Nope" } : undefined })
      expect(response.status, path).toBe(403)
      expect(response.body).toMatchObject({ reason: "session_required" })
    }
  })

  it("stop working once revoked, and answer 404 when revoked twice", async () => {
    const owner = await Http.owner(server.url, "Revoke")
    const created = ok(await api.apiKeys.create({ token: owner.token, payload: { name: "temp" } }), 201)
    const revoke = await api.apiKeys.revoke({ path: { apiKeyId: created.apiKey.id }, token: owner.token })
    expect(revoke.status).toBe(204)
    expect((await api.users.me({ apiKey: created.key })).status).toBe(401)
    const again = await api.apiKeys.revoke({ path: { apiKeyId: created.apiKey.id }, token: owner.token })
    expect(again.status).toBe(404)
  })

  it("may revoke themselves, and their member may leave or step down with them: the check at commit allows a change to the caller's own standing", async () => {
    const org = await Http.staffed(server.url, "Self")
    const own = ok(await api.apiKeys.create({ token: org.admin.token, payload: { name: "self", scopes: ["apiKeys.manage"] } }), 201)
    expect((await api.apiKeys.revoke({ path: { apiKeyId: own.apiKey.id }, apiKey: own.key })).status).toBe(204)
    expect((await api.users.me({ apiKey: own.key })).status).toBe(401)
    const owners = ok(await api.apiKeys.create({ token: org.owner.token, payload: { name: "owner's", scopes: ["members.manageOwners", "members.changeRole", "members.leave"] } }), 201)
    // A second owner, so that the first may step down.
    expect((await api.members.changeRole({ path: { memberId: org.admin.membership.id }, token: org.owner.token, payload: { role: "owner" } })).status).toBe(200)
    const steppedDown = await api.members.changeRole({ path: { memberId: org.owner.membership.id }, apiKey: owners.key, payload: { role: "admin" } })
    expect(steppedDown.status).toBe(200)
    // Now an admin, the first owner leaves with the same key.
    const left = await api.members.remove({ path: { memberId: org.owner.membership.id }, apiKey: owners.key })
    expect(left.status).toBe(204)
    expect((await api.users.me({ apiKey: owners.key })).status).toBe(401)
  })

  it("stop working when they expire, and cannot be created already expired", async () => {
    const owner = await Http.owner(server.url, "Expiry")
    const now = clock.currentTimeMillisUnsafe()
    const past = await api.apiKeys.create({ token: owner.token, payload: { name: "old", expiresAt: new Date(now - 1000).toISOString() } })
    expect(past.status).toBe(400)
    expect(invalid(past).details[0].path).toEqual(["expiresAt"])
    const soon = ok(await api.apiKeys.create({ token: owner.token, payload: { name: "soon", expiresAt: new Date(now + 60_000).toISOString() } }), 201)
    expect((await api.users.me({ apiKey: soon.key })).status).toBe(200)
    clock.advance("55 seconds")
    expect((await api.users.me({ apiKey: soon.key })).status).toBe(200)
    clock.advance("6 seconds")
    expect((await api.users.me({ apiKey: soon.key })).status).toBe(401)
  })

  it("of another organization answer 404, exactly like missing ones", async () => {
    const alice = await Http.owner(server.url, "Alice Co")
    const bob = await Http.owner(server.url, "Bob Co")
    const bobs = ok(await api.apiKeys.create({ token: bob.token, payload: { name: "bob" } }), 201)
    const response = await api.apiKeys.revoke({ path: { apiKeyId: bobs.apiKey.id }, token: alice.token })
    expect(response.status).toBe(404)
    expect(response.body).toEqual({ error: "api_key_not_found", message: "API key not found." })
    expect((await api.users.me({ apiKey: bobs.key })).status).toBe(200)
    expect(ok(await api.apiKeys.list({ token: alice.token }), 200).items).toEqual([])
  })

  it("page newest first with an opaque cursor", async () => {
    const owner = await Http.owner(server.url, "Pages")
    const ids: Array<string> = []
    for (const name of ["a", "b", "c", "d", "e"]) {
      ids.push(ok(await api.apiKeys.create({ token: owner.token, payload: { name } }), 201).apiKey.id)
    }
    const seen: Array<string> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page = await api.apiKeys.list({ query: { limit: "2", ...(cursor ? { cursor } : {}) }, token: owner.token })
      expect(page.status).toBe(200)
      seen.push(...ok(page, 200).items.map((key) => key.id))
      cursor = ok(page, 200).nextCursor
      pages++
    } while (cursor !== null)
    expect(pages).toBe(3)
    expect(seen).toEqual([...ids].reverse())
  })

  it("are for owners and admins: a member gets 403 insufficient_role", async () => {
    const { member, owner } = await staffedWorkspace()
    const denied = await api.apiKeys.create({ token: member.token, payload: { name: "mine" } })
    expect(denied.status).toBe(403)
    expect(denied.body).toEqual({ reason: "insufficient_role", message: "This action requires the admin role or higher (apiKeys.manage)." })
    expect((await api.apiKeys.list({ token: member.token })).status).toBe(403)
    expect((await api.apiKeys.create({ token: owner.token, payload: { name: "owner's" } })).status).toBe(201)
  })
})

describe("bootstrap", () => {
  it("creates a provisional workspace with one claim link per role, and no credential", async () => {
    const response = await api.bootstrap.workspace({ payload: { workspaceName: "Agent Space", claimRoles: ["owner", "admin"], ownerEmail: "boss@example.com" } })
    expect(response.status).toBe(201)
    const body = ok(response, 201)
    expect(body.organization).toMatchObject({ name: "Agent Space", provisional: true })
    expect(body.claimLinks.map((link) => link.role)).toEqual(["owner", "admin"])
    const [owner, admin] = body.claimLinks
    expect(owner.url).toContain(`token=${owner.token}`)
    expect(owner.url).toContain("email=boss%40example.com")
    expect(admin.url).not.toContain("email=")
    expect(new Date(owner.expiresAt).getTime() - clock.currentTimeMillisUnsafe()).toBeGreaterThan(23.9 * 3600_000)
    expect(Object.keys(body).sort()).toEqual(["claimLinks", "ok", "organization", "setup"])
  })

  it("a claim makes the person a member with its role, once, and the workspace stops being provisional", async () => {
    const workspace = await api.bootstrap.workspace({ payload: { workspaceName: "Claim Me" } })
    const [link] = ok(workspace, 201).claimLinks
    expect(link.role).toBe("owner")
    const person = await Http.signUp(server.url, "Taker")
    const accepted = await api.bootstrap.acceptClaim({ token: person.token, payload: { token: link.token } })
    expect(accepted.status).toBe(200)
    expect(ok(accepted, 200).organization).toMatchObject({ id: ok(workspace, 201).organization.id, provisional: false })
    expect(ok(accepted, 200).membership).toMatchObject({ role: "owner", userId: person.user.id })
    const me = ok(await api.users.me({ token: person.token }), 200)
    expect(me.organization?.id).toBe(ok(workspace, 201).organization.id)
    const other = await Http.signUp(server.url, "Late")
    const reused = await api.bootstrap.acceptClaim({ token: other.token, payload: { token: link.token } })
    expect(reused.status).toBe(404)
    expect(reused.body).toMatchObject({ error: "claim_not_found" })
    // The workspace's own log has both, each naming the workspace (and the claim, the membership it made).
    const events = ok(await api.audit.listEvents({ query: { action: "workspace.*" }, token: person.token }), 200).items
    const organization = { type: "organization", id: ok(workspace, 201).organization.id }
    expect(events.map((event) => [event.action, event.actor.type, event.targets])).toEqual([
      ["workspace.claim.accept", "user", [organization, { type: "member", id: ok(accepted, 200).membership.id }]],
      ["workspace.bootstrap", "anonymous", [organization]]
    ])
  })

  it("keeps the placeholder owner until the owner claim is redeemed, and always asks for one", async () => {
    const noOwner = await api.bootstrap.workspace({ payload: { workspaceName: "Ownerless", claimRoles: ["member"] } })
    expect(noOwner.status).toBe(400)
    expect(invalid(noOwner).details).toEqual([{ path: ["claimRoles"], message: "must include owner: a workspace always has an owner" }])

    const workspace = ok(await api.bootstrap.workspace({ payload: { workspaceName: "Later", claimRoles: ["member", "owner"] } }), 201)
    const [memberLink, ownerLink] = workspace.claimLinks
    const member = await Http.signUp(server.url, "Early")
    const first = ok(await api.bootstrap.acceptClaim({ token: member.token, payload: { token: memberLink.token } }), 200)
    expect(first.organization.provisional).toBe(true)
    const owners = ok(await api.members.list({ query: { role: "owner" }, token: member.token }), 200)
    expect(owners.items).toHaveLength(1)
    // A plain member sees the placeholder's name (none), not its user id or email (the directory's: MemberDirectory.test.ts).
    expect(owners.items[0]).toMatchObject({ name: null, role: "owner" })

    const owner = await Http.signUp(server.url, "Boss")
    const second = ok(await api.bootstrap.acceptClaim({ token: owner.token, payload: { token: ownerLink.token } }), 200)
    expect(second.organization.provisional).toBe(false)
    const after = ok(await api.members.list({ query: { role: "owner" }, token: owner.token }), 200)
    expect(after.items.map((m) => m.userId)).toEqual([owner.user.id])
  })

  it("a claim never lowers a role: the owner who redeems a member link stays owner", async () => {
    const workspace = ok(await api.bootstrap.workspace({ payload: { workspaceName: "Both Links", claimRoles: ["owner", "member"] } }), 201)
    const [ownerLink, memberLink] = workspace.claimLinks
    const person = await Http.signUp(server.url, "Double")
    expect((await api.bootstrap.acceptClaim({ token: person.token, payload: { token: ownerLink.token } })).status).toBe(200)
    const second = await api.bootstrap.acceptClaim({ token: person.token, payload: { token: memberLink.token } })
    expect(second.status).toBe(200)
    expect(ok(second, 200).membership.role).toBe("owner")
    const owners = ok(await api.members.list({ query: { role: "owner" }, token: person.token }), 200)
    expect(owners.items.map((m) => m.userId)).toEqual([person.user.id])
  })

  it("rejects claims by API key and unknown tokens", async () => {
    const owner = await Http.owner(server.url, "Keyed")
    const key = ok(await api.apiKeys.create({ token: owner.token, payload: { name: "k" } }), 201).key
    const workspace = ok(await api.bootstrap.workspace({ payload: { workspaceName: "Keyed Claim" } }), 201)
    const byKey = await api.bootstrap.acceptClaim({ apiKey: key, payload: { token: workspace.claimLinks[0].token } })
    expect(byKey.status).toBe(403)
    expect(byKey.body).toMatchObject({ reason: "session_required" })
    const unknown = await api.bootstrap.acceptClaim({ token: owner.token, payload: { token: "opc_" + "x".repeat(43) } })
    expect(unknown.status).toBe(404)
  })

  it("validates its body", async () => {
    const response = await api.bootstrap.workspace({ payload: { workspaceName: "x", claimRoles: ["owner", "owner"] } })
    expect(response.status).toBe(400)
    expect(invalid(response).details.map((detail) => detail.path)).toEqual([["workspaceName"], ["claimRoles"]])
  })
})

describe("the operator organization", () => {
  it("is the organization whose owner redeemed the setup token, and its members other than owners and admins are not operators", async () => {
    const fresh = await TestServer.start()
    try {
      const operator = await Http.operator(fresh.url, "Operator")
      const customer = await Http.owner(fresh.url, "Customer")
      const path = `/v1/admin/organizations/${customer.organization.id}/plan`
      const changed = await calls(fresh.url).admin.setPlan({ path: { organizationId: customer.organization.id }, token: operator.token, payload: { plan: "enterprise" } })
      expect(changed.status).toBe(200)
      expect(ok(changed, 200).organization.plan).toBe("enterprise")
      // The operator's log records it, naming the customer and the plan before and after.
      const logged = ok(await calls(fresh.url).audit.listEvents({ query: { action: "organization.plan.update", targetId: customer.organization.id }, token: operator.token }), 200)
      expect(logged.items.map((event) => event.changes)).toEqual([
        { before: { plan: customer.organization.plan }, after: { plan: "enterprise" }, changedFields: ["plan"] }
      ])
      const denied = await calls(fresh.url).admin.setPlan({ path: { organizationId: operator.organization.id }, token: customer.token, payload: { plan: "enterprise" } })
      expect(denied.status).toBe(403)
      expect(denied.body).toEqual({ reason: "operator_only", message: "Only owners and admins of the operator organization may do this." })
      const missing = await calls(fresh.url).admin.setPlan({ path: { organizationId: "org_01m7xsja0me4fs7gc4ed0s22av" }, token: operator.token, payload: { plan: "team" } })
      expect(missing.status).toBe(404)
      expect(missing.body).toMatchObject({ error: "organization_not_found" })
      const badPlan = await Http.request(fresh.url, "PATCH", path, { token: operator.token, body: { plan: "platinum" } })
      expect(badPlan.status).toBe(400)
    } finally {
      await fresh.close()
    }
  })
})

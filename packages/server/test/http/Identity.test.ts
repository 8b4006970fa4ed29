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

const { get, post } = Http.verbs(() => server.url)

/** A provisional workspace claimed by an owner and a member. */
const staffedWorkspace = async () => {
  const workspace = await post("/v1/bootstrap/workspace", { body: { workspaceName: "Team", claimRoles: ["owner", "member"] } })
  expect(workspace.status).toBe(201)
  const [ownerLink, memberLink] = workspace.body.claimLinks
  const owner = await Http.signUp(server.url, "Claimer")
  const member = await Http.signUp(server.url, "Member")
  expect((await post("/v1/bootstrap/claims/accept", { token: owner.token, body: { token: ownerLink.token } })).status).toBe(200)
  expect((await post("/v1/bootstrap/claims/accept", { token: member.token, body: { token: memberLink.token } })).status).toBe(200)
  return { organizationId: workspace.body.organization.id as string, owner, member }
}

describe("sign-up and sign-in", () => {
  it("signs up, then signs in with the same password", async () => {
    const user = await Http.signUp(server.url, "Ann")
    expect(user.token).toMatch(/^ops_[A-Za-z0-9_-]{43}$/)
    const signIn = await post("/v1/auth/sign-in", { body: { email: user.email.toUpperCase(), password: user.password } })
    expect(signIn.status).toBe(200)
    expect(signIn.body.user).toEqual(user.user)
    expect(signIn.body.session.token).not.toBe(user.token)
  })

  it("rejects a second account for the same email, whatever its case", async () => {
    const user = await Http.signUp(server.url, "Dup")
    const again = await post("/v1/auth/sign-up", { body: { email: user.email.toUpperCase(), password: "another password", name: "Dup" } })
    expect(again.status).toBe(409)
    expect(again.body).toEqual({ error: "email_taken", message: "An account with this email already exists." })
  })

  it("answers a wrong password and an unknown email identically", async () => {
    const user = await Http.signUp(server.url, "Bob")
    const wrong = await post("/v1/auth/sign-in", { body: { email: user.email, password: "not the password" } })
    const unknown = await post("/v1/auth/sign-in", { body: { email: "nobody@example.com", password: "not the password" } })
    expect(wrong.status).toBe(401)
    expect(unknown.status).toBe(401)
    expect(wrong.body).toEqual({ error: "unauthorized", reason: "invalid_credentials", message: "Wrong email or password." })
    expect(unknown.text).toBe(wrong.text)
  })

  it("signs out: the token stops working, other sessions keep working", async () => {
    const user = await Http.signUp(server.url, "Cy")
    const other = await post("/v1/auth/sign-in", { body: { email: user.email, password: user.password } })
    const out = await post("/v1/auth/sign-out", { token: user.token })
    expect(out.status).toBe(204)
    expect((await get("/v1/me", { token: user.token })).status).toBe(401)
    expect((await get("/v1/me", { token: other.body.session.token })).status).toBe(200)
  })
})

describe("organizations and the active organization", () => {
  it("a new user has no organization until they create one, and becomes its owner", async () => {
    const user = await Http.signUp(server.url, "Dee")
    const before = await get("/v1/me", { token: user.token })
    expect(before.body).toEqual({
      user: user.user,
      organization: null,
      membership: null,
      credential: { type: "session", id: expect.stringMatching(/^ses_/), scopes: null, readOnly: false }
    })
    const created = await post("/v1/organizations", { token: user.token, body: { name: "Dee's" } })
    expect(created.status).toBe(201)
    expect(created.body.organization).toMatchObject({ name: "Dee's", plan: "free", provisional: false })
    expect(created.body.organization.id).toMatch(/^org_[0-7][0-9a-hjkmnp-tv-z]{25}$/)
    expect(created.body.membership.id).toHaveLength(29)
    expect(created.body.membership).toMatchObject({ role: "owner", userId: user.user.id })
    const after = await get("/v1/me", { token: user.token })
    expect(after.body.organization.id).toBe(created.body.organization.id)
  })

  it("switches between own organizations, and not into another's", async () => {
    const user = await Http.owner(server.url, "First")
    const second = await post("/v1/organizations", { token: user.token, body: { name: "Second" } })
    expect((await get("/v1/me", { token: user.token })).body.organization.id).toBe(second.body.organization.id)
    const back = await post("/v1/me/active-organization", { token: user.token, body: { organizationId: user.organization.id } })
    expect(back.status).toBe(200)
    expect(back.body.organization.id).toBe(user.organization.id)
    const stranger = await Http.owner(server.url, "Elsewhere")
    const denied = await post("/v1/me/active-organization", { token: user.token, body: { organizationId: stranger.organization.id } })
    expect(denied.status).toBe(404)
    expect(denied.body).toEqual({ error: "organization_not_found", message: "No such organization, or you are not a member of it." })
  })

  it("a member without an organization gets organization_not_found from organization routes", async () => {
    const user = await Http.signUp(server.url, "Lonely")
    const response = await get("/v1/api-keys", { token: user.token })
    expect(response.status).toBe(404)
    expect(response.body.error).toBe("organization_not_found")
    expect(response.body.message).toMatch(/^You are not a member of any organization: create one with POST \/v1\/organizations/)
  })
})

describe("API keys", () => {
  it("are shown once, stored hashed, and act as their creator in their organization", async () => {
    const owner = await Http.owner(server.url, "Keys")
    const created = await post("/v1/api-keys", { token: owner.token, body: { name: "ci", scopes: ["apiKeys.manage"] } })
    expect(created.status).toBe(201)
    expect(created.body.key).toMatch(/^opk_/)
    expect(created.body.apiKey.prefix).toBe(created.body.key.slice(0, 12))
    const me = await get("/v1/me", { apiKey: created.body.key })
    expect(me.status).toBe(200)
    expect(me.body.organization.id).toBe(owner.organization.id)
    expect(me.body.membership.id).toBe(owner.membership.id)
    const listed = await get("/v1/api-keys", { apiKey: created.body.key })
    expect(listed.body.items.map((key: any) => key.id)).toEqual([created.body.apiKey.id])
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key)
  })

  it("stay scoped to their organization when the user switches the session's organization", async () => {
    const owner = await Http.owner(server.url, "Scoped")
    const key = (await post("/v1/api-keys", { token: owner.token, body: { name: "scoped" } })).body.key
    await post("/v1/organizations", { token: owner.token, body: { name: "Other" } })
    expect((await get("/v1/me", { token: owner.token })).body.organization.name).toBe("Other")
    expect((await get("/v1/me", { apiKey: key })).body.organization.id).toBe(owner.organization.id)
  })

  it("cannot act as a person: no sign-out, no new organization, no claim", async () => {
    const owner = await Http.owner(server.url, "Robots")
    const key = (await post("/v1/api-keys", { token: owner.token, body: { name: "bot" } })).body.key
    for (const path of ["/v1/auth/sign-out", "/v1/organizations"]) {
      const response = await post(path, { apiKey: key, body: path === "/v1/organizations" ? { name: "Nope" } : undefined })
      expect(response.status, path).toBe(403)
      expect(response.body.reason).toBe("session_required")
    }
  })

  it("stop working once revoked, and answer 404 when revoked twice", async () => {
    const owner = await Http.owner(server.url, "Revoke")
    const created = (await post("/v1/api-keys", { token: owner.token, body: { name: "temp" } })).body
    const revoke = await Http.request(server.url, "DELETE", `/v1/api-keys/${created.apiKey.id}`, { token: owner.token })
    expect(revoke.status).toBe(204)
    expect((await get("/v1/me", { apiKey: created.key })).status).toBe(401)
    const again = await Http.request(server.url, "DELETE", `/v1/api-keys/${created.apiKey.id}`, { token: owner.token })
    expect(again.status).toBe(404)
  })

  it("may revoke themselves, and their member may leave or step down with them: the check at commit allows a change to the caller's own standing", async () => {
    const org = await Http.staffed(server.url, "Self")
    const own = (await post("/v1/api-keys", { token: org.admin.token, body: { name: "self", scopes: ["apiKeys.manage"] } })).body
    expect((await Http.request(server.url, "DELETE", `/v1/api-keys/${own.apiKey.id}`, { apiKey: own.key })).status).toBe(204)
    expect((await get("/v1/me", { apiKey: own.key })).status).toBe(401)
    const owners = (await post("/v1/api-keys", {
      token: org.owner.token,
      body: { name: "owner's", scopes: ["members.manageOwners", "members.changeRole", "members.leave"] }
    })).body
    // A second owner, so that the first may step down.
    expect((await Http.request(server.url, "PATCH", `/v1/members/${org.admin.membership.id}`, { token: org.owner.token, body: { role: "owner" } })).status).toBe(200)
    const steppedDown = await Http.request(server.url, "PATCH", `/v1/members/${org.owner.membership.id}`, { apiKey: owners.key, body: { role: "admin" } })
    expect(steppedDown.status).toBe(200)
    // Now an admin, the first owner leaves with the same key.
    const left = await Http.request(server.url, "DELETE", `/v1/members/${org.owner.membership.id}`, { apiKey: owners.key })
    expect(left.status).toBe(204)
    expect((await get("/v1/me", { apiKey: owners.key })).status).toBe(401)
  })

  it("stop working when they expire, and cannot be created already expired", async () => {
    const owner = await Http.owner(server.url, "Expiry")
    const now = clock.currentTimeMillisUnsafe()
    const past = await post("/v1/api-keys", { token: owner.token, body: { name: "old", expiresAt: new Date(now - 1000).toISOString() } })
    expect(past.status).toBe(400)
    expect(past.body.details[0].path).toEqual(["expiresAt"])
    const soon = await post("/v1/api-keys", {
      token: owner.token,
      body: { name: "soon", expiresAt: new Date(now + 60_000).toISOString() }
    })
    expect((await get("/v1/me", { apiKey: soon.body.key })).status).toBe(200)
    clock.advance("55 seconds")
    expect((await get("/v1/me", { apiKey: soon.body.key })).status).toBe(200)
    clock.advance("6 seconds")
    expect((await get("/v1/me", { apiKey: soon.body.key })).status).toBe(401)
  })

  it("of another organization answer 404, exactly like missing ones", async () => {
    const alice = await Http.owner(server.url, "Alice Co")
    const bob = await Http.owner(server.url, "Bob Co")
    const bobs = (await post("/v1/api-keys", { token: bob.token, body: { name: "bob" } })).body
    const response = await Http.request(server.url, "DELETE", `/v1/api-keys/${bobs.apiKey.id}`, { token: alice.token })
    expect(response.status).toBe(404)
    expect(response.body).toEqual({ error: "api_key_not_found", message: "API key not found." })
    expect((await get("/v1/me", { apiKey: bobs.key })).status).toBe(200)
    expect((await get("/v1/api-keys", { token: alice.token })).body.items).toEqual([])
  })

  it("page newest first with an opaque cursor", async () => {
    const owner = await Http.owner(server.url, "Pages")
    const ids: Array<string> = []
    for (const name of ["a", "b", "c", "d", "e"]) {
      ids.push((await post("/v1/api-keys", { token: owner.token, body: { name } })).body.apiKey.id)
    }
    const seen: Array<string> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: any = await get(`/v1/api-keys?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { token: owner.token })
      expect(page.status).toBe(200)
      seen.push(...page.body.items.map((key: any) => key.id))
      cursor = page.body.nextCursor
      pages++
    } while (cursor !== null)
    expect(pages).toBe(3)
    expect(seen).toEqual([...ids].reverse())
  })

  it("are for owners and admins: a member gets 403 insufficient_role", async () => {
    const { member, owner } = await staffedWorkspace()
    const denied = await post("/v1/api-keys", { token: member.token, body: { name: "mine" } })
    expect(denied.status).toBe(403)
    expect(denied.body).toEqual({ reason: "insufficient_role", message: "This action requires the admin role or higher (apiKeys.manage)." })
    expect((await get("/v1/api-keys", { token: member.token })).status).toBe(403)
    expect((await post("/v1/api-keys", { token: owner.token, body: { name: "owner's" } })).status).toBe(201)
  })
})

describe("bootstrap", () => {
  it("creates a provisional workspace with one claim link per role, and no credential", async () => {
    const response = await post("/v1/bootstrap/workspace", {
      body: { workspaceName: "Agent Space", claimRoles: ["owner", "admin"], ownerEmail: "boss@example.com" }
    })
    expect(response.status).toBe(201)
    expect(response.body.organization).toMatchObject({ name: "Agent Space", provisional: true })
    expect(response.body.claimLinks.map((link: any) => link.role)).toEqual(["owner", "admin"])
    const [owner, admin] = response.body.claimLinks
    expect(owner.url).toContain(`token=${owner.token}`)
    expect(owner.url).toContain("email=boss%40example.com")
    expect(admin.url).not.toContain("email=")
    expect(new Date(owner.expiresAt).getTime() - clock.currentTimeMillisUnsafe()).toBeGreaterThan(23.9 * 3600_000)
    expect(Object.keys(response.body).sort()).toEqual(["claimLinks", "ok", "organization", "setup"])
  })

  it("a claim makes the person a member with its role, once, and the workspace stops being provisional", async () => {
    const workspace = await post("/v1/bootstrap/workspace", { body: { workspaceName: "Claim Me" } })
    const [link] = workspace.body.claimLinks
    expect(link.role).toBe("owner")
    const person = await Http.signUp(server.url, "Taker")
    const accepted = await post("/v1/bootstrap/claims/accept", { token: person.token, body: { token: link.token } })
    expect(accepted.status).toBe(200)
    expect(accepted.body.organization).toMatchObject({ id: workspace.body.organization.id, provisional: false })
    expect(accepted.body.membership).toMatchObject({ role: "owner", userId: person.user.id })
    const me = await get("/v1/me", { token: person.token })
    expect(me.body.organization.id).toBe(workspace.body.organization.id)
    const other = await Http.signUp(server.url, "Late")
    const reused = await post("/v1/bootstrap/claims/accept", { token: other.token, body: { token: link.token } })
    expect(reused.status).toBe(404)
    expect(reused.body.error).toBe("claim_not_found")
    // The workspace's own log has both, each naming the workspace (and the claim, the membership it made).
    const events = (await get("/v1/audit/events?action=workspace.*", { token: person.token })).body.items
    const organization = { type: "organization", id: workspace.body.organization.id }
    expect(events.map((event: any) => [event.action, event.actor.type, event.targets])).toEqual([
      ["workspace.claim.accept", "user", [organization, { type: "member", id: accepted.body.membership.id }]],
      ["workspace.bootstrap", "anonymous", [organization]]
    ])
  })

  it("keeps the placeholder owner until the owner claim is redeemed, and always asks for one", async () => {
    const noOwner = await post("/v1/bootstrap/workspace", { body: { workspaceName: "Ownerless", claimRoles: ["member"] } })
    expect(noOwner.status).toBe(400)
    expect(noOwner.body.details).toEqual([{ path: ["claimRoles"], message: "must include owner: a workspace always has an owner" }])

    const workspace = await post("/v1/bootstrap/workspace", { body: { workspaceName: "Later", claimRoles: ["member", "owner"] } })
    const [memberLink, ownerLink] = workspace.body.claimLinks
    const member = await Http.signUp(server.url, "Early")
    const first = await post("/v1/bootstrap/claims/accept", { token: member.token, body: { token: memberLink.token } })
    expect(first.body.organization.provisional).toBe(true)
    const owners = await get("/v1/members?role=owner", { token: member.token })
    expect(owners.body.items).toHaveLength(1)
    // A plain member sees the placeholder's name (none), not its user id or email (the directory's: MemberDirectory.test.ts).
    expect(owners.body.items[0]).toMatchObject({ name: null, role: "owner" })

    const owner = await Http.signUp(server.url, "Boss")
    const second = await post("/v1/bootstrap/claims/accept", { token: owner.token, body: { token: ownerLink.token } })
    expect(second.body.organization.provisional).toBe(false)
    const after = await get("/v1/members?role=owner", { token: owner.token })
    expect(after.body.items.map((m: any) => m.userId)).toEqual([owner.user.id])
  })

  it("a claim never lowers a role: the owner who redeems a member link stays owner", async () => {
    const workspace = await post("/v1/bootstrap/workspace", { body: { workspaceName: "Both Links", claimRoles: ["owner", "member"] } })
    const [ownerLink, memberLink] = workspace.body.claimLinks
    const person = await Http.signUp(server.url, "Double")
    expect((await post("/v1/bootstrap/claims/accept", { token: person.token, body: { token: ownerLink.token } })).status).toBe(200)
    const second = await post("/v1/bootstrap/claims/accept", { token: person.token, body: { token: memberLink.token } })
    expect(second.status).toBe(200)
    expect(second.body.membership.role).toBe("owner")
    const owners = await get("/v1/members?role=owner", { token: person.token })
    expect(owners.body.items.map((m: any) => m.userId)).toEqual([person.user.id])
  })

  it("rejects claims by API key and unknown tokens", async () => {
    const owner = await Http.owner(server.url, "Keyed")
    const key = (await post("/v1/api-keys", { token: owner.token, body: { name: "k" } })).body.key
    const workspace = await post("/v1/bootstrap/workspace", { body: { workspaceName: "Keyed Claim" } })
    const byKey = await post("/v1/bootstrap/claims/accept", { apiKey: key, body: { token: workspace.body.claimLinks[0].token } })
    expect(byKey.status).toBe(403)
    expect(byKey.body.reason).toBe("session_required")
    const unknown = await post("/v1/bootstrap/claims/accept", { token: owner.token, body: { token: "opc_" + "x".repeat(43) } })
    expect(unknown.status).toBe(404)
  })

  it("validates its body", async () => {
    const response = await post("/v1/bootstrap/workspace", { body: { workspaceName: "x", claimRoles: ["owner", "owner"] } })
    expect(response.status).toBe(400)
    expect(response.body.details.map((detail: any) => detail.path)).toEqual([["workspaceName"], ["claimRoles"]])
  })
})

describe("the operator organization", () => {
  it("is the organization whose owner redeemed the setup token, and its members other than owners and admins are not operators", async () => {
    const fresh = await TestServer.start()
    try {
      const operator = await Http.operator(fresh.url, "Operator")
      const customer = await Http.owner(fresh.url, "Customer")
      const path = `/v1/admin/organizations/${customer.organization.id}/plan`
      const changed = await Http.request(fresh.url, "PATCH", path, { token: operator.token, body: { plan: "enterprise" } })
      expect(changed.status).toBe(200)
      expect(changed.body.organization.plan).toBe("enterprise")
      // The operator's log records it, naming the customer and the plan before and after.
      const logged = await Http.request(fresh.url, "GET", `/v1/audit/events?action=organization.plan.update&targetId=${customer.organization.id}`, { token: operator.token })
      expect(logged.body.items.map((event: any) => event.changes)).toEqual([
        { before: { plan: customer.organization.plan }, after: { plan: "enterprise" }, changedFields: ["plan"] }
      ])
      const denied = await Http.request(fresh.url, "PATCH", `/v1/admin/organizations/${operator.organization.id}/plan`, {
        token: customer.token,
        body: { plan: "enterprise" }
      })
      expect(denied.status).toBe(403)
      expect(denied.body).toEqual({ reason: "operator_only", message: "Only owners and admins of the operator organization may do this." })
      const missing = await Http.request(fresh.url, "PATCH", `/v1/admin/organizations/org_01m7xsja0me4fs7gc4ed0s22av/plan`, {
        token: operator.token,
        body: { plan: "team" }
      })
      expect(missing.status).toBe(404)
      expect(missing.body.error).toBe("organization_not_found")
      const badPlan = await Http.request(fresh.url, "PATCH", path, { token: operator.token, body: { plan: "platinum" } })
      expect(badPlan.status).toBe(400)
    } finally {
      await fresh.close()
    }
  })
})

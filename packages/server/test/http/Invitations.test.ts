import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

const { del, get, post } = Http.verbs(() => server.url)

const newEmail = () => `invitee.${Math.random().toString(36).slice(2, 10)}@example.com`
const signUpAs = (token: string) => ({ token, signUp: { name: "New Person", password: "correct horse battery" } })

describe("inviting", () => {
  it("returns the token once, and the invitation lists as pending for 7 days", async () => {
    const org = await Http.staffed(server.url)
    const email = newEmail()
    const created = await post("/v1/invitations", { token: org.admin.token, body: { email: ` ${email} `, role: "admin" } })
    expect(created.status).toBe(201)
    expect(created.body.refreshed).toBe(false)
    expect(created.body.inviteToken).toMatch(/^opi_[A-Za-z0-9_-]{43}$/)
    const invitation = created.body.invitation
    expect(invitation).toMatchObject({
      organizationId: org.organizationId,
      email,
      role: "admin",
      status: "pending",
      createdByOrgMembershipId: org.admin.membership.id,
      acceptedByOrgMembershipId: null
    })
    expect(invitation.id).toMatch(/^inv_/)
    const ttl = new Date(invitation.expiresAt).getTime() - new Date(invitation.createdAt).getTime()
    expect(ttl).toBe(7 * 24 * 3600 * 1000)

    const listed = await get("/v1/invitations?status=pending", { token: org.owner.token })
    expect(listed.body.items).toContainEqual(invitation)
    expect(JSON.stringify(listed.body)).not.toContain(created.body.inviteToken)
  })

  it("refreshes a pending invitation for the same email: 200, a new token, the old one dead", async () => {
    const org = await Http.staffed(server.url)
    const email = newEmail()
    const first = await post("/v1/invitations", { token: org.owner.token, body: { email, role: "member" } })
    const second = await post("/v1/invitations", { token: org.admin.token, body: { email: email.toUpperCase(), role: "admin" } })
    expect(second.status).toBe(200)
    expect(second.body.refreshed).toBe(true)
    expect(second.body.invitation).toMatchObject({ id: first.body.invitation.id, role: "admin", email })
    expect(second.body.inviteToken).not.toBe(first.body.inviteToken)
    const pending = await get("/v1/invitations?status=pending", { token: org.owner.token })
    expect(pending.body.items.filter((i: any) => i.email === email)).toHaveLength(1)

    const stale = await post("/v1/invitations/accept", { body: signUpAs(first.body.inviteToken) })
    expect(stale.status).toBe(404)
    expect(stale.body.error).toBe("invitation_not_found")
    const fresh = await post("/v1/invitations/accept", { body: signUpAs(second.body.inviteToken) })
    expect(fresh.status).toBe(200)
    expect(fresh.body.membership.role).toBe("admin")
  })

  it("refuses members' emails, owners as a role, bad emails, and members as inviters", async () => {
    const org = await Http.staffed(server.url)
    const existing = await post("/v1/invitations", { token: org.owner.token, body: { email: org.member.email.toUpperCase(), role: "member" } })
    expect(existing.status).toBe(409)
    expect(existing.body).toEqual({ error: "member_exists", message: "This person is already a member of the organization." })
    const bad = await post("/v1/invitations", { token: org.owner.token, body: { email: "not-an-email", role: "owner" } })
    expect(bad.status).toBe(400)
    expect(bad.body.details).toEqual([
      { path: ["email"], message: "must be an email address" },
      { path: ["role"], message: 'Expected "admin" or "member", actual "owner"' }
    ])
    const byMember = await post("/v1/invitations", { token: org.member.token, body: { email: newEmail(), role: "member" } })
    expect(byMember.status).toBe(403)
    expect(byMember.body.reason).toBe("insufficient_role")
    expect((await get("/v1/invitations", { token: org.member.token })).status).toBe(403)
  })

  it("gets one by id for owners and admins, in whatever status; another organization's answers 404 like a missing one", async () => {
    const org = await Http.staffed(server.url, "Readable")
    const created = await post("/v1/invitations", { token: org.owner.token, body: { email: newEmail(), role: "member" } })
    const id = created.body.invitation.id
    const got = Http.expectStatus("get", await get(`/v1/invitations/${id}`, { token: org.admin.token }), 200)
    expect(got).toEqual({ invitation: created.body.invitation })
    expect(JSON.stringify(got)).not.toContain(created.body.inviteToken)
    await post(`/v1/invitations/${id}/cancel`, { token: org.owner.token })
    expect((await get(`/v1/invitations/${id}`, { token: org.owner.token })).body.invitation.status).toBe("canceled")

    const refused = await get(`/v1/invitations/${id}`, { token: org.member.token })
    expect([refused.status, refused.body.reason]).toEqual([403, "insufficient_role"])
    const other = await Http.owner(server.url, "Elsewhere")
    const theirs = await get(`/v1/invitations/${id}`, { token: other.token })
    expect(theirs.status).toBe(404)
    expect(theirs.body).toEqual({ error: "invitation_not_found", message: "Invitation not found." })
  })

  it("previews by token without credentials: the organization's name, the role, the inviter's name and the expiry, no more", async () => {
    const org = await Http.staffed(server.url, "Previewed Labs")
    const email = newEmail()
    const created = await post("/v1/invitations", { token: org.admin.token, body: { email, role: "admin" } })
    const previewed = Http.expectStatus("preview", await post("/v1/invitations/preview", { body: { token: created.body.inviteToken } }), 200)
    expect(previewed).toEqual({
      organization: { name: "Previewed Labs" },
      role: "admin",
      invitedBy: { name: "Admin" },
      expiresAt: created.body.invitation.expiresAt
    })
    expect(JSON.stringify(previewed)).not.toMatch(/inv_|org_|om_|usr_|@/)
    // Previewing changes nothing: the invitation is still pending and can be accepted.
    expect((await get(`/v1/invitations/${created.body.invitation.id}`, { token: org.owner.token })).body.invitation.status).toBe("pending")

    // Unknown, canceled and accepted tokens all answer the same 404.
    const unknown = await post("/v1/invitations/preview", { body: { token: "opi_not-a-real-token" } })
    expect([unknown.status, unknown.body]).toEqual([404, { error: "invitation_not_found", message: "Invitation not found." }])
    Http.expectStatus("accept", await post("/v1/invitations/accept", { body: signUpAs(created.body.inviteToken) }), 200)
    const used = await post("/v1/invitations/preview", { body: { token: created.body.inviteToken } })
    expect([used.status, used.body.error]).toEqual([404, "invitation_not_found"])
    const canceled = await post("/v1/invitations", { token: org.owner.token, body: { email: newEmail(), role: "member" } })
    await post(`/v1/invitations/${canceled.body.invitation.id}/cancel`, { token: org.owner.token })
    expect((await post("/v1/invitations/preview", { body: { token: canceled.body.inviteToken } })).status).toBe(404)
    const bad = await post("/v1/invitations/preview", { body: { token: "" } })
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_request"])
  })

  it("previews a deleted organization's invitation as 404, like a missing one: nothing of it shows (issue 55, item 7)", async () => {
    const owner = await Http.owner(server.url, "Soon Gone")
    const created = await post("/v1/invitations", { token: owner.token, body: { email: newEmail(), role: "admin" } })
    expect(created.status).toBe(201)
    expect((await post("/v1/invitations/preview", { body: { token: created.body.inviteToken } })).status).toBe(200)
    expect((await del("/v1/organization", { token: owner.token, body: { confirmName: "Soon Gone" } })).status).toBe(200)
    const preview = await post("/v1/invitations/preview", { body: { token: created.body.inviteToken } })
    const missing = await post("/v1/invitations/preview", { body: { token: "opi_notatokenofanyinvitation0000000000000000" } })
    expect([preview.status, preview.body], preview.text).toEqual([missing.status, missing.body])
    expect(preview.status).toBe(404)
    expect((await post("/v1/invitations/accept", { body: signUpAs(created.body.inviteToken) })).status).toBe(404)
  })

  it("cancels pending invitations only; a canceled token no longer works", async () => {
    const org = await Http.staffed(server.url)
    const created = await post("/v1/invitations", { token: org.owner.token, body: { email: newEmail(), role: "member" } })
    const id = created.body.invitation.id
    const canceled = await post(`/v1/invitations/${id}/cancel`, { token: org.admin.token })
    expect(canceled.status).toBe(200)
    expect(canceled.body.invitation).toMatchObject({ id, status: "canceled" })
    const twice = await post(`/v1/invitations/${id}/cancel`, { token: org.admin.token })
    expect(twice.status).toBe(409)
    expect(twice.body).toEqual({
      error: "invitation_not_pending",
      message: "This invitation is canceled; only pending invitations can be canceled."
    })
    expect((await post("/v1/invitations/accept", { body: signUpAs(created.body.inviteToken) })).status).toBe(404)
    const unknown = await post("/v1/invitations/inv_01h455vb4pex5vsknk084sn02q/cancel", { token: org.admin.token })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toBe("invitation_not_found")
    const byStatus = await get("/v1/invitations?status=canceled", { token: org.owner.token })
    expect(byStatus.body.items.map((i: any) => i.id)).toEqual([id])
    // A new invitation for the same email is a new one, not a refresh of the canceled one.
    const again = await post("/v1/invitations", { token: org.owner.token, body: { email: created.body.invitation.email, role: "member" } })
    expect(again.status).toBe(201)
  })

  it("lists newest first with a cursor", async () => {
    const org = await Http.owner(server.url)
    const ids: Array<string> = []
    for (let i = 0; i < 5; i++) {
      ids.push((await post("/v1/invitations", { token: org.token, body: { email: newEmail(), role: "member" } })).body.invitation.id)
    }
    const seen: Array<string> = []
    let cursor: string | null = null
    do {
      const page: Http.RawResponse = await get(`/v1/invitations?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { token: org.token })
      seen.push(...page.body.items.map((i: any) => i.id))
      cursor = page.body.nextCursor
    } while (cursor)
    expect(seen).toEqual(ids.reverse())
  })
})

describe("accepting", () => {
  it("as the signed-in person with the invited email: joins with the role and switches to the organization", async () => {
    const org = await Http.staffed(server.url)
    const person = await Http.owner(server.url, "Own Org")
    const invited = await post("/v1/invitations", { token: org.owner.token, body: { email: person.email, role: "admin" } })
    const accepted = await post("/v1/invitations/accept", { token: person.token, body: { token: invited.body.inviteToken } })
    expect(accepted.status).toBe(200)
    expect(accepted.body.session).toBeNull()
    expect(accepted.body.user.id).toBe(person.user.id)
    expect(accepted.body.organization.id).toBe(org.organizationId)
    expect(accepted.body.membership).toMatchObject({ organizationId: org.organizationId, userId: person.user.id, role: "admin" })
    const me = await get("/v1/me", { token: person.token })
    expect(me.body.organization.id).toBe(org.organizationId)
    const invitation = (await get("/v1/invitations?status=accepted", { token: org.owner.token })).body.items[0]
    expect(invitation).toMatchObject({ id: invited.body.invitation.id, acceptedByOrgMembershipId: accepted.body.membership.id })

    const again = await post("/v1/invitations/accept", { token: person.token, body: { token: invited.body.inviteToken } })
    expect(again.status).toBe(404)
    const reinvite = await post("/v1/invitations", { token: org.owner.token, body: { email: person.email, role: "member" } })
    expect(reinvite.status).toBe(409)
  })

  it("by signing up in the same call, even where open sign-up is disabled", async () => {
    const closed = await TestServer.start({ signupEnabled: false })
    try {
      // Only the first account of a closed instance signs up; the others come by invitation.
      const first = await Http.owner(closed.url, "Closed")
      const signUp = await Http.request(closed.url, "POST", "/v1/auth/sign-up", {
        body: { email: newEmail(), password: "correct horse battery", name: "Walk-in" }
      })
      expect(signUp.status).toBe(403)
      expect(signUp.body.reason).toBe("signup_disabled")
      const email = newEmail()
      const invited = await Http.request(closed.url, "POST", "/v1/invitations", { token: first.token, body: { email, role: "member" } })
      const accepted = await Http.request(closed.url, "POST", "/v1/invitations/accept", { body: signUpAs(invited.body.inviteToken) })
      expect(accepted.status).toBe(200)
      expect(accepted.body.user).toMatchObject({ email, name: "New Person" })
      const signIn = await Http.request(closed.url, "POST", "/v1/auth/sign-in", { body: { email, password: "correct horse battery" } })
      expect(signIn.status).toBe(200)
    } finally {
      await closed.close()
    }
  })

  it("rejects a mismatched email, an API key, a taken email, and both credentials and sign-up at once", async () => {
    const org = await Http.staffed(server.url)
    const stranger = await Http.signUp(server.url, "Stranger")
    const email = newEmail()
    const invited = await post("/v1/invitations", { token: org.owner.token, body: { email, role: "member" } })
    const token = invited.body.inviteToken

    const mismatch = await post("/v1/invitations/accept", { token: stranger.token, body: { token } })
    expect(mismatch.status).toBe(403)
    expect(mismatch.body.reason).toBe("invitation_email_mismatch")
    const key = await post("/v1/api-keys", { token: org.owner.token, body: { name: "k" } })
    const byKey = await post("/v1/invitations/accept", { apiKey: key.body.key, body: { token } })
    expect(byKey.status).toBe(403)
    expect(byKey.body.reason).toBe("session_required")
    const both = await post("/v1/invitations/accept", { token: stranger.token, body: signUpAs(token) })
    expect(both.status).toBe(400)
    expect(both.body.details[0].path).toEqual(["signUp"])
    const nothing = await post("/v1/invitations/accept", { body: { token } })
    expect(nothing.status).toBe(401)

    const taken = await post("/v1/invitations", { token: org.owner.token, body: { email: stranger.email, role: "member" } })
    const signUpTaken = await post("/v1/invitations/accept", { body: signUpAs(taken.body.inviteToken) })
    expect(signUpTaken.status).toBe(409)
    // Not a bare email_taken: the answer says what to do (sign in and accept without signUp).
    expect(signUpTaken.body.error).toBe("account_exists")
    expect(signUpTaken.body.message).toMatch(/sign in .* accept the invitation signed in, without signUp/)
    // Nothing was used up: the right person can still accept both.
    expect((await post("/v1/invitations/accept", { token: stranger.token, body: { token: taken.body.inviteToken } })).status).toBe(200)
    const signedUp = await post("/v1/invitations/accept", { body: signUpAs(token) })
    expect(signedUp.status).toBe(200)
    expect(signedUp.body.user.email).toBe(email)
    expect(signedUp.body.session.token).toMatch(/^ops_/)
    const me = await get("/v1/me", { token: signedUp.body.session.token })
    expect(me.body.membership).toEqual(signedUp.body.membership)
  })

  it("lets a removed member back in when invited again", async () => {
    const org = await Http.staffed(server.url)
    expect((await del(`/v1/members/${org.member.membership.id}`, { token: org.owner.token })).status).toBe(204)
    const invited = await post("/v1/invitations", { token: org.owner.token, body: { email: org.member.email, role: "member" } })
    expect(invited.status).toBe(201)
    const back = await post("/v1/invitations/accept", { token: org.member.token, body: { token: invited.body.inviteToken } })
    expect(back.status).toBe(200)
    expect(back.body.membership.id).not.toBe(org.member.membership.id)
    expect((await get(`/v1/members/${org.member.membership.id}`, { token: org.owner.token })).body.member.removedAt).not.toBeNull()
  })

  it("validates its body", async () => {
    const bad = await post("/v1/invitations/accept", { body: { token: "", signUp: { name: "", password: "short" } } })
    expect(bad.status).toBe(400)
    expect(bad.body.details.map((d: any) => d.path)).toEqual([["token"], ["signUp", "name"], ["signUp", "password"]])
    expect(bad.text).not.toContain("short")
  })
})

describe("expiry", () => {
  it("after 7 days an invitation reads as expired, cannot be accepted or canceled, and a new one replaces it", async () => {
    const clock = new TestServer.ShiftedClock()
    // The owner's session is used across the 7 days: an idle timeout of 7 days would race its last use's background write.
    const timed = await TestServer.start({ clock, sessionIdleTimeout: "30 days" })
    try {
      const request = (method: string, path: string, options: Http.Options = {}) => Http.request(timed.url, method, path, options)
      const org = await Http.owner(timed.url)
      const email = newEmail()
      const created = await request("POST", "/v1/invitations", { token: org.token, body: { email, role: "member" } })
      clock.advance("6 days")
      expect((await request("GET", "/v1/invitations?status=pending", { token: org.token })).body.items).toHaveLength(1)
      clock.advance("1 day")
      const expired = await request("GET", "/v1/invitations?status=expired", { token: org.token })
      expect(expired.body.items.map((i: any) => [i.id, i.status])).toEqual([[created.body.invitation.id, "expired"]])
      expect((await request("GET", "/v1/invitations?status=pending", { token: org.token })).body.items).toEqual([])
      const preview = await request("POST", "/v1/invitations/preview", { body: { token: created.body.inviteToken } })
      expect([preview.status, preview.body.error]).toEqual([404, "invitation_not_found"])
      const accept = await request("POST", "/v1/invitations/accept", { body: signUpAs(created.body.inviteToken) })
      expect(accept.status).toBe(404)
      expect(accept.body.error).toBe("invitation_not_found")
      const cancel = await request("POST", `/v1/invitations/${created.body.invitation.id}/cancel`, { token: org.token })
      expect(cancel.status).toBe(409)
      expect(cancel.body.message).toBe("This invitation is expired; only pending invitations can be canceled.")
      const again = await request("POST", "/v1/invitations", { token: org.token, body: { email, role: "admin" } })
      expect(again.status).toBe(200)
      expect(again.body.invitation).toMatchObject({ id: created.body.invitation.id, status: "pending", role: "admin" })
      expect((await request("POST", "/v1/invitations/accept", { body: signUpAs(again.body.inviteToken) })).status).toBe(200)
    } finally {
      await timed.close()
    }
  })
})

describe.runIf(TestDatabase.onPostgres)("under concurrent requests (needs real concurrency: Postgres only)", () => {
  it("one invitation per email, one acceptance per token, never a 500", async () => {
    const org = await Http.staffed(server.url)
    const email = newEmail()
    const created = await Promise.all(
      [org.owner.token, org.admin.token, org.owner.token].map((token) => post("/v1/invitations", { token, body: { email, role: "member" } }))
    )
    expect(created.map((r) => r.status).sort()).toEqual([200, 200, 201])
    expect(new Set(created.map((r) => r.body.invitation.id)).size).toBe(1)
    const latest = await post("/v1/invitations", { token: org.owner.token, body: { email, role: "member" } })
    expect(latest.status).toBe(200)
    const accepts = await Promise.all([
      post("/v1/invitations/accept", { body: signUpAs(latest.body.inviteToken) }),
      post("/v1/invitations/accept", { body: signUpAs(latest.body.inviteToken) }),
      post(`/v1/invitations/${latest.body.invitation.id}/cancel`, { token: org.admin.token })
    ])
    const statuses = accepts.map((r) => r.status)
    // Exactly one of the three wins: an acceptance (the other one and the cancel then fail), or the cancel.
    expect(statuses.filter((status) => status === 200)).toHaveLength(1)
    for (const status of statuses) expect([200, 404, 409]).toContain(status)
    const members = await get(`/v1/members?q=${encodeURIComponent(email)}`, { token: org.owner.token })
    expect(members.body.items.length).toBe(statuses[2] === 200 ? 0 : 1)
  })
})

import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

const api = calls(() => server.url)

const newEmail = () => `invitee.${Math.random().toString(36).slice(2, 10)}@example.com`
const signUpAs = (token: string) => ({ token, signUp: { name: "New Person", password: "correct horse battery" } })

/** The token of an invitation shown to its inviter (an invitation sent by mail shows none). */
const tokenOf = (created: { readonly inviteToken: string | null }): string => {
  if (created.inviteToken === null) throw new Error("the invitation shows no token")
  return created.inviteToken
}

describe("inviting", () => {
  it("returns the token once, and the invitation lists as pending for 7 days", async () => {
    const org = await Http.staffed(server.url)
    const email = newEmail()
    const created = await api.invitations.create({ token: org.admin.token, payload: { email: ` ${email} `, role: "admin" } })
    expect(created.status).toBe(201)
    expect(ok(created, 201).refreshed).toBe(false)
    expect(tokenOf(ok(created, 201))).toMatch(/^opi_[A-Za-z0-9_-]{43}$/)
    const invitation = ok(created, 201).invitation
    expect(invitation).toMatchObject({
      organizationId: org.organizationId,
      email,
      role: "admin",
      status: "pending",
      delivery: "shown",
      createdByOrgMembershipId: org.admin.membership.id,
      acceptedByOrgMembershipId: null
    })
    expect(invitation.id).toMatch(/^inv_/)
    const ttl = new Date(invitation.expiresAt).getTime() - new Date(invitation.createdAt).getTime()
    expect(ttl).toBe(7 * 24 * 3600 * 1000)

    const listed = await api.invitations.list({ query: { status: "pending" }, token: org.owner.token })
    expect(ok(listed, 200).items).toContainEqual(invitation)
    expect(JSON.stringify(listed.body)).not.toContain(tokenOf(ok(created, 201)))
  })

  it("shows the token on an instance without mail settings, and refuses to mail one (409 mail_not_configured)", async () => {
    const org = await Http.staffed(server.url)
    const email = newEmail()
    const mailed = await api.invitations.create({ token: org.owner.token, payload: { email, role: "member", delivery: "mailed" } })
    expect([mailed.status, mailed.body]).toEqual([409, expect.objectContaining({ error: "mail_not_configured" })])
    expect(ok(await api.invitations.list({ query: { status: "pending" }, token: org.owner.token }), 200).items.filter((i: { email: string }) => i.email === email)).toEqual([])
    const shown = await api.invitations.create({ token: org.owner.token, payload: { email, role: "member", delivery: "shown" } })
    expect([shown.status, ok(shown, 201).invitation.delivery]).toEqual([201, "shown"])
    expect(tokenOf(ok(shown, 201))).toMatch(/^opi_/)
  })

  it("refreshes a pending invitation for the same email: 200, a new token, the old one dead", async () => {
    const org = await Http.staffed(server.url)
    const email = newEmail()
    const first = ok(await api.invitations.create({ token: org.owner.token, payload: { email, role: "member" } }), 201)
    const second = await api.invitations.create({ token: org.admin.token, payload: { email: email.toUpperCase(), role: "admin" } })
    expect(second.status).toBe(200)
    expect(ok(second, 200).refreshed).toBe(true)
    expect(ok(second, 200).invitation).toMatchObject({ id: first.invitation.id, role: "admin", email })
    expect(tokenOf(ok(second, 200))).not.toBe(tokenOf(first))
    const pending = ok(await api.invitations.list({ query: { status: "pending" }, token: org.owner.token }), 200)
    expect(pending.items.filter((i) => i.email === email)).toHaveLength(1)

    const stale = await api.invitations.accept({ payload: signUpAs(tokenOf(first)) })
    expect(stale.status).toBe(404)
    expect(stale.body).toMatchObject({ error: "invitation_not_found" })
    const fresh = await api.invitations.accept({ payload: signUpAs(tokenOf(ok(second, 200))) })
    expect(fresh.status).toBe(200)
    expect(ok(fresh, 200).membership.role).toBe("admin")
  })

  it("refuses members' emails, owners as a role, bad emails, and members as inviters", async () => {
    const org = await Http.staffed(server.url)
    const existing = await api.invitations.create({ token: org.owner.token, payload: { email: org.member.email.toUpperCase(), role: "member" } })
    expect(existing.status).toBe(409)
    expect(existing.body).toEqual({ error: "member_exists", message: "This person is already a member of the organization." })
    const bad = await Http.request(server.url, "POST", "/v1/invitations", { token: org.owner.token, body: { email: "not-an-email", role: "owner" } })
    expect(bad.status).toBe(400)
    expect(invalid(bad).details).toEqual([
      { path: ["email"], message: "must be an email address" },
      { path: ["role"], message: 'Expected "admin" or "member", actual "owner"' }
    ])
    const byMember = await api.invitations.create({ token: org.member.token, payload: { email: newEmail(), role: "member" } })
    expect(byMember.status).toBe(403)
    expect(byMember.body).toMatchObject({ reason: "insufficient_role" })
    expect((await api.invitations.list({ token: org.member.token })).status).toBe(403)
  })

  it("gets one by id for owners and admins, in whatever status; another organization's answers 404 like a missing one", async () => {
    const org = await Http.staffed(server.url, "Readable")
    const created = ok(await api.invitations.create({ token: org.owner.token, payload: { email: newEmail(), role: "member" } }), 201)
    const id = created.invitation.id
    const got = ok(await api.invitations.get({ path: { invitationId: id }, token: org.admin.token }), 200)
    expect(got).toEqual({ invitation: created.invitation })
    expect(JSON.stringify(got)).not.toContain(tokenOf(created))
    await api.invitations.cancel({ path: { invitationId: id }, token: org.owner.token })
    expect(ok(await api.invitations.get({ path: { invitationId: id }, token: org.owner.token }), 200).invitation.status).toBe("canceled")

    const refused = await api.invitations.get({ path: { invitationId: id }, token: org.member.token })
    expect([refused.status, refused.body]).toEqual([403, expect.objectContaining({ reason: "insufficient_role" })])
    const other = await Http.owner(server.url, "Elsewhere")
    const theirs = await api.invitations.get({ path: { invitationId: id }, token: other.token })
    expect(theirs.status).toBe(404)
    expect(theirs.body).toEqual({ error: "invitation_not_found", message: "Invitation not found." })
  })

  it("previews by token without credentials: the organization's name, the role, the inviter's name and the expiry, no more", async () => {
    const org = await Http.staffed(server.url, "Previewed Labs")
    const email = newEmail()
    const created = ok(await api.invitations.create({ token: org.admin.token, payload: { email, role: "admin" } }), 201)
    const previewed = ok(await api.invitations.preview({ payload: { token: tokenOf(created) } }), 200)
    expect(previewed).toEqual({
      organization: { name: "Previewed Labs" },
      role: "admin",
      invitedBy: { name: "Admin" },
      expiresAt: created.invitation.expiresAt
    })
    expect(JSON.stringify(previewed)).not.toMatch(/inv_|org_|om_|usr_|@/)
    // Previewing changes nothing: the invitation is still pending and can be accepted.
    expect(ok(await api.invitations.get({ path: { invitationId: created.invitation.id }, token: org.owner.token }), 200).invitation.status).toBe("pending")

    // Unknown, canceled and accepted tokens all answer the same 404.
    const unknown = await api.invitations.preview({ payload: { token: "opi_not-a-real-token" } })
    expect([unknown.status, unknown.body]).toEqual([404, { error: "invitation_not_found", message: "Invitation not found." }])
    ok(await api.invitations.accept({ payload: signUpAs(tokenOf(created)) }), 200)
    const used = await api.invitations.preview({ payload: { token: tokenOf(created) } })
    expect([used.status, used.body]).toEqual([404, expect.objectContaining({ error: "invitation_not_found" })])
    const canceled = ok(await api.invitations.create({ token: org.owner.token, payload: { email: newEmail(), role: "member" } }), 201)
    await api.invitations.cancel({ path: { invitationId: canceled.invitation.id }, token: org.owner.token })
    expect((await api.invitations.preview({ payload: { token: tokenOf(canceled) } })).status).toBe(404)
    const bad = await api.invitations.preview({ payload: { token: "" } })
    expect([bad.status, bad.body]).toEqual([400, expect.objectContaining({ error: "invalid_request" })])
  })

  it("previews a deleted organization's invitation as 404, like a missing one: nothing of it shows (issue 55, item 7)", async () => {
    const owner = await Http.owner(server.url, "Soon Gone")
    const created = await api.invitations.create({ token: owner.token, payload: { email: newEmail(), role: "admin" } })
    expect(created.status).toBe(201)
    expect((await api.invitations.preview({ payload: { token: tokenOf(ok(created, 201)) } })).status).toBe(200)
    expect((await api.organizations.delete({ token: owner.token, payload: { confirmName: "Soon Gone" } })).status).toBe(200)
    const preview = await api.invitations.preview({ payload: { token: tokenOf(ok(created, 201)) } })
    const missing = await api.invitations.preview({ payload: { token: "opi_notatokenofanyinvitation0000000000000000" } })
    expect([preview.status, preview.body], preview.text).toEqual([missing.status, missing.body])
    expect(preview.status).toBe(404)
    expect((await api.invitations.accept({ payload: signUpAs(tokenOf(ok(created, 201))) })).status).toBe(404)
  })

  it("cancels pending invitations only; a canceled token no longer works", async () => {
    const org = await Http.staffed(server.url)
    const created = ok(await api.invitations.create({ token: org.owner.token, payload: { email: newEmail(), role: "member" } }), 201)
    const id = created.invitation.id
    const canceled = await api.invitations.cancel({ path: { invitationId: id }, token: org.admin.token })
    expect(canceled.status).toBe(200)
    expect(ok(canceled, 200).invitation).toMatchObject({ id, status: "canceled" })
    const twice = await api.invitations.cancel({ path: { invitationId: id }, token: org.admin.token })
    expect(twice.status).toBe(409)
    expect(twice.body).toEqual({
      error: "invitation_not_pending",
      message: "This invitation is canceled; only pending invitations can be canceled."
    })
    expect((await api.invitations.accept({ payload: signUpAs(tokenOf(created)) })).status).toBe(404)
    const unknown = await api.invitations.cancel({ path: { invitationId: "inv_01h455vb4pex5vsknk084sn02q" }, token: org.admin.token })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toMatchObject({ error: "invitation_not_found" })
    const byStatus = ok(await api.invitations.list({ query: { status: "canceled" }, token: org.owner.token }), 200)
    expect(byStatus.items.map((i) => i.id)).toEqual([id])
    // A new invitation for the same email is a new one, not a refresh of the canceled one.
    const again = await api.invitations.create({ token: org.owner.token, payload: { email: created.invitation.email, role: "member" } })
    expect(again.status).toBe(201)
  })

  it("lists newest first with a cursor", async () => {
    const org = await Http.owner(server.url)
    const ids: Array<string> = []
    for (let i = 0; i < 5; i++) {
      ids.push(ok(await api.invitations.create({ token: org.token, payload: { email: newEmail(), role: "member" } }), 201).invitation.id)
    }
    const seen: Array<string> = []
    let cursor: string | null = null
    do {
      const answer = await api.invitations.list({ query: { limit: "2", ...(cursor ? { cursor } : {}) }, token: org.token })
      const page = ok(answer, 200)
      seen.push(...page.items.map((i) => i.id))
      cursor = page.nextCursor
    } while (cursor)
    expect(seen).toEqual(ids.reverse())
  })
})

describe("accepting", () => {
  it("as the signed-in person with the invited email: joins with the role and switches to the organization", async () => {
    const org = await Http.staffed(server.url)
    const person = await Http.owner(server.url, "Own Org")
    const invited = ok(await api.invitations.create({ token: org.owner.token, payload: { email: person.email, role: "admin" } }), 201)
    const accepted = await api.invitations.accept({ token: person.token, payload: { token: tokenOf(invited) } })
    expect(accepted.status).toBe(200)
    expect(ok(accepted, 200).session).toBeNull()
    expect(ok(accepted, 200).user.id).toBe(person.user.id)
    expect(ok(accepted, 200).organization.id).toBe(org.organizationId)
    expect(ok(accepted, 200).membership).toMatchObject({ organizationId: org.organizationId, userId: person.user.id, role: "admin" })
    const me = ok(await api.users.me({ token: person.token }), 200)
    expect(me.organization?.id).toBe(org.organizationId)
    const invitation = ok(await api.invitations.list({ query: { status: "accepted" }, token: org.owner.token }), 200).items[0]
    expect(invitation).toMatchObject({ id: invited.invitation.id, acceptedByOrgMembershipId: ok(accepted, 200).membership.id })

    const again = await api.invitations.accept({ token: person.token, payload: { token: tokenOf(invited) } })
    expect(again.status).toBe(404)
    const reinvite = await api.invitations.create({ token: org.owner.token, payload: { email: person.email, role: "member" } })
    expect(reinvite.status).toBe(409)
  })

  it("by signing up in the same call, even where open sign-up is disabled", async () => {
    const closed = await TestServer.start({ signupEnabled: false })
    try {
      // Only the first account of a closed instance signs up; the others come by invitation.
      const first = await Http.owner(closed.url, "Closed")
      const signUp = await calls(closed.url).users.signUp({ payload: { email: newEmail(), password: "correct horse battery", name: "Walk-in" } })
      expect(signUp.status).toBe(403)
      expect(signUp.body).toMatchObject({ reason: "signup_disabled" })
      const email = newEmail()
      const invited = ok(await calls(closed.url).invitations.create({ token: first.token, payload: { email, role: "member" } }), 201)
      const accepted = await calls(closed.url).invitations.accept({ payload: signUpAs(tokenOf(invited)) })
      expect(accepted.status).toBe(200)
      expect(ok(accepted, 200).user).toMatchObject({ email, name: "New Person" })
      const signIn = await calls(closed.url).users.signIn({ payload: { email, password: "correct horse battery" } })
      expect(signIn.status).toBe(200)
    } finally {
      await closed.close()
    }
  })

  it("rejects a mismatched email, an API key, a taken email, and both credentials and sign-up at once", async () => {
    const org = await Http.staffed(server.url)
    const stranger = await Http.signUp(server.url, "Stranger")
    const email = newEmail()
    const invited = ok(await api.invitations.create({ token: org.owner.token, payload: { email, role: "member" } }), 201)
    const token = tokenOf(invited)

    const mismatch = await api.invitations.accept({ token: stranger.token, payload: { token } })
    expect(mismatch.status).toBe(403)
    expect(mismatch.body).toMatchObject({ reason: "invitation_email_mismatch" })
    const key = await api.apiKeys.create({ token: org.owner.token, payload: { name: "k" } })
    const byKey = await api.invitations.accept({ apiKey: ok(key, 201).key, payload: { token } })
    expect(byKey.status).toBe(403)
    expect(byKey.body).toMatchObject({ reason: "session_required" })
    const both = await api.invitations.accept({ token: stranger.token, payload: signUpAs(token) })
    expect(both.status).toBe(400)
    expect(invalid(both).details[0].path).toEqual(["signUp"])
    const nothing = await api.invitations.accept({ payload: { token } })
    expect(nothing.status).toBe(401)

    const taken = ok(await api.invitations.create({ token: org.owner.token, payload: { email: stranger.email, role: "member" } }), 201)
    const signUpTaken = await api.invitations.accept({ payload: signUpAs(tokenOf(taken)) })
    expect(signUpTaken.status).toBe(409)
    // Not a bare email_taken: the answer says what to do (sign in and accept without signUp).
    expect(signUpTaken.body).toMatchObject({ error: "account_exists" })
    expect(signUpTaken.body).toMatchObject({ message: expect.stringMatching(/sign in .* accept the invitation signed in, without signUp/) })
    // Nothing was used up: the right person can still accept both.
    expect((await api.invitations.accept({ token: stranger.token, payload: { token: tokenOf(taken) } })).status).toBe(200)
    const signedUp = await api.invitations.accept({ payload: signUpAs(token) })
    expect(signedUp.status).toBe(200)
    expect(ok(signedUp, 200).user.email).toBe(email)
    const session = ok(signedUp, 200).session
    expect(session?.token).toMatch(/^ops_/)
    if (session === null) throw new Error("signing up made no session")
    const me = ok(await api.users.me({ token: session.token }), 200)
    expect(me.membership).toEqual(ok(signedUp, 200).membership)
  })

  it("lets a removed member back in when invited again", async () => {
    const org = await Http.staffed(server.url)
    expect((await api.members.remove({ path: { memberId: org.member.membership.id }, token: org.owner.token })).status).toBe(204)
    const invited = await api.invitations.create({ token: org.owner.token, payload: { email: org.member.email, role: "member" } })
    expect(invited.status).toBe(201)
    const back = await api.invitations.accept({ token: org.member.token, payload: { token: tokenOf(ok(invited, 201)) } })
    expect(back.status).toBe(200)
    expect(ok(back, 200).membership.id).not.toBe(org.member.membership.id)
    expect(ok(await api.members.get({ path: { memberId: org.member.membership.id }, token: org.owner.token }), 200).member.removedAt).not.toBeNull()
  })

  it("validates its body", async () => {
    const bad = await api.invitations.accept({ payload: { token: "", signUp: { name: "", password: "short" } } })
    expect(bad.status).toBe(400)
    expect(invalid(bad).details.map((d) => d.path)).toEqual([["token"], ["signUp", "name"], ["signUp", "password"]])
    expect(bad.text).not.toContain("short")
  })
})

describe("expiry", () => {
  it("after 7 days an invitation reads as expired, cannot be accepted or canceled, and a new one replaces it", async () => {
    const clock = new TestServer.ShiftedClock()
    // The owner's session is used across the 7 days: an idle timeout of 7 days would race its last use's background write.
    const timed = await TestServer.start({ clock, sessionIdleTimeout: "30 days" })
    try {
      const { invitations } = calls(timed.url)
      const org = await Http.owner(timed.url)
      const email = newEmail()
      const created = ok(await invitations.create({ token: org.token, payload: { email, role: "member" } }), 201)
      clock.advance("6 days")
      expect(ok(await invitations.list({ query: { status: "pending" }, token: org.token }), 200).items).toHaveLength(1)
      clock.advance("1 day")
      const expired = ok(await invitations.list({ query: { status: "expired" }, token: org.token }), 200)
      expect(expired.items.map((i) => [i.id, i.status])).toEqual([[created.invitation.id, "expired"]])
      expect(ok(await invitations.list({ query: { status: "pending" }, token: org.token }), 200).items).toEqual([])
      const preview = await invitations.preview({ payload: { token: tokenOf(created) } })
      expect([preview.status, preview.body]).toEqual([404, expect.objectContaining({ error: "invitation_not_found" })])
      const accept = await invitations.accept({ payload: signUpAs(tokenOf(created)) })
      expect(accept.status).toBe(404)
      expect(accept.body).toMatchObject({ error: "invitation_not_found" })
      const cancel = await invitations.cancel({ path: { invitationId: created.invitation.id }, token: org.token })
      expect(cancel.status).toBe(409)
      expect(cancel.body).toMatchObject({ message: "This invitation is expired; only pending invitations can be canceled." })
      const again = await invitations.create({ token: org.token, payload: { email, role: "admin" } })
      expect(again.status).toBe(200)
      expect(ok(again, 200).invitation).toMatchObject({ id: created.invitation.id, status: "pending", role: "admin" })
      expect((await invitations.accept({ payload: signUpAs(tokenOf(ok(again, 200))) })).status).toBe(200)
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
      [org.owner.token, org.admin.token, org.owner.token].map((token) => api.invitations.create({ token, payload: { email, role: "member" } }))
    )
    expect(created.map((r) => r.status).sort()).toEqual([200, 200, 201])
    expect(new Set(created.map((r) => ok(r, r.status).invitation.id)).size).toBe(1)
    const latest = await api.invitations.create({ token: org.owner.token, payload: { email, role: "member" } })
    expect(latest.status).toBe(200)
    const accepts = await Promise.all([
      api.invitations.accept({ payload: signUpAs(tokenOf(ok(latest, 200))) }),
      api.invitations.accept({ payload: signUpAs(tokenOf(ok(latest, 200))) }),
      api.invitations.cancel({ path: { invitationId: ok(latest, 200).invitation.id }, token: org.admin.token })
    ])
    const statuses = accepts.map((r) => r.status)
    // Exactly one of the three wins: an acceptance (the other one and the cancel then fail), or the cancel.
    expect(statuses.filter((status) => status === 200)).toHaveLength(1)
    for (const status of statuses) expect([200, 404, 409]).toContain(status)
    const members = ok(await api.members.list({ query: { q: email }, token: org.owner.token }), 200)
    expect(members.items.length).toBe(statuses[2] === 200 ? 0 : 1)
  })
})

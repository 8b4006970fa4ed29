/**
 * Recovery without the current password (issue 45 item 3), through HTTP: reset links issued by an organization's
 * owners and admins for the accounts it alone holds, and by the instance's operator for anyone; what using one sets
 * and ends; what voids one; the refusals that keep an admin of one organization from taking over an account another
 * organization holds; the audit events; and the mail operations' answer on a server without SMTP settings.
 */
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const clock = new TestServer.ShiftedClock()
let server: TestServer.RunningServer
beforeAll(async () => {
  // Behind a proxy, so that the throttle's test speaks from addresses of its own; every other test is 127.0.0.1.
  server = await TestServer.start({ clock, passwordResetTtl: "1 hour", recentAuthentication: "2 hours", trustProxy: true, recoveryRequestsPerAddress: 40 })
})
afterAll(async () => {
  await server?.close()
})

const api = calls(() => server.url)
const NEW_PASSWORD = "a brand new passphrase"

/** A token the API showed (it shows none when it sends it by mail). */
const shown = (token: string | null): string => {
  if (token === null) throw new Error("the answer shows no token")
  return token
}

/** A link shown to its issuer (one sent by mail shows no token). */
const issue = async (token: string, memberId: string) => {
  const { passwordReset } = ok(await api.recovery.issueMemberPasswordReset({ path: { memberId }, token }), 201)
  return { ...passwordReset, token: shown(passwordReset.token) }
}

const signIn = (email: string, password: string) => api.users.signIn({ payload: { email, password } })

/** A person of `org` invited into another organization too, accepting signed in: one account, two organizations. */
const alsoJoin = async (person: { token: string; email: string }, role: "admin" | "member" = "member") => {
  const other = await Http.owner(server.url, "Elsewhere")
  const invited = ok(await api.invitations.create({ token: other.token, payload: { email: person.email, role } }), 201)
  ok(await api.invitations.accept({ token: person.token, payload: { token: shown(invited.inviteToken) } }), 200)
  return other
}

describe("password reset links issued by an organization's owners and admins", () => {
  it("an owner's link sets the member's password once, ends every session, lists the keys, and the log names who issued and who used it", async () => {
    const org = await Http.staffed(server.url, "Resets")
    const second = Http.expectStatus<{ session: { token: string } }>("sign-in", await signIn(org.member.email, org.member.password), 200).session.token
    const link = await issue(org.owner.token, org.member.membership.id)
    expect(link).toMatchObject({ userId: org.member.user.id, email: org.member.email, token: expect.stringMatching(/^opr_/), delivery: "shown", temporary: true })
    expect(Date.parse(link.expiresAt) - Date.now() - clock.offsetMillis).toBeGreaterThan(59 * 60 * 1000)

    const used = ok(await api.recovery.resetPassword({ payload: { token: link.token, newPassword: NEW_PASSWORD } }), 200)
    expect(used).toMatchObject({ user: { id: org.member.user.id }, sessionsEnded: 2, apiKeys: [], apiKeysRevoked: true })
    for (const token of [org.member.token, second]) expect((await api.users.me({ token })).status).toBe(401)
    expect((await signIn(org.member.email, org.member.password)).status).toBe(401)
    expect((await api.users.signIn({ payload: { email: org.member.email, password: NEW_PASSWORD, newPassword: "the person's own" } })).status).toBe(200)

    const again = await api.recovery.resetPassword({ payload: { token: link.token, newPassword: "yet another passphrase" } })
    expect(again.status).toBe(400)
    expect(invalid(again).details[0]).toMatchObject({ path: ["token"], message: expect.stringContaining("is not a live password reset link") })

    const events = ok(await api.audit.listEvents({ query: { action: "user.password.*" }, token: org.owner.token }), 200).items
    const issued = events.find((event) => event.action === "user.password.reset_link.create")
    expect(issued).toMatchObject({ outcome: "succeeded", actor: { id: org.owner.user.id } })
    expect(issued?.targets).toEqual(expect.arrayContaining([{ type: "member", id: org.member.membership.id }, { type: "user", id: org.member.user.id }]))
    const reset = events.find((event) => event.action === "user.password.reset")
    expect(reset).toMatchObject({ outcome: "succeeded", actor: { type: "user", id: org.member.user.id }, reason: expect.stringContaining(org.owner.email) })
  })

  it("an admin resets plain members; using the link revokes the person's API keys, in every organization, and lists them", async () => {
    const org = await Http.staffed(server.url, "Keys")
    const admin = await Http.join(server.url, org.owner.token, "admin", "Keyholder")
    const key = ok(await api.apiKeys.create({ token: admin.token, payload: { name: "ci" } }), 201).key
    // Demoted to member: an admin may then reset them.
    ok(await api.members.changeRole({ path: { memberId: admin.membership.id }, token: org.owner.token, payload: { role: "member" } }), 200)
    const link = await issue(org.admin.token, admin.membership.id)
    const used = ok(await api.recovery.resetPassword({ payload: { token: link.token, newPassword: NEW_PASSWORD } }), 200)
    expect(used.apiKeys).toHaveLength(1)
    expect(used.apiKeysRevoked).toBe(true)
    expect((await api.users.me({ apiKey: key })).status).toBe(401)
  })

  it("refuses an admin for admins and owners, an owner for owners, a plain member, and the caller's own account", async () => {
    const org = await Http.staffed(server.url, "Refusals")
    const otherAdmin = await Http.join(server.url, org.owner.token, "admin", "Peer")
    for (const [caller, target] of [[org.admin, otherAdmin], [org.admin, org.owner], [org.member, otherAdmin]] as const) {
      const refused = await api.recovery.issueMemberPasswordReset({ path: { memberId: target.membership.id }, token: caller.token })
      expect(refused.status).toBe(403)
      expect(refused.body).toMatchObject({ reason: "insufficient_role" })
    }
    const coOwner = await Http.join(server.url, org.owner.token, "admin", "CoOwner")
    ok(await api.members.changeRole({ path: { memberId: coOwner.membership.id }, token: org.owner.token, payload: { role: "owner" } }), 200)
    const ownerOnOwner = await api.recovery.issueMemberPasswordReset({ path: { memberId: coOwner.membership.id }, token: org.owner.token })
    expect(ownerOnOwner.status).toBe(403)
    expect(ownerOnOwner.body).toMatchObject({ message: expect.stringContaining("instance's operator") })

    const own = await api.recovery.issueMemberPasswordReset({ path: { memberId: org.admin.membership.id }, token: org.admin.token })
    expect(own.status).toBe(409)
    expect(own.body).toMatchObject({ error: "reset_own_password" })

    // The owner may reset the admin; a denied attempt is in the log.
    await issue(org.owner.token, org.admin.membership.id)
    const denied = ok(await api.audit.listEvents({ query: { action: "user.password.reset_link.create", outcome: "denied" }, token: org.owner.token }), 200)
    expect(denied.items.length).toBeGreaterThanOrEqual(3)
  })

  it("refuses an account that another organization also holds (409 account_in_other_organizations), and another organization's member (404)", async () => {
    const org = await Http.staffed(server.url, "Shared")
    const elsewhere = await alsoJoin(org.member)
    const refused = await api.recovery.issueMemberPasswordReset({ path: { memberId: org.member.membership.id }, token: org.owner.token })
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ error: "account_in_other_organizations", message: expect.stringContaining("operator") })

    const foreign = await api.recovery.issueMemberPasswordReset({ path: { memberId: elsewhere.membership.id }, token: org.owner.token })
    expect(foreign.status).toBe(404)
    expect(foreign.body).toMatchObject({ error: "member_not_found" })
  })

  it("a link stops working when the account joins another organization before it is used", async () => {
    const org = await Http.staffed(server.url, "Joins")
    const link = await issue(org.admin.token, org.member.membership.id)
    await alsoJoin(org.member, "admin")
    const used = await api.recovery.resetPassword({ payload: { token: link.token, newPassword: NEW_PASSWORD } })
    expect(used.status).toBe(400)
    expect(invalid(used).details[0].message).toContain("joined another organization")
    expect((await signIn(org.member.email, org.member.password)).status).toBe(200)
  })

  it("a newer link, a password change and the end of its hour each void a link", async () => {
    const org = await Http.staffed(server.url, "Voids")
    const first = await issue(org.owner.token, org.member.membership.id)
    const second = await issue(org.owner.token, org.member.membership.id)
    expect((await api.recovery.resetPassword({ payload: { token: first.token, newPassword: NEW_PASSWORD } })).status).toBe(400)

    ok(await api.users.changePassword({ token: org.member.token, payload: { currentPassword: org.member.password, newPassword: "changed by the person" } }), 200)
    expect((await api.recovery.resetPassword({ payload: { token: second.token, newPassword: NEW_PASSWORD } })).status).toBe(400)
    expect((await signIn(org.member.email, "changed by the person")).status).toBe(200)

    const third = await issue(org.owner.token, org.member.membership.id)
    clock.advance("61 minutes")
    try {
      expect((await api.recovery.resetPassword({ payload: { token: third.token, newPassword: NEW_PASSWORD } })).status).toBe(400)
    } finally {
      clock.offsetMillis -= 61 * 60 * 1000
    }
  })

  it("asks for a recent sign-in, and an API key's scope", async () => {
    const org = await Http.staffed(server.url, "Recent")
    clock.advance("3 hours")
    try {
      const stale = await api.recovery.issueMemberPasswordReset({ path: { memberId: org.member.membership.id }, token: org.owner.token })
      expect(stale.status).toBe(403)
      expect(stale.body).toMatchObject({ reason: "recent_authentication_required" })
    } finally {
      clock.offsetMillis -= 3 * 60 * 60 * 1000
    }
    const key = ok(await api.apiKeys.create({ token: org.owner.token, payload: { name: "ci" } }), 201).key
    const unscoped = await api.recovery.issueMemberPasswordReset({ path: { memberId: org.member.membership.id }, apiKey: key })
    expect(unscoped.status).toBe(403)
    expect(unscoped.body).toMatchObject({ reason: "insufficient_scope" })
    const scoped = ok(await api.apiKeys.create({ token: org.owner.token, payload: { name: "reset", scopes: ["members.resetPassword"] } }), 201).key
    ok(await api.recovery.issueMemberPasswordReset({ path: { memberId: org.member.membership.id }, apiKey: scoped }), 201)
  })
})

describe("what an owner's or admin's link may reach (issue 55, item 3)", () => {
  it("refuses an account that belonged to another organization it has left (409 account_in_other_organizations)", async () => {
    const org = await Http.staffed(server.url, "Left")
    const elsewhere = await alsoJoin(org.member)
    // The person leaves the other organization: what they kept there (their memories, their membership's history)
    // is still the account's, and no longer the issuer's to reach.
    const switched = ok(await api.users.switchOrganization({ token: org.member.token, payload: { organizationId: elsewhere.organization.id } }), 200)
    if (switched.membership === null) throw new Error("switching organizations answered no membership")
    const mine = switched.membership.id
    expect((await api.memory.save({ token: org.member.token, payload: { content: "kept from the other organization" } })).status).toBe(201)
    expect((await api.members.remove({ path: { memberId: mine }, token: org.member.token })).status).toBe(204)
    const refused = await api.recovery.issueMemberPasswordReset({ path: { memberId: org.member.membership.id }, token: org.owner.token })
    expect([refused.status, refused.body]).toEqual([409, expect.objectContaining({ error: "account_in_other_organizations" })])
  })

  it("sets a temporary password: the next sign-in must choose the person's own (403 password_change_required before)", async () => {
    const org = await Http.staffed(server.url, "Temporary")
    const link = await issue(org.owner.token, org.member.membership.id)
    ok(await api.recovery.resetPassword({ payload: { token: link.token, newPassword: NEW_PASSWORD } }), 200)
    const refused = await signIn(org.member.email, NEW_PASSWORD)
    expect([refused.status, refused.body]).toEqual([403, expect.objectContaining({ reason: "password_change_required" })])
    expect(refused.body).toMatchObject({ message: expect.stringContaining("newPassword") })
    // A wrong password is still the 401 anyone gets: the refusal tells only whoever knows the temporary one.
    expect((await signIn(org.member.email, "not the temporary one")).status).toBe(401)
    const chosen = await api.users.signIn({ payload: { email: org.member.email, password: NEW_PASSWORD, newPassword: "the person's own choice" } })
    expect(chosen.status, chosen.text).toBe(200)
    expect((await signIn(org.member.email, NEW_PASSWORD)).status).toBe(401)
    expect((await signIn(org.member.email, "the person's own choice")).status).toBe(200)
    // newPassword is for a password that must change, nothing else.
    const unasked = await api.users.signIn({ payload: { email: org.member.email, password: "the person's own choice", newPassword: "again another one" } })
    expect([unasked.status, invalid(unasked).details[0]?.path]).toEqual([400, ["newPassword"]])
  })

  it("ends the password it set, and the one chosen in its place, when the account joins another organization", async () => {
    const org = await Http.staffed(server.url, "Bound")
    const link = await issue(org.owner.token, org.member.membership.id)
    ok(await api.recovery.resetPassword({ payload: { token: link.token, newPassword: NEW_PASSWORD } }), 200)
    // Whoever held the link (the owner could have) chooses the password at the first sign-in.
    const session = ok(await api.users.signIn({ payload: { email: org.member.email, password: NEW_PASSWORD, newPassword: "chosen at first sign-in" } }), 200).session.token
    const other = await Http.owner(server.url, "Elsewhere")
    const invited = ok(await api.invitations.create({ token: other.token, payload: { email: org.member.email, role: "admin" } }), 201)
    ok(await api.invitations.accept({ token: session, payload: { token: shown(invited.inviteToken) } }), 200)
    // The other organization is out of the issuer's reach: nothing the link led to works any more.
    expect((await signIn(org.member.email, "chosen at first sign-in")).status).toBe(401)
    expect((await api.users.me({ token: session })).status).toBe(401)
  })
})

describe("password reset links issued by the instance's operator", () => {
  let operator: Awaited<ReturnType<typeof Http.operator>>
  beforeAll(async () => {
    operator = await Http.operator(server.url)
  })

  it("reset any account, an owner of another organization included; anyone else gets 403 operator_only", async () => {
    const org = await Http.staffed(server.url, "Customer")
    const refused = await api.admin.issuePasswordReset({ path: { userId: org.member.user.id }, token: org.owner.token })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ reason: "operator_only" })

    const issued = ok(await api.admin.issuePasswordReset({ path: { userId: org.owner.user.id }, token: operator.token }), 201)
    expect(issued.passwordReset).toMatchObject({ userId: org.owner.user.id, email: org.owner.email })
    ok(await api.recovery.resetPassword({ payload: { token: shown(issued.passwordReset.token), newPassword: NEW_PASSWORD } }), 200)
    expect((await api.users.me({ token: org.owner.token })).status).toBe(401)
    expect((await signIn(org.owner.email, NEW_PASSWORD)).status).toBe(200)

    // The customer's log has the use, naming the operator who issued the link; the operator's log has both.
    const fresh = Http.expectStatus<{ session: { token: string } }>("sign-in", await signIn(org.owner.email, NEW_PASSWORD), 200).session.token
    const theirs = ok(await api.audit.listEvents({ query: { action: "user.password.reset" }, token: fresh }), 200).items
    expect(theirs).toHaveLength(1)
    expect(theirs[0].reason).toContain(operator.email)
    const ours = ok(await api.audit.listEvents({ query: { targetId: org.owner.user.id }, token: operator.token }), 200).items
    expect(ours.map((event) => event.action)).toEqual(expect.arrayContaining(["user.password.reset_link.create", "user.password.reset"]))
  })

  it("answers 404 user_not_found for an unknown account, 409 for the caller's own, 403 for an admin resetting the operator's owner", async () => {
    const missing = await api.admin.issuePasswordReset({ path: { userId: "usr_01jc0000000000000000000000" }, token: operator.token })
    expect(missing.status).toBe(404)
    expect(missing.body).toMatchObject({ error: "user_not_found" })
    const own = await api.admin.issuePasswordReset({ path: { userId: operator.user.id }, token: operator.token })
    expect(own.status).toBe(409)
    expect(own.body).toMatchObject({ error: "reset_own_password" })
    const admin = await Http.join(server.url, operator.token, "admin", "Operator Admin")
    const onOwner = await api.admin.issuePasswordReset({ path: { userId: operator.user.id }, token: admin.token })
    expect(onOwner.status).toBe(403)
    expect(onOwner.body).toMatchObject({ reason: "insufficient_role" })
  })
})

describe("without SMTP settings", () => {
  it("forgot-password and email verification answer 409 mail_not_configured, saying what to do instead", async () => {
    const person = await Http.signUp(server.url, "Forgetful")
    for (const answer of [
      await api.recovery.forgotPassword({ payload: { email: person.email } }),
      await api.recovery.forgotPassword({ payload: { email: "nobody@example.com" } }),
      await api.recovery.requestEmailVerification({ token: person.token })
    ]) {
      expect(answer.status).toBe(409)
      expect(answer.body).toMatchObject({ error: "mail_not_configured", message: expect.stringContaining("orgplane admin reset-password") })
    }
  })

  it("using links is throttled per client address: past the hour's limit, 429 with Retry-After, the right token too", async () => {
    const org = await Http.staffed(server.url, "Throttled")
    const link = await issue(org.owner.token, org.member.membership.id)
    const from = (address: string) => ({ "x-forwarded-for": address })
    for (let attempt = 0; attempt < 40; attempt++) {
      const guess = await api.recovery.resetPassword({ payload: { token: `opr_guess${attempt}`, newPassword: NEW_PASSWORD }, headers: from("203.0.113.9") })
      expect(guess.status).toBe(400)
    }
    const refused = await api.recovery.resetPassword({ payload: { token: link.token, newPassword: NEW_PASSWORD }, headers: from("203.0.113.9") })
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(3000)
    ok(await api.recovery.resetPassword({ payload: { token: link.token, newPassword: NEW_PASSWORD }, headers: from("198.51.100.4") }), 200)
  })

  it("a token that was never issued is a 400 on token, and a bad body a 400 on its member", async () => {
    const unknown = await api.recovery.resetPassword({ payload: { token: "opr_nothing", newPassword: NEW_PASSWORD } })
    expect(unknown.status).toBe(400)
    expect(invalid(unknown).details[0].path).toEqual(["token"])
    const short = await api.recovery.resetPassword({ payload: { token: "opr_nothing", newPassword: "short" } })
    expect(short.status).toBe(400)
    expect(invalid(short).details[0].path).toEqual(["newPassword"])
    // Proving an address is the account's own doing: without its session, a 401 whatever the token.
    expect((await api.recovery.verifyEmail({ payload: { token: "opv_nothing" } })).status).toBe(401)
    const person = await Http.owner(server.url, "Verifying")
    expect((await api.recovery.verifyEmail({ token: person.token, payload: { token: "opv_nothing" } })).status).toBe(400)
  })
})

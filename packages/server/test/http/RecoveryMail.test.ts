/**
 * Recovery by mail (issue 45 item 3), against a real SMTP server on 127.0.0.1 (testkit's FakeSmtp: the smtp-server
 * package, asking for a user and password): forgot-password answers alike whether an account has the address and
 * mails a link only when one does, names the configured public URL whatever the request's Host, is throttled per
 * email; email verification mails a link to the person's own address and proves it; a mail server that refuses
 * changes no answer and its password is never logged; an organization document's mailed invitation leaves only once
 * the whole apply has committed.
 */
import * as FakeSmtp from "../../../../packages/testkit/src/FakeSmtp.js"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Wait from "../../../../packages/testkit/src/Wait.js"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Result from "effect/Result"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { settingsConfig } from "../../src/platform/Config.js"

const SMTP_PASSWORD = "smtp-secret-p@ss:word"
const PUBLIC_URL = "https://orgplane.example.com"
let smtp: FakeSmtp.FakeSmtp
let server: TestServer.RunningServer
const logged: Array<string> = []

beforeAll(async () => {
  smtp = await FakeSmtp.start({ user: "orgplane", password: SMTP_PASSWORD })
  server = await TestServer.start({
    smtpUrl: smtp.url,
    mailFrom: "orgplane <no-reply@orgplane.example.com>",
    publicUrl: PUBLIC_URL,
    logger: Logger.make(({ message }) => void logged.push(JSON.stringify(message)))
  })
})
afterAll(async () => {
  await server?.close()
  await smtp?.close()
})

const api = calls(() => server.url)

/** The token a mail carries (`opr_…` or `opv_…`). */
const tokenIn = (text: string, prefix: "opr" | "opv") => {
  const found = new RegExp(`${prefix}_[A-Za-z0-9_-]{43}`).exec(text)
  if (found === null) throw new Error(`no ${prefix} token in: ${text}`)
  return found[0]
}

describe("forgot password, by mail", () => {
  it("answers 202 alike with and without an account, and mails a working link only to the account's address", async () => {
    const person = await Http.signUp(server.url, "Mailed")
    const stranger = `nobody.${Date.now()}@example.com`
    const none = await api.recovery.forgotPassword({ payload: { email: stranger }, headers: { host: "evil.example" } })
    const some = await api.recovery.forgotPassword({ payload: { email: person.email }, headers: { host: "evil.example" } })
    for (const answer of [none, some]) {
      expect(answer.status).toBe(202)
      expect(answer.text).toBe("")
    }
    const mail = await smtp.next(person.email)
    expect(smtp.to(stranger)).toEqual([])
    expect(mail).toMatchObject({ from: "no-reply@orgplane.example.com", subject: "Reset your orgplane password", user: "orgplane" })
    expect(mail.text).toContain(`--url ${PUBLIC_URL}`)
    expect(mail.text).not.toContain("evil.example")

    const used = await api.recovery.resetPassword({ payload: { token: tokenIn(mail.text, "opr"), newPassword: "remembered at last" } })
    expect(used.status).toBe(200)
    expect((await api.users.me({ token: person.token })).status).toBe(401)
    expect((await api.users.signIn({ payload: { email: person.email, password: "remembered at last" } })).status).toBe(200)
  })

  it("is throttled per email past 3 an hour, with and without an account alike", async () => {
    const person = await Http.signUp(server.url, "Throttled")
    for (const email of [person.email, `nobody.${Date.now()}@example.com`]) {
      for (let attempt = 0; attempt < 3; attempt++) expect((await api.recovery.forgotPassword({ payload: { email } })).status).toBe(202)
      const refused = await api.recovery.forgotPassword({ payload: { email } })
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(3000)
    }
    // Each link replaced the one before (the mails may arrive in any order): exactly one of the three works.
    const mails = [await smtp.next(person.email, 1), await smtp.next(person.email, 2), await smtp.next(person.email, 3)]
    const statuses: Array<number> = []
    for (const mail of mails) {
      statuses.push((await api.recovery.resetPassword({ payload: { token: tokenIn(mail.text, "opr"), newPassword: "only one link works" } })).status)
    }
    expect(statuses.sort()).toEqual([200, 400, 400])
  })

  it("answers the same when the mail server refuses, and logs why without its password", async () => {
    const person = await Http.signUp(server.url, "Refused")
    smtp.refuse = true
    try {
      expect((await api.recovery.forgotPassword({ payload: { email: person.email } })).status).toBe(202)
      await Wait.until(() => logged.some((line) => line.includes("was not sent")), "the warning of a mail not sent")
    } finally {
      smtp.refuse = false
    }
    expect(logged.join("\n")).not.toContain(SMTP_PASSWORD)
    expect(logged.join("\n")).not.toContain(encodeURIComponent(SMTP_PASSWORD))
  })

  it("records the link mailed in the person's organizations", async () => {
    const owner = await Http.owner(server.url, "Mailed Org")
    ok(await api.recovery.forgotPassword({ payload: { email: owner.email } }), 202)
    await smtp.next(owner.email)
    const events = ok(await api.audit.listEvents({ query: { action: "user.password.reset_link.create" }, token: owner.token }), 200).items
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ actor: { type: "anonymous" }, targets: [{ type: "user", id: owner.user.id }] })
  })
})

describe("email verification, by mail", () => {
  it("mails a link to the person's own address; using it proves the address once", async () => {
    const owner = await Http.owner(server.url, "Verified Org")
    expect((await api.recovery.requestEmailVerification({ token: owner.token })).status).toBe(202)
    const mail = await smtp.next(owner.email)
    expect(mail.subject).toBe("Verify your email address for orgplane")
    const token = tokenIn(mail.text, "opv")
    // A reset token's place is not a verification token's, and the reverse.
    expect((await api.recovery.resetPassword({ payload: { token, newPassword: "not a reset token" } })).status).toBe(400)

    const verified = ok(await api.recovery.verifyEmail({ token: owner.token, payload: { token } }), 200)
    expect(verified).toMatchObject({ user: { id: owner.user.id, email: owner.email }, emailVerifiedAt: expect.any(String) })
    expect((await api.recovery.verifyEmail({ token: owner.token, payload: { token } })).status).toBe(400)
    const again = await api.recovery.requestEmailVerification({ token: owner.token })
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ error: "email_already_verified" })

    const events = ok(await api.audit.listEvents({ query: { action: "user.email.verify" }, token: owner.token }), 200).items
    expect(events).toMatchObject([{ actor: { type: "user", id: owner.user.id } }])
  })

  it("is for sessions: an API key answers 403 session_required", async () => {
    const owner = await Http.owner(server.url, "Keyed")
    const key = ok(await api.apiKeys.create({ token: owner.token, payload: { name: "ci" } }), 201).key
    const refused = await api.recovery.requestEmailVerification({ apiKey: key })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ reason: "session_required" })
  })
})

describe("what a mailed link proves, and to whom (issue 55)", () => {
  it("an owner's reset link for a member is mailed to the person, never shown to the owner; the password it sets is the person's", async () => {
    const org = await Http.staffed(server.url, "Mailed")
    const issued = ok(await api.recovery.issueMemberPasswordReset({ path: { memberId: org.member.membership.id }, token: org.owner.token }), 201).passwordReset
    expect(issued).toMatchObject({ userId: org.member.user.id, delivery: "mailed", token: null, temporary: false })
    const mail = await smtp.next(org.member.email)
    const used = await api.recovery.resetPassword({ payload: { token: tokenIn(mail.text, "opr"), newPassword: "only the person knows" } })
    expect(used.status, used.text).toBe(200)
    expect((await api.users.signIn({ payload: { email: org.member.email, password: "only the person knows" } })).status).toBe(200)
  })

  it("a verification link proves the address only to the account that asked for it, signed in", async () => {
    // Someone signs up with an address that is not theirs and asks for a link, which goes to the address's owner.
    const victim = `victim-${Math.random().toString(36).slice(2, 8)}@example.com`
    const squatter = ok(await api.users.signUp({ payload: { email: victim, password: "not the owner's", name: "Squatter" } }), 201).session.token
    expect((await api.recovery.requestEmailVerification({ token: squatter })).status).toBe(202)
    const mail = await smtp.next(victim)
    const token = tokenIn(mail.text, "opv")
    // The owner of the mailbox uses it, as a link in a mail invites them to: it proves nothing for someone else's account.
    expect((await api.recovery.verifyEmail({ payload: { token } })).status).toBe(401)
    const bystander = ok(await api.users.signUp({ payload: { email: `bystander-${Math.random().toString(36).slice(2, 8)}@example.com`, password: "someone else", name: "Bystander" } }), 201).session.token
    const other = await api.recovery.verifyEmail({ token: bystander, payload: { token } })
    expect([other.status, invalid(other).details[0]?.code]).toEqual([400, "email_verification_token_invalid"])
    expect(ok(await api.account.export({ token: squatter }), 200).user.emailVerified).toBe(false)
  })
})

describe("the mail settings", () => {
  const read = (variables: Record<string, string>) =>
    Effect.runSync(Effect.result(Effect.provideService(settingsConfig, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: variables }))))

  it("refuse a mail server URL without ORGPLANE_MAIL_FROM, and one that is not smtp:// or smtps://, naming the variable", () => {
    const alone = read({ ORGPLANE_SMTP_URL: "smtp://relay.example.com:587" })
    expect(Result.isFailure(alone) && String(alone.failure)).toContain("ORGPLANE_MAIL_FROM must be set with ORGPLANE_SMTP_URL")
    const http = read({ ORGPLANE_SMTP_URL: "https://relay.example.com", ORGPLANE_MAIL_FROM: "no-reply@example.com" })
    expect(Result.isFailure(http) && String(http.failure)).toContain("ORGPLANE_SMTP_URL must be an smtp:// or smtps:// URL")
    const both = read({ ORGPLANE_SMTP_URL: "smtps://user:secret@relay.example.com", ORGPLANE_MAIL_FROM: "no-reply@example.com" })
    expect(Result.isSuccess(both) && both.success.mailFrom).toBe("no-reply@example.com")
  })
})

describe("an organization document's mailed invitations", () => {
  it("leave only once the whole apply has committed: a refused apply mails nothing", async () => {
    const org = await Http.staffed(server.url)
    const invitee = `document.${Date.now()}@example.com`
    const apply = async (document: Parameters<typeof api.organizationDocument.plan>[0]["payload"]["document"]) => {
      const { planHash } = ok(await api.organizationDocument.plan({ token: org.admin.token, payload: { document } }), 200)
      return api.organizationDocument.apply({ token: org.admin.token, payload: { document, planHash } })
    }
    const invitation = { email: invitee, role: "member" as const, delivery: "mailed" as const }
    // The invitation is made, then the team after it is refused (its external key is taken): both roll back.
    ok(await api.teams.create({ token: org.admin.token, payload: { name: "Keyed", externalKey: "grp-taken" } }), 201)
    const refused = await apply({ version: 1, invitations: [invitation], teams: [{ name: "Second", externalKey: "grp-taken", members: [] }] })
    expect(refused.body).toMatchObject({ error: "team_external_key_taken", message: expect.stringContaining(`team "Second" (create)`) })
    // A mail sent after the refusal has arrived; one the refused apply sent would have arrived before it.
    const marker = `marker.${Date.now()}@example.com`
    ok(await api.invitations.create({ token: org.admin.token, payload: { email: marker, role: "member", delivery: "mailed" } }), 201)
    await smtp.next(marker)
    expect(smtp.to(invitee)).toEqual([])
    const applied = ok(await apply({ version: 1, invitations: [invitation] }), 200)
    expect(applied.inviteTokens).toEqual([])
    await smtp.next(invitee)
    expect(smtp.to(invitee)).toHaveLength(1)
  })
})

/**
 * Pre-account hijacking through SSO (issue 43 item 2), against a real OpenID Provider on loopback (IdpOidc) and the
 * DNS fake: sign-up proves nothing about an email, so an SSO first sign-in does not simply land on "the account with
 * that email". An account whose email nobody proved is taken back by the provider's verified identity (its password,
 * sessions and API keys end); one whose address was proven (the organization's creator's, a mailed invitation's or
 * link's, received by FakeSmtp) is linked. An invitation whose token its inviter saw proves nothing (issue 69, H1).
 */
import * as FakeDns from "../../../../packages/testkit/src/FakeDns.js"
import * as FakeSmtp from "../../../../packages/testkit/src/FakeSmtp.js"
import type { SsoCallbackResult } from "@orgplane/schema"
import { type Caller, calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as IdpOidc from "../../../../packages/testkit/src/IdpOidc.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const SECRET = "oidc-client-secret-value"
const PASSWORD = "outsider chose this"
let dns: FakeDns.FakeDns
let smtp: FakeSmtp.FakeSmtp
let server: TestServer.RunningServer
let idp: IdpOidc.IdpOidc
/** The instance's operator, who disables and enables accounts. */
let operator: Awaited<ReturnType<typeof Http.operator>>
beforeAll(async () => {
  dns = await FakeDns.start()
  smtp = await FakeSmtp.start()
  server = await TestServer.start({
    defaultPlan: "enterprise",
    dnsServers: dns.address,
    outboundAllowPrivate: true,
    smtpUrl: smtp.url,
    mailFrom: "orgplane <no-reply@orgplane.test>"
  })
  idp = await IdpOidc.start({
    clients: [{ client_id: "orgplane", client_secret: SECRET, redirect_uris: [`${server.url}/v1/sso/oidc/callback`] }]
  })
  operator = await Http.operator(server.url)
})
afterAll(async () => {
  await server?.close()
  await idp?.close()
  await smtp?.close()
  await dns?.stop()
})

const { account: accounts, admin, apiKeys, audit, invitations, members, organizations, sso, ssoSignIn: signInApi, users } = calls(() => server.url)
const unique = () => Math.random().toString(36).slice(2, 8)
let subjects = 0
const account = (email: string) => {
  idp.addAccount(email, { sub: `sub-${++subjects}`, email, email_verified: true, name: `Person ${subjects}` })
  return email
}

/** What the OIDC callback answered, read as its success body (failing the test on any other status). */
const callbackResult = (answered: Http.RawResponse) => Http.expectStatus<typeof SsoCallbackResult.Encoded>("the callback", answered, 200)

/** The session an answer carries (failing the test when it carries none). */
const sessionToken = (answer: { readonly session: { readonly token: string } | null }): string => {
  if (answer.session === null) throw new Error("expected a session, got none")
  return answer.session.token
}

/**
 * Corp: an enterprise organization whose owner signed up with an address of `domain`, with that domain verified and
 * an active OIDC connection (enforcement optional, the default).
 */
const corp = async (domain = `corp-${unique()}.test`) => {
  const email = account(`admin-${unique()}@${domain}`)
  const token = ok(await users.signUp({ payload: { email, password: "correct horse battery", name: "Admin" } }), 201).session.token
  const org = ok(await organizations.create({ token, payload: { name: `Corp ${domain}` } }), 201)
  const created = await sso.createConnection({
    token,
    payload: { kind: "oidc", name: "Corp IdP", domains: [domain], oidc: { issuer: idp.issuer, clientId: "orgplane", clientSecret: SECRET } }
  })
  expect(created.status, created.text).toBe(201)
  const path = { connectionId: ok(created, 201).connection.id }
  const record = ok(await sso.requestDomainVerification({ token, query: { domain } }), 200).verification
  dns.setTxt(record.recordName, [record.recordValue])
  expect((await sso.verifyDomain({ token, query: { domain } })).status).toBe(200)
  const started = ok(await sso.startTest({ token, path }), 201)
  const tested = await Http.request((await idp.signIn(started.authorizationUrl)).url, "GET", "")
  expect(callbackResult(tested).test?.status, tested.text).toBe("succeeded")
  expect((await sso.activateConnection({ token, path })).status).toBe(200)
  return { token, domain, organizationId: org.organization.id }
}

/** `email` signs in through the IdP: the callback's answer (a one-time code, or a refusal). */
const ssoCallback = async (email: string) => {
  const started = await signInApi.start({ payload: { email } })
  expect(started.status, started.text).toBe(201)
  return Http.request((await idp.signIn(ok(started, 201).authorizationUrl, { as: email })).url, "GET", "")
}

/** The one-time code's exchange. */
const exchange = async (answered: Http.RawResponse) => signInApi.exchange({ payload: { code: callbackResult(answered).code ?? "" } })

/** `email` signs in through the IdP: the exchanged session's answer. */
const ssoSignIn = async (email: string) => {
  const answered = await ssoCallback(email)
  expect(answered.status, answered.text).toBe(200)
  const exchanged = await exchange(answered)
  expect(exchanged.status, exchanged.text).toBe(200)
  return ok(exchanged, 200)
}

const passwordSignIn = (email: string, password: string) => users.signIn({ payload: { email, password } })

/** Invites `email` as `credential` (a session or an API key), its token shown to the inviter: the token. */
const shownInvitation = async (credential: Caller, email: string, role: "member" | "admin" = "member") => {
  const invited = await invitations.create({ ...credential, payload: { email, role, delivery: "shown" } })
  const { invitation, inviteToken } = ok(invited, 201)
  expect(invitation.delivery, invited.text).toBe("shown")
  if (inviteToken === null) throw new Error(`a shown invitation without its token: ${invited.text}`)
  return inviteToken
}

/** Invites `email` by mail (this server's default): the token, as the address's mailbox received it. */
const mailedInvitation = async (token: string, email: string) => {
  const invited = await invitations.create({ token, payload: { email, role: "member" } })
  const { invitation, inviteToken } = ok(invited, 201)
  expect([invitation.delivery, inviteToken], invited.text).toEqual(["mailed", null])
  const mail = await smtp.next(email)
  const mailed = /opi_[A-Za-z0-9_-]{43}/.exec(mail.text)?.[0]
  expect(mailed, mail.text).toBeDefined()
  return mailed!
}

describe("an SSO first sign-in and an account made before it with the same email", { timeout: 120_000 }, () => {
  it("takes back an account an outsider signed up with the person's address: its password, sessions and API keys end", async () => {
    const domain = `corp-${unique()}.test`
    const victim = `victim@${domain}`
    // The outsider gets there first: an account with the victim's address and a password of their choosing, an
    // organization of their own and an API key in it.
    const signedUp = await users.signUp({ payload: { email: victim, password: PASSWORD, name: "Outsider" } })
    expect(signedUp.status, signedUp.text).toBe(201)
    const outsider = ok(signedUp, 201)
    const outsiderSession = outsider.session.token
    await organizations.create({ token: outsiderSession, payload: { name: "Outsider's" } })
    const key = await apiKeys.create({ token: outsiderSession, payload: { name: "kept" } })
    expect(key.status, key.text).toBe(201)

    // Corp then verifies that domain and activates OIDC (enforcement optional, the default).
    const org = await corp(domain)
    account(victim)
    const real = await ssoSignIn(victim)
    // The real person's identity takes the account (its id), and acts in Corp.
    expect(real.user.id).toBe(outsider.user.id)
    const me = ok(await users.me({ token: real.session.token }), 200)
    expect(me.organization?.id).toBe(org.organizationId)

    // Nothing the outsider held still works: the password, the session, the API key.
    const signIn = await passwordSignIn(victim, PASSWORD)
    expect(signIn.status, signIn.text).toBe(401)
    expect((await users.me({ token: outsiderSession })).status).toBe(401)
    expect((await users.me({ apiKey: ok(key, 201).key })).status).toBe(401)
    // And a second SSO sign-in is the same person, linked by the identity now.
    expect((await ssoSignIn(victim)).user.id).toBe(outsider.user.id)
  })

  it("takes it back too when the outsider made it by accepting their own organization's invitation (a proof there only)", async () => {
    const domain = `corp-${unique()}.test`
    const victim = `victim@${domain}`
    const outsider = await Http.owner(server.url, "Outsider's")
    const invitation = await shownInvitation({ token: outsider.token }, victim)
    const accepted = await invitations.accept({ payload: { token: invitation, signUp: { name: "Outsider", password: PASSWORD } } })
    expect(accepted.status, accepted.text).toBe(200)
    await corp(domain)
    account(victim)
    expect((await ssoSignIn(victim)).user.id).toBe(ok(accepted, 200).user.id)
    expect((await passwordSignIn(victim, PASSWORD)).status).toBe(401)
    expect((await users.me({ token: sessionToken(ok(accepted, 200)) })).status).toBe(401)
  })

  it("takes back an account that joined by a shown invitation, whoever accepted it: a squatter's password, sessions and keys end, and the role given since is the person's (issue 69, H1)", async () => {
    const org = await corp()
    const victim = `colleague-${unique()}@${org.domain}`
    // An outsider signs up with a future colleague's address, with an API key of their own.
    const outsider = ok(await users.signUp({ payload: { email: victim, password: PASSWORD, name: "Outsider" } }), 201)
    const outsiderSession = outsider.session.token
    // A script's key of Corp (its owner's, default scopes) invites the address: the token it was shown reached the
    // outsider, who accepts it signed in. The key is revoked afterwards.
    const script = ok(await apiKeys.create({ token: org.token, payload: { name: "ci" } }), 201)
    const invitation = await shownInvitation({ apiKey: script.key }, victim)
    const accepted = await invitations.accept({ token: outsiderSession, payload: { token: invitation } })
    expect(accepted.status, accepted.text).toBe(200)
    expect((await apiKeys.revoke({ token: org.token, path: { apiKeyId: script.apiKey.id } })).status).toBe(204)
    // The owner promotes the member they believe is their colleague; the outsider, an admin now, makes a key.
    const promoted = await members.changeRole({ token: org.token, path: { memberId: ok(accepted, 200).membership.id }, payload: { role: "admin" } })
    expect(promoted.status, promoted.text).toBe(200)
    const outsiderKey = ok(await apiKeys.create({ token: outsiderSession, payload: { name: "kept" } }), 201).key

    // The colleague's first SSO sign-in takes the account back rather than linking it.
    account(victim)
    const real = await ssoSignIn(victim)
    expect(real.user.id).toBe(outsider.user.id)
    expect((await passwordSignIn(victim, PASSWORD)).status).toBe(401)
    expect((await users.me({ token: outsiderSession })).status).toBe(401)
    expect((await users.me({ apiKey: outsiderKey })).status).toBe(401)
    // The admin role is the colleague's alone now.
    expect(ok(await users.me({ token: real.session.token }), 200).membership).toMatchObject({ organizationId: org.organizationId, role: "admin" })
  })

  it("links an account whose address a mailed invitation proved, without ending its password", async () => {
    const org = await corp()
    const email = account(`invited-${unique()}@${org.domain}`)
    const invitation = await mailedInvitation(org.token, email)
    const accepted = await invitations.accept({ payload: { token: invitation, signUp: { name: "Invited", password: "invited own password" } } })
    expect(accepted.status, accepted.text).toBe(200)
    const signedIn = await ssoSignIn(email)
    expect(signedIn.user.id).toBe(ok(accepted, 200).user.id)
    expect((await passwordSignIn(email, "invited own password")).status).toBe(200)
    expect((await users.me({ token: sessionToken(ok(accepted, 200)) })).status).toBe(200)
  })

  it("lets the organization's directory link an account a mailed invitation proved, keeping its password", async () => {
    const org = await corp()
    const email = account(`proven-${unique()}@${org.domain}`)
    const invitation = await mailedInvitation(org.token, email)
    const accepted = ok(await invitations.accept({ payload: { token: invitation, signUp: { name: "Proven", password: "proven own password" } } }), 200)
    expect((await ssoSignIn(email)).user.id).toBe(accepted.user.id)
    const directory = await Http.scimDirectory(server.url, org.token)
    const provisioned = await Http.request(server.url, "POST", `${directory.base}/Users`, {
      token: directory.token,
      headers: { "content-type": "application/scim+json" },
      body: { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: email, emails: [{ value: email, primary: true }], active: true }
    })
    expect(provisioned.status, provisioned.text).toBe(201)
    expect(provisioned.body).toMatchObject({ id: accepted.membership.id })
    expect((await passwordSignIn(email, "proven own password")).status).toBe(200)
  })

  it("proves the address with a mailed invitation accepted signed in: a later SSO sign-in links the account", async () => {
    const org = await corp()
    const email = account(`signed-in-${unique()}@${org.domain}`)
    const signedUp = ok(await users.signUp({ payload: { email, password: "their own password", name: "Person" } }), 201)
    const invitation = await mailedInvitation(org.token, email)
    expect((await invitations.accept({ token: signedUp.session.token, payload: { token: invitation } })).status).toBe(200)
    expect((await ssoSignIn(email)).user.id).toBe(signedUp.user.id)
    expect((await passwordSignIn(email, "their own password")).status).toBe(200)
    expect((await users.me({ token: signedUp.session.token })).status).toBe(200)
  })

  it("answers an invitation's signUp for a squatted address with what to do, not a bare email_taken", async () => {
    const org = await corp()
    const email = `squatted-${unique()}@${org.domain}`
    expect((await users.signUp({ payload: { email, password: PASSWORD, name: "Outsider" } })).status).toBe(201)
    const invitation = await mailedInvitation(org.token, email)
    const refused = await invitations.accept({ payload: { token: invitation, signUp: { name: "Real", password: "the real one" } } })
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ error: "account_exists", message: expect.stringMatching(/SSO, which takes the account back/) })
  })
})

describe("an SSO sign-in and an account's later life (issue 45, item 2)", { timeout: 120_000 }, () => {
  /** A member of Corp by its mailed invitation (an address proven), signed in once through SSO. */
  const member = async () => {
    const org = await corp()
    const email = account(`member-${unique()}@${org.domain}`)
    const invitation = await mailedInvitation(org.token, email)
    const accepted = await invitations.accept({ payload: { token: invitation, signUp: { name: "Member", password: "member own password" } } })
    expect(accepted.status, accepted.text).toBe(200)
    const signedIn = await ssoSignIn(email)
    return { email, userId: ok(accepted, 200).user.id, token: signedIn.session.token }
  }

  it("refuses a disabled account's SSO sign-in (account_disabled) until the operator enables it", async () => {
    const person = await member()
    expect((await admin.disableUser({ token: operator.token, path: { userId: person.userId } })).status).toBe(200)
    const refused = await ssoCallback(person.email)
    expect([refused.status, refused.body]).toEqual([401, expect.objectContaining({ error: "sso_sign_in_failed", code: "account_disabled" })])
    expect((await admin.enableUser({ token: operator.token, path: { userId: person.userId } })).status).toBe(200)
    expect((await ssoSignIn(person.email)).user.id).toBe(person.userId)
  })

  it("leaves an email changed after an SSO sign-in unproven: signing in again through the link proves nothing of it", async () => {
    const person = await member()
    const proven = ok(await accounts.export({ token: person.token }), 200)
    expect(proven.user.emailVerified).toBe(true)
    const moved = `moved-${unique()}@elsewhere.test`
    const changed = await users.changeEmail({ token: person.token, payload: { email: moved, password: "member own password" } })
    expect(ok(changed, 200).emailVerified).toBe(false)
    // The provider still vouches for the old address, whose identity is linked: the same person signs in, and the
    // new address stays unproven (before, the sign-in marked it proven).
    const again = await ssoSignIn(person.email)
    expect(again.user).toMatchObject({ id: person.userId, email: moved })
    expect(ok(await accounts.export({ token: again.session.token }), 200).user.emailVerified).toBe(false)
  })
})

describe("a take-back ends every other way into the account (issue 55, item 1)", { timeout: 120_000 }, () => {
  it("ends another organization's identity link: whoever moved their email onto the person's address cannot sign in through their own IdP", async () => {
    // The attacker's own organization, domain and connection, signed in through it (linked; their password kept).
    const attacker = await corp()
    const attackerEmail = ok(await users.me({ token: attacker.token }), 200).user.email
    const attackerSso = await ssoSignIn(attackerEmail)
    const attackerId = attackerSso.user.id
    // The attacker's account moves onto an address of the victim's employer that has no account yet.
    const victimOrg = await corp()
    const victim = account(`ceo-${unique()}@${victimOrg.domain}`)
    const moved = await users.changeEmail({ token: attacker.token, payload: { email: victim, password: "correct horse battery" } })
    expect(ok(moved, 200).emailVerified).toBe(false)
    const apiKey = ok(await apiKeys.create({ token: attackerSso.session.token, payload: { name: "kept" } }), 201).key

    // The victim's first SSO sign-in takes the account back.
    const real = await ssoSignIn(victim)
    expect(real.user.id).toBe(attackerId)
    // Nothing of the attacker's reaches it any more: their IdP identity, sessions, key, password.
    const again = await ssoCallback(attackerEmail)
    if (again.status === 200) {
      const exchanged = (await exchange(again)).body
      expect(exchanged !== undefined && "user" in exchanged ? exchanged.user.id : undefined).not.toBe(attackerId)
    }
    expect((await users.me({ token: attacker.token })).status).toBe(401)
    expect((await users.me({ token: attackerSso.session.token })).status).toBe(401)
    expect((await users.me({ apiKey })).status).toBe(401)
    expect((await passwordSignIn(victim, "correct horse battery")).status).toBe(401)
    // The organization records the take-back, naming the account and what ended.
    const reclaims = ok(await audit.listEvents({ token: victimOrg.token, query: { action: "user.reclaim", targetId: attackerId } }), 200).items
    expect(reclaims).toMatchObject([{ actor: { type: "system", id: "system:sso-reclaim" }, reason: expect.stringMatching(/sessions, 1 API keys and 1 identity links ended/) }])
    // The employer enforces SSO: the real person still reads their account, nobody else does.
    expect((await sso.setPolicy({ token: victimOrg.token, payload: { requireSso: true } })).status).toBe(200)
    expect((await accounts.export({ token: real.session.token })).status).toBe(200)
  })

  it("ends a colleague's identity link in the same organization: the employee who moved onto the CEO's address stays out", async () => {
    const org = await corp()
    const employee = account(`employee-${unique()}@${org.domain}`)
    const invitation = await mailedInvitation(org.token, employee)
    const accepted = await invitations.accept({ payload: { token: invitation, signUp: { name: "Employee", password: "employee own password" } } })
    expect(accepted.status, accepted.text).toBe(200)
    const employeeId = ok(accepted, 200).user.id
    expect((await ssoSignIn(employee)).user.id).toBe(employeeId)
    const ceo = account(`ceo-${unique()}@${org.domain}`)
    const token = sessionToken(ok(accepted, 200))
    expect((await users.changeEmail({ token, payload: { email: ceo, password: "employee own password" } })).status).toBe(200)

    const real = await ssoSignIn(ceo)
    expect(real.user.id).toBe(employeeId)
    // The employee's own identity no longer leads there: it is a first sign-in again (a new account by JIT).
    expect((await ssoSignIn(employee)).user.id).not.toBe(employeeId)
  })

  it("ends a sign-in's one-time code issued before the take-back", async () => {
    const attacker = await corp()
    const attackerEmail = ok(await users.me({ token: attacker.token }), 200).user.email
    const attackerId = (await ssoSignIn(attackerEmail)).user.id
    const victimOrg = await corp()
    const victim = account(`cfo-${unique()}@${victimOrg.domain}`)
    expect((await users.changeEmail({ token: attacker.token, payload: { email: victim, password: "correct horse battery" } })).status).toBe(200)
    // A code the attacker's IdP sign-in earned, held while the real person takes the account back.
    const held = await ssoCallback(attackerEmail)
    expect(held.status, held.text).toBe(200)
    expect((await ssoSignIn(victim)).user.id).toBe(attackerId)
    const exchanged = await exchange(held)
    expect(exchanged.status, exchanged.text).toBe(401)
  })

  it("revokes the API keys of a deleted organization too, which stay revoked when it is restored (issue 55, item 4)", async () => {
    const domain = `corp-${unique()}.test`
    const victim = `victim@${domain}`
    const outsider = ok(await users.signUp({ payload: { email: victim, password: PASSWORD, name: "Outsider" } }), 201)
    const outsiderSession = outsider.session.token
    const organizationId = ok(await organizations.create({ token: outsiderSession, payload: { name: "Outsider's" } }), 201).organization.id
    const key = ok(await apiKeys.create({ token: outsiderSession, payload: { name: "parked" } }), 201).key
    const deleted = await organizations.delete({ token: outsiderSession, payload: { confirmName: "Outsider's" } })
    expect(deleted.status, deleted.text).toBe(200)
    await corp(domain)
    account(victim)
    expect((await ssoSignIn(victim)).user.id).toBe(outsider.user.id)
    // The outsider's organization comes back (the operator restores it): its key stays revoked.
    const restored = await admin.restoreOrganization({ token: operator.token, path: { organizationId } })
    expect(restored.status, restored.text).toBe(200)
    expect((await users.me({ apiKey: key })).status).toBe(401)
  })
})

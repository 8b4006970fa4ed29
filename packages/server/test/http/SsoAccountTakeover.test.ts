/**
 * Pre-account hijacking through SSO (issue 43 item 2), against a real OpenID Provider on loopback (IdpOidc) and the
 * DNS fake: sign-up proves nothing about an email, so an SSO first sign-in does not simply land on "the account with
 * that email". An account whose email nobody proved is taken back by the provider's verified identity (its password,
 * sessions and API keys end); one the organization proved (its creator, an accepted invitation) is linked as before.
 */
import * as FakeDns from "../../../../packages/testkit/src/FakeDns.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as IdpOidc from "../../../../packages/testkit/src/IdpOidc.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const SECRET = "oidc-client-secret-value"
const PASSWORD = "outsider chose this"
let dns: FakeDns.FakeDns
let server: TestServer.RunningServer
let idp: IdpOidc.IdpOidc
/** The instance's operator, who disables and enables accounts. */
let operator: Awaited<ReturnType<typeof Http.operator>>
beforeAll(async () => {
  dns = await FakeDns.start()
  server = await TestServer.start({ defaultPlan: "enterprise", dnsServers: dns.address, outboundAllowPrivate: true })
  idp = await IdpOidc.start({
    clients: [{ client_id: "orgplane", client_secret: SECRET, redirect_uris: [`${server.url}/v1/sso/oidc/callback`] }]
  })
  operator = await Http.operator(server.url)
})
afterAll(async () => {
  await server?.close()
  await idp?.close()
  await dns?.stop()
})

const { get, post } = Http.verbs(() => server.url)
const put = (path: string, options: Http.Options = {}) => Http.request(server.url, "PUT", path, options)
const unique = () => Math.random().toString(36).slice(2, 8)
let subjects = 0
const account = (email: string) => {
  idp.addAccount(email, { sub: `sub-${++subjects}`, email, email_verified: true, name: `Person ${subjects}` })
  return email
}

/**
 * Corp: an enterprise organization whose owner signed up with an address of `domain`, with that domain verified and
 * an active OIDC connection (enforcement optional, the default).
 */
const corp = async (domain = `corp-${unique()}.test`) => {
  const email = account(`admin-${unique()}@${domain}`)
  const token: string = (await post("/v1/auth/sign-up", { body: { email, password: "correct horse battery", name: "Admin" } })).body.session.token
  const org = await post("/v1/organizations", { token, body: { name: `Corp ${domain}` } })
  const created = await post("/v1/sso/connections", {
    token,
    body: { kind: "oidc", name: "Corp IdP", domains: [domain], oidc: { issuer: idp.issuer, clientId: "orgplane", clientSecret: SECRET } }
  })
  expect(created.status, created.text).toBe(201)
  const connectionId: string = created.body.connection.id
  const record = (await post(`/v1/sso/request-domain-verification?domain=${domain}`, { token })).body.verification
  dns.setTxt(record.recordName, [record.recordValue])
  expect((await post(`/v1/sso/verify-domain?domain=${domain}`, { token })).status).toBe(200)
  const started = await post(`/v1/sso/connections/${connectionId}/tests`, { token })
  const tested = await Http.request((await idp.signIn(started.body.authorizationUrl)).url, "GET", "")
  expect(tested.body.test.status, tested.text).toBe("succeeded")
  expect((await post(`/v1/sso/connections/${connectionId}/activate`, { token })).status).toBe(200)
  return { token, domain, organizationId: org.body.organization.id as string }
}

/** `email` signs in through the IdP: the callback's answer (a one-time code, or a refusal). */
const ssoCallback = async (email: string) => {
  const started = await post("/v1/sso/sign-in", { body: { email } })
  expect(started.status, started.text).toBe(201)
  return Http.request((await idp.signIn(started.body.authorizationUrl, { as: email })).url, "GET", "")
}

/** `email` signs in through the IdP: the exchanged session's answer. */
const ssoSignIn = async (email: string) => {
  const answered = await ssoCallback(email)
  expect(answered.status, answered.text).toBe(200)
  const exchanged = await post("/v1/sso/sign-in/exchange", { body: { code: answered.body.code } })
  expect(exchanged.status, exchanged.text).toBe(200)
  return exchanged.body
}

const passwordSignIn = (email: string, password: string) => post("/v1/auth/sign-in", { body: { email, password } })

describe("an SSO first sign-in and an account made before it with the same email", { timeout: 120_000 }, () => {
  it("takes back an account an outsider signed up with the person's address: its password, sessions and API keys end", async () => {
    const domain = `corp-${unique()}.test`
    const victim = `victim@${domain}`
    // The outsider gets there first: an account with the victim's address and a password of their choosing, an
    // organization of their own and an API key in it.
    const outsider = await post("/v1/auth/sign-up", { body: { email: victim, password: PASSWORD, name: "Outsider" } })
    expect(outsider.status, outsider.text).toBe(201)
    const outsiderSession: string = outsider.body.session.token
    await post("/v1/organizations", { token: outsiderSession, body: { name: "Outsider's" } })
    const key = await post("/v1/api-keys", { token: outsiderSession, body: { name: "kept" } })
    expect(key.status, key.text).toBe(201)

    // Corp then verifies that domain and activates OIDC (enforcement optional, the default).
    const org = await corp(domain)
    account(victim)
    const real = await ssoSignIn(victim)
    // The real person's identity takes the account (its id), and acts in Corp.
    expect(real.user.id).toBe(outsider.body.user.id)
    const me = await get("/v1/me", { token: real.session.token })
    expect(me.body.organization.id).toBe(org.organizationId)

    // Nothing the outsider held still works: the password, the session, the API key.
    const signIn = await passwordSignIn(victim, PASSWORD)
    expect(signIn.status, signIn.text).toBe(401)
    expect((await get("/v1/me", { token: outsiderSession })).status).toBe(401)
    expect((await get("/v1/me", { apiKey: key.body.key })).status).toBe(401)
    // And a second SSO sign-in is the same person, linked by the identity now.
    expect((await ssoSignIn(victim)).user.id).toBe(outsider.body.user.id)
  })

  it("takes it back too when the outsider made it by accepting their own organization's invitation (a proof there only)", async () => {
    const domain = `corp-${unique()}.test`
    const victim = `victim@${domain}`
    const outsider = await Http.owner(server.url, "Outsider's")
    const invited = await post("/v1/invitations", { token: outsider.token, body: { email: victim, role: "member" } })
    const accepted = await post("/v1/invitations/accept", { body: { token: invited.body.inviteToken, signUp: { name: "Outsider", password: PASSWORD } } })
    expect(accepted.status, accepted.text).toBe(200)
    await corp(domain)
    account(victim)
    expect((await ssoSignIn(victim)).user.id).toBe(accepted.body.user.id)
    expect((await passwordSignIn(victim, PASSWORD)).status).toBe(401)
    expect((await get("/v1/me", { token: accepted.body.session.token })).status).toBe(401)
  })

  it("links an account whose email the organization proved (an accepted invitation) without ending its password", async () => {
    const org = await corp()
    const email = account(`invited-${unique()}@${org.domain}`)
    const invited = await post("/v1/invitations", { token: org.token, body: { email, role: "member" } })
    const accepted = await post("/v1/invitations/accept", { body: { token: invited.body.inviteToken, signUp: { name: "Invited", password: "invited own password" } } })
    expect(accepted.status, accepted.text).toBe(200)
    const signedIn = await ssoSignIn(email)
    expect(signedIn.user.id).toBe(accepted.body.user.id)
    expect((await passwordSignIn(email, "invited own password")).status).toBe(200)
    expect((await get("/v1/me", { token: accepted.body.session.token })).status).toBe(200)
  })

  it("answers an invitation's signUp for a squatted address with what to do, not a bare email_taken", async () => {
    const org = await corp()
    const email = `squatted-${unique()}@${org.domain}`
    expect((await post("/v1/auth/sign-up", { body: { email, password: PASSWORD, name: "Outsider" } })).status).toBe(201)
    const invited = await post("/v1/invitations", { token: org.token, body: { email, role: "member" } })
    const refused = await post("/v1/invitations/accept", { body: { token: invited.body.inviteToken, signUp: { name: "Real", password: "the real one" } } })
    expect([refused.status, refused.body.error]).toEqual([409, "account_exists"])
    expect(refused.body.message).toMatch(/SSO, which takes the account back/)
  })
})

describe("an SSO sign-in and an account's later life (issue 45, item 2)", { timeout: 120_000 }, () => {
  /** A member of Corp by its invitation (an address Corp proved), signed in once through SSO. */
  const member = async () => {
    const org = await corp()
    const email = account(`member-${unique()}@${org.domain}`)
    const invited = await post("/v1/invitations", { token: org.token, body: { email, role: "member" } })
    const accepted = await post("/v1/invitations/accept", { body: { token: invited.body.inviteToken, signUp: { name: "Member", password: "member own password" } } })
    expect(accepted.status, accepted.text).toBe(200)
    const signedIn = await ssoSignIn(email)
    return { email, userId: accepted.body.user.id as string, token: signedIn.session.token as string }
  }

  it("refuses a disabled account's SSO sign-in (account_disabled) until the operator enables it", async () => {
    const person = await member()
    expect((await post(`/v1/admin/users/${person.userId}/disable`, { token: operator.token })).status).toBe(200)
    const refused = await ssoCallback(person.email)
    expect([refused.status, refused.body]).toEqual([401, expect.objectContaining({ error: "sso_sign_in_failed", code: "account_disabled" })])
    expect((await post(`/v1/admin/users/${person.userId}/enable`, { token: operator.token })).status).toBe(200)
    expect((await ssoSignIn(person.email)).user.id).toBe(person.userId)
  })

  it("leaves an email changed after an SSO sign-in unproven: signing in again through the link proves nothing of it", async () => {
    const person = await member()
    const proven = Http.expectStatus<any>("export", await get("/v1/me/export", { token: person.token }), 200)
    expect(proven.user.emailVerified).toBe(true)
    const moved = `moved-${unique()}@elsewhere.test`
    const changed = await put("/v1/me/email", { token: person.token, body: { email: moved, password: "member own password" } })
    expect([changed.status, changed.body.emailVerified]).toEqual([200, false])
    // The provider still vouches for the old address, whose identity is linked: the same person signs in, and the
    // new address stays unproven (before, the sign-in marked it proven).
    const again = await ssoSignIn(person.email)
    expect(again.user).toMatchObject({ id: person.userId, email: moved })
    expect(Http.expectStatus<any>("export", await get("/v1/me/export", { token: again.session.token }), 200).user.emailVerified).toBe(false)
  })
})

describe("a take-back ends every other way into the account (issue 55, item 1)", { timeout: 120_000 }, () => {
  it("ends another organization's identity link: whoever moved their email onto the person's address cannot sign in through their own IdP", async () => {
    // The attacker's own organization, domain and connection, signed in through it (linked; their password kept).
    const attacker = await corp()
    const attackerEmail = (await get("/v1/me", { token: attacker.token })).body.user.email as string
    const attackerSso = await ssoSignIn(attackerEmail)
    const attackerId: string = attackerSso.user.id
    // The attacker's account moves onto an address of the victim's employer that has no account yet.
    const victimOrg = await corp()
    const victim = account(`ceo-${unique()}@${victimOrg.domain}`)
    const moved = await put("/v1/me/email", { token: attacker.token, body: { email: victim, password: "correct horse battery" } })
    expect([moved.status, moved.body.emailVerified]).toEqual([200, false])
    const apiKey = Http.expectStatus<any>("key", await post("/v1/api-keys", { token: attackerSso.session.token, body: { name: "kept" } }), 201).key as string

    // The victim's first SSO sign-in takes the account back.
    const real = await ssoSignIn(victim)
    expect(real.user.id).toBe(attackerId)
    // Nothing of the attacker's reaches it any more: their IdP identity, sessions, key, password.
    const again = await ssoCallback(attackerEmail)
    if (again.status === 200) {
      const exchanged = await post("/v1/sso/sign-in/exchange", { body: { code: again.body.code } })
      expect(exchanged.body.user?.id).not.toBe(attackerId)
    }
    expect((await get("/v1/me", { token: attacker.token })).status).toBe(401)
    expect((await get("/v1/me", { token: attackerSso.session.token })).status).toBe(401)
    expect((await get("/v1/me", { apiKey })).status).toBe(401)
    expect((await passwordSignIn(victim, "correct horse battery")).status).toBe(401)
    // The organization records the take-back, naming the account and what ended.
    const reclaims = Http.expectStatus<any>("log", await get(`/v1/audit/events?action=user.reclaim&targetId=${attackerId}`, { token: victimOrg.token }), 200).items
    expect(reclaims).toMatchObject([{ actor: { type: "system", id: "system:sso-reclaim" }, reason: expect.stringMatching(/sessions, 1 API keys and 1 identity links ended/) }])
    // The employer enforces SSO: the real person still reads their account, nobody else does.
    expect((await put("/v1/sso/policy", { token: victimOrg.token, body: { requireSso: true } })).status).toBe(200)
    expect((await get("/v1/me/export", { token: real.session.token })).status).toBe(200)
  })

  it("ends a colleague's identity link in the same organization: the employee who moved onto the CEO's address stays out", async () => {
    const org = await corp()
    const employee = account(`employee-${unique()}@${org.domain}`)
    const invited = await post("/v1/invitations", { token: org.token, body: { email: employee, role: "member" } })
    const accepted = await post("/v1/invitations/accept", { body: { token: invited.body.inviteToken, signUp: { name: "Employee", password: "employee own password" } } })
    expect(accepted.status, accepted.text).toBe(200)
    const employeeId: string = accepted.body.user.id
    expect((await ssoSignIn(employee)).user.id).toBe(employeeId)
    const ceo = account(`ceo-${unique()}@${org.domain}`)
    expect((await put("/v1/me/email", { token: accepted.body.session.token, body: { email: ceo, password: "employee own password" } })).status).toBe(200)

    const real = await ssoSignIn(ceo)
    expect(real.user.id).toBe(employeeId)
    // The employee's own identity no longer leads there: it is a first sign-in again (a new account by JIT).
    expect((await ssoSignIn(employee)).user.id).not.toBe(employeeId)
  })

  it("ends a sign-in's one-time code issued before the take-back", async () => {
    const attacker = await corp()
    const attackerEmail = (await get("/v1/me", { token: attacker.token })).body.user.email as string
    const attackerId: string = (await ssoSignIn(attackerEmail)).user.id
    const victimOrg = await corp()
    const victim = account(`cfo-${unique()}@${victimOrg.domain}`)
    expect((await put("/v1/me/email", { token: attacker.token, body: { email: victim, password: "correct horse battery" } })).status).toBe(200)
    // A code the attacker's IdP sign-in earned, held while the real person takes the account back.
    const held = await ssoCallback(attackerEmail)
    expect(held.status, held.text).toBe(200)
    expect((await ssoSignIn(victim)).user.id).toBe(attackerId)
    const exchanged = await post("/v1/sso/sign-in/exchange", { body: { code: held.body.code } })
    expect(exchanged.status, exchanged.text).toBe(401)
  })

  it("revokes the API keys of a deleted organization too, which stay revoked when it is restored (issue 55, item 4)", async () => {
    const domain = `corp-${unique()}.test`
    const victim = `victim@${domain}`
    const outsider = await post("/v1/auth/sign-up", { body: { email: victim, password: PASSWORD, name: "Outsider" } })
    const outsiderSession: string = outsider.body.session.token
    const organizationId = Http.expectStatus<any>("organization", await post("/v1/organizations", { token: outsiderSession, body: { name: "Outsider's" } }), 201).organization.id as string
    const key = Http.expectStatus<any>("key", await post("/v1/api-keys", { token: outsiderSession, body: { name: "parked" } }), 201).key as string
    const deleted = await Http.request(server.url, "DELETE", "/v1/organization", { token: outsiderSession, body: { confirmName: "Outsider's" } })
    expect(deleted.status, deleted.text).toBe(200)
    await corp(domain)
    account(victim)
    expect((await ssoSignIn(victim)).user.id).toBe(outsider.body.user.id)
    // The outsider's organization comes back (the operator restores it): its key stays revoked.
    const restored = await post(`/v1/admin/organizations/${organizationId}/restore`, { token: operator.token })
    expect(restored.status, restored.text).toBe(200)
    expect((await get("/v1/me", { apiKey: key })).status).toBe(401)
  })
})

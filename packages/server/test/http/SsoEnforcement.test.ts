/**
 * SSO enforcement (`PUT /v1/sso/policy`) against a real OpenID Provider on loopback (oidc-provider,
 * packages/testkit/src/IdpOidc.ts): password sign-in refused for an enforcing organization's domain, the owners'
 * break-glass, the organization's routes refusing sessions its own connection did not authenticate (another
 * organization's SSO session among them), discovery's `required`, and the policy's plan, roles and preconditions.
 */
import type { SsoCallbackResult } from "@orgplane/schema"
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as FakeDns from "../../../../packages/testkit/src/FakeDns.js"
import * as FakeSmtp from "../../../../packages/testkit/src/FakeSmtp.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as IdpOidc from "../../../../packages/testkit/src/IdpOidc.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const SECRET = "oidc-client-secret-value"
const PASSWORD = "correct horse battery"
let dns: FakeDns.FakeDns
let smtp: FakeSmtp.FakeSmtp
let server: TestServer.RunningServer
let free: TestServer.RunningServer
let idp: IdpOidc.IdpOidc
beforeAll(async () => {
  dns = await FakeDns.start()
  smtp = await FakeSmtp.start()
  ;[server, free] = await Promise.all([
    // Invitations are mailed: accepting one proves the address, so the person's first SSO sign-in links their account.
    TestServer.start({ defaultPlan: "enterprise", dnsServers: dns.address, outboundAllowPrivate: true, smtpUrl: smtp.url, mailFrom: "orgplane <no-reply@orgplane.test>" }),
    TestServer.start()
  ])
  idp = await IdpOidc.start({
    clients: [{ client_id: "orgplane", client_secret: SECRET, redirect_uris: [`${server.url}/v1/sso/oidc/callback`] }]
  })
})
afterAll(async () => {
  await Promise.all([server?.close(), free?.close()])
  await idp?.close()
  await smtp?.close()
  await dns?.stop()
})

const { get, put } = { ...Http.verbs(() => server.url), put: (path: string, options: Http.Options) => Http.request(server.url, "PUT", path, options) }
const { apiKeys, audit, invitations, organizations, sso, ssoSignIn, users } = calls(() => server.url)
const unique = () => Math.random().toString(36).slice(2, 8)

let subjects = 0
/** An account at the IdP (its login hint is the email). */
const account = (email: string) => {
  idp.addAccount(email, { sub: `sub-${++subjects}`, email, email_verified: true, name: `Person ${subjects}` })
  return email
}

/** Signs `email` in through SSO: the session token. */
const ssoSession = async (email: string): Promise<string> => {
  const started = ok(await ssoSignIn.start({ payload: { email } }), 201)
  const callback = await idp.signIn(started.authorizationUrl, { as: email })
  const answered = await Http.request(callback.url, "GET", "")
  const { code } = Http.expectStatus<typeof SsoCallbackResult.Encoded>("the callback", answered, 200)
  if (code === null) throw new Error(`the callback gave no code: ${answered.text}`)
  return ok(await ssoSignIn.exchange({ payload: { code } }), 200).session.token
}

/**
 * An enterprise organization whose owner (`admin@<domain>`, a password account) has a verified domain and an OIDC
 * connection: active (tested by the owner, then activated) unless `draft`.
 */
const organization = async (options: { readonly draft?: boolean } = {}) => {
  const domain = `corp-${unique()}.test`
  const email = account(`admin@${domain}`)
  const token = ok(await users.signUp({ payload: { email, password: PASSWORD, name: "Owner" } }), 201).session.token
  const org = ok(await organizations.create({ token, payload: { name: `Org ${domain}` } }), 201)
  const created = ok(await sso.createConnection({
    token,
    payload: { kind: "oidc", name: "Loopback IdP", domains: [domain], oidc: { issuer: idp.issuer, clientId: "orgplane", clientSecret: SECRET } }
  }), 201)
  const connectionId = created.connection.id
  const record = ok(await sso.requestDomainVerification({ token, query: { domain } }), 200).verification
  dns.setTxt(record.recordName, [record.recordValue])
  expect((await sso.verifyDomain({ token, query: { domain } })).status).toBe(200)
  if (options.draft !== true) {
    const started = ok(await sso.startTest({ token, path: { connectionId } }), 201)
    const callback = await idp.signIn(started.authorizationUrl)
    expect((await Http.request(callback.url, "GET", "")).body).toMatchObject({ test: { status: "succeeded" } })
    expect((await sso.activateConnection({ token, path: { connectionId } })).status).toBe(200)
  }
  return { token, email, domain, organizationId: org.organization.id, connectionId }
}

/** A person invited to the caller's organization by mail who accepts by signing up with a password: their password session. */
const invited = async (inviterToken: string, email: string, role: "member" | "admin" = "member") => {
  const invitation = await invitations.create({ token: inviterToken, payload: { email, role } })
  expect(invitation.status, JSON.stringify(invitation.body)).toBe(201)
  const accepted = await invitations.accept({ payload: { token: await smtp.token(email, "opi"), signUp: { name: "Invitee", password: PASSWORD } } })
  const { session } = ok(accepted, 200)
  if (session === null) throw new Error(`accepting with signUp gave no session: ${accepted.text}`)
  return session.token
}

const signInWithPassword = (email: string, password = PASSWORD) => users.signIn({ payload: { email, password } })
/** The id of the organization the session acts in; throws, naming the answer, when it has none. */
const activeOrganizationId = async (token: string) => {
  const answer = await users.me({ token })
  const { organization } = ok(answer, 200)
  if (organization === null) throw new Error(`the session has no active organization: ${answer.text}`)
  return organization.id
}
const status = async (path: string, token: string) => (await get(path, { token })).status

describe("SSO enforcement", { timeout: 60_000 }, () => {
  it("answers the defaults, refuses members (403) and other plans (402), and keeps each organization's policy its own", async () => {
    const staffed = await Http.staffed(server.url)
    const policy = await sso.getPolicy({ token: staffed.admin.token })
    expect([policy.status, policy.body]).toEqual([200, { policy: { requireSso: false, ownersPasswordFallback: true, updatedAt: null } }])
    for (const [method, body] of [["GET", undefined], ["PUT", { requireSso: false }]] as const) {
      const refused = await Http.request(server.url, method, "/v1/sso/policy", { token: staffed.member.token, ...(body === undefined ? {} : { body }) })
      expect([refused.status, refused.body]).toMatchObject([403, { reason: "insufficient_role" }])
    }
    const other = await Http.staffed(free.url)
    for (const token of [other.owner.token, other.member.token]) {
      const refused = await Http.request(free.url, "PUT", "/v1/sso/policy", { token, body: { requireSso: true } })
      expect([refused.status, refused.body]).toMatchObject([402, { error: "enterprise_plan_required", feature: "sso" }])
    }
    // Tenancy: another organization's enforcement is not this one's.
    const enforcing = await organization()
    expect((await sso.setPolicy({ token: enforcing.token, payload: { requireSso: true } })).status).toBe(200)
    // The policy is the organization's: its event names it.
    const events = ok(await audit.listEvents({ token: enforcing.token, query: { action: "sso.policy.update", targetId: enforcing.organizationId } }), 200)
    const [changed] = events.items
    expect(changed?.targets).toEqual([{ type: "organization", id: enforcing.organizationId }])
    expect(ok(await sso.getPolicy({ token: staffed.owner.token }), 200).policy.requireSso).toBe(false)
    expect(ok(await sso.getPolicy({ token: enforcing.token }), 200).policy).toMatchObject({ requireSso: true, ownersPasswordFallback: true })
    // Bad input is a 400.
    const bad = await put("/v1/sso/policy", { token: staffed.owner.token, body: { requireSso: "yes", extra: 1 } })
    expect(bad.status).toBe(400)
  })

  it("refuses to require SSO without an active connection serving a verified domain", async () => {
    const org = await organization({ draft: true })
    const refused = await sso.setPolicy({ token: org.token, payload: { requireSso: true } })
    expect([refused.status, refused.body]).toMatchObject([409, { error: "sso_connection_required" }])
    const staffed = await Http.staffed(server.url)
    expect((await sso.setPolicy({ token: staffed.owner.token, payload: { requireSso: true } })).body).toMatchObject({ error: "sso_connection_required" })
    const off = ok(await sso.setPolicy({ token: org.token, payload: { requireSso: false, ownersPasswordFallback: false } }), 200)
    expect([off.policy.requireSso, off.policy.ownersPasswordFallback]).toEqual([false, false])
  })

  it("refuses password sign-in for the domain with sso_required, answers discovery's required, and keeps the owners' break-glass", async () => {
    const org = await organization()
    const other = await organization()
    expect(ok(await ssoSignIn.discover({ payload: { email: `someone@${org.domain}` } }), 200).required).toBe(false)
    const on = ok(await sso.setPolicy({ token: org.token, payload: { requireSso: true } }), 200)
    expect([on.policy.requireSso, on.policy.ownersPasswordFallback]).toEqual([true, true])

    // Discovery: required for the enforcing organization's domain, whether or not the person has an account.
    for (const email of [org.email, `nobody-${unique()}@${org.domain}`]) {
      expect((await ssoSignIn.discover({ payload: { email } })).body).toEqual({ method: "sso", connectionId: org.connectionId, required: true })
    }
    expect(ok(await ssoSignIn.discover({ payload: { email: `x@${other.domain}` } }), 200).required).toBe(false)

    // Password sign-in: the same refusal for a member, a stranger and a wrong password, naming the way in.
    const member = account(`bob@${org.domain}`)
    await ssoSession(member)
    for (const [email, password] of [[member, PASSWORD], [`nobody-${unique()}@${org.domain}`, PASSWORD], [org.email, "wrong password here"]] as const) {
      const refused = await signInWithPassword(email, password)
      expect([refused.status, refused.body], email).toMatchObject([403, { reason: "sso_required" }])
      expect(refused.body).toMatchObject({ message: expect.stringContaining(org.connectionId) })
      expect(refused.body).toMatchObject({ message: expect.stringContaining("/v1/sso/sign-in") })
      expect(refused.body).toMatchObject({ message: expect.stringContaining(`\`orgplane auth login --sso --email ${email}\``) })
    }

    // Nor can a password account be made for the domain (SSO makes its people's accounts).
    const signUp = await users.signUp({ payload: { email: `new-${unique()}@${org.domain}`, password: PASSWORD, name: "New" } })
    expect([signUp.status, signUp.body]).toMatchObject([403, { reason: "sso_required" }])

    // Break-glass: the owner's right password still signs in, acting as the owner of the organization.
    const glass = ok(await signInWithPassword(org.email), 200).session.token
    const me = await users.me({ token: glass })
    expect(me.body).toMatchObject({ organization: { id: org.organizationId }, membership: { role: "owner" } })
    expect(await status("/v1/sso/connections", glass)).toBe(200)

    // Without the fallback, the owner too must use SSO (set from an SSO session of the owner).
    const ownerSso = await ssoSession(org.email)
    const strict = await sso.setPolicy({ token: ownerSso, payload: { requireSso: true, ownersPasswordFallback: false } })
    expect(strict.status, strict.text).toBe(200)
    expect((await signInWithPassword(org.email)).body).toMatchObject({ reason: "sso_required" })
    expect(await status("/v1/teams", glass)).toBe(403)
    // Another organization's domain is untouched.
    expect((await signInWithPassword(other.email)).status).toBe(200)
  })

  it("refuses, on the organization's routes, password sessions of its domain (even those started before) and admits its own SSO sessions, guests and API keys", async () => {
    const org = await organization()
    const bob = `bob@${org.domain}`
    account(bob)
    const bobPassword = await invited(org.token, bob)
    const guest = await invited(org.token, `contractor-${unique()}@gmail.test`)
    const key = ok(await apiKeys.create({ token: org.token, payload: { name: "CI" } }), 201)
    expect(await status("/v1/teams", bobPassword)).toBe(200)

    expect((await sso.setPolicy({ token: org.token, payload: { requireSso: true } })).status).toBe(200)
    const refused = await get("/v1/teams", { token: bobPassword })
    expect([refused.status, refused.body]).toMatchObject([403, { reason: "sso_session_required" }])
    expect(refused.body).toMatchObject({ message: expect.stringContaining(org.connectionId) })
    // Not an organization route: the person still sees themselves and can sign out.
    expect(await status("/v1/me", bobPassword)).toBe(200)

    const bobSso = await ssoSession(bob)
    expect(await status("/v1/teams", bobSso)).toBe(200)
    expect(await status("/v1/teams", guest)).toBe(200)
    expect((await Http.request(server.url, "GET", "/v1/teams", { apiKey: key.key })).status).toBe(200)

    // Off again: the same password session works at once.
    expect((await sso.setPolicy({ token: org.token, payload: { requireSso: false } })).status).toBe(200)
    expect(await status("/v1/teams", bobPassword)).toBe(200)
  })

  it("suspends the API keys a covered member made outside SSO, says why, and lets only SSO sessions make their keys", async () => {
    const org = await organization()
    const bob = account(`bob@${org.domain}`)
    const bobPassword = await invited(org.token, bob, "admin")
    const guestPassword = await invited(org.token, `contractor-${unique()}@gmail.test`, "admin")
    const makeKey = async (credential: { token: string } | { apiKey: string }, name: string) => {
      const made = await apiKeys.create({ ...credential, payload: { name, scopes: ["apiKeys.manage", "members.read", "sso.manage"] } })
      return ok(made, 201).key
    }
    const bobPasswordKey = await makeKey({ token: bobPassword }, "bob password")
    const bobSsoKey = await makeKey({ token: await ssoSession(bob) }, "bob sso")
    const guestKey = await makeKey({ token: guestPassword }, "guest")
    const ownerKey = await makeKey({ token: org.token }, "owner break-glass")
    const withKey = (key: string, method: "GET" | "POST", path: string) =>
      Http.request(server.url, method, path, { apiKey: key, ...(method === "POST" ? { body: { name: "child", scopes: ["members.read"] } } : {}) })
    for (const key of [bobPasswordKey, bobSsoKey, guestKey, ownerKey]) expect((await withKey(key, "GET", "/v1/members")).status).toBe(200)

    expect((await sso.setPolicy({ token: org.token, payload: { requireSso: true } })).status).toBe(200)
    // The key Bob made with his password stops, on every organization route, saying why and the way out.
    for (const [method, path] of [["GET", "/v1/members"], ["GET", "/v1/sso/connections"], ["POST", "/v1/api-keys"]] as const) {
      const refused = await withKey(bobPasswordKey, method, path)
      expect([refused.status, refused.body], path).toMatchObject([403, { reason: "sso_session_required" }])
      expect(refused.body).toMatchObject({ message: expect.stringContaining("API key is suspended") })
      expect(refused.body).toMatchObject({ message: expect.stringContaining(org.connectionId) })
    }
    // The key his SSO session made keeps working, but makes no keys: only an SSO session does.
    expect((await withKey(bobSsoKey, "GET", "/v1/sso/connections")).status).toBe(200)
    const child = await withKey(bobSsoKey, "POST", "/v1/api-keys")
    expect([child.status, child.body]).toMatchObject([403, { reason: "sso_session_required" }])
    expect(child.body).toMatchObject({ message: expect.stringContaining("only a session its SSO signed in makes API keys") })
    const fresh = await makeKey({ token: await ssoSession(bob) }, "bob sso again")
    expect((await withKey(fresh, "GET", "/v1/members")).status).toBe(200)
    // Outside the domains (a guest) and the owners' break-glass: keys work and make keys, as their password sessions do.
    for (const key of [guestKey, ownerKey]) {
      expect((await withKey(key, "GET", "/v1/members")).status).toBe(200)
      expect((await withKey(await makeKey({ apiKey: key }, "child"), "GET", "/v1/members")).status).toBe(200)
    }
    // Without the fallback (set from the owner's SSO session), the owner's password key stops too.
    expect((await sso.setPolicy({ token: await ssoSession(org.email), payload: { requireSso: true, ownersPasswordFallback: false } })).status).toBe(200)
    expect((await withKey(ownerKey, "GET", "/v1/members")).body).toMatchObject({ reason: "sso_session_required" })
    // Enforcement off: the suspended keys work again.
    expect((await sso.setPolicy({ token: await ssoSession(org.email), payload: { requireSso: false } })).status).toBe(200)
    for (const key of [bobPasswordKey, ownerKey]) expect((await withKey(key, "GET", "/v1/members")).status).toBe(200)
  })

  it("refuses a second organization's SSO session on an enforcing organization, including a switch to it", async () => {
    const a = await organization()
    const b = await organization()
    // Carol signs in through B's IdP (a JIT member of B), and is also a member of A (an email outside A's domains).
    const carol = account(`carol@${b.domain}`)
    const carolB = await ssoSession(carol)
    expect((await invitations.create({ token: a.token, payload: { email: carol, role: "member" } })).status).toBe(201)
    expect((await invitations.accept({ token: carolB, payload: { token: await smtp.token(carol, "opi") } })).status).toBe(200)
    // Not enforcing: A admits the session (as it admits password sessions).
    expect(await activeOrganizationId(carolB)).toBe(a.organizationId)
    expect(await status("/v1/teams", carolB)).toBe(200)

    expect((await sso.setPolicy({ token: a.token, payload: { requireSso: true } })).status).toBe(200)
    const refused = await get("/v1/teams", { token: carolB })
    expect([refused.status, refused.body]).toMatchObject([403, { reason: "sso_session_required" }])
    expect(refused.body).toMatchObject({ message: expect.stringContaining("another organization's") })
    // Back to B, where B's own session works; switching to A again is refused before it happens.
    expect((await users.switchOrganization({ token: carolB, payload: { organizationId: b.organizationId } })).status).toBe(200)
    expect(await status("/v1/teams", carolB)).toBe(200)
    const switched = await users.switchOrganization({ token: carolB, payload: { organizationId: a.organizationId } })
    expect([switched.status, switched.body]).toMatchObject([403, { reason: "sso_session_required" }])
    expect(await activeOrganizationId(carolB)).toBe(b.organizationId)

    // And A's owner, signed in through B's IdP? Impossible: B's IdP cannot vouch for A's domain.
    const started = await ssoSignIn.start({ payload: { email: a.email } })
    expect(started.status).toBe(201)
  })

  it("keeps the operator organization's owners signing in with a password while it requires SSO", async () => {
    const operator = await Http.operator(server.url, `Operator ${unique()}`)
    const refused = await sso.setPolicy({ token: operator.token, payload: { requireSso: true, ownersPasswordFallback: false } })
    expect([refused.status, refused.body]).toMatchObject([409, { error: "operator_password_fallback" }])
    expect(ok(await sso.getPolicy({ token: operator.token }), 200).policy).toMatchObject({ requireSso: false, ownersPasswordFallback: true })
    // The fallback matters only while SSO is required: off without it is the operator's choice, and requiring SSO
    // later without naming it turns it back on (its default).
    expect(ok(await sso.setPolicy({ token: operator.token, payload: { requireSso: false, ownersPasswordFallback: false } }), 200).policy.ownersPasswordFallback).toBe(false)
  })

  it("never locks out the session that turns enforcement on", async () => {
    const org = await organization()
    // The owner's password session, without the owners' fallback: it would be refused at once.
    const locked = await sso.setPolicy({ token: org.token, payload: { requireSso: true, ownersPasswordFallback: false } })
    expect([locked.status, locked.body]).toMatchObject([409, { error: "sso_policy_locks_you_out" }])
    expect(ok(await sso.getPolicy({ token: org.token }), 200).policy.requireSso).toBe(false)
    // An admin of the domain signed in with a password: locked out whatever the fallback (it is the owners').
    const admin = `ada@${org.domain}`
    account(admin)
    const adminPassword = await invited(org.token, admin, "admin")
    expect((await sso.setPolicy({ token: adminPassword, payload: { requireSso: true } })).body).toMatchObject({ error: "sso_policy_locks_you_out" })
    // So is a key that session made: it would be suspended at once.
    const passwordKey = ok(await apiKeys.create({ token: adminPassword, payload: { name: "made with a password", scopes: ["sso.manage"] } }), 201).key
    const byKey = await sso.setPolicy({ apiKey: passwordKey, payload: { requireSso: true } })
    expect([byKey.status, byKey.body]).toMatchObject([409, { error: "sso_policy_locks_you_out" }])
    // Signed in through the organization's SSO, the same admin may.
    const adminSso = await ssoSession(admin)
    expect((await sso.setPolicy({ token: adminSso, payload: { requireSso: true, ownersPasswordFallback: false } })).status).toBe(200)
    // A key an SSO session made keeps working under enforcement: the documented way back in, besides the owners' fallback.
    const key = ok(await apiKeys.create({ token: adminSso, payload: { name: "break-glass", scopes: ["sso.manage"] } }), 201)
    const off = await sso.setPolicy({ apiKey: key.key, payload: { requireSso: false } })
    expect(ok(off, 200).policy.requireSso).toBe(false)
  })
})

/**
 * SSO enforcement (`PUT /v1/sso/policy`) against a real OpenID Provider on loopback (oidc-provider,
 * packages/testkit/src/IdpOidc.ts): password sign-in refused for an enforcing organization's domain, the owners'
 * break-glass, the organization's routes refusing sessions its own connection did not authenticate (another
 * organization's SSO session among them), discovery's `required`, and the policy's plan, roles and preconditions.
 */
import * as FakeDns from "../../../../packages/testkit/src/FakeDns.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as IdpOidc from "../../../../packages/testkit/src/IdpOidc.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const SECRET = "oidc-client-secret-value"
const PASSWORD = "correct horse battery"
let dns: FakeDns.FakeDns
let server: TestServer.RunningServer
let free: TestServer.RunningServer
let idp: IdpOidc.IdpOidc
beforeAll(async () => {
  dns = await FakeDns.start()
  ;[server, free] = await Promise.all([
    TestServer.start({ defaultPlan: "enterprise", dnsServers: dns.address, outboundAllowPrivate: true }),
    TestServer.start()
  ])
  idp = await IdpOidc.start({
    clients: [{ client_id: "orgplane", client_secret: SECRET, redirect_uris: [`${server.url}/v1/sso/oidc/callback`] }]
  })
})
afterAll(async () => {
  await Promise.all([server?.close(), free?.close()])
  await idp?.close()
  await dns?.stop()
})

const { get, post, put } = { ...Http.verbs(() => server.url), put: (path: string, options: Http.Options) => Http.request(server.url, "PUT", path, options) }
const unique = () => Math.random().toString(36).slice(2, 8)

let subjects = 0
/** An account at the IdP (its login hint is the email). */
const account = (email: string) => {
  idp.addAccount(email, { sub: `sub-${++subjects}`, email, email_verified: true, name: `Person ${subjects}` })
  return email
}

/** Signs `email` in through SSO: the session token. */
const ssoSession = async (email: string): Promise<string> => {
  const started = await post("/v1/sso/sign-in", { body: { email } })
  expect(started.status, JSON.stringify(started.body)).toBe(201)
  const callback = await idp.signIn(started.body.authorizationUrl, { as: email })
  const answered = await Http.request(callback.url, "GET", "")
  expect(answered.status, answered.text).toBe(200)
  const exchanged = await post("/v1/sso/sign-in/exchange", { body: { code: answered.body.code } })
  expect(exchanged.status, exchanged.text).toBe(200)
  return exchanged.body.session.token
}

/**
 * An enterprise organization whose owner (`admin@<domain>`, a password account) has a verified domain and an OIDC
 * connection: active (tested by the owner, then activated) unless `draft`.
 */
const organization = async (options: { readonly draft?: boolean } = {}) => {
  const domain = `corp-${unique()}.test`
  const email = account(`admin@${domain}`)
  const signedUp = await post("/v1/auth/sign-up", { body: { email, password: PASSWORD, name: "Owner" } })
  const token: string = signedUp.body.session.token
  const org = await post("/v1/organizations", { token, body: { name: `Org ${domain}` } })
  const created = await post("/v1/sso/connections", {
    token,
    body: { kind: "oidc", name: "Loopback IdP", domains: [domain], oidc: { issuer: idp.issuer, clientId: "orgplane", clientSecret: SECRET } }
  })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  const connectionId: string = created.body.connection.id
  const record = (await post(`/v1/sso/request-domain-verification?domain=${domain}`, { token })).body.verification
  dns.setTxt(record.recordName, [record.recordValue])
  expect((await post(`/v1/sso/verify-domain?domain=${domain}`, { token })).status).toBe(200)
  if (options.draft !== true) {
    const started = await post(`/v1/sso/connections/${connectionId}/tests`, { token })
    const callback = await idp.signIn(started.body.authorizationUrl)
    expect((await Http.request(callback.url, "GET", "")).body.test.status).toBe("succeeded")
    expect((await post(`/v1/sso/connections/${connectionId}/activate`, { token })).status).toBe(200)
  }
  return { token, email, domain, organizationId: org.body.organization.id as string, connectionId }
}

/** A person invited to the caller's organization who accepts by signing up with a password: their password session. */
const invited = async (inviterToken: string, email: string, role: "member" | "admin" = "member") => {
  const invitation = await post("/v1/invitations", { token: inviterToken, body: { email, role } })
  expect(invitation.status, JSON.stringify(invitation.body)).toBe(201)
  const accepted = await post("/v1/invitations/accept", { body: { token: invitation.body.inviteToken, signUp: { name: "Invitee", password: PASSWORD } } })
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200)
  return accepted.body.session.token as string
}

const signInWithPassword = (email: string, password = PASSWORD) => post("/v1/auth/sign-in", { body: { email, password } })
const status = async (path: string, token: string) => (await get(path, { token })).status

describe("SSO enforcement", { timeout: 60_000 }, () => {
  it("answers the defaults, refuses members (403) and other plans (402), and keeps each organization's policy its own", async () => {
    const staffed = await Http.staffed(server.url)
    const policy = await get("/v1/sso/policy", { token: staffed.admin.token })
    expect([policy.status, policy.body]).toEqual([200, { policy: { requireSso: false, ownersPasswordFallback: true, updatedAt: null } }])
    for (const [method, body] of [["GET", undefined], ["PUT", { requireSso: false }]] as const) {
      const refused = await Http.request(server.url, method, "/v1/sso/policy", { token: staffed.member.token, ...(body === undefined ? {} : { body }) })
      expect([refused.status, refused.body.reason]).toEqual([403, "insufficient_role"])
    }
    const other = await Http.staffed(free.url)
    for (const token of [other.owner.token, other.member.token]) {
      const refused = await Http.request(free.url, "PUT", "/v1/sso/policy", { token, body: { requireSso: true } })
      expect([refused.status, refused.body.error, refused.body.feature]).toEqual([402, "enterprise_plan_required", "sso"])
    }
    // Tenancy: another organization's enforcement is not this one's.
    const enforcing = await organization()
    expect((await put("/v1/sso/policy", { token: enforcing.token, body: { requireSso: true } })).status).toBe(200)
    // The policy is the organization's: its event names it.
    const [changed] = (await get(`/v1/audit/events?action=sso.policy.update&targetId=${enforcing.organizationId}`, { token: enforcing.token })).body.items
    expect(changed.targets).toEqual([{ type: "organization", id: enforcing.organizationId }])
    expect((await get("/v1/sso/policy", { token: staffed.owner.token })).body.policy.requireSso).toBe(false)
    expect((await get("/v1/sso/policy", { token: enforcing.token })).body.policy).toMatchObject({ requireSso: true, ownersPasswordFallback: true })
    // Bad input is a 400.
    const bad = await put("/v1/sso/policy", { token: staffed.owner.token, body: { requireSso: "yes", extra: 1 } })
    expect(bad.status).toBe(400)
  })

  it("refuses to require SSO without an active connection serving a verified domain", async () => {
    const org = await organization({ draft: true })
    const refused = await put("/v1/sso/policy", { token: org.token, body: { requireSso: true } })
    expect([refused.status, refused.body.error]).toEqual([409, "sso_connection_required"])
    const staffed = await Http.staffed(server.url)
    expect((await put("/v1/sso/policy", { token: staffed.owner.token, body: { requireSso: true } })).body.error).toBe("sso_connection_required")
    const off = await put("/v1/sso/policy", { token: org.token, body: { requireSso: false, ownersPasswordFallback: false } })
    expect([off.status, off.body.policy.requireSso, off.body.policy.ownersPasswordFallback]).toEqual([200, false, false])
  })

  it("refuses password sign-in for the domain with sso_required, answers discovery's required, and keeps the owners' break-glass", async () => {
    const org = await organization()
    const other = await organization()
    expect((await post("/v1/sso/discover", { body: { email: `someone@${org.domain}` } })).body.required).toBe(false)
    const on = await put("/v1/sso/policy", { token: org.token, body: { requireSso: true } })
    expect([on.status, on.body.policy.requireSso, on.body.policy.ownersPasswordFallback]).toEqual([200, true, true])

    // Discovery: required for the enforcing organization's domain, whether or not the person has an account.
    for (const email of [org.email, `nobody-${unique()}@${org.domain}`]) {
      expect((await post("/v1/sso/discover", { body: { email } })).body).toEqual({ method: "sso", connectionId: org.connectionId, required: true })
    }
    expect((await post("/v1/sso/discover", { body: { email: `x@${other.domain}` } })).body.required).toBe(false)

    // Password sign-in: the same refusal for a member, a stranger and a wrong password, naming the way in.
    const member = account(`bob@${org.domain}`)
    await ssoSession(member)
    for (const [email, password] of [[member, PASSWORD], [`nobody-${unique()}@${org.domain}`, PASSWORD], [org.email, "wrong password here"]] as const) {
      const refused = await signInWithPassword(email, password)
      expect([refused.status, refused.body.reason], email).toEqual([403, "sso_required"])
      expect(refused.body.message).toContain(org.connectionId)
      expect(refused.body.message).toContain("/v1/sso/sign-in")
      expect(refused.body.message).toContain(`\`orgplane auth login --sso --email ${email}\``)
    }

    // Nor can a password account be made for the domain (SSO makes its people's accounts).
    const signUp = await post("/v1/auth/sign-up", { body: { email: `new-${unique()}@${org.domain}`, password: PASSWORD, name: "New" } })
    expect([signUp.status, signUp.body.reason]).toEqual([403, "sso_required"])

    // Break-glass: the owner's right password still signs in, acting as the owner of the organization.
    const glass = await signInWithPassword(org.email)
    expect(glass.status, glass.text).toBe(200)
    const me = await get("/v1/me", { token: glass.body.session.token })
    expect(me.body).toMatchObject({ organization: { id: org.organizationId }, membership: { role: "owner" } })
    expect(await status("/v1/sso/connections", glass.body.session.token)).toBe(200)

    // Without the fallback, the owner too must use SSO (set from an SSO session of the owner).
    const ownerSso = await ssoSession(org.email)
    const strict = await put("/v1/sso/policy", { token: ownerSso, body: { requireSso: true, ownersPasswordFallback: false } })
    expect(strict.status, strict.text).toBe(200)
    expect((await signInWithPassword(org.email)).body.reason).toBe("sso_required")
    expect(await status("/v1/teams", glass.body.session.token)).toBe(403)
    // Another organization's domain is untouched.
    expect((await signInWithPassword(other.email)).status).toBe(200)
  })

  it("refuses, on the organization's routes, password sessions of its domain (even those started before) and admits its own SSO sessions, guests and API keys", async () => {
    const org = await organization()
    const bob = `bob@${org.domain}`
    account(bob)
    const bobPassword = await invited(org.token, bob)
    const guest = await invited(org.token, `contractor-${unique()}@gmail.test`)
    const key = await post("/v1/api-keys", { token: org.token, body: { name: "CI" } })
    expect(key.status, key.text).toBe(201)
    expect(await status("/v1/teams", bobPassword)).toBe(200)

    expect((await put("/v1/sso/policy", { token: org.token, body: { requireSso: true } })).status).toBe(200)
    const refused = await get("/v1/teams", { token: bobPassword })
    expect([refused.status, refused.body.reason]).toEqual([403, "sso_session_required"])
    expect(refused.body.message).toContain(org.connectionId)
    // Not an organization route: the person still sees themselves and can sign out.
    expect(await status("/v1/me", bobPassword)).toBe(200)

    const bobSso = await ssoSession(bob)
    expect(await status("/v1/teams", bobSso)).toBe(200)
    expect(await status("/v1/teams", guest)).toBe(200)
    expect((await Http.request(server.url, "GET", "/v1/teams", { apiKey: key.body.key })).status).toBe(200)

    // Off again: the same password session works at once.
    expect((await put("/v1/sso/policy", { token: org.token, body: { requireSso: false } })).status).toBe(200)
    expect(await status("/v1/teams", bobPassword)).toBe(200)
  })

  it("suspends the API keys a covered member made outside SSO, says why, and lets only SSO sessions make their keys", async () => {
    const org = await organization()
    const bob = account(`bob@${org.domain}`)
    const bobPassword = await invited(org.token, bob, "admin")
    const guestPassword = await invited(org.token, `contractor-${unique()}@gmail.test`, "admin")
    const makeKey = async (credential: { token: string } | { apiKey: string }, name: string) => {
      const made = await Http.request(server.url, "POST", "/v1/api-keys", { ...credential, body: { name, scopes: ["apiKeys.manage", "members.read", "sso.manage"] } })
      expect(made.status, made.text).toBe(201)
      return made.body.key as string
    }
    const bobPasswordKey = await makeKey({ token: bobPassword }, "bob password")
    const bobSsoKey = await makeKey({ token: await ssoSession(bob) }, "bob sso")
    const guestKey = await makeKey({ token: guestPassword }, "guest")
    const ownerKey = await makeKey({ token: org.token }, "owner break-glass")
    const withKey = (key: string, method: "GET" | "POST", path: string) =>
      Http.request(server.url, method, path, { apiKey: key, ...(method === "POST" ? { body: { name: "child", scopes: ["members.read"] } } : {}) })
    for (const key of [bobPasswordKey, bobSsoKey, guestKey, ownerKey]) expect((await withKey(key, "GET", "/v1/members")).status).toBe(200)

    expect((await put("/v1/sso/policy", { token: org.token, body: { requireSso: true } })).status).toBe(200)
    // The key Bob made with his password stops, on every organization route, saying why and the way out.
    for (const [method, path] of [["GET", "/v1/members"], ["GET", "/v1/sso/connections"], ["POST", "/v1/api-keys"]] as const) {
      const refused = await withKey(bobPasswordKey, method, path)
      expect([refused.status, refused.body.reason], path).toEqual([403, "sso_session_required"])
      expect(refused.body.message).toContain("API key is suspended")
      expect(refused.body.message).toContain(org.connectionId)
    }
    // The key his SSO session made keeps working, but makes no keys: only an SSO session does.
    expect((await withKey(bobSsoKey, "GET", "/v1/sso/connections")).status).toBe(200)
    const child = await withKey(bobSsoKey, "POST", "/v1/api-keys")
    expect([child.status, child.body.reason]).toEqual([403, "sso_session_required"])
    expect(child.body.message).toContain("only a session its SSO signed in makes API keys")
    const fresh = await makeKey({ token: await ssoSession(bob) }, "bob sso again")
    expect((await withKey(fresh, "GET", "/v1/members")).status).toBe(200)
    // Outside the domains (a guest) and the owners' break-glass: keys work and make keys, as their password sessions do.
    for (const key of [guestKey, ownerKey]) {
      expect((await withKey(key, "GET", "/v1/members")).status).toBe(200)
      expect((await withKey(await makeKey({ apiKey: key }, "child"), "GET", "/v1/members")).status).toBe(200)
    }
    // Without the fallback (set from the owner's SSO session), the owner's password key stops too.
    expect((await put("/v1/sso/policy", { token: await ssoSession(org.email), body: { requireSso: true, ownersPasswordFallback: false } })).status).toBe(200)
    expect((await withKey(ownerKey, "GET", "/v1/members")).body.reason).toBe("sso_session_required")
    // Enforcement off: the suspended keys work again.
    expect((await put("/v1/sso/policy", { token: await ssoSession(org.email), body: { requireSso: false } })).status).toBe(200)
    for (const key of [bobPasswordKey, ownerKey]) expect((await withKey(key, "GET", "/v1/members")).status).toBe(200)
  })

  it("refuses a second organization's SSO session on an enforcing organization, including a switch to it", async () => {
    const a = await organization()
    const b = await organization()
    // Carol signs in through B's IdP (a JIT member of B), and is also a member of A (an email outside A's domains).
    const carol = account(`carol@${b.domain}`)
    const carolB = await ssoSession(carol)
    const invitation = await post("/v1/invitations", { token: a.token, body: { email: carol, role: "member" } })
    expect((await post("/v1/invitations/accept", { token: carolB, body: { token: invitation.body.inviteToken } })).status).toBe(200)
    // Not enforcing: A admits the session (as it admits password sessions).
    expect((await get("/v1/me", { token: carolB })).body.organization.id).toBe(a.organizationId)
    expect(await status("/v1/teams", carolB)).toBe(200)

    expect((await put("/v1/sso/policy", { token: a.token, body: { requireSso: true } })).status).toBe(200)
    const refused = await get("/v1/teams", { token: carolB })
    expect([refused.status, refused.body.reason]).toEqual([403, "sso_session_required"])
    expect(refused.body.message).toContain("another organization's")
    // Back to B, where B's own session works; switching to A again is refused before it happens.
    expect((await post("/v1/me/active-organization", { token: carolB, body: { organizationId: b.organizationId } })).status).toBe(200)
    expect(await status("/v1/teams", carolB)).toBe(200)
    const switched = await post("/v1/me/active-organization", { token: carolB, body: { organizationId: a.organizationId } })
    expect([switched.status, switched.body.reason]).toEqual([403, "sso_session_required"])
    expect((await get("/v1/me", { token: carolB })).body.organization.id).toBe(b.organizationId)

    // And A's owner, signed in through B's IdP? Impossible: B's IdP cannot vouch for A's domain.
    const started = await post("/v1/sso/sign-in", { body: { email: a.email } })
    expect(started.status).toBe(201)
  })

  it("never locks out the session that turns enforcement on", async () => {
    const org = await organization()
    // The owner's password session, without the owners' fallback: it would be refused at once.
    const locked = await put("/v1/sso/policy", { token: org.token, body: { requireSso: true, ownersPasswordFallback: false } })
    expect([locked.status, locked.body.error]).toEqual([409, "sso_policy_locks_you_out"])
    expect((await get("/v1/sso/policy", { token: org.token })).body.policy.requireSso).toBe(false)
    // An admin of the domain signed in with a password: locked out whatever the fallback (it is the owners').
    const admin = `ada@${org.domain}`
    account(admin)
    const adminPassword = await invited(org.token, admin, "admin")
    expect((await put("/v1/sso/policy", { token: adminPassword, body: { requireSso: true } })).body.error).toBe("sso_policy_locks_you_out")
    // So is a key that session made: it would be suspended at once.
    const passwordKey = (await post("/v1/api-keys", { token: adminPassword, body: { name: "made with a password", scopes: ["sso.manage"] } })).body.key
    const byKey = await Http.request(server.url, "PUT", "/v1/sso/policy", { apiKey: passwordKey, body: { requireSso: true } })
    expect([byKey.status, byKey.body.error]).toEqual([409, "sso_policy_locks_you_out"])
    // Signed in through the organization's SSO, the same admin may.
    const adminSso = await ssoSession(admin)
    expect((await put("/v1/sso/policy", { token: adminSso, body: { requireSso: true, ownersPasswordFallback: false } })).status).toBe(200)
    // A key an SSO session made keeps working under enforcement: the documented way back in, besides the owners' fallback.
    const key = await post("/v1/api-keys", { token: adminSso, body: { name: "break-glass", scopes: ["sso.manage"] } })
    const off = await Http.request(server.url, "PUT", "/v1/sso/policy", { apiKey: key.body.key, body: { requireSso: false } })
    expect([off.status, off.body.policy.requireSso]).toEqual([200, false])
  })
})

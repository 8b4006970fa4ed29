/**
 * SSO through OIDC against a real OpenID Provider on loopback (oidc-provider, packages/testkit/src/IdpOidc.ts):
 * create → verify the domain → test → activate → sign in → session; JIT; and each refusal with its stable code.
 */
import * as FakeDns from "../../../../packages/testkit/src/FakeDns.js"
import { SsoCallbackResult } from "@orgplane/schema"
import * as Schema from "effect/Schema"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as IdpOidc from "../../../../packages/testkit/src/IdpOidc.js"
import * as TestServer from "../support/HttpServer.js"
import * as NodeHttp from "node:http"
import type * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const SECRET = "oidc-client-secret-value"
let dns: FakeDns.FakeDns
let server: TestServer.RunningServer
let idp: IdpOidc.IdpOidc
beforeAll(async () => {
  dns = await FakeDns.start()
  server = await TestServer.start({ defaultPlan: "enterprise", dnsServers: dns.address, outboundAllowPrivate: true })
  idp = await IdpOidc.start({
    clients: [{ client_id: "orgplane", client_secret: SECRET, redirect_uris: [`${server.url}/v1/sso/oidc/callback`] }]
  })
})
afterAll(async () => {
  await server?.close()
  await idp?.close()
  await dns?.stop()
})

const { audit, organizations, sso, ssoSignIn, teams, users } = calls(() => server.url)
const unique = () => Math.random().toString(36).slice(2, 8)

let subjects = 0
/** An account at the IdP (and its login hint). */
const account = (email: string, extra: Partial<IdpOidc.Account> = {}) => {
  idp.addAccount(email, { sub: `sub-${++subjects}`, email, email_verified: true, name: `Person ${subjects}`, ...extra })
  return email
}

/** An enterprise organization whose owner's email is of a fresh domain, with a verified domain and a draft OIDC connection. */
const organization = async (options: { readonly issuer?: string } = {}) => {
  const domain = `corp-${unique()}.test`
  const email = account(`admin@${domain}`)
  const token = ok(await users.signUp({ payload: { email, password: "correct horse battery", name: "Admin" } }), 201).session.token
  const org = ok(await organizations.create({ token, payload: { name: `Org ${domain}` } }), 201)
  const created = await sso.createConnection({
    token,
    payload: { kind: "oidc", name: "Loopback IdP", domains: [domain], oidc: { issuer: options.issuer ?? idp.issuer, clientId: "orgplane", clientSecret: SECRET } }
  })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  const record = ok(await sso.requestDomainVerification({ token, query: { domain } }), 200).verification
  dns.setTxt(record.recordName, [record.recordValue])
  expect((await sso.verifyDomain({ token, query: { domain } })).status).toBe(200)
  return { token, email, domain, organizationId: org.organization.id, connection: ok(created, 201).connection }
}

const decodeResult = Schema.decodeUnknownSync(Schema.toEncoded(SsoCallbackResult))
/** The callback's answer read as its result, which only a 200 carries (failing the test otherwise). */
const resultOf = (answered: Http.RawResponse) => {
  expect(answered.status, answered.text).toBe(200)
  return decodeResult(answered.body)
}

/** Starts a test, lets `as` sign in at the IdP (with the tamper given), follows the callback: its answer. */
const runTest = async (token: string, connectionId: string, options: IdpOidc.SignInOptions = {}) => {
  const answer = await sso.startTest({ token, path: { connectionId } })
  expect(answer.status, JSON.stringify(answer.body)).toBe(201)
  const started = ok(answer, 201)
  if (started.test.status !== "pending") return { started, callback: undefined, report: started.test }
  const callback = await idp.signIn(started.authorizationUrl, options)
  const answered = await Http.request(callback.url, "GET", "")
  const { test } = resultOf(answered)
  if (test === null) throw new Error(`a test's callback without its report: ${answered.text}`)
  return { started, callback, report: test, answered }
}

/** A test that fails with `code`, recorded on the connection. */
const expectTestFailure = async (token: string, connectionId: string, code: string, options: IdpOidc.SignInOptions = {}) => {
  const { report } = await runTest(token, connectionId, options)
  expect(report.status).toBe("failed")
  expect(report.failure?.code, report.failure?.message).toBe(code)
  const stored = await sso.getTest({ token, path: { connectionId, testId: report.id } })
  expect(ok(stored, 200).test).toEqual(report)
  return report
}

/** An active connection: tested by its admin, then activated. */
const activeOrganization = async () => {
  const org = await organization()
  const { report } = await runTest(org.token, org.connection.id)
  expect(report.status, JSON.stringify(report.failure)).toBe("succeeded")
  const activated = await sso.activateConnection({ token: org.token, path: { connectionId: org.connection.id } })
  expect(activated.status, JSON.stringify(activated.body)).toBe(200)
  return org
}

/** Starts a sign-in for `email`: where the IdP is to be asked. */
const startSignIn = async (email: string, returnTo?: string) => {
  const started = await ssoSignIn.start({ payload: { email, ...(returnTo === undefined ? {} : { returnTo }) } })
  expect(started.status, JSON.stringify(started.body)).toBe(201)
  return ok(started, 201).authorizationUrl
}

/** Signs `email` in through SSO: the callback's answer. */
const signIn = async (email: string, options: IdpOidc.SignInOptions = {}) => {
  const callback = await idp.signIn(await startSignIn(email), { as: email, ...options })
  return { callback, answered: await Http.request(callback.url, "GET", "") }
}

/** The session a one-time code exchanges for. */
const exchange = (code: string | null) => ssoSignIn.exchange({ payload: { code: code ?? "" } })

describe("SSO with OIDC", { timeout: 60_000 }, () => {
  it("creates, verifies, tests, activates and signs a new person in as a JIT member with the default role and teams", async () => {
    const org = await organization()
    const team = ok(await teams.create({ token: org.token, payload: { name: "Engineering" } }), 201).team
    const path = { connectionId: org.connection.id }
    await sso.updateConnection({ token: org.token, path, payload: { jit: { defaultTeamIds: [team.id] } } })

    const { callback, report } = await runTest(org.token, org.connection.id)
    expect(report).toMatchObject({
      connectionId: org.connection.id,
      configRevision: 1,
      status: "succeeded",
      failure: null,
      profile: { email: org.email, emailVerified: true }
    })
    expect(report.claims).toMatchObject({ iss: idp.issuer, aud: "orgplane", email: org.email })
    // PKCE S256, state and nonce on the authorization request; the secret sent as configured (basic).
    const authorization = idp.authorizations().at(-1)!
    expect(authorization).toMatchObject({ code_challenge_method: "S256", login_hint: org.email })
    expect(authorization.state).toBe(callback!.state)
    expect(authorization.nonce).toBeTruthy()
    expect(idp.tokenRequests().at(-1)!.clientAuthentication).toBe("client_secret_basic")
    // A test never signs anyone in: no code, no session.
    expect(ok(await sso.getConnection({ token: org.token, path }), 200).connection.lastTest).toEqual(report)

    const activated = await sso.activateConnection({ token: org.token, path })
    expect(ok(activated, 200).connection.state).toBe("active")

    const discovered = await ssoSignIn.discover({ payload: { email: `nobody@${org.domain}` } })
    expect(discovered.body).toEqual({ method: "sso", connectionId: org.connection.id, required: false })
    expect((await ssoSignIn.discover({ payload: { email: "x@elsewhere.test" } })).body).toEqual({ method: "password", connectionId: null, required: false })

    const email = account(`ada@${org.domain}`, { name: "Ada Lovelace" })
    const { answered } = await signIn(email)
    expect(answered.status, answered.text).toBe(200)
    expect(answered.body).toMatchObject({ purpose: "sign_in", ok: true, failure: null })
    const { code } = resultOf(answered)
    const exchanged = await exchange(code)
    expect(exchanged.status, exchanged.text).toBe(200)
    const session = ok(exchanged, 200)
    expect(session.user).toMatchObject({ email, name: "Ada Lovelace" })
    const me = ok(await users.me({ token: session.session.token }), 200)
    expect(me).toMatchObject({ organization: { id: org.organizationId }, membership: { role: "member" } })
    const joined = ok(await teams.get({ token: org.token, path: { teamId: team.id } }), 200)
    expect(joined.team.memberIds).toContain(me.membership?.id)
    // The code works once.
    const again = await exchange(code)
    expect([again.status, again.body]).toMatchObject([401, { error: "sso_sign_in_failed", code: "replayed" }])

    // A repeat sign-in is the same person, with the name the IdP now gives.
    idp.addAccount(email, { sub: `sub-${subjects}`, email, email_verified: true, name: "Ada King" })
    const second = await signIn(email)
    const reexchanged = await exchange(resultOf(second.answered).code)
    expect(ok(reexchanged, 200).user).toMatchObject({ id: session.user.id, name: "Ada King" })
  })

  it("sends the browser to a loopback returnTo with the code, never the token", async () => {
    const org = await activeOrganization()
    const email = account(`grace@${org.domain}`)
    const refused = await ssoSignIn.start({ payload: { email, returnTo: "https://evil.example/steal" } })
    expect(refused.status).toBe(400)
    expect(invalid(refused).details[0]?.path).toEqual(["returnTo"])
    const callback = await idp.signIn(await startSignIn(email, "http://127.0.0.1:53682/callback"), { as: email })
    const answered = await fetch(callback.url, { redirect: "manual" })
    expect(answered.status).toBe(302)
    const location = new URL(answered.headers.get("location")!)
    expect(location.origin + location.pathname).toBe("http://127.0.0.1:53682/callback")
    expect(location.searchParams.get("code")).toMatch(/^ssx_/)
    expect(location.href).not.toContain("ops_")
    expect((await exchange(location.searchParams.get("code"))).status).toBe(200)
  })

  it("refuses a replayed state", async () => {
    const org = await activeOrganization()
    const email = account(`alan@${org.domain}`)
    const { answered, callback } = await signIn(email)
    expect(answered.status).toBe(200)
    const replayed = await Http.request(callback.url, "GET", "")
    expect([replayed.status, replayed.body]).toMatchObject([401, { code: "replayed" }])
    const tampered = await Http.request(callback.url.replace(/state=[^&]+/, "state=org_x.ssi_y.zz"), "GET", "")
    expect([tampered.status, tampered.body]).toMatchObject([401, { code: "replayed" }])
  })

  it("refuses an email outside the connection's verified domains", async () => {
    const org = await activeOrganization()
    // The IdP vouches for an email of another domain than the one the person typed.
    const typed = `edsger@${org.domain}`
    idp.addAccount(typed, { sub: `sub-${++subjects}`, email: `edsger@elsewhere-${unique()}.test`, email_verified: true })
    const { answered } = await signIn(typed)
    expect([answered.status, answered.body]).toMatchObject([401, { code: "email_domain_not_verified" }])
  })

  it("refuses an email the provider says is not verified", async () => {
    const org = await activeOrganization()
    const email = account(`unverified@${org.domain}`, { email_verified: false })
    const { answered } = await signIn(email)
    expect([answered.status, answered.body]).toMatchObject([401, { code: "email_not_verified" }])
  })

  it("records failed sign-ins in the organization's audit log: who the provider vouched for, or no one for a forged token", async () => {
    const org = await activeOrganization()
    const email = account(`guessed@${org.domain}`, { email_verified: false })
    const refused = await signIn(email)
    expect(refused.answered.status).toBe(401)
    const forged = await signIn(account(`forged@${org.domain}`), { idToken: "badSignature" })
    expect([forged.answered.status, forged.answered.body]).toMatchObject([401, { code: "signature_invalid" }])
    const events = ok(await audit.listEvents({ token: org.token, query: { action: "session.create", outcome: "failed" } }), 200).items
    expect(events.map((event) => [event.reason, event.actor, event.via.ssoConnectionId, event.targets])).toEqual([
      ["signature_invalid", { type: "anonymous", id: "anonymous", membershipId: null, label: null }, org.connection.id, [{ type: "sso_connection", id: org.connection.id }]],
      ["email_not_verified", { type: "anonymous", id: "anonymous", membershipId: null, label: email }, org.connection.id, [{ type: "sso_connection", id: org.connection.id }]]
    ])
    expect(events[0]?.via.credentialId).toBeNull()
    expect(events[0]?.requestId).toEqual(expect.any(String))
  })

  it("refuses an ID token from another issuer", async () => {
    const org = await organization()
    await expectTestFailure(org.token, org.connection.id, "issuer_mismatch", { idToken: "wrongIssuer" })
  })

  it("refuses an ID token for another audience", async () => {
    const org = await organization()
    await expectTestFailure(org.token, org.connection.id, "audience_mismatch", { idToken: "wrongAudience" })
  })

  it("refuses an expired ID token", async () => {
    const org = await organization()
    await expectTestFailure(org.token, org.connection.id, "token_expired", { idToken: "expired" })
  })

  it("refuses an ID token with another nonce", async () => {
    const org = await organization()
    await expectTestFailure(org.token, org.connection.id, "nonce_mismatch", { idToken: "wrongNonce" })
  })

  it("refuses an ID token whose signature does not verify", async () => {
    const org = await organization()
    await expectTestFailure(org.token, org.connection.id, "signature_invalid", { idToken: "badSignature" })
    await expectTestFailure(org.token, org.connection.id, "signature_invalid", { idToken: "unsigned" })
  })

  it("records an error of the identity provider", async () => {
    const org = await organization()
    const report = await expectTestFailure(org.token, org.connection.id, "idp_error", { error: "access_denied", errorDescription: "Not today" })
    expect(report.failure?.message).toContain("access_denied")
  })

  it("refuses a discovery document naming another issuer", async () => {
    const org = await organization()
    idp.setDiscoveryIssuer(`${idp.issuer}/other`)
    try {
      await expectTestFailure(org.token, org.connection.id, "issuer_mismatch")
    } finally {
      idp.setDiscoveryIssuer(undefined)
    }
  })

  it("refuses a discovery document that is not JSON", async () => {
    const html = NodeHttp.createServer((_, response) => response.writeHead(200, { "content-type": "text/html" }).end("<html>login</html>"))
    await new Promise<void>((resolve) => html.listen(0, "127.0.0.1", resolve))
    try {
      const org = await organization({ issuer: `http://127.0.0.1:${(html.address() as Net.AddressInfo).port}` })
      await expectTestFailure(org.token, org.connection.id, "discovery_invalid")
    } finally {
      html.close()
    }
  })

  it("records an identity provider that does not answer", async () => {
    const closed = NodeHttp.createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const port = (closed.address() as Net.AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const org = await organization({ issuer: `http://127.0.0.1:${port}` })
    const report = await expectTestFailure(org.token, org.connection.id, "idp_unreachable")
    expect(report.failure?.message).toContain(`127.0.0.1:${port}`)
  })

  it("fails a test completed by another person than the admin who started it, and activation stays refused", async () => {
    const org = await organization()
    const other = account(`mallory@${org.domain}`)
    await expectTestFailure(org.token, org.connection.id, "identity_mismatch", { as: other })
    const refused = await sso.activateConnection({ token: org.token, path: { connectionId: org.connection.id } })
    expect([refused.status, refused.body]).toMatchObject([409, { error: "sso_connection_untested" }])
  })

  it("needs a new test after a settings change, and refuses settings changes of an active connection", async () => {
    const org = await activeOrganization()
    const path = { connectionId: org.connection.id }
    const changed = await sso.updateConnection({ token: org.token, path, payload: { mapping: { name: "nickname" } } })
    expect([changed.status, changed.body]).toMatchObject([409, { error: "sso_connection_active" }])
    const renamed = await sso.updateConnection({ token: org.token, path, payload: { name: "Renamed" } })
    expect(renamed.status).toBe(200)
    await sso.deactivateConnection({ token: org.token, path })
    const remapped = await sso.updateConnection({ token: org.token, path, payload: { mapping: { name: "nickname" } } })
    expect(ok(remapped, 200).connection.configRevision).toBe(2)
    const refused = await sso.activateConnection({ token: org.token, path })
    expect([refused.status, refused.body]).toMatchObject([409, { error: "sso_connection_untested", message: expect.stringContaining("revision 1, now 2") }])
  })

  it("lets a second connection be tested while the first serves, and keeps one active connection per domain", async () => {
    const org = await activeOrganization()
    const created = await sso.createConnection({
      token: org.token,
      payload: { kind: "oidc", name: "New IdP", domains: [org.domain], oidc: { issuer: idp.issuer, clientId: "orgplane", clientSecret: SECRET, tokenEndpointAuthMethod: "client_secret_post" } }
    })
    const second = { connectionId: ok(created, 201).connection.id }
    const { report } = await runTest(org.token, second.connectionId)
    expect(report.status).toBe("succeeded")
    expect(idp.tokenRequests().at(-1)!.clientAuthentication).toBe("client_secret_post")
    const served = await sso.activateConnection({ token: org.token, path: second })
    expect([served.status, served.body]).toMatchObject([409, { error: "sso_domain_served" }])
    const discovered = async () => ok(await ssoSignIn.discover({ payload: { email: `x@${org.domain}` } }), 200).connectionId
    expect(await discovered()).toBe(org.connection.id)
    await sso.deactivateConnection({ token: org.token, path: { connectionId: org.connection.id } })
    expect((await sso.activateConnection({ token: org.token, path: second })).status).toBe(200)
    expect(await discovered()).toBe(second.connectionId)
  })
})

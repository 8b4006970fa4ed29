/**
 * SSO sign-ins in `/metrics`, against a real OpenID Provider on loopback (oidc-provider, testkit's IdpOidc): a
 * successful sign-in and a refused one (the provider says the email is not verified) move
 * `orgplane_sign_in_events_total{method="oidc"}` by one each, with the refusal's code; with
 * `ORGPLANE_METRICS_ORGANIZATION_LABELS` the series carry the organization's id (a password sign-in, which has none,
 * `none`), and never the person's email or subject.
 */
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as FakeDns from "../../../../packages/testkit/src/FakeDns.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as IdpOidc from "../../../../packages/testkit/src/IdpOidc.js"
import * as Metrics from "../../src/platform/Metrics.js"
import * as TestServer from "../support/HttpServer.js"
import * as Prometheus from "../support/PrometheusText.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const SECRET = "oidc-client-secret-value"
const token = `metrics-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`
let dns: FakeDns.FakeDns
let server: TestServer.RunningServer
let idp: IdpOidc.IdpOidc
beforeAll(async () => {
  dns = await FakeDns.start()
  server = await TestServer.start({
    defaultPlan: "enterprise",
    dnsServers: dns.address,
    outboundAllowPrivate: true,
    metricsToken: token,
    metricsOrganizationLabels: true
  })
  idp = await IdpOidc.start({
    clients: [{ client_id: "orgplane", client_secret: SECRET, redirect_uris: [`${server.url}/v1/sso/oidc/callback`] }]
  })
})
afterAll(async () => {
  await server?.close()
  await idp?.close()
  await dns?.stop()
})

const { post } = Http.verbs(() => server.url)
const { organizations, sso, ssoSignIn, users } = calls(() => server.url)
const domain = `corp-${Math.random().toString(36).slice(2, 8)}.test`

const scrape = async () => {
  const response = await Http.request(server.url, "GET", "/metrics", { token })
  expect(response.status, response.text).toBe(200)
  return { text: response.text, families: await Prometheus.parse(response.text) }
}

/** Signs `email` in through SSO: the callback's answer. */
const signIn = async (email: string) => {
  const started = ok(await ssoSignIn.start({ payload: { email } }), 201)
  const callback = await idp.signIn(started.authorizationUrl, { as: email })
  return Http.request(callback.url, "GET", "")
}

describe("SSO sign-ins in /metrics", { timeout: 60_000 }, () => {
  it("count a success and a refusal by method, outcome and organization, and show no email or subject", async () => {
    const admin = `admin@${domain}`
    idp.addAccount(admin, { sub: "sub-admin", email: admin, email_verified: true, name: "Admin" })
    const signedUp = ok(await users.signUp({ payload: { email: admin, password: "correct horse battery", name: "Admin" } }), 201)
    const owner = signedUp.session.token
    const organizationId = ok(await organizations.create({ token: owner, payload: { name: "Metrics SSO" } }), 201).organization.id
    const created = ok(await sso.createConnection({
      token: owner,
      payload: { kind: "oidc", name: "Loopback IdP", domains: [domain], oidc: { issuer: idp.issuer, clientId: "orgplane", clientSecret: SECRET } }
    }), 201)
    const connectionId = created.connection.id
    const record = ok(await sso.requestDomainVerification({ token: owner, query: { domain } }), 200).verification
    dns.setTxt(record.recordName, [record.recordValue])
    expect((await sso.verifyDomain({ token: owner, query: { domain } })).status).toBe(200)
    const test = ok(await sso.startTest({ token: owner, path: { connectionId } }), 201)
    const tested = await Http.request((await idp.signIn(test.authorizationUrl)).url, "GET", "")
    expect(tested.body, tested.text).toMatchObject({ test: { status: "succeeded" } })
    expect((await sso.activateConnection({ token: owner, path: { connectionId } })).status).toBe(200)

    const before = await scrape()
    const ada = `ada@${domain}`
    idp.addAccount(ada, { sub: "sub-ada-4711", email: ada, email_verified: true, name: "Ada Lovelace" })
    const welcomed = await signIn(ada)
    expect(welcomed.body, welcomed.text).toMatchObject({ ok: true })
    const unverified = `bo@${domain}`
    idp.addAccount(unverified, { sub: "sub-bo-4712", email: unverified, email_verified: false, name: "Bo" })
    const refused = await signIn(unverified)
    expect(refused.body, refused.text).toMatchObject({ error: "sso_sign_in_failed", code: "email_not_verified" })
    // A password sign-in has no organization.
    expect((await post("/v1/auth/sign-in", { body: { email: admin, password: "wrong horse battery" } })).status).toBe(401)
    const after = await scrape()

    const moved = (labels: Record<string, string>) =>
      Prometheus.valueOf(after.families, Metrics.names.signInEvents, labels) - Prometheus.valueOf(before.families, Metrics.names.signInEvents, labels)
    expect(moved({ method: "oidc", outcome: "success", organization: organizationId })).toBe(1)
    expect(moved({ method: "oidc", outcome: "email_not_verified", organization: organizationId })).toBe(1)
    expect(moved({ method: "password", outcome: "invalid_credentials", organization: "none" })).toBe(1)
    for (const value of [ada, unverified, admin, domain, "sub-ada-4711", "sub-bo-4712", "Ada Lovelace", token, SECRET]) {
      expect(after.text, `the scrape shows ${value}`).not.toContain(value)
    }
  })
})

/**
 * SSO through SAML against a real IdP on loopback (samlify, packages/testkit/src/IdpSaml.ts), over HTTP: the SP
 * metadata the IdP registers us by; create → verify the domain → test through the ACS → activate → sign in → session;
 * JIT; IdP-initiated sign-in behind its switch and allow-list; and each refusal through the ACS with its stable code.
 * One server and one IdP for the file.
 */
import { createClient, OrgplaneError } from "@orgplane/client"
import * as FakeDns from "../../../../packages/testkit/src/FakeDns.js"
import { SsoCallbackResult } from "@orgplane/schema"
import * as Schema from "effect/Schema"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as IdpSaml from "../../../../packages/testkit/src/IdpSaml.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let dns: FakeDns.FakeDns
let server: TestServer.RunningServer
let idp: IdpSaml.IdpSaml
beforeAll(async () => {
  dns = await FakeDns.start()
  server = await TestServer.start({ defaultPlan: "enterprise", dnsServers: dns.address, outboundAllowPrivate: true })
  idp = await IdpSaml.start()
})
afterAll(async () => {
  await server?.close()
  await idp?.close()
  await dns?.stop()
})

const { get } = Http.verbs(() => server.url)
const { organizations, sso, ssoSignIn, teams, users } = calls(() => server.url)
const unique = () => Math.random().toString(36).slice(2, 8)

/** A person at the IdP, keyed by their email (the login hint `as` names). */
const person = (email: string, user: Partial<IdpSaml.User> = {}) => {
  idp.addUser(email, { email, name: `Person ${email.split("@")[0]}`, ...user })
  return email
}

/** What the browser posts to the ACS, posted: the JSON answer, or the redirect. */
const postAcs = async (acsUrl: string, form: Readonly<Record<string, string>>) => {
  const response = await fetch(acsUrl, { method: "POST", body: new URLSearchParams(form), redirect: "manual" })
  const text = await response.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, body, text, location: response.headers.get("location") }
}

const decodeResult = Schema.decodeUnknownSync(Schema.toEncoded(SsoCallbackResult))
/** The ACS's answer read as the callback's result, which only a 200 carries (failing the test otherwise). */
const resultOf = (answered: { readonly status: number; readonly body: unknown; readonly text: string }) => {
  expect(answered.status, answered.text).toBe(200)
  return decodeResult(answered.body)
}

/** Settings of a SAML connection from a metadata URL beyond the URL. */
interface SamlOptions {
  readonly allowIdpInitiated?: boolean
  readonly relayStateAllowList?: ReadonlyArray<string>
}

/**
 * An enterprise organization whose owner's email is of a fresh, verified domain, with a draft SAML connection from
 * the IdP's metadata URL, registered at the IdP by its SP metadata.
 */
const organization = async (saml: SamlOptions = {}) => {
  const domain = `saml-${unique()}.test`
  const email = person(`admin@${domain}`)
  const token = ok(await users.signUp({ payload: { email, password: "correct horse battery", name: "Admin" } }), 201).session.token
  const org = ok(await organizations.create({ token, payload: { name: `Org ${domain}` } }), 201)
  const created = await sso.createConnection({
    token,
    payload: { kind: "saml", name: "Loopback SAML IdP", domains: [domain], saml: { source: "metadataUrl", url: idp.metadataUrl, ...saml } }
  })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  const made = ok(created, 201).connection
  const { acsUrl, entityId } = made.sp
  if (acsUrl === null || entityId === null) throw new Error(`a SAML connection without its SP's entity id and ACS: ${created.text}`)
  const connection = { ...made, sp: { ...made.sp, acsUrl, entityId } }
  const metadata = await fetch(`${server.url}/v1/sso/saml/${connection.id}/metadata`)
  expect(metadata.status).toBe(200)
  idp.addServiceProvider({ metadata: await metadata.text() })
  const record = ok(await sso.requestDomainVerification({ token, query: { domain } }), 200).verification
  dns.setTxt(record.recordName, [record.recordValue])
  expect((await sso.verifyDomain({ token, query: { domain } })).status).toBe(200)
  return { token, email, domain, organizationId: org.organization.id, connection }
}

/** Starts a test; the IdP answers it (as the admin unless told), tampered as asked; not posted yet. */
const startTest = async (token: string, connectionId: string, options: IdpSaml.ResponseOptions = {}, as?: string) => {
  const started = await sso.startTest({ token, path: { connectionId } })
  expect(started.status, JSON.stringify(started.body)).toBe(201)
  const { authorizationUrl, test } = ok(started, 201)
  expect(test.status, JSON.stringify(test.failure)).toBe("pending")
  const acs = await idp.signIn(authorizationUrl, { ...(as === undefined ? {} : { as }), ...options })
  return { started, acs }
}

/** A test through the ACS: its report. */
const runTest = async (org: { readonly token: string; readonly email: string; readonly connection: { readonly id: string } }, options: IdpSaml.ResponseOptions = {}) => {
  const { acs } = await startTest(org.token, org.connection.id, { as: org.email, ...options })
  const answered = await postAcs(acs.acsUrl, acs.form)
  expect(answered.status, answered.text).toBe(200)
  const result = resultOf(answered)
  expect(result.purpose).toBe("test")
  if (result.test === null) throw new Error(`a test's answer without its report: ${answered.text}`)
  return { acs, report: result.test, answered, result }
}

/** A test that fails with `code` at the ACS, recorded on the connection. */
const expectTestFailure = async (org: Parameters<typeof runTest>[0], code: string, options: IdpSaml.ResponseOptions = {}) => {
  const { report, result } = await runTest(org, options)
  expect(result.ok).toBe(false)
  expect([report.status, report.failure?.code], report.failure?.message).toEqual(["failed", code])
  const stored = await sso.getTest({ token: org.token, path: { connectionId: org.connection.id, testId: report.id } })
  expect(ok(stored, 200).test).toEqual(report)
  return report
}

/** An active connection: tested by its admin through the ACS, then activated. */
const activeOrganization = async (saml: SamlOptions = {}) => {
  const org = await organization(saml)
  const { report } = await runTest(org)
  expect(report.status, JSON.stringify(report.failure)).toBe("succeeded")
  const activated = await sso.activateConnection({ token: org.token, path: { connectionId: org.connection.id } })
  expect(activated.status, JSON.stringify(activated.body)).toBe(200)
  return org
}

/** Starts a sign-in for `email`; the IdP answers it as `as` (default the same email); not posted yet. */
const startSignIn = async (email: string, options: IdpSaml.ResponseOptions = {}, returnTo?: string) => {
  const started = await ssoSignIn.start({ payload: { email, ...(returnTo === undefined ? {} : { returnTo }) } })
  expect(started.status, JSON.stringify(started.body)).toBe(201)
  return idp.signIn(ok(started, 201).authorizationUrl, { as: email, ...options })
}

/** Signs `email` in through SAML: the ACS's answer. */
const signIn = async (email: string, options: IdpSaml.ResponseOptions = {}) => {
  const acs = await startSignIn(email, options)
  return { acs, answered: await postAcs(acs.acsUrl, acs.form) }
}

describe("SSO with SAML", { timeout: 60_000 }, () => {
  it("publishes the SP metadata the IdP registers the connection by, and 404s an unknown or OIDC connection", async () => {
    const org = await organization()
    const metadata = await fetch(`${server.url}/v1/sso/saml/${org.connection.id}/metadata`)
    expect(metadata.headers.get("content-type")).toContain("application/samlmetadata+xml")
    const xml = await metadata.text()
    expect(org.connection.sp).toMatchObject({
      entityId: `${server.url}/v1/sso/saml/${org.connection.id}/metadata`,
      acsUrl: `${server.url}/v1/sso/saml/${org.connection.id}/acs`,
      metadataUrl: `${server.url}/v1/sso/saml/${org.connection.id}/metadata`
    })
    expect(xml).toContain(`entityID="${org.connection.sp.entityId}"`)
    expect(xml).toContain(`Location="${org.connection.sp.acsUrl}"`)
    expect(xml).toContain('WantAssertionsSigned="true"')
    expect(xml).toContain("urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST")

    const unknown = "ssc_01jc0000000000000000000000"
    const missing = await get(`/v1/sso/saml/${unknown}/metadata`)
    expect([missing.status, missing.body]).toMatchObject([404, { error: "sso_connection_not_found" }])
    const acs = await postAcs(`${server.url}/v1/sso/saml/${unknown}/acs`, { SAMLResponse: Buffer.from("<x/>").toString("base64") })
    expect([acs.status, acs.body]).toMatchObject([404, { error: "sso_connection_not_found" }])
    const oidc = await sso.createConnection({
      token: org.token,
      payload: { kind: "oidc", name: "OIDC", domains: [org.domain], oidc: { issuer: "https://login.example.com", clientId: "orgplane", clientSecret: "s3cret-value" } }
    })
    expect((await get(`/v1/sso/saml/${ok(oidc, 201).connection.id}/metadata`)).status).toBe(404)
    const bad = await get("/v1/sso/saml/not-an-id/metadata")
    expect(bad.status).toBe(400)
  })

  it("tests before activating, then signs a new person in as a JIT member through the ACS and the code exchange", async () => {
    const org = await organization()
    const team = ok(await teams.create({ token: org.token, payload: { name: "Engineering" } }), 201).team
    const path = { connectionId: org.connection.id }
    await sso.updateConnection({ token: org.token, path, payload: { jit: { defaultTeamIds: [team.id] } } })
    const untested = await sso.activateConnection({ token: org.token, path })
    expect([untested.status, untested.body]).toMatchObject([409, { error: "sso_connection_untested" }])

    const { acs, answered, report } = await runTest(org)
    expect(answered.body).toMatchObject({ ok: true, code: null, failure: null })
    expect(report).toMatchObject({
      connectionId: org.connection.id,
      configRevision: 1,
      status: "succeeded",
      failure: null,
      profile: { subject: org.email, email: org.email }
    })
    expect(report.claims).toMatchObject({ email: [org.email] })
    // The AuthnRequest named the connection's SP, asked for its ACS, and carried the signed state as RelayState.
    const request = idp.authnRequests().at(-1)!
    expect(request).toMatchObject({ issuer: org.connection.sp.entityId, acsUrl: org.connection.sp.acsUrl, binding: "redirect" })
    expect(acs.RelayState).toMatch(new RegExp(`^${org.organizationId}\\.ssi_`))
    expect(ok(await sso.getConnection({ token: org.token, path }), 200).connection.lastTest).toEqual(report)

    const activated = await sso.activateConnection({ token: org.token, path })
    expect(ok(activated, 200).connection.state).toBe("active")

    const email = person(`ada@${org.domain}`, { name: "Ada Lovelace", groups: ["engineering"] })
    const { answered: signedIn } = await signIn(email)
    expect(signedIn.status, signedIn.text).toBe(200)
    expect(signedIn.body).toMatchObject({ purpose: "sign_in", ok: true, failure: null })
    const exchanged = await ssoSignIn.exchange({ payload: { code: resultOf(signedIn).code ?? "" } })
    expect(exchanged.status, exchanged.text).toBe(200)
    const session = ok(exchanged, 200)
    expect(session.user).toMatchObject({ email, name: "Ada Lovelace" })
    const me = ok(await users.me({ token: session.session.token }), 200)
    expect(me).toMatchObject({ organization: { id: org.organizationId }, membership: { role: "member" } })
    expect(ok(await teams.get({ token: org.token, path: { teamId: team.id } }), 200).team.memberIds).toContain(me.membership?.id)

    // A repeat sign-in is the same person, with the name the IdP now gives.
    person(email, { name: "Ada King" })
    const second = await signIn(email)
    const again = await ssoSignIn.exchange({ payload: { code: resultOf(second.answered).code ?? "" } })
    expect(ok(again, 200).user).toMatchObject({ id: session.user.id, name: "Ada King" })
  })

  it("sends the browser to a loopback returnTo with the code or the error", async () => {
    const org = await activeOrganization()
    const email = person(`grace@${org.domain}`)
    const acs = await startSignIn(email, {}, "http://127.0.0.1:53682/callback")
    const answered = await postAcs(acs.acsUrl, acs.form)
    expect(answered.status).toBe(302)
    const location = new URL(answered.location!)
    expect(location.origin + location.pathname).toBe("http://127.0.0.1:53682/callback")
    expect(location.searchParams.get("code")).toMatch(/^ssx_/)
    expect((await ssoSignIn.exchange({ payload: { code: location.searchParams.get("code") ?? "" } })).status).toBe(200)

    const refused = await startSignIn(email, { tamper: { _tag: "expired" } }, "http://127.0.0.1:53682/callback")
    const failed = await postAcs(refused.acsUrl, refused.form)
    expect(failed.status).toBe(302)
    expect(new URL(failed.location!).searchParams.get("error")).toBe("assertion_expired")
  })

  it("works through the Promise client: the SP metadata, a test through the ACS, and a malformed form's 400", async () => {
    const org = await organization()
    const client = createClient({ baseUrl: server.url })
    const xml = await client.ssoSignIn.samlMetadata({ path: { connectionId: org.connection.id } })
    expect(xml).toContain(`entityID="${org.connection.sp.entityId}"`)
    const { acs } = await startTest(org.token, org.connection.id, { as: org.email })
    const malformed = await client.ssoSignIn.samlAcs({ path: { connectionId: org.connection.id }, payload: { SAMLResponse: "not base64!", RelayState: acs.RelayState! } })
      .catch((e: unknown) => e)
    expect(malformed).toBeInstanceOf(OrgplaneError)
    expect((malformed as OrgplaneError).status).toBe(400)
    const answered = await client.ssoSignIn.samlAcs({ path: { connectionId: org.connection.id }, payload: { SAMLResponse: acs.SAMLResponse, RelayState: acs.RelayState! } })
    expect(answered).toMatchObject({ purpose: "test", ok: true, test: { status: "succeeded" } })
  })

  it("refuses an unsigned assertion", async () => {
    await expectTestFailure(await organization(), "signature_invalid", { tamper: { _tag: "unsigned" } })
  })

  it("refuses a signed assertion altered after signing", async () => {
    await expectTestFailure(await organization(), "signature_invalid", { tamper: { _tag: "alteredAfterSigning" } })
  })

  it("refuses signature wrapping (a signed assertion moved beside an unsigned one)", async () => {
    const org = await organization()
    for (const variant of ["XSW1", "XSW3", "XSW4", "XSW5", "XSW7", "XSW8"] as const) {
      const report = await expectTestFailure(org, "signature_invalid", { tamper: { _tag: "wrapping", variant } })
      expect(report.profile, variant).toBeNull()
    }
  })

  it("refuses a Response signed with SHA-1", async () => {
    await expectTestFailure(await organization(), "unsupported_algorithm", { tamper: { _tag: "sha1" } })
  })

  it("refuses a Response signed by a key the IdP's metadata does not list", async () => {
    await expectTestFailure(await organization(), "signature_invalid", { tamper: { _tag: "unknownKey" } })
  })

  it("refuses an expired assertion", async () => {
    await expectTestFailure(await organization(), "assertion_expired", { tamper: { _tag: "expired" } })
  })

  it("refuses an assertion for another audience", async () => {
    await expectTestFailure(await organization(), "audience_mismatch", { tamper: { _tag: "wrongAudience" } })
  })

  it("refuses a Response for another Destination, and an assertion for another Recipient", async () => {
    const org = await organization()
    await expectTestFailure(org, "destination_mismatch", { tamper: { _tag: "wrongDestination" } })
    await expectTestFailure(org, "destination_mismatch", { tamper: { _tag: "wrongRecipient" } })
  })

  it("refuses a Response from another issuer", async () => {
    await expectTestFailure(await organization(), "issuer_mismatch", { tamper: { _tag: "wrongIssuer" } })
  })

  it("records an error of the IdP", async () => {
    const report = await expectTestFailure(await organization(), "idp_error", { tamper: { _tag: "status", message: "Not today" } })
    expect(report.failure?.message).toContain("Not today")
  })

  it("refuses a replayed Response (the same form posted twice)", async () => {
    const org = await activeOrganization()
    const email = person(`alan@${org.domain}`)
    const { acs, answered } = await signIn(email)
    expect(answered.status, answered.text).toBe(200)
    const replayed = await postAcs(acs.acsUrl, acs.form)
    expect([replayed.status, replayed.body]).toMatchObject([401, { error: "sso_sign_in_failed", code: "replayed" }])
  })

  it("refuses a Response answering another sign-in's request", async () => {
    const org = await activeOrganization()
    const email = person(`barbara@${org.domain}`)
    await startSignIn(email)
    const other = idp.authnRequests().at(-1)!.id
    const acs = await startSignIn(email, { inResponseTo: other })
    const answered = await postAcs(acs.acsUrl, acs.form)
    expect([answered.status, answered.body]).toMatchObject([401, { code: "in_response_to_mismatch" }])
  })

  it("refuses an email outside the connection's verified domains", async () => {
    const org = await activeOrganization()
    const typed = `edsger@${org.domain}`
    idp.addUser(typed, { email: `edsger@elsewhere-${unique()}.test` })
    const { answered } = await signIn(typed)
    expect([answered.status, answered.body]).toMatchObject([401, { code: "email_domain_not_verified" }])
  })

  it("fails a test completed by another person than the admin who started it, and activation stays refused", async () => {
    const org = await organization()
    const other = person(`mallory@${org.domain}`)
    await expectTestFailure(org, "identity_mismatch", { as: other })
    const refused = await sso.activateConnection({ token: org.token, path: { connectionId: org.connection.id } })
    expect([refused.status, refused.body]).toMatchObject([409, { error: "sso_connection_untested" }])
  })

  it("answers 400 to a form that is no SAML Response, without spending the sign-in", async () => {
    const org = await organization()
    const { acs } = await startTest(org.token, org.connection.id, { as: org.email })
    const relay = acs.RelayState!
    const cases: ReadonlyArray<Record<string, string>> = [
      { RelayState: relay },
      { SAMLResponse: "", RelayState: relay },
      { SAMLResponse: "not base64 at all!", RelayState: relay },
      { SAMLResponse: Buffer.from("<html>hello</html>").toString("base64"), RelayState: relay },
      { SAMLResponse: Buffer.from("<samlp:Response xmlns:samlp=").toString("base64"), RelayState: relay },
      { SAMLResponse: Buffer.from(`<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>`).toString("base64"), RelayState: relay },
      { SAMLResponse: "A".repeat(600 * 1024), RelayState: relay }
    ]
    for (const form of cases) {
      const answered = await postAcs(acs.acsUrl, form)
      expect([answered.status, answered.body], answered.text.slice(0, 300)).toMatchObject([400, { error: "invalid_request" }])
    }
    // A body past the server's limit.
    const huge = await postAcs(acs.acsUrl, { SAMLResponse: "A".repeat(2 * 1024 * 1024) })
    expect(huge.status).toBe(413)
    // The real Response still completes the test.
    const answered = await postAcs(acs.acsUrl, acs.form)
    expect(resultOf(answered).test?.status).toBe("succeeded")
  })

  it("answers 404 to a RelayState of another organization's sign-in", async () => {
    const a = await organization()
    const b = await organization()
    const { acs } = await startTest(a.token, a.connection.id, { as: a.email })
    const answered = await postAcs(b.connection.sp.acsUrl, acs.form)
    expect([answered.status, answered.body]).toMatchObject([404, { error: "sso_connection_not_found" }])
    expect(resultOf(await postAcs(acs.acsUrl, acs.form)).test?.status).toBe("succeeded")
  })

  it("refuses IdP-initiated sign-in when the connection does not enable it", async () => {
    const org = await activeOrganization()
    const email = person(`ida@${org.domain}`)
    const acs = await idp.signInIdpInitiated(org.connection.sp.entityId, { as: email })
    const answered = await postAcs(acs.acsUrl, acs.form)
    expect([answered.status, answered.body]).toMatchObject([401, { code: "idp_initiated_not_allowed" }])
  })

  it("signs in IdP-initiated with an allowed RelayState as returnTo, once per assertion", async () => {
    const org = await activeOrganization({ allowIdpInitiated: true, relayStateAllowList: ["/app/after-sso", "http://127.0.0.1:53682/callback"] })
    const email = person(`joan@${org.domain}`, { name: "Joan Clarke" })
    const acs = await idp.signInIdpInitiated(org.connection.sp.entityId, { as: email, relayState: "/app/after-sso" })
    expect(acs.xml).not.toContain("InResponseTo")
    const answered = await postAcs(acs.acsUrl, acs.form)
    expect(answered.status, answered.text).toBe(302)
    const location = new URL(answered.location!)
    expect(location.origin + location.pathname).toBe(`${server.url}/app/after-sso`)
    const exchanged = await ssoSignIn.exchange({ payload: { code: location.searchParams.get("code") ?? "" } })
    expect(exchanged.status, exchanged.text).toBe(200)
    const session = ok(exchanged, 200)
    expect(session.user).toMatchObject({ email, name: "Joan Clarke" })
    const me = ok(await users.me({ token: session.session.token }), 200)
    expect(me.organization?.id).toBe(org.organizationId)

    // The same Response again: the assertion was taken.
    const replayed = await postAcs(acs.acsUrl, acs.form)
    expect([replayed.status, replayed.body]).toMatchObject([401, { code: "replayed" }])

    // Without a RelayState: the code as JSON.
    const bare = await idp.signInIdpInitiated(org.connection.sp.entityId, { as: email })
    const json = await postAcs(bare.acsUrl, bare.form)
    expect([json.status, json.body]).toMatchObject([200, { purpose: "sign_in", ok: true }])
  })

  it("refuses IdP-initiated sign-in with a RelayState not on the allow-list, and an allow-list of other places", async () => {
    const org = await activeOrganization({ allowIdpInitiated: true, relayStateAllowList: ["/app/after-sso"] })
    const elsewhere = await sso.createConnection({
      token: org.token,
      payload: { kind: "saml", name: "Open", saml: { source: "metadataUrl", url: idp.metadataUrl, allowIdpInitiated: true, relayStateAllowList: ["/ok", "https://evil.example/"] } }
    })
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(400)
    expect(invalid(elsewhere).details[0]?.path).toEqual(["saml", "relayStateAllowList", 1])
    const email = person(`hedy@${org.domain}`)
    for (const relayState of ["/app/elsewhere", "https://evil.example/steal"]) {
      const acs = await idp.signInIdpInitiated(org.connection.sp.entityId, { as: email, relayState })
      const answered = await postAcs(acs.acsUrl, acs.form)
      expect([answered.status, answered.body], relayState).toMatchObject([401, { code: "relay_state_not_allowed" }])
    }
  })
})

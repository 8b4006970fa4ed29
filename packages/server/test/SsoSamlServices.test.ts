/**
 * SSO through SAML, service by service on a fresh migrated database (the embedded one, or Postgres with
 * DATABASE_URL), against testkit's samlify IdP on loopback (IdpSaml) and FakeDns, without HTTP: what
 * http/SsoSaml.test.ts, SsoSamlSettings.test.ts and SsoSamlRefresh.test.ts check through HTTP that lives
 * in the services. The IdP's settings resolved at create and update (a metadata URL fetched, XML parsed) and bad
 * metadata refused on its field, saving nothing; the SP metadata the IdP registers the connection by; create →
 * verify → test through the ACS → activate → sign in → session with JIT membership and group rules; a replayed
 * Response, one answering another request, another organization's RelayState, a form that is no Response (refused
 * without spending the sign-in); IdP-initiated sign-in behind its switch and allow-list, once per assertion; the
 * metadata refresh, by the administrator and by the job; taken assertions cleaned up once expired.
 */
import { afterAll, beforeAll, describe, expect, layer } from "@effect/vitest"
import {
  CreateSsoConnectionRequest,
  type MemberContext,
  SamlAcsForm,
  type SsoConnection,
  type SsoConnectionId,
  TeamId,
  UpdateSsoConnectionRequest
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import { typeid } from "typeid-js"
import * as FakeDns from "../../../packages/testkit/src/FakeDns.js"
import * as IdpSaml from "../../../packages/testkit/src/IdpSaml.js"
import * as IntentsExpiry from "../src/sso/IntentsExpiry.js"
import { SamlAcs } from "../src/sso/SamlAcs.js"
import { refreshDue, SamlRefresh } from "../src/sso/SamlRefresh.js"
import { SignIn } from "../src/sso/SignIn.js"
import { Sso } from "../src/sso/Sso.js"
import { BASE, member, newDomain, testLayer, verifyDomain } from "./support/Sso.js"

let dns: FakeDns.FakeDns
let idp: IdpSaml.IdpSaml
beforeAll(async () => {
  dns = await FakeDns.start()
  idp = await IdpSaml.start()
})
afterAll(async () => {
  await idp?.close()
  await dns?.stop()
})

/** A person at the IdP, keyed by their email (the login hint `as` names). */
const person = (email: string, user: Partial<IdpSaml.User> = {}) => {
  idp.addUser(email, { email, name: `Person ${email.split("@")[0]}`, ...user })
  return email
}

const createRequest = Schema.decodeUnknownSync(CreateSsoConnectionRequest)
const updateRequest = Schema.decodeUnknownSync(UpdateSsoConnectionRequest)
const acsForm = Schema.decodeUnknownSync(SamlAcsForm)

/** What the browser posts to the connection's ACS, handed to the service: its answer, or its refusal. */
const postAcs = (connectionId: SsoConnectionId, form: Readonly<Record<string, string>>) =>
  Effect.flatMap(Effect.service(SamlAcs), (acs) => Effect.result(acs.acs(connectionId, acsForm(form), BASE)))

/** The JSON answer of a completion (not a redirect). */
const jsonOf = (answer: Effect.Success<ReturnType<SamlAcs["Service"]["acs"]>>) => ("purpose" in answer ? answer : expect.fail("a JSON answer"))

/**
 * An enterprise organization whose owner is at the IdP, with a verified domain and a draft SAML connection from the
 * IdP's metadata URL, registered at the IdP by its SP metadata.
 */
const organization = Effect.fn("test.organization")(function*(saml: Record<string, unknown> = {}) {
  const sso = yield* Sso
  const domain = newDomain("saml")
  const owner = yield* member(person(`admin@${domain}`))
  const { connection } = yield* sso.createConnection(owner, createRequest({
    kind: "saml",
    name: "Loopback SAML IdP",
    domains: [domain],
    saml: { source: "metadataUrl", url: idp.metadataUrl, ...saml }
  }), BASE)
  idp.addServiceProvider({ metadata: yield* (yield* SamlAcs).metadata(connection.id, BASE) })
  yield* verifyDomain(owner, domain, dns)
  return { owner, domain, connection }
})

/** A test started by `caller`; the IdP answers it (as the caller unless told), tampered as asked; not posted yet. */
const startTest = Effect.fn("test.startTest")(function*(caller: MemberContext, connection: SsoConnection, options: IdpSaml.ResponseOptions = {}) {
  const started = yield* (yield* SignIn).startTest(caller, connection.id, BASE)
  expect(started.test.status, JSON.stringify(started.test.failure)).toBe("pending")
  return yield* Effect.promise(() => idp.signIn(started.authorizationUrl, { as: caller.user.email, ...options }))
})

/** A test through the ACS: its report. */
const runTest = Effect.fn("test.runTest")(function*(caller: MemberContext, connection: SsoConnection, options: IdpSaml.ResponseOptions = {}) {
  const acs = yield* startTest(caller, connection, options)
  const answered = yield* postAcs(connection.id, acs.form)
  if (answered._tag === "Failure") return expect.fail(JSON.stringify(answered.failure))
  const answer = jsonOf(answered.success)
  if (answer.test === null) return expect.fail("a test's report")
  return { acs, report: answer.test, answer }
})

/** An active connection: tested by its owner through the ACS, then activated. */
const activeOrganization = Effect.fn("test.activeOrganization")(function*(saml: Record<string, unknown> = {}) {
  const org = yield* organization(saml)
  const { report } = yield* runTest(org.owner, org.connection)
  expect(report.status, JSON.stringify(report.failure)).toBe("succeeded")
  expect((yield* (yield* Sso).activateConnection(org.owner, org.connection.id, BASE)).connection.state).toBe("active")
  return org
})

/** `email` starts a sign-in from orgplane; the IdP answers it: the form, not posted yet. */
const startSignIn = Effect.fn("test.startSignIn")(function*(email: string, options: IdpSaml.ResponseOptions = {}) {
  const started = yield* (yield* SignIn).start("203.0.113.20", { email }, BASE)
  return yield* Effect.promise(() => idp.signIn(started.authorizationUrl, { as: email, ...options }))
})

/** The refusal's code of an ACS answer. */
const refusalOf = <A, E>(answered: { readonly _tag: "Success"; readonly success: A } | { readonly _tag: "Failure"; readonly failure: E }) =>
  answered._tag === "Failure" ? answered.failure : expect.fail(`refused, not ${JSON.stringify(answered.success)}`)

layer(testLayer(() => dns), { timeout: 120_000, excludeTestServices: true })("SSO through SAML", (it) => {
  describe("settings", () => {
    it.effect("by metadata URL: the IdP's entity id, SSO URL, binding and certificate with its expiry, and the fetch recorded", () =>
      Effect.gen(function*() {
        const sso = yield* Sso
        const owner = yield* member(`admin@${newDomain("saml")}`)
        const { connection } = yield* sso.createConnection(owner, createRequest({ kind: "saml", name: "IdP", saml: { source: "metadataUrl", url: idp.metadataUrl } }), BASE)
        const certificate = new NodeCrypto.X509Certificate(idp.certificates()[0]!)
        expect(connection.saml).toMatchObject({
          source: "metadataUrl",
          metadataUrl: idp.metadataUrl,
          entityId: idp.entityId,
          ssoUrl: idp.ssoUrl,
          ssoBinding: "redirect",
          certificates: [{ subject: "CN=orgplane test IdP", notAfter: new Date(certificate.validTo) }],
          metadataRefresh: { ok: true, message: null }
        })
        expect(connection.sp).toMatchObject({ entityId: `${BASE}/v1/sso/saml/${connection.id}/metadata`, acsUrl: `${BASE}/v1/sso/saml/${connection.id}/acs` })
        expect((yield* sso.getConnection(owner, connection.id, BASE)).connection).toEqual(connection)

        // The same URL again is no settings change; the XML instead is (a new revision to test).
        const same = yield* sso.updateConnection(owner, connection.id, updateRequest({ saml: { source: "metadataUrl", url: idp.metadataUrl } }), BASE)
        expect(same.connection.configRevision).toBe(1)
        const byXml = yield* sso.updateConnection(owner, connection.id, updateRequest({ saml: { source: "metadataXml", xml: idp.metadata() } }), BASE)
        expect(byXml.connection).toMatchObject({ configRevision: 2, saml: { source: "metadataXml", entityId: idp.entityId, metadataRefresh: null } })
      }))

    it.effect("bad metadata is a 400 on its field, and nothing is saved", () =>
      Effect.gen(function*() {
        const sso = yield* Sso
        const owner = yield* member(`admin@${newDomain("saml")}`)
        const cases: ReadonlyArray<readonly [unknown, ReadonlyArray<string>, string]> = [
          [{ source: "metadataXml", xml: "<not-closed>" }, ["saml", "xml"], "(metadata_not_xml)"],
          [{ source: "metadataXml", xml: `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${idp.metadata()}` }, ["saml", "xml"], "(metadata_doctype)"],
          [{ source: "metadataXml", xml: idp.metadata().replace(/<ds:X509Certificate>[^<]{40}/, "<ds:X509Certificate>AAAA") }, ["saml", "xml"], "(certificate_invalid)"],
          [{ source: "metadataUrl", url: `${idp.url}/missing` }, ["saml", "url"], "(metadata_unreachable)"],
          [{ source: "metadataUrl", url: "http://127.0.0.1:1/metadata" }, ["saml", "url"], "(metadata_unreachable)"]
        ]
        for (const [saml, path, code] of cases) {
          const refused = yield* Effect.flip(sso.createConnection(owner, createRequest({ kind: "saml", name: "IdP", saml }), BASE))
          if (refused._tag !== "InvalidRequest") return expect.fail(JSON.stringify(refused))
          expect(refused.details[0]!.path).toEqual(path)
          expect(refused.details[0]!.message).toContain(code)
        }
        // IdP-initiated sign-in needs somewhere to send the browser.
        const nowhere = yield* Effect.flip(sso.createConnection(owner, createRequest({
          kind: "saml",
          name: "Open",
          saml: { source: "metadataUrl", url: idp.metadataUrl, allowIdpInitiated: true }
        }), BASE))
        expect(nowhere).toMatchObject({
          _tag: "InvalidRequest",
          details: [{ path: ["saml", "relayStateAllowList"], message: "must list at least one RelayState when allowIdpInitiated is true" }]
        })
        expect((yield* sso.listConnections(owner, BASE)).connections).toEqual([])
      }))

    it.effect("publishes the SP metadata the IdP registers the connection by; an unknown or OIDC connection is not found", () =>
      Effect.gen(function*() {
        const acs = yield* SamlAcs
        const org = yield* organization()
        const xml = yield* acs.metadata(org.connection.id, BASE)
        expect(xml).toContain(`entityID="${org.connection.sp.entityId}"`)
        expect(xml).toContain(`Location="${org.connection.sp.acsUrl}"`)
        expect(xml).toContain("urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST")
        const oidc = yield* (yield* Sso).createConnection(org.owner, createRequest({
          kind: "oidc",
          name: "OIDC",
          oidc: { issuer: "https://login.example.com", clientId: "orgplane", clientSecret: "s3cret-value" }
        }), BASE)
        expect(yield* Effect.flip(acs.metadata(oidc.connection.id, BASE))).toMatchObject({ error: "sso_connection_not_found" })
        const unknown = "ssc_01h455vb4pex5vsknk084sn02q" as SsoConnectionId
        expect(yield* Effect.flip(acs.metadata(unknown, BASE))).toMatchObject({ error: "sso_connection_not_found" })
        expect(refusalOf(yield* postAcs(unknown, { SAMLResponse: "PHg+" }))).toMatchObject({ error: "sso_connection_not_found" })
      }))
  })

  describe("sign-in through the ACS", () => {
    it.effect("tests before activating, then signs a new person in as a JIT member with the default team and group rules", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const sso = yield* Sso
        const signIn = yield* SignIn
        const org = yield* organization()
        const [team, grouped] = [Schema.decodeUnknownSync(TeamId)(typeid("tem").toString()), Schema.decodeUnknownSync(TeamId)(typeid("tem").toString())]
        for (const id of [team, grouped]) {
          yield* sql`INSERT INTO teams (id, organization_id, name, created_at, updated_at) VALUES (${id}, ${org.owner.organization.id}, ${id}, ${new Date()}, ${new Date()})`
        }
        yield* sso.updateConnection(org.owner, org.connection.id, updateRequest({ jit: { defaultTeamIds: [team] } }), BASE)
        yield* sso.updateConnection(org.owner, org.connection.id, updateRequest({ mapping: { groupRules: [{ group: "engineering", teamId: grouped }] } }), BASE)
        expect(yield* Effect.flip(sso.activateConnection(org.owner, org.connection.id, BASE))).toMatchObject({ error: "sso_connection_untested" })

        const { acs, answer, report } = yield* runTest(org.owner, org.connection)
        expect(answer).toMatchObject({ ok: true, code: null, failure: null })
        expect(report).toMatchObject({ connectionId: org.connection.id, configRevision: 2, status: "succeeded", failure: null, profile: { subject: org.owner.user.email, email: org.owner.user.email } })
        expect(report.claims).toMatchObject({ email: [org.owner.user.email] })
        // The AuthnRequest named the connection's SP, asked for its ACS, and carried the signed state as RelayState.
        expect(idp.authnRequests().at(-1)!).toMatchObject({ issuer: org.connection.sp.entityId, acsUrl: org.connection.sp.acsUrl, binding: "redirect" })
        expect(acs.RelayState).toMatch(new RegExp(`^${org.owner.organization.id}\\.ssi_`))
        expect((yield* sso.getConnection(org.owner, org.connection.id, BASE)).connection.lastTest).toEqual(report)
        expect((yield* sso.activateConnection(org.owner, org.connection.id, BASE)).connection.state).toBe("active")

        const email = person(`ada@${org.domain}`, { name: "Ada Lovelace", groups: ["engineering"] })
        const signedIn = yield* postAcs(org.connection.id, (yield* startSignIn(email)).form)
        if (signedIn._tag === "Failure") return expect.fail(JSON.stringify(signedIn.failure))
        const done = jsonOf(signedIn.success)
        expect(done).toMatchObject({ purpose: "sign_in", ok: true, failure: null })
        const exchanged = yield* signIn.exchange(done.code!)
        expect(exchanged.user).toMatchObject({ email, name: "Ada Lovelace" })
        const [joined] = yield* sql<{ id: string; role: string }>`SELECT id, role FROM memberships
                                                                   WHERE organization_id = ${org.owner.organization.id} AND user_id = ${exchanged.user.id}`
        expect(joined?.role).toBe("member")
        const teams = yield* sql<{ teamId: string }>`SELECT team_id FROM team_members WHERE organization_id = ${org.owner.organization.id} AND membership_id = ${joined!.id} ORDER BY team_id`
        expect(teams.map((row) => row.teamId)).toEqual([team, grouped].sort())

        // A repeat sign-in is the same person, with the name the IdP now gives.
        person(email, { name: "Ada King" })
        const second = yield* postAcs(org.connection.id, (yield* startSignIn(email)).form)
        if (second._tag === "Failure") return expect.fail(JSON.stringify(second.failure))
        expect((yield* signIn.exchange(jsonOf(second.success).code!)).user).toMatchObject({ id: exchanged.user.id, name: "Ada King" })
      }))

    it.effect("sends the browser to a loopback returnTo with the code", () =>
      Effect.gen(function*() {
        const org = yield* activeOrganization()
        const email = person(`grace@${org.domain}`)
        const started = yield* (yield* SignIn).start("203.0.113.21", { email, returnTo: "http://127.0.0.1:53682/callback" }, BASE)
        const acs = yield* Effect.promise(() => idp.signIn(started.authorizationUrl, { as: email }))
        const answered = yield* postAcs(org.connection.id, acs.form)
        if (answered._tag === "Failure" || "purpose" in answered.success) return expect.fail("a redirect")
        expect(answered.success.status).toBe(302)
        const location = new URL(answered.success.headers["location"]!)
        expect(location.origin + location.pathname).toBe("http://127.0.0.1:53682/callback")
        expect(location.searchParams.get("code")).toMatch(/^ssx_/)
      }))

    it.effect("refuses a replayed Response, one answering another sign-in's request, an email outside the verified domains", () =>
      Effect.gen(function*() {
        const org = yield* activeOrganization()
        const email = person(`alan@${org.domain}`)
        const acs = yield* startSignIn(email)
        expect((yield* postAcs(org.connection.id, acs.form))._tag).toBe("Success")
        expect(refusalOf(yield* postAcs(org.connection.id, acs.form))).toMatchObject({ _tag: "SsoSignInFailed", code: "replayed" })

        yield* startSignIn(person(`barbara@${org.domain}`))
        const other = idp.authnRequests().at(-1)!.id
        const mismatched = yield* startSignIn(`barbara@${org.domain}`, { inResponseTo: other })
        expect(refusalOf(yield* postAcs(org.connection.id, mismatched.form))).toMatchObject({ code: "in_response_to_mismatch" })

        const typed = `edsger@${org.domain}`
        idp.addUser(typed, { email: `edsger@${newDomain("elsewhere")}` })
        expect(refusalOf(yield* postAcs(org.connection.id, (yield* startSignIn(typed)).form))).toMatchObject({ code: "email_domain_not_verified" })
      }))

    it.effect("fails a test completed by another person, or by a Response signed with SHA-1; activation stays refused", () =>
      Effect.gen(function*() {
        const org = yield* organization()
        const other = yield* runTest(org.owner, org.connection, { as: person(`mallory@${org.domain}`) })
        expect([other.report.status, other.report.failure?.code]).toEqual(["failed", "identity_mismatch"])
        const sha1 = yield* runTest(org.owner, org.connection, { tamper: { _tag: "sha1" } })
        expect([sha1.report.status, sha1.report.failure?.code]).toEqual(["failed", "unsupported_algorithm"])
        expect(yield* Effect.flip((yield* Sso).activateConnection(org.owner, org.connection.id, BASE))).toMatchObject({ error: "sso_connection_untested" })
      }))

    it.effect("answers 400 to a form that is no SAML Response without spending the sign-in; 404 to another organization's RelayState", () =>
      Effect.gen(function*() {
        const org = yield* organization()
        const acs = yield* startTest(org.owner, org.connection)
        const relay = acs.RelayState!
        const cases: ReadonlyArray<Record<string, string>> = [
          { SAMLResponse: "not base64 at all!", RelayState: relay },
          { SAMLResponse: Buffer.from("<html>hello</html>").toString("base64"), RelayState: relay },
          { SAMLResponse: Buffer.from("<samlp:Response xmlns:samlp=").toString("base64"), RelayState: relay },
          { SAMLResponse: Buffer.from(`<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>`).toString("base64"), RelayState: relay }
        ]
        for (const form of cases) {
          expect(refusalOf(yield* postAcs(org.connection.id, form))).toMatchObject({ _tag: "InvalidRequest", details: [{ path: ["SAMLResponse"] }] })
        }
        // Another organization's connection: not found, and the sign-in is still unspent.
        const rival = yield* organization()
        expect(refusalOf(yield* postAcs(rival.connection.id, acs.form))).toMatchObject({ error: "sso_connection_not_found" })
        const answered = yield* postAcs(org.connection.id, acs.form)
        if (answered._tag === "Failure") return expect.fail(JSON.stringify(answered.failure))
        expect(jsonOf(answered.success).test?.status).toBe("succeeded")
      }))
  })

  describe("IdP-initiated sign-in", () => {
    it.effect("is refused when the connection does not enable it", () =>
      Effect.gen(function*() {
        const org = yield* activeOrganization()
        const acs = yield* Effect.promise(() => idp.signInIdpInitiated(org.connection.sp.entityId!, { as: person(`ida@${org.domain}`) }))
        expect(refusalOf(yield* postAcs(org.connection.id, acs.form))).toMatchObject({ code: "idp_initiated_not_allowed" })
      }))

    it.effect("signs in with an allowed RelayState as returnTo, once per assertion; a RelayState off the allow-list is refused", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const signIn = yield* SignIn
        const org = yield* activeOrganization({ allowIdpInitiated: true, relayStateAllowList: ["/app/after-sso", "http://127.0.0.1:53682/callback"] })
        const email = person(`joan@${org.domain}`, { name: "Joan Clarke" })
        const acs = yield* Effect.promise(() => idp.signInIdpInitiated(org.connection.sp.entityId!, { as: email, relayState: "/app/after-sso" }))
        expect(acs.xml).not.toContain("InResponseTo")
        const answered = yield* postAcs(org.connection.id, acs.form)
        if (answered._tag === "Failure" || "purpose" in answered.success) return expect.fail("a redirect")
        const location = new URL(answered.success.headers["location"]!)
        expect(location.origin + location.pathname).toBe(`${BASE}/app/after-sso`)
        expect((yield* signIn.exchange(location.searchParams.get("code")!)).user).toMatchObject({ email, name: "Joan Clarke" })

        // The same Response again: the assertion was taken.
        expect(refusalOf(yield* postAcs(org.connection.id, acs.form))).toMatchObject({ code: "replayed" })
        // Without a RelayState: the code as JSON.
        const bare = yield* Effect.promise(() => idp.signInIdpInitiated(org.connection.sp.entityId!, { as: email }))
        const json = yield* postAcs(org.connection.id, bare.form)
        if (json._tag === "Failure") return expect.fail(JSON.stringify(json.failure))
        expect(jsonOf(json.success)).toMatchObject({ purpose: "sign_in", ok: true })

        for (const relayState of ["/app/elsewhere", "https://evil.example/steal"]) {
          const off = yield* Effect.promise(() => idp.signInIdpInitiated(org.connection.sp.entityId!, { as: email, relayState }))
          expect(refusalOf(yield* postAcs(org.connection.id, off.form)), relayState).toMatchObject({ code: "relay_state_not_allowed" })
        }

        // Every assertion taken (the owner's test and the two sign-ins; not those refused before) is kept until it
        // expires, then the cleanup deletes it.
        const taken = Effect.map(sql<{ count: number }>`SELECT count(*)::int AS count FROM sso_saml_assertions WHERE organization_id = ${org.owner.organization.id}`, (rows) => rows[0]!.count)
        expect(yield* taken).toBe(3)
        expect((yield* IntentsExpiry.deleteExpired({ now: new Date() })).assertions).toBe(0)
        const deleted = yield* IntentsExpiry.deleteExpired({ now: new Date(Date.now() + 2 * 3_600_000) })
        expect(deleted.assertions).toBeGreaterThanOrEqual(3)
        expect(yield* taken).toBe(0)
      }))
  })

  describe("metadata refresh", () => {
    it.effect("by the administrator: a metadata URL only; the fetch recorded; by the job: the connections due", () =>
      Effect.gen(function*() {
        const sso = yield* Sso
        const refresh = yield* SamlRefresh
        const org = yield* organization()
        const before = (yield* sso.getConnection(org.owner, org.connection.id, BASE)).connection.saml!.metadataRefresh!
        const refreshed = yield* refresh.refreshMetadata(org.owner, org.connection.id, BASE)
        expect(refreshed.connection.saml).toMatchObject({ entityId: idp.entityId, metadataRefresh: { ok: true, message: null } })
        expect(refreshed.connection.saml!.metadataRefresh!.at.getTime()).toBeGreaterThanOrEqual(before.at.getTime())
        expect(refreshed.connection.configRevision).toBe(org.connection.configRevision)

        const byXml = yield* sso.createConnection(org.owner, createRequest({ kind: "saml", name: "XML", saml: { source: "metadataXml", xml: idp.metadata() } }), BASE)
        expect(yield* Effect.flip(refresh.refreshMetadata(org.owner, byXml.connection.id, BASE))).toMatchObject({ error: "sso_metadata_url_required" })
        const stranger = yield* member(`admin@${newDomain("saml")}`)
        expect(yield* Effect.flip(refresh.refreshMetadata(stranger, org.connection.id, BASE))).toMatchObject({ error: "sso_connection_not_found" })

        // The job: a URL whose latest fetch is older than the interval is fetched again; one that fails is recorded.
        const broken = yield* sso.createConnection(org.owner, createRequest({ kind: "saml", name: "Moved", saml: { source: "metadataUrl", url: idp.metadataUrl } }), BASE)
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE sso_connections SET saml = jsonb_set(saml, '{metadataUrl}', ${JSON.stringify(`${idp.url}/moved`)}::jsonb)
                   WHERE organization_id = ${org.owner.organization.id} AND id = ${broken.connection.id}`
        const fetched = yield* refreshDue({ now: new Date(Date.now() + 7 * 3_600_000), interval: "6 hours", limit: 1_000 })
        expect(fetched).toBeGreaterThanOrEqual(3)
        const failed = (yield* sso.getConnection(org.owner, broken.connection.id, BASE)).connection.saml!
        expect(failed.metadataRefresh).toMatchObject({ ok: false })
        expect(failed.metadataRefresh!.message).toContain("(metadata_unreachable)")
        // The settings taken before the failure stay.
        expect(failed).toMatchObject({ entityId: idp.entityId, ssoUrl: idp.ssoUrl })
        expect((yield* sso.getConnection(org.owner, org.connection.id, BASE)).connection.saml!.metadataRefresh).toMatchObject({ ok: true })
      }))
  })
})

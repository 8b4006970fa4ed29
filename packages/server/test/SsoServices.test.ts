/**
 * The SSO area's services on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL), without
 * HTTP, against a real OpenID Provider on loopback (testkit's IdpOidc: oidc-provider) and testkit's FakeDns: what
 * http/Sso.test.ts, SsoOidc.test.ts, SsoAccountTakeover.test.ts and SsoSignInUpkeep.test.ts check
 * through HTTP that lives in the services. Connections created, listed, changed (a settings change needs a new test;
 * an active connection refuses it), deleted, with the plan and role first; domains verified by TXT record, taken by
 * one organization only; tests and activation; an OIDC sign-in end to end (discovery, PKCE, state, nonce, the code
 * exchanged once for a session) with JIT membership in the connection's role and teams; each refusal with its code;
 * an account made before the first SSO sign-in taken back unless the organization proved its email; deprovisioned
 * and disabled people refused; intents expiring, and cleaned up; the enforcement policy's refusals; another
 * organization's connection not found.
 */
import { afterAll, beforeAll, describe, expect, layer } from "@effect/vitest"
import {
  CreateSsoConnectionRequest,
  type MemberContext,
  SsoCallbackQuery,
  type SsoConnection,
  TeamId,
  UpdateSsoConnectionRequest
} from "@orgplane/schema"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { typeid } from "typeid-js"
import * as FakeDns from "../../../packages/testkit/src/FakeDns.js"
import * as IdpOidc from "../../../packages/testkit/src/IdpOidc.js"
import { IdentityLinksRepository } from "../src/identity/IdentityLinksRepository.js"
import * as IntentsExpiry from "../src/sso/IntentsExpiry.js"
import { Policy } from "../src/sso/Policy.js"
import { SignIn } from "../src/sso/SignIn.js"
import { Sso } from "../src/sso/Sso.js"
import { clockAt } from "./support/Clocks.js"
import { BASE, member, newDomain, testLayer, verifyDomain } from "./support/Sso.js"

const SECRET = "oidc-client-secret-value"
let dns: FakeDns.FakeDns
let idp: IdpOidc.IdpOidc
beforeAll(async () => {
  dns = await FakeDns.start()
  idp = await IdpOidc.start({ clients: [{ client_id: "orgplane", client_secret: SECRET, redirect_uris: [`${BASE}/v1/sso/oidc/callback`] }] })
})
afterAll(async () => {
  await idp?.close()
  await dns?.stop()
})

let subjects = 0
/** A person at the IdP, keyed by their email (the login hint). */
const account = (email: string, extra: Partial<IdpOidc.Account> = {}) => {
  idp.addAccount(email, { sub: `sub-${++subjects}`, email, email_verified: true, name: `Person ${subjects}`, ...extra })
  return email
}

const createRequest = Schema.decodeUnknownSync(CreateSsoConnectionRequest)
const updateRequest = Schema.decodeUnknownSync(UpdateSsoConnectionRequest)
const callbackQuery = Schema.decodeUnknownSync(SsoCallbackQuery)

const oidcBody = (domains: ReadonlyArray<string>, extra: Record<string, unknown> = {}) =>
  createRequest({ kind: "oidc", name: "Loopback IdP", domains, oidc: { issuer: idp.issuer, clientId: "orgplane", clientSecret: SECRET }, ...extra })

/** The callback as the browser delivers it: the query of the URL the IdP sent it to. */
const callbackOf = (url: string) => callbackQuery(Object.fromEntries(new URL(url).searchParams))

/** An enterprise organization whose owner is at the IdP, with a verified domain and a draft OIDC connection. */
const organization = Effect.fn("test.organization")(function*(extra: Record<string, unknown> = {}) {
  const sso = yield* Sso
  const domain = newDomain()
  const owner = yield* member(account(`admin@${domain}`))
  const { connection } = yield* sso.createConnection(owner, oidcBody([domain], extra), BASE)
  yield* verifyDomain(owner, domain, dns)
  return { owner, domain, connection }
})

/** A test started by `caller`, answered at the IdP (as `options.as`, else the caller), completed: the callback's answer. */
const runTest = Effect.fn("test.runTest")(function*(caller: MemberContext, connection: SsoConnection, options: IdpOidc.SignInOptions = {}) {
  const signIn = yield* SignIn
  const started = yield* signIn.startTest(caller, connection.id, BASE)
  expect(started.test.status, JSON.stringify(started.test.failure)).toBe("pending")
  const callback = yield* Effect.promise(() => idp.signIn(started.authorizationUrl, { as: caller.user.email, ...options }))
  const answered = yield* signIn.oidcCallback(callbackOf(callback.url), BASE)
  if (!("purpose" in answered) || answered.test === null) return expect.fail("a test's answer")
  return { callback, report: answered.test, answered }
})

/** An active connection: tested by its owner, then activated. */
const activeOrganization = Effect.fn("test.activeOrganization")(function*(extra: Record<string, unknown> = {}) {
  const org = yield* organization(extra)
  const { report } = yield* runTest(org.owner, org.connection)
  expect(report.status, JSON.stringify(report.failure)).toBe("succeeded")
  const activated = yield* (yield* Sso).activateConnection(org.owner, org.connection.id, BASE)
  expect(activated.connection.state).toBe("active")
  return org
})

/** `email` signs in through SSO (started from orgplane): the callback's answer, or its refusal. */
const signInAs = Effect.fn("test.signInAs")(function*(email: string, options: IdpOidc.SignInOptions = {}) {
  const signIn = yield* SignIn
  const started = yield* signIn.start("203.0.113.7", { email }, BASE)
  const callback = yield* Effect.promise(() => idp.signIn(started.authorizationUrl, { as: email, ...options }))
  return { callback, answered: yield* Effect.result(signIn.oidcCallback(callbackOf(callback.url), BASE)) }
})

/** `email` signs in through SSO: the exchanged session and user. */
const ssoSignIn = Effect.fn("test.ssoSignIn")(function*(email: string) {
  const { answered } = yield* signInAs(email)
  if (answered._tag === "Failure") return expect.fail(JSON.stringify(answered.failure))
  const done = answered.success
  if (!("purpose" in done) || done.code === null) return expect.fail("a code")
  return { code: done.code, ...(yield* (yield* SignIn).exchange(done.code)) }
})

/** The refusal's code (SsoSignInFailed) of a sign-in's answer. */
const refusalOf = (answered: Effect.Success<ReturnType<typeof signInAs>>["answered"]) =>
  answered._tag === "Failure" ? answered.failure : expect.fail(`refused, not ${JSON.stringify(answered.success)}`)

layer(testLayer(() => dns), { timeout: 120_000, excludeTestServices: true })("SSO services", (it) => {
  describe("management", () => {
    it.effect("the plan first, then the role: 402 without enterprise, 403 for members", () =>
      Effect.gen(function*() {
        const sso = yield* Sso
        const free = yield* member(`owner@${newDomain()}`, { plan: "free" })
        expect(yield* Effect.flip(sso.listConnections(free, BASE))).toMatchObject({ _tag: "PlanRequired", feature: "sso" })
        const { owner } = yield* organization()
        const plain = yield* member(`member@${newDomain()}`, { role: "member", organization: owner.organization })
        expect(yield* Effect.flip(sso.listConnections(plain, BASE))).toMatchObject({ _tag: "Forbidden" })
        expect(yield* Effect.flip((yield* Policy).get(plain))).toMatchObject({ _tag: "Forbidden" })
      }))

    it.effect("creates, lists, reads, changes and deletes connections; the secret is never answered", () =>
      Effect.gen(function*() {
        const sso = yield* Sso
        const domain = newDomain()
        const owner = yield* member(`admin@${domain}`)
        const { connection } = yield* sso.createConnection(owner, oidcBody([`  ${domain.toUpperCase()} `]), BASE)
        expect(connection).toMatchObject({
          organizationId: owner.organization.id,
          kind: "oidc",
          state: "draft",
          domains: [{ domain, verified: false }],
          jit: { enabled: true, defaultRole: "member", defaultTeamIds: [] },
          mapping: { email: "email", name: "name", givenName: "given_name", familyName: "family_name", groups: "groups", groupRules: [] },
          oidc: { issuer: idp.issuer, endpoints: null, clientId: "orgplane", clientSecretSet: true, scopes: ["openid", "email", "profile"], tokenEndpointAuthMethod: "client_secret_basic" },
          saml: null,
          sp: { redirectUrl: `${BASE}/v1/sso/oidc/callback`, entityId: null, acsUrl: null, metadataUrl: null },
          configRevision: 1,
          lastTest: null
        })
        expect(connection.id).toMatch(/^ssc_[0-9a-z]{26}$/)
        expect(JSON.stringify(connection)).not.toContain(SECRET)
        expect((yield* sso.getConnection(owner, connection.id, BASE)).connection).toEqual(connection)
        expect((yield* sso.listConnections(owner, BASE)).connections).toEqual([connection])
        expect((yield* sso.listDomains(owner)).domains).toMatchObject([{ domain, verified: false, verifiedAt: null }])

        // The name is no setting: the revision stays. The mapping is one: the revision moves (a new test is needed).
        const renamed = yield* sso.updateConnection(owner, connection.id, updateRequest({ name: "Renamed" }), BASE)
        expect([renamed.connection.name, renamed.connection.configRevision]).toEqual(["Renamed", 1])
        const remapped = yield* sso.updateConnection(owner, connection.id, updateRequest({ mapping: { name: "nickname" } }), BASE)
        expect(remapped.connection.configRevision).toBe(2)
        const secret = yield* sso.updateConnection(owner, connection.id, updateRequest({ oidc: { issuer: idp.issuer, clientId: "orgplane", clientSecret: "another-secret" } }), BASE)
        expect(secret.connection.configRevision).toBe(3)
        expect(yield* Effect.flip(sso.updateConnection(owner, connection.id, updateRequest({ saml: { source: "metadataXml", xml: "<x/>" } }), BASE)))
          .toMatchObject({ _tag: "InvalidRequest", details: [{ path: ["saml"], message: "is for SAML connections; this one is OIDC" }] })

        yield* sso.deleteConnection(owner, connection.id)
        expect(yield* Effect.flip(sso.getConnection(owner, connection.id, BASE))).toMatchObject({ error: "sso_connection_not_found" })
        expect(yield* Effect.flip(sso.deleteConnection(owner, connection.id))).toMatchObject({ error: "sso_connection_not_found" })
      }))

    it.effect("refuses teams of another organization and a certificate that does not parse with 400, and saves nothing", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const sso = yield* Sso
        const { owner } = yield* organization()
        const other = yield* member(`admin@${newDomain()}`)
        const team = Schema.decodeUnknownSync(TeamId)(typeid("tem").toString())
        yield* sql`INSERT INTO teams (id, organization_id, name, created_at, updated_at) VALUES (${team}, ${other.organization.id}, 'Eng', ${new Date()}, ${new Date()})`
        const refused = yield* Effect.flip(sso.createConnection(owner, oidcBody([newDomain()], { jit: { defaultTeamIds: [team] } }), BASE))
        expect(refused).toMatchObject({ _tag: "InvalidRequest", details: [{ path: ["jit", "defaultTeamIds", 0], message: `${team} is not a team of this organization` }] })
        const certificate = yield* Effect.flip(sso.createConnection(owner, createRequest({
          kind: "saml",
          name: "By hand",
          domains: [newDomain()],
          saml: { source: "manual", entityId: "https://idp.example/entity", ssoUrl: "https://idp.example/sso", certificates: ["-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"] }
        }), BASE))
        expect(certificate).toMatchObject({
          _tag: "InvalidRequest",
          details: [{ path: ["saml", "certificates", 0], message: "Certificate 1 does not parse as an X.509 certificate. (certificate_invalid)" }]
        })
        expect((yield* sso.listConnections(owner, BASE)).connections).toHaveLength(1)
      }))

    it.effect("verifies a domain by its TXT record, says what it expected when it is missing, and lets one organization have it", () =>
      Effect.gen(function*() {
        const sso = yield* Sso
        const domain = newDomain()
        const owner = yield* member(`admin@${domain}`)
        // Without a domain named and none unverified: a 400 on `domain`.
        expect(yield* Effect.flip(sso.requestDomainVerification(owner, undefined))).toMatchObject({ details: [{ path: ["domain"], code: "sso_domain_required" }] })
        const { verification } = yield* sso.requestDomainVerification(owner, domain)
        expect(verification).toMatchObject({ domain, recordType: "TXT", recordName: `_orgplane-verification.${domain}` })
        expect(verification.recordValue).toMatch(/^orgplane-verification=opv_/)
        // The pending record is answered again while it is valid.
        expect((yield* sso.requestDomainVerification(owner, undefined)).verification).toEqual(verification)
        const missing = yield* Effect.flip(sso.verifyDomain(owner, domain))
        expect(missing).toMatchObject({
          _tag: "DomainVerificationFailed",
          message: `No TXT record found at ${verification.recordName}: publish one with the value ${verification.recordValue}.`,
          recordName: verification.recordName,
          expectedValue: verification.recordValue,
          foundValues: []
        })
        dns.setTxt(verification.recordName, ["something else", verification.recordValue])
        const verified = yield* sso.verifyDomain(owner, domain)
        expect(verified).toMatchObject({ verified: true, domain })
        const unknown = newDomain()
        expect(yield* Effect.flip(sso.verifyDomain(owner, unknown))).toMatchObject({
          details: [{ path: ["domain"], message: `${unknown} is not a domain of this organization.`, code: "sso_domain_not_found" }]
        })
        // Another organization verifying the same domain later: refused.
        const rival = yield* member(`other@${newDomain()}`)
        expect(yield* Effect.flip(verifyDomain(rival, domain, dns))).toMatchObject({ _tag: "DomainVerificationConflict", reason: "sso_domain_taken" })
        // Each organization's domains and connections are its own.
        expect((yield* sso.listDomains(rival)).domains.map((row) => [row.domain, row.verified])).toEqual([[domain, false]])
        expect((yield* sso.listDomains(owner)).domains.map((row) => [row.domain, row.verified])).toEqual([[domain, true]])
      }))

    it.effect("answers dns_lookup_failed, not a defect, when the DNS server fails, naming it and the record", () =>
      Effect.gen(function*() {
        const sso = yield* Sso
        const domain = newDomain()
        const owner = yield* member(`admin@${domain}`)
        const { verification } = yield* sso.requestDomainVerification(owner, domain)
        dns.failWith("SERVFAIL")
        const failed = yield* Effect.flip(sso.verifyDomain(owner, undefined)).pipe(Effect.ensuring(Effect.sync(() => dns.failWith(undefined))))
        if (failed._tag !== "DnsLookupFailed") return expect.fail(JSON.stringify(failed))
        expect(failed.reason).toBe("dns_lookup_failed")
        expect(failed.message).toContain(dns.address)
        expect(failed.message).toContain(verification.recordName)
      }))

    it.effect("keeps another organization's connection to itself: not found", () =>
      Effect.gen(function*() {
        const sso = yield* Sso
        const { connection, owner } = yield* organization()
        const stranger = yield* member(`admin@${newDomain()}`)
        expect(yield* Effect.flip(sso.getConnection(stranger, connection.id, BASE))).toMatchObject({ error: "sso_connection_not_found" })
        expect(yield* Effect.flip(sso.updateConnection(stranger, connection.id, updateRequest({ name: "Mine" }), BASE))).toMatchObject({ error: "sso_connection_not_found" })
        expect(yield* Effect.flip(sso.activateConnection(stranger, connection.id, BASE))).toMatchObject({ error: "sso_connection_not_found" })
        expect(yield* Effect.flip(sso.deleteConnection(stranger, connection.id))).toMatchObject({ error: "sso_connection_not_found" })
        expect(yield* Effect.flip((yield* SignIn).startTest(stranger, connection.id, BASE))).toMatchObject({ error: "sso_connection_not_found" })
        expect((yield* sso.listConnections(stranger, BASE)).connections).toEqual([])
        expect((yield* sso.getConnection(owner, connection.id, BASE)).connection.name).toBe("Loopback IdP")
      }))

    it.effect("the policy: requiring SSO needs an active connection, and never locks out the session setting it", () =>
      Effect.gen(function*() {
        const policy = yield* Policy
        const org = yield* organization()
        expect((yield* policy.get(org.owner)).policy).toMatchObject({ requireSso: false, ownersPasswordFallback: true, updatedAt: null })
        expect(yield* Effect.flip(policy.set(org.owner, { requireSso: true }))).toMatchObject({ error: "sso_connection_required" })
        const { report } = yield* runTest(org.owner, org.connection)
        expect(report.status).toBe("succeeded")
        yield* (yield* Sso).activateConnection(org.owner, org.connection.id, BASE)
        // The owner signed in with a password: without the owners' fallback, the policy would refuse that session.
        expect(yield* Effect.flip(policy.set(org.owner, { requireSso: true, ownersPasswordFallback: false }))).toMatchObject({ error: "sso_policy_locks_you_out" })
        const set = yield* policy.set(org.owner, { requireSso: true })
        expect(set.policy).toMatchObject({ requireSso: true, ownersPasswordFallback: true })
        expect((yield* policy.get(org.owner)).policy).toEqual(set.policy)
        // Discovery says it is required now.
        expect(yield* (yield* SignIn).discover("203.0.113.8", `someone@${org.domain}`)).toEqual({ method: "sso", connectionId: org.connection.id, required: true })
      }))
  })

  describe("OIDC sign-in against a real OpenID Provider", () => {
    it.effect("tests, activates, and signs a new person in as a JIT member with the default role and teams, once per code", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const sso = yield* Sso
        const signIn = yield* SignIn
        const org = yield* organization()
        const team = Schema.decodeUnknownSync(TeamId)(typeid("tem").toString())
        yield* sql`INSERT INTO teams (id, organization_id, name, created_at, updated_at) VALUES (${team}, ${org.owner.organization.id}, 'Eng', ${new Date()}, ${new Date()})`
        yield* sso.updateConnection(org.owner, org.connection.id, updateRequest({ jit: { defaultTeamIds: [team] } }), BASE)

        expect(yield* Effect.flip(sso.activateConnection(org.owner, org.connection.id, BASE))).toMatchObject({ error: "sso_connection_untested" })
        const { callback, report } = yield* runTest(org.owner, org.connection)
        expect(report).toMatchObject({ connectionId: org.connection.id, configRevision: 1, status: "succeeded", failure: null, profile: { email: org.owner.user.email, emailVerified: true } })
        expect(report.claims).toMatchObject({ iss: idp.issuer, aud: "orgplane", email: org.owner.user.email })
        // PKCE S256, state and nonce on the authorization request; the secret sent as configured (basic).
        const authorization = idp.authorizations().at(-1)!
        expect(authorization).toMatchObject({ code_challenge_method: "S256", login_hint: org.owner.user.email })
        expect(authorization.state).toBe(callback.state)
        expect(authorization.nonce).toBeTruthy()
        expect(idp.tokenRequests().at(-1)!.clientAuthentication).toBe("client_secret_basic")
        expect((yield* sso.getTest(org.owner, org.connection.id, report.id)).test).toEqual(report)
        expect((yield* sso.getConnection(org.owner, org.connection.id, BASE)).connection.lastTest).toEqual(report)
        expect((yield* sso.activateConnection(org.owner, org.connection.id, BASE)).connection.state).toBe("active")

        expect(yield* signIn.discover("203.0.113.9", `nobody@${org.domain}`)).toEqual({ method: "sso", connectionId: org.connection.id, required: false })
        expect(yield* signIn.discover("203.0.113.9", "x@elsewhere.test")).toEqual({ method: "password", connectionId: null, required: false })

        const email = account(`ada@${org.domain}`, { name: "Ada Lovelace" })
        const first = yield* ssoSignIn(email)
        expect(first.code).toMatch(/^ssx_/)
        expect(first.user).toMatchObject({ email, name: "Ada Lovelace" })
        expect(first.session.token).toMatch(/^ops_/)
        const [joined] = yield* sql<{ id: string; role: string }>`SELECT id, role FROM memberships
                                                                   WHERE organization_id = ${org.owner.organization.id} AND user_id = ${first.user.id}`
        expect(joined?.role).toBe("member")
        const inTeam = yield* sql`SELECT 1 FROM team_members WHERE organization_id = ${org.owner.organization.id} AND team_id = ${team} AND membership_id = ${joined!.id}`
        expect(inTeam).toHaveLength(1)
        const [session] = yield* sql<{ ssoConnectionId: string | null }>`SELECT sso_connection_id FROM sessions WHERE user_id = ${first.user.id}`
        expect(session?.ssoConnectionId).toBe(org.connection.id)
        // The code works once.
        expect(yield* Effect.flip(signIn.exchange(first.code))).toMatchObject({ code: "replayed" })

        // A repeat sign-in is the same person, with the name the IdP now gives.
        idp.addAccount(email, { sub: `sub-${subjects}`, email, email_verified: true, name: "Ada King" })
        expect((yield* ssoSignIn(email)).user).toMatchObject({ id: first.user.id, name: "Ada King" })
      }))

    it.effect("sends the browser to a loopback returnTo with the code, never the token", () =>
      Effect.gen(function*() {
        const signIn = yield* SignIn
        const org = yield* activeOrganization()
        const email = account(`grace@${org.domain}`)
        const started = yield* signIn.start("203.0.113.10", { email, returnTo: "http://127.0.0.1:53682/callback" }, BASE)
        const callback = yield* Effect.promise(() => idp.signIn(started.authorizationUrl, { as: email }))
        const answered = yield* signIn.oidcCallback(callbackOf(callback.url), BASE)
        if ("purpose" in answered) return expect.fail("a redirect")
        expect(answered.status).toBe(302)
        const location = new URL(answered.headers["location"]!)
        expect(location.origin + location.pathname).toBe("http://127.0.0.1:53682/callback")
        const code = location.searchParams.get("code")!
        expect(code).toMatch(/^ssx_/)
        expect(location.href).not.toContain("ops_")
        expect((yield* signIn.exchange(code)).user.email).toBe(email)
      }))

    it.effect("refuses a replayed or forged state, an email outside the verified domains, an unverified email", () =>
      Effect.gen(function*() {
        const signIn = yield* SignIn
        const org = yield* activeOrganization()
        const { answered, callback } = yield* signInAs(account(`alan@${org.domain}`))
        expect(answered._tag).toBe("Success")
        const replayed = yield* Effect.flip(signIn.oidcCallback(callbackOf(callback.url), BASE))
        expect(replayed).toMatchObject({ code: "replayed" })
        const forged = yield* Effect.flip(signIn.oidcCallback(callbackOf(callback.url.replace(/state=[^&]+/, "state=org_x.ssi_y.zz")), BASE))
        expect(forged).toMatchObject({ code: "replayed" })

        // The IdP vouches for an email of another domain than the one the person typed.
        const typed = `edsger@${org.domain}`
        const vouched = `edsger@${newDomain("elsewhere")}`
        idp.addAccount(typed, { sub: `sub-${++subjects}`, email: vouched, email_verified: true })
        expect(refusalOf((yield* signInAs(typed)).answered)).toMatchObject({ code: "email_domain_not_verified" })
        expect(refusalOf((yield* signInAs(account(`unverified@${org.domain}`, { email_verified: false }))).answered)).toMatchObject({ code: "email_not_verified" })
        // A forged token names no one in the audit log; a valid answer names who the IdP vouched for.
        expect(refusalOf((yield* signInAs(account(`forged@${org.domain}`), { idToken: "badSignature" })).answered)).toMatchObject({ code: "signature_invalid" })
        const sql = yield* SqlClient.SqlClient
        const events = yield* sql<{ reason: string; actorLabel: string | null }>`SELECT reason, actor_label FROM audit_events
                                   WHERE organization_id = ${org.owner.organization.id} AND action = 'session.create' AND outcome = 'failed' ORDER BY id`
        expect(events.map((event) => [event.reason, event.actorLabel])).toEqual([
          ["email_domain_not_verified", vouched],
          ["email_not_verified", `unverified@${org.domain}`],
          ["signature_invalid", null]
        ])
      }))

    it.effect("records each refusal of the provider's answer on the test: issuer, audience, expiry, nonce, signature, IdP error, another person", () =>
      Effect.gen(function*() {
        const org = yield* organization()
        const failed = Effect.fn("test.failed")(function*(options: IdpOidc.SignInOptions) {
          const { report } = yield* runTest(org.owner, org.connection, options)
          expect(report.status).toBe("failed")
          return report.failure!
        })
        expect((yield* failed({ idToken: "wrongIssuer" })).code).toBe("issuer_mismatch")
        expect((yield* failed({ idToken: "wrongAudience" })).code).toBe("audience_mismatch")
        expect((yield* failed({ idToken: "expired" })).code).toBe("token_expired")
        expect((yield* failed({ idToken: "wrongNonce" })).code).toBe("nonce_mismatch")
        expect((yield* failed({ idToken: "unsigned" })).code).toBe("signature_invalid")
        const denied = yield* failed({ error: "access_denied", errorDescription: "Not today" })
        expect([denied.code, denied.message]).toEqual(["idp_error", "The identity provider answered access_denied: Not today"])
        expect((yield* failed({ as: account(`mallory@${org.domain}`) })).code).toBe("identity_mismatch")
        expect(yield* Effect.flip((yield* Sso).activateConnection(org.owner, org.connection.id, BASE))).toMatchObject({ error: "sso_connection_untested" })
      }))

    it.effect("needs a new test after a settings change, refuses settings changes of an active connection, one active connection per domain", () =>
      Effect.gen(function*() {
        const sso = yield* Sso
        const org = yield* activeOrganization()
        expect(yield* Effect.flip(sso.updateConnection(org.owner, org.connection.id, updateRequest({ mapping: { name: "nickname" } }), BASE)))
          .toMatchObject({ error: "sso_connection_active" })
        const second = (yield* sso.createConnection(org.owner, oidcBody([org.domain], { name: "New IdP", oidc: { issuer: idp.issuer, clientId: "orgplane", clientSecret: SECRET, tokenEndpointAuthMethod: "client_secret_post" } }), BASE)).connection
        expect((yield* runTest(org.owner, second)).report.status).toBe("succeeded")
        expect(idp.tokenRequests().at(-1)!.clientAuthentication).toBe("client_secret_post")
        expect(yield* Effect.flip(sso.activateConnection(org.owner, second.id, BASE))).toMatchObject({ error: "sso_domain_served" })
        expect(yield* Effect.flip(sso.deleteDomain(org.owner, org.domain))).toMatchObject({ error: "sso_domain_in_use" })
        yield* sso.deactivateConnection(org.owner, org.connection.id, BASE)
        expect((yield* sso.activateConnection(org.owner, second.id, BASE)).connection.state).toBe("active")
        expect((yield* (yield* SignIn).discover("203.0.113.11", `x@${org.domain}`)).connectionId).toBe(second.id)
        const remapped = yield* sso.updateConnection(org.owner, org.connection.id, updateRequest({ mapping: { name: "nickname" } }), BASE)
        expect(remapped.connection.configRevision).toBe(2)
        const refused = yield* Effect.flip(sso.activateConnection(org.owner, org.connection.id, BASE))
        expect(refused).toMatchObject({ error: "sso_connection_untested" })
        expect(refused.message).toContain("revision 1, now 2")
      }))

    it.effect("without JIT, a person who is not a member is refused membership_required", () =>
      Effect.gen(function*() {
        const org = yield* activeOrganization({ jit: { enabled: false } })
        expect(refusalOf((yield* signInAs(account(`newcomer@${org.domain}`))).answered)).toMatchObject({ code: "membership_required" })
      }))

    it.effect("takes back an account someone signed up with the person's address; links one the organization proved", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const org = yield* activeOrganization()
        // The outsider made the account first (sign-up proves nothing of the email), with a session.
        const squatter = yield* member(`victim@${org.domain}`, { organization: (yield* member(`outsider@${newDomain()}`)).organization })
        account(squatter.user.email)
        const real = yield* ssoSignIn(squatter.user.email)
        expect(real.user.id).toBe(squatter.user.id)
        const [outsiderSession] = yield* sql<{ revokedAt: Date | null }>`SELECT revoked_at FROM sessions WHERE id = ${squatter.credential._tag === "Session" ? squatter.credential.sessionId : ""}`
        expect(outsiderSession?.revokedAt).not.toBeNull()
        const [user] = yield* sql<{ passwordHash: string }>`SELECT password_hash FROM users WHERE id = ${squatter.user.id}`
        expect(user?.passwordHash).not.toBe("x")

        // A member whose email the organization proved (an accepted invitation) is linked, their password kept.
        const invited = yield* member(`invited@${org.domain}`, { role: "member", organization: org.owner.organization })
        yield* sql`UPDATE memberships SET email_verified_at = ${new Date()} WHERE id = ${invited.membership.id}`
        account(invited.user.email)
        expect((yield* ssoSignIn(invited.user.email)).user.id).toBe(invited.user.id)
        const [kept] = yield* sql<{ passwordHash: string }>`SELECT password_hash FROM users WHERE id = ${invited.user.id}`
        expect(kept?.passwordHash).toBe("x")
        const [session] = yield* sql<{ revokedAt: Date | null }>`SELECT revoked_at FROM sessions WHERE id = ${invited.credential._tag === "Session" ? invited.credential.sessionId : ""}`
        expect(session?.revokedAt).toBeNull()
      }))

    it.effect("refuses an identity directory sync deprovisioned, and a disabled account", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const links = yield* IdentityLinksRepository
        const org = yield* activeOrganization()
        const email = account(`leaver@${org.domain}`)
        const { user } = yield* ssoSignIn(email)
        yield* links.setDeprovisioned({ organizationId: org.owner.organization.id, userId: user.id }, new Date())
        expect(yield* links.isDeprovisioned({ organizationId: org.owner.organization.id, userId: user.id })).toBe(true)
        expect(refusalOf((yield* signInAs(email)).answered)).toMatchObject({ code: "identity_deprovisioned" })
        yield* links.setDeprovisioned({ organizationId: org.owner.organization.id, userId: user.id }, null)
        yield* sql`UPDATE users SET disabled_at = ${new Date()} WHERE id = ${user.id}`
        expect(refusalOf((yield* signInAs(email)).answered)).toMatchObject({ code: "account_disabled" })
        yield* sql`UPDATE users SET disabled_at = NULL WHERE id = ${user.id}`
        expect((yield* ssoSignIn(email)).user.id).toBe(user.id)
      }))

    it.effect("refuses a sign-in answered after 5 minutes, and the cleanup deletes intents an hour past their expiry", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const signIn = yield* SignIn
        const org = yield* activeOrganization()
        const email = account(`slow@${org.domain}`)
        const started = yield* signIn.start("203.0.113.12", { email }, BASE)
        const callback = yield* Effect.promise(() => idp.signIn(started.authorizationUrl, { as: email }))
        const later = Date.now() + 6 * 60_000
        const late = yield* Effect.flip(signIn.oidcCallback(callbackOf(callback.url), BASE).pipe(Effect.provideService(Clock.Clock, clockAt(() => later))))
        expect(late).toMatchObject({ code: "intent_expired" })
        // Spent: the same answer again is a replay.
        expect(yield* Effect.flip(signIn.oidcCallback(callbackOf(callback.url), BASE))).toMatchObject({ code: "replayed" })

        const count = Effect.map(sql<{ count: number }>`SELECT count(*)::int AS count FROM sso_intents WHERE organization_id = ${org.owner.organization.id}`, (rows) => rows[0]!.count)
        const before = yield* count
        expect(before).toBeGreaterThan(0)
        // Within the hour's grace nothing goes; past it, every intent of the organization (the others' too).
        expect(yield* IntentsExpiry.deleteExpired({ now: new Date(started.expiresAt.getTime() + 30 * 60_000) })).toEqual({ intents: 0, assertions: 0 })
        expect(yield* count).toBe(before)
        const deleted = yield* IntentsExpiry.deleteExpired({ now: new Date(Date.now() + 3 * 3_600_000), batch: 2 })
        expect(deleted.intents).toBeGreaterThanOrEqual(before)
        expect(yield* count).toBe(0)
      }))
  })
})

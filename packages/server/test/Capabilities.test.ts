/**
 * The capabilities area's services on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL),
 * against real counterparts on loopback (testkit's FakeOAuth as each suite's authorization server, FakeSuites' Graph
 * mail and Google Calendar APIs), without HTTP: the storage (clients, credentials with compare-and-set,
 * authorizations, tenancy), the admins' OAuth clients, a member's connection end to end (PKCE, signed state,
 * callback, tokens stored encrypted), the three capabilities, each way to `needs_connection`, a 401 renewed once,
 * and the upstream failures' answers; the messages are held word for word, as the API answers them.
 */
import { afterAll, beforeAll, expect, layer } from "@effect/vitest"
import { type MemberContext, MembershipId, type Suite, type SuiteClientRequest } from "@orgplane/schema"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import * as FakeOAuth from "../../../packages/testkit/src/FakeOAuth.js"
import * as FakeSuites from "../../../packages/testkit/src/FakeSuites.js"
import { Capabilities } from "../src/capabilities/Capabilities.js"
import * as CapabilityConfig from "../src/capabilities/CapabilityConfig.js"
import { SuiteClients } from "../src/capabilities/SuiteClients.js"
import { SuiteConnections } from "../src/capabilities/SuiteConnections.js"
import { SuiteRepository } from "../src/capabilities/SuiteRepository.js"
import { excerpt } from "../src/capabilities/Upstream.js"
import * as Config from "../src/platform/Config.js"
import * as Crypto from "../src/platform/Crypto.js"
import * as Outbound from "../src/platform/Outbound.js"
import { bind, bindTokens, SecretColumns, SuiteTokens } from "../src/platform/SecretColumns.js"
import * as Db from "./support/IdentityDatabase.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const KEYS = `test:${NodeCrypto.randomBytes(32).toString("base64")}`
const BASE_URL = "http://127.0.0.1:9"
const CALLBACK = `${BASE_URL}/v1/capabilities/oauth/callback`
const GOOGLE_EVENTS = "https://www.googleapis.com/auth/calendar.events"
const SCOPES = ["offline_access", "Mail.ReadWrite", "Mail.Read", GOOGLE_EVENTS]

let oauth: FakeOAuth.FakeOAuth
let mail: FakeSuites.FakeMail
let calendar: FakeSuites.FakeCalendar
beforeAll(async () => {
  oauth = await FakeOAuth.start({ dynamicRegistration: false, accessTokenLifetimeSeconds: 3600, scopesSupported: SCOPES })
  mail = await FakeSuites.startMail({ verifyToken: oauth.verifyAccessToken })
  calendar = await FakeSuites.startCalendar({ verifyToken: oauth.verifyAccessToken })
  oauth.addClient({ client_id: "suite-client", client_secret: "suite-secret", redirect_uris: [CALLBACK], token_endpoint_auth_method: "client_secret_post" })
})
afterAll(async () => {
  await mail?.close()
  await calendar?.close()
  await oauth?.close()
})

const services = Layer.mergeAll(Capabilities.layer, SuiteClients.layer, SuiteConnections.layer, SuiteRepository.layer).pipe(
  Layer.provide([
    Layer.effect(Crypto.Crypto, Crypto.make({ passwordCost: 10, keys: Crypto.parseKeys(KEYS) })),
    Outbound.layer({ allowPrivate: true }),
    CapabilityConfig.layer({ capabilityTimeout: "1 second" }),
    Config.layer({ outboundAllowPrivate: true }).pipe(
      Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} })))
    )
  ])
)
const testLayer = Layer.provideMerge(services, Layer.merge(Db.layer, Layer.effect(Crypto.Crypto, Crypto.make({ passwordCost: 10, keys: Crypto.parseKeys(KEYS) }))))

const clientBody = (suite: Suite, overrides: Partial<SuiteClientRequest> = {}): SuiteClientRequest => ({
  clientId: "suite-client",
  clientSecret: "suite-secret",
  features: suite === "suite-a" ? ["mailDraft", "mailRead"] : ["calendarWrite"],
  authorizationEndpoint: `${oauth.url}/authorize`,
  tokenEndpoint: `${oauth.url}/token`,
  apiBaseUrl: suite === "suite-a" ? mail.url : calendar.url,
  ...overrides
})

/** An organization with an owner and a member, their rows stored. */
const staffed = Effect.fn("test.staffed")(function*() {
  const organization = Members.organization("team")
  const owner = Members.member(organization, "owner")
  const member = Members.member(organization, "member")
  yield* Members.seed(owner, member)
  return { organization, owner, member }
})

/** Opens the authorization URL as a browser would (FakeOAuth auto-approves); the callback's query. */
const authorizeInBrowser = (authorizeUrl: string) =>
  Effect.promise(async () => {
    const answer = await fetch(authorizeUrl, { redirect: "manual" })
    expect(answer.status).toBe(302)
    const location = new URL(answer.headers.get("location") ?? "")
    expect(`${location.origin}${location.pathname}`).toBe(CALLBACK)
    return { code: location.searchParams.get("code") ?? "", state: location.searchParams.get("state") ?? "" }
  })

/** connect → authorize → callback, for one member and suite. */
const connectFully = Effect.fn("test.connectFully")(function*(member: MemberContext, suite: Suite) {
  const connections = yield* SuiteConnections
  const started = yield* connections.connect(member, suite, BASE_URL)
  expect(started.status).toBe("needs_auth")
  return yield* connections.callback(yield* authorizeInBrowser(started.authorizeUrl ?? ""))
})

/** An organization with both suites configured and its member connected to both. */
const connectedOrg = Effect.fn("test.connectedOrg")(function*() {
  const org = yield* staffed()
  const clients = yield* SuiteClients
  yield* clients.put(org.owner, "suite-a", clientBody("suite-a"), BASE_URL)
  yield* clients.put(org.owner, "suite-b", clientBody("suite-b"), BASE_URL)
  yield* connectFully(org.member, "suite-a")
  yield* connectFully(org.member, "suite-b")
  return org
})

const credentialOf = Effect.fn("test.credentialOf")(function*(member: MemberContext, suite: Suite) {
  const repository = yield* SuiteRepository
  return yield* repository.findCredential({ organizationId: member.organization.id, suite, membershipId: member.membership.id })
})

const tokenRequests = (grant: string) => oauth.requests.filter((request) => request.path === "/token" && request.params["grant_type"] === grant)

layer(testLayer, { timeout: 120_000, excludeTestServices: true })(`capabilities on ${TestDatabase.kind}`, (it) => {
  it.effect("SuiteRepository: clients, credentials with compare-and-set, authorizations; another organization's rows are never touched", () =>
    Effect.gen(function*() {
      const repository = yield* SuiteRepository
      const sql = yield* SqlClient.SqlClient
      const a = yield* staffed()
      const b = yield* staffed()
      const organizationId = a.organization.id
      const row = {
        organizationId,
        suite: "suite-a" as const,
        clientId: "c1",
        clientSecretCiphertext: null,
        tenant: "contoso",
        features: ["mailDraft" as const],
        authorizationEndpoint: null,
        tokenEndpoint: null,
        apiBaseUrl: "https://graph.example/v1.0",
        createdAt: Db.at,
        updatedAt: Db.at,
        updatedByMembershipId: a.owner.membership.id
      }
      yield* repository.upsertClient(row)
      expect(Option.getOrThrow(yield* repository.findClient({ organizationId, suite: "suite-a" }))).toEqual(row)
      yield* repository.upsertClient({ ...row, clientId: "c2", features: ["mailDraft", "mailRead"], updatedAt: new Date(Db.at.getTime() + 1) })
      expect(Option.getOrThrow(yield* repository.lockClient({ organizationId, suite: "suite-a" }))).toMatchObject({
        clientId: "c2",
        features: ["mailDraft", "mailRead"],
        createdAt: Db.at
      })
      expect(yield* repository.findClient({ organizationId: b.organization.id, suite: "suite-a" })).toEqual(Option.none())
      expect(yield* repository.findClient({ organizationId, suite: "suite-b" })).toEqual(Option.none())

      const key = { organizationId, suite: "suite-a" as const, membershipId: a.member.membership.id }
      const tokens = { accessTokenCiphertext: "a1", refreshTokenCiphertext: "r1", tokenType: "Bearer", grantedScopes: ["Mail.Read"], tokenExpiresAt: Db.at }
      yield* repository.storeCredential(key, tokens, Db.at)
      expect(Option.getOrThrow(yield* repository.findCredential(key))).toEqual({
        ...tokens,
        credentialVersion: 1,
        credentialHealth: "ready",
        credentialHealthReason: null,
        connectedAt: Db.at
      })
      // A refresh that read version 1 writes; one that read it too loses; no new refresh token keeps the old one.
      expect(yield* repository.compareAndSet(key, 1, { ...tokens, accessTokenCiphertext: "a2", refreshTokenCiphertext: null }, Db.at)).toBe(true)
      expect(yield* repository.compareAndSet(key, 1, { ...tokens, accessTokenCiphertext: "a3" }, Db.at)).toBe(false)
      expect(Option.getOrThrow(yield* repository.findCredential(key))).toMatchObject({ accessTokenCiphertext: "a2", refreshTokenCiphertext: "r1", credentialVersion: 2 })
      expect(yield* repository.markReconnectRequired(key, 1, "refresh_rejected", Db.at)).toBe(false)
      expect(yield* repository.markReconnectRequired(key, 2, "refresh_rejected", Db.at)).toBe(true)
      expect(Option.getOrThrow(yield* repository.findCredential(key))).toMatchObject({ credentialHealth: "reconnect_required", credentialHealthReason: "refresh_rejected" })
      // Storing again is a new credential: the version moves on, the health is ready again.
      yield* repository.storeCredential(key, tokens, Db.at)
      expect(Option.getOrThrow(yield* repository.findCredential(key))).toMatchObject({ credentialVersion: 3, credentialHealth: "ready", credentialHealthReason: null })
      const otherKey = { ...key, organizationId: b.organization.id }
      expect(yield* repository.findCredential(otherKey)).toEqual(Option.none())
      expect(yield* repository.dropCredential(otherKey)).toBe(false)

      const authorization = {
        organizationId,
        id: "soa1",
        suite: "suite-a" as const,
        membershipId: a.member.membership.id,
        codeVerifierCiphertext: "v",
        redirectUri: CALLBACK,
        clientId: "c2",
        requestedScopes: ["offline_access", "Mail.Read"],
        createdAt: Db.at,
        expiresAt: new Date(Db.at.getTime() + 600_000),
        usedAt: null
      }
      yield* repository.insertAuthorization(authorization)
      yield* repository.insertAuthorization({ ...authorization, id: "soa-old", expiresAt: new Date(Db.at.getTime() - 1) })
      expect(Option.getOrThrow(yield* repository.findAuthorization({ organizationId, id: "soa1" }))).toEqual(authorization)
      expect(yield* repository.findAuthorization({ organizationId: b.organization.id, id: "soa1" })).toEqual(Option.none())
      yield* repository.deleteExpiredAuthorizations(key, Db.at)
      expect(yield* repository.findAuthorization({ organizationId, id: "soa-old" })).toEqual(Option.none())
      expect(yield* repository.spendAuthorization({ organizationId: b.organization.id, id: "soa1" }, Db.at)).toBe(false)
      expect(yield* repository.spendAuthorization({ organizationId, id: "soa1" }, Db.at)).toBe(true)
      expect(yield* repository.spendAuthorization({ organizationId, id: "soa1" }, Db.at)).toBe(false)
      expect(Option.getOrThrow(yield* repository.findAuthorization({ organizationId, id: "soa1" })).usedAt).toEqual(Db.at)
      // Once its organization is deleted, an authorization is not found.
      yield* sql`UPDATE organizations SET deleted_at = ${Db.at}, purge_after = ${Db.at}, deleted_by = 'usr_x' WHERE id = ${organizationId}`
      expect(yield* repository.findAuthorization({ organizationId, id: "soa1" })).toEqual(Option.none())
      yield* sql`UPDATE organizations SET deleted_at = NULL, purge_after = NULL, deleted_by = NULL WHERE id = ${organizationId}`

      // forgetMember counts what went; a client change drops every credential; deleting the client cascades.
      yield* repository.insertAuthorization({ ...authorization, id: "soa2" })
      expect(yield* repository.forgetMember(organizationId, a.member.membership.id)).toBe(3)
      expect(yield* repository.forgetMember(organizationId, a.member.membership.id)).toBe(0)
      yield* repository.storeCredential(key, tokens, Db.at)
      yield* repository.dropAllCredentials({ organizationId, suite: "suite-a" })
      expect(yield* repository.findCredential(key)).toEqual(Option.none())
      yield* repository.storeCredential(key, tokens, Db.at)
      expect(yield* repository.deleteClient({ organizationId: b.organization.id, suite: "suite-a" })).toBe(false)
      expect(yield* repository.deleteClient({ organizationId, suite: "suite-a" })).toBe(true)
      expect(yield* repository.findCredential(key)).toEqual(Option.none())
      expect(yield* repository.dropCredential(key)).toBe(false)
    }))

  it.effect("SuiteClients: owners configure them, the secret encrypted and never answered; refusals; a new client id drops connections", () =>
    Effect.gen(function*() {
      const clients = yield* SuiteClients
      const repository = yield* SuiteRepository
      const crypto = yield* Crypto.Crypto
      const org = yield* staffed()
      const organizationId = org.organization.id
      expect((yield* Effect.flip(clients.get(org.owner, "suite-a", BASE_URL))).message).toBe("No OAuth client is configured for suite-a.")
      const put = yield* clients.put(org.owner, "suite-a", clientBody("suite-a", { tenant: "contoso" }), BASE_URL)
      expect(put).toMatchObject({
        suite: "suite-a",
        clientId: "suite-client",
        hasClientSecret: true,
        tenant: "contoso",
        features: ["mailDraft", "mailRead"],
        redirectUri: CALLBACK,
        scopes: ["offline_access", "Mail.ReadWrite", "Mail.Read"],
        updatedByOrgMembershipId: org.owner.membership.id
      })
      expect(JSON.stringify(put)).not.toContain("suite-secret")
      expect(yield* clients.get(org.owner, "suite-a", BASE_URL)).toEqual(put)
      const stored = Option.getOrThrow(yield* repository.findClient({ organizationId, suite: "suite-a" }))
      expect(stored.clientSecretCiphertext).not.toContain("suite-secret")
      expect(yield* crypto.decrypt(stored.clientSecretCiphertext ?? "", bind(SecretColumns.suiteClientSecret, organizationId, "suite-a"))).toBe("suite-secret")
      // Without a secret in the request, the stored one stays.
      const { clientSecret: _, ...withoutSecret } = clientBody("suite-a")
      expect((yield* clients.put(org.owner, "suite-a", withoutSecret, BASE_URL)).hasClientSecret).toBe(true)

      expect((yield* Effect.flip(clients.get(org.member, "suite-a", BASE_URL)))._tag).toBe("Forbidden")
      const refusedFeature = yield* Effect.flip(clients.put(org.owner, "suite-b", clientBody("suite-b", { features: ["mailDraft"] }), BASE_URL))
      expect(refusedFeature).toMatchObject({ _tag: "InvalidRequest", details: [{ path: ["features", 0], message: "`mailDraft` is not a feature of suite-b (calendarWrite)" }] })
      const refusedTenant = yield* Effect.flip(clients.put(org.owner, "suite-b", clientBody("suite-b", { tenant: "x" }), BASE_URL))
      expect(refusedTenant).toMatchObject({ _tag: "InvalidRequest", details: [{ path: ["tenant"], message: "suite-b has no tenant" }] })

      // A change of features keeps the connections; a new client id drops them.
      const key = { organizationId, suite: "suite-a" as const, membershipId: org.member.membership.id }
      const tokens = { accessTokenCiphertext: "a", refreshTokenCiphertext: null, tokenType: "Bearer", grantedScopes: [], tokenExpiresAt: null }
      yield* repository.storeCredential(key, tokens, Db.at)
      yield* clients.put(org.owner, "suite-a", clientBody("suite-a", { features: ["mailRead"] }), BASE_URL)
      expect(Option.isSome(yield* repository.findCredential(key))).toBe(true)
      yield* clients.put(org.owner, "suite-a", clientBody("suite-a", { clientId: "another" }), BASE_URL)
      expect(yield* repository.findCredential(key)).toEqual(Option.none())

      expect(yield* clients.remove(org.owner, "suite-a")).toEqual({ ok: true })
      expect((yield* Effect.flip(clients.remove(org.owner, "suite-a"))).message).toBe("No OAuth client is configured for suite-a.")
    }))

  it.effect("SuiteConnections: connects end to end (PKCE S256, the features' scopes, tokens encrypted); status and disconnect", () =>
    Effect.gen(function*() {
      const connections = yield* SuiteConnections
      const clients = yield* SuiteClients
      const crypto = yield* Crypto.Crypto
      const org = yield* staffed()
      expect(yield* connections.status(org.member, "suite-a")).toMatchObject({ configured: false, status: "not_connected", connectedAt: null })
      const notConfigured = yield* Effect.flip(connections.connect(org.member, "suite-a", BASE_URL))
      expect(notConfigured).toMatchObject({
        error: "suite_not_configured",
        message: "The mail suite (suite-a) is not set up in this organization: an admin configures its OAuth client first (PUT /v1/capabilities/suite-a/client)."
      })
      yield* clients.put(org.owner, "suite-a", clientBody("suite-a"), BASE_URL)

      const started = yield* connections.connect(org.member, "suite-a", BASE_URL)
      expect(started.status).toBe("needs_auth")
      const url = new URL(started.authorizeUrl ?? "")
      expect(`${url.origin}${url.pathname}`).toBe(`${oauth.url}/authorize`)
      expect(url.searchParams.get("client_id")).toBe("suite-client")
      expect(url.searchParams.get("code_challenge_method")).toBe("S256")
      expect(url.searchParams.get("scope")).toBe("offline_access Mail.ReadWrite Mail.Read")
      expect(url.searchParams.get("redirect_uri")).toBe(CALLBACK)
      expect(url.searchParams.has("prompt")).toBe(false)

      const query = yield* authorizeInBrowser(started.authorizeUrl ?? "")
      expect(yield* connections.callback(query)).toEqual({ ok: true, suite: "suite-a", status: "connected", grantedFeatures: ["mailDraft", "mailRead"] })
      const stored = Option.getOrThrow(yield* credentialOf(org.member, "suite-a"))
      const token = yield* crypto.decrypt(stored.accessTokenCiphertext, bindTokens(SuiteTokens, org.organization.id, "suite-a", org.member.membership.id).access)
      expect(stored.accessTokenCiphertext).not.toContain(token)
      expect(oauth.verifyAccessToken(token)?.clientId).toBe("suite-client")
      const exchange = tokenRequests("authorization_code").at(-1)
      expect(exchange?.params).toMatchObject({ client_id: "suite-client", client_secret: "suite-secret" })
      // The same code again: the authorization was spent.
      const reused = yield* Effect.flip(connections.callback(query))
      expect(reused._tag).toBe("InvalidRequest")

      expect(yield* connections.status(org.member, "suite-a")).toMatchObject({
        configured: true,
        status: "connected",
        features: [{ feature: "mailDraft", enabled: true, granted: true }, { feature: "mailRead", enabled: true, granted: true }]
      })
      expect(yield* connections.connect(org.member, "suite-a", BASE_URL)).toMatchObject({ status: "connected", authorizeUrl: null })
      expect((yield* connections.status(org.owner, "suite-a")).status).toBe("not_connected")

      // suite-b asks Google-style for offline access and consent.
      yield* clients.put(org.owner, "suite-b", clientBody("suite-b"), BASE_URL)
      const google = new URL((yield* connections.connect(org.member, "suite-b", BASE_URL)).authorizeUrl ?? "")
      expect(google.searchParams.get("scope")).toBe(GOOGLE_EVENTS)
      expect(google.searchParams.get("access_type")).toBe("offline")
      expect(google.searchParams.get("prompt")).toBe("consent")

      expect(yield* connections.disconnect(org.member, "suite-a")).toEqual({ ok: true, removed: true })
      expect(yield* connections.disconnect(org.member, "suite-a")).toEqual({ ok: true, removed: false })
      expect((yield* connections.status(org.member, "suite-a")).status).toBe("not_connected")
    }))

  it.effect("Capabilities: a draft, a message read as text, a meeting link, through the fakes", () =>
    Effect.gen(function*() {
      const capabilities = yield* Capabilities
      const org = yield* connectedOrg()
      const drafted = yield* capabilities.createMailDraft(org.member, { to: ["grace@fabrikam.example"], subject: "Hello", body: "Hi Grace" })
      expect(drafted.ok).toBe(true)
      expect(drafted.draft).toMatchObject({ subject: "Hello", to: [{ address: "grace@fabrikam.example" }], body: "Hi Grace" })
      expect(mail.drafts().map((draft) => draft.id)).toContain(drafted.draft.id)

      const id = mail.addMessage({ subject: "Report", text: "Numbers", to: [{ address: "ada@contoso.example" }, { name: "Nobody" }] })
      const read = yield* capabilities.readMailMessage(org.member, id)
      expect(read.message).toMatchObject({ id, subject: "Report", bodyContentType: "text", bodyTruncated: false, to: [{ address: "ada@contoso.example" }] })
      expect(mail.requests.at(-1)?.headers["prefer"]).toBe("outlook.body-content-type=\"text\"")

      const eventId = calendar.addEvent({ summary: "Standup", start: "2030-01-01T09:00:00Z", end: "2030-01-01T09:15:00Z" })
      const linked = yield* capabilities.patchCalendarEvent(org.member, eventId, { createMeetLink: true })
      expect(linked).toMatchObject({ ok: true, eventId, summary: "Standup" })
      expect(linked.meetLink).toMatch(/^https:\/\/meet\.example\/[a-z]{3}-[a-z]{4}-[a-z]{3}$/)
      expect(calendar.requests.at(-1)?.path).toContain("conferenceDataVersion=1")
      const plain = yield* capabilities.patchCalendarEvent(org.member, eventId, { createMeetLink: false })
      expect(plain.meetLink).toBe(linked.meetLink)
      expect(calendar.requests.at(-1)?.method).toBe("GET")
    }))

  it.effect("needs_connection says which: not configured, feature disabled, not connected, a scope not granted, a 403", () =>
    Effect.gen(function*() {
      const capabilities = yield* Capabilities
      const clients = yield* SuiteClients
      const org = yield* staffed()
      const draft = { to: ["grace@fabrikam.example"], subject: "Hi" }
      expect(yield* Effect.flip(capabilities.createMailDraft(org.member, draft))).toMatchObject({
        _tag: "NeedsConnection",
        reason: "suite_not_configured",
        message: "The mail suite (suite-a) is not set up in this organization: an admin configures its OAuth client (PUT /v1/capabilities/suite-a/client)."
      })
      yield* clients.put(org.owner, "suite-a", clientBody("suite-a", { features: ["mailRead"] }), BASE_URL)
      expect(yield* Effect.flip(capabilities.createMailDraft(org.member, draft))).toMatchObject({
        reason: "feature_disabled",
        message: "An administrator has disabled mail drafts (`mailDraft`) for the mail suite (suite-a)."
      })
      expect(yield* Effect.flip(capabilities.readMailMessage(org.member, "AAMk"))).toMatchObject({
        reason: "not_connected",
        message: "You have not connected your account at the mail suite (suite-a): connect it with POST /v1/capabilities/suite-a/connection/connect."
      })
      yield* connectFully(org.member, "suite-a")
      yield* clients.put(org.owner, "suite-a", clientBody("suite-a"), BASE_URL)
      expect(yield* Effect.flip(capabilities.createMailDraft(org.member, draft))).toMatchObject({
        reason: "scope_missing",
        message: "Your connection to the mail suite (suite-a) is missing the Mail.ReadWrite permission mail drafts need: connect again with POST /v1/capabilities/suite-a/connection/connect to grant it."
      })
      mail.setMode({ _tag: "status", status: 403, body: "denied" }, { times: 1 })
      expect(yield* Effect.flip(capabilities.readMailMessage(org.member, "AAMk"))).toMatchObject({
        reason: "permission_denied",
        message: "The mail suite (suite-a) refused the request (403: denied): your connection lacks a permission it needs; connect again with POST /v1/capabilities/suite-a/connection/connect."
      })
    }))

  it.effect("a 401 renews the token once and retries; refused again, the connection is reconnect_required", () =>
    Effect.gen(function*() {
      const capabilities = yield* Capabilities
      const org = yield* connectedOrg()
      const id = mail.addMessage({ subject: "Renewed", text: "x" })
      const refreshes = tokenRequests("refresh_token").length
      oauth.expireAccessTokens()
      expect((yield* capabilities.readMailMessage(org.member, id)).message.subject).toBe("Renewed")
      expect(tokenRequests("refresh_token").length).toBe(refreshes + 1)
      mail.setMode({ _tag: "status", status: 401 }, { times: 2 })
      expect(yield* Effect.flip(capabilities.readMailMessage(org.member, id))).toMatchObject({
        reason: "reconnect_required",
        message: "The mail suite (suite-a) refused your token again after it was renewed: connect again with POST /v1/capabilities/suite-a/connection/connect."
      })
      expect(Option.getOrThrow(yield* credentialOf(org.member, "suite-a"))).toMatchObject({ credentialHealth: "reconnect_required", credentialHealthReason: "token_rejected" })
    }))

  it.effect("upstream failures: the status with an excerpt, retryable for 5xx; a hang times out; a change's outcome unknown", () =>
    Effect.gen(function*() {
      const capabilities = yield* Capabilities
      const org = yield* connectedOrg()
      const draft = { to: ["grace@fabrikam.example"], subject: "Hi" }
      mail.setMode({ _tag: "status", status: 503, body: "x".repeat(400) }, { times: 1 })
      expect(yield* Effect.flip(capabilities.readMailMessage(org.member, "AAMk"))).toMatchObject({
        _tag: "SuiteApiError",
        error: "suite_a_api_error",
        message: `Reading the message failed: 503 ${"x".repeat(300)}…`,
        retryable: true
      })
      mail.setMode({ _tag: "status", status: 400, body: "bad" }, { times: 1 })
      expect(yield* Effect.flip(capabilities.readMailMessage(org.member, "AAMk"))).toMatchObject({ message: "Reading the message failed: 400 bad", retryable: false })
      mail.setMode({ _tag: "hang" }, { times: 1 })
      expect(yield* Effect.flip(capabilities.createMailDraft(org.member, draft))).toMatchObject({
        message: "Creating the draft failed: the suite did not answer within 1s. It may have been done anyway: look before retrying.",
        retryable: false,
        outcome: "unknown"
      })
      mail.setMode({ _tag: "invalidJson" }, { times: 1 })
      expect(yield* Effect.flip(capabilities.readMailMessage(org.member, "AAMk"))).toMatchObject({
        message: "Reading the message failed: the suite answered 200 with something that is not a JSON object.",
        retryable: false
      })
      calendar.setMode({ _tag: "status", status: 200, body: "{}" }, { times: 1 })
      expect(yield* Effect.flip(capabilities.patchCalendarEvent(org.member, "evt", { createMeetLink: false }))).toMatchObject({
        error: "suite_b_api_error",
        message: "The calendar returned no event id."
      })
      expect(excerpt(new TextEncoder().encode("a\u0000\u0001b\n"))).toBe("a b")
      expect(Schema.is(MembershipId)(org.member.membership.id)).toBe(true)
    }))
})

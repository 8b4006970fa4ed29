/**
 * Capability passthroughs over HTTP, against real fakes on loopback: FakeOAuth as each suite's authorization server,
 * FakeSuites' Graph mail and Google Calendar APIs. The admin's client configuration, a member's connect flow end to
 * end (PKCE, signed state, callback), status and disconnect; the three capabilities and every bound; each way to
 * `needs_connection`; refresh before expiry, a 401 renewed once, `invalid_grant`, and the refresh race (Postgres);
 * upstream failures (429, 5xx, slow, hang, oversized, not JSON, a reset after the write) and what each answers.
 */
import {
  AuditEventPage,
  CalendarEventResult,
  CalendarSuiteApiErrorResponse,
  ConflictResponse,
  ForbiddenResponse,
  InvalidRequestResponse,
  MailDraftResult,
  MailMessageResult,
  MailSuiteApiErrorResponse,
  NeedsConnectionResponse,
  NotFoundResponse,
  Ok,
  type Suite,
  SuiteApiErrorResponse,
  SuiteCallbackResult,
  SuiteClient,
  SuiteConnection,
  SuiteConnectResult,
  SuiteDisconnectResult
} from "@orgplane/schema"
import * as FakeOAuth from "../../../../packages/testkit/src/FakeOAuth.js"
import * as FakeSuites from "../../../../packages/testkit/src/FakeSuites.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as Json from "../../../../packages/testkit/src/Json.js"
import { wireBody } from "../../../../packages/testkit/src/WireBody.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import * as NodeCrypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Crypto from "../../src/platform/Crypto.js"
import { bind, type Binding, bindTokens, SecretColumns, SuiteTokens } from "../../src/platform/SecretColumns.js"

const KEYS = `test:${NodeCrypto.randomBytes(32).toString("base64")}`
const crypto = await Effect.runPromise(Crypto.make({ passwordCost: 10, keys: Crypto.parseKeys(KEYS) }))
const decrypt = (text: string, binding: Binding) => Effect.runSync(crypto.decrypt(text, binding))

const CALLBACK_PATH = "/v1/capabilities/oauth/callback"
const GOOGLE_EVENTS = "https://www.googleapis.com/auth/calendar.events"
const SCOPES = ["offline_access", "Mail.ReadWrite", "Mail.Read", GOOGLE_EVENTS]

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
let oauth: FakeOAuth.FakeOAuth
let mail: FakeSuites.FakeMail
let calendar: FakeSuites.FakeCalendar
/** One organization per test that configures clients, so tests do not share connections. */
type Org = Awaited<ReturnType<typeof Http.staffed>>
let other: Org

beforeAll(async () => {
  server = await TestServer.startSharingDatabase({ outboundAllowPrivate: true, encryptionKeys: KEYS, capabilityTimeout: "1 second" })
  oauth = await FakeOAuth.start({ dynamicRegistration: false, accessTokenLifetimeSeconds: 3600, scopesSupported: SCOPES })
  mail = await FakeSuites.startMail({ verifyToken: oauth.verifyAccessToken })
  calendar = await FakeSuites.startCalendar({ verifyToken: oauth.verifyAccessToken })
  oauth.addClient({
    client_id: "suite-client",
    client_secret: "suite-secret",
    redirect_uris: [`${server.url}${CALLBACK_PATH}`],
    token_endpoint_auth_method: "client_secret_post"
  })
  other = await Http.staffed(server.url, "Other")
})
afterAll(async () => {
  await mail?.close()
  await calendar?.close()
  await oauth?.close()
  await server?.close()
})

const call = (method: string, path: string, options: Http.Options = {}) => Http.request(server.url, method, path, options)
/** An answer whose body is not read: its status only. */
const ok = Http.expectStatus

/** The body of an answer of `status`, checked to be what `schema` puts on the wire; throws naming `what` otherwise. */
const answered = <S extends Schema.Top>(schema: S) => (what: string, response: Http.RawResponse, status: number): S["Encoded"] =>
  wireBody(schema, what)(response, status)
const asClient = answered(SuiteClient)
const asOk = answered(Ok)
const asConnection = answered(SuiteConnection)
const asConnect = answered(SuiteConnectResult)
const asDisconnect = answered(SuiteDisconnectResult)
const asCallback = answered(SuiteCallbackResult)
const asDraft = answered(MailDraftResult)
const asMessage = answered(MailMessageResult)
const asEvent = answered(CalendarEventResult)
const asAuditPage = answered(AuditEventPage)
const asInvalid = answered(InvalidRequestResponse)
const asNotFound = answered(NotFoundResponse)
const asForbidden = answered(ForbiddenResponse)
const asConflict = answered(ConflictResponse)
const asNeedsConnection = answered(NeedsConnectionResponse)
const asSuiteError = answered(SuiteApiErrorResponse)
const asMailError = answered(MailSuiteApiErrorResponse)
const asCalendarError = answered(CalendarSuiteApiErrorResponse)

/** The authorization URL a `needs_auth` answer of connect carries; throws naming the answer when it has none. */
const authorizeUrlOf = (started: typeof SuiteConnectResult.Encoded): string => {
  if (started.authorizeUrl === null) throw new Error(`connect answered no authorizeUrl: ${JSON.stringify(started)}`)
  return started.authorizeUrl
}

let orgs = 0
const newOrg = () => Http.staffed(server.url, `Suite org ${++orgs}`)

const clientBody = (suite: Suite, overrides: Record<string, unknown> = {}) => ({
  clientId: "suite-client",
  clientSecret: "suite-secret",
  features: suite === "suite-a" ? ["mailDraft", "mailRead"] : ["calendarWrite"],
  authorizationEndpoint: `${oauth.url}/authorize`,
  tokenEndpoint: `${oauth.url}/token`,
  apiBaseUrl: suite === "suite-a" ? mail.url : calendar.url,
  ...overrides
})

const configure = async (org: Org, suite: Suite, overrides: Record<string, unknown> = {}) =>
  asClient("configuring", await call("PUT", `/v1/capabilities/${suite}/client`, { token: org.owner.token, body: clientBody(suite, overrides) }), 200)

const connect = (token: string, suite: Suite) => call("POST", `/v1/capabilities/${suite}/connection/connect`, { token })

/** Opens the authorization URL as a browser would (FakeOAuth auto-approves); the callback URL it redirects to. */
const authorize = async (authorizeUrl: string) => {
  const answer = await fetch(authorizeUrl, { redirect: "manual" })
  expect(answer.status).toBe(302)
  const location = new URL(answer.headers.get("location")!)
  expect(`${location.origin}${location.pathname}`).toBe(`${server.url}${CALLBACK_PATH}`)
  return location
}

const followCallback = (location: URL) => call("GET", `${location.pathname}${location.search}`)

/** connect → authorize → callback, for one member and suite. */
const connectFully = async (token: string, suite: Suite) => {
  const started = asConnect("connect", await connect(token, suite), 200)
  expect(started.status).toBe("needs_auth")
  return asCallback("callback", await followCallback(await authorize(authorizeUrlOf(started))), 200)
}

const credential = async (org: Org, suite: Suite, membershipId: string) => {
  const rows = await server.sql((sql) =>
    sql<{
      accessTokenCiphertext: string
      refreshTokenCiphertext: string | null
      credentialVersion: number
      credentialHealth: string
      credentialHealthReason: string | null
      grantedScopes: ReadonlyArray<string>
    }>`SELECT access_token_ciphertext, refresh_token_ciphertext, credential_version, credential_health, credential_health_reason, granted_scopes
       FROM suite_credentials WHERE organization_id = ${org.organizationId} AND suite = ${suite} AND membership_id = ${membershipId}`
  )
  return rows[0] === undefined ? undefined : { ...rows[0], at: bindTokens(SuiteTokens, org.organizationId, suite, membershipId) }
}

const expireSoon = (org: Org, suite: Suite) =>
  server.sql((sql) =>
    sql`UPDATE suite_credentials SET token_expires_at = now() + interval '10 seconds'
        WHERE organization_id = ${org.organizationId} AND suite = ${suite}`
  )

const tokenRequests = (grant: string) => oauth.requests.filter((request) => request.path === "/token" && request.params.grant_type === grant)

const draft = (token: string, body: unknown) => call("POST", "/v1/capabilities/suite-a/mail-drafts", { token, body })
const meet = (token: string, eventId: string, createMeetLink = true) =>
  call("PATCH", `/v1/capabilities/suite-b/calendar-event/${encodeURIComponent(eventId)}`, { token, body: { createMeetLink } })

/** An organization with both suites configured and its member connected to both. */
const connectedOrg = async () => {
  const org = await newOrg()
  await configure(org, "suite-a")
  await configure(org, "suite-b")
  await connectFully(org.member.token, "suite-a")
  await connectFully(org.member.token, "suite-b")
  return org
}

describe("the suites' OAuth clients", () => {
  it("owners and admins configure them; the secret is encrypted and never answered; members are refused", async () => {
    const org = await newOrg()
    expect(asNotFound("none yet", await call("GET", "/v1/capabilities/suite-a/client", { token: org.admin.token }), 404).error).toBe("suite_client_not_found")
    const client = await configure(org, "suite-a", { tenant: "contoso.example" })
    expect(client).toMatchObject({
      suite: "suite-a",
      clientId: "suite-client",
      hasClientSecret: true,
      tenant: "contoso.example",
      features: ["mailDraft", "mailRead"],
      tokenEndpoint: `${oauth.url}/token`,
      apiBaseUrl: mail.url,
      redirectUri: `${server.url}${CALLBACK_PATH}`,
      scopes: ["offline_access", "Mail.ReadWrite", "Mail.Read"],
      updatedByOrgMembershipId: org.owner.membership.id
    })
    expect(JSON.stringify(client)).not.toContain("suite-secret")
    const rows = await server.sql((sql) =>
      sql<{ clientSecretCiphertext: string }>`SELECT client_secret_ciphertext FROM suite_clients WHERE organization_id = ${org.organizationId}`
    )
    expect(rows[0]!.clientSecretCiphertext).not.toContain("suite-secret")
    expect(decrypt(rows[0]!.clientSecretCiphertext, bind(SecretColumns.suiteClientSecret, org.organizationId, "suite-a"))).toBe("suite-secret")

    // Omitting the secret keeps it; null removes it.
    const { clientSecret: _, ...withoutSecret } = clientBody("suite-a")
    expect(asClient("keep", await call("PUT", "/v1/capabilities/suite-a/client", { token: org.admin.token, body: withoutSecret }), 200).hasClientSecret).toBe(true)
    expect(
      asClient("remove", await call("PUT", "/v1/capabilities/suite-a/client", { token: org.admin.token, body: { ...withoutSecret, clientSecret: null } }), 200)
        .hasClientSecret
    ).toBe(false)

    // Defaults: suite-a's endpoints follow the tenant.
    const defaults = asClient("defaults", await call("PUT", "/v1/capabilities/suite-a/client", {
      token: org.owner.token,
      body: { clientId: "x", features: ["mailRead"] }
    }), 200)
    expect(defaults).toMatchObject({
      tenant: null,
      authorizationEndpoint: "https://login.microsoftonline.com/organizations/oauth2/v2.0/authorize",
      tokenEndpoint: "https://login.microsoftonline.com/organizations/oauth2/v2.0/token",
      apiBaseUrl: "https://graph.microsoft.com/v1.0",
      scopes: ["offline_access", "Mail.Read"]
    })

    expect(asForbidden("member", await call("PUT", "/v1/capabilities/suite-b/client", { token: org.member.token, body: clientBody("suite-b") }), 403).reason)
      .toBe("insufficient_role")
    expect(asForbidden("member reads", await call("GET", "/v1/capabilities/suite-a/client", { token: org.member.token }), 403).reason).toBe("insufficient_role")
    expect(asNotFound("other org", await call("GET", "/v1/capabilities/suite-a/client", { token: other.owner.token }), 404).error).toBe("suite_client_not_found")
    expect(asOk("delete", await call("DELETE", "/v1/capabilities/suite-a/client", { token: org.owner.token }), 200)).toEqual({ ok: true })
    expect(asNotFound("again", await call("DELETE", "/v1/capabilities/suite-a/client", { token: org.owner.token }), 404).error).toBe("suite_client_not_found")
  })

  it("refuses features of the other suite, repeats, a tenant on suite-b, unknown suites and members", async () => {
    const org = await newOrg()
    const put = (suite: string, body: unknown) => call("PUT", `/v1/capabilities/${suite}/client`, { token: org.owner.token, body })
    expect(asInvalid("other suite's feature", await put("suite-b", clientBody("suite-b", { features: ["mailDraft"] })), 400).details[0].path).toEqual(["features", 0])
    expect(asInvalid("repeat", await put("suite-a", clientBody("suite-a", { features: ["mailRead", "mailRead"] })), 400).details[0].path).toEqual(["features", 1])
    expect(asInvalid("tenant", await put("suite-b", clientBody("suite-b", { tenant: "contoso.example" })), 400).details[0].path).toEqual(["tenant"])
    expect(asInvalid("unknown suite", await put("suite-c", clientBody("suite-a")), 400).error).toBe("invalid_request")
    expect(asInvalid("unknown member", await put("suite-a", { ...clientBody("suite-a"), scope: "x" }), 400).error).toBe("invalid_request")
    expect(asInvalid("bad url", await put("suite-a", clientBody("suite-a", { tokenEndpoint: "ftp://x" })), 400).error).toBe("invalid_request")
    expect(asNotFound("nothing written", await call("GET", "/v1/capabilities/suite-a/client", { token: org.owner.token }), 404).error)
      .toBe("suite_client_not_found")
  })

  it("a new client id drops every member's connection; a change of features does not", async () => {
    const org = await newOrg()
    await configure(org, "suite-a")
    await connectFully(org.member.token, "suite-a")
    await configure(org, "suite-a", { features: ["mailRead"] })
    expect(await credential(org, "suite-a", org.member.membership.id)).toBeDefined()
    await configure(org, "suite-a", { clientId: "another-client" })
    expect(await credential(org, "suite-a", org.member.membership.id)).toBeUndefined()
  })
})

describe("a member's connection", () => {
  it("connects end to end: PKCE S256, the enabled features' scopes, tokens stored encrypted; status and disconnect", async () => {
    const org = await newOrg()
    const before = asConnection("status", await call("GET", "/v1/capabilities/suite-a/connection", { token: org.member.token }), 200)
    expect(before).toMatchObject({ configured: false, status: "not_connected", connectedAt: null })
    expect(asConflict("not configured", await connect(org.member.token, "suite-a"), 409).error).toBe("suite_not_configured")
    await configure(org, "suite-a")

    const started = asConnect("connect", await connect(org.member.token, "suite-a"), 200)
    expect(started.status).toBe("needs_auth")
    const url = new URL(authorizeUrlOf(started))
    expect(`${url.origin}${url.pathname}`).toBe(`${oauth.url}/authorize`)
    expect(url.searchParams.get("client_id")).toBe("suite-client")
    expect(url.searchParams.get("code_challenge_method")).toBe("S256")
    expect(url.searchParams.get("scope")).toBe("offline_access Mail.ReadWrite Mail.Read")
    expect(url.searchParams.get("redirect_uri")).toBe(`${server.url}${CALLBACK_PATH}`)
    expect(url.searchParams.has("prompt")).toBe(false)
    expect(url.searchParams.has("resource")).toBe(false)

    const callback = asCallback("callback", await followCallback(await authorize(authorizeUrlOf(started))), 200)
    expect(callback).toEqual({ ok: true, suite: "suite-a", status: "connected", grantedFeatures: ["mailDraft", "mailRead"] })
    const stored = (await credential(org, "suite-a", org.member.membership.id))!
    const token = decrypt(stored.accessTokenCiphertext!, stored.at.access)
    expect(stored.accessTokenCiphertext).not.toContain(token)
    expect(oauth.verifyAccessToken(token)?.clientId).toBe("suite-client")
    // The exchange authenticated the client with its secret and proved the verifier.
    const exchange = tokenRequests("authorization_code").at(-1)!
    expect(exchange.params).toMatchObject({ client_id: "suite-client", client_secret: "suite-secret" })
    expect(exchange.params.code_verifier).toMatch(/^[A-Za-z0-9._~-]{43,128}$/)

    const status = asConnection("status", await call("GET", "/v1/capabilities/suite-a/connection", { token: org.member.token }), 200)
    expect(status).toMatchObject({
      configured: true,
      status: "connected",
      features: [{ feature: "mailDraft", enabled: true, granted: true }, { feature: "mailRead", enabled: true, granted: true }]
    })
    expect(JSON.stringify(status)).not.toContain(token)
    // Connected already: no new authorization.
    expect(asConnect("again", await connect(org.member.token, "suite-a"), 200)).toMatchObject({ status: "connected", authorizeUrl: null })
    // Another member of the organization has no connection.
    expect(asConnection("admin's", await call("GET", "/v1/capabilities/suite-a/connection", { token: org.admin.token }), 200).status).toBe("not_connected")

    expect(asDisconnect("disconnect", await call("DELETE", "/v1/capabilities/suite-a/connection", { token: org.member.token }), 200)).toEqual({ ok: true, removed: true })
    expect(asDisconnect("again", await call("DELETE", "/v1/capabilities/suite-a/connection", { token: org.member.token }), 200)).toEqual({ ok: true, removed: false })
    expect(asConnection("status", await call("GET", "/v1/capabilities/suite-a/connection", { token: org.member.token }), 200).status).toBe("not_connected")
  })

  it("suite-b asks Google-style for offline access and consent", async () => {
    const org = await newOrg()
    await configure(org, "suite-b")
    const url = new URL(authorizeUrlOf(asConnect("connect", await connect(org.member.token, "suite-b"), 200)))
    expect(url.searchParams.get("scope")).toBe(GOOGLE_EVENTS)
    expect(url.searchParams.get("access_type")).toBe("offline")
    expect(url.searchParams.get("prompt")).toBe("consent")
  })

  it("the callback refuses a tampered, reused or expired state, and a denial", async () => {
    const org = await newOrg()
    await configure(org, "suite-a")
    const started = asConnect("connect", await connect(org.member.token, "suite-a"), 200)
    const location = await authorize(authorizeUrlOf(started))
    const state = location.searchParams.get("state")!
    const tampered = new URL(location)
    // Change a character in the middle of the signature: its last base64url character also holds padding bits,
    // which a change may leave out of the decoded bytes.
    const at = state.length - 10
    tampered.searchParams.set("state", `${state.slice(0, at)}${state[at] === "A" ? "B" : "A"}${state.slice(at + 1)}`)
    expect(asInvalid("tampered", await followCallback(tampered), 400).details[0].code).toBe("oauth_state_invalid")
    ok("first", await followCallback(location), 200)
    expect(asInvalid("reused", await followCallback(location), 400).details[0].code).toBe("oauth_authorization_used")

    // An MCP connection's state is not a suite's: the keys differ.
    const denied = asConnect("connect", await call("POST", "/v1/capabilities/suite-a/connection/connect", { token: org.admin.token }), 200)
    const deniedState = new URL(authorizeUrlOf(denied)).searchParams.get("state")!
    expect(asInvalid("mcp callback", await call("GET", `/v1/mcp-connections/oauth/callback?state=${encodeURIComponent(deniedState)}&code=x`), 400).details[0].code)
      .toBe("oauth_state_invalid")
    expect(asInvalid("denied", await call("GET", `${CALLBACK_PATH}?state=${encodeURIComponent(deniedState)}&error=access_denied`), 400).details[0].code)
      .toBe("oauth_access_denied")
    expect(await credential(org, "suite-a", org.admin.membership.id)).toBeUndefined()
  })
})

describe("mail drafts (suite-a)", () => {
  it("creates a draft, never sent, with the spec's mail message members", async () => {
    const org = await connectedOrg()
    const body = { to: ["ada@contoso.example", "bob@contoso.example"], cc: ["cy@contoso.example"], subject: "  Quarterly plan ", body: "Hello\nthere" }
    const answer = asDraft("draft", await draft(org.member.token, body), 200)
    expect(answer.ok).toBe(true)
    expect(answer.draft).toMatchObject({
      subject: "Quarterly plan",
      body: "Hello\nthere",
      bodyContentType: "text",
      bodyTruncated: false,
      to: [{ name: "ada@contoso.example", address: "ada@contoso.example" }, { name: "bob@contoso.example", address: "bob@contoso.example" }],
      cc: [{ name: "cy@contoso.example", address: "cy@contoso.example" }],
      hasAttachments: false
    })
    expect(Object.keys(answer.draft).sort()).toEqual(
      ["body", "bodyContentType", "bodyTruncated", "cc", "conversationId", "from", "hasAttachments", "id", "preview", "receivedDateTime", "subject", "to", "webLink"]
    )
    const sent = mail.requests.filter((request) => request.method === "POST").at(-1)!
    expect(sent.path).toBe("/v1.0/me/messages")
    expect(JSON.parse(sent.body)).toEqual({
      subject: "Quarterly plan",
      body: { contentType: "Text", content: "Hello\nthere" },
      toRecipients: [{ emailAddress: { address: "ada@contoso.example" } }, { emailAddress: { address: "bob@contoso.example" } }],
      ccRecipients: [{ emailAddress: { address: "cy@contoso.example" } }],
      bccRecipients: []
    })
    expect(mail.drafts().some((stored) => stored.id === answer.draft.id)).toBe(true)
    // The draft lives in the suite: the audit log names it by the suite's id.
    const [logged] = asAuditPage("events", await call("GET", `/v1/audit/events?action=capability.mail_draft.create&targetId=${encodeURIComponent(answer.draft.id)}`, { token: org.owner.token }), 200).items
    expect(logged.targets).toEqual([{ type: "mail_message", id: answer.draft.id }])
  })

  it("holds the spec's bounds and address rule before anything is sent", async () => {
    const org = await connectedOrg()
    const posts = () => mail.requests.filter((request) => request.method === "POST").length
    const before = posts()
    const address = (index: number) => `p${index}@contoso.example`
    const cases: ReadonlyArray<[string, unknown]> = [
      ["no recipient", { to: [], subject: "s" }],
      ["51 recipients", { to: Array.from({ length: 51 }, (_, index) => address(index)), subject: "s" }],
      ["51 cc", { to: ["a@contoso.example"], cc: Array.from({ length: 51 }, (_, index) => address(index)), subject: "s" }],
      ["51 bcc", { to: ["a@contoso.example"], bcc: Array.from({ length: 51 }, (_, index) => address(index)), subject: "s" }],
      ["empty subject", { to: ["a@contoso.example"], subject: "   " }],
      ["999-character subject", { to: ["a@contoso.example"], subject: "x".repeat(999) }],
      ["body over 200000", { to: ["a@contoso.example"], subject: "s", body: "x".repeat(200_001) }],
      ["leading dot", { to: [".ada@contoso.example"], subject: "s" }],
      ["consecutive dots", { to: ["ada..b@contoso.example"], subject: "s" }],
      ["one-letter final label", { to: ["ada@contoso.e"], subject: "s" }],
      ["digit final label", { to: ["ada@contoso.c0m"], subject: "s" }],
      ["underscore in domain", { to: ["ada@con_toso.example"], subject: "s" }],
      ["wrong type", { to: "ada@contoso.example", subject: "s" }]
    ]
    for (const [what, body] of cases) expect(asInvalid(what, await draft(org.member.token, body), 400).error).toBe("invalid_request")
    expect(posts()).toBe(before)
    // The largest allowed all pass.
    const largest = {
      to: Array.from({ length: 50 }, (_, index) => address(index)),
      cc: Array.from({ length: 50 }, (_, index) => address(index + 50)),
      bcc: Array.from({ length: 50 }, (_, index) => address(index + 100)),
      subject: "x".repeat(998),
      body: "y".repeat(200_000)
    }
    expect(asDraft("largest", await draft(org.member.token, largest), 200).draft.subject).toHaveLength(998)
    // A body of 200000 control characters is 1.2 MB as JSON: still under the endpoint's limit.
    const escaped = asDraft("escaped body", await draft(org.member.token, { to: ["a@contoso.example"], subject: "s", body: "\u0001".repeat(200_000) }), 200)
    expect(escaped.draft.body).toHaveLength(200_000)
  })
})

describe("reading a message (suite-a)", () => {
  it("asks for the text body with the reference's select list, maps it and drops recipients without an address", async () => {
    const org = await connectedOrg()
    const id = mail.addMessage({
      subject: "Invoice",
      text: "Please pay.",
      from: { name: "Grace", address: "grace@fabrikam.example" },
      to: [{ name: "Ada", address: "ada@contoso.example" }, { name: "Nobody" }],
      hasAttachments: true,
      receivedDateTime: "2026-11-20T10:00:00Z",
      conversationId: "conv-1"
    })
    const answer = asMessage("read", await call("GET", `/v1/capabilities/suite-a/mail-message/${encodeURIComponent(id)}`, { token: org.member.token }), 200)
    expect(answer).toEqual({
      ok: true,
      message: expect.objectContaining({
        id,
        conversationId: "conv-1",
        subject: "Invoice",
        receivedDateTime: "2026-11-20T10:00:00Z",
        preview: "Please pay.",
        from: { name: "Grace", address: "grace@fabrikam.example" },
        to: [{ name: "Ada", address: "ada@contoso.example" }],
        cc: [],
        hasAttachments: true,
        body: "Please pay.",
        bodyContentType: "text",
        bodyTruncated: false
      })
    })
    const sent = mail.requests.filter((request) => request.method === "GET").at(-1)!
    expect(sent.headers.prefer).toBe("outlook.body-content-type=\"text\"")
    expect(decodeURIComponent(sent.path)).toContain(
      "$select=id,conversationId,subject,receivedDateTime,bodyPreview,body,from,toRecipients,ccRecipients,webLink,hasAttachments"
    )
  })

  it("cuts a body over 200000 characters and says so", async () => {
    const org = await connectedOrg()
    const id = mail.addMessage({ subject: "Long", text: "z".repeat(250_000) })
    const { message } = asMessage("read", await call("GET", `/v1/capabilities/suite-a/mail-message/${encodeURIComponent(id)}`, { token: org.member.token }), 200)
    expect(message.body).toHaveLength(200_000)
    expect(message.bodyTruncated).toBe(true)
  })

  it("validates message ids as the reference does, and answers a missing message as the suite's 404", async () => {
    const org = await connectedOrg()
    const read = (id: string) => call("GET", `/v1/capabilities/suite-a/mail-message/${id}`, { token: org.member.token })
    for (const id of ["a%20b", "a%5Cb", "a%3Fb", "a%23b", "x".repeat(513), "a%2Fb"]) {
      expect(asInvalid(`id ${id.slice(0, 20)}`, await read(id), 400).error).toBe("invalid_request")
    }
    const missing = asMailError("missing", await read("AAMkADmissing="), 502)
    expect(missing.error).toBe("suite_a_api_error")
    expect(missing.message).toMatch(/^Reading the message failed: 404 .*ErrorItemNotFound/)
    expect(missing.outcome).toBeUndefined()
  })
})

describe("meeting links (suite-b)", () => {
  it("patches the existing event with conferenceDataVersion=1 and answers the video link, not the phone one", async () => {
    const org = await connectedOrg()
    const eventId = calendar.addEvent({ summary: "Design review", start: "2026-11-24T10:00:00Z", end: "2026-11-24T11:00:00Z" })
    const answer = asEvent("meet", await meet(org.member.token, eventId), 200)
    expect(answer).toMatchObject({ ok: true, eventId, summary: "Design review", start: "2026-11-24T10:00:00Z", end: "2026-11-24T11:00:00Z" })
    expect(answer.meetLink).toMatch(/^https:\/\/meet\.example\//)
    expect(answer.htmlLink).not.toBe("")
    const patch = calendar.requests.filter((request) => request.method === "PATCH").at(-1)!
    expect(patch.path).toBe(`/calendar/v3/calendars/primary/events/${encodeURIComponent(eventId)}?conferenceDataVersion=1`)
    const sent: unknown = JSON.parse(patch.body)
    expect(Object.keys(Json.object(sent, "the event's PATCH body"))).toEqual(["conferenceData"])
    expect(Json.at(sent, "conferenceData", "createRequest")).toMatchObject({ conferenceSolutionKey: { type: "hangoutsMeet" } })
    expect(calendar.events().length).toBeGreaterThan(0)
    expect(calendar.patches(eventId)).toBe(1)
    // false changes nothing.
    expect(asEvent("false", await meet(org.member.token, eventId, false), 200).meetLink).toBe(answer.meetLink)
    expect(calendar.patches(eventId)).toBe(1)
  })

  it("all-day events answer their dates; an event id is 1 to 512 characters", async () => {
    const org = await connectedOrg()
    const eventId = calendar.addEvent({ summary: "Offsite", start: "2026-12-01", end: "2026-12-02", allDay: true })
    expect(asEvent("meet", await meet(org.member.token, eventId), 200)).toMatchObject({ start: "2026-12-01", end: "2026-12-02" })
    expect(asInvalid("long id", await meet(org.member.token, "e".repeat(513)), 400).error).toBe("invalid_request")
    expect(asInvalid("missing body member", await call("PATCH", `/v1/capabilities/suite-b/calendar-event/${eventId}`, { token: org.member.token, body: {} }), 400).error)
      .toBe("invalid_request")
  })
})

describe("needs_connection", () => {
  it("says which: not configured, feature disabled, not connected, a scope not granted", async () => {
    const org = await newOrg()
    const attempt = async () => asNeedsConnection("draft", await draft(org.member.token, { to: ["a@contoso.example"], subject: "s" }), 409)
    expect(await attempt()).toMatchObject({ suite: "suite-a", reason: "suite_not_configured", message: expect.stringMatching(/not set up in this organization/) })
    await configure(org, "suite-a", { features: ["mailRead"] })
    expect(await attempt()).toMatchObject({ reason: "feature_disabled", message: expect.stringMatching(/administrator has disabled mail drafts/) })
    await configure(org, "suite-a")
    expect(await attempt()).toMatchObject({ reason: "not_connected", message: expect.stringMatching(/have not connected your account at the mail suite/) })

    // The member grants only Mail.Read.
    const manual = await FakeOAuth.start({ dynamicRegistration: false, autoApprove: false, scopesSupported: SCOPES })
    try {
      manual.addClient({ client_id: "suite-client", client_secret: "suite-secret", redirect_uris: [`${server.url}${CALLBACK_PATH}`], token_endpoint_auth_method: "client_secret_post" })
      await configure(org, "suite-a", { authorizationEndpoint: `${manual.url}/authorize`, tokenEndpoint: `${manual.url}/token` })
      const started = asConnect("connect", await connect(org.member.token, "suite-a"), 200)
      const pending = Json.string(Json.at(await (await fetch(authorizeUrlOf(started))).json(), "pending"), "the authorization's pending id")
      const redirect = new URL(manual.approve(pending, { scopes: ["offline_access", "Mail.Read"] }))
      expect(asCallback("callback", await followCallback(redirect), 200).grantedFeatures).toEqual(["mailRead"])
      const refused = await attempt()
      expect(refused).toEqual({
        error: "needs_connection",
        suite: "suite-a",
        reason: "scope_missing",
        message: expect.stringMatching(/missing the Mail\.ReadWrite permission mail drafts need/)
      })
      expect(asConnection("status", await call("GET", "/v1/capabilities/suite-a/connection", { token: org.member.token }), 200).features).toEqual([
        { feature: "mailDraft", enabled: true, granted: false },
        { feature: "mailRead", enabled: true, granted: true }
      ])
      // Connect answers needs_auth again to grant what is missing.
      expect(asConnect("reconnect", await connect(org.member.token, "suite-a"), 200).status).toBe("needs_auth")
    } finally {
      await manual.close()
    }
  })

  it("a 403 from the suite is a permission the connection lacks", async () => {
    const org = await connectedOrg()
    mail.setMode({ _tag: "status", status: 403 }, { times: 1 })
    const answer = asNeedsConnection("draft", await draft(org.member.token, { to: ["a@contoso.example"], subject: "s" }), 409)
    expect(answer).toMatchObject({ error: "needs_connection", suite: "suite-a", reason: "permission_denied" })
    expect(answer.message).toMatch(/403.*lacks a permission/)
  })
})

describe("tokens", () => {
  it("refreshes a token about to expire before the call, keeping the connection", async () => {
    const org = await connectedOrg()
    const before = (await credential(org, "suite-a", org.member.membership.id))!
    await expireSoon(org, "suite-a")
    const refreshes = tokenRequests("refresh_token").length
    ok("draft", await draft(org.member.token, { to: ["a@contoso.example"], subject: "s" }), 200)
    expect(tokenRequests("refresh_token").length).toBe(refreshes + 1)
    const after = (await credential(org, "suite-a", org.member.membership.id))!
    expect(after.credentialVersion).toBe(before.credentialVersion + 1)
    expect(decrypt(after.accessTokenCiphertext!, after.at.access)).not.toBe(decrypt(before.accessTokenCiphertext!, before.at.access))
  })

  it("a 401 renews the token once and retries; a refused refresh marks the connection reconnect_required", async () => {
    const org = await connectedOrg()
    const eventId = calendar.addEvent({ summary: "Sync", start: "2026-11-25T10:00:00Z", end: "2026-11-25T10:30:00Z" })
    oauth.expireAccessTokens()
    expect(asEvent("meet after renewal", await meet(org.member.token, eventId), 200).meetLink).not.toBeNull()
    expect(calendar.requests.filter((request) => request.status === 401).length).toBeGreaterThan(0)

    // The refresh token is spent behind the server's back: the next refresh is refused (invalid_grant).
    const stored = (await credential(org, "suite-b", org.member.membership.id))!
    const refreshToken = decrypt(stored.refreshTokenCiphertext!, stored.at.refresh)
    ok("spend", await Http.request(oauth.url, "POST", "/token", {
      headers: { "content-type": "application/x-www-form-urlencoded" },
      rawBody: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: "suite-client", client_secret: "suite-secret" }).toString()
    }), 200)
    oauth.expireAccessTokens()
    const refused = asNeedsConnection("meet", await meet(org.member.token, eventId), 409)
    expect(refused).toMatchObject({ error: "needs_connection", suite: "suite-b", reason: "reconnect_required" })
    expect((await credential(org, "suite-b", org.member.membership.id))!.credentialHealth).toBe("reconnect_required")
    expect(asConnection("status", await call("GET", "/v1/capabilities/suite-b/connection", { token: org.member.token }), 200).status).toBe("reconnect_required")
    // Connecting again makes it usable.
    await connectFully(org.member.token, "suite-b")
    expect(asEvent("meet", await meet(org.member.token, eventId), 200).ok).toBe(true)
  })

  it("a token endpoint that fails: the current token while it lasts, then a retryable 502; a failed code exchange is a 502 too", async () => {
    const org = await connectedOrg()
    await expireSoon(org, "suite-a")
    oauth.setTokenMode({ _tag: "status", status: 500 })
    try {
      ok("still valid", await draft(org.member.token, { to: ["a@contoso.example"], subject: "s" }), 200)
      await server.sql((sql) =>
        sql`UPDATE suite_credentials SET token_expires_at = now() - interval '1 second' WHERE organization_id = ${org.organizationId} AND suite = 'suite-a'`
      )
      const failed = asMailError("expired", await draft(org.member.token, { to: ["a@contoso.example"], subject: "s" }), 502)
      expect(failed).toMatchObject({ error: "suite_a_api_error", retryable: true })
      expect(failed.message).toMatch(/token endpoint answered server_error/)
      // The member's connection is not blamed: it refreshes once the endpoint is back.
      expect((await credential(org, "suite-a", org.member.membership.id))!.credentialHealth).toBe("ready")

      const started = asConnect("connect", await connect(org.admin.token, "suite-a"), 200)
      const exchange = asSuiteError("callback", await followCallback(await authorize(authorizeUrlOf(started))), 502)
      expect(exchange).toMatchObject({ error: "suite_a_api_error", retryable: true })
      expect(await credential(org, "suite-a", org.admin.membership.id)).toBeUndefined()
    } finally {
      oauth.setTokenMode({ _tag: "ok" })
    }
    ok("back", await draft(org.member.token, { to: ["a@contoso.example"], subject: "s" }), 200)
  })

  it.runIf(TestDatabase.onPostgres)("on Postgres: two concurrent refreshes of one member both act, and the newest refresh token is kept", async () => {
    const org = await connectedOrg()
    const before = (await credential(org, "suite-a", org.member.membership.id))!
    await expireSoon(org, "suite-a")
    oauth.setTokenMode({ _tag: "slow", ms: 300 })
    const refreshes = tokenRequests("refresh_token").length
    const [first, second] = await Promise.all([
      draft(org.member.token, { to: ["a@contoso.example"], subject: "one" }),
      draft(org.member.token, { to: ["a@contoso.example"], subject: "two" })
    ])
    oauth.setTokenMode({ _tag: "ok" })
    ok("first", first, 200)
    ok("second", second, 200)
    const raced = tokenRequests("refresh_token").slice(refreshes)
    expect(raced.length).toBe(2)
    expect(raced.map((request) => request.status).sort()).toEqual([200, 400])
    const after = (await credential(org, "suite-a", org.member.membership.id))!
    expect(after).toMatchObject({ credentialHealth: "ready", credentialVersion: before.credentialVersion + 1 })
    // The stored refresh token is the newest: it refreshes again.
    await expireSoon(org, "suite-a")
    ok("third", await draft(org.member.token, { to: ["a@contoso.example"], subject: "three" }), 200)
    expect(tokenRequests("refresh_token").at(-1)?.status).toBe(200)
  })
})

describe("upstream failures", () => {
  const attempt = (org: Org) => draft(org.member.token, { to: ["a@contoso.example"], subject: "s" })

  it("429 and 5xx carry the status and a bounded excerpt, retryable", async () => {
    const org = await connectedOrg()
    mail.setMode({ _tag: "status", status: 429, headers: { "retry-after": "3" } }, { times: 1 })
    const limited = asMailError("429", await attempt(org), 502)
    expect(limited).toMatchObject({ error: "suite_a_api_error", retryable: true })
    expect(limited.message).toMatch(/^Creating the draft failed: 429 /)
    expect(limited.outcome).toBeUndefined()
    mail.setMode({ _tag: "status", status: 500, body: "e".repeat(5000) }, { times: 1 })
    const failed = asMailError("500", await attempt(org), 502)
    expect(failed.message.length).toBeLessThan(400)
    calendar.setMode({ _tag: "status", status: 503 }, { times: 1 })
    expect(asCalendarError("calendar 503", await meet(org.member.token, calendar.addEvent({ summary: "x", start: "2026-11-26T10:00:00Z", end: "2026-11-26T11:00:00Z" })), 502))
      .toMatchObject({ error: "suite_b_api_error", retryable: true })
  })

  it("a hanging suite ends at the timeout; a draft whose answer never came has an unknown outcome; a read does not", async () => {
    const org = await connectedOrg()
    mail.setMode({ _tag: "hang" }, { times: 1 })
    const hung = asMailError("hang", await attempt(org), 502)
    expect(hung).toMatchObject({ error: "suite_a_api_error", outcome: "unknown", retryable: false })
    const id = mail.addMessage({ subject: "x", text: "y" })
    mail.setMode({ _tag: "slow", ms: 3000 }, { times: 1 })
    const slow = asMailError("slow read", await call("GET", `/v1/capabilities/suite-a/mail-message/${encodeURIComponent(id)}`, { token: org.member.token }), 502)
    expect(slow).toMatchObject({ error: "suite_a_api_error", retryable: true })
    expect(slow.outcome).toBeUndefined()
  })

  it("a reset after the write, an oversized answer and one that is not JSON: outcome unknown on a change", async () => {
    const org = await connectedOrg()
    const eventId = calendar.addEvent({ summary: "Reset", start: "2026-11-27T10:00:00Z", end: "2026-11-27T11:00:00Z" })
    calendar.setMode({ _tag: "resetAfterWrite" }, { times: 1 })
    const reset = asCalendarError("reset", await meet(org.member.token, eventId), 502)
    expect(reset).toMatchObject({ error: "suite_b_api_error", outcome: "unknown" })
    expect(reset.message).toMatch(/look before retrying/)
    expect(calendar.patches(eventId)).toBe(1)
    mail.setMode({ _tag: "oversized", bytes: 6 * 1024 * 1024 }, { times: 1 })
    expect(asMailError("oversized", await attempt(org), 502)).toMatchObject({ error: "suite_a_api_error", outcome: "unknown" })
    mail.setMode({ _tag: "invalidJson" }, { times: 1 })
    expect(asMailError("not json", await attempt(org), 502)).toMatchObject({ error: "suite_a_api_error", outcome: "unknown" })
  })

  it("a suite that refuses connections is known not to have acted", async () => {
    const org = await newOrg()
    await configure(org, "suite-a")
    await connectFully(org.member.token, "suite-a")
    await configure(org, "suite-a", { apiBaseUrl: "http://127.0.0.1:1/v1.0" })
    const refused = asMailError("refused", await attempt(org), 502)
    expect(refused).toMatchObject({ error: "suite_a_api_error", retryable: true })
    expect(refused.outcome).toBeUndefined()
  })
})

/**
 * Every 401 says which credential was refused and why (`reason`, `message`), with the Bearer challenge RFC 6750 §3
 * asks for: no error code when no token was presented, `invalid_request` for a malformed `Authorization`,
 * `invalid_token` for a token or key that is unknown, expired or revoked; and a wrong password reads exactly as an
 * email without an account. Held as one rule across every kind of credential, through HTTP.
 */
import { UnauthorizedResponse } from "@orgplane/schema"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as Json from "../../../../packages/testkit/src/Json.js"
import { wireBody } from "../../../../packages/testkit/src/WireBody.js"
import * as TestServer from "../support/HttpServer.js"
import * as Duration from "effect/Duration"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const clock = new TestServer.ShiftedClock()
let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  server = await TestServer.startSharingDatabase({ clock, sessionTtl: Duration.hours(1) })
})
afterAll(() => server.close())

const noToken = `Bearer realm="orgplane"`
const malformed = `Bearer realm="orgplane", error="invalid_request"`
const invalidToken = `Bearer realm="orgplane", error="invalid_token"`

interface Case {
  readonly name: string
  readonly reason: string
  readonly challenge: string
  readonly message: RegExp
  readonly answer: () => Promise<Http.RawResponse>
}

const asUnauthorized = wireBody(UnauthorizedResponse, "a 401")

/** The 401 of a case, its body exactly `{ error, reason, message }` and its challenge the reason's. */
const expectRefusal = async (refusal: Case): Promise<Http.RawResponse<typeof UnauthorizedResponse.Encoded>> => {
  const response = await refusal.answer()
  expect([response.status, Json.at(response.body, "error"), Json.at(response.body, "reason")], refusal.name).toEqual([401, "unauthorized", refusal.reason])
  expect(Object.keys(Json.object(response.body, refusal.name)).sort(), refusal.name).toEqual(["error", "message", "reason"])
  const body = asUnauthorized(response)
  expect(body.message, refusal.name).toMatch(refusal.message)
  expect(response.headers.get("www-authenticate"), refusal.name).toBe(refusal.challenge)
  expect(response.headers.get("cache-control"), refusal.name).toBe("no-store")
  return { ...response, body }
}

describe("401 unauthorized", () => {
  it("says which credential was refused and why, with the challenge RFC 6750 gives it, for every kind of credential", async () => {
    const { url } = server
    const me = (options: Http.Options) => Http.request(url, "GET", "/v1/me", options)
    const owner = await Http.owner(url, "Refusals")
    const key = async (expiresAt?: string) =>
      Http.expectStatus<{ key: string; apiKey: { id: string } }>(
        "create key",
        await Http.request(url, "POST", "/v1/api-keys", { token: owner.token, body: { name: `k${Math.random()}`, ...(expiresAt ? { expiresAt } : {}) } }),
        201
      )
    const signedOut = await Http.signUp(url, "Signed Out")
    Http.expectStatus("sign out", await Http.request(url, "POST", "/v1/auth/sign-out", { token: signedOut.token }), 204)
    const revokedKey = await key()
    Http.expectStatus("revoke", await Http.request(url, "DELETE", `/v1/api-keys/${revokedKey.apiKey.id}`, { token: owner.token }), 204)
    const suspended = await Http.owner(url, "Suspended")
    const suspendedKey = Http.expectStatus<{ key: string }>(
      "create key",
      await Http.request(url, "POST", "/v1/api-keys", { token: suspended.token, body: { name: "suspended" } }),
      201
    )
    await server.sql((sql) => sql`UPDATE memberships SET suspended_at = now() WHERE organization_id = ${suspended.organization.id} AND id = ${suspended.membership.id}`)

    const cases: ReadonlyArray<Case> = [
      { name: "no header", reason: "credentials_missing", challenge: noToken, message: /^No credentials: send a session token as `Authorization: Bearer <token>`/, answer: () => me({}) },
      { name: "another scheme", reason: "credentials_malformed", challenge: malformed, message: /^The Authorization header is not `Bearer <token>`/, answer: () => me({ headers: { authorization: `Basic ${btoa("a:b")}` } }) },
      { name: "a token without its scheme", reason: "credentials_malformed", challenge: malformed, message: /is not `Bearer <token>`/, answer: () => me({ headers: { authorization: owner.token } }) },
      { name: "Bearer without a token", reason: "credentials_malformed", challenge: malformed, message: /is not `Bearer <token>`/, answer: () => me({ headers: { authorization: "Bearer   " } }) },
      { name: "an unknown session token", reason: "session_unknown", challenge: invalidToken, message: /^The bearer token is not a session of this server: sign in/, answer: () => me({ token: "ops_never-issued" }) },
      { name: "an API key sent as a bearer token", reason: "session_unknown", challenge: invalidToken, message: /^The bearer token is an API key, not a session token: send an API key as `X-API-Key: <key>`\.$/, answer: () => me({ token: "opk_never-issued" }) },
      { name: "a signed-out session", reason: "session_revoked", challenge: invalidToken, message: /^The session was ended \(signed out, revoked/, answer: () => me({ token: signedOut.token }) },
      { name: "an unknown API key", reason: "api_key_unknown", challenge: invalidToken, message: /^The API key is not one of this server's: it was revoked, or never existed/, answer: () => me({ apiKey: "opk_never-issued" }) },
      { name: "a revoked API key", reason: "api_key_unknown", challenge: invalidToken, message: /it was revoked, or never existed/, answer: () => me({ apiKey: revokedKey.key }) },
      { name: "the key of a suspended member", reason: "api_key_inactive", challenge: invalidToken, message: /^The API key no longer acts for anyone: its member was removed or suspended/, answer: () => me({ apiKey: suspendedKey.key }) },
      { name: "an unknown worker token", reason: "worker_token_unknown", challenge: invalidToken, message: /^The worker token is not one of this server's/, answer: () => Http.request(url, "POST", "/v1/worker-runtime/heartbeat", { token: "opw_never-issued", body: {} }) },
      { name: "a wrong password", reason: "invalid_credentials", challenge: noToken, message: /^Wrong email or password\.$/, answer: () => Http.request(url, "POST", "/v1/auth/sign-in", { body: { email: owner.email, password: "not the password" } }) },
      { name: "an unknown email", reason: "invalid_credentials", challenge: noToken, message: /^Wrong email or password\.$/, answer: () => Http.request(url, "POST", "/v1/auth/sign-in", { body: { email: "nobody-here@example.com", password: "not the password" } }) }
    ]
    const answers = new Map<string, Http.RawResponse<typeof UnauthorizedResponse.Encoded>>()
    for (const refusal of cases) answers.set(refusal.name, await expectRefusal(refusal))
    // A refused API key is not mistaken for the missing bearer token the platform tried first.
    expect(answers.get("an unknown API key")!.body.reason).toBe("api_key_unknown")

    // What expires, expired: the session past its lifetime, the key past its `expiresAt`.
    const expiringKey = await key(new Date(Date.now() + 30 * 60_000).toISOString())
    const lateSession = await Http.signUp(url, "Late")
    clock.advance("61 minutes")
    for (
      const refusal of [
        { name: "an expired session", reason: "session_expired", challenge: invalidToken, message: /^The session expired \(it outlived its lifetime or was idle too long\): sign in again/, answer: () => me({ token: lateSession.token }) },
        { name: "an expired API key", reason: "api_key_expired", challenge: invalidToken, message: /^The API key expired: an owner or admin creates a new one/, answer: () => me({ apiKey: expiringKey.key }) }
      ] satisfies ReadonlyArray<Case>
    ) answers.set(refusal.name, await expectRefusal(refusal))

    // Each kind reads differently, except the pairs the server cannot or must not tell apart.
    const byMessage = new Map<string, Array<string>>()
    for (const [name, response] of answers) byMessage.set(response.body.message, [...(byMessage.get(response.body.message) ?? []), name])
    const shared = [...byMessage.values()].filter((names) => names.length > 1)
    expect(shared).toEqual([
      ["another scheme", "a token without its scheme", "Bearer without a token"],
      ["an unknown API key", "a revoked API key"],
      ["a wrong password", "an unknown email"]
    ])
  })

  it("answers a wrong password and an email without an account with byte-identical bodies and the same headers", async () => {
    const { url } = server
    const person = await Http.signUp(url, "Known")
    const wrong = await Http.request(url, "POST", "/v1/auth/sign-in", { body: { email: person.email, password: "wrong password!" } })
    const unknown = await Http.request(url, "POST", "/v1/auth/sign-in", { body: { email: `x${person.email}`, password: "wrong password!" } })
    expect([wrong.status, unknown.status]).toEqual([401, 401])
    expect(unknown.text).toBe(wrong.text)
    expect(unknown.headers.get("www-authenticate")).toBe(wrong.headers.get("www-authenticate"))
    expect(unknown.headers.get("content-length")).toBe(wrong.headers.get("content-length"))
  })

  it("accepting an invitation with a refused credential says why, as any other endpoint would; with none, what it needs", async () => {
    const { url } = server
    const owner = await Http.owner(url, "Inviting")
    const invitee = await Http.signUp(url, "Invitee")
    const invitation = Http.expectStatus<{ inviteToken: string }>(
      "invite",
      await Http.request(url, "POST", "/v1/invitations", { token: owner.token, body: { email: invitee.email, role: "member" } }),
      201
    )
    Http.expectStatus("sign out", await Http.request(url, "POST", "/v1/auth/sign-out", { token: invitee.token }), 204)
    const accept = (options: Http.Options) => Http.request(url, "POST", "/v1/invitations/accept", { ...options, body: { token: invitation.inviteToken } })
    await expectRefusal({ name: "a signed-out session", reason: "session_revoked", challenge: invalidToken, message: /^The session was ended/, answer: () => accept({ token: invitee.token }) })
    await expectRefusal({ name: "an unknown API key", reason: "api_key_unknown", challenge: invalidToken, message: /^The API key is not one of this server's/, answer: () => accept({ apiKey: "opk_never-issued" }) })
    await expectRefusal({
      name: "nothing",
      reason: "credentials_missing",
      challenge: noToken,
      message: /^Accepting an invitation needs a session \(`Authorization: Bearer <token>`\) or `signUp`/,
      answer: () => accept({})
    })
  })
})

describe("404 organization_not_found", () => {
  it("right after sign-up says how to create or join an organization", async () => {
    const person = await Http.signUp(server.url, "Newcomer")
    const response = await Http.request(server.url, "GET", "/v1/teams", { token: person.token })
    expect(response.status).toBe(404)
    expect(response.body).toEqual({
      error: "organization_not_found",
      message:
        "You are not a member of any organization: create one with POST /v1/organizations (orgplane orgs create <name>), or accept an invitation with POST /v1/invitations/accept (orgplane invitations accept <token>)."
    })
    // What it says works: the organization made, the same request answers.
    Http.expectStatus("create", await Http.request(server.url, "POST", "/v1/organizations", { token: person.token, body: { name: "Mine" } }), 201)
    expect((await Http.request(server.url, "GET", "/v1/teams", { token: person.token })).status).toBe(200)
  })
})

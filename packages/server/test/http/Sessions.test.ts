/**
 * Sessions a person can see and end (issue 44 item 3), through HTTP: `GET /v1/me/sessions`, ending one or all
 * others, the idle timeout beside the absolute one, what a password change says of API keys (and revokes on
 * request), API keys' default and longest lifetime, and the recent sign-in the owner-level actions ask for.
 */
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const clock = new TestServer.ShiftedClock()
let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start({ clock, sessionIdleTimeout: "3 days", recentAuthentication: "1 hour", apiKeyMaxLifetime: "30 days" })
})
afterAll(async () => {
  await server?.close()
})

const { del, get, post } = Http.verbs(() => server.url)
const { apiKeys, users } = calls(() => server.url)

/** Signs the person in again, from another device: a new session token. */
const signIn = async (email: string, password: string, userAgent = "other-device/1.0") =>
  ok(await users.signIn({ payload: { email, password }, headers: { "user-agent": userAgent } }), 200).session.token

/** The caller's sessions, a page of them. */
const sessionsOf = async (token: string, query: { readonly limit?: string } = {}) => ok(await users.listSessions({ token, query }), 200)

describe("sessions a person can see and end", () => {
  it("GET /v1/me/sessions lists the caller's live sessions, newest first, marking the current one; another person's are not there", async () => {
    const person = await Http.signUp(server.url, "Lister")
    const laptop = await signIn(person.email, person.password, "laptop/2.0")
    const stranger = await Http.signUp(server.url, "Stranger")
    const listed = await sessionsOf(laptop)
    expect(listed.items).toHaveLength(2)
    expect(listed.items[0]).toMatchObject({ current: true, method: "password", userAgent: "laptop/2.0", ipAddress: expect.stringMatching(/127\.0\.0\.1/) })
    expect(listed.items[1]).toMatchObject({ current: false, method: "password" })
    expect(listed.items.map((session) => session.id)).not.toContain(
      (await sessionsOf(stranger.token)).items[0]!.id
    )
    const paged = await sessionsOf(laptop, { limit: "1" })
    expect(paged.items).toHaveLength(1)
    expect(paged.nextCursor).not.toBeNull()
  })

  it("ending one session signs it out at once; another person's session answers 404 session_not_found, like a missing one", async () => {
    const person = await Http.signUp(server.url, "Ender")
    const phone = await signIn(person.email, person.password, "phone/1.0")
    const sessions = (await sessionsOf(person.token)).items
    const phoneSession = sessions.find((session) => session.userAgent === "phone/1.0")!
    const stranger = await Http.signUp(server.url, "Other")
    const theirs = await del(`/v1/me/sessions/${phoneSession.id}`, { token: stranger.token })
    expect(theirs.status).toBe(404)
    expect(theirs.body).toEqual({ error: "session_not_found", message: "Session not found." })
    expect((await get("/v1/me", { token: phone })).status).toBe(200)

    Http.expectStatus("end", await del(`/v1/me/sessions/${phoneSession.id}`, { token: person.token }), 204)
    expect((await get("/v1/me", { token: phone })).status).toBe(401)
    expect((await del(`/v1/me/sessions/${phoneSession.id}`, { token: person.token })).status).toBe(404)
    expect((await get("/v1/me", { token: person.token })).status).toBe(200)
  })

  it("ending the others keeps the caller's and counts them; an API key may not list or end sessions (403 session_required)", async () => {
    const { owner } = await Http.staffed(server.url, "Ends")
    const second = await signIn(owner.email, owner.password)
    const third = await signIn(owner.email, owner.password)
    const ended = Http.expectStatus("end others", await post("/v1/me/sessions/end-others", { token: owner.token }), 200)
    expect(ended).toEqual({ ended: 2 })
    expect((await get("/v1/me", { token: second })).status).toBe(401)
    expect((await get("/v1/me", { token: third })).status).toBe(401)
    expect((await get("/v1/me", { token: owner.token })).status).toBe(200)

    const key = ok(await apiKeys.create({ token: owner.token, payload: { name: "ci" } }), 201).key
    for (const refused of [await get("/v1/me/sessions", { apiKey: key }), await post("/v1/me/sessions/end-others", { apiKey: key })]) {
      expect(refused.status).toBe(403)
      expect(refused.body).toMatchObject({ reason: "session_required" })
    }
  })

  it("a session unused for the idle timeout ends, while a used one lives on (the absolute lifetime aside)", async () => {
    const person = await Http.signUp(server.url, "Idle")
    const used = await signIn(person.email, person.password)
    clock.advance("2 days")
    expect((await get("/v1/me", { token: used })).status).toBe(200)
    // The use is written in the background: let it land before time moves on.
    await new Promise((resolve) => setTimeout(resolve, 200))
    clock.advance("2 days")
    expect((await get("/v1/me", { token: person.token })).status).toBe(401)
    expect((await get("/v1/me", { token: used })).status).toBe(200)
  })

  it("a password change counts the other sessions it ended and lists the API keys it leaves working; with revokeApiKeys it revokes them", async () => {
    const { owner } = await Http.staffed(server.url, "Passwords")
    await signIn(owner.email, owner.password)
    const created = ok(await apiKeys.create({ token: owner.token, payload: { name: "deploys" } }), 201)
    const newPassword = "a brand new passphrase 1"
    const changed = ok(await users.changePassword({ token: owner.token, payload: { currentPassword: owner.password, newPassword } }), 200)
    expect(changed).toEqual({
      otherSessionsEnded: 1,
      apiKeys: [expect.objectContaining({ id: created.apiKey.id, organizationId: owner.organization.id, name: "deploys", prefix: created.apiKey.prefix })],
      apiKeysRevoked: false
    })
    expect((await get("/v1/teams", { apiKey: created.key })).status).toBe(200)

    const revoked = ok(await users.changePassword({
      token: owner.token,
      payload: { currentPassword: newPassword, newPassword: "yet another passphrase 2", revokeApiKeys: true }
    }), 200)
    expect(revoked).toMatchObject({ otherSessionsEnded: 0, apiKeysRevoked: true, apiKeys: [expect.objectContaining({ id: created.apiKey.id })] })
    expect((await get("/v1/teams", { apiKey: created.key })).status).toBe(401)
  })

  it("a password change lists and revokes the keys of every organization the person joined, a deleted one's too: restored, it has none (issue 55, item 4)", async () => {
    const owner = await Http.owner(server.url, "Parked")
    const parked = ok(await apiKeys.create({ token: owner.token, payload: { name: "parked" } }), 201)
    const deleted = await Http.request(server.url, "DELETE", "/v1/organization", { token: owner.token, body: { confirmName: "Parked" } })
    expect(deleted.status, deleted.text).toBe(200)
    const changed = ok(await users.changePassword({
      token: owner.token,
      payload: { currentPassword: owner.password, newPassword: "a passphrase after the deletion", revokeApiKeys: true }
    }), 200)
    expect(changed.apiKeys).toEqual([expect.objectContaining({ id: parked.apiKey.id, organizationId: owner.organization.id })])
    Http.expectStatus("restore", await post(`/v1/organizations/${owner.organization.id}/restore`, { token: owner.token }), 200)
    expect((await get("/v1/teams", { apiKey: parked.key })).status).toBe(401)
  })

  it("a new API key expires after the longest lifetime unless it says sooner; a later expiresAt answers 400 naming the setting", async () => {
    const owner = await Http.owner(server.url, "Lifetimes")
    const made = ok(await apiKeys.create({ token: owner.token, payload: { name: "default" } }), 201)
    const lifetime = Date.parse(made.apiKey.expiresAt ?? "") - Date.parse(made.apiKey.createdAt)
    expect(lifetime).toBe(30 * 24 * 60 * 60 * 1000)
    const tooLate = new Date(clock.currentTimeMillisUnsafe() + 31 * 24 * 60 * 60 * 1000).toISOString()
    const refused = await post("/v1/api-keys", { token: owner.token, body: { name: "late", expiresAt: tooLate } })
    expect(refused.status).toBe(400)
    expect(JSON.stringify(refused.body)).toContain("ORGPLANE_API_KEY_MAX_LIFETIME")
    const sooner = new Date(clock.currentTimeMillisUnsafe() + 7 * 24 * 60 * 60 * 1000).toISOString()
    Http.expectStatus("sooner", await post("/v1/api-keys", { token: owner.token, body: { name: "sooner", expiresAt: sooner } }), 201)
    // The published document says so: omitting expiresAt is no key that never expires.
    const document: unknown = Http.expectStatus("openapi", await get("/openapi.json"), 200)
    // Every description of an `expiresAt` member anywhere in the document (the request body's is inline).
    const described: Array<string> = []
    const walk = (value: unknown): void => {
      if (typeof value !== "object" || value === null) return
      const expiresAt: unknown = Reflect.get(value, "expiresAt")
      const description: unknown = typeof expiresAt === "object" && expiresAt !== null ? Reflect.get(expiresAt, "description") : undefined
      if (typeof description === "string" && description.includes("ORGPLANE_API_KEY_MAX_LIFETIME")) described.push(description)
      for (const member of Object.values(value)) walk(member)
    }
    walk(document)
    expect(described).toEqual([expect.stringMatching(/Omitted: the key expires after that lifetime\. Every key expires\./)])
  })

  it("owner-level actions ask for a recent sign-in: an older session answers 403 recent_authentication_required; a fresh one may; reads do not ask", async () => {
    const { admin, owner } = await Http.staffed(server.url, "Sudo")
    clock.advance("61 minutes")
    const refusals = [
      await post("/v1/api-keys", { token: owner.token, body: { name: "late" } }),
      await post(`/v1/members/${admin.membership.id}/transfer-ownership`, { token: owner.token }),
      await Http.request(server.url, "PATCH", `/v1/members/${admin.membership.id}`, { token: owner.token, body: { role: "owner" } }),
      await Http.request(server.url, "PUT", "/v1/audit/settings", { token: owner.token, body: { retentionDays: 30 } })
    ]
    for (const refused of refusals) {
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual({ reason: "recent_authentication_required", message: expect.stringContaining("sign in again") })
    }
    // Reads and plain changes do not ask.
    Http.expectStatus("members", await get("/v1/members", { token: owner.token }), 200)
    Http.expectStatus("api keys", await get("/v1/api-keys", { token: owner.token }), 200)
    Http.expectStatus("team", await post("/v1/teams", { token: owner.token, body: { name: "Still fine" } }), 201)

    const fresh = await signIn(owner.email, owner.password)
    Http.expectStatus("key", await post("/v1/api-keys", { token: fresh, body: { name: "fresh" } }), 201)
    Http.expectStatus("audit", await Http.request(server.url, "PUT", "/v1/audit/settings", { token: fresh, body: { retentionDays: 30 } }), 200)
    Http.expectStatus("make owner", await Http.request(server.url, "PATCH", `/v1/members/${admin.membership.id}`, { token: fresh, body: { role: "owner" } }), 200)
  })
})

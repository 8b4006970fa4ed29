import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

const { del, get, patch, post } = Http.verbs(() => server.url)

describe("one's own account", () => {
  it("changes its name, which colleagues then see", async () => {
    const org = await Http.staffed(server.url)
    const renamed = await patch("/v1/me", { token: org.member.token, body: { name: "  Grace Hopper " } })
    expect(renamed.status).toBe(200)
    expect(renamed.body.user.name).toBe("Grace Hopper")
    expect(renamed.body.organization.id).toBe(org.organizationId)
    const seen = await get(`/v1/members/${org.member.membership.id}`, { token: org.owner.token })
    expect(seen.body.member.name).toBe("Grace Hopper")
    const bad = await patch("/v1/me", { token: org.member.token, body: { name: "" } })
    expect(bad.status).toBe(400)
    expect(bad.body.details[0].path).toEqual(["name"])
    const key = await post("/v1/api-keys", { token: org.owner.token, body: { name: "k" } })
    const byKey = await patch("/v1/me", { apiKey: key.body.key, body: { name: "Robot" } })
    expect(byKey.status).toBe(403)
    expect(byKey.body.reason).toBe("session_required")
  })

  it("changes its password: other sessions end, this one stays, the old password stops working", async () => {
    const user = await Http.signUp(server.url, "Pat")
    const other = (await post("/v1/auth/sign-in", { body: { email: user.email, password: user.password } })).body.session.token
    const wrong = await post("/v1/me/password", { token: user.token, body: { currentPassword: "not it at all", newPassword: "a brand new secret" } })
    expect(wrong.status).toBe(400)
    expect(wrong.body.details).toEqual([{ path: ["currentPassword"], message: "is not the account's current password" }])
    expect((await get("/v1/me", { token: other })).status).toBe(200)

    const weak = await post("/v1/me/password", { token: user.token, body: { currentPassword: user.password, newPassword: "short" } })
    expect(weak.status).toBe(400)
    expect(weak.text).not.toContain("short")

    const changed = await post("/v1/me/password", { token: user.token, body: { currentPassword: user.password, newPassword: "a brand new secret" } })
    expect(changed.status).toBe(200)
    expect(changed.body).toEqual({ otherSessionsEnded: 1, apiKeys: [], apiKeysRevoked: false })
    expect((await get("/v1/me", { token: user.token })).status).toBe(200)
    expect((await get("/v1/me", { token: other })).status).toBe(401)
    expect((await post("/v1/auth/sign-in", { body: { email: user.email, password: user.password } })).status).toBe(401)
    expect((await post("/v1/auth/sign-in", { body: { email: user.email, password: "a brand new secret" } })).status).toBe(200)
  })

  it("limits password change attempts per account", async () => {
    const user = await Http.signUp(server.url, "Guess")
    for (let attempt = 0; attempt < 10; attempt++) {
      const wrong = await post("/v1/me/password", { token: user.token, body: { currentPassword: `guess ${attempt}`, newPassword: "a brand new secret" } })
      expect(wrong.status).toBe(400)
    }
    const limited = await post("/v1/me/password", { token: user.token, body: { currentPassword: user.password, newPassword: "a brand new secret" } })
    expect(limited.status).toBe(429)
    expect(limited.body.error).toBe("rate_limited")
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
    const other = await Http.signUp(server.url, "Other")
    const unaffected = await post("/v1/me/password", { token: other.token, body: { currentPassword: other.password, newPassword: "a brand new secret" } })
    expect(unaffected.status).toBe(200)
  })

  it("lists its organizations with its membership in each, without the ones it left", async () => {
    const org = await Http.staffed(server.url, "First")
    const second = await post("/v1/organizations", { token: org.member.token, body: { name: "Second" } })
    const third = await post("/v1/organizations", { token: org.member.token, body: { name: "Third" } })
    const all = await get("/v1/me/organizations", { token: org.member.token })
    expect(all.status).toBe(200)
    expect(all.body.items.map((i: any) => [i.organization.name, i.membership.role])).toEqual([
      ["First", "member"],
      ["Second", "owner"],
      ["Third", "owner"]
    ])
    expect(all.body.items[1]).toEqual({ organization: second.body.organization, membership: second.body.membership })

    const firstPage = await get("/v1/me/organizations?limit=2", { token: org.member.token })
    expect(firstPage.body.items).toHaveLength(2)
    const secondPage = await get(`/v1/me/organizations?limit=2&cursor=${firstPage.body.nextCursor}`, { token: org.member.token })
    expect(secondPage.body.items.map((i: any) => i.organization.id)).toEqual([third.body.organization.id])
    expect(secondPage.body.nextCursor).toBeNull()

    expect((await del(`/v1/members/${org.member.membership.id}`, { token: org.owner.token })).status).toBe(204)
    const after = await get("/v1/me/organizations", { token: org.member.token })
    expect(after.body.items.map((i: any) => i.organization.name)).toEqual(["Second", "Third"])

    const key = await post("/v1/api-keys", { token: org.owner.token, body: { name: "k" } })
    const byKey = await get("/v1/me/organizations", { apiKey: key.body.key })
    expect(byKey.status).toBe(403)
    expect(byKey.body.reason).toBe("session_required")
  })
})

import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

const { apiKeys, members, organizations, users } = calls(() => server.url)

describe("one's own account", () => {
  it("changes its name, which colleagues then see", async () => {
    const org = await Http.staffed(server.url)
    const renamed = await users.updateMe({ token: org.member.token, payload: { name: "  Grace Hopper " } })
    expect(renamed.status).toBe(200)
    expect(ok(renamed, 200).user.name).toBe("Grace Hopper")
    expect(ok(renamed, 200).organization?.id).toBe(org.organizationId)
    const seen = await members.get({ token: org.owner.token, path: { memberId: org.member.membership.id } })
    expect(ok(seen, 200).member.name).toBe("Grace Hopper")
    const bad = await users.updateMe({ token: org.member.token, payload: { name: "" } })
    expect(bad.status).toBe(400)
    expect(invalid(bad).details[0]?.path).toEqual(["name"])
    const key = ok(await apiKeys.create({ token: org.owner.token, payload: { name: "k" } }), 201)
    const byKey = await users.updateMe({ apiKey: key.key, payload: { name: "Robot" } })
    expect(byKey.status).toBe(403)
    expect(byKey.body).toMatchObject({ reason: "session_required" })
  })

  it("changes its password: other sessions end, this one stays, the old password stops working", async () => {
    const user = await Http.signUp(server.url, "Pat")
    const other = ok(await users.signIn({ payload: { email: user.email, password: user.password } }), 200).session.token
    const wrong = await users.changePassword({ token: user.token, payload: { currentPassword: "not it at all", newPassword: "a brand new secret" } })
    expect(wrong.status).toBe(400)
    expect(wrong.body).toEqual(expect.objectContaining({ details: [{ path: ["currentPassword"], message: "is not the account's current password" }] }))
    expect((await users.me({ token: other })).status).toBe(200)

    const weak = await users.changePassword({ token: user.token, payload: { currentPassword: user.password, newPassword: "short" } })
    expect(weak.status).toBe(400)
    expect(weak.text).not.toContain("short")

    const changed = await users.changePassword({ token: user.token, payload: { currentPassword: user.password, newPassword: "a brand new secret" } })
    expect(changed.status).toBe(200)
    expect(changed.body).toEqual({ otherSessionsEnded: 1, apiKeys: [], apiKeysRevoked: false })
    expect((await users.me({ token: user.token })).status).toBe(200)
    expect((await users.me({ token: other })).status).toBe(401)
    expect((await users.signIn({ payload: { email: user.email, password: user.password } })).status).toBe(401)
    expect((await users.signIn({ payload: { email: user.email, password: "a brand new secret" } })).status).toBe(200)
  })

  it("limits password change attempts per account", async () => {
    const user = await Http.signUp(server.url, "Guess")
    for (let attempt = 0; attempt < 10; attempt++) {
      const wrong = await users.changePassword({ token: user.token, payload: { currentPassword: `guess ${attempt}`, newPassword: "a brand new secret" } })
      expect(wrong.status).toBe(400)
    }
    const limited = await users.changePassword({ token: user.token, payload: { currentPassword: user.password, newPassword: "a brand new secret" } })
    expect(limited.status).toBe(429)
    expect(limited.body).toMatchObject({ error: "rate_limited" })
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
    const other = await Http.signUp(server.url, "Other")
    const unaffected = await users.changePassword({ token: other.token, payload: { currentPassword: other.password, newPassword: "a brand new secret" } })
    expect(unaffected.status).toBe(200)
  })

  it("lists its organizations with its membership in each, without the ones it left", async () => {
    const org = await Http.staffed(server.url, "First")
    const second = ok(await organizations.create({ token: org.member.token, payload: { name: "Second" } }), 201)
    const third = ok(await organizations.create({ token: org.member.token, payload: { name: "Third" } }), 201)
    const all = await users.listOrganizations({ token: org.member.token })
    expect(all.status).toBe(200)
    const listed = ok(all, 200).items
    expect(listed.map((i) => [i.organization.name, i.membership.role])).toEqual([
      ["First", "member"],
      ["Second", "owner"],
      ["Third", "owner"]
    ])
    expect(listed[1]).toEqual({ organization: second.organization, membership: second.membership })

    const firstPage = ok(await users.listOrganizations({ token: org.member.token, query: { limit: "2" } }), 200)
    expect(firstPage.items).toHaveLength(2)
    const cursor = firstPage.nextCursor
    if (cursor === null) throw new Error("expected a next page")
    const secondPage = ok(await users.listOrganizations({ token: org.member.token, query: { limit: "2", cursor } }), 200)
    expect(secondPage.items.map((i) => i.organization.id)).toEqual([third.organization.id])
    expect(secondPage.nextCursor).toBeNull()

    expect((await members.remove({ token: org.owner.token, path: { memberId: org.member.membership.id } })).status).toBe(204)
    const after = ok(await users.listOrganizations({ token: org.member.token }), 200)
    expect(after.items.map((i) => i.organization.name)).toEqual(["Second", "Third"])

    const key = ok(await apiKeys.create({ token: org.owner.token, payload: { name: "k" } }), 201)
    const byKey = await users.listOrganizations({ apiKey: key.key })
    expect(byKey.status).toBe(403)
    expect(byKey.body).toMatchObject({ reason: "session_required" })
  })
})

/**
 * What one member sees of another (issue 44 item 4, first bullet), through HTTP: owners and admins read the whole
 * directory (emails, user ids, suspension, former members); a plain member reads names, roles and dates, finds
 * nobody by email, cannot ask for former members, and sees emails only once the organization allows it.
 */
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(async () => {
  await server?.close()
})

const get = (token: string, path: string) => Http.request(server.url, "GET", path, { token })

/** An organization with an owner, an admin, a member and a former member. */
const organization = async () => {
  const staff = await Http.staffed(server.url, "Directory")
  const leaving = await Http.join(server.url, staff.owner.token, "member", "Leaving")
  Http.expectStatus("remove", await Http.request(server.url, "DELETE", `/v1/members/${leaving.membership.id}`, { token: staff.owner.token }), 204)
  return { ...staff, leaving }
}

describe("the member directory", () => {
  it("a plain member sees names, roles and dates only: no email, user id or suspension; nobody found by email; former members refused", async () => {
    const { admin, leaving, member } = await organization()
    const listed = Http.expectStatus("list", await get(member.token, "/v1/members"), 200)
    expect(listed.items).toHaveLength(3)
    for (const item of listed.items) {
      expect(Object.keys(item).sort()).toEqual(["createdAt", "id", "name", "organizationId", "removedAt", "role"])
    }
    expect(listed.items.map((item: { name: string; role: string }) => [item.name, item.role])).toEqual([["Owner", "owner"], ["Admin", "admin"], ["Member", "member"]])

    // The email's random part finds nobody; the name still finds the admin.
    const byEmail = Http.expectStatus("by email", await get(member.token, `/v1/members?q=${encodeURIComponent(admin.email.split("@")[0]!)}`), 200)
    expect(byEmail.items).toEqual([])
    expect(Http.expectStatus("by name", await get(member.token, "/v1/members?q=Admin"), 200).items).toHaveLength(1)

    const removed = await get(member.token, "/v1/members?includeRemoved=true")
    expect(removed.status).toBe(403)
    expect(removed.body.reason).toBe("insufficient_role")

    const one = Http.expectStatus("get", await get(member.token, `/v1/members/${admin.membership.id}`), 200)
    expect(one.member.email).toBeUndefined()
    expect(one.member.userId).toBeUndefined()
    expect((await get(member.token, `/v1/members/${leaving.membership.id}`)).status).toBe(404)
  })

  it("owners and admins keep the full directory, former members included", async () => {
    const { admin, leaving, member, owner } = await organization()
    for (const token of [owner.token, admin.token]) {
      const listed = Http.expectStatus("list", await get(token, "/v1/members?includeRemoved=true"), 200)
      expect(listed.items).toHaveLength(4)
      const seen = listed.items.find((item: { id: string }) => item.id === member.membership.id)
      expect(seen).toMatchObject({ email: member.email, userId: member.user.id, suspendedAt: null })
      expect(listed.items.find((item: { id: string }) => item.id === leaving.membership.id).email).toBe(leaving.email)
      expect(Http.expectStatus("by email", await get(token, `/v1/members?q=${encodeURIComponent(member.email)}`), 200).items).toHaveLength(1)
    }
  })

  it("emails are hidden by default; an admin may let members see them (audited), and a member may not change it", async () => {
    const { admin, member, owner } = await organization()
    expect(Http.expectStatus("settings", await get(member.token, "/v1/member-directory"), 200)).toEqual({ settings: { emailsVisibleToMembers: false } })
    const refused = await Http.request(server.url, "PUT", "/v1/member-directory", { token: member.token, body: { emailsVisibleToMembers: true } })
    expect(refused.status).toBe(403)
    expect(refused.body.reason).toBe("insufficient_role")

    const set = await Http.request(server.url, "PUT", "/v1/member-directory", { token: admin.token, body: { emailsVisibleToMembers: true } })
    expect(Http.expectStatus("set", set, 200)).toEqual({ settings: { emailsVisibleToMembers: true } })
    const listed = Http.expectStatus("list", await get(member.token, "/v1/members"), 200)
    expect(listed.items.map((item: { email: string }) => item.email)).toEqual([owner.email, admin.email, member.email])
    expect(listed.items.every((item: object) => !("userId" in item) && !("suspendedAt" in item))).toBe(true)
    expect(Http.expectStatus("by email", await get(member.token, `/v1/members?q=${encodeURIComponent(admin.email)}`), 200).items).toHaveLength(1)

    const events = Http.expectStatus("audit", await get(owner.token, "/v1/audit/events?action=member.directory.update"), 200)
    // The member's refused attempt and the admin's change.
    expect(events.items.map((event: { outcome: string }) => event.outcome).sort()).toEqual(["denied", "succeeded"])
  })
})

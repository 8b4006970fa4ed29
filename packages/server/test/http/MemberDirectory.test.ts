/**
 * What one member sees of another (issue 44 item 4, first bullet), through HTTP: owners and admins read the whole
 * directory (emails, user ids, suspension, former members); a plain member reads names, roles and dates, finds
 * nobody by email, cannot ask for former members, and sees emails only once the organization allows it.
 */
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
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

const { audit, members } = calls(() => server.url)

/** An organization with an owner, an admin, a member and a former member. */
const organization = async () => {
  const staff = await Http.staffed(server.url, "Directory")
  const leaving = await Http.join(server.url, staff.owner.token, "member", "Leaving")
  ok(await members.remove({ token: staff.owner.token, path: { memberId: leaving.membership.id } }), 204)
  return { ...staff, leaving }
}

describe("the member directory", () => {
  it("a plain member sees names, roles and dates only: no email, user id or suspension; nobody found by email; former members refused", async () => {
    const { admin, leaving, member } = await organization()
    const listed = ok(await members.list({ token: member.token }), 200)
    expect(listed.items).toHaveLength(3)
    for (const item of listed.items) {
      expect(Object.keys(item).sort()).toEqual(["createdAt", "id", "name", "organizationId", "removedAt", "role"])
    }
    expect(listed.items.map((item) => [item.name, item.role])).toEqual([["Owner", "owner"], ["Admin", "admin"], ["Member", "member"]])

    // The email's random part finds nobody; the name still finds the admin.
    const byEmail = ok(await members.list({ token: member.token, query: { q: admin.email.split("@")[0]! } }), 200)
    expect(byEmail.items).toEqual([])
    expect(ok(await members.list({ token: member.token, query: { q: "Admin" } }), 200).items).toHaveLength(1)

    const removed = await members.list({ token: member.token, query: { includeRemoved: "true" } })
    expect([removed.status, removed.body]).toMatchObject([403, { reason: "insufficient_role" }])

    const one = ok(await members.get({ token: member.token, path: { memberId: admin.membership.id } }), 200)
    expect(one.member.email).toBeUndefined()
    expect(one.member.userId).toBeUndefined()
    expect((await members.get({ token: member.token, path: { memberId: leaving.membership.id } })).status).toBe(404)
  })

  it("owners and admins keep the full directory, former members included", async () => {
    const { admin, leaving, member, owner } = await organization()
    for (const token of [owner.token, admin.token]) {
      const listed = ok(await members.list({ token, query: { includeRemoved: "true" } }), 200)
      expect(listed.items).toHaveLength(4)
      const seen = listed.items.find((item) => item.id === member.membership.id)
      expect(seen).toMatchObject({ email: member.email, userId: member.user.id, suspendedAt: null })
      const former = listed.items.find((item) => item.id === leaving.membership.id)
      if (former === undefined) throw new Error(`the former member is not listed: ${JSON.stringify(listed.items)}`)
      expect(former.email).toBe(leaving.email)
      expect(ok(await members.list({ token, query: { q: member.email } }), 200).items).toHaveLength(1)
    }
  })

  it("emails are hidden by default; an admin may let members see them (audited), and a member may not change it", async () => {
    const { admin, member, owner } = await organization()
    expect(ok(await members.getDirectorySettings({ token: member.token }), 200)).toEqual({ settings: { emailsVisibleToMembers: false } })
    const refused = await members.setDirectorySettings({ token: member.token, payload: { emailsVisibleToMembers: true } })
    expect([refused.status, refused.body]).toMatchObject([403, { reason: "insufficient_role" }])

    const set = await members.setDirectorySettings({ token: admin.token, payload: { emailsVisibleToMembers: true } })
    expect(ok(set, 200)).toEqual({ settings: { emailsVisibleToMembers: true } })
    const listed = ok(await members.list({ token: member.token }), 200)
    expect(listed.items.map((item) => item.email)).toEqual([owner.email, admin.email, member.email])
    expect(listed.items.every((item) => !("userId" in item) && !("suspendedAt" in item))).toBe(true)
    expect(ok(await members.list({ token: member.token, query: { q: admin.email } }), 200).items).toHaveLength(1)

    const events = ok(await audit.listEvents({ token: owner.token, query: { action: "member.directory.update" } }), 200)
    // The member's refused attempt and the admin's change.
    expect(events.items.map((event) => event.outcome).sort()).toEqual(["denied", "succeeded"])
  })
})

import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

const { patch } = Http.verbs(() => server.url)
const api = calls(() => server.url)

describe("listing and reading members", () => {
  it("lists members oldest first with their name, email and role, filtered by role and text (for an owner: what a plain member sees is MemberDirectory.test.ts)", async () => {
    const org = await Http.staffed(server.url)
    const all = await api.members.list({ token: org.owner.token })
    expect(all.status).toBe(200)
    expect(ok(all, 200).nextCursor).toBeNull()
    expect(ok(all, 200).items.map((m) => [m.id, m.role, m.email, m.name])).toEqual([
      [org.owner.membership.id, "owner", org.owner.email, "Owner"],
      [org.admin.membership.id, "admin", org.admin.email, "Admin"],
      [org.member.membership.id, "member", org.member.email, "Member"]
    ])
    expect(ok(all, 200).items[0]).toMatchObject({ organizationId: org.organizationId, userId: org.owner.user.id, removedAt: null })

    const admins = ok(await api.members.list({ query: { role: "admin" }, token: org.member.token }), 200)
    expect(admins.items.map((m) => m.id)).toEqual([org.admin.membership.id])
    const byText = ok(await api.members.list({ query: { q: org.member.email.slice(0, 12).toUpperCase() }, token: org.owner.token }), 200)
    expect(byText.items.map((m) => m.id)).toEqual([org.member.membership.id])
    const wildcard = ok(await api.members.list({ query: { q: "%" }, token: org.owner.token }), 200)
    expect(wildcard.items).toEqual([])
  })

  it("pages with a cursor", async () => {
    const org = await Http.staffed(server.url)
    const seen: Array<string> = []
    let cursor: string | null = null
    do {
      const page = await api.members.list({ query: { limit: "2", ...(cursor ? { cursor } : {}) }, token: org.owner.token })
      expect(page.status).toBe(200)
      expect(ok(page, 200).items.length).toBeLessThanOrEqual(2)
      seen.push(...ok(page, 200).items.map((m) => m.id))
      cursor = ok(page, 200).nextCursor
    } while (cursor)
    expect(seen).toEqual([org.owner.membership.id, org.admin.membership.id, org.member.membership.id])
  })

  it("rejects bad filters with every bad field", async () => {
    const org = await Http.staffed(server.url)
    const bad = await api.members.list({ query: { role: "boss", includeRemoved: "maybe", limit: "0" }, token: org.owner.token })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ error: "invalid_request" })
    expect(invalid(bad).details.map((d) => d.path[0]).sort()).toEqual(["includeRemoved", "limit", "role"])
    expect(invalid(bad).details.find((d) => d.path[0] === "role")?.message).toBe(
      'Expected "owner", "admin" or "member", actual "boss"'
    )
  })

  it("reads one member, and a member of another organization answers 404 member_not_found", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const one = await api.members.get({ path: { memberId: org.admin.membership.id }, token: org.owner.token })
    expect(one.status).toBe(200)
    expect(ok(one, 200).member).toMatchObject({ id: org.admin.membership.id, role: "admin", email: org.admin.email })
    const foreign = await api.members.get({ path: { memberId: org.admin.membership.id }, token: other.token })
    expect(foreign.status).toBe(404)
    expect(foreign.body).toEqual({ error: "member_not_found", message: "Member not found." })
    const malformed = await api.members.get({ path: { memberId: "om_nope" }, token: other.token })
    expect(malformed.status).toBe(400)
  })
})

describe("roles", () => {
  it("lists the built-in roles with what each may do", async () => {
    const org = await Http.staffed(server.url)
    const roles = await api.roles.list({ token: org.member.token })
    expect(roles.status).toBe(200)
    expect(ok(roles, 200).items.map((r) => r.role)).toEqual(["member", "admin", "owner"])
    expect(ok(roles, 200).items[2].capabilities).toContain("transfer ownership to an admin")
  })

  it("admins move people between member and admin; only owners touch the owner role", async () => {
    const org = await Http.staffed(server.url)
    const extra = await Http.join(server.url, org.owner.token, "member")
    const promote = await api.members.changeRole({ path: { memberId: extra.membership.id }, token: org.admin.token, payload: { role: "admin" } })
    expect(promote.status).toBe(200)
    expect(ok(promote, 200).member).toMatchObject({ id: extra.membership.id, role: "admin" })
    const demote = ok(await api.members.changeRole({ path: { memberId: extra.membership.id }, token: org.admin.token, payload: { role: "member" } }), 200)
    expect(demote.member.role).toBe("member")

    const toOwner = await api.members.changeRole({ path: { memberId: extra.membership.id }, token: org.admin.token, payload: { role: "owner" } })
    expect(toOwner.status).toBe(403)
    expect(toOwner.body).toMatchObject({ reason: "insufficient_role" })
    const demoteOwner = await api.members.changeRole({ path: { memberId: org.owner.membership.id }, token: org.admin.token, payload: { role: "member" } })
    expect(demoteOwner.status).toBe(403)
    const byMember = await api.members.changeRole({ path: { memberId: extra.membership.id }, token: org.member.token, payload: { role: "admin" } })
    expect(byMember.status).toBe(403)

    const coOwner = ok(await api.members.changeRole({ path: { memberId: extra.membership.id }, token: org.owner.token, payload: { role: "owner" } }), 200)
    expect(coOwner.member.role).toBe("owner")
    const stepDown = await api.members.changeRole({ path: { memberId: org.owner.membership.id }, token: org.owner.token, payload: { role: "member" } })
    expect(stepDown.status).toBe(200)
    const lastOwner = await api.members.changeRole({ path: { memberId: extra.membership.id }, token: extra.token, payload: { role: "admin" } })
    expect(lastOwner.status).toBe(409)
    expect(lastOwner.body).toEqual({
      error: "last_owner",
      message: "An organization keeps at least one owner: make someone else an owner first."
    })
    const me = ok(await api.users.me({ token: org.owner.token }), 200)
    expect(me.membership?.role).toBe("member")
  })

  it("validates the role", async () => {
    const org = await Http.staffed(server.url)
    const bad = await patch(`/v1/members/${org.member.membership.id}`, { token: org.owner.token, body: { role: "boss" } })
    expect(bad.status).toBe(400)
    expect(invalid(bad).details[0].path).toEqual(["role"])
    const unknown = await api.members.changeRole({ path: { memberId: "om_01h455vb4pex5vsknk084sn02q" }, token: org.owner.token, payload: { role: "admin" } })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toMatchObject({ error: "member_not_found" })
  })

  it("transfers ownership to an admin only, and only by an owner", async () => {
    const org = await Http.staffed(server.url)
    const toMember = await api.members.transferOwnership({ path: { memberId: org.member.membership.id }, token: org.owner.token })
    expect(toMember.status).toBe(409)
    expect(toMember.body).toMatchObject({ error: "member_not_admin" })
    const byAdmin = await api.members.transferOwnership({ path: { memberId: org.admin.membership.id }, token: org.admin.token })
    expect(byAdmin.status).toBe(403)
    const transfer = await api.members.transferOwnership({ path: { memberId: org.admin.membership.id }, token: org.owner.token })
    expect(transfer.status).toBe(200)
    expect(ok(transfer, 200).owner).toMatchObject({ id: org.admin.membership.id, role: "owner" })
    expect(ok(transfer, 200).previousOwner).toMatchObject({ id: org.owner.membership.id, role: "admin" })
    const owners = ok(await api.members.list({ query: { role: "owner" }, token: org.member.token }), 200)
    expect(owners.items.map((m) => m.id)).toEqual([org.admin.membership.id])
    const back = await api.members.transferOwnership({ path: { memberId: org.owner.membership.id }, token: org.owner.token })
    expect(back.status).toBe(403)
  })
})

describe("removing members", () => {
  it("is soft: the id stays readable, and the member's keys and sessions stop reaching the organization", async () => {
    const org = await Http.staffed(server.url)
    const key = await api.apiKeys.create({ token: org.admin.token, payload: { name: "script" } })
    expect((await api.members.list({ apiKey: ok(key, 201).key })).status).toBe(200)
    const team = await api.teams.create({ token: org.owner.token, payload: { name: "Ops", memberIds: [org.admin.membership.id] } })

    const removed = await api.members.remove({ path: { memberId: org.admin.membership.id }, token: org.owner.token })
    expect(removed.status).toBe(204)
    expect((await api.members.list({ apiKey: ok(key, 201).key })).status).toBe(401)
    const keys = ok(await api.apiKeys.list({ token: org.owner.token }), 200)
    expect(keys.items.map((k) => k.id)).not.toContain(ok(key, 201).apiKey.id)
    const session = await api.members.list({ token: org.admin.token })
    expect(session.status).toBe(404)
    expect(session.body).toMatchObject({ error: "organization_not_found", message: expect.stringMatching(/^You are not a member of any organization/) })
    expect(ok(await api.users.me({ token: org.admin.token }), 200).organization).toBeNull()

    const read = await api.members.get({ path: { memberId: org.admin.membership.id }, token: org.owner.token })
    expect(read.status).toBe(200)
    expect(ok(read, 200).member.removedAt).not.toBeNull()
    const listed = ok(await api.members.list({ token: org.owner.token }), 200)
    expect(listed.items.map((m) => m.id)).not.toContain(org.admin.membership.id)
    const withRemoved = ok(await api.members.list({ query: { includeRemoved: "true" }, token: org.owner.token }), 200)
    expect(withRemoved.items.map((m) => m.id)).toContain(org.admin.membership.id)
    expect(ok(await api.teams.get({ path: { teamId: ok(team, 201).team.id }, token: org.owner.token }), 200).team.memberIds).toEqual([])

    const again = await api.members.remove({ path: { memberId: org.admin.membership.id }, token: org.owner.token })
    expect(again.status).toBe(404)
    expect(again.body).toMatchObject({ error: "member_not_found" })
    const roleOfRemoved = await api.members.changeRole({ path: { memberId: org.admin.membership.id }, token: org.owner.token, payload: { role: "member" } })
    expect(roleOfRemoved.status).toBe(404)
  })

  it("members may leave; only admins remove others, only owners remove owners; the last owner stays", async () => {
    const org = await Http.staffed(server.url)
    const byMember = await api.members.remove({ path: { memberId: org.admin.membership.id }, token: org.member.token })
    expect(byMember.status).toBe(403)
    const ownerByAdmin = await api.members.remove({ path: { memberId: org.owner.membership.id }, token: org.admin.token })
    expect(ownerByAdmin.status).toBe(403)
    const lastOwner = await api.members.remove({ path: { memberId: org.owner.membership.id }, token: org.owner.token })
    expect(lastOwner.status).toBe(409)
    expect(lastOwner.body).toMatchObject({ error: "last_owner" })
    expect((await api.members.remove({ path: { memberId: org.member.membership.id }, token: org.member.token })).status).toBe(204)
    expect((await api.members.list({ token: org.member.token })).status).toBe(404)
  })
})

describe.runIf(TestDatabase.onPostgres)("concurrent changes (need real concurrency: Postgres only)", () => {
  it("never leave an organization without an owner", async () => {
    for (let round = 0; round < 4; round++) {
      const org = await Http.staffed(server.url)
      const second = await Http.join(server.url, org.owner.token, "admin", "Second")
      expect((await api.members.changeRole({ path: { memberId: second.membership.id }, token: org.owner.token, payload: { role: "owner" } })).status).toBe(200)
      const a = { token: org.owner.token, id: org.owner.membership.id }
      const b = { token: second.token, id: second.membership.id }
      // Each owner demotes or removes the other, and steps down or leaves, all at once.
      const results = await Promise.all([
        api.members.changeRole({ path: { memberId: b.id }, token: a.token, payload: { role: "member" } }),
        api.members.changeRole({ path: { memberId: a.id }, token: b.token, payload: { role: "member" } }),
        round % 2 === 0 ? api.members.remove({ path: { memberId: a.id }, token: a.token }) : api.members.remove({ path: { memberId: b.id }, token: a.token }),
        round % 2 === 0 ? api.members.remove({ path: { memberId: b.id }, token: b.token }) : api.members.remove({ path: { memberId: a.id }, token: b.token })
      ])
      for (const result of results) expect([200, 204, 403, 404, 409]).toContain(result.status)
      const owners = ok(await api.members.list({ query: { role: "owner" }, token: org.member.token }), 200)
      expect(owners.items).toHaveLength(1)
    }
  })
})

describe("the organization boundary", () => {
  it("hides every member of another organization", async () => {
    const org = await Http.staffed(server.url)
    const outsider = await Http.staffed(server.url, "Outside")
    const id = org.member.membership.id
    for (const [method, path, body] of [
      ["GET", `/v1/members/${id}`, undefined],
      ["PATCH", `/v1/members/${id}`, { role: "admin" }],
      ["DELETE", `/v1/members/${id}`, undefined],
      ["POST", `/v1/members/${org.admin.membership.id}/transfer-ownership`, undefined]
    ] as const) {
      const response = await Http.request(server.url, method, path, { token: outsider.owner.token, body })
      expect([method, path, response.status, response.body]).toEqual([method, path, 404, expect.objectContaining({ error: "member_not_found" })])
    }
    const listed = ok(await api.members.list({ token: outsider.owner.token }), 200)
    expect(listed.items.map((m) => m.organizationId)).toEqual([outsider.organizationId, outsider.organizationId, outsider.organizationId])
    expect(ok(await api.members.get({ path: { memberId: id }, token: org.owner.token }), 200).member.role).toBe("member")
  })
})

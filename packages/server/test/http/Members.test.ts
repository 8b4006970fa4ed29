import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

const { del, get, patch, post } = Http.verbs(() => server.url)

describe("listing and reading members", () => {
  it("lists members oldest first with their name, email and role, filtered by role and text (for an owner: what a plain member sees is MemberDirectory.test.ts)", async () => {
    const org = await Http.staffed(server.url)
    const all = await get("/v1/members", { token: org.owner.token })
    expect(all.status).toBe(200)
    expect(all.body.nextCursor).toBeNull()
    expect(all.body.items.map((m: any) => [m.id, m.role, m.email, m.name])).toEqual([
      [org.owner.membership.id, "owner", org.owner.email, "Owner"],
      [org.admin.membership.id, "admin", org.admin.email, "Admin"],
      [org.member.membership.id, "member", org.member.email, "Member"]
    ])
    expect(all.body.items[0]).toMatchObject({ organizationId: org.organizationId, userId: org.owner.user.id, removedAt: null })

    const admins = await get("/v1/members?role=admin", { token: org.member.token })
    expect(admins.body.items.map((m: any) => m.id)).toEqual([org.admin.membership.id])
    const byText = await get(`/v1/members?q=${encodeURIComponent(org.member.email.slice(0, 12).toUpperCase())}`, { token: org.owner.token })
    expect(byText.body.items.map((m: any) => m.id)).toEqual([org.member.membership.id])
    const wildcard = await get("/v1/members?q=%25", { token: org.owner.token })
    expect(wildcard.body.items).toEqual([])
  })

  it("pages with a cursor", async () => {
    const org = await Http.staffed(server.url)
    const seen: Array<string> = []
    let cursor: string | null = null
    do {
      const page: Http.RawResponse = await get(`/v1/members?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { token: org.owner.token })
      expect(page.status).toBe(200)
      expect(page.body.items.length).toBeLessThanOrEqual(2)
      seen.push(...page.body.items.map((m: any) => m.id))
      cursor = page.body.nextCursor
    } while (cursor)
    expect(seen).toEqual([org.owner.membership.id, org.admin.membership.id, org.member.membership.id])
  })

  it("rejects bad filters with every bad field", async () => {
    const org = await Http.staffed(server.url)
    const bad = await get("/v1/members?role=boss&includeRemoved=maybe&limit=0", { token: org.owner.token })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toBe("invalid_request")
    expect(bad.body.details.map((d: any) => d.path[0]).sort()).toEqual(["includeRemoved", "limit", "role"])
    expect(bad.body.details.find((d: any) => d.path[0] === "role").message).toBe(
      'Expected "owner", "admin" or "member", actual "boss"'
    )
  })

  it("reads one member, and a member of another organization answers 404 member_not_found", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const one = await get(`/v1/members/${org.admin.membership.id}`, { token: org.owner.token })
    expect(one.status).toBe(200)
    expect(one.body.member).toMatchObject({ id: org.admin.membership.id, role: "admin", email: org.admin.email })
    const foreign = await get(`/v1/members/${org.admin.membership.id}`, { token: other.token })
    expect(foreign.status).toBe(404)
    expect(foreign.body).toEqual({ error: "member_not_found", message: "Member not found." })
    const malformed = await get("/v1/members/om_nope", { token: other.token })
    expect(malformed.status).toBe(400)
  })
})

describe("roles", () => {
  it("lists the built-in roles with what each may do", async () => {
    const org = await Http.staffed(server.url)
    const roles = await get("/v1/roles", { token: org.member.token })
    expect(roles.status).toBe(200)
    expect(roles.body.items.map((r: any) => r.role)).toEqual(["member", "admin", "owner"])
    expect(roles.body.items[2].capabilities).toContain("transfer ownership to an admin")
  })

  it("admins move people between member and admin; only owners touch the owner role", async () => {
    const org = await Http.staffed(server.url)
    const extra = await Http.join(server.url, org.owner.token, "member")
    const promote = await patch(`/v1/members/${extra.membership.id}`, { token: org.admin.token, body: { role: "admin" } })
    expect(promote.status).toBe(200)
    expect(promote.body.member).toMatchObject({ id: extra.membership.id, role: "admin" })
    const demote = await patch(`/v1/members/${extra.membership.id}`, { token: org.admin.token, body: { role: "member" } })
    expect(demote.body.member.role).toBe("member")

    const toOwner = await patch(`/v1/members/${extra.membership.id}`, { token: org.admin.token, body: { role: "owner" } })
    expect(toOwner.status).toBe(403)
    expect(toOwner.body.reason).toBe("insufficient_role")
    const demoteOwner = await patch(`/v1/members/${org.owner.membership.id}`, { token: org.admin.token, body: { role: "member" } })
    expect(demoteOwner.status).toBe(403)
    const byMember = await patch(`/v1/members/${extra.membership.id}`, { token: org.member.token, body: { role: "admin" } })
    expect(byMember.status).toBe(403)

    const coOwner = await patch(`/v1/members/${extra.membership.id}`, { token: org.owner.token, body: { role: "owner" } })
    expect(coOwner.body.member.role).toBe("owner")
    const stepDown = await patch(`/v1/members/${org.owner.membership.id}`, { token: org.owner.token, body: { role: "member" } })
    expect(stepDown.status).toBe(200)
    const lastOwner = await patch(`/v1/members/${extra.membership.id}`, { token: extra.token, body: { role: "admin" } })
    expect(lastOwner.status).toBe(409)
    expect(lastOwner.body).toEqual({
      error: "last_owner",
      message: "An organization keeps at least one owner: make someone else an owner first."
    })
    const me = await get("/v1/me", { token: org.owner.token })
    expect(me.body.membership.role).toBe("member")
  })

  it("validates the role", async () => {
    const org = await Http.staffed(server.url)
    const bad = await patch(`/v1/members/${org.member.membership.id}`, { token: org.owner.token, body: { role: "boss" } })
    expect(bad.status).toBe(400)
    expect(bad.body.details[0].path).toEqual(["role"])
    const unknown = await patch("/v1/members/om_01h455vb4pex5vsknk084sn02q", { token: org.owner.token, body: { role: "admin" } })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toBe("member_not_found")
  })

  it("transfers ownership to an admin only, and only by an owner", async () => {
    const org = await Http.staffed(server.url)
    const toMember = await post(`/v1/members/${org.member.membership.id}/transfer-ownership`, { token: org.owner.token })
    expect(toMember.status).toBe(409)
    expect(toMember.body.error).toBe("member_not_admin")
    const byAdmin = await post(`/v1/members/${org.admin.membership.id}/transfer-ownership`, { token: org.admin.token })
    expect(byAdmin.status).toBe(403)
    const transfer = await post(`/v1/members/${org.admin.membership.id}/transfer-ownership`, { token: org.owner.token })
    expect(transfer.status).toBe(200)
    expect(transfer.body.owner).toMatchObject({ id: org.admin.membership.id, role: "owner" })
    expect(transfer.body.previousOwner).toMatchObject({ id: org.owner.membership.id, role: "admin" })
    const owners = await get("/v1/members?role=owner", { token: org.member.token })
    expect(owners.body.items.map((m: any) => m.id)).toEqual([org.admin.membership.id])
    const back = await post(`/v1/members/${org.owner.membership.id}/transfer-ownership`, { token: org.owner.token })
    expect(back.status).toBe(403)
  })
})

describe("removing members", () => {
  it("is soft: the id stays readable, and the member's keys and sessions stop reaching the organization", async () => {
    const org = await Http.staffed(server.url)
    const key = await post("/v1/api-keys", { token: org.admin.token, body: { name: "script" } })
    expect((await get("/v1/members", { apiKey: key.body.key })).status).toBe(200)
    const team = await post("/v1/teams", { token: org.owner.token, body: { name: "Ops", memberIds: [org.admin.membership.id] } })

    const removed = await del(`/v1/members/${org.admin.membership.id}`, { token: org.owner.token })
    expect(removed.status).toBe(204)
    expect((await get("/v1/members", { apiKey: key.body.key })).status).toBe(401)
    const keys = await get("/v1/api-keys", { token: org.owner.token })
    expect(keys.body.items.map((k: any) => k.id)).not.toContain(key.body.apiKey.id)
    const session = await get("/v1/members", { token: org.admin.token })
    expect(session.status).toBe(404)
    expect(session.body).toMatchObject({ error: "organization_not_found", message: expect.stringMatching(/^You are not a member of any organization/) })
    expect((await get("/v1/me", { token: org.admin.token })).body.organization).toBeNull()

    const read = await get(`/v1/members/${org.admin.membership.id}`, { token: org.owner.token })
    expect(read.status).toBe(200)
    expect(read.body.member.removedAt).not.toBeNull()
    const listed = await get("/v1/members", { token: org.owner.token })
    expect(listed.body.items.map((m: any) => m.id)).not.toContain(org.admin.membership.id)
    const withRemoved = await get("/v1/members?includeRemoved=true", { token: org.owner.token })
    expect(withRemoved.body.items.map((m: any) => m.id)).toContain(org.admin.membership.id)
    expect((await get(`/v1/teams/${team.body.team.id}`, { token: org.owner.token })).body.team.memberIds).toEqual([])

    const again = await del(`/v1/members/${org.admin.membership.id}`, { token: org.owner.token })
    expect(again.status).toBe(404)
    expect(again.body.error).toBe("member_not_found")
    const roleOfRemoved = await patch(`/v1/members/${org.admin.membership.id}`, { token: org.owner.token, body: { role: "member" } })
    expect(roleOfRemoved.status).toBe(404)
  })

  it("members may leave; only admins remove others, only owners remove owners; the last owner stays", async () => {
    const org = await Http.staffed(server.url)
    const byMember = await del(`/v1/members/${org.admin.membership.id}`, { token: org.member.token })
    expect(byMember.status).toBe(403)
    const ownerByAdmin = await del(`/v1/members/${org.owner.membership.id}`, { token: org.admin.token })
    expect(ownerByAdmin.status).toBe(403)
    const lastOwner = await del(`/v1/members/${org.owner.membership.id}`, { token: org.owner.token })
    expect(lastOwner.status).toBe(409)
    expect(lastOwner.body.error).toBe("last_owner")
    expect((await del(`/v1/members/${org.member.membership.id}`, { token: org.member.token })).status).toBe(204)
    expect((await get("/v1/members", { token: org.member.token })).status).toBe(404)
  })
})

describe.runIf(TestDatabase.onPostgres)("concurrent changes (need real concurrency: Postgres only)", () => {
  it("never leave an organization without an owner", async () => {
    for (let round = 0; round < 4; round++) {
      const org = await Http.staffed(server.url)
      const second = await Http.join(server.url, org.owner.token, "admin", "Second")
      expect((await patch(`/v1/members/${second.membership.id}`, { token: org.owner.token, body: { role: "owner" } })).status).toBe(200)
      const a = { token: org.owner.token, id: org.owner.membership.id }
      const b = { token: second.token, id: second.membership.id }
      // Each owner demotes or removes the other, and steps down or leaves, all at once.
      const results = await Promise.all([
        patch(`/v1/members/${b.id}`, { token: a.token, body: { role: "member" } }),
        patch(`/v1/members/${a.id}`, { token: b.token, body: { role: "member" } }),
        round % 2 === 0 ? del(`/v1/members/${a.id}`, { token: a.token }) : del(`/v1/members/${b.id}`, { token: a.token }),
        round % 2 === 0 ? del(`/v1/members/${b.id}`, { token: b.token }) : del(`/v1/members/${a.id}`, { token: b.token })
      ])
      for (const result of results) expect([200, 204, 403, 404, 409]).toContain(result.status)
      const owners = await get("/v1/members?role=owner", { token: org.member.token })
      expect(owners.body.items).toHaveLength(1)
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
      expect([method, path, response.status, response.body.error]).toEqual([method, path, 404, "member_not_found"])
    }
    const listed = await get("/v1/members", { token: outsider.owner.token })
    expect(listed.body.items.map((m: any) => m.organizationId)).toEqual([outsider.organizationId, outsider.organizationId, outsider.organizationId])
    expect((await get(`/v1/members/${id}`, { token: org.owner.token })).body.member.role).toBe("member")
  })
})

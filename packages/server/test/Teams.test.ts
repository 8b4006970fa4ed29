import { Http, TestServer } from "@orgplane/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

const { del, get, patch, post } = Http.verbs(() => server.url)

describe("teams", () => {
  it("are created with members, read by every member, renamed and re-staffed by admins", async () => {
    const org = await Http.staffed(server.url)
    const created = await post("/v1/teams", {
      token: org.admin.token,
      body: { name: "  Platform ", memberIds: [org.member.membership.id, org.owner.membership.id, org.member.membership.id] }
    })
    expect(created.status).toBe(201)
    const team = created.body.team
    expect(team.id).toMatch(/^tem_[0-9a-z]{26}$/)
    expect(team).toMatchObject({
      organizationId: org.organizationId,
      name: "Platform",
      memberIds: [org.owner.membership.id, org.member.membership.id],
      createdByOrgMembershipId: org.admin.membership.id
    })

    const read = await get(`/v1/teams/${team.id}`, { token: org.member.token })
    expect(read.status).toBe(200)
    expect(read.body.team).toEqual(team)

    const renamed = await patch(`/v1/teams/${team.id}`, { token: org.admin.token, body: { name: "Infra" } })
    expect(renamed.status).toBe(200)
    expect(renamed.body.team).toMatchObject({ name: "Infra", memberIds: team.memberIds })
    expect(new Date(renamed.body.team.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(team.updatedAt).getTime())

    const replaced = await patch(`/v1/teams/${team.id}`, { token: org.owner.token, body: { memberIds: [org.admin.membership.id] } })
    expect(replaced.body.team.memberIds).toEqual([org.admin.membership.id])
    const emptied = await patch(`/v1/teams/${team.id}`, { token: org.owner.token, body: { memberIds: [] } })
    expect(emptied.body.team.memberIds).toEqual([])

    const added = await post(`/v1/teams/${team.id}/members`, {
      token: org.admin.token,
      body: { memberIds: [org.member.membership.id, org.admin.membership.id] }
    })
    expect(added.body.team.memberIds).toEqual([org.admin.membership.id, org.member.membership.id])
    const addedAgain = await post(`/v1/teams/${team.id}/members`, { token: org.admin.token, body: { memberIds: [org.member.membership.id] } })
    expect(addedAgain.body.team.memberIds).toEqual([org.admin.membership.id, org.member.membership.id])

    expect((await del(`/v1/teams/${team.id}/members/${org.member.membership.id}`, { token: org.admin.token })).status).toBe(204)
    expect((await del(`/v1/teams/${team.id}/members/${org.member.membership.id}`, { token: org.admin.token })).status).toBe(204)
    expect((await get(`/v1/teams/${team.id}`, { token: org.member.token })).body.team.memberIds).toEqual([org.admin.membership.id])
  })

  it("answers 409 team_exists for a duplicate name in the organization, whatever its case; other organizations may reuse it", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    expect((await post("/v1/teams", { token: org.owner.token, body: { name: "Design" } })).status).toBe(201)
    const duplicate = await post("/v1/teams", { token: org.admin.token, body: { name: "DESIGN" } })
    expect(duplicate.status).toBe(409)
    expect(duplicate.body).toEqual({ error: "team_exists", message: 'The organization already has a team named "DESIGN".' })
    const second = await post("/v1/teams", { token: org.owner.token, body: { name: "Research" } })
    const renamed = await patch(`/v1/teams/${second.body.team.id}`, { token: org.owner.token, body: { name: "design" } })
    expect(renamed.status).toBe(409)
    expect((await get(`/v1/teams/${second.body.team.id}`, { token: org.owner.token })).body.team.name).toBe("Research")
    expect((await post("/v1/teams", { token: other.token, body: { name: "Design" } })).status).toBe(201)
  })

  it("accepts only active members of the organization, and writes nothing otherwise", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const foreign = await post("/v1/teams", {
      token: org.owner.token,
      body: { name: "Mixed", memberIds: [org.member.membership.id, other.membership.id] }
    })
    expect(foreign.status).toBe(404)
    expect(foreign.body).toEqual({ error: "member_not_found", message: `${other.membership.id} is not a member of this organization.` })
    expect((await get("/v1/teams?q=Mixed", { token: org.owner.token })).body.items).toEqual([])

    const team = (await post("/v1/teams", { token: org.owner.token, body: { name: "Core", memberIds: [org.member.membership.id] } })).body.team
    const replace = await patch(`/v1/teams/${team.id}`, { token: org.owner.token, body: { name: "Renamed", memberIds: [other.membership.id] } })
    expect(replace.status).toBe(404)
    expect(replace.body.error).toBe("member_not_found")
    expect((await get(`/v1/teams/${team.id}`, { token: org.owner.token })).body.team).toMatchObject({
      name: "Core",
      memberIds: [org.member.membership.id]
    })

    expect((await del(`/v1/members/${org.admin.membership.id}`, { token: org.owner.token })).status).toBe(204)
    const removed = await post(`/v1/teams/${team.id}/members`, { token: org.owner.token, body: { memberIds: [org.admin.membership.id] } })
    expect(removed.status).toBe(404)
    expect(removed.body.error).toBe("member_not_found")
    const takeOutForeign = await del(`/v1/teams/${team.id}/members/${other.membership.id}`, { token: org.owner.token })
    expect(takeOutForeign.status).toBe(404)
    expect(takeOutForeign.body.error).toBe("member_not_found")
  })

  it("list by name with a cursor, filtered by text and by member", async () => {
    const org = await Http.staffed(server.url)
    for (const name of ["beta", "Alpha", "gamma", "Delta", "Éclair", "éa"]) {
      const body = name === "gamma" || name === "Alpha" ? { name, memberIds: [org.member.membership.id] } : { name }
      expect((await post("/v1/teams", { token: org.admin.token, body })).status).toBe(201)
    }
    const names: Array<string> = []
    let cursor: string | null = null
    do {
      const page: Http.RawResponse = await get(`/v1/teams?limit=3${cursor ? `&cursor=${cursor}` : ""}`, { token: org.member.token })
      expect(page.status).toBe(200)
      names.push(...page.body.items.map((t: any) => t.name))
      cursor = page.body.nextCursor
    } while (cursor)
    // Paging yields exactly the one-page order, accented names included (where they sort depends on the collation).
    const onePage = await get("/v1/teams?limit=100", { token: org.member.token })
    expect(names).toEqual(onePage.body.items.map((t: any) => t.name))
    expect(names.filter((name) => /^[a-z]+$/i.test(name))).toEqual(["Alpha", "beta", "Delta", "gamma"])
    expect([...names].sort()).toEqual(["Alpha", "Delta", "beta", "gamma", "Éclair", "éa"].sort())
    expect((await get("/v1/teams?q=ELT", { token: org.member.token })).body.items.map((t: any) => t.name)).toEqual(["Delta"])
    const mine = await get(`/v1/teams?memberId=${org.member.membership.id}`, { token: org.member.token })
    expect(mine.body.items.map((t: any) => t.name)).toEqual(["Alpha", "gamma"])
    const badCursor = await get("/v1/teams?cursor=nonsense", { token: org.member.token })
    expect(badCursor.status).toBe(400)
    expect(badCursor.body.details[0].path).toEqual(["cursor"])
  })

  it("are deleted with their memberships; the members stay", async () => {
    const org = await Http.staffed(server.url)
    const team = (await post("/v1/teams", { token: org.owner.token, body: { name: "Gone", memberIds: [org.member.membership.id] } })).body.team
    expect((await del(`/v1/teams/${team.id}`, { token: org.member.token })).status).toBe(403)
    expect((await del(`/v1/teams/${team.id}`, { token: org.admin.token })).status).toBe(204)
    const again = await get(`/v1/teams/${team.id}`, { token: org.owner.token })
    expect(again.status).toBe(404)
    expect(again.body).toEqual({ error: "team_not_found", message: "Team not found." })
    expect((await del(`/v1/teams/${team.id}`, { token: org.admin.token })).status).toBe(404)
    expect((await get(`/v1/members/${org.member.membership.id}`, { token: org.owner.token })).body.member.removedAt).toBeNull()
    expect((await post("/v1/teams", { token: org.owner.token, body: { name: "Gone" } })).status).toBe(201)
  })

  it("validate their bodies with every bad field", async () => {
    const org = await Http.staffed(server.url)
    const bad = await post("/v1/teams", { token: org.owner.token, body: { name: "   ", memberIds: ["tem_01h455vb4pex5vsknk084sn02q"] } })
    expect(bad.status).toBe(400)
    expect(bad.body.details.map((d: any) => d.path)).toEqual([["name"], ["memberIds", 0]])
    const tooMany = await post("/v1/teams", {
      token: org.owner.token,
      body: { name: "Big", memberIds: Array.from({ length: 501 }, () => org.member.membership.id) }
    })
    expect(tooMany.status).toBe(400)
    const team = (await post("/v1/teams", { token: org.owner.token, body: { name: "Valid" } })).body.team
    const empty = await patch(`/v1/teams/${team.id}`, { token: org.owner.token, body: {} })
    expect(empty.status).toBe(400)
    expect(empty.body.details[0].message).toBe("give name, memberIds or both")
    const noneToAdd = await post(`/v1/teams/${team.id}/members`, { token: org.owner.token, body: { memberIds: [] } })
    expect(noneToAdd.status).toBe(400)
    const longName = await post("/v1/teams", { token: org.owner.token, body: { name: "x".repeat(256) } })
    expect(longName.status).toBe(400)
  })
})

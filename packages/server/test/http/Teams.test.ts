import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  server = await TestServer.startSharingDatabase()
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
    expect(empty.body.details[0].message).toBe("give name, memberIds, externalKey or several")
    const noneToAdd = await post(`/v1/teams/${team.id}/members`, { token: org.owner.token, body: { memberIds: [] } })
    expect(noneToAdd.status).toBe(400)
    const longName = await post("/v1/teams", { token: org.owner.token, body: { name: "x".repeat(256) } })
    expect(longName.status).toBe(400)
  })
})

describe("external keys and directory-managed teams", () => {
  it("sets an external key on create and update, unique in the organization: 409 team_external_key_taken", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const created = await post("/v1/teams", { token: org.owner.token, body: { name: "Keyed", externalKey: "grp-1" } })
    expect(created.status).toBe(201)
    expect(created.body.team).toMatchObject({ externalKey: "grp-1", scimConnectionId: null })
    const taken = await post("/v1/teams", { token: org.owner.token, body: { name: "Keyed 2", externalKey: "grp-1" } })
    expect(taken.status).toBe(409)
    expect(taken.body.error).toBe("team_external_key_taken")
    // Another organization may use the same key.
    expect((await post("/v1/teams", { token: other.token, body: { name: "Keyed", externalKey: "grp-1" } })).status).toBe(201)

    const second = await post("/v1/teams", { token: org.owner.token, body: { name: "Second" } })
    expect(second.body.team.externalKey).toBeNull()
    const clash = await patch(`/v1/teams/${second.body.team.id}`, { token: org.owner.token, body: { externalKey: "grp-1" } })
    expect(clash.status).toBe(409)
    expect(clash.body.error).toBe("team_external_key_taken")
    const set = await patch(`/v1/teams/${second.body.team.id}`, { token: org.owner.token, body: { externalKey: "grp-2" } })
    expect(set.status).toBe(200)
    expect(set.body.team.externalKey).toBe("grp-2")
    const cleared = await patch(`/v1/teams/${created.body.team.id}`, { token: org.owner.token, body: { externalKey: null } })
    expect(cleared.body.team.externalKey).toBeNull()
  })

  it("refuses rename, member changes and delete of a team the directory manages: 409 team_managed_by_directory", async () => {
    const org = await Http.staffed(server.url)
    const team = (await post("/v1/teams", { token: org.owner.token, body: { name: "Directory", memberIds: [org.member.membership.id] } })).body.team
    // No SCIM endpoint on this branch: the test database is written ONLY as the trigger (a connection that manages
    // the team, as the directory's group sync would set it); every outcome is asserted through HTTP.
    const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
    const connectionId = `scc_01${Array.from({ length: 24 }, () => alphabet[Math.floor(Math.random() * 32)]).join("")}`
    await server.sql((sql) =>
      sql`INSERT INTO scim_connections (id, organization_id, name, group_mapping_mode, default_role, created_at, updated_at)
          VALUES (${connectionId}, ${org.organizationId}, ${`Directory ${connectionId}`}, 'create_teams', 'member', now(), now())`
    )
    await server.sql((sql) =>
      sql`UPDATE teams SET scim_connection_id = ${connectionId} WHERE organization_id = ${org.organizationId} AND id = ${team.id}`
    )
    const read = await get(`/v1/teams/${team.id}`, { token: org.member.token })
    expect(read.body.team.scimConnectionId).toBe(connectionId)

    const refusals = [
      await patch(`/v1/teams/${team.id}`, { token: org.owner.token, body: { name: "Renamed" } }),
      await patch(`/v1/teams/${team.id}`, { token: org.owner.token, body: { memberIds: [] } }),
      await post(`/v1/teams/${team.id}/members`, { token: org.owner.token, body: { memberIds: [org.admin.membership.id] } }),
      await del(`/v1/teams/${team.id}/members/${org.member.membership.id}`, { token: org.owner.token }),
      await del(`/v1/teams/${team.id}`, { token: org.owner.token })
    ]
    expect(refusals.map((r) => [r.status, r.body.error])).toEqual(Array(5).fill([409, "team_managed_by_directory"]))
    const after = await get(`/v1/teams/${team.id}`, { token: org.member.token })
    expect(after.body.team).toMatchObject({ name: "Directory", memberIds: [org.member.membership.id] })
    // The external key stays editable: it is what links a team to a group.
    expect((await patch(`/v1/teams/${team.id}`, { token: org.owner.token, body: { externalKey: "grp-dir" } })).status).toBe(200)

    // Released (the connection deleted: the foreign key sets it null), it is an ordinary team again.
    await server.sql((sql) => sql`DELETE FROM scim_connections WHERE organization_id = ${org.organizationId} AND id = ${connectionId}`)
    expect((await patch(`/v1/teams/${team.id}`, { token: org.owner.token, body: { name: "Renamed" } })).status).toBe(200)
    expect((await del(`/v1/teams/${team.id}`, { token: org.owner.token })).status).toBe(204)
  })
})

import type { TeamPage } from "@orgplane/schema"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  server = await TestServer.startSharingDatabase()
})
afterAll(() => server.close())

const { post } = Http.verbs(() => server.url)
const { members, teams } = calls(() => server.url)

describe("teams", () => {
  it("are created with members, read by every member, renamed and re-staffed by admins", async () => {
    const org = await Http.staffed(server.url)
    const { team } = ok(await teams.create({
      token: org.admin.token,
      payload: { name: "  Platform ", memberIds: [org.member.membership.id, org.owner.membership.id, org.member.membership.id] }
    }), 201)
    expect(team.id).toMatch(/^tem_[0-9a-z]{26}$/)
    expect(team).toMatchObject({
      organizationId: org.organizationId,
      name: "Platform",
      memberIds: [org.owner.membership.id, org.member.membership.id],
      createdByOrgMembershipId: org.admin.membership.id
    })

    const path = { teamId: team.id }
    expect(ok(await teams.get({ token: org.member.token, path }), 200).team).toEqual(team)

    const renamed = ok(await teams.update({ token: org.admin.token, path, payload: { name: "Infra" } }), 200).team
    expect(renamed).toMatchObject({ name: "Infra", memberIds: team.memberIds })
    expect(new Date(renamed.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(team.updatedAt).getTime())

    const replaced = ok(await teams.update({ token: org.owner.token, path, payload: { memberIds: [org.admin.membership.id] } }), 200)
    expect(replaced.team.memberIds).toEqual([org.admin.membership.id])
    const emptied = ok(await teams.update({ token: org.owner.token, path, payload: { memberIds: [] } }), 200)
    expect(emptied.team.memberIds).toEqual([])

    const added = ok(await teams.addMembers({ token: org.admin.token, path, payload: { memberIds: [org.member.membership.id, org.admin.membership.id] } }), 200)
    expect(added.team.memberIds).toEqual([org.admin.membership.id, org.member.membership.id])
    const addedAgain = ok(await teams.addMembers({ token: org.admin.token, path, payload: { memberIds: [org.member.membership.id] } }), 200)
    expect(addedAgain.team.memberIds).toEqual([org.admin.membership.id, org.member.membership.id])

    const member = { ...path, memberId: org.member.membership.id }
    expect((await teams.removeMember({ token: org.admin.token, path: member })).status).toBe(204)
    expect((await teams.removeMember({ token: org.admin.token, path: member })).status).toBe(204)
    expect(ok(await teams.get({ token: org.member.token, path }), 200).team.memberIds).toEqual([org.admin.membership.id])
  })

  it("answers 409 team_exists for a duplicate name in the organization, whatever its case; other organizations may reuse it", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    expect((await teams.create({ token: org.owner.token, payload: { name: "Design" } })).status).toBe(201)
    const duplicate = await teams.create({ token: org.admin.token, payload: { name: "DESIGN" } })
    expect(duplicate.status).toBe(409)
    expect(duplicate.body).toEqual({ error: "team_exists", message: 'The organization already has a team named "DESIGN".' })
    const path = { teamId: ok(await teams.create({ token: org.owner.token, payload: { name: "Research" } }), 201).team.id }
    const renamed = await teams.update({ token: org.owner.token, path, payload: { name: "design" } })
    expect(renamed.status).toBe(409)
    expect(ok(await teams.get({ token: org.owner.token, path }), 200).team.name).toBe("Research")
    expect((await teams.create({ token: other.token, payload: { name: "Design" } })).status).toBe(201)
  })

  it("accepts only active members of the organization, and writes nothing otherwise", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const foreign = await teams.create({
      token: org.owner.token,
      payload: { name: "Mixed", memberIds: [org.member.membership.id, other.membership.id] }
    })
    expect(foreign.status).toBe(404)
    expect(foreign.body).toEqual({ error: "member_not_found", message: `${other.membership.id} is not a member of this organization.` })
    expect(ok(await teams.list({ token: org.owner.token, query: { q: "Mixed" } }), 200).items).toEqual([])

    const path = { teamId: ok(await teams.create({ token: org.owner.token, payload: { name: "Core", memberIds: [org.member.membership.id] } }), 201).team.id }
    const replace = await teams.update({ token: org.owner.token, path, payload: { name: "Renamed", memberIds: [other.membership.id] } })
    expect([replace.status, replace.body]).toMatchObject([404, { error: "member_not_found" }])
    expect(ok(await teams.get({ token: org.owner.token, path }), 200).team).toMatchObject({
      name: "Core",
      memberIds: [org.member.membership.id]
    })

    expect((await members.remove({ token: org.owner.token, path: { memberId: org.admin.membership.id } })).status).toBe(204)
    const removed = await teams.addMembers({ token: org.owner.token, path, payload: { memberIds: [org.admin.membership.id] } })
    expect([removed.status, removed.body]).toMatchObject([404, { error: "member_not_found" }])
    const takeOutForeign = await teams.removeMember({ token: org.owner.token, path: { ...path, memberId: other.membership.id } })
    expect([takeOutForeign.status, takeOutForeign.body]).toMatchObject([404, { error: "member_not_found" }])
  })

  it("list by name with a cursor, filtered by text and by member", async () => {
    const org = await Http.staffed(server.url)
    for (const name of ["beta", "Alpha", "gamma", "Delta", "Éclair", "éa"]) {
      const payload = name === "gamma" || name === "Alpha" ? { name, memberIds: [org.member.membership.id] } : { name }
      expect((await teams.create({ token: org.admin.token, payload })).status).toBe(201)
    }
    const token = org.member.token
    const names: Array<string> = []
    let cursor: string | null = null
    do {
      const page: typeof TeamPage.Encoded = ok(await teams.list({ token, query: { limit: "3", ...(cursor === null ? {} : { cursor }) } }), 200)
      names.push(...page.items.map((team) => team.name))
      cursor = page.nextCursor
    } while (cursor)
    // Paging yields exactly the one-page order, accented names included (where they sort depends on the collation).
    const namesOf = async (query: { readonly q?: string; readonly memberId?: string; readonly limit?: string }) =>
      ok(await teams.list({ token, query }), 200).items.map((team) => team.name)
    expect(names).toEqual(await namesOf({ limit: "100" }))
    expect(names.filter((name) => /^[a-z]+$/i.test(name))).toEqual(["Alpha", "beta", "Delta", "gamma"])
    expect([...names].sort()).toEqual(["Alpha", "Delta", "beta", "gamma", "Éclair", "éa"].sort())
    expect(await namesOf({ q: "ELT" })).toEqual(["Delta"])
    expect(await namesOf({ memberId: org.member.membership.id })).toEqual(["Alpha", "gamma"])
    expect(invalid(await teams.list({ token, query: { cursor: "nonsense" } })).details[0]?.path).toEqual(["cursor"])
  })

  it("are deleted with their memberships; the members stay", async () => {
    const org = await Http.staffed(server.url)
    const path = { teamId: ok(await teams.create({ token: org.owner.token, payload: { name: "Gone", memberIds: [org.member.membership.id] } }), 201).team.id }
    expect((await teams.delete({ token: org.member.token, path })).status).toBe(403)
    expect((await teams.delete({ token: org.admin.token, path })).status).toBe(204)
    const again = await teams.get({ token: org.owner.token, path })
    expect(again.status).toBe(404)
    expect(again.body).toEqual({ error: "team_not_found", message: "Team not found." })
    expect((await teams.delete({ token: org.admin.token, path })).status).toBe(404)
    expect(ok(await members.get({ token: org.owner.token, path: { memberId: org.member.membership.id } }), 200).member.removedAt).toBeNull()
    expect((await teams.create({ token: org.owner.token, payload: { name: "Gone" } })).status).toBe(201)
  })

  it("validate their bodies with every bad field", async () => {
    const org = await Http.staffed(server.url)
    // Wire bodies the schema refuses: sent as they are, with Http.request's untyped body.
    const bad = await post("/v1/teams", { token: org.owner.token, body: { name: "   ", memberIds: ["tem_01h455vb4pex5vsknk084sn02q"] } })
    expect(invalid(bad).details.map((detail) => detail.path)).toEqual([["name"], ["memberIds", 0]])
    const tooMany = await teams.create({
      token: org.owner.token,
      payload: { name: "Big", memberIds: Array.from({ length: 501 }, () => org.member.membership.id) }
    })
    expect(tooMany.status).toBe(400)
    const path = { teamId: ok(await teams.create({ token: org.owner.token, payload: { name: "Valid" } }), 201).team.id }
    expect(invalid(await teams.update({ token: org.owner.token, path, payload: {} })).details[0]?.message).toBe("give name, memberIds, externalKey or several")
    expect((await teams.addMembers({ token: org.owner.token, path, payload: { memberIds: [] } })).status).toBe(400)
    expect((await teams.create({ token: org.owner.token, payload: { name: "x".repeat(256) } })).status).toBe(400)
  })
})

describe("external keys and directory-managed teams", () => {
  it("sets an external key on create and update, unique in the organization: 409 team_external_key_taken", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const token = org.owner.token
    const created = ok(await teams.create({ token, payload: { name: "Keyed", externalKey: "grp-1" } }), 201).team
    expect(created).toMatchObject({ externalKey: "grp-1", scimConnectionId: null })
    const taken = await teams.create({ token, payload: { name: "Keyed 2", externalKey: "grp-1" } })
    expect([taken.status, taken.body]).toMatchObject([409, { error: "team_external_key_taken" }])
    // Another organization may use the same key.
    expect((await teams.create({ token: other.token, payload: { name: "Keyed", externalKey: "grp-1" } })).status).toBe(201)

    const second = ok(await teams.create({ token, payload: { name: "Second" } }), 201).team
    expect(second.externalKey).toBeNull()
    const clash = await teams.update({ token, path: { teamId: second.id }, payload: { externalKey: "grp-1" } })
    expect([clash.status, clash.body]).toMatchObject([409, { error: "team_external_key_taken" }])
    const set = ok(await teams.update({ token, path: { teamId: second.id }, payload: { externalKey: "grp-2" } }), 200)
    expect(set.team.externalKey).toBe("grp-2")
    const cleared = ok(await teams.update({ token, path: { teamId: created.id }, payload: { externalKey: null } }), 200)
    expect(cleared.team.externalKey).toBeNull()
  })

  it("refuses rename, member changes and delete of a team the directory manages: 409 team_managed_by_directory", async () => {
    const org = await Http.staffed(server.url)
    const team = ok(await teams.create({ token: org.owner.token, payload: { name: "Directory", memberIds: [org.member.membership.id] } }), 201).team
    const path = { teamId: team.id }
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
    expect(ok(await teams.get({ token: org.member.token, path }), 200).team.scimConnectionId).toBe(connectionId)

    const token = org.owner.token
    const refusals = [
      await teams.update({ token, path, payload: { name: "Renamed" } }),
      await teams.update({ token, path, payload: { memberIds: [] } }),
      await teams.addMembers({ token, path, payload: { memberIds: [org.admin.membership.id] } }),
      await teams.removeMember({ token, path: { ...path, memberId: org.member.membership.id } }),
      await teams.delete({ token, path })
    ]
    expect(refusals.map((refused) => [refused.status, refused.body])).toMatchObject(Array(5).fill([409, { error: "team_managed_by_directory" }]))
    expect(ok(await teams.get({ token: org.member.token, path }), 200).team).toMatchObject({ name: "Directory", memberIds: [org.member.membership.id] })
    // The external key stays editable: it is what links a team to a group.
    expect((await teams.update({ token, path, payload: { externalKey: "grp-dir" } })).status).toBe(200)

    // Released (the connection deleted: the foreign key sets it null), it is an ordinary team again.
    await server.sql((sql) => sql`DELETE FROM scim_connections WHERE organization_id = ${org.organizationId} AND id = ${connectionId}`)
    expect((await teams.update({ token, path, payload: { name: "Renamed" } })).status).toBe(200)
    expect((await teams.delete({ token, path })).status).toBe(204)
  })
})

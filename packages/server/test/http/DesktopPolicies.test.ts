/**
 * Desktop policies: the enterprise plan on every management route, the default policy, partial updates, bounds,
 * the organization boundary, soft deletion, and the effective policy decided setting by setting.
 */
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let free: TestServer.RunningServer
let enterprise: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  ;[free, enterprise] = await Promise.all([TestServer.start(), TestServer.startSharingDatabase({ defaultPlan: "enterprise" })])
})
afterAll(() => Promise.all([free?.close(), enterprise?.close()]))

const { del, get, patch, post } = Http.verbs(() => enterprise.url)
const ok = Http.expectStatus

const fakeId = (prefix: string, n: number) => `${prefix}_${n.toString().padStart(26, "0")}`
const switches = [
  "allowCustomProviders",
  "allowPartnerModel",
  "allowMultipleWorkspaces",
  "allowControlSettings",
  "allowManageExtensions",
  "allowBuiltInExtensions",
  "allowAlphaUpdates",
  "showWelcomePage"
]

describe("without the enterprise plan", () => {
  it("every management route answers 402 desktop_policies, whatever the role; the effective policy is the built-in defaults", async () => {
    const org = await Http.staffed(free.url)
    const id = fakeId("dpo", 1)
    const routes: ReadonlyArray<[string, string, unknown?]> = [
      ["POST", "/v1/desktop-policies", { policyName: "P", policy: {} }],
      ["GET", "/v1/desktop-policies"],
      ["GET", `/v1/desktop-policies/${id}`],
      ["PATCH", `/v1/desktop-policies/${id}`, { policyName: "Q" }],
      ["DELETE", `/v1/desktop-policies/${id}`]
    ]
    for (const [method, path, body] of routes) {
      for (const who of [org.owner, org.member]) {
        const response = await Http.request(free.url, method, path, { token: who.token, body })
        expect([method, path, response.status, response.body]).toEqual([
          method,
          path,
          402,
          { error: "enterprise_plan_required", feature: "desktop_policies", message: expect.any(String) }
        ])
      }
    }
    const effective = ok<any>("effective", await Http.request(free.url, "GET", "/v1/me/desktop-policy", { token: org.member.token }), 200)
    expect(effective.effectivePolicy.policy).toEqual({
      ...Object.fromEntries(switches.map((key) => [key, true])),
      onboardingPrompts: [],
      onboardingPromptDescriptions: []
    })
    expect(effective.effectivePolicy.decidedBy.allowAlphaUpdates).toEqual({
      desktopPolicyId: null,
      policyName: "Built-in defaults",
      via: "default"
    })
  })
})

describe("with the enterprise plan", () => {
  it("has a default policy, all switches on, that cannot be deleted, disabled or assigned", async () => {
    const org = await Http.staffed(enterprise.url)
    const listed = ok<any>("list", await get("/v1/desktop-policies", { token: org.admin.token }), 200)
    expect(listed.items).toHaveLength(1)
    const fallback = listed.items[0]
    expect(fallback).toMatchObject({ isDefault: true, isEnabled: true, priority: 0, memberIds: [], teamIds: [], deletedAt: null })
    for (const key of switches) expect(fallback.policy[key]).toBe(true)

    const deleted = await del(`/v1/desktop-policies/${fallback.id}`, { token: org.owner.token })
    expect([deleted.status, deleted.body.error]).toEqual([409, "default_policy_required"])
    const disabled = await patch(`/v1/desktop-policies/${fallback.id}`, { token: org.owner.token, body: { isEnabled: false } })
    expect([disabled.status, disabled.body.error]).toEqual([409, "default_policy_required"])
    const assigned = await patch(`/v1/desktop-policies/${fallback.id}`, {
      token: org.owner.token,
      body: { priority: 5, memberIds: [org.member.membership.id] }
    })
    expect(assigned.status).toBe(400)
    expect(assigned.body.details.map((detail: any) => detail.path)).toEqual([["priority"], ["memberIds"]])

    // A new document for the default keeps every switch: those it leaves out are on.
    const changed = ok<any>(
      "changing the default",
      await patch(`/v1/desktop-policies/${fallback.id}`, { token: org.owner.token, body: { policy: { allowAlphaUpdates: false } } }),
      200
    ).desktopPolicy
    expect(changed.policy).toMatchObject({ allowAlphaUpdates: false, allowCustomProviders: true, showWelcomePage: true })
    const again = ok<any>("list", await get("/v1/desktop-policies", { token: org.admin.token }), 200)
    expect(again.items.map((item: any) => item.id)).toEqual([fallback.id])
  })

  it("are created, read, partially updated and soft-deleted by owners and admins, not members", async () => {
    const org = await Http.staffed(enterprise.url)
    const team = ok<any>("team", await post("/v1/teams", { token: org.owner.token, body: { name: "Platform" } }), 201).team
    const refused = await post("/v1/desktop-policies", { token: org.member.token, body: { policyName: "P", policy: {} } })
    expect([refused.status, refused.body.reason]).toEqual([403, "insufficient_role"])

    const created = ok<any>("create", await post("/v1/desktop-policies", {
      token: org.admin.token,
      body: {
        policyName: "  Locked down ",
        policy: { allowCustomProviders: false, onboardingPrompts: ["Set up", "Explore"], onboardingPromptDescriptions: ["", "Look"] },
        memberIds: [org.member.membership.id, org.member.membership.id],
        teamIds: [team.id, team.id]
      }
    }), 201).desktopPolicy
    expect(created).toMatchObject({
      organizationId: org.organizationId,
      policyName: "Locked down",
      isDefault: false,
      isEnabled: true,
      priority: 0,
      policy: { allowCustomProviders: false, onboardingPrompts: ["Set up", "Explore"], onboardingPromptDescriptions: ["", "Look"] },
      memberIds: [org.member.membership.id],
      teamIds: [team.id],
      createdByOrgMembershipId: org.admin.membership.id,
      deletedAt: null
    })
    expect(created.id).toMatch(/^dpo_[0-9a-z]{26}$/)
    expect(ok<any>("get", await get(`/v1/desktop-policies/${created.id}`, { token: org.owner.token }), 200).desktopPolicy).toEqual(created)

    // Only what is sent changes; assignments sent replace the old ones.
    const renamed = ok<any>("rename", await patch(`/v1/desktop-policies/${created.id}`, { token: org.owner.token, body: { policyName: "Strict" } }), 200)
      .desktopPolicy
    expect(renamed).toMatchObject({ ...created, policyName: "Strict", updatedAt: expect.any(String) })
    const reassigned = ok<any>("reassign", await patch(`/v1/desktop-policies/${created.id}`, {
      token: org.owner.token,
      body: { memberIds: [org.admin.membership.id], priority: 7, isEnabled: false }
    }), 200).desktopPolicy
    expect(reassigned).toMatchObject({ policyName: "Strict", memberIds: [org.admin.membership.id], teamIds: [team.id], priority: 7, isEnabled: false })
    expect(reassigned.policy).toEqual(created.policy)
    const cleared = ok<any>("clear", await patch(`/v1/desktop-policies/${created.id}`, { token: org.owner.token, body: { teamIds: [] } }), 200)
      .desktopPolicy
    expect(cleared.teamIds).toEqual([])

    const listed = ok<any>("list", await get("/v1/desktop-policies", { token: org.admin.token }), 200)
    expect(listed.items.map((item: any) => [item.isDefault, item.id])).toEqual([[true, expect.any(String)], [false, created.id]])

    // Soft deletion: gone from reads, the record kept with deleted_at.
    expect((await del(`/v1/desktop-policies/${created.id}`, { token: org.member.token })).status).toBe(403)
    expect((await del(`/v1/desktop-policies/${created.id}`, { token: org.admin.token })).status).toBe(204)
    for (const response of [
      await get(`/v1/desktop-policies/${created.id}`, { token: org.owner.token }),
      await patch(`/v1/desktop-policies/${created.id}`, { token: org.owner.token, body: { policyName: "Back" } }),
      await del(`/v1/desktop-policies/${created.id}`, { token: org.owner.token })
    ]) {
      expect([response.status, response.body.error]).toEqual([404, "desktop_policy_not_found"])
    }
    expect(ok<any>("list", await get("/v1/desktop-policies", { token: org.admin.token }), 200).items).toHaveLength(1)
    const rows = await enterprise.sql((sql) =>
      sql<{ deletedAt: Date | null; isEnabled: boolean }>`
        SELECT deleted_at, is_enabled FROM desktop_policies WHERE organization_id = ${org.organizationId} AND id = ${created.id}`
    )
    expect(rows).toHaveLength(1)
    expect(rows[0].deletedAt).toBeInstanceOf(Date)
    expect(rows[0].isEnabled).toBe(false)
  })

  it("are managed by owners and admins only: members get 403 on every management route, and read their effective policy", async () => {
    const org = await Http.staffed(enterprise.url)
    const target = async () =>
      ok<any>("create", await post("/v1/desktop-policies", { token: org.owner.token, body: { policyName: "T", policy: {} } }), 201).desktopPolicy.id
    const routes = (id: string): ReadonlyArray<[string, string, unknown?]> => [
      ["POST", "/v1/desktop-policies", { policyName: "P", policy: {} }],
      ["GET", "/v1/desktop-policies"],
      ["GET", `/v1/desktop-policies/${id}`],
      ["PATCH", `/v1/desktop-policies/${id}`, { policyName: "Q" }],
      ["DELETE", `/v1/desktop-policies/${id}`]
    ]
    const statuses: Array<[string, string, string, number]> = []
    for (const role of ["owner", "admin", "member"] as const) {
      for (const [method, path, body] of routes(await target())) {
        const response = await Http.request(enterprise.url, method, path, { token: org[role].token, body })
        statuses.push([role, method, path.replace(/dpo_\w+/, ":id"), response.status])
      }
    }
    const expected = { POST: 201, GET: 200, PATCH: 200, DELETE: 204 } as Record<string, number>
    expect(statuses).toEqual(statuses.map(([role, method, path]) => [role, method, path, role === "member" ? 403 : expected[method]]))
    const mine = await get("/v1/me/desktop-policy", { token: org.member.token })
    expect(mine.status).toBe(200)
  })

  it("refuses bad bodies with every bad field's path", async () => {
    const org = await Http.staffed(enterprise.url)
    const memberIds = Array.from({ length: 501 }, (_, i) => fakeId("om", i))
    const bad = await post("/v1/desktop-policies", {
      token: org.owner.token,
      body: { policyName: "  ", policy: { allowCustomProviders: "no" }, priority: 1000001, memberIds, teamIds: ["tem_x"] }
    })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toBe("invalid_request")
    const paths = bad.body.details.map((detail: any) => JSON.stringify(detail.path))
    for (const path of [["policyName"], ["policy", "allowCustomProviders"], ["priority"], ["memberIds"], ["teamIds", 0]]) {
      expect(paths).toContain(JSON.stringify(path))
    }
    const missing = await post("/v1/desktop-policies", { token: org.owner.token, body: { priority: 1 } })
    expect(missing.status).toBe(400)
    expect(missing.body.details.map((detail: any) => detail.path)).toEqual(expect.arrayContaining([["policyName"], ["policy"]]))
    const unknown = await post("/v1/desktop-policies", { token: org.owner.token, body: { policyName: "P", policy: { allowEverything: true } } })
    expect(unknown.status).toBe(400)
    const prompts = await post("/v1/desktop-policies", {
      token: org.owner.token,
      body: { policyName: "P", policy: { onboardingPrompts: ["a", "b", "c", "d"], onboardingPromptDescriptions: ["x".repeat(121)] } }
    })
    expect(prompts.status).toBe(400)
    expect(prompts.body.details.map((detail: any) => detail.path)).toEqual(
      expect.arrayContaining([["policy", "onboardingPrompts"], ["policy", "onboardingPromptDescriptions", 0]])
    )
    const created = ok<any>("create", await post("/v1/desktop-policies", { token: org.owner.token, body: { policyName: "P", policy: {}, priority: 1000000 } }), 201)
    const badPatch = await patch(`/v1/desktop-policies/${created.desktopPolicy.id}`, { token: org.owner.token, body: { priority: -1, policyName: "" } })
    expect(badPatch.status).toBe(400)
    expect(badPatch.body.details.map((detail: any) => detail.path)).toEqual(expect.arrayContaining([["priority"], ["policyName"]]))
  })

  it("answers 404 for another organization's members, teams and policies, naming the ids", async () => {
    const [a, b] = await Promise.all([Http.staffed(enterprise.url, "Alpha"), Http.staffed(enterprise.url, "Beta")])
    const bTeam = ok<any>("team", await post("/v1/teams", { token: b.owner.token, body: { name: "Beta team" } }), 201).team
    const foreignMembers = await post("/v1/desktop-policies", {
      token: a.owner.token,
      body: { policyName: "P", policy: {}, memberIds: [a.member.membership.id, b.member.membership.id, b.admin.membership.id] }
    })
    expect([foreignMembers.status, foreignMembers.body.error]).toEqual([404, "member_not_found"])
    expect(foreignMembers.body.message).toContain(b.member.membership.id)
    expect(foreignMembers.body.message).toContain(b.admin.membership.id)
    expect(foreignMembers.body.message).not.toContain(a.member.membership.id)
    const foreignTeam = await post("/v1/desktop-policies", { token: a.owner.token, body: { policyName: "P", policy: {}, teamIds: [bTeam.id] } })
    expect([foreignTeam.status, foreignTeam.body.error]).toEqual([404, "team_not_found"])
    expect(foreignTeam.body.message).toContain(bTeam.id)

    const bPolicy = ok<any>("create", await post("/v1/desktop-policies", { token: b.owner.token, body: { policyName: "B", policy: {} } }), 201)
      .desktopPolicy
    for (const response of [
      await get(`/v1/desktop-policies/${bPolicy.id}`, { token: a.owner.token }),
      await patch(`/v1/desktop-policies/${bPolicy.id}`, { token: a.owner.token, body: { policyName: "Taken" } }),
      await del(`/v1/desktop-policies/${bPolicy.id}`, { token: a.owner.token })
    ]) {
      expect([response.status, response.body.error]).toEqual([404, "desktop_policy_not_found"])
    }
    expect(ok<any>("get", await get(`/v1/desktop-policies/${bPolicy.id}`, { token: b.owner.token }), 200).desktopPolicy).toEqual(bPolicy)
    const aList = ok<any>("list", await get("/v1/desktop-policies", { token: a.owner.token }), 200)
    expect(aList.items.map((item: any) => item.id)).not.toContain(bPolicy.id)
  })

  it("resolve each switch by priority (ties: older first) across direct and team assignments, then the default", async () => {
    const org = await Http.staffed(enterprise.url)
    const me = org.member
    const team = ok<any>("team", await post("/v1/teams", { token: org.owner.token, body: { name: "Devs", memberIds: [me.membership.id] } }), 201)
      .team
    const otherTeam = ok<any>("team", await post("/v1/teams", { token: org.owner.token, body: { name: "Others" } }), 201).team
    const create = async (body: Record<string, unknown>) =>
      ok<any>("create", await post("/v1/desktop-policies", { token: org.owner.token, body }), 201).desktopPolicy

    // Nothing assigned yet: the default decides everything.
    const before = ok<any>("effective", await get("/v1/me/desktop-policy", { token: me.token }), 200).effectivePolicy
    const fallback = ok<any>("list", await get("/v1/desktop-policies", { token: org.owner.token }), 200).items[0]
    for (const key of switches) {
      expect(before.policy[key]).toBe(true)
      expect(before.decidedBy[key]).toEqual({ desktopPolicyId: fallback.id, policyName: fallback.policyName, via: "default" })
    }
    await patch(`/v1/desktop-policies/${fallback.id}`, { token: org.owner.token, body: { policy: { allowPartnerModel: false } } })

    const direct = await create({ policyName: "Direct", priority: 10, policy: { allowAlphaUpdates: false }, memberIds: [me.membership.id] })
    const viaTeam = await create({
      policyName: "Team",
      priority: 10,
      policy: { allowAlphaUpdates: true, showWelcomePage: false, onboardingPrompts: ["Hello", "Next"], onboardingPromptDescriptions: ["Start here"] },
      teamIds: [team.id]
    })
    const higher = await create({ policyName: "Higher", priority: 20, policy: { allowCustomProviders: false }, teamIds: [team.id] })
    await create({ policyName: "Disabled", priority: 100, isEnabled: false, policy: { allowCustomProviders: true }, memberIds: [me.membership.id] })
    await create({ policyName: "Not mine", priority: 1000, policy: { allowManageExtensions: false }, teamIds: [otherTeam.id], memberIds: [org.admin.membership.id] })

    const effective = ok<any>("effective", await get("/v1/me/desktop-policy", { token: me.token }), 200).effectivePolicy
    const source = (policy: any, via: string) => ({ desktopPolicyId: policy.id, policyName: policy.policyName, via })
    expect(effective.policy).toEqual({
      allowCustomProviders: false,
      allowPartnerModel: false,
      allowMultipleWorkspaces: true,
      allowControlSettings: true,
      allowManageExtensions: true,
      allowBuiltInExtensions: true,
      allowAlphaUpdates: false,
      showWelcomePage: false,
      onboardingPrompts: ["Hello", "Next"],
      onboardingPromptDescriptions: ["Start here", ""]
    })
    expect(effective.decidedBy).toMatchObject({
      allowCustomProviders: source(higher, "team"),
      allowPartnerModel: { desktopPolicyId: fallback.id, via: "default" },
      allowManageExtensions: { desktopPolicyId: fallback.id, via: "default" },
      allowAlphaUpdates: source(direct, "member"),
      showWelcomePage: source(viaTeam, "team"),
      onboardingPrompts: source(viaTeam, "team")
    })

    // The admin gets "Not mine" directly; the owner only the default.
    const admin = ok<any>("effective", await get("/v1/me/desktop-policy", { token: org.admin.token }), 200).effectivePolicy
    expect([admin.policy.allowManageExtensions, admin.decidedBy.allowManageExtensions.via]).toEqual([false, "member"])
    const owner = ok<any>("effective", await get("/v1/me/desktop-policy", { token: org.owner.token }), 200).effectivePolicy
    expect(owner.policy).toMatchObject({ allowManageExtensions: true, allowPartnerModel: false, allowCustomProviders: true })

    // Without the older tie-winner, the team policy decides; leaving the team hands it to the default.
    expect((await del(`/v1/desktop-policies/${direct.id}`, { token: org.owner.token })).status).toBe(204)
    const afterDelete = ok<any>("effective", await get("/v1/me/desktop-policy", { token: me.token }), 200).effectivePolicy
    expect([afterDelete.policy.allowAlphaUpdates, afterDelete.decidedBy.allowAlphaUpdates]).toEqual([true, source(viaTeam, "team")])
    ok("leaving", await patch(`/v1/teams/${team.id}`, { token: org.owner.token, body: { memberIds: [] } }), 200)
    const alone = ok<any>("effective", await get("/v1/me/desktop-policy", { token: me.token }), 200).effectivePolicy
    expect(alone.policy).toMatchObject({ allowAlphaUpdates: true, allowCustomProviders: true, showWelcomePage: true, onboardingPrompts: [] })
    expect(alone.decidedBy.allowAlphaUpdates.via).toBe("default")
  })
})

/**
 * Desktop policies: the enterprise plan on every management route, the default policy, partial updates, bounds,
 * the organization boundary, soft deletion, and the effective policy decided setting by setting.
 */
import type { CreateDesktopPolicyRequest, DesktopPolicy } from "@orgplane/schema"
import { calls, invalid, ok, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let free: TestServer.RunningServer
let enterprise: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  ;[free, enterprise] = await Promise.all([TestServer.start(), TestServer.startSharingDatabase({ defaultPlan: "enterprise" })])
})
afterAll(() => Promise.all([free?.close(), enterprise?.close()]))

const { post } = Http.verbs(() => enterprise.url)
const { desktopPolicies, teams } = calls(() => enterprise.url)

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
] as const

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
    const effective = ok(await calls(free.url).desktopPolicies.effective({ token: org.member.token }), 200)
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
    const listed = ok(await desktopPolicies.list({ token: org.admin.token }), 200)
    expect(listed.items).toHaveLength(1)
    const fallback = listed.items[0]
    expect(fallback).toMatchObject({ isDefault: true, isEnabled: true, priority: 0, memberIds: [], teamIds: [], deletedAt: null })
    for (const key of switches) expect(fallback.policy[key]).toBe(true)

    const path = { desktopPolicyId: fallback.id }
    expect(refusal(await desktopPolicies.delete({ token: org.owner.token, path }), 409)).toMatchObject({ error: "default_policy_required" })
    expect(refusal(await desktopPolicies.update({ token: org.owner.token, path, payload: { isEnabled: false } }), 409))
      .toMatchObject({ error: "default_policy_required" })
    const assigned = await desktopPolicies.update({ token: org.owner.token, path, payload: { priority: 5, memberIds: [org.member.membership.id] } })
    expect(assigned.status).toBe(400)
    expect(invalid(assigned).details.map((detail) => detail.path)).toEqual([["priority"], ["memberIds"]])

    // A new document for the default keeps every switch: those it leaves out are on.
    const changed = ok(await desktopPolicies.update({ token: org.owner.token, path, payload: { policy: { allowAlphaUpdates: false } } }), 200)
      .desktopPolicy
    expect(changed.policy).toMatchObject({ allowAlphaUpdates: false, allowCustomProviders: true, showWelcomePage: true })
    const again = ok(await desktopPolicies.list({ token: org.admin.token }), 200)
    expect(again.items.map((item) => item.id)).toEqual([fallback.id])
  })

  it("are created, read, partially updated and soft-deleted by owners and admins, not members", async () => {
    const org = await Http.staffed(enterprise.url)
    const team = ok(await teams.create({ token: org.owner.token, payload: { name: "Platform" } }), 201).team
    const refused = await desktopPolicies.create({ token: org.member.token, payload: { policyName: "P", policy: {} } })
    expect([refused.status, refused.body]).toMatchObject([403, { reason: "insufficient_role" }])

    const created = ok(await desktopPolicies.create({
      token: org.admin.token,
      payload: {
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
    const path = { desktopPolicyId: created.id }
    expect(ok(await desktopPolicies.get({ token: org.owner.token, path }), 200).desktopPolicy).toEqual(created)

    // Only what is sent changes; assignments sent replace the old ones.
    const renamed = ok(await desktopPolicies.update({ token: org.owner.token, path, payload: { policyName: "Strict" } }), 200).desktopPolicy
    expect(renamed).toMatchObject({ ...created, policyName: "Strict", updatedAt: expect.any(String) })
    const reassigned = ok(await desktopPolicies.update({
      token: org.owner.token,
      path,
      payload: { memberIds: [org.admin.membership.id], priority: 7, isEnabled: false }
    }), 200).desktopPolicy
    expect(reassigned).toMatchObject({ policyName: "Strict", memberIds: [org.admin.membership.id], teamIds: [team.id], priority: 7, isEnabled: false })
    expect(reassigned.policy).toEqual(created.policy)
    const cleared = ok(await desktopPolicies.update({ token: org.owner.token, path, payload: { teamIds: [] } }), 200).desktopPolicy
    expect(cleared.teamIds).toEqual([])

    const listed = ok(await desktopPolicies.list({ token: org.admin.token }), 200)
    expect(listed.items.map((item) => [item.isDefault, item.id])).toEqual([[true, expect.any(String)], [false, created.id]])

    // Soft deletion: gone from reads, the record kept with deleted_at.
    expect((await desktopPolicies.delete({ token: org.member.token, path })).status).toBe(403)
    expect((await desktopPolicies.delete({ token: org.admin.token, path })).status).toBe(204)
    for (const refused of [
      refusal(await desktopPolicies.get({ token: org.owner.token, path }), 404),
      refusal(await desktopPolicies.update({ token: org.owner.token, path, payload: { policyName: "Back" } }), 404),
      refusal(await desktopPolicies.delete({ token: org.owner.token, path }), 404)
    ]) {
      expect(refused).toMatchObject({ error: "desktop_policy_not_found" })
    }
    expect(ok(await desktopPolicies.list({ token: org.admin.token }), 200).items).toHaveLength(1)
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
      ok(await desktopPolicies.create({ token: org.owner.token, payload: { policyName: "T", policy: {} } }), 201).desktopPolicy.id
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
    const mine = await desktopPolicies.effective({ token: org.member.token })
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
    const badBody = invalid(bad)
    expect(badBody.error).toBe("invalid_request")
    const paths = badBody.details.map((detail) => JSON.stringify(detail.path))
    for (const path of [["policyName"], ["policy", "allowCustomProviders"], ["priority"], ["memberIds"], ["teamIds", 0]]) {
      expect(paths).toContain(JSON.stringify(path))
    }
    const missing = await post("/v1/desktop-policies", { token: org.owner.token, body: { priority: 1 } })
    expect(missing.status).toBe(400)
    expect(invalid(missing).details.map((detail) => detail.path)).toEqual(expect.arrayContaining([["policyName"], ["policy"]]))
    const unknown = await post("/v1/desktop-policies", { token: org.owner.token, body: { policyName: "P", policy: { allowEverything: true } } })
    expect(unknown.status).toBe(400)
    const prompts = await desktopPolicies.create({
      token: org.owner.token,
      payload: { policyName: "P", policy: { onboardingPrompts: ["a", "b", "c", "d"], onboardingPromptDescriptions: ["x".repeat(121)] } }
    })
    expect(prompts.status).toBe(400)
    expect(invalid(prompts).details.map((detail) => detail.path)).toEqual(
      expect.arrayContaining([["policy", "onboardingPrompts"], ["policy", "onboardingPromptDescriptions", 0]])
    )
    const created = ok(await desktopPolicies.create({ token: org.owner.token, payload: { policyName: "P", policy: {}, priority: 1000000 } }), 201)
    const badPatch = await desktopPolicies.update({
      token: org.owner.token,
      path: { desktopPolicyId: created.desktopPolicy.id },
      payload: { priority: -1, policyName: "" }
    })
    expect(badPatch.status).toBe(400)
    expect(invalid(badPatch).details.map((detail) => detail.path)).toEqual(expect.arrayContaining([["priority"], ["policyName"]]))
  })

  it("answers 404 for another organization's members, teams and policies, naming the ids", async () => {
    const [a, b] = await Promise.all([Http.staffed(enterprise.url, "Alpha"), Http.staffed(enterprise.url, "Beta")])
    const bTeam = ok(await teams.create({ token: b.owner.token, payload: { name: "Beta team" } }), 201).team
    const foreignMembers = refusal(await desktopPolicies.create({
      token: a.owner.token,
      payload: { policyName: "P", policy: {}, memberIds: [a.member.membership.id, b.member.membership.id, b.admin.membership.id] }
    }), 404)
    expect(foreignMembers).toMatchObject({ error: "member_not_found", message: expect.stringContaining(b.member.membership.id) })
    expect(foreignMembers).toMatchObject({ message: expect.stringContaining(b.admin.membership.id) })
    expect(foreignMembers).toMatchObject({ message: expect.not.stringContaining(a.member.membership.id) })
    const foreignTeam = refusal(await desktopPolicies.create({ token: a.owner.token, payload: { policyName: "P", policy: {}, teamIds: [bTeam.id] } }), 404)
    expect(foreignTeam).toMatchObject({ error: "team_not_found", message: expect.stringContaining(bTeam.id) })

    const bPolicy = ok(await desktopPolicies.create({ token: b.owner.token, payload: { policyName: "B", policy: {} } }), 201).desktopPolicy
    const path = { desktopPolicyId: bPolicy.id }
    for (const refused of [
      refusal(await desktopPolicies.get({ token: a.owner.token, path }), 404),
      refusal(await desktopPolicies.update({ token: a.owner.token, path, payload: { policyName: "Taken" } }), 404),
      refusal(await desktopPolicies.delete({ token: a.owner.token, path }), 404)
    ]) {
      expect(refused).toMatchObject({ error: "desktop_policy_not_found" })
    }
    expect(ok(await desktopPolicies.get({ token: b.owner.token, path }), 200).desktopPolicy).toEqual(bPolicy)
    const aList = ok(await desktopPolicies.list({ token: a.owner.token }), 200)
    expect(aList.items.map((item) => item.id)).not.toContain(bPolicy.id)
  })

  it("resolve each switch by priority (ties: older first) across direct and team assignments, then the default", async () => {
    const org = await Http.staffed(enterprise.url)
    const me = org.member
    const team = ok(await teams.create({ token: org.owner.token, payload: { name: "Devs", memberIds: [me.membership.id] } }), 201).team
    const otherTeam = ok(await teams.create({ token: org.owner.token, payload: { name: "Others" } }), 201).team
    const create = async (payload: typeof CreateDesktopPolicyRequest.Encoded) =>
      ok(await desktopPolicies.create({ token: org.owner.token, payload }), 201).desktopPolicy
    const effectiveOf = async (token: string) => ok(await desktopPolicies.effective({ token }), 200).effectivePolicy

    // Nothing assigned yet: the default decides everything.
    const before = await effectiveOf(me.token)
    const fallback = ok(await desktopPolicies.list({ token: org.owner.token }), 200).items[0]
    for (const key of switches) {
      expect(before.policy[key]).toBe(true)
      expect(before.decidedBy[key]).toEqual({ desktopPolicyId: fallback.id, policyName: fallback.policyName, via: "default" })
    }
    await desktopPolicies.update({ token: org.owner.token, path: { desktopPolicyId: fallback.id }, payload: { policy: { allowPartnerModel: false } } })

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

    const effective = await effectiveOf(me.token)
    const source = (policy: typeof DesktopPolicy.Encoded, via: string) => ({ desktopPolicyId: policy.id, policyName: policy.policyName, via })
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
    const admin = await effectiveOf(org.admin.token)
    expect([admin.policy.allowManageExtensions, admin.decidedBy.allowManageExtensions.via]).toEqual([false, "member"])
    const owner = await effectiveOf(org.owner.token)
    expect(owner.policy).toMatchObject({ allowManageExtensions: true, allowPartnerModel: false, allowCustomProviders: true })

    // Without the older tie-winner, the team policy decides; leaving the team hands it to the default.
    expect((await desktopPolicies.delete({ token: org.owner.token, path: { desktopPolicyId: direct.id } })).status).toBe(204)
    const afterDelete = await effectiveOf(me.token)
    expect([afterDelete.policy.allowAlphaUpdates, afterDelete.decidedBy.allowAlphaUpdates]).toEqual([true, source(viaTeam, "team")])
    ok(await teams.update({ token: org.owner.token, path: { teamId: team.id }, payload: { memberIds: [] } }), 200)
    const alone = await effectiveOf(me.token)
    expect(alone.policy).toMatchObject({ allowAlphaUpdates: true, allowCustomProviders: true, showWelcomePage: true, onboardingPrompts: [] })
    expect(alone.decidedBy.allowAlphaUpdates.via).toBe("default")
  })
})

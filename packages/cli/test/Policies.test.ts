/**
 * `orgplane policies`: the CLI in-process (see Harness.ts) against real servers (RealServer.ts), one on the free plan
 * and one on the enterprise plan.
 */
import { DesktopPolicyPage, TeamResponse } from "@orgplane/schema"
import * as Http from "../../../packages/testkit/src/Http.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, wire } from "./Harness.js"
import * as RealServer from "./RealServer.js"

let free: RealServer.RealServer
let enterprise: RealServer.RealServer

beforeAll(async () => {
  ;[free, enterprise] = await Promise.all([RealServer.start(), RealServer.start({ ORGPLANE_DEFAULT_PLAN: "enterprise" })])
})
afterAll(async () => {
  await Promise.all([free?.close(), enterprise?.close()])
  await cleanup()
})

describe("orgplane policies", { timeout: 120_000 }, () => {
  it("creates, updates, lists, reads and deletes desktop policies, and shows the effective one", async () => {
    const org = await Http.staffed(enterprise.url)
    const team = Http.expectStatus<typeof TeamResponse.Encoded>("team", await Http.request(enterprise.url, "POST", "/v1/teams", {
      token: org.owner.token,
      body: { name: "Devs", memberIds: [org.member.membership.id] }
    }), 201).team
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: enterprise.url, ORGPLANE_TOKEN: org.owner.token }

    const created = await cli([
      "policies", "create", "Locked", "--policy", "{\"allowAlphaUpdates\":false}", "--priority", "5",
      "--team", team.id, "--team", team.id, "--json"
    ], env)
    expect(created.code, created.stderr).toBe(0)
    const policy = json(created).desktopPolicy
    expect(policy).toMatchObject({ policyName: "Locked", priority: 5, teamIds: [team.id], policy: { allowAlphaUpdates: false } })

    const updated = await cli(["policies", "update", policy.id, "--name", "Strict", "--member", org.admin.membership.id, "--json"], env)
    expect(updated.code, updated.stderr).toBe(0)
    expect(json(updated).desktopPolicy).toMatchObject({ policyName: "Strict", memberIds: [org.admin.membership.id], teamIds: [team.id] })
    const cleared = await cli(["policies", "update", policy.id, "--clear-teams", "--enabled", "false", "--json"], env)
    expect(json(cleared).desktopPolicy).toMatchObject({ teamIds: [], isEnabled: false, memberIds: [org.admin.membership.id] })
    await cli(["policies", "update", policy.id, "--team", team.id, "--enabled", "true"], env)

    const listed = await cli(["policies", "list", "--json"], env)
    expect(wire(DesktopPolicyPage, listed).items.map((item) => item.policyName)).toEqual(["Default desktop policy", "Strict"])
    const table = await cli(["policies", "list"], env)
    expect(table.stdout).toContain("Strict")
    const read = await cli(["policies", "get", policy.id], env)
    expect(read.code, read.stderr).toBe(0)
    expect(read.stdout).toContain("allowAlphaUpdates")

    const effective = await cli(["policies", "effective", "--json"], { ...env, ORGPLANE_TOKEN: org.member.token })
    expect(effective.code, effective.stderr).toBe(0)
    expect(json(effective).effectivePolicy.decidedBy.allowAlphaUpdates).toEqual({ desktopPolicyId: policy.id, policyName: "Strict", via: "team" })
    const human = await cli(["policies", "effective"], { ...env, ORGPLANE_TOKEN: org.member.token })
    expect(human.stdout).toContain("allowAlphaUpdates: false  (Strict, team")

    const badJson = await cli(["policies", "create", "Bad", "--policy", "{\"allowEverything\":true}"], env)
    expect(badJson.code).toBe(2)
    expect(badJson.stderr).toContain("--policy")
    const badPriority = await cli(["policies", "create", "Bad", "--policy", "{}", "--priority", "1000001"], env)
    expect(badPriority.code).toBe(2)

    const deleted = await cli(["policies", "delete", policy.id, "--json"], env)
    expect(json(deleted)).toEqual({ ok: true, deleted: policy.id })
    const gone = await cli(["policies", "get", policy.id, "--json"], env)
    expect(gone.code).not.toBe(0)
    expect(gone.stderr + gone.stdout).toContain("desktop_policy_not_found")
  })

  it("reports the enterprise plan on a free organization, and the built-in defaults as the effective policy", async () => {
    const owner = await Http.owner(free.url)
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: free.url, ORGPLANE_TOKEN: owner.token }
    const listed = await cli(["policies", "list", "--json"], env)
    expect(listed.code).not.toBe(0)
    expect(listed.stderr + listed.stdout).toContain("enterprise_plan_required")
    const effective = await cli(["policies", "effective", "--json"], env)
    expect(effective.code, effective.stderr).toBe(0)
    expect(json(effective).effectivePolicy.decidedBy.showWelcomePage).toEqual({ desktopPolicyId: null, policyName: "Built-in defaults", via: "default" })
  })
})

/**
 * `orgplane sso policy get|set`: the CLI in-process (see Harness.ts) against a real server (RealServer.ts).
 */
import * as Http from "../../../packages/testkit/src/Http.js"
import * as RealServer from "./RealServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json } from "./Harness.js"

let server: RealServer.RealServer
let free: RealServer.RealServer

beforeAll(async () => {
  ;[server, free] = await Promise.all([RealServer.start({ ORGPLANE_DEFAULT_PLAN: "enterprise" }), RealServer.start()])
})
afterAll(async () => {
  await Promise.all([server?.close(), free?.close()])
  await cleanup()
})

describe("orgplane sso policy", { timeout: 120_000 }, () => {
  it("shows the policy, refuses to require SSO without an active connection, and sets the owners' break-glass", async () => {
    const owner = await Http.owner(server.url, "Policy Org")
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: owner.token }

    const shown = await cli(["sso", "policy", "get"], env)
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain("SSO required: no")
    expect(shown.stdout).toContain("break-glass: on")

    const refused = await cli(["sso", "policy", "set", "on"], env)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("sso_connection_required")

    const set = await cli(["sso", "policy", "set", "off", "--no-owners-password-fallback", "--json"], env)
    expect(set.code, set.stderr).toBe(0)
    expect(json(set).policy).toMatchObject({ requireSso: false, ownersPasswordFallback: false })
    expect(json(await cli(["sso", "policy", "get", "--json"], env)).policy.ownersPasswordFallback).toBe(false)

    const badValue = await cli(["sso", "policy", "set", "maybe"], env)
    expect(badValue.code).toBe(2)

    const other = await Http.owner(free.url, "Free Org")
    const planless = await cli(["sso", "policy", "get"], { ORGPLANE_URL: free.url, ORGPLANE_TOKEN: other.token })
    expect(planless.code).not.toBe(0)
    expect(planless.stderr).toContain("enterprise_plan_required")
  })
})

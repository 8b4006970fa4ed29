/**
 * `orgplane admin claim-operator` and `orgplane admin metrics`: the CLI in-process (see Harness.ts) against a real
 * server (RealServer.ts).
 */
import * as Http from "../../../packages/testkit/src/Http.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sparkline } from "../src/commands/admin.js"
import { cleanup, fresh, json } from "./Harness.js"
import * as RealServer from "./RealServer.js"

let server: RealServer.RealServer

beforeAll(async () => {
  server = await RealServer.start({ ORGPLANE_SETUP_TOKEN: Http.SETUP_TOKEN })
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

describe("orgplane admin metrics", { timeout: 120_000 }, () => {
  it("makes the active organization the operator with the setup token, once; prints the summary as a table with sparklines, or the API's JSON; refuses anyone but the operator", async () => {
    const operator = await Http.owner(server.url, "Operator")
    const customer = await Http.owner(server.url, "Customer")
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: operator.token }

    const notYet = await cli(["admin", "metrics"], env)
    expect(notYet.stderr).toContain("operator_only")
    const claimed = await cli(["admin", "claim-operator", Http.SETUP_TOKEN], env)
    expect(claimed.code, claimed.stderr).toBe(0)
    expect(claimed.stdout).toBe(`Operator (${operator.organization.id}) now operates this instance: its owners and admins change plans and read the metrics.\n`)
    const again = await cli(["admin", "claim-operator", Http.SETUP_TOKEN], { ...env, ORGPLANE_TOKEN: customer.token })
    expect(again.code).not.toBe(0)
    expect(again.stderr).toContain("operator_exists")

    const asJson = await cli(["admin", "metrics", "--json"], env)
    expect(asJson.code, asJson.stderr).toBe(0)
    const { summary, generatedAt } = json(asJson)
    expect(generatedAt).toMatch(/Z$/)
    expect(summary).toMatchObject({ totalUsers: 2, totalOrganizations: 2, adminCount: 1, paidUsers: 0, unpaidUsers: 2, billingLoaded: true })
    expect(summary.activitySeries).toHaveLength(30)

    const table = await cli(["admin", "metrics"], env)
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toMatch(/^METRIC\s+VALUE$/m)
    expect(table.stdout).toMatch(/^users\s+2 \(2 new in 7 days, 2 in 30\)$/m)
    expect(table.stdout).toMatch(/^instance admins\s+1$/m)
    expect(table.stdout).toMatch(/^median hours to first invite\s+-$/m)
    // Both people signed up today: 29 empty days, then the highest bar.
    expect(table.stdout).toMatch(/^signups\s+▁{29}█  max 2, today 2$/m)
    expect(table.stdout).toContain(`Last 30 days (${summary.activitySeries[0].day} to ${summary.activitySeries[29].day}, UTC):`)

    const denied = await cli(["admin", "metrics"], { ...env, ORGPLANE_TOKEN: customer.token })
    expect(denied.code).not.toBe(0)
    expect(denied.stderr).toContain("operator_only")
    expect(denied.stderr).toContain("operator organization")

    // An admin is pointed to the role the server names, the owner's (not to "an owner or admin").
    const staffed = await Http.staffed(server.url, "Staffed")
    const asAdmin = await cli(["admin", "claim-operator", Http.SETUP_TOKEN], { ...env, ORGPLANE_TOKEN: staffed.admin.token })
    expect(asAdmin.code).toBe(1)
    expect(asAdmin.stderr.trim()).toBe(
      "error: insufficient_role (403): This action requires the owner role or higher (admin.claimOperator). — ask an owner of the organization"
    )
  })

  it("scales the sparkline to the largest value, and draws all lowest bars for no activity", () => {
    expect(sparkline([0, 1, 2, 3, 4, 5, 6, 7])).toBe("▁▂▃▄▅▆▇█")
    expect(sparkline([0, 0, 0])).toBe("▁▁▁")
    expect(sparkline([5, 10])).toBe("▅█")
  })
})

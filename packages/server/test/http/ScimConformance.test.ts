/**
 * orgplane's SCIM surface judged by the testkit's conformance suite (it stands in for scim2-tester: discovery, crud,
 * patch, projection, filter, etag, errors and paging checks generated from what the server advertises) and by the
 * recorded Okta and Entra ID request sequences, every step, quirks included, on a connection made through the
 * management API. Two group mapping modes are judged: none (the default) and teams made per group, where Groups write
 * the most.
 */
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as Scim from "../../../../packages/testkit/src/scim/index.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start({ defaultPlan: "enterprise" })
})
afterAll(() => server?.close())

const { scimConnections } = calls(() => server.url)

const target = async (groupMappingMode: "metadata_only" | "create_teams" | "link_by_external_key") => {
  const owner = await Http.owner(server.url)
  const directory = await Http.scimDirectory(server.url, owner.token, { groupMappingMode })
  return { owner, directory, target: { baseUrl: `${server.url}${directory.base}`, token: directory.token } }
}

const failed = (results: ReadonlyArray<{ readonly status: string; readonly id: string }>) =>
  results.filter((result) => result.status === "failed").map((result) => result.id)

describe("the SCIM conformance suite", { timeout: 120_000 }, () => {
  it.each(["metadata_only", "create_teams"] as const)("passes every check in %s mode", async (mode) => {
    const { target: scim } = await target(mode)
    const results = await Scim.run(scim)
    expect(failed(results), Scim.report(results)).toEqual([])
    // Every tag ran, and only what the schemas make impossible was skipped: removing a required attribute, and
    // asking for an attribute `returned: request` (none is advertised).
    expect(new Set(results.map((result) => result.tag))).toEqual(new Set(Scim.tags))
    expect(results.filter((result) => result.status === "passed").length).toBeGreaterThan(50)
    expect(results.filter((result) => result.status === "skipped").map((result) => result.id).sort()).toEqual([
      "patch.Group.displayName.remove",
      "patch.User.userName.remove",
      "projection.Group.returnedRequest",
      "projection.User.returnedRequest"
    ])
  })
})

describe("the recorded client sequences", { timeout: 60_000 }, () => {
  const replayed = async (steps: ReadonlyArray<Scim.Step>, mode: "metadata_only" | "create_teams" = "create_teams") => {
    const scim = await target(mode)
    const results = await Scim.replay(scim.target, steps)
    return { ...scim, results, report: results.map((result) => `${result.status} ${result.name}: ${result.detail}`).join("\n") }
  }

  it("Okta's sequence passes every step, and every write it sent is in the connection's log as succeeded", async () => {
    const { directory, owner, report, results } = await replayed(Scim.Okta.sequence())
    expect(results.filter((result) => result.status !== "passed"), report).toEqual([])
    expect(results.length).toBeGreaterThan(15)
    const events = ok(await scimConnections.listEvents({ token: owner.token, path: { connectionId: directory.connection.id }, query: { limit: "100" } }), 200)
      .items
    expect(events.length).toBeGreaterThan(5)
    expect(events.filter((event) => event.outcome !== "succeeded")).toEqual([])
  })

  it("Entra ID's sequence passes every step, its non-RFC quirks and ?aadOptscim062020 included", async () => {
    const { report, results } = await replayed(Scim.Entra.sequence())
    expect(results.filter((result) => result.status !== "passed"), report).toEqual([])
    expect(results.some((result) => result.name.startsWith("?aadOptscim062020"))).toBe(true)
  })

  it("both, one after the other on one connection, leave the organization as the directory said, with a clean log", async () => {
    const scim = await target("create_teams")
    for (const steps of [Scim.Okta.sequence(), Scim.Entra.sequence()]) {
      const results = await Scim.replay(scim.target, steps)
      expect(results.filter((result) => result.status !== "passed")).toEqual([])
    }
    const path = { connectionId: scim.directory.connection.id }
    const reconciled = ok(await scimConnections.reconcile({ token: scim.owner.token, path }), 200)
    expect(reconciled.repaired, JSON.stringify(reconciled.repaired)).toEqual([])
    const connection = ok(await scimConnections.get({ token: scim.owner.token, path }), 200).connection
    expect(connection.health.lastSuccessAt).not.toBeNull()
  })
})

/**
 * `orgplane audit`: the CLI in-process (see Harness.ts) against a real server: an admin reads who did what, filters
 * by action family and outcome, shows one event and the catalog; a member is refused; a bad filter is refused before
 * anything is sent. The server is RealServer.ts's.
 */
import { AuditEventPage, AuditEventResponse, AuditEventTypes, channelHeader, TeamResponse } from "@orgplane/schema"
import * as Schema from "effect/Schema"
import * as Http from "../../../packages/testkit/src/Http.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, type Result } from "./Harness.js"
import * as RealServer from "./RealServer.js"

let server: RealServer.RealServer
beforeAll(async () => {
  server = await RealServer.start()
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

const decoded = <A, I>(schema: Schema.Codec<A, I>, result: Result): A => {
  expect(result.code, result.stderr).toBe(0)
  return Schema.decodeUnknownSync(schema)(json(result))
}

describe("orgplane audit", () => {
  it("lists, filters and shows the organization's events to its admins, and lists the catalog", async () => {
    const org = await Http.staffed(server.url, "Audited")
    const { cli } = await fresh()
    const admin = (args: ReadonlyArray<string>) => cli(args, { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.admin.token })
    const team = Http.expectStatus<typeof TeamResponse.Encoded>("team", await Http.request(server.url, "POST", "/v1/teams", { token: org.owner.token, body: { name: "Audited team" } }), 201).team
    const refused = await Http.request(server.url, "PATCH", `/v1/members/${org.admin.membership.id}`, { token: org.member.token, body: { role: "member" } })
    expect(refused.status).toBe(403)

    const table = await admin(["audit", "list", "--action", "team.*"])
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toContain("team.create")
    expect(table.stdout).toContain(team.id)
    expect(table.stdout).toContain(`Owner <${org.owner.email}>`)

    const denied = decoded(AuditEventPage, await admin(["audit", "list", "--outcome", "denied", "--json"]))
    expect(denied.items.map((event) => [event.action, event.reason, event.actor.id])).toEqual([["member.role.update", "insufficient_role", org.member.user.id]])

    const oldest = decoded(AuditEventPage, await admin(["audit", "list", "--oldest-first", "--limit", "1", "--json"]))
    const [first] = oldest.items
    expect(first!.action).toBe("organization.create")
    const shown = await admin(["audit", "get", first!.id])
    expect(shown.stdout).toContain(`${first!.id}: organization.create succeeded`)
    // The channel the request came through: api unless the client said mcp (the human form shows it as --json does).
    expect(shown.stdout).toMatch(/\n {2}via: api, credential /)
    expect(decoded(AuditEventResponse, await admin(["audit", "get", first!.id, "--json"])).event.id).toBe(first!.id)

    const csv = await admin(["audit", "export", "--format", "csv", "--action", "team.*"])
    expect(csv.code, csv.stderr).toBe(0)
    const [header, ...rows] = csv.stdout.trimEnd().split("\r\n")
    expect(header).toMatch(/^"id","occurredAt","action",/)
    expect(rows.length).toBe(1)
    expect(rows[0]).toContain(`"team:${team.id}"`)
    const ndjson = await admin(["audit", "export", "--outcome", "denied"])
    expect(ndjson.stdout.trimEnd().split("\n").map((line) => JSON.parse(line).action)).toEqual(["member.role.update"])
    const viaMcp = Http.expectStatus<typeof TeamResponse.Encoded>("team", await Http.request(server.url, "POST", "/v1/teams", {
      token: org.owner.token,
      headers: { [channelHeader]: "mcp" },
      body: { name: "Made through MCP" }
    }), 201).team
    const [mcpEvent] = decoded(AuditEventPage, await admin(["audit", "list", "--target", viaMcp.id, "--json"])).items
    expect(mcpEvent?.via.channel).toBe("mcp")
    expect((await admin(["audit", "get", mcpEvent!.id])).stdout).toMatch(/\n {2}via: mcp, credential /)

    const types = decoded(AuditEventTypes, await admin(["audit", "types", "--json"]))
    expect(types.items.map((type) => type.action)).toContain("sso.connection.activate")
  })

  it("tails the log and follows it as events are recorded; shows an update's changes; sets the retention", async () => {
    const org = await Http.staffed(server.url, "Tailed")
    const { cli } = await fresh()
    const owner = (args: ReadonlyArray<string>) => cli(args, { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.owner.token })
    const team = async (name: string) =>
      Http.expectStatus<{ team: { id: string } }>("team", await Http.request(server.url, "POST", "/v1/teams", { token: org.owner.token, body: { name } }), 201).team
    const first = await team("One")

    const latest = await owner(["audit", "tail", "--lines", "2"])
    expect(latest.code, latest.stderr).toBe(0)
    const lines = latest.stdout.trimEnd().split("\n")
    expect(lines.length).toBe(2)
    expect(lines[1]).toMatch(/^\S+ {2}team\.create {2}Owner <[^>]+> {2}team:tem_\w+$/)
    expect(lines[1]).toContain(first.id)

    // Following from now: the next two team events, as NDJSON, then it stops (--count).
    const following = owner(["audit", "tail", "--follow", "--action", "team.*", "--since", new Date().toISOString(), "--count", "2", "--interval", "0.2", "--json"])
    await new Promise((resolve) => setTimeout(resolve, 500))
    const second = await team("Two")
    Http.expectStatus("rename", await Http.request(server.url, "PATCH", `/v1/teams/${second.id}`, { token: org.owner.token, body: { name: "Deux" } }), 200)
    const followed = await following
    expect(followed.code, followed.stderr).toBe(0)
    const events = followed.stdout.trimEnd().split("\n").map((line) => JSON.parse(line))
    expect(events.map((event) => [event.action, event.targets[0].id])).toEqual([["team.create", second.id], ["team.update", second.id]])

    const shown = await owner(["audit", "get", events[1].id])
    expect(shown.stdout).toContain(`changed name: "Two" → "Deux"`)

    const settings = await owner(["audit", "settings", "set", "--retention-days", "400"])
    expect([settings.code, settings.stdout.trim()]).toEqual([0, "Events are now kept 400 days."])
    expect((await owner(["audit", "settings", "get"])).stdout).toMatch(/^Events are kept 400 days, set /)
    const refused = await owner(["audit", "settings", "set", "--retention-days", "3"])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toMatch(/retention-days/)
    const [changed] = decoded(AuditEventPage, await owner(["audit", "list", "--action", "audit.settings.update", "--json"])).items
    expect(changed!.changes).toEqual({ before: { retentionDays: 365 }, after: { retentionDays: 400 }, changedFields: ["retentionDays"] })
  })

  it("refuses a member (403), and a malformed filter before sending anything", async () => {
    const org = await Http.staffed(server.url, "Private")
    const { cli } = await fresh()
    const member = await cli(["audit", "list"], { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.member.token })
    expect(member.code).not.toBe(0)
    expect(member.stderr).toContain("insufficient_role")
    const bad = await cli(["audit", "list", "--action", "Team Create"], { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.admin.token })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--action")
  })
})

/**
 * `orgplane mcp connections`: the CLI in-process (see Harness.ts) against a real server (RealServer.ts) and MCP fakes
 * on loopback.
 */
import { McpConnectionAccessGrantPage, McpConnectionPage } from "@orgplane/schema"
import * as FakeMcp from "../../../packages/testkit/src/FakeMcp.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as RealServer from "./RealServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, wire } from "./Harness.js"

const API_KEY = "cli-mcp-key-value-123"
let server: RealServer.RealServer
let open: FakeMcp.FakeMcp
let keyed: FakeMcp.FakeMcp

beforeAll(async () => {
  // The MCP fakes listen on loopback, which only private mode lets the live check reach.
  ;[server, open, keyed] = await Promise.all([
    RealServer.start({ ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true" }),
    FakeMcp.start(),
    FakeMcp.start({ auth: { apiKey: API_KEY } })
  ])
})
afterAll(async () => {
  await Promise.all([server?.close(), open?.close(), keyed?.close()])
  await cleanup()
})

describe("orgplane mcp connections", { timeout: 120_000 }, () => {
  it("creates, lists, reads, updates, grants, disables tools of and deletes connections, by id or name", async () => {
    const org = await Http.staffed(server.url)
    const { cli } = await fresh()
    const admin = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.admin.token }
    const member = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.member.token }

    const created = await cli(["mcp", "connections", "create", "Docs", "--mcp-url", open.url, "--auth", "none", "--json"], admin)
    expect(created.code, created.stderr).toBe(0)
    const docs = json(created).item
    expect(docs).toMatchObject({ name: "Docs", authType: "none", connected: true, ready: false })

    // An apikey connection needs its key, from the environment here; it is never printed.
    const noKey = await cli(["mcp", "connections", "create", "Keyed", "--mcp-url", keyed.url, "--auth", "apikey"], admin)
    expect(noKey.code).toBe(2)
    expect(noKey.stderr).toContain("ORGPLANE_MCP_API_KEY")
    const wrongKey = await cli(["mcp", "connections", "create", "Keyed", "--mcp-url", keyed.url, "--auth", "apikey"], {
      ...admin,
      ORGPLANE_MCP_API_KEY: "wrong"
    })
    expect(wrongKey.code).not.toBe(0)
    expect(wrongKey.stderr).toContain("Could not connect to \"Keyed\"")
    const withKey = await cli(["mcp", "connections", "create", "Keyed", "--mcp-url", keyed.url, "--auth", "apikey"], {
      ...admin,
      ORGPLANE_MCP_API_KEY: API_KEY
    })
    expect(withKey.code, withKey.stderr).toBe(0)
    expect(withKey.stdout).toContain("Created MCP connection Keyed")
    expect(withKey.stdout).toContain("grant")
    expect(withKey.stdout + withKey.stderr).not.toContain(API_KEY)

    const oauth = await cli([
      "mcp", "connections", "create", "Slack", "--mcp-url", "https://mcp.slack.com/mcp", "--auth", "oauth", "--per-member",
      "--client-id", "slack-app", "--json"
    ], { ...admin, ORGPLANE_MCP_CLIENT_SECRET: "cli-client-secret" })
    expect(oauth.code, oauth.stderr).toBe(0)
    expect(json(oauth).item).toMatchObject({ credentialMode: "per_member", oauth: { clientId: "slack-app", clientConfigured: true } })
    expect(oauth.stdout).not.toContain("cli-client-secret")

    // Members see nothing until a grant; names work wherever an id does.
    const none = await cli(["mcp", "connections", "list"], member)
    expect(none.stdout).toContain("No MCP connections.")
    const granted = await cli(["mcp", "connections", "grant", "docs", "--member", org.member.membership.id, "--json"], admin)
    expect(granted.code, granted.stderr).toBe(0)
    const grantId = json(granted).item.id
    expect(grantId).toMatch(/^emg_/)
    const mine = await cli(["mcp", "connections", "list", "--json"], member)
    expect(wire(McpConnectionPage, mine).items.map((c) => [c.name, c.ready])).toEqual([["Docs", true]])
    const read = await cli(["mcp", "connections", "get", "Docs"], member)
    expect(read.code, read.stderr).toBe(0)
    expect(read.stdout).toContain(`MCP connection Docs (${docs.id})`)
    expect(read.stdout).toContain("ready: yes")
    const hidden = await cli(["mcp", "connections", "get", "Keyed"], member)
    expect(hidden.code).toBe(2)
    expect(hidden.stderr).toContain("no MCP connection is named \"Keyed\"")
    const all = await cli(["mcp", "connections", "list", "--manageable"], admin)
    for (const name of ["Docs", "Keyed", "Slack"]) expect(all.stdout).toContain(name)
    expect((await cli(["mcp", "connections", "list", "--manageable"], member)).code).not.toBe(0)

    const grants = await cli(["mcp", "connections", "grants", docs.id, "--json"], admin)
    expect(wire(McpConnectionAccessGrantPage, grants).items.map((g) => g.id)).toEqual([grantId])

    const renamed = await cli(["mcp", "connections", "update", "Docs", "--name", "Handbook", "--json"], admin)
    expect(renamed.code, renamed.stderr).toBe(0)
    expect(json(renamed).item.name).toBe("Handbook")
    const nothing = await cli(["mcp", "connections", "update", "Handbook"], admin)
    expect(nothing.code).toBe(2)

    const set = await cli(["mcp", "connections", "tool-policy", "set", "handbook", "--disable", "delete_item", "--disable", "echo", "--json"], admin)
    expect(set.code, set.stderr).toBe(0)
    expect(json(set)).toMatchObject({ allDisabled: false, disabledTools: ["delete_item", "echo"], updatedByOrgMembershipId: org.admin.membership.id })
    const shown = await cli(["mcp", "connections", "tool-policy", "get", docs.id], admin)
    expect(shown.stdout).toContain("disabled: delete_item, echo")
    const allOff = await cli(["mcp", "connections", "tool-policy", "set", docs.id, "--all-disabled"], admin)
    expect(allOff.stdout).toContain("every tool disabled")

    const revoked = await cli(["mcp", "connections", "revoke", "Handbook", grantId], admin)
    expect(revoked.code, revoked.stderr).toBe(0)
    expect(json(await cli(["mcp", "connections", "list", "--json"], member)).items).toEqual([])

    const deleted = await cli(["mcp", "connections", "delete", "Handbook", "--json"], admin)
    expect(json(deleted)).toEqual({ ok: true, deleted: docs.id })
    const gone = await cli(["mcp", "connections", "get", docs.id], admin)
    expect(gone.code).not.toBe(0)
    expect(gone.stderr).toContain("connection_not_found")
  })
})

/**
 * `orgplane mcp resolve | presets`: the CLI in-process (see Harness.ts) against a real server (RealServer.ts) and the
 * MCP fakes.
 */
import * as FakeMcp from "../../../packages/testkit/src/FakeMcp.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as RealServer from "./RealServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json } from "./Harness.js"

let server: RealServer.RealServer
let open: FakeMcp.FakeMcp
let protectedServer: FakeMcp.FakeMcp

beforeAll(async () => {
  server = await RealServer.start({ ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true", ORGPLANE_MCP_PROBE_TIMEOUT: "3 seconds" })
  open = await FakeMcp.start()
  protectedServer = await FakeMcp.start({ auth: { oauth: { requiredScopes: ["mcp:read"] } } })
})
afterAll(async () => {
  await open?.close()
  await protectedServer?.close()
  await server?.close()
  await cleanup()
})

describe("orgplane mcp", { timeout: 120_000 }, () => {
  it("resolves a URL to the server and what it requires, readably and as the API's JSON", async () => {
    const org = await Http.staffed(server.url)
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.admin.token }

    const found = await cli(["mcp", "resolve", open.origin], env)
    expect(found.code, found.stderr).toBe(0)
    expect(found.stdout).toContain(`Found: ${open.url}`)
    expect(found.stdout).toMatch(/^name +127\.0\.0\.1$/m)
    expect(found.stdout).toMatch(/^authentication +none$/m)
    expect(found.stdout).toMatch(/^tools +6$/m)
    expect(found.stdout).toMatch(new RegExp(`^tried +${open.origin}/, ${open.url}$`, "m"))

    const oauth = await cli(["mcp", "resolve", protectedServer.url], env)
    expect(oauth.code, oauth.stderr).toBe(0)
    expect(oauth.stdout).toMatch(/^authentication +oauth$/m)
    expect(oauth.stdout).toMatch(/^required scopes +mcp:read$/m)
    expect(oauth.stdout).toMatch(/^registration +pre_registered, dynamic \(recommended\)$/m)
    expect(oauth.stdout).toMatch(/^tools +requires_auth$/m)
    expect(oauth.stdout).toMatch(/^manual +Provider account access: /m)

    const asJson = await cli(["mcp", "resolve", protectedServer.url, "--json"], env)
    expect(asJson.code, asJson.stderr).toBe(0)
    const result = json(asJson)
    expect(result).toMatchObject({ resolution: "discovered", attempted: [protectedServer.url], match: { url: protectedServer.url } })
    expect(result.match.discovery.authentication.availableRegistrationMethods).toEqual(["pre_registered", "dynamic"])

    const nothing = await cli(["mcp", "resolve", "!!!"], env)
    expect(nothing.code).toBe(0)
    expect(nothing.stdout).toBe("No MCP server found for \"!!!\": Type a server URL or a product name.\n")
  })

  it("checks the query with the API's rule before sending, and reports a member's refusal", async () => {
    const org = await Http.staffed(server.url)
    const { cli } = await fresh()
    const long = await cli(["mcp", "resolve", "x".repeat(201)], { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.admin.token })
    expect(long.code).toBe(2)
    expect(long.stderr).toContain("query: must be 1 to 200 characters long")
    const member = await cli(["mcp", "resolve", open.url], { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.member.token })
    expect(member.code).not.toBe(0)
    expect(member.stderr).toContain("insufficient_role")
  })

  it("says the server refused to contact a URL, and why, exiting 1", async () => {
    const guarded = await RealServer.start({ ORGPLANE_MCP_PROBE_TIMEOUT: "3 seconds" })
    try {
      const org = await Http.staffed(guarded.url)
      const { cli } = await fresh()
      const env = { ORGPLANE_URL: guarded.url, ORGPLANE_TOKEN: org.admin.token }
      const [refused, asJson, plain] = await Promise.all([
        cli(["mcp", "resolve", "https://127.0.0.1:9/mcp"], env),
        cli(["mcp", "resolve", "https://127.0.0.1:9/mcp", "--json"], env),
        cli(["mcp", "resolve", open.url], env)
      ])
      expect(refused.code).toBe(1)
      expect(refused.stdout).toBe("")
      expect(refused.stderr.trim()).toBe(
        "error: the server's outbound guard refused to contact https://127.0.0.1:9/mcp (127.0.0.1 is a loopback address) — on a trusted network its operator can allow private addresses and plain http with ORGPLANE_OUTBOUND_ALLOW_PRIVATE"
      )
      // --json: the API's answer on stdout, then the error as JSON.
      expect(asJson.code).toBe(1)
      expect(json(asJson)).toEqual({
        resolution: "not_found",
        attempted: ["https://127.0.0.1:9/mcp"],
        reason: "The outbound URL is not allowed: 127.0.0.1 is a loopback address",
        refused: [{ url: "https://127.0.0.1:9/mcp", reason: "The outbound URL is not allowed: 127.0.0.1 is a loopback address" }]
      })
      expect(JSON.parse(asJson.stderr)).toMatchObject({ error: "destination_refused" })
      expect(plain.code).toBe(1)
      expect(plain.stderr).toContain(`refused to contact ${open.url} (https is required)`)
    } finally {
      await guarded.close()
    }
  })

  it("lists the presets", async () => {
    const org = await Http.staffed(server.url)
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.member.token }
    const table = await cli(["mcp", "presets"], env)
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toMatch(/^PRESET +NAME +AUTH +URL$/m)
    expect(table.stdout).toMatch(/^slack +Slack +oauth \(client required\) +https:\/\/mcp\.slack\.com\/mcp$/m)
    const listed = json(await cli(["mcp", "presets", "--json"], env))
    expect(listed.presets).toHaveLength(11)
  })
})

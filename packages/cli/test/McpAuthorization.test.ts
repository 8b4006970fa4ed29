/**
 * `orgplane mcp connections connect | disconnect`: the CLI in-process (Harness.ts) against a real server and the MCP
 * and OAuth fakes on loopback. The browser's part (opening the URL, the redirect to the callback) is plain `fetch`.
 * The server is RealServer.ts's.
 */
import { McpConnectionResponse, McpConnectResult } from "@orgplane/schema"
import * as FakeMcp from "../../../packages/testkit/src/FakeMcp.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as RealServer from "./RealServer.js"
import * as Wait from "../../../packages/testkit/src/Wait.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, type Output } from "./Harness.js"

let server: RealServer.RealServer
let mcp: FakeMcp.FakeMcp

beforeAll(async () => {
  server = await RealServer.start({ ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true" })
  mcp = await FakeMcp.start({ auth: "oauth" })
})
afterAll(async () => {
  await mcp?.close()
  await server?.close()
  await cleanup()
})

/** The browser: open the authorization URL (auto-approved), follow the redirect to the server's callback. */
const authorizeInBrowser = async (authorizeUrl: string) => {
  const answer = await fetch(authorizeUrl, { redirect: "manual" })
  const callback = await fetch(answer.headers.get("location")!)
  expect(callback.status).toBe(200)
}

describe("orgplane mcp connections connect | disconnect", { timeout: 120_000 }, () => {
  it("connects the shared credential, waits for the browser with --wait, and disconnects", async () => {
    const org = await Http.staffed(server.url)
    const created = Http.expectStatus<typeof McpConnectionResponse.Encoded>("creating", await Http.request(server.url, "POST", "/v1/mcp-connections", {
      token: org.owner.token,
      body: { name: "Docs", url: mcp.url, authType: "oauth" }
    }), 201)
    const id: string = created.item.id
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.admin.token }

    const started = await cli(["mcp", "connections", "connect", id, "--json"], env)
    expect(started.code, started.stderr).toBe(0)
    const result = json(started)
    expect(result.status).toBe("needs_auth")
    await authorizeInBrowser(result.authorizeUrl)
    const again = await cli(["mcp", "connections", "connect", "docs"], env)
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toBe(`Connected: ${id} has a usable credential.\n`)

    const dropped = await cli(["mcp", "connections", "disconnect", id], env)
    expect(dropped.code, dropped.stderr).toBe(0)
    expect(dropped.stdout).toBe(`Disconnected ${id}.\n`)
    expect((await cli(["mcp", "connections", "disconnect", id], env)).stdout).toBe(`Nothing to disconnect: nothing was connected on ${id}.\n`)

    // --wait: the CLI prints the URL on stderr and polls; the browser completes an authorization meanwhile.
    const output: Output = { stdout: [], stderr: [] }
    const waiting = cli(["mcp", "connections", "connect", id, "--wait"], env, {}, output)
    await Wait.until(() => output.stderr.join("").includes("Open this URL in a browser to authorize"), "the CLI's authorization URL")
    const other = Http.expectStatus<typeof McpConnectResult.Encoded>("connect", await Http.request(server.url, "POST", `/v1/mcp-connections/${id}/connect`, { token: org.admin.token }), 200)
    await authorizeInBrowser(other.authorizeUrl!)
    const waited = await waiting
    expect(waited.code, waited.stderr).toBe(0)
    expect(waited.stderr).toContain("Open this URL in a browser to authorize")
    expect(waited.stdout).toBe(`Connected: ${id} has a usable credential.\n`)

    // A member may not touch the shared credential.
    const member = await cli(["mcp", "connections", "disconnect", id], { ...env, ORGPLANE_TOKEN: org.member.token })
    expect(member.code).not.toBe(0)
    expect(member.stderr).toContain("insufficient_role")
  })

  it("disconnects your own account with --mine", async () => {
    const org = await Http.staffed(server.url)
    const created = Http.expectStatus<typeof McpConnectionResponse.Encoded>("creating", await Http.request(server.url, "POST", "/v1/mcp-connections", {
      token: org.owner.token,
      body: { name: "Mine", url: mcp.url, authType: "oauth", credentialMode: "per_member" }
    }), 201)
    const id: string = created.item.id
    Http.expectStatus("granting", await Http.request(server.url, "POST", `/v1/mcp-connections/${id}/access`, {
      token: org.owner.token,
      body: { role: "viewer", orgWide: true }
    }), 201)
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.member.token }
    const started = json(await cli(["mcp", "connections", "connect", id, "--json"], env))
    await authorizeInBrowser(started.authorizeUrl)
    const dropped = await cli(["mcp", "connections", "disconnect", id, "--mine", "--json"], env)
    expect(dropped.code, dropped.stderr).toBe(0)
    expect(json(dropped)).toEqual({ ok: true, removed: true })
    expect(json(await cli(["mcp", "connections", "connect", id, "--json"], env)).status).toBe("needs_auth")
  })
})

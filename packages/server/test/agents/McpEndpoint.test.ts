/**
 * `/mcp` on the server's own port, through the official MCP SDK's client over Streamable HTTP and raw HTTP: off
 * unless configured (then an unknown route, and so is its metadata); the caller's session token or API key as a
 * bearer (or `X-API-Key`) admitted, anything else 401 with the `WWW-Authenticate` challenge naming the protected
 * resource metadata (RFC 9728), which says where the resource is and how its bearer goes; an `Origin` not allowed
 * is 403 before anything else; the tools' requests run in process with the caller's credential.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"

const allowedOrigin = "https://agent.example.com"

let off: TestServer.RunningServer
let on: TestServer.RunningServer
beforeAll(async () => {
  off = await TestServer.start()
  on = await TestServer.start({ mcp: true, mcpAllowedOrigins: [allowedOrigin] })
})
afterAll(async () => {
  await off?.close()
  await on?.close()
})

/** An SDK client connected to `/mcp` with `headers`; closed by the caller. */
const connect = async (headers: Record<string, string>) => {
  const client = new Client({ name: "orgplane-test", version: "0.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", on.url), { requestInit: { headers } }))
  return client
}

/** The `initialize` request an MCP client sends first, as raw HTTP. */
const initialize = (headers: Record<string, string>) =>
  Http.request(on.url, "POST", "/mcp", {
    headers: { accept: "application/json, text/event-stream", ...headers },
    body: {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } }
    }
  })

const metadataUrl = () => `${on.url}/.well-known/oauth-protected-resource/mcp`

describe("/mcp", { timeout: 60_000 }, () => {
  it("is an unknown route, and so is its metadata, unless ORGPLANE_MCP is on", async () => {
    const owner = await Http.owner(off.url)
    const mcp = await Http.request(off.url, "POST", "/mcp", { token: owner.token, body: {} })
    expect(mcp.status, mcp.text).toBe(404)
    expect(mcp.body).toMatchObject({ error: "not_found" })
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      expect((await Http.request(off.url, "GET", path)).status, path).toBe(404)
    }
  })

  it("publishes its protected resource metadata (RFC 9728), with no authorization server", async () => {
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const response = await Http.request(on.url, "GET", path)
      expect(response.status, response.text).toBe(200)
      expect(response.body).toEqual({
        resource: `${on.url}/mcp`,
        bearer_methods_supported: ["header"],
        resource_name: "orgplane",
        resource_documentation: `${on.url}/docs`
      })
    }
  })

  it("answers 401 with the challenge naming its metadata without a credential or with a wrong one", async () => {
    const none = await initialize({})
    expect(none.status, none.text).toBe(401)
    expect(none.body).toMatchObject({ error: "unauthorized", reason: "credentials_missing" })
    expect(none.headers.get("www-authenticate")).toBe(`Bearer realm="orgplane", resource_metadata="${metadataUrl()}"`)

    const wrong = await initialize({ authorization: "Bearer not-a-session-token" })
    expect(wrong.status, wrong.text).toBe(401)
    expect(wrong.body).toMatchObject({ error: "unauthorized", reason: "session_unknown" })
    expect(wrong.headers.get("www-authenticate")).toBe(`Bearer realm="orgplane", error="invalid_token", resource_metadata="${metadataUrl()}"`)

    const wrongKey = await initialize({ authorization: "Bearer opk_not-a-key" })
    expect(wrongKey.status, wrongKey.text).toBe(401)
    expect(wrongKey.body).toMatchObject({ error: "unauthorized", reason: "api_key_unknown" })
    expect(wrongKey.headers.get("www-authenticate")).toContain(`resource_metadata="${metadataUrl()}"`)

    // The SDK's client reads the challenge as what it is.
    await expect(connect({})).rejects.toThrow(/401|nauthorized/)
  })

  it("refuses an Origin it does not allow with 403, before reading the credential; an allowed one passes", async () => {
    const owner = await Http.owner(on.url)
    const refused = await initialize({ origin: "https://evil.example.com", authorization: `Bearer ${owner.token}` })
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body).toMatchObject({ reason: "origin_not_allowed" })
    const anonymous = await initialize({ origin: "https://evil.example.com" })
    expect(anonymous.status).toBe(403)
    const allowed = await initialize({ origin: allowedOrigin, authorization: `Bearer ${owner.token}` })
    expect(allowed.status, allowed.text).toBe(200)
  })

  it("serves the SDK's client with a session token, an API key as a bearer, or X-API-Key, each acting as its caller", async () => {
    const owner = await Http.owner(on.url)
    const created = Http.expectStatus<{ key: string }>(
      "key",
      await Http.request(on.url, "POST", "/v1/api-keys", { token: owner.token, body: { name: "agent" } }),
      201
    )
    for (const headers of [{ authorization: `Bearer ${owner.token}` }, { authorization: `Bearer ${created.key}` }, { "x-api-key": created.key }]) {
      const client = await connect(headers)
      try {
        expect(client.getServerVersion()?.name).toBe("orgplane")
        const tools = (await client.listTools()).tools.map((tool) => tool.name)
        expect(tools.length).toBeGreaterThan(0)
        const whoami = await client.callTool({ name: "whoami", arguments: {} })
        expect(whoami.isError ?? false, JSON.stringify(whoami)).toBe(false)
        expect(whoami.structuredContent).toMatchObject({ status: 200, body: { user: { email: owner.email } } })
      } finally {
        await client.close()
      }
    }
  })
})

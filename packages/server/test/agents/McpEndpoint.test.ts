/**
 * `/mcp` on the server's own port, through the official MCP SDK's client over Streamable HTTP and raw HTTP: off
 * unless configured (then an unknown route, and so is its metadata); the caller's session token or API key as a
 * bearer (or `X-API-Key`) admitted, anything else 401 with the `WWW-Authenticate` challenge naming the protected
 * resource metadata (RFC 9728), which says where the resource is and how its bearer goes; an `Origin` not allowed
 * is 403 before anything else; the tools' requests run in process with the caller's credential. An operation runs
 * only as itself, whatever its path arguments; a confirmation is given only for a call the API's dry authorization
 * (`POST /v1/authorization-checks`, served MCP on or off) passes, and runs only for the caller it was given to.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Logger from "effect/Logger"
import * as NodeHttp from "node:http"
import * as References from "effect/References"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as AgentsHttp from "../../src/agents/Http.js"
import * as HostilePaths from "../support/HostilePaths.js"
import * as TestServer from "../support/HttpServer.js"

const allowedOrigin = "https://agent.example.com"

/** The request lines of the server with MCP on: each one's annotations. */
const requestLines: Array<Record<string, unknown>> = []
const logger = Logger.make(({ fiber, message }) => {
  const parts = Array.isArray(message) ? message : [message]
  if (parts[0] === "request") requestLines.push({ ...fiber.getRef(References.CurrentLogAnnotations) })
})

let off: TestServer.RunningServer
let on: TestServer.RunningServer
beforeAll(async () => {
  off = await TestServer.start()
  on = await TestServer.start({ mcp: true, mcpAllowedOrigins: [allowedOrigin], logger })
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

/** A tool's answer: its structured content, or the data of its error (the JSON of its text). */
const call = async (client: Client, name: string, args: Record<string, unknown>) => {
  const result = await client.callTool({ name, arguments: args })
  const content = result.content as Array<{ type: string; text?: string }>
  const text = content[0]?.text ?? ""
  const isError = result.isError === true
  return { isError, data: isError ? (text.startsWith("{") ? JSON.parse(text) as unknown : { message: text }) : result.structuredContent }
}

/** `initialize` over node:http, which sends the `Host` it is given (fetch sends the URL's). */
const rawInitialize = (headers: Record<string, string>) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } }
    })
    const sent = NodeHttp.request(new URL("/mcp", on.url), {
      method: "POST",
      headers: { ...headers, accept: "application/json, text/event-stream", "content-type": "application/json" }
    }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (text += chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text }))
    })
    sent.on("error", reject)
    sent.end(body)
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

  it("answers the API's dry authorization at POST /v1/authorization-checks, MCP on or off: 204 running nothing, or the request's own refusal", async () => {
    const staff = await Http.staffed(off.url)
    const team = Http.expectStatus<{ team: { id: string } }>("team", await Http.request(off.url, "POST", "/v1/teams", { token: staff.owner.token, body: { name: "Checked" } }), 201).team.id
    const checkAs = (token: string, body: Record<string, unknown>) =>
      Http.request(off.url, "POST", "/v1/authorization-checks", { token, headers: { "orgplane-channel": "mcp" }, body })
    const deletion = { operation: "teams.delete", method: "DELETE", path: `/v1/teams/${team}` }
    const authorized = await checkAs(staff.owner.token, deletion)
    expect(authorized.status, authorized.text).toBe(204)
    expect(authorized.headers.get("orgplane-authorization-check")).toBe("authorized")
    expect((await Http.request(off.url, "GET", `/v1/teams/${team}`, { token: staff.owner.token })).status).toBe(200)
    const refused = await checkAs(staff.member.token, deletion)
    expect(refused.status, refused.text).toBe(403)
    expect(refused.headers.get("orgplane-authorization-check")).toBe("refused")
    expect(refused.body).toMatchObject({ reason: "insufficient_role" })
    const anonymous = await Http.request(off.url, "POST", "/v1/authorization-checks", { body: deletion })
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get("www-authenticate")).toContain("Bearer")
    // A path that reaches another operation's route than the one named, or an operation no person's credential calls.
    const elsewhere = await checkAs(staff.owner.token, { operation: "teams.removeMember", method: "DELETE", path: `/v1/teams/../members/${staff.member.membership.id}` })
    expect(elsewhere.status, elsewhere.text).toBe(400)
    expect(elsewhere.body).toMatchObject({ error: "invalid_request", details: [{ path: ["path"] }] })
    const open = await checkAs(staff.owner.token, { operation: "users.signIn", method: "POST", path: "/v1/auth/sign-in" })
    expect(open.status, open.text).toBe(400)
    const member = Http.expectStatus<{ member: { removedAt: string | null } }>("member", await Http.request(off.url, "GET", `/v1/members/${staff.member.membership.id}`, { token: staff.owner.token }), 200)
    expect(member.member.removedAt).toBeNull()
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
    expect(allowed.text).toContain('"serverInfo"')
  })

  it("admits its own origin, the loopback address a request reached; a page of another name resolving to it (DNS rebinding) is refused", async () => {
    const owner = await Http.owner(on.url)
    const authorization = `Bearer ${owner.token}`
    const own = await initialize({ origin: on.url, authorization })
    expect(own.status, own.text).toBe(200)
    // Its body read as sent (an admitted origin leaves the request whole): the session is opened.
    expect(own.text).toContain('"serverInfo"')
    const { port } = new URL(on.url)
    // Another loopback name than the one reached is another origin.
    const otherName = await initialize({ origin: `http://localhost:${port}`, authorization })
    expect(otherName.status).toBe(403)
    // What a browser sends from a page of evil.example.com once that name resolves to 127.0.0.1: its own name in both.
    const rebound = await rawInitialize({ host: `evil.example.com:${port}`, origin: `http://evil.example.com:${port}`, authorization })
    expect(rebound.status, rebound.text).toBe(403)
    expect(JSON.parse(rebound.text)).toMatchObject({ reason: "origin_not_allowed" })
    const loopback = await rawInitialize({ host: `localhost:${port}`, origin: `http://localhost:${port}`, authorization })
    expect(loopback.status, loopback.text).toBe(200)
    expect(loopback.text).toContain('"serverInfo"')
  })

  it("serves the SDK's client with a session token, an API key as a bearer, or X-API-Key, each acting as its caller", async () => {
    const owner = await Http.owner(on.url)
    const created = Http.expectStatus<{ key: string }>(
      "key",
      await Http.request(on.url, "POST", "/v1/api-keys", { token: owner.token, body: { name: "agent" } }),
      201
    )
    for (const [credential, headers] of [
      ["session", { authorization: `Bearer ${owner.token}` }],
      ["api_key", { authorization: `Bearer ${created.key}` }],
      ["api_key", { "x-api-key": created.key }]
    ] as const) {
      const client = await connect(headers)
      try {
        expect(client.getServerVersion()?.name).toBe("orgplane")
        expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(["call_operation", "describe_operation", "find_operations", "read_operation"])
        const me = await call(client, "call_operation", { name: "users.me" })
        expect(me).toMatchObject({ isError: false, data: { status: 200, body: { user: { email: owner.email }, credential: { type: credential } } } })
      } finally {
        await client.close()
      }
    }
  })

  it("answers JSON-RPC errors with code, message and data only, and input it cannot accept with an HTTP error status", async () => {
    const owner = await Http.owner(on.url)
    const authorization = `Bearer ${owner.token}`
    const opened = await initialize({ authorization })
    const session = opened.headers.get("mcp-session-id") ?? ""
    const post = (rawBody: string, inSession = true) =>
      Http.request(on.url, "POST", "/mcp", {
        headers: {
          accept: "application/json, text/event-stream",
          authorization,
          "mcp-protocol-version": "2025-11-25",
          ...(inSession ? { "mcp-session-id": session } : {})
        },
        rawBody
      })
    /** The JSON-RPC messages of an answer, sent as JSON or as server-sent events. */
    const messagesOf = (text: string): Array<Record<string, unknown>> => {
      const found: unknown = text.startsWith("{") || text.startsWith("[")
        ? JSON.parse(text)
        : text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)) as unknown)
      return (Array.isArray(found) ? found : [found]) as Array<Record<string, unknown>>
    }
    const cases = [
      { what: "no session", body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }), inSession: false, status: 400, code: -32600 },
      { what: "not JSON", body: "{", inSession: true, status: 400, code: -32700 },
      { what: "neither a request nor a response", body: JSON.stringify({ jsonrpc: "2.0", id: 3 }), inSession: true, status: 400, code: -32600 },
      { what: "an unknown method", body: JSON.stringify({ jsonrpc: "2.0", id: 4, method: "nope/nothing" }), inSession: true, status: 200, code: -32601 },
      { what: "an unknown tool", body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "nope" } }), inSession: true, status: 200, code: -32602 },
      // Read by the gate (McpInput.ts): an id that would come back changed, a batch past its bound.
      { what: "an id JSON-RPC cannot echo", body: `{"jsonrpc":"2.0","id":1e999,"method":"ping"}`, inSession: true, status: 400, code: -32600 },
      { what: "a 30-digit id", body: `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, inSession: true, status: 400, code: -32600 },
    ]
    for (const { body, code, inSession, status, what } of cases) {
      const answer = await post(body, inSession)
      expect(answer.status, `${what}: ${answer.text}`).toBe(status)
      const [message] = messagesOf(answer.text)
      expect(message?.["error"], what).toMatchObject({ code })
      expect(Object.keys(message?.["error"] ?? {}).filter((key) => !["code", "message", "data"].includes(key)), `${what}: ${answer.text}`).toEqual([])
    }
  })

  it("answers a batch of a session at protocol 2025-03-26 up to its bound, and refuses a larger one at once", async () => {
    const owner = await Http.owner(on.url)
    const authorization = `Bearer ${owner.token}`
    const opened = await Http.request(on.url, "POST", "/mcp", {
      headers: { accept: "application/json, text/event-stream", authorization },
      body: { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "raw", version: "0" } } }
    })
    expect(opened.status, opened.text).toBe(200)
    const headers = {
      accept: "application/json, text/event-stream",
      authorization,
      "mcp-session-id": opened.headers.get("mcp-session-id") ?? "",
      "mcp-protocol-version": "2025-03-26"
    }
    const batch = (size: number) => JSON.stringify(Array.from({ length: size }, (_, i) => ({ jsonrpc: "2.0", id: `p${i}`, method: "ping" })))
    const bounded = await Http.request(on.url, "POST", "/mcp", { headers, rawBody: batch(50) })
    expect(bounded.status, bounded.text.slice(0, 300)).toBe(200)
    const ids = [...bounded.text.matchAll(/"id":"(p\d+)"/g)].map((match) => match[1])
    expect(new Set(ids).size).toBe(50)
    // What held a request open for minutes (a fuzzer's batch of about 4,000): refused before any of it runs.
    const large = await Http.request(on.url, "POST", "/mcp", { headers, rawBody: batch(4_000) })
    expect(large.status, large.text).toBe(400)
    expect(large.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringContaining("at most 50 messages") } })
  })

  it("sits behind the request edge: the body limit (413), and methods other than POST (405)", async () => {
    const owner = await Http.owner(on.url)
    const large = await Http.request(on.url, "POST", "/mcp", {
      headers: { accept: "application/json, text/event-stream", authorization: `Bearer ${owner.token}` },
      rawBody: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { padding: "x".repeat(1_100_000) } })
    })
    expect(large.status, large.text.slice(0, 200)).toBe(413)
    expect(large.body).toMatchObject({ error: "payload_too_large" })
    const get = await Http.request(on.url, "GET", "/mcp", { token: owner.token })
    expect(get.status).toBe(405)
    expect(get.headers.get("allow")).toBe("POST, DELETE")
  })

  it("logs /mcp under its route, and each request made in process as one line of its own", async () => {
    const owner = await Http.owner(on.url)
    const client = await connect({ authorization: `Bearer ${owner.token}` })
    try {
      requestLines.length = 0
      expect(await call(client, "call_operation", { name: "teams.create", arguments: { name: "Logged" } })).toMatchObject({ isError: false })
      const routes = requestLines.map((line) => `${String(line["method"])} ${String(line["route"])} ${String(line["status"])}`)
      // The POST to /mcp; the gate's GET /v1/me (which the tools read too), and the operation.
      expect(routes).toEqual(expect.arrayContaining(["POST /mcp 200", "GET /v1/me 200", "POST /v1/teams 201"]))
      expect(routes.filter((route) => route.startsWith("POST /mcp"))).toHaveLength(1)
      // Who the caller is, read once per request to /mcp (the SDK's GET for its stream is one too), the gate's read
      // serving the tools: find_operations asks who the caller is to list what it may take.
      expect(await call(client, "find_operations", { query: "team" })).toMatchObject({ isError: false })
      const all = requestLines.map((line) => `${String(line["method"])} ${String(line["route"])}`)
      expect(all.filter((route) => route === "GET /v1/me").length, JSON.stringify(all)).toBe(all.filter((route) => route.endsWith(" /mcp")).length)
      expect(new Set(requestLines.map((line) => line["requestId"])).size).toBe(requestLines.length)
    } finally {
      await client.close()
    }
  })

  it("acts for the credential of each request, not the one that opened the session; a session ends on its DELETE", async () => {
    const first = await Http.owner(on.url, "First")
    const second = await Http.owner(on.url, "Second")
    const opened = await initialize({ authorization: `Bearer ${first.token}` })
    expect(opened.status, opened.text).toBe(200)
    const session = opened.headers.get("mcp-session-id")
    expect(session).toEqual(expect.any(String))
    const headers = { accept: "application/json, text/event-stream", "mcp-session-id": session!, "mcp-protocol-version": "2025-11-25" }
    const initialized = await Http.request(on.url, "POST", "/mcp", { headers: { ...headers, authorization: `Bearer ${first.token}` }, body: { jsonrpc: "2.0", method: "notifications/initialized" } })
    expect(initialized.status, initialized.text).toBe(202)
    const me = async (token: string) => {
      const response = await Http.request(on.url, "POST", "/mcp", {
        headers: { ...headers, authorization: `Bearer ${token}` },
        body: { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "call_operation", arguments: { name: "users.me" } } }
      })
      expect(response.status, response.text).toBe(200)
      const message = /^data: (.*)$/m.exec(response.text)?.[1] ?? response.text
      return (JSON.parse(message) as { result: { structuredContent: { body: { user: { email: string } } } } }).result.structuredContent.body.user.email
    }
    expect(await me(first.token)).toBe(first.email)
    expect(await me(second.token)).toBe(second.email)
    // The session ends when its client says so; then its id names none.
    const ended = await Http.request(on.url, "DELETE", "/mcp", { headers: { ...headers, authorization: `Bearer ${first.token}` } })
    expect(ended.status, ended.text).toBe(204)
    const after = await Http.request(on.url, "POST", "/mcp", {
      headers: { ...headers, authorization: `Bearer ${first.token}` },
      body: { jsonrpc: "2.0", id: 3, method: "tools/list" }
    })
    expect(after.status, after.text).toBe(404)
  })

  it("serves the toolsets a request names in Orgplane-Mcp-Toolsets, and answers 400 to one there is not", async () => {
    const owner = await Http.owner(on.url)
    const client = await connect({ authorization: `Bearer ${owner.token}`, [AgentsHttp.toolsetsHeader]: "teams, memory" })
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name)
      expect(names).toEqual(expect.arrayContaining(["find_operations", "describe_operation", "call_operation", "teams_create", "teams_delete"]))
      expect(names.some((name) => name.startsWith("memory_"))).toBe(true)
      expect(names.filter((name) => name.startsWith("members_"))).toEqual([])
      const made = await call(client, "teams_create", { name: "Toolset team" })
      expect(made).toMatchObject({ isError: false, data: { status: 201, body: { team: { name: "Toolset team" } } } })
    } finally {
      await client.close()
    }
    const unknown = await initialize({ authorization: `Bearer ${owner.token}`, [AgentsHttp.toolsetsHeader]: "teams,nothing" })
    expect(unknown.status, unknown.text).toBe(400)
    expect(unknown.body).toMatchObject({ error: "invalid_request", details: [{ path: [AgentsHttp.toolsetsHeader], message: expect.stringContaining("nothing") }] })
  })

  it("serves reads through read_operation, annotated read-only, and changes only through call_operation, annotated destructive", async () => {
    const owner = await Http.owner(on.url)
    const client = await connect({ authorization: `Bearer ${owner.token}` })
    try {
      const tools = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool.annotations]))
      expect(tools.get("read_operation")).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true })
      expect(tools.get("call_operation")).toMatchObject({ readOnlyHint: false, destructiveHint: true })
      const listed = await call(client, "read_operation", { name: "teams.list" })
      expect(listed).toMatchObject({ isError: false, data: { status: 200, body: { items: [] } } })
      const refused = await call(client, "read_operation", { name: "teams.create", arguments: { name: "Not by a read" } })
      expect(refused).toMatchObject({ isError: true, data: { message: expect.stringContaining("call it with call_operation") } })
      const teams = Http.expectStatus<{ items: Array<unknown> }>("teams", await Http.request(on.url, "GET", "/v1/teams", { token: owner.token }), 200)
      expect(teams.items).toEqual([])
    } finally {
      await client.close()
    }
  })

  it("runs a write in process as the caller's own request, audited with the mcp channel", async () => {
    const owner = await Http.owner(on.url)
    const client = await connect({ authorization: `Bearer ${owner.token}`, "user-agent": "agent-test/1.0" })
    try {
      const made = await call(client, "call_operation", { name: "teams.create", arguments: { name: "Made by an agent" } })
      expect(made).toMatchObject({ isError: false, data: { status: 201 } })
      const teamId = (made.data as { body: { team: { id: string } } }).body.team.id
      const events = Http.expectStatus<{ items: Array<{ action: string; target: { id: string } | null; via: Record<string, unknown>; actor: Record<string, unknown> }> }>(
        "audit",
        await Http.request(on.url, "GET", `/v1/audit/events?action=team.create`, { token: owner.token }),
        200
      )
      const event = events.items.find((item) => JSON.stringify(item).includes(teamId))
      expect(event, JSON.stringify(events.items)).toBeDefined()
      expect(event!.via).toMatchObject({ channel: "mcp", userAgent: "agent-test/1.0" })
      // A write made over HTTP is the API's.
      expect((await Http.request(on.url, "POST", "/v1/teams", { token: owner.token, body: { name: "Made by hand" } })).status).toBe(201)
      const byHand = Http.expectStatus<{ items: Array<{ via: { channel: string } }> }>(
        "audit",
        await Http.request(on.url, "GET", `/v1/audit/events?action=team.create`, { token: owner.token }),
        200
      )
      expect(byHand.items.map((item) => item.via.channel).sort()).toEqual(["api", "mcp"])
    } finally {
      await client.close()
    }
  })

  it("narrows the credential to reads with Orgplane-Read-Only on every request it makes: no write is made; a value not true/false is 400", async () => {
    const owner = await Http.owner(on.url)
    const client = await connect({ authorization: `Bearer ${owner.token}`, "orgplane-read-only": "true" })
    try {
      const found = await call(client, "find_operations", { query: "team", limit: 50 })
      const listed = (found.data as { operations: Array<{ name: string; readOnly: boolean }> }).operations
      expect(listed.map((operation) => operation.name)).toContain("teams.list")
      expect(listed.every((operation) => operation.readOnly)).toBe(true)
      // Every request made in process carries the narrowing: the server itself holds the credential to reads.
      const me = await call(client, "call_operation", { name: "users.me" })
      expect(me).toMatchObject({ isError: false, data: { status: 200, body: { credential: { type: "session", readOnly: true } } } })
      // A write is listed to nobody narrowed so; called anyway, it reaches the server, which refuses it.
      const refused = await call(client, "call_operation", { name: "teams.create", arguments: { name: "Not made" } })
      expect(refused).toMatchObject({ isError: true, data: { status: 403, body: { reason: "read_only_credential" } } })
      const teams = Http.expectStatus<{ items: Array<unknown> }>("teams", await Http.request(on.url, "GET", "/v1/teams", { token: owner.token }), 200)
      expect(teams.items).toEqual([])
    } finally {
      await client.close()
    }
    const bad = await initialize({ authorization: `Bearer ${owner.token}`, "orgplane-read-only": "yes" })
    expect(bad.status, bad.text).toBe(400)
  })

  it("fixes Orgplane-Read-Only and the toolsets to the session at initialize: a later request leaving them off keeps them, one naming others is 400", async () => {
    const owner = await Http.owner(on.url)
    const authorization = `Bearer ${owner.token}`
    const opened = await initialize({ authorization, "orgplane-read-only": "true", [AgentsHttp.toolsetsHeader]: "teams" })
    expect(opened.status, opened.text).toBe(200)
    const headers = { accept: "application/json, text/event-stream", authorization, "mcp-session-id": opened.headers.get("mcp-session-id") ?? "", "mcp-protocol-version": "2025-11-25" }
    const send = (body: unknown, extra: Record<string, string> = {}) => Http.request(on.url, "POST", "/mcp", { headers: { ...headers, ...extra }, body })
    expect((await send({ jsonrpc: "2.0", method: "notifications/initialized" })).status).toBe(202)
    const resultOf = (text: string) =>
      JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? text) as { result: { isError?: boolean; content?: Array<{ text?: string }>; tools?: Array<{ name: string }> } }
    // The headers left off: the session's narrowing holds, so the write is refused and no team is made.
    const write = await send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "call_operation", arguments: { name: "teams.create", arguments: { name: "Not made" } } } })
    expect(write.status, write.text).toBe(200)
    const refused = resultOf(write.text).result
    expect(refused.isError, write.text).toBe(true)
    expect(JSON.parse(refused.content?.[0]?.text ?? "{}")).toMatchObject({ status: 403, body: { reason: "read_only_credential" } })
    const tools = await send({ jsonrpc: "2.0", id: 3, method: "tools/list" })
    const names = (resultOf(tools.text).result.tools ?? []).map((tool) => tool.name)
    expect(names.some((name) => name.startsWith("teams_"))).toBe(true)
    expect(names.some((name) => name.startsWith("members_"))).toBe(false)
    // Naming another value is refused, saying the session's.
    const widened = await send({ jsonrpc: "2.0", id: 4, method: "tools/list" }, { "orgplane-read-only": "false" })
    expect(widened.status, widened.text).toBe(400)
    expect(widened.body).toMatchObject({ error: "invalid_request", details: [{ path: ["orgplane-read-only"], message: expect.stringContaining("opened with true") }] })
    const otherToolsets = await send({ jsonrpc: "2.0", id: 5, method: "tools/list" }, { [AgentsHttp.toolsetsHeader]: "members" })
    expect(otherToolsets.status, otherToolsets.text).toBe(400)
    // The same values again are the session's own.
    const same = await send({ jsonrpc: "2.0", id: 6, method: "tools/list" }, { "orgplane-read-only": "true", [AgentsHttp.toolsetsHeader]: "teams" })
    expect(same.status, same.text).toBe(200)
    const teams = Http.expectStatus<{ items: Array<unknown> }>("teams", await Http.request(on.url, "GET", "/v1/teams", { token: owner.token }), 200)
    expect(teams.items).toEqual([])
  })

  it("runs an operation only as itself: a \"..\" in a path argument reaches no other route, confirmed or not", async () => {
    const staff = await Http.staffed(on.url)
    const team = Http.expectStatus<{ team: { id: string } }>("team", await Http.request(on.url, "POST", "/v1/teams", { token: staff.owner.token, body: { name: "Kept" } }), 201).team.id
    const plugin = Http.expectStatus<{ item: { id: string } }>("plugin", await Http.request(on.url, "POST", "/v1/plugins", { token: staff.owner.token, body: { name: "Plugin" } }), 201).item.id
    const configObjects = async () =>
      Http.expectStatus<{ items: Array<unknown> }>("config objects", await Http.request(on.url, "GET", "/v1/config-objects?limit=100", { token: staff.owner.token }), 200).items.length
    const before = await configObjects()
    const client = await connect({ authorization: `Bearer ${staff.owner.token}` })
    try {
      // As the person would: whatever a first call answers, its confirmation is given back.
      const confirmed = async (name: string, args: Record<string, unknown>) => {
        const first = await call(client, "call_operation", { name, arguments: args })
        const confirmation = (first.data as { confirmation?: string }).confirmation
        return confirmation === undefined ? first : call(client, "call_operation", { name, arguments: args, confirmation })
      }
      // DELETE /v1/teams/../members/{id} is DELETE /v1/members/{id}: removing the member from the organization.
      const removed = await confirmed("teams.removeMember", { teamId: "..", memberId: staff.member.membership.id })
      expect(removed.isError).toBe(true)
      expect(removed.data).toMatchObject({ message: expect.stringContaining("teamId") })
      const member = Http.expectStatus<{ member: { removedAt: string | null } }>("member", await Http.request(on.url, "GET", `/v1/members/${staff.member.membership.id}`, { token: staff.owner.token }), 200)
      expect(member.member.removedAt).toBeNull()
      // POST /v1/plugins/../config-objects is POST /v1/config-objects: a config object made.
      const made = await confirmed("plugins.addConfigObject", { pluginId: "..", configObjectId: "cob_00000000000000000000000000" })
      expect(made.isError).toBe(true)
      expect(await configObjects()).toBe(before)
      // DELETE /v1/teams/{id}/members/.. is DELETE /v1/teams/{id}: the team deleted.
      expect((await confirmed("teams.removeMember", { teamId: team, memberId: ".." })).isError).toBe(true)
      expect((await Http.request(on.url, "GET", `/v1/teams/${team}`, { token: staff.owner.token })).status).toBe(200)
      expect((await confirmed("plugins.removeConfigObject", { pluginId: plugin, configObjectId: ".." })).isError).toBe(true)
      expect((await Http.request(on.url, "GET", `/v1/plugins/${plugin}`, { token: staff.owner.token })).status).toBe(200)
    } finally {
      await client.close()
    }
  })

  // Over a thousand calls through /mcp (24 s of the file's time on a quiet machine): its limit leaves room for a busy one.
  it("holds every served operation with a path parameter to its own route, whatever the argument: refused, nothing changed", { timeout: 180_000 }, async () => {
    const owner = await Http.owner(on.url)
    const newest = async () =>
      Http.expectStatus<{ items: Array<{ id: string }> }>("audit", await Http.request(on.url, "GET", "/v1/audit/events?limit=1", { token: owner.token }), 200).items[0]?.id
    const before = await newest()
    const client = await connect({ authorization: `Bearer ${owner.token}` })
    const check = async (hostileCase: HostilePaths.Case, value: string) => {
      const { operation } = hostileCase
      const args = hostileCase.args(value)
      const from = requestLines.length
      let result = await call(client, "call_operation", { name: operation.id, arguments: args })
      // The person confirms whatever is asked: the call is refused anyway, before or at the operation's own route.
      const confirmation = (result.data as { confirmation?: string }).confirmation
      if (confirmation !== undefined) result = await call(client, "call_operation", { name: operation.id, arguments: args, confirmation })
      const where = `${operation.id} ${JSON.stringify(args)}`
      expect(result.isError, where).toBe(true)
      const status = (result.data as { status?: number }).status
      if (status !== undefined) expect(status, where).toBeGreaterThanOrEqual(400)
      for (const line of requestLines.slice(from)) {
        const route = `${String(line["method"])} ${String(line["route"])}`
        // /mcp itself (the SDK's client also opens its stream: GET, 405), the caller read, the operation's own route,
        // or no route at all (a path refused before routing, 400).
        const reachedNone = line["route"] === "unknown" && Number(line["status"]) >= 400
        expect(reachedNone || line["route"] === "/mcp" || ["GET /v1/me", `${operation.method} ${operation.path}`].includes(route), `${where} reached ${route}`).toBe(true)
      }
    }
    try {
      expect(await HostilePaths.tryAll(check)).toBeGreaterThan(1000)
    } finally {
      await client.close()
    }
    expect(await newest()).toBe(before)
  })

  it("gives a confirmation only to a caller the API authorizes, and runs it only for that caller, credential and MCP session", async () => {
    const staff = await Http.staffed(on.url)
    const carol = await Http.join(on.url, staff.owner.token, "member", "Carol")
    const key = Http.expectStatus<{ key: string }>("key", await Http.request(on.url, "POST", "/v1/api-keys", { token: staff.owner.token, body: { name: "agent" } }), 201).key
    const team = Http.expectStatus<{ team: { id: string } }>("team", await Http.request(on.url, "POST", "/v1/teams", { token: staff.owner.token, body: { name: "Doomed" } }), 201).team.id
    const teamStatus = async () => (await Http.request(on.url, "GET", `/v1/teams/${team}`, { token: staff.owner.token })).status
    const owner = await connect({ authorization: `Bearer ${staff.owner.token}` })
    const ownerAgain = await connect({ authorization: `Bearer ${staff.owner.token}` })
    const ownerByKey = await connect({ authorization: `Bearer ${key}` })
    const admin = await connect({ authorization: `Bearer ${staff.admin.token}` })
    const member = await connect({ authorization: `Bearer ${staff.member.token}` })
    try {
      // A plain member asks to remove Carol, which the API refuses them: no token, the API's own refusal, recorded.
      const minted = await call(member, "call_operation", { name: "members.remove", arguments: { memberId: carol.membership.id } })
      expect(minted.isError).toBe(true)
      const stolen = (minted.data as { confirmation?: string }).confirmation
      // Planted where the owner's agent reads it, it would be redeemed with the owner's credential.
      if (stolen !== undefined) await call(owner, "call_operation", { name: "members.remove", arguments: { memberId: carol.membership.id }, confirmation: stolen })
      const carolNow = Http.expectStatus<{ member: { removedAt: string | null } }>("carol", await Http.request(on.url, "GET", `/v1/members/${carol.membership.id}`, { token: staff.owner.token }), 200)
      expect(carolNow.member.removedAt).toBeNull()
      expect(stolen).toBeUndefined()
      expect(minted.data).toMatchObject({ status: 403, body: { reason: "insufficient_role" } })
      const denials = Http.expectStatus<{ items: Array<{ outcome: string; reason: string; via: { channel: string } }> }>(
        "audit",
        await Http.request(on.url, "GET", `/v1/audit/events?action=member.remove&targetId=${carol.membership.id}`, { token: staff.owner.token }),
        200
      ).items
      expect(denials).toMatchObject([{ outcome: "denied", reason: "insufficient_role", via: { channel: "mcp" } }])
      // Leaving is the member's own to take: asked for themselves, they get a confirmation.
      const leaving = await call(member, "call_operation", { name: "members.remove", arguments: { memberId: staff.member.membership.id } })
      expect((leaving.data as { confirmation?: string }).confirmation).toEqual(expect.any(String))

      // The owner's confirmation runs for the owner's credential in the MCP session it was given in, and nowhere else.
      const asked = await call(owner, "call_operation", { name: "teams.delete", arguments: { teamId: team } })
      const confirmation = (asked.data as { confirmation?: string }).confirmation
      expect(confirmation).toEqual(expect.any(String))
      for (const [who, client] of [["another person", admin], ["the owner's API key", ownerByKey], ["another MCP session of the owner's session", ownerAgain]] as const) {
        const redeemed = await call(client, "call_operation", { name: "teams.delete", arguments: { teamId: team }, confirmation })
        expect(redeemed, who).toMatchObject({ isError: true, data: { message: expect.stringContaining("another caller") } })
        expect(await teamStatus(), who).toBe(200)
      }
      expect(await call(owner, "call_operation", { name: "teams.delete", arguments: { teamId: team }, confirmation })).toMatchObject({ isError: false, data: { status: 204 } })
      expect(await teamStatus()).toBe(404)
      const again = await call(owner, "call_operation", { name: "teams.delete", arguments: { teamId: team }, confirmation })
      expect(again).toMatchObject({ isError: true, data: { message: expect.stringContaining("already used") } })
    } finally {
      for (const client of [owner, ownerAgain, ownerByKey, admin, member]) await client.close()
    }
  })

  it("deletes only with the person's confirmation, once", async () => {
    const owner = await Http.owner(on.url)
    const team = Http.expectStatus<{ team: { id: string } }>(
      "team",
      await Http.request(on.url, "POST", "/v1/teams", { token: owner.token, body: { name: "Doomed" } }),
      201
    )
    const teamId = team.team.id
    const client = await connect({ authorization: `Bearer ${owner.token}` })
    try {
      const unconfirmed = await call(client, "call_operation", { name: "teams.delete", arguments: { teamId } })
      expect(unconfirmed.isError).toBe(true)
      const { confirmation } = unconfirmed.data as { confirmation: string }
      expect(confirmation).toEqual(expect.any(String))
      expect((await Http.request(on.url, "GET", `/v1/teams/${teamId}`, { token: owner.token })).status).toBe(200)

      const confirmed = await call(client, "call_operation", { name: "teams.delete", arguments: { teamId }, confirmation })
      expect(confirmed).toMatchObject({ isError: false, data: { status: 204 } })
      expect((await Http.request(on.url, "GET", `/v1/teams/${teamId}`, { token: owner.token })).status).toBe(404)
      const reused = await call(client, "call_operation", { name: "teams.delete", arguments: { teamId }, confirmation })
      expect(reused.isError).toBe(true)
    } finally {
      await client.close()
    }
  })

  it("asks the person through the client, where it can ask its user, before a destructive call, and runs it only on their yes", async () => {
    const owner = await Http.owner(on.url)
    const teamOf = async (name: string) =>
      Http.expectStatus<{ team: { id: string } }>("team", await Http.request(on.url, "POST", "/v1/teams", { token: owner.token, body: { name } }), 201).team.id
    const asked: Array<string> = []
    let answer: "yes" | "no" = "no"
    const client = new Client({ name: "orgplane-test", version: "0.0.0" }, { capabilities: { elicitation: { form: {} } } })
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message)
      return answer === "yes" ? { action: "accept", content: { confirm: true } } : { action: "decline" }
    })
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", on.url), { requestInit: { headers: { authorization: `Bearer ${owner.token}` } } }))
    try {
      const kept = await teamOf("Kept")
      const refused = await call(client, "call_operation", { name: "teams.delete", arguments: { teamId: kept } })
      expect(refused).toMatchObject({ isError: true, data: { message: expect.stringContaining("did not confirm") } })
      expect(refused.data).not.toHaveProperty("confirmation")
      expect(asked).toEqual([expect.stringContaining(`teams.delete (Delete a team): DELETE /v1/teams/${kept}`)])
      expect((await Http.request(on.url, "GET", `/v1/teams/${kept}`, { token: owner.token })).status).toBe(200)

      answer = "yes"
      const doomed = await teamOf("Doomed")
      const deleted = await call(client, "call_operation", { name: "teams.delete", arguments: { teamId: doomed } })
      expect(deleted).toMatchObject({ isError: false, data: { status: 204 } })
      expect(asked).toHaveLength(2)
      expect((await Http.request(on.url, "GET", `/v1/teams/${doomed}`, { token: owner.token })).status).toBe(404)

      // A call the API refuses the caller (a plain member deleting a team) is not put to the person.
      const member = await Http.join(on.url, owner.token, "member")
      const memberClient = new Client({ name: "orgplane-test", version: "0.0.0" }, { capabilities: { elicitation: { form: {} } } })
      memberClient.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params.message)
        return { action: "accept", content: { confirm: true } }
      })
      await memberClient.connect(new StreamableHTTPClientTransport(new URL("/mcp", on.url), { requestInit: { headers: { authorization: `Bearer ${member.token}` } } }))
      const refusedByApi = await call(memberClient, "call_operation", { name: "teams.delete", arguments: { teamId: kept } }).finally(() => memberClient.close())
      expect(refusedByApi).toMatchObject({ isError: true, data: { status: 403 } })
      expect(asked).toHaveLength(2)
      expect((await Http.request(on.url, "GET", `/v1/teams/${kept}`, { token: owner.token })).status).toBe(200)
    } finally {
      await client.close()
    }
  })
})

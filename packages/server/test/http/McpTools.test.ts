/**
 * Running an MCP tool over HTTP (`POST /v1/mcp-connections/{id}/tools/call`) against real MCP fakes on 127.0.0.1,
 * connections created and granted through the API: the result with its inspection (the credential redacted and
 * nowhere in the answer), the checks in their order (role, connection, grant, readiness, tool policy), bodies
 * refused (size, shape), and every kind of failure as a 502 with its diagnostic and inspection.
 */
import { type CreateMcpConnectionRequest, type McpToolCallRequest, ToolExecutionFailedResponse } from "@orgplane/schema"
import * as Schema from "effect/Schema"
import { calls, invalid, ok, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as FakeMcp from "../../../../packages/testkit/src/FakeMcp.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
let open: FakeMcp.FakeMcp
let keyed: FakeMcp.FakeMcp
let misbehaving: FakeMcp.FakeMcp
const API_KEY = "sk-tools-test-secret-key-9876"

beforeAll(async () => {
  // The MCP fakes are on loopback: private destinations allowed.
  server = await TestServer.start({ outboundAllowPrivate: true })
  open = await FakeMcp.start()
  keyed = await FakeMcp.start({ auth: { apiKey: API_KEY } })
  misbehaving = await FakeMcp.start({ json: true })
})
afterAll(async () => {
  await open?.close()
  await keyed?.close()
  await misbehaving?.close()
  await server?.close()
})

const { mcpConnections, mcpTools } = calls(() => server.url)

const create = async (token: string, payload: typeof CreateMcpConnectionRequest.Encoded, url = server.url) =>
  ok(await calls(url).mcpConnections.create({ token, payload }), 201).item

const grant = async (token: string, id: string, url = server.url) =>
  ok(await calls(url).mcpConnections.mcpConnectionGrant({ token, path: { connectionId: id }, payload: { role: "viewer", orgWide: true } }), 201)

const call = (token: string, id: string, payload: typeof McpToolCallRequest.Encoded, url = server.url) =>
  calls(url).mcpTools.call({ token, path: { connectionId: id }, payload })

/** A tool call with a body the API's types refuse, sent as it is. */
const callRaw = (token: string, id: string, body: unknown) => Http.request(server.url, "POST", `/v1/mcp-connections/${id}/tools/call`, { token, body })

const setToolPolicy = (token: string, id: string, allDisabled: boolean, disabledTools: ReadonlyArray<string>) =>
  mcpConnections.setToolPolicy({ token, path: { connectionId: id }, payload: { allDisabled, disabledTools } })

/** An organization with a connection to `fake` (API key when the fake has one), granted to everyone in it. */
const setUp = async (fake: FakeMcp.FakeMcp, options: { keyed?: boolean; name?: string; url?: string } = {}) => {
  const org = await Http.staffed(options.url ?? server.url)
  const connection = await create(
    org.owner.token,
    options.keyed ? { name: options.name ?? "Keyed", url: fake.url, authType: "apikey", apiKey: API_KEY } : { name: options.name ?? "Open", url: fake.url, authType: "none" },
    options.url
  )
  await grant(org.owner.token, connection.id, options.url)
  return { org, connection }
}

const decodeFailure = Schema.decodeUnknownSync(Schema.toEncoded(ToolExecutionFailedResponse))

/** The body of a 502 `tool_execution_failed`, read as its schema says (anything else fails the test). */
const failedWith = (response: Awaited<ReturnType<typeof call>>) => {
  expect(response.status, JSON.stringify(response.body)).toBe(502)
  expect(response.body).toMatchObject({ error: "tool_execution_failed" })
  return decodeFailure(response.body)
}

describe("running an MCP tool", () => {
  it("answers the result with the exchange inspected, the credential redacted and nowhere in the answer", async () => {
    const { connection, org } = await setUp(keyed, { keyed: true })
    const response = await call(org.admin.token, connection.id, { toolName: "  echo ", arguments: { text: "hello tools" } })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    const body = ok(response, 200)
    expect(body.referenceId).toBe(response.headers.get("x-request-id"))
    expect(body.durationMs).toEqual(expect.any(Number))
    expect(body.result).toMatchObject({ content: [{ type: "text", text: "hello tools" }] })
    expect(body.inspection.diagnosis).toEqual({ summary: "The tool ran and answered a result." })
    const sent = body.inspection.request
    if (sent === undefined) throw new Error(`no request inspected: ${response.text}`)
    expect(sent).toMatchObject({ method: "POST", url: keyed.url })
    expect(Date.parse(sent.startedAt)).not.toBeNaN()
    expect(sent.headers).toContainEqual({ name: "authorization", value: "Bearer [redacted]", redacted: true })
    expect(JSON.parse(sent.body.text)).toMatchObject({ method: "tools/call", params: { name: "echo", arguments: { text: "hello tools" } } })
    expect(sent.body).toMatchObject({ truncated: false, unavailable: false })
    expect(body.inspection.response).toMatchObject({ status: 200, body: { truncated: false, unavailable: false } })
    expect(body.inspection.response?.body.text).toContain("hello tools")
    expect(JSON.stringify(body)).not.toContain(API_KEY)
    // The key did go to the server.
    expect(keyed.requests.some((recorded) => recorded.rpcMethod === "tools/call" && recorded.headers.authorization === `Bearer ${API_KEY}`)).toBe(true)
  })

  it("answers 404 for an unknown connection and for another organization's, like a missing one", async () => {
    const { connection } = await setUp(open)
    const other = await Http.staffed(server.url, "Other")
    for (const id of [connection.id, "emc_01jbz5m6z3f0y8q8q8q8q8q8q8"]) {
      const response = await call(other.owner.token, id, { toolName: "echo", arguments: { text: "x" } })
      expect(response.status).toBe(404)
      expect(response.body).toEqual({ error: "connection_not_found", message: "Unknown connection." })
    }
  })

  it("answers 403 to an admin no grant reaches, and to a member whatever the grants", async () => {
    const org = await Http.staffed(server.url)
    const connection = await create(org.owner.token, { name: "Ungranted", url: open.url, authType: "none" })
    const refused = await call(org.admin.token, connection.id, { toolName: "echo", arguments: { text: "x" } })
    expect(refused.status).toBe(403)
    expect(refused.body).toEqual({ reason: "insufficient_access", message: 'You have not been granted access to "Ungranted".' })
    await grant(org.owner.token, connection.id)
    const member = await call(org.member.token, connection.id, { toolName: "echo", arguments: { text: "x" } })
    expect(member.status).toBe(403)
    expect(member.body).toMatchObject({ reason: "insufficient_role" })
    // A grant to the admin alone is enough.
    const direct = await setUp(open, { name: "Direct" })
    expect((await call(direct.org.admin.token, direct.connection.id, { toolName: "echo", arguments: { text: "x" } })).status).toBe(200)
  })

  it("answers 409 when the credential the call needs is missing (per_member OAuth without the caller's account)", async () => {
    const org = await Http.staffed(server.url)
    const connection = await create(org.owner.token, {
      name: "Per member",
      url: "https://mcp.linear.app/mcp",
      authType: "oauth",
      credentialMode: "per_member"
    })
    await grant(org.owner.token, connection.id)
    const response = await call(org.admin.token, connection.id, { toolName: "echo", arguments: {} })
    expect(response.status).toBe(409)
    expect(response.body).toEqual({ error: "connection_not_ready", message: "Connect your account before using this MCP's tools." })
  })

  it("answers 403 tool_disabled for a tool the policy disables, and for every tool when all are", async () => {
    const { connection, org } = await setUp(open)
    expect((await setToolPolicy(org.admin.token, connection.id, false, ["delete_item"])).status).toBe(200)
    const toolCalls = () => open.requests.filter((recorded) => recorded.rpcMethod === "tools/call").length
    const before = toolCalls()
    const disabled = await call(org.admin.token, connection.id, { toolName: "delete_item", arguments: { id: "1" } })
    expect(disabled.status).toBe(403)
    expect(refusal(disabled, 403)).toMatchObject({
      reason: "tool_disabled",
      message: expect.stringMatching(/^"delete_item" is disabled for your organization\. Admin changed the tool policy on \d{4}-\d{2}-\d{2}\.$/)
    })
    // Refused before anything is sent.
    expect(toolCalls()).toBe(before)
    expect((await call(org.admin.token, connection.id, { toolName: "echo", arguments: { text: "x" } })).status).toBe(200)
    expect((await setToolPolicy(org.owner.token, connection.id, true, [])).status).toBe(200)
    const all = await call(org.admin.token, connection.id, { toolName: "echo", arguments: { text: "x" } })
    expect(all.status).toBe(403)
    expect(refusal(all, 403)).toMatchObject({ reason: "tool_disabled", message: expect.stringContaining('Every tool of "Open" is disabled.') })
  })

  it("refuses a body over 1 MiB with 413 and a bad one with 400", async () => {
    const { connection, org } = await setUp(open)
    const huge = await call(org.admin.token, connection.id, { toolName: "echo", arguments: { text: "x".repeat(1024 * 1024) } })
    expect(huge.status).toBe(413)
    expect(refusal(huge, 413)).toMatchObject({ error: "payload_too_large" })
    for (
      const body of [
        {},
        { toolName: "echo" },
        { toolName: "echo", arguments: [] },
        { toolName: "echo", arguments: "text" },
        { toolName: "   ", arguments: {} },
        { toolName: "x".repeat(256), arguments: {} },
        { toolName: "echo", arguments: {}, extra: true }
      ]
    ) {
      const response = await callRaw(org.admin.token, connection.id, body)
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect(invalid(response).error).toBe("invalid_request")
    }
  })

  it("answers a tool error (isError) as 502 provider_tool_error, the tool's text kept out", async () => {
    const { connection, org } = await setUp(open, { name: "Failing" })
    const response = await call(org.admin.token, connection.id, { toolName: "fail", arguments: {} })
    const body = failedWith(response)
    const reference = response.headers.get("x-request-id")
    expect(body.message).toBe(`Could not run "fail" on "Failing": The tool ran and reported an error. Reference: ${reference}.`)
    expect(body.diagnostic).toMatchObject({
      referenceId: reference,
      category: "provider_tool_error",
      code: "MCP_PROVIDER_TOOL_ERROR",
      retryable: false,
      outbound: { origin: open.origin, pathHash: expect.stringMatching(/^sha256:[0-9a-f]{16}$/) }
    })
    expect(body.diagnostic.payloadBytes).toBeGreaterThan(0)
    expect(JSON.stringify(body.diagnostic)).not.toContain("the tool failed")
    expect(body.inspection.response?.status).toBe(200)
  })

  it("answers a JSON-RPC error with its code", async () => {
    const { connection, org } = await setUp(open)
    const body = failedWith(await call(org.admin.token, connection.id, { toolName: "protocol_error", arguments: {} }))
    expect(body.diagnostic).toMatchObject({ jsonRpcCode: -32603, category: "mcp_protocol_failure" })
  })

  it("answers HTTP 429 and 500 from the server as retryable, oversized answers as too large", async () => {
    const { connection, org } = await setUp(misbehaving)
    misbehaving.setMode({ _tag: "status", status: 429, rpcMethod: "tools/call" })
    const throttled = failedWith(await call(org.admin.token, connection.id, { toolName: "echo", arguments: { text: "x" } }))
    expect(throttled.diagnostic).toMatchObject({ code: "MCP_HTTP_429", category: "provider_throttled", retryable: true, httpStatus: 429 })
    expect(throttled.inspection.response?.status).toBe(429)
    expect(throttled.inspection.diagnosis.summary).toBe("The remote MCP returned HTTP 429 to the tool call.")
    misbehaving.setMode({ _tag: "status", status: 500, rpcMethod: "tools/call" })
    const broken = failedWith(await call(org.admin.token, connection.id, { toolName: "echo", arguments: { text: "x" } }))
    expect(broken.diagnostic).toMatchObject({ code: "MCP_HTTP_500", category: "provider_unavailable", retryable: true })
    misbehaving.setMode({ _tag: "oversized", bytes: 5 * 1024 * 1024 })
    const oversized = failedWith(await call(org.admin.token, connection.id, { toolName: "echo", arguments: { text: "x" } }))
    expect(oversized.diagnostic).toMatchObject({ code: "MCP_RESPONSE_BODY_LIMIT", category: "response_too_large" })
    misbehaving.setMode({ _tag: "ok" })
  })

  it("answers a server that is gone as a network failure", async () => {
    const doomed = await FakeMcp.start()
    const { connection, org } = await setUp(doomed)
    await doomed.close()
    const body = failedWith(await call(org.admin.token, connection.id, { toolName: "echo", arguments: { text: "x" } }))
    expect(body.diagnostic).toMatchObject({ category: "network_failure", retryable: true, phase: "NETWORK_TCP" })
    expect(body.inspection.request).toBeUndefined()
  })
})

describe("listing an MCP connection's tools", () => {
  it("reads the server's list with the policy marked, for those granted it", async () => {
    const { connection, org } = await setUp(keyed, { keyed: true, name: "Listed" })
    expect((await setToolPolicy(org.owner.token, connection.id, false, ["delete_item"])).status).toBe(200)
    const path = { connectionId: connection.id }
    const response = await mcpTools.listTools({ token: org.admin.token, path })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    const catalog = ok(response, 200)
    expect(catalog.referenceId).toBe(response.headers.get("x-request-id"))
    expect(catalog.truncated).toBe(false)
    expect(catalog.policy).toMatchObject({ allDisabled: false, disabledTools: ["delete_item"], updatedByOrgMembershipId: org.owner.membership.id })
    const byName = Object.fromEntries(catalog.tools.map((tool) => [tool.name, tool]))
    expect(byName["delete_item"]).toMatchObject({ disabled: true, annotations: { destructiveHint: true } })
    expect(byName["echo"]).toMatchObject({ disabled: false, title: "Echo", inputSchema: { type: "object" } })
    expect(JSON.stringify(catalog)).not.toContain(API_KEY)

    const ungranted = await Http.staffed(server.url)
    const other = await create(ungranted.owner.token, { name: "Nobody's", url: open.url, authType: "none" })
    expect((await mcpTools.listTools({ token: ungranted.admin.token, path: { connectionId: other.id } })).body).toMatchObject({ reason: "insufficient_access" })
    expect((await mcpTools.listTools({ token: ungranted.admin.token, path })).status).toBe(404)
    expect((await mcpTools.listTools({ token: org.member.token, path })).body).toMatchObject({ reason: "insufficient_role" })
  })

  it("answers 502 tool_catalog_failed with a diagnostic when the list cannot be read", async () => {
    const doomed = await FakeMcp.start()
    const { connection, org } = await setUp(doomed, { name: "Gone" })
    await doomed.close()
    const response = await mcpTools.listTools({ token: org.admin.token, path: { connectionId: connection.id } })
    expect(response.status).toBe(502)
    expect(refusal(response, 502)).toMatchObject({
      error: "tool_catalog_failed",
      message: expect.stringMatching(/^Could not list the tools of "Gone": The MCP server could not be reached \(ECONNREFUSED\)\. Reference: .+\.$/),
      diagnostic: { category: "network_failure", code: "MCP_ECONNREFUSED", retryable: true }
    })
  })
})

describe("running an MCP tool with a short tool timeout", () => {
  let short: TestServer.RunningServer
  let slow: FakeMcp.FakeMcp
  beforeAll(async () => {
    short = await TestServer.start({ outboundAllowPrivate: true, mcpToolTimeout: "1 second" })
    slow = await FakeMcp.start()
  })
  afterAll(async () => {
    await slow?.close()
    await short?.close()
  })

  it("times out a hanging tool call", async () => {
    const { connection, org } = await setUp(slow, { url: short.url })
    slow.setMode({ _tag: "hang", rpcMethod: "tools/call" })
    const body = failedWith(await call(org.admin.token, connection.id, { toolName: "echo", arguments: { text: "x" } }, short.url))
    expect(body.diagnostic).toMatchObject({ code: "MCP_REQUEST_TIMEOUT", category: "request_timeout", retryable: true, phase: "MCP_TOOL_EXECUTION" })
    expect(body.inspection.request?.method).toBe("POST")
    expect(body.inspection.response).toBeUndefined()
    slow.setMode({ _tag: "ok" })
  })
})

/**
 * The tool runner against real MCP fakes on loopback (no database): results with their inspection, and every way
 * a call fails (tool errors, JSON-RPC errors, HTTP statuses, timeouts, oversized answers, redirects, a server
 * that is gone, refused credentials) as the diagnostic and inspection the API answers.
 */
import * as FakeMcp from "../../../packages/testkit/src/FakeMcp.js"
import * as Wait from "../../../packages/testkit/src/Wait.js"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as AddressGuard from "../src/platform/AddressGuard.js"
import * as Outbound from "../src/platform/Outbound.js"
import * as ToolConfig from "../src/mcp/ToolConfig.js"
import * as ToolRunner from "../src/mcp/ToolRunner.js"

const KEY = "sk-tool-runner-secret-4242"

/** The real clock moved forward by `advance` (as support/Clocks.ts's `ShiftedClock`). */
class ShiftedClock implements Clock.Clock {
  offsetMillis = 0
  private readonly real = Clock.Clock.defaultValue()
  advance(duration: Duration.Input) {
    this.offsetMillis += Duration.toMillis(Duration.fromInputUnsafe(duration))
  }
  currentTimeMillisUnsafe() {
    return this.real.currentTimeMillisUnsafe() + this.offsetMillis
  }
  currentTimeNanosUnsafe() {
    return this.real.currentTimeNanosUnsafe() + BigInt(this.offsetMillis) * 1_000_000n
  }
  monotonicTimeNanosUnsafe() {
    return this.real.monotonicTimeNanosUnsafe()
  }
  readonly currentTimeMillis = Effect.sync(() => this.currentTimeMillisUnsafe())
  readonly currentTimeNanos = Effect.sync(() => this.currentTimeNanosUnsafe())
  readonly monotonicTimeNanos = Effect.sync(() => this.monotonicTimeNanosUnsafe())
  sleep(duration: Duration.Duration) {
    return this.real.sleep(duration)
  }
}

const layer = (toolTimeout: Duration.Input, allowPrivate = true) =>
  Layer.merge(Outbound.layer({ allowPrivate }).pipe(Layer.provide(AddressGuard.systemLayer)), Layer.orDie(ToolConfig.layer({ mcpToolTimeout: toolTimeout })))

const run = (
  input: Partial<ToolRunner.RunInput> & { url: string; toolName: string },
  options: { timeout?: Duration.Input; allowPrivate?: boolean; clock?: Clock.Clock } = {}
) =>
  Effect.runPromise(
    Effect.result(
      ToolRunner.run({ headers: {}, arguments: {}, referenceId: "ref-1", sharedCredential: true, ...input }).pipe(
        Effect.provide(layer(options.timeout ?? "10 seconds", options.allowPrivate ?? true))
      )
    ).pipe(options.clock === undefined ? (effect) => effect : Effect.provideService(Clock.Clock, options.clock))
  )

const ok = async (...args: Parameters<typeof run>) => {
  const outcome = await run(...args)
  if (outcome._tag === "Failure") throw new Error(`expected success, got ${JSON.stringify(outcome.failure.diagnostic)}`)
  return outcome.success
}

const failed = async (...args: Parameters<typeof run>) => {
  const outcome = await run(...args)
  if (outcome._tag === "Success") throw new Error(`expected a failure, got ${JSON.stringify(outcome.success.result)}`)
  return outcome.failure
}

let open: FakeMcp.FakeMcp
let openJson: FakeMcp.FakeMcp
let keyed: FakeMcp.FakeMcp
let misbehaving: FakeMcp.FakeMcp

beforeAll(async () => {
  open = await FakeMcp.start()
  openJson = await FakeMcp.start({ json: true })
  keyed = await FakeMcp.start({ auth: { apiKey: KEY } })
  misbehaving = await FakeMcp.start({ json: true })
})
afterAll(async () => {
  await Promise.all([open.close(), openJson.close(), keyed.close(), misbehaving.close()])
})

describe("the tool runner", () => {
  it("runs a tool and shows the exchange with the credential redacted", async () => {
    const run = await ok({ url: keyed.url, toolName: "echo", arguments: { text: "hello there" }, headers: { authorization: `Bearer ${KEY}` }, authType: "apikey" })
    expect(run.referenceId).toBe("ref-1")
    expect(run.result).toMatchObject({ content: [{ type: "text", text: "hello there" }] })
    expect(run.durationMs).toBeGreaterThanOrEqual(0)
    const { request, response, diagnosis } = run.inspection
    expect(diagnosis.summary).toBe("The tool ran and answered a result.")
    expect(request).toMatchObject({ method: "POST", url: keyed.url })
    expect(request?.headers).toContainEqual({ name: "authorization", value: "Bearer [redacted]", redacted: true })
    expect(request?.headers.find((header) => header.name === "content-type")?.value).toBe("application/json")
    expect(JSON.parse(request!.body.text)).toMatchObject({ method: "tools/call", params: { name: "echo", arguments: { text: "hello there" } } })
    expect(request?.body.bytes).toBe(Buffer.byteLength(request!.body.text))
    expect(response).toMatchObject({ status: 200 })
    expect(response?.headers.find((header) => header.name === "content-type")?.value).toContain("text/event-stream")
    expect(response?.body.text).toContain("hello there")
    expect(response?.body.truncated).toBe(false)
    expect(JSON.stringify(run)).not.toContain(KEY)
    // The key did reach the server.
    expect(keyed.requests.some((recorded) => recorded.rpcMethod === "tools/call" && recorded.headers.authorization === `Bearer ${KEY}`)).toBe(true)
  })

  it("returns structured content as the server sent it", async () => {
    const run = await ok({ url: openJson.url, toolName: "add", arguments: { a: 2, b: 40 } })
    expect(run.result).toMatchObject({ structuredContent: { sum: 42 } })
    expect(run.inspection.response?.headers.find((header) => header.name === "content-type")?.value).toContain("application/json")
  })

  it("cuts a large result in the inspection, not in the result", async () => {
    const bytes = 600 * 1024
    const run = await ok({ url: open.url, toolName: "large_output", arguments: { bytes } })
    const text = (run.result as { content: Array<{ text: string }> }).content[0]!.text
    expect(text.length).toBe(bytes)
    expect(run.inspection.response?.body.truncated).toBe(true)
    expect(run.inspection.response?.body.bytes).toBeGreaterThan(bytes)
    expect(Buffer.byteLength(run.inspection.response!.body.text)).toBeLessThanOrEqual(512 * 1024)
  })

  it("accepts an event stream over 4 MiB but refuses a JSON answer over 4 MiB", async () => {
    const bytes = 5 * 1024 * 1024
    const streamed = await ok({ url: open.url, toolName: "large_output", arguments: { bytes } })
    expect(streamed.inspection.response?.body.bytes).toBeGreaterThan(bytes)
    const refused = await failed({ url: openJson.url, toolName: "large_output", arguments: { bytes } })
    expect(refused.diagnostic).toMatchObject({ code: "MCP_RESPONSE_BODY_LIMIT", category: "response_too_large", retryable: false })
    expect(refused.inspection.request).toBeDefined()
    expect(refused.inspection.response).toBeUndefined()
  })

  it("answers a tool error (isError) as a provider tool error, without the tool's text", async () => {
    const failure = await failed({ url: open.url, toolName: "fail" })
    expect(failure.diagnostic).toMatchObject({
      referenceId: "ref-1",
      code: "MCP_PROVIDER_TOOL_ERROR",
      category: "provider_tool_error",
      phase: "MCP_TOOL_EXECUTION",
      retryable: false,
      outbound: { origin: open.origin }
    })
    expect(failure.diagnostic.payloadBytes).toBeGreaterThan(0)
    expect(JSON.stringify(failure.diagnostic)).not.toContain("the tool failed")
    // The exchange itself went fine: the inspection shows the 200 and its body.
    expect(failure.inspection.response?.status).toBe(200)
    expect(failure.inspection.diagnosis.summary).toContain("provider or tool failure")
  })

  it("answers a JSON-RPC error with its code", async () => {
    const failure = await failed({ url: open.url, toolName: "protocol_error" })
    expect(failure.diagnostic).toMatchObject({ jsonRpcCode: -32603, code: "MCP_JSONRPC_32603", category: "mcp_protocol_failure" })
    expect(failure.inspection.response?.status).toBe(200)
  })

  it("answers a tool the server does not know", async () => {
    const failure = await failed({ url: open.url, toolName: "no_such_tool" })
    // The SDK's McpServer answers an unknown tool with an isError result whose text is "MCP error -32602: ...".
    expect(failure.diagnostic).toMatchObject({ code: "MCP_PROVIDER_INVALID_PARAMS", category: "mcp_tool_input_invalid" })
  })

  it("answers HTTP 429 and 500 on the tool call as retryable, with the response inspected", async () => {
    misbehaving.setMode({ _tag: "status", status: 429, rpcMethod: "tools/call", headers: { "retry-after": "5", "x-request-id": "prov-req-7" } })
    const throttled = await failed({ url: misbehaving.url, toolName: "echo", arguments: { text: "x" } })
    expect(throttled.diagnostic).toMatchObject({ code: "MCP_HTTP_429", category: "provider_throttled", retryable: true, httpStatus: 429, phase: "MCP_TOOL_EXECUTION", providerRequestId: "prov-req-7" })
    expect(throttled.inspection.response?.status).toBe(429)
    expect(throttled.inspection.diagnosis.summary).toBe("The remote MCP returned HTTP 429 to the tool call.")
    misbehaving.setMode({ _tag: "status", status: 500, rpcMethod: "tools/call" })
    const broken = await failed({ url: misbehaving.url, toolName: "echo", arguments: { text: "x" } })
    expect(broken.diagnostic).toMatchObject({ code: "MCP_HTTP_500", category: "provider_unavailable", retryable: true })
    misbehaving.setMode({ _tag: "ok" })
  })

  it("answers a plain 403 on the tool call as the provider's policy, and html as not MCP", async () => {
    misbehaving.setMode({ _tag: "status", status: 403, rpcMethod: "tools/call" })
    expect((await failed({ url: misbehaving.url, toolName: "echo", arguments: { text: "x" } })).diagnostic).toMatchObject({ code: "MCP_PROVIDER_HTTP_403", category: "provider_policy_denied" })
    misbehaving.setMode({ _tag: "status", status: 200, rpcMethod: "tools/call", headers: { "content-type": "text/html" }, body: "<html>login</html>" })
    const html = await failed({ url: misbehaving.url, toolName: "echo", arguments: { text: "x" } })
    expect(html.diagnostic).toMatchObject({ code: "MCP_HTTP_HTML_RESPONSE", category: "unexpected_html" })
    expect(html.inspection.response?.body.text).toBe("<html>login</html>")
    misbehaving.setMode({ _tag: "ok" })
  })

  it("waits for a slow tool call and times the exchange", async () => {
    // The call is held until the runner's clock has moved 400 ms: the times reported are the clock's.
    const clock = new ShiftedClock()
    let answer = () => {}
    misbehaving.setMode({ _tag: "held", until: new Promise<void>((resolve) => (answer = resolve)), rpcMethod: "tools/call" })
    const seen = misbehaving.requests.length
    const running = ok({ url: misbehaving.url, toolName: "echo", arguments: { text: "late" } }, { clock })
    await Wait.until(() => misbehaving.requests.slice(seen).some((request) => request.rpcMethod === "tools/call"), "the tool call")
    clock.advance("400 millis")
    answer()
    const run = await running
    expect(run.result).toMatchObject({ content: [{ text: "late" }] })
    expect(run.inspection.response?.durationMs).toBeGreaterThanOrEqual(400)
    expect(run.durationMs).toBeGreaterThanOrEqual(run.inspection.response!.durationMs)
    misbehaving.setMode({ _tag: "ok" })
  })

  it("times out a hanging tool call after the configured timeout", async () => {
    misbehaving.setMode({ _tag: "hang", rpcMethod: "tools/call" })
    const failure = await failed({ url: misbehaving.url, toolName: "echo", arguments: { text: "x" } }, { timeout: "1 second" })
    expect(failure.diagnostic).toMatchObject({ code: "MCP_REQUEST_TIMEOUT", category: "request_timeout", retryable: true })
    expect(failure.inspection.request).toBeDefined()
    expect(failure.inspection.response).toBeUndefined()
    expect(failure.inspection.diagnosis.summary).toBe("The remote MCP did not respond to the tool call before the deadline.")
    misbehaving.setMode({ _tag: "ok" })
  })

  it("times out a server that never answers initialize, before any tool call", async () => {
    misbehaving.setMode({ _tag: "hang" })
    const failure = await failed({ url: misbehaving.url, toolName: "echo" }, { timeout: "1 second" })
    expect(failure.diagnostic).toMatchObject({ code: "MCP_REQUEST_TIMEOUT", phase: "MCP_INITIALIZE" })
    expect(failure.inspection.request).toBeUndefined()
    expect(failure.inspection.diagnosis.summary).toContain("the tool call was not sent")
    misbehaving.setMode({ _tag: "ok" })
  })

  it("refuses an oversized answer", async () => {
    misbehaving.setMode({ _tag: "oversized", bytes: 17 * 1024 * 1024, contentType: "text/event-stream", advertise: false })
    const failure = await failed({ url: misbehaving.url, toolName: "echo" })
    expect(failure.diagnostic).toMatchObject({ code: "MCP_RESPONSE_BODY_LIMIT", category: "response_too_large" })
    misbehaving.setMode({ _tag: "ok" })
  })

  it("refuses a redirect of the POST to another origin", async () => {
    misbehaving.setMode({ _tag: "redirect", to: open.url })
    const failure = await failed({ url: misbehaving.url, toolName: "echo" })
    expect(failure.diagnostic).toMatchObject({ code: "MCP_URL_BLOCKED", category: "security_blocked", retryable: false })
    expect(failure.inspection.diagnosis.summary).toContain("outbound guard")
    misbehaving.setMode({ _tag: "ok" })
  })

  it("is refused by the guard for a loopback server unless private destinations are allowed", async () => {
    const failure = await failed({ url: open.url, toolName: "echo" }, { allowPrivate: false })
    expect(failure.diagnostic).toMatchObject({ code: "MCP_URL_BLOCKED", category: "security_blocked" })
    expect(failure.inspection.request).toBeUndefined()
  })

  it("answers a server that is gone as a network failure", async () => {
    const gone = await FakeMcp.start()
    const url = gone.url
    await gone.close()
    const failure = await failed({ url, toolName: "echo" })
    expect(failure.diagnostic).toMatchObject({ category: "network_failure", code: "MCP_ECONNREFUSED", phase: "NETWORK_TCP", retryable: true })
    expect(failure.inspection.diagnosis.summary).toBe("The MCP server could not be reached: the tool call was not sent.")
  })

  it("answers a host name that does not resolve as a DNS failure", async () => {
    const failure = await failed({ url: "http://mcp.nonexistent.invalid/mcp", toolName: "echo" })
    expect(failure.diagnostic).toMatchObject({ category: "dns_failure", code: "MCP_ENOTFOUND", phase: "NETWORK_DNS", retryable: false })
    expect(failure.inspection.diagnosis.summary).toBe("The MCP server could not be reached: the tool call was not sent.")
  })

  it("tells a refused shared credential apart from a missing one, and names whose move it is", async () => {
    const wrong = await failed({ url: keyed.url, toolName: "echo", headers: { authorization: "Bearer wrong" }, authType: "apikey" })
    expect(wrong.diagnostic).toMatchObject({
      code: "MCP_OAUTH_HTTP_401",
      category: "oauth_resource_rejected",
      httpStatus: 401,
      phase: "MCP_INITIALIZE",
      operatorAction: "Ask an organization admin to update the connection's API key."
    })
    const none = await failed({ url: keyed.url, toolName: "echo" })
    expect(none.diagnostic).toMatchObject({ code: "MCP_PROVIDER_AUTH_REQUIRED", httpStatus: 401 })
  })

  it("lists the tools page by page", async () => {
    const paged = await FakeMcp.start({ extraTools: 30, toolsPageSize: 7 })
    try {
      const catalog = await Effect.runPromise(
        ToolRunner.listTools({ url: paged.url, headers: {}, referenceId: "ref-2", sharedCredential: true }).pipe(Effect.provide(layer("10 seconds")))
      )
      expect(catalog.truncated).toBe(false)
      expect(catalog.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["echo", "add", "fail", "tool_001", "tool_030"]))
      expect(catalog.tools).toHaveLength(36)
      expect(catalog.tools.find((tool) => tool.name === "delete_item")).toMatchObject({ title: "Delete an item", annotations: { destructiveHint: true } })
      expect(paged.requests.filter((recorded) => recorded.rpcMethod === "tools/list")).toHaveLength(6)
    } finally {
      await paged.close()
    }
  })

  it("stops listing at 20 pages and 2000 tools", async () => {
    const huge = await FakeMcp.start({ extraTools: 2100, toolsPageSize: 100 })
    try {
      const catalog = await Effect.runPromise(
        ToolRunner.listTools({ url: huge.url, headers: {}, referenceId: "ref-3", sharedCredential: true }).pipe(Effect.provide(layer("10 seconds")))
      )
      expect(catalog.truncated).toBe(true)
      expect(catalog.tools).toHaveLength(2000)
      expect(huge.requests.filter((recorded) => recorded.rpcMethod === "tools/list")).toHaveLength(20)
    } finally {
      await huge.close()
    }
  })

  it("answers a tool list it cannot read with a diagnostic", async () => {
    const outcome = await Effect.runPromise(
      Effect.result(ToolRunner.listTools({ url: keyed.url, headers: {}, referenceId: "ref-4", sharedCredential: true }).pipe(Effect.provide(layer("10 seconds"))))
    )
    expect(outcome._tag).toBe("Failure")
    if (outcome._tag === "Failure") expect(outcome.failure.diagnostic).toMatchObject({ code: "MCP_PROVIDER_AUTH_REQUIRED", referenceId: "ref-4", phase: "MCP_INITIALIZE" })
  })
})

/**
 * The tool runner's pure parts: header, URL and body redaction and truncation in the inspection, the inspector's
 * capture (only `tools/call`, retries, unreadable bodies, the grace after the call settles), the phase of a
 * request, and the classification of provider tool errors and HTTP answers.
 */
import { ExternalMcpConnectionId } from "@orgplane-next/schema"
import { describe, expect, it } from "vitest"
import type { CredentialContext } from "../src/mcp/Diagnostics.js"
import { phaseOf } from "../src/mcp/ExchangePhase.js"
import * as Inspection from "../src/mcp/Inspection.js"
import { McpSessionError } from "../src/mcp/Session.js"
import { classifySessionError, fromSessionError } from "../src/mcp/SessionErrors.js"
import { withConnectUrl } from "../src/mcp/ToolCalls.js"
import { diagnose } from "../src/mcp/ToolCallDiagnosis.js"
import { fromToolResult } from "../src/mcp/ToolErrors.js"
import { mcpSdk } from "../src/integrations/mcp/McpSdk.js"

// The server loads the SDK on first use; errors of its kinds exist only once it has (integrations/mcp/McpSdk.ts).
const { StreamableHTTPError } = await mcpSdk()

const endpoint = "https://mcp.example.com/mcp"

describe("header redaction", () => {
  it("redacts the broader list plus mcp-session-id, and keeps the authorization scheme", () => {
    const headers = Inspection.inspectHeaders([
      ["Authorization", "Bearer sk-live-123"],
      ["Proxy-Authorization", "Basic dXNlcjpwYXNz"],
      ["Cookie", "a=b"],
      ["Set-Cookie", "a=b"],
      ["DPoP", "eyJ..."],
      ["Last-Event-ID", "42"],
      ["Mcp-Session-Id", "sess-1"],
      ["X-Api-Key", "k"],
      ["X-Custom-Key", "k"],
      ["X-Auth-Token", "t"],
      ["X-Client-Secret", "s"],
      ["X-Credential-Hint", "c"],
      ["X-Password", "p"],
      ["X-Signature", "sig"],
      ["X-Access-Key-Id", "a"],
      ["Content-Type", "application/json"],
      ["Accept", "application/json, text/event-stream"],
      ["Mcp-Protocol-Version", "2025-06-18"]
    ])
    const byName = Object.fromEntries(headers.map((header) => [header.name, header]))
    expect(byName["authorization"]).toEqual({ name: "authorization", value: "Bearer [redacted]", redacted: true })
    expect(byName["proxy-authorization"]).toEqual({ name: "proxy-authorization", value: "Basic [redacted]", redacted: true })
    for (const name of ["cookie", "set-cookie", "dpop", "last-event-id", "mcp-session-id", "x-api-key", "x-custom-key", "x-auth-token", "x-client-secret", "x-credential-hint", "x-password", "x-signature", "x-access-key-id"]) {
      expect(byName[name], name).toEqual({ name, value: "[redacted]", redacted: true })
    }
    expect(byName["content-type"]).toEqual({ name: "content-type", value: "application/json", redacted: false })
    expect(byName["mcp-protocol-version"]?.redacted).toBe(false)
    expect(JSON.stringify(headers)).not.toMatch(/sk-live-123|dXNlcjpwYXNz|sess-1/)
    expect(headers.map((header) => header.name)).toEqual([...headers.map((header) => header.name)].sort())
  })

  it("shows an authorization value without a scheme as [redacted] only", () => {
    expect(Inspection.inspectHeaders([["authorization", "sk-no-scheme"]])).toEqual([{ name: "authorization", value: "[redacted]", redacted: true }])
  })
})

describe("URL redaction", () => {
  it("drops credentials and the fragment and redacts every query value", () => {
    expect(Inspection.redactUrl("https://user:pw@mcp.example.com:8443/mcp?token=abc&team=x&flag#frag")).toBe(
      "https://mcp.example.com:8443/mcp?token=[redacted]&team=[redacted]&flag=[redacted]"
    )
    expect(Inspection.redactUrl("https://mcp.example.com/mcp")).toBe("https://mcp.example.com/mcp")
    expect(Inspection.redactUrl("not a url")).toBe("[redacted]")
  })
})

describe("body capture", () => {
  it("keeps at most the cap, counts every byte and marks the cut", () => {
    expect(Inspection.inspectBody("hello")).toEqual({ text: "hello", bytes: 5, truncated: false, unavailable: false })
    const big = "a".repeat(Inspection.BODY_CAP + 10)
    const body = Inspection.inspectBody(big)
    expect(body.bytes).toBe(Inspection.BODY_CAP + 10)
    expect(body.truncated).toBe(true)
    expect(body.text.length).toBe(Inspection.BODY_CAP)
  })

  it("cuts on a character boundary", () => {
    // "é" is two bytes: a cap of 3 bytes keeps one "é", not half of the second.
    const body = Inspection.inspectBody("ééé", 3)
    expect(body).toEqual({ text: "é", bytes: 6, truncated: true, unavailable: false })
  })
})

const call = (id = 1) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } })

describe("the inspector", () => {
  /** A clock the test moves, with the inspector's timers on it. */
  const clock = () => {
    let now = 1_700_000_000_000
    const timers = new Set<{ readonly at: number; readonly fire: () => void }>()
    return {
      now: () => now,
      advance: (ms: number) => {
        now += ms
        for (const timer of [...timers].filter((timer) => timer.at <= now)) {
          timers.delete(timer)
          timer.fire()
        }
      },
      after: (ms: number, fire: () => void) => {
        const timer = { at: now + ms, fire }
        timers.add(timer)
        return () => void timers.delete(timer)
      }
    }
  }

  it("records only tools/call, with the duration to the response headers", async () => {
    const time = clock()
    const inspector = Inspection.make({ now: time.now })
    const fetch = inspector.wrap(async (_input, init) => {
      time.advance(25)
      const isCall = typeof init?.body === "string" && init.body.includes("tools/call")
      return new Response(isCall ? "{\"result\":1}" : "{}", { status: 200, statusText: "OK", headers: { "content-type": "application/json", "mcp-session-id": "s-1" } })
    })
    await fetch("https://mcp.example.com/mcp?key=secret", { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize" }), headers: { authorization: "Bearer zzz" } })
    expect(inspector.current().request).toBeUndefined()
    const answer = await fetch("https://mcp.example.com/mcp?key=secret", { method: "post", body: call(), headers: { authorization: "Bearer zzz", "mcp-session-id": "s-1" } })
    expect(await answer.text()).toBe("{\"result\":1}")
    const capture = await inspector.settle()
    expect(capture.request).toMatchObject({ method: "POST", url: "https://mcp.example.com/mcp?key=[redacted]", startedAt: new Date(1_700_000_000_025) })
    expect(capture.request?.headers).toContainEqual({ name: "authorization", value: "Bearer [redacted]", redacted: true })
    expect(capture.request?.headers).toContainEqual({ name: "mcp-session-id", value: "[redacted]", redacted: true })
    expect(capture.request?.body.text).toBe(call())
    expect(capture.response).toMatchObject({ status: 200, statusText: "OK", durationMs: 25, body: { text: "{\"result\":1}", bytes: 12, truncated: false } })
    expect(capture.response?.headers).toContainEqual({ name: "mcp-session-id", value: "[redacted]", redacted: true })
    expect(capture.last).toMatchObject({ rpcMethod: "tools/call", sentAuthorization: true, sentSessionId: true, response: { status: 200 } })
  })

  it("replaces an earlier attempt's response with a retry's", async () => {
    const inspector = Inspection.make({ now: Date.now })
    let attempt = 0
    const fetch = inspector.wrap(async () => {
      attempt++
      return new Response(attempt === 1 ? "first" : "second", { status: attempt === 1 ? 500 : 200 })
    })
    await fetch(endpoint, { method: "POST", body: call(1) })
    await fetch(endpoint, { method: "POST", body: call(2) })
    const capture = await inspector.settle()
    expect(capture.response).toMatchObject({ status: 200, body: { text: "second" } })
    expect(capture.request?.body.text).toBe(call(2))
  })

  it("keeps the request of a call that got no response", async () => {
    const inspector = Inspection.make({ now: Date.now })
    const fetch = inspector.wrap(async () => {
      throw new TypeError("fetch failed")
    })
    await expect(fetch(endpoint, { method: "POST", body: call() })).rejects.toThrow("fetch failed")
    const capture = await inspector.settle()
    expect(capture.request?.method).toBe("POST")
    expect(capture.response).toBeUndefined()
    expect(capture.last?.response).toBeUndefined()
  })

  it("marks a body that is not text unavailable", async () => {
    const inspector = Inspection.make({ now: Date.now })
    // Bytes are never a tools/call for the inspector (it cannot read the method), so nothing is recorded.
    const fetch = inspector.wrap(async () => new Response("ok"))
    await fetch(endpoint, { method: "POST", body: new TextEncoder().encode(call()) })
    expect(inspector.current().request).toBeUndefined()
    expect(Inspection.unavailableBody).toEqual({ text: "", bytes: 0, truncated: false, unavailable: true })
  })

  it("gives up on a response body a second after the call settles, and marks it truncated", async () => {
    const time = clock()
    const inspector = Inspection.make({ now: time.now, after: time.after })
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("partial"))
        // Never closed: the body never ends.
      }
    })
    const fetch = inspector.wrap(async () => new Response(stream, { status: 200, headers: { "content-type": "text/event-stream" } }))
    await fetch(endpoint, { method: "POST", body: call() })
    let settled = false
    const settling = inspector.settle().finally(() => (settled = true))
    time.advance(999)
    await new Promise((resolve) => setImmediate(resolve))
    expect(settled).toBe(false)
    time.advance(1)
    const capture = await settling
    expect(capture.response?.body).toEqual({ text: "partial", bytes: 7, truncated: true, unavailable: false })
  })
})

describe("phases", () => {
  const phase = (url: string, rpcMethod?: string, bodyText?: string) => phaseOf({ url, rpcMethod, bodyText }, endpoint)
  it("follows the URL and the body", () => {
    expect(phase("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")).toBe("AUTH_RESOURCE_DISCOVERY")
    expect(phase("https://auth.example.com/.well-known/oauth-authorization-server")).toBe("AUTH_ISSUER_DISCOVERY")
    expect(phase("https://auth.example.com/.well-known/openid-configuration")).toBe("AUTH_ISSUER_DISCOVERY")
    expect(phase("https://auth.example.com/token", undefined, "grant_type=refresh_token&refresh_token=x")).toBe("CONTINUITY_REFRESH")
    expect(phase("https://auth.example.com/token", undefined, "grant_type=authorization_code&code=x")).toBe("AUTH_TOKEN_ACQUISITION")
    expect(phase("https://auth.example.com/register", undefined, "{\"redirect_uris\":[\"https://x\"]}")).toBe("AUTH_CLIENT_REGISTRATION")
    expect(phase(endpoint, "initialize")).toBe("MCP_INITIALIZE")
    expect(phase(endpoint, "notifications/initialized")).toBe("MCP_INITIALIZED")
    expect(phase(endpoint, "tools/list")).toBe("MCP_TOOL_DISCOVERY")
    expect(phase(`${endpoint}?x=1`, "tools/call")).toBe("MCP_TOOL_EXECUTION")
    expect(phase(endpoint)).toBe("MCP_TRANSPORT")
    expect(phase("https://elsewhere.example.com/")).toBe("HTTP_ROUTING")
  })
})

describe("provider tool errors", () => {
  const context = { referenceId: "req-1", url: endpoint }
  const text = (value: string) => ({ content: [{ type: "text", text: value }], isError: true })

  it("reads the provider's status, code and request id from structuredContent", () => {
    const { diagnostic, providerText } = fromToolResult(
      { ...text("Forbidden: secret detail"), structuredContent: { status: 403, code: "forbidden_scope", requestId: "abc-123" } },
      context
    )
    expect(diagnostic).toMatchObject({
      code: "MCP_PROVIDER_HTTP_403",
      category: "provider_policy_denied",
      providerStatus: 403,
      providerCode: "forbidden_scope",
      providerRequestId: "abc-123",
      phase: "PROVIDER_EXECUTION",
      retryable: false
    })
    expect(JSON.stringify(diagnostic)).not.toContain("secret detail")
    expect(providerText).toBe("Forbidden: secret detail")
  })

  it("reads JSON text, and a leading status", () => {
    expect(fromToolResult(text(JSON.stringify({ statusCode: 429, error: "rate_limited", transactionId: "t-9" })), context).diagnostic).toMatchObject({
      code: "MCP_PROVIDER_HTTP_429",
      category: "provider_throttled",
      retryable: true,
      providerStatus: 429,
      providerCode: "rate_limited",
      providerRequestId: "t-9"
    })
    expect(fromToolResult(text("403 Forbidden: no access to repo"), context).diagnostic).toMatchObject({ code: "MCP_PROVIDER_HTTP_403", providerStatus: 403 })
  })

  it("tells invalid arguments from other tool errors, and counts the payload", () => {
    expect(fromToolResult(text("Input validation error: Invalid arguments for tool echo: ..."), context).diagnostic).toMatchObject({
      code: "MCP_PROVIDER_INVALID_PARAMS",
      category: "mcp_tool_input_invalid"
    })
    expect(fromToolResult({ ...text("nope"), structuredContent: { category: "validation_error" } }, context).diagnostic.code).toBe("MCP_PROVIDER_INVALID_PARAMS")
    const plain = fromToolResult(text("the tool failed"), context).diagnostic
    expect(plain).toMatchObject({ code: "MCP_PROVIDER_TOOL_ERROR", category: "provider_tool_error", phase: "MCP_TOOL_EXECUTION" })
    expect(plain.payloadBytes).toBe(Buffer.byteLength(JSON.stringify([{ type: "text", text: "the tool failed" }])))
  })

  it("never shows free text as a provider code or request id", () => {
    const { diagnostic } = fromToolResult({ ...text("x"), structuredContent: { status: 500, code: "has spaces and <html>", requestId: "a b" } }, context)
    expect(diagnostic.providerCode).toBeUndefined()
    expect(diagnostic.providerRequestId).toBeUndefined()
  })

  it("sanitizes and bounds the text for the log", () => {
    const { providerText } = fromToolResult(text(`line1\n\u0000Authorization: Bearer sk-abc ${"y".repeat(1000)}`), context)
    expect(providerText.length).toBe(512)
    expect(providerText).not.toContain("sk-abc")
    expect(providerText).not.toMatch(/[\u0000-\u001f]/)
  })
})

describe("classification by HTTP answer", () => {
  const exchange = (status: number, options: { auth?: boolean; session?: boolean; challenge?: string; contentType?: string; rpc?: string; headers?: Array<[string, string]> } = {}) => ({
    url: endpoint,
    method: "POST",
    rpcMethod: options.rpc ?? "tools/call",
    bodyText: "{}",
    sentAuthorization: options.auth ?? true,
    sentSessionId: options.session ?? false,
    response: { status, contentType: options.contentType, wwwAuthenticate: options.challenge, headers: options.headers ?? [] }
  })
  const classify = (status: number, options: Parameters<typeof exchange>[1] = {}, credential?: CredentialContext) =>
    classifySessionError(McpSessionError.of("request", new StreamableHTTPError(status, "Error POSTing")), {
      referenceId: "r",
      url: endpoint,
      exchange: exchange(status, options),
      credential
    })

  it("follows the reference's table", () => {
    expect(classify(404, { session: true })).toMatchObject({ code: "MCP_SESSION_NOT_FOUND", category: "mcp_session_expired", retryable: true, phase: "CONTINUITY_SESSION" })
    expect(classify(404)).toMatchObject({ code: "MCP_HTTP_404", category: "endpoint_not_found" })
    expect(classify(406)).toMatchObject({ code: "MCP_HTTP_406", category: "mcp_transport_negotiation" })
    expect(classify(415)).toMatchObject({ code: "MCP_HTTP_415", category: "mcp_transport_negotiation" })
    expect(classify(429)).toMatchObject({ code: "MCP_HTTP_429", category: "provider_throttled", retryable: true })
    expect(classify(503)).toMatchObject({ code: "MCP_HTTP_503", category: "provider_unavailable", retryable: true })
    expect(classify(401, { challenge: "Bearer error=\"invalid_token\"" })).toMatchObject({ code: "MCP_OAUTH_HTTP_401", category: "oauth_resource_rejected", retryable: true, owner: "member" })
    expect(classify(403, { challenge: "Bearer error=\"insufficient_scope\", scope=\"a b\"" })).toMatchObject({ code: "MCP_OAUTH_INSUFFICIENT_SCOPE", category: "oauth_insufficient_scope", retryable: false, owner: "organization_admin" })
    expect(classify(401, { auth: false, challenge: "Bearer realm=\"mcp\"" })).toMatchObject({ code: "MCP_PROVIDER_AUTH_REQUIRED" })
    expect(classify(403)).toMatchObject({ code: "MCP_PROVIDER_HTTP_403", category: "provider_policy_denied", owner: "provider_admin" })
    expect(classify(403, { rpc: "initialize" })).toMatchObject({ code: "MCP_HTTP_403", category: "http_failure" })
    expect(classify(408)).toMatchObject({ code: "MCP_HTTP_408", category: "http_failure", retryable: true })
    expect(classify(400)).toMatchObject({ code: "MCP_HTTP_400", retryable: false })
  })

  it("names the provider's request id from the first header of the list that has one", () => {
    expect(classify(500, { headers: [["x-request-id", "late"], ["x-correlation-id", "early"]] }).providerRequestId).toBe("early")
  })

  it("reassigns a member's move to the organization admin on a shared credential", () => {
    const shared = classify(401, { challenge: "Bearer realm=\"mcp\"" }, { mode: "shared", authType: "apikey" })
    expect(shared.owner).toBe("organization_admin")
    expect(shared.operatorAction).toBe("Ask an organization admin to update the connection's API key.")
    const oauth = classify(401, { challenge: "Bearer realm=\"mcp\"" }, { mode: "shared", authType: "oauth" })
    expect(oauth.operatorAction).toBe("Ask an organization admin to reconnect the organization's account for this connection.")
    const own = classify(401, { challenge: "Bearer realm=\"mcp\"" }, { mode: "per_member", authType: "oauth" })
    expect(own.owner).toBe("member")
    expect(own.operatorAction).toBe("Reconnect your account for this connection, then retry.")
  })

  it("recognizes html and other content types on a 2xx", () => {
    const html = classifySessionError(McpSessionError.of("request", new StreamableHTTPError(-1, "Unexpected content type: text/html")), {
      referenceId: "r",
      url: endpoint,
      exchange: exchange(200, { contentType: "text/html; charset=utf-8" })
    })
    expect(html).toMatchObject({ code: "MCP_HTTP_HTML_RESPONSE", category: "unexpected_html" })
    const other = classifySessionError(McpSessionError.of("request", new StreamableHTTPError(-1, "Unexpected content type: text/plain")), {
      referenceId: "r",
      url: endpoint,
      exchange: exchange(200, { contentType: "text/plain" })
    })
    expect(other).toMatchObject({ code: "MCP_HTTP_CONTENT_TYPE", category: "unexpected_content_type" })
  })

  it("recognizes a protocol version the client does not support", () => {
    const error = McpSessionError.of("initialize", new Error("Server's protocol version is not supported: 1999-01-01"))
    expect(fromSessionError(error, { referenceId: "r", url: endpoint })).toMatchObject({ code: "MCP_UNSUPPORTED_VERSION", phase: "MCP_VERSION" })
  })
})

describe("diagnosis", () => {
  it("names where the call ended", () => {
    const base = { referenceId: "r", message: "m", operatorAction: "a", retryable: false }
    const sent = { method: "POST", url: endpoint, startedAt: new Date(), headers: [], body: Inspection.inspectBody("{}") }
    const answered = (status: number) => ({ status, statusText: "", durationMs: 1, headers: [], body: Inspection.inspectBody("") })
    expect(diagnose({ request: sent, response: answered(200) }, undefined).layer).toBe("mcp_tool")
    expect(diagnose({ request: undefined, response: undefined }, { ...base, category: "security_blocked", code: "MCP_URL_BLOCKED" }).layer).toBe("internal")
    expect(diagnose({ request: undefined, response: undefined }, { ...base, category: "network_failure", code: "MCP_ECONNREFUSED", phase: "NETWORK_TCP" }).layer).toBe("network")
    expect(diagnose({ request: undefined, response: undefined }, { ...base, category: "http_failure", code: "MCP_HTTP_401", phase: "MCP_INITIALIZE" }).layer).toBe("mcp_connection")
    expect(diagnose({ request: sent, response: undefined }, { ...base, category: "request_timeout", code: "MCP_REQUEST_TIMEOUT" })).toEqual({
      layer: "network",
      summary: "The remote MCP did not respond to the tool call before the deadline."
    })
    expect(diagnose({ request: sent, response: answered(429) }, { ...base, category: "provider_throttled", code: "MCP_HTTP_429" })).toEqual({
      layer: "remote_http",
      summary: "The remote MCP returned HTTP 429 to the tool call."
    })
    expect(diagnose({ request: sent, response: answered(200) }, { ...base, category: "provider_tool_error", code: "MCP_PROVIDER_TOOL_ERROR", phase: "MCP_TOOL_EXECUTION" }).summary)
      .toContain("provider or tool failure")
  })
})

describe("connectUrl", () => {
  const base = { referenceId: "r", code: "MCP_OAUTH_HTTP_401", message: "m", operatorAction: "a", retryable: true }
  const row = { id: ExternalMcpConnectionId.make("emc_01jbz5m6z3f0y8q8q8q8q8q8q8"), authType: "oauth" as const }
  it("names where to connect again when an OAuth credential was refused", () => {
    expect(withConnectUrl({ ...base, category: "oauth_resource_rejected" }, row).connectUrl).toBe(`/v1/mcp-connections/${row.id}/connect`)
    expect(withConnectUrl({ ...base, category: "oauth_insufficient_scope" }, row).connectUrl).toBe(`/v1/mcp-connections/${row.id}/connect`)
    expect(withConnectUrl({ ...base, category: "provider_throttled" }, row).connectUrl).toBeUndefined()
    expect(withConnectUrl({ ...base, category: "oauth_resource_rejected" }, { ...row, authType: "apikey" }).connectUrl).toBeUndefined()
  })
})

/**
 * The MCP fakes speak the protocol: driven by the SDK's own client (`Client` + `StreamableHTTPClientTransport`,
 * and its OAuth helpers). No orgplane server and no database here.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  auth,
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  type OAuthClientProvider,
  refreshAuthorization,
  UnauthorizedError
} from "@modelcontextprotocol/sdk/client/auth.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import * as NodeCrypto from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { FakeMcp, FakeOAuth } from "../src/index.js"

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!()
})

const startMcp = async (options: FakeMcp.Options = {}) => {
  const fake = await FakeMcp.start(options)
  closers.push(fake.close)
  return fake
}

const startOAuth = async (options: FakeOAuth.Options = {}) => {
  const fake = await FakeOAuth.start(options)
  closers.push(fake.close)
  return fake
}

const connect = async (
  url: string,
  init: { headers?: Record<string, string>; authProvider?: OAuthClientProvider; redirectPolicy?: "same-origin" | "follow" } = {}
) => {
  const client = new Client({ name: "orgplane-test", version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    ...(init.redirectPolicy === undefined ? {} : { redirectPolicy: init.redirectPolicy }),
    ...(init.headers === undefined ? {} : { requestInit: { headers: init.headers } }),
    ...(init.authProvider === undefined ? {} : { authProvider: init.authProvider })
  })
  closers.push(() => client.close())
  await client.connect(transport)
  return { client, transport }
}

const text = (result: unknown) => ((result as { content: Array<{ type: string; text: string }> }).content[0]!).text

/** An OAuth client as an MCP host keeps it: in memory; "the browser" follows the authorization URL at once. */
class MemoryProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined
  savedTokens: OAuthTokens | undefined
  verifier = ""
  authorizationUrl: URL | undefined
  /** The `code` the authorization server redirected back with. */
  code: string | undefined
  constructor(readonly redirect = "http://127.0.0.1:9/callback", readonly override?: { readonly verifier?: string }) {}
  get redirectUrl() {
    return this.redirect
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: "orgplane-test", redirect_uris: [this.redirect], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "client_secret_basic" }
  }
  clientInformation() {
    return this.information
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information
  }
  tokens() {
    return this.savedTokens
  }
  saveTokens(tokens: OAuthTokens) {
    this.savedTokens = tokens
  }
  async redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
    const answer = await fetch(url, { redirect: "manual" })
    const location = answer.headers.get("location")
    if (answer.status !== 302 || location === null) return
    const back = new URL(location)
    expect(back.searchParams.get("state")).toBe(url.searchParams.get("state"))
    this.code = back.searchParams.get("code") ?? undefined
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.override?.verifier ?? this.verifier
  }
}

describe("FakeMcp, open", () => {
  it("initializes, lists its tools with annotations and calls them (SSE answers)", async () => {
    const fake = await startMcp()
    const { client } = await connect(fake.url)
    expect(client.getServerVersion()?.name).toBe("fake-mcp")
    const { tools } = await client.listTools()
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    expect([...byName.keys()].sort()).toEqual(["add", "delete_item", "echo", "fail", "large_output", "protocol_error"])
    expect(byName.get("echo")!.annotations?.readOnlyHint).toBe(true)
    expect(byName.get("delete_item")!.annotations?.destructiveHint).toBe(true)
    expect(byName.get("add")!.outputSchema?.properties).toHaveProperty("sum")
    expect(text(await client.callTool({ name: "echo", arguments: { text: "hello" } }))).toBe("hello")
    const sum = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } })
    expect(sum.structuredContent).toEqual({ sum: 5 })
    expect(text(await client.callTool({ name: "delete_item", arguments: { id: "x1" } }))).toBe("deleted x1")
    const failed = await client.callTool({ name: "fail", arguments: {} })
    expect(failed.isError).toBe(true)
    await expect(client.callTool({ name: "protocol_error", arguments: {} })).rejects.toThrow(/JSON-RPC error/)
    expect(fake.requests.map((r) => r.rpcMethod).filter((m) => m !== undefined)).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/list",
      "tools/call",
      "tools/call",
      "tools/call",
      "tools/call",
      "tools/call"
    ])
    expect(fake.requests[0]!.headers.accept).toContain("text/event-stream")
  })

  it("answers plain JSON when asked, at another path, and 404 elsewhere", async () => {
    const fake = await startMcp({ json: true, path: "/v1/rpc" })
    expect(fake.url).toBe(`${fake.origin}/v1/rpc`)
    const { client } = await connect(fake.url)
    expect(text(await client.callTool({ name: "echo", arguments: { text: "json" } }))).toBe("json")
    const answer = await fetch(fake.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" })
    })
    expect(answer.headers.get("content-type")).toContain("application/json")
    expect(((await answer.json()) as { id: number }).id).toBe(7)
    expect((await fetch(`${fake.origin}/mcp`, { method: "POST", body: "{}" })).status).toBe(404)
  })
})

describe("FakeMcp, long listings", () => {
  it("pages tools/list with a cursor when told, and refuses a cursor it did not give", async () => {
    const fake = await startMcp({ extraTools: 120, toolsPageSize: 50 })
    const { client } = await connect(fake.url)
    const first = await client.listTools()
    expect(first.tools.length).toBe(50)
    expect(first.nextCursor).toBe("50")
    const second = await client.listTools({ cursor: first.nextCursor! })
    const third = await client.listTools({ cursor: second.nextCursor! })
    expect(third.nextCursor).toBeUndefined()
    const names = [...first.tools, ...second.tools, ...third.tools].map((tool) => tool.name)
    expect(names.length).toBe(126)
    expect(new Set(names).size).toBe(126)
    expect(names.at(-1)).toBe("tool_120")
    expect(first.tools.find((tool) => tool.name === "delete_item")?.annotations?.destructiveHint).toBe(true)
    await expect(client.listTools({ cursor: "nope" })).rejects.toThrow(/Invalid cursor/)
    expect(text(await client.callTool({ name: "tool_007", arguments: {} }))).toBe("tool_007")
  })
})

describe("FakeMcp, API key", () => {
  it("refuses a missing or wrong bearer key with 401 and WWW-Authenticate, accepts the right one", async () => {
    const fake = await startMcp({ auth: { apiKey: "k-123" } })
    await expect(connect(fake.url)).rejects.toThrow()
    expect(fake.requests[0]!.status).toBe(401)
    const bare = await fetch(fake.url, { method: "POST", headers: { authorization: "Bearer wrong" }, body: "{}" })
    expect(bare.status).toBe(401)
    expect(bare.headers.get("www-authenticate")).toBe('Bearer realm="mcp"')
    const { client } = await connect(fake.url, { headers: { authorization: "Bearer k-123" } })
    expect(text(await client.callTool({ name: "echo", arguments: { text: "in" } }))).toBe("in")
  })

  it("takes the key in x-api-key when told", async () => {
    const fake = await startMcp({ auth: { apiKey: "k-456", header: "x-api-key" } })
    const missing = await fetch(fake.url, { method: "POST", headers: { authorization: "Bearer k-456" }, body: "{}" })
    expect(missing.status).toBe(401)
    expect(missing.headers.get("www-authenticate")).toBe('ApiKey header="x-api-key"')
    const { client } = await connect(fake.url, { headers: { "x-api-key": "k-456" } })
    expect((await client.listTools()).tools.length).toBe(6)
  })
})

describe("FakeMcp + FakeOAuth", () => {
  it("goes through the whole dance: 401, discovery, registration, PKCE, token, call, refresh with rotation", async () => {
    const fake = await startMcp({ auth: "oauth" })
    const oauth = fake.oauth!
    const provider = new MemoryProvider()

    // The 401 names the protected-resource metadata, which names the authorization server.
    const challenge = await fetch(fake.url, { method: "POST", body: "{}" })
    expect(challenge.status).toBe(401)
    expect(challenge.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${fake.resourceMetadataUrl}"`)
    const resourceMetadata = (await (await fetch(fake.resourceMetadataUrl!)).json()) as { resource: string; authorization_servers: Array<string> }
    expect(resourceMetadata).toMatchObject({ resource: fake.url, authorization_servers: [oauth.url] })

    // The SDK client: discovery, dynamic registration, authorization with PKCE (auto-approved), then UnauthorizedError.
    await expect(connect(fake.url, { authProvider: provider })).rejects.toBeInstanceOf(UnauthorizedError)
    expect(provider.information?.client_id).toMatch(/^client_/)
    expect(provider.authorizationUrl!.searchParams.get("code_challenge_method")).toBe("S256")
    expect(provider.authorizationUrl!.searchParams.get("resource")).toBe(fake.url)
    expect(provider.code).toBeDefined()
    expect(oauth.requests.map((r) => `${r.method} ${r.path.split("?")[0]}`)).toEqual([
      "GET /.well-known/oauth-authorization-server",
      "POST /register",
      "GET /authorize"
    ])

    // The code for tokens (PKCE verified), then calls with the access token.
    const transport = new StreamableHTTPClientTransport(new URL(fake.url), { authProvider: provider })
    await transport.finishAuth(provider.code!)
    const first = provider.savedTokens!
    expect(first.refresh_token).toBeDefined()
    expect(oauth.verifyAccessToken(first.access_token)).toMatchObject({ clientId: provider.information!.client_id, resource: fake.url })
    const { client } = await connect(fake.url, { authProvider: provider })
    expect(text(await client.callTool({ name: "echo", arguments: { text: "authorized" } }))).toBe("authorized")

    // Expired access token: on the 401 the SDK client refreshes (the server rotates the refresh token) and retries.
    oauth.expireAccessTokens()
    expect(text(await client.callTool({ name: "echo", arguments: { text: "refreshed" } }))).toBe("refreshed")
    const second = provider.savedTokens!
    expect(second.refresh_token).not.toBe(first.refresh_token)
    expect(oauth.verifyAccessToken(second.access_token)).toBeDefined()
    expect(oauth.requests.at(-1)!.params).toMatchObject({ grant_type: "refresh_token", refresh_token: first.refresh_token })
    expect(fake.requests.filter((r) => r.rpcMethod === "tools/call").map((r) => r.status)).toEqual([200, 401, 200])

    // The SDK's `auth` refreshes again when asked: a third refresh token.
    expect(await auth(provider, { serverUrl: fake.url })).toBe("AUTHORIZED")
    expect(provider.savedTokens!.refresh_token).not.toBe(second.refresh_token)

    // The old refresh token is refused: it was rotated away.
    const metadata = await discoverAuthorizationServerMetadata(oauth.url)
    await expect(
      refreshAuthorization(oauth.url, { metadata: metadata!, clientInformation: provider.information!, refreshToken: first.refresh_token! })
    ).rejects.toThrow(/already used/)
    expect(oauth.tokensIssued()).toBe(3)
  })

  it("refuses a wrong PKCE verifier with invalid_grant, and spends the code anyway", async () => {
    const fake = await startMcp({ auth: "oauth" })
    const oauth = fake.oauth!
    const provider = new MemoryProvider()
    await expect(connect(fake.url, { authProvider: provider })).rejects.toBeInstanceOf(UnauthorizedError)
    const metadata = (await discoverAuthorizationServerMetadata(oauth.url))!
    const exchange = (codeVerifier: string) =>
      exchangeAuthorization(oauth.url, {
        metadata,
        clientInformation: provider.information!,
        authorizationCode: provider.code!,
        codeVerifier,
        redirectUri: provider.redirectUrl,
        resource: fake.url
      })
    await expect(exchange("not-the-verifier-not-the-verifier-not-the-verifier")).rejects.toThrow(/PKCE verification failed/)
    await expect(exchange(provider.verifier)).rejects.toThrow(/unknown, used or expired code/)
    expect(oauth.requests.filter((r) => r.path === "/token").map((r) => r.status)).toEqual([400, 400])
    expect(oauth.tokensIssued()).toBe(0)
  })

  it("answers 403 insufficient_scope to a token without the required scopes", async () => {
    const oauth = await startOAuth({ autoApprove: false })
    const fake = await startMcp({ auth: { oauth: { requiredScopes: ["mcp:write"], authorizationServer: oauth } } })
    const provider = new MemoryProvider()
    await expect(connect(fake.url, { authProvider: provider })).rejects.toBeInstanceOf(UnauthorizedError)
    expect(provider.code).toBeUndefined()
    const pending = (await (await fetch(provider.authorizationUrl!)).json()) as { pending: string }
    const back = new URL(oauth.approve(pending.pending, { scopes: ["mcp:read"] }))
    const transport = new StreamableHTTPClientTransport(new URL(fake.url), { authProvider: provider })
    await transport.finishAuth(back.searchParams.get("code")!)
    expect(provider.savedTokens!.scope).toBe("mcp:read")
    const answer = await fetch(fake.url, { method: "POST", headers: { authorization: `Bearer ${provider.savedTokens!.access_token}` }, body: "{}" })
    expect(answer.status).toBe(403)
    expect(answer.headers.get("www-authenticate")).toContain('error="insufficient_scope", scope="mcp:write"')
    // SDK 1.32 answers the 403 by "upscoping" through `auth`, which, holding a refresh token, only refreshes: the grant
    // stays narrow, the second 403 ends it. (A host must send the user through authorization again itself.)
    await expect(connect(fake.url, { authProvider: provider })).rejects.toThrow(/403 after trying upscoping/)
    expect(oauth.requests.at(-1)!.params).toMatchObject({ grant_type: "refresh_token" })
    expect(provider.savedTokens!.scope).toBe("mcp:read")
  })

  it("refuses a token asked for another resource (audience) on a shared authorization server", async () => {
    const oauth = await startOAuth()
    const first = await startMcp({ auth: { oauth: { authorizationServer: oauth } } })
    const second = await startMcp({ auth: { oauth: { authorizationServer: oauth } } })
    const provider = new MemoryProvider()
    await expect(connect(first.url, { authProvider: provider })).rejects.toBeInstanceOf(UnauthorizedError)
    await new StreamableHTTPClientTransport(new URL(first.url), { authProvider: provider }).finishAuth(provider.code!)
    const bearer = { authorization: `Bearer ${provider.savedTokens!.access_token}` }
    const { client } = await connect(first.url, { headers: bearer })
    expect((await client.listTools()).tools.length).toBe(6)
    const refused = await fetch(second.url, { method: "POST", headers: bearer, body: "{}" })
    expect(refused.status).toBe(401)
    expect(refused.headers.get("www-authenticate")).toBe(`Bearer error="invalid_token", resource_metadata="${second.resourceMetadataUrl}"`)
  })
})

describe("FakeOAuth", () => {
  it("serves RFC 8414 and OIDC metadata, and registration only when enabled", async () => {
    const open = await startOAuth()
    const metadata = (await (await fetch(`${open.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>
    expect(metadata).toMatchObject({ issuer: open.url, registration_endpoint: `${open.url}/register`, code_challenge_methods_supported: ["S256"] })
    expect((await fetch(`${open.url}/.well-known/openid-configuration`)).status).toBe(200)
    const closed = await startOAuth({ dynamicRegistration: false, metadata: "oidc" })
    expect((await fetch(`${closed.url}/.well-known/oauth-authorization-server`)).status).toBe(404)
    const oidc = (await discoverAuthorizationServerMetadata(closed.url))!
    expect(oidc.registration_endpoint).toBeUndefined()
    expect((await fetch(`${closed.url}/register`, { method: "POST", body: "{}" })).status).toBe(404)
    const bad = await fetch(`${open.url}/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ redirect_uris: ["nope"] }) })
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as { error: string }).error).toBe("invalid_redirect_uri")
  })

  it("accepts a client ID metadata document when enabled", async () => {
    const documentServer = Http.createServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" })
      response.end(JSON.stringify({ client_id: documentUrl, client_name: "doc", redirect_uris: ["http://127.0.0.1:9/cb"] }))
    })
    await new Promise<void>((resolve) => documentServer.listen(0, "127.0.0.1", resolve))
    closers.push(() => new Promise<void>((resolve) => documentServer.close(() => resolve())))
    const documentUrl = `http://127.0.0.1:${(documentServer.address() as Net.AddressInfo).port}/client.json`
    const oauth = await startOAuth({ clientIdMetadataDocuments: true })
    const verifier = NodeCrypto.randomBytes(32).toString("base64url")
    const challenge = NodeCrypto.createHash("sha256").update(verifier).digest("base64url")
    const authorize = new URL(`${oauth.url}/authorize`)
    for (const [key, value] of Object.entries({ response_type: "code", client_id: documentUrl, redirect_uri: "http://127.0.0.1:9/cb", code_challenge: challenge, code_challenge_method: "S256", state: "s1" })) {
      authorize.searchParams.set(key, value)
    }
    const redirected = await fetch(authorize, { redirect: "manual" })
    expect(redirected.status).toBe(302)
    const code = new URL(redirected.headers.get("location")!).searchParams.get("code")!
    const token = await fetch(`${oauth.url}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code, code_verifier: verifier, client_id: documentUrl, redirect_uri: "http://127.0.0.1:9/cb" })
    })
    expect(token.status).toBe(200)
    const wrongRedirect = new URL(authorize)
    wrongRedirect.searchParams.set("redirect_uri", "http://127.0.0.1:9/elsewhere")
    expect((await fetch(wrongRedirect, { redirect: "manual" })).status).toBe(400)
  })

  it("serves a pre-registered confidential client, and refuses a wrong secret", async () => {
    const oauth = await startOAuth({ dynamicRegistration: false })
    const fake = await startMcp({ auth: { oauth: { authorizationServer: oauth } } })
    const client = { client_id: "pre-1", client_secret: "s3cret", redirect_uris: ["http://127.0.0.1:9/callback"], token_endpoint_auth_method: "client_secret_post" } as const
    oauth.addClient(client)
    const provider = new MemoryProvider()
    provider.information = { client_id: client.client_id, client_secret: "wrong" }
    await expect(connect(fake.url, { authProvider: provider })).rejects.toBeInstanceOf(UnauthorizedError)
    const metadata = (await discoverAuthorizationServerMetadata(oauth.url))!
    const exchange = (information: OAuthClientInformationMixed) =>
      exchangeAuthorization(oauth.url, { metadata, clientInformation: information, authorizationCode: provider.code!, codeVerifier: provider.verifier, redirectUri: provider.redirectUrl })
    await expect(exchange(provider.information)).rejects.toThrow(/client authentication failed/)
    // The failed attempt did not spend the code: client authentication comes first.
    const tokens = await exchange({ client_id: client.client_id, client_secret: client.client_secret })
    expect(oauth.verifyAccessToken(tokens.access_token)?.clientId).toBe("pre-1")
    // The SDK picks client_secret_basic from the advertised methods; the fake takes either for any confidential client.
    expect(oauth.requests.find((r) => r.path === "/token")!.headers.authorization).toBe(`Basic ${Buffer.from("pre-1:wrong").toString("base64")}`)
    expect(oauth.requests.some((r) => r.path === "/register")).toBe(false)
  })

  it("fails its token endpoint when told", async () => {
    const oauth = await startOAuth()
    oauth.setTokenMode({ _tag: "status", status: 500 })
    const answer = await fetch(`${oauth.url}/token`, { method: "POST", body: "grant_type=refresh_token&refresh_token=x" })
    expect(answer.status).toBe(500)
    expect(((await answer.json()) as { error: string }).error).toBe("server_error")
    oauth.setTokenMode({ _tag: "hang" })
    await expect(fetch(`${oauth.url}/token`, { method: "POST", body: "grant_type=refresh_token", signal: AbortSignal.timeout(200) })).rejects.toThrow()
    oauth.setTokenMode({ _tag: "ok" })
    expect((await fetch(`${oauth.url}/token`, { method: "POST", body: "grant_type=refresh_token&refresh_token=x" })).status).toBe(401)
    expect(oauth.requests.map((r) => r.status)).toEqual([500, null, 401])
  })
})

describe("FakeMcp misbehaving", () => {
  it("redirects the MCP path (307) to another server, which the SDK client follows only when told", async () => {
    const target = await startMcp()
    const moved = await startMcp({ redirect: { to: target.url } })
    // SDK 1.32's default `redirectPolicy: "same-origin"` refuses a redirect to another origin.
    await expect(connect(moved.url)).rejects.toThrow(/not followed/)
    expect(target.requests).toEqual([])
    const { client } = await connect(moved.url, { redirectPolicy: "follow" })
    expect(text(await client.callTool({ name: "echo", arguments: { text: "moved" } }))).toBe("moved")
    expect(moved.requests[0]!.status).toBe(307)
    expect(target.requests.map((r) => r.rpcMethod)).toContain("tools/call")
    moved.setMode({ _tag: "redirect", to: target.url, status: 308 })
    const raw = await fetch(moved.url, { method: "POST", body: "{}", redirect: "manual" })
    expect(raw.status).toBe(308)
    expect(raw.headers.get("location")).toBe(target.url)
  })

  it("answers slowly: a client deadline shorter than the delay expires; without one the answer comes", async () => {
    const fake = await startMcp()
    const { client } = await connect(fake.url)
    fake.setMode({ _tag: "slow", ms: 20_000 })
    await expect(client.callTool({ name: "echo", arguments: { text: "late" } }, undefined, { timeout: 200 })).rejects.toThrow(/timed out/i)
    fake.setMode({ _tag: "slow", ms: 10 })
    expect(text(await client.callTool({ name: "echo", arguments: { text: "late" } }))).toBe("late")
    fake.setMode({ _tag: "hang" })
    await expect(client.callTool({ name: "echo", arguments: { text: "never" } }, undefined, { timeout: 200 })).rejects.toThrow(/timed out/i)
    expect(fake.requests.at(-1)!.status).toBeNull()
  })

  it("answers oversized bodies and oversized tool results", async () => {
    const fake = await startMcp({ oversizedBytes: 3_000_000 })
    const post = () => fetch(fake.url, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) })
    const answer = await post()
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-length")).toBe("3000000")
    expect((await answer.arrayBuffer()).byteLength).toBe(3_000_000)
    fake.setMode({ _tag: "oversized", bytes: 5_000_000, contentType: "text/event-stream", advertise: false })
    const streamed = await post()
    expect(streamed.headers.get("content-type")).toBe("text/event-stream")
    expect(streamed.headers.get("content-length")).toBeNull()
    const body = Buffer.from(await streamed.arrayBuffer())
    expect(body.byteLength).toBe(5_000_000)
    expect(body.subarray(0, 6).toString()).toBe("data: ")
    fake.setMode({ _tag: "ok" })
    const { client } = await connect(fake.url)
    expect(text(await client.callTool({ name: "large_output", arguments: { bytes: 2_000_000 } })).length).toBe(2_000_000)
  })
})

/**
 * The MCP SDK loaded on first use, against testkit's FakeMcp (no Effect: a real MCP server on 127.0.0.1 built with the
 * SDK, with its own OAuth authorization server): loaded once and known as loaded only then; its client lists and
 * calls tools over Streamable HTTP; the OAuth helpers, each loading the SDK first, go through a whole sign-in
 * (discovery, registration, authorization, code exchange, refresh) whose token the MCP server takes.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import * as FakeMcp from "../../../packages/testkit/src/FakeMcp.js"
import * as McpSdk from "../src/integrations/mcp/McpSdk.js"

let open: FakeMcp.FakeMcp
let guarded: FakeMcp.FakeMcp
beforeAll(async () => {
  ;[open, guarded] = await Promise.all([FakeMcp.start(), FakeMcp.start({ auth: "oauth" })])
})
afterAll(async () => {
  await Promise.all([open?.close(), guarded?.close()])
})

/** Lists the tools of the MCP server at `url`, with `token` when given, through the SDK's client. */
const toolNames = async (url: string, token?: string) => {
  const sdk = await McpSdk.mcpSdk()
  const client = new sdk.Client({ name: "orgplane-test", version: "0.0.0" })
  const transport = new sdk.StreamableHTTPClientTransport(new URL(url), token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } })
  await client.connect(transport)
  try {
    const echoed = await client.callTool({ name: "echo", arguments: { text: "hello" } })
    expect(echoed.content).toEqual([{ type: "text", text: "hello" }])
    return (await client.listTools()).tools.map((tool) => tool.name)
  } finally {
    await client.close()
  }
}

describe("McpSdk", () => {
  it("is loaded by its first use, once, and known as loaded only then", async () => {
    // A module of its own: another test file of this worker may have loaded the SDK already (vitest.config.ts).
    vi.resetModules()
    const Fresh: typeof McpSdk = await import("../src/integrations/mcp/McpSdk.js")
    expect(Fresh.mcpSdkIfLoaded()).toBeUndefined()
    const [first, second] = await Promise.all([Fresh.mcpSdk(), Fresh.mcpSdk()])
    expect(second).toBe(first)
    expect(await Fresh.mcpSdk()).toBe(first)
    expect(Fresh.mcpSdkIfLoaded()).toBe(first)
    expect(first.ErrorCode.InvalidParams).toBe(-32602)
    expect(first.LATEST_PROTOCOL_VERSION).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(new first.McpError(first.ErrorCode.InternalError, "boom")).toBeInstanceOf(Error)
    expect(first.extractWWWAuthenticateParams).toBeTypeOf("function")
  })

  it("its client calls and lists the tools of an MCP server over Streamable HTTP", async () => {
    expect(await toolNames(open.url)).toEqual(expect.arrayContaining(["echo", "add", "delete_item", "fail"]))
  })

  it("its OAuth helpers sign in to a protected MCP server, and the server takes the token", async () => {
    const sdk = await McpSdk.mcpSdk()
    // Without a token the server refuses, with an error of the SDK's kind, told apart synchronously.
    const refused = await toolNames(guarded.url).then(() => undefined, (error: unknown) => error)
    expect(refused).toBeInstanceOf(McpSdk.mcpSdkIfLoaded()!.StreamableHTTPError)

    const resource = await McpSdk.discoverOAuthProtectedResourceMetadata(guarded.url)
    expect(resource.resource).toBe(guarded.url)
    const authorizationServer = resource.authorization_servers![0]!
    const metadata = await McpSdk.discoverAuthorizationServerMetadata(authorizationServer)
    if (metadata === undefined) throw new Error("the authorization server's metadata was not found")
    expect(metadata.token_endpoint).toBe(`${guarded.oauth!.url}/token`)
    const redirectUrl = "http://127.0.0.1:9/callback"
    const client = await McpSdk.registerClient(authorizationServer, {
      metadata,
      clientMetadata: { client_name: "orgplane", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"], token_endpoint_auth_method: "none" }
    })
    const { authorizationUrl, codeVerifier } = await McpSdk.startAuthorization(authorizationServer, {
      metadata,
      clientInformation: client,
      redirectUrl,
      resource: new URL(guarded.url),
      state: "state-1"
    })
    // The fake approves at once: its answer is the redirect to us with the code.
    const approved = await fetch(authorizationUrl, { redirect: "manual" })
    const back = new URL(approved.headers.get("location")!)
    expect(back.searchParams.get("state")).toBe("state-1")
    const tokens = await McpSdk.exchangeAuthorization(authorizationServer, {
      metadata,
      clientInformation: client,
      authorizationCode: back.searchParams.get("code")!,
      codeVerifier,
      redirectUri: redirectUrl,
      resource: new URL(guarded.url)
    })
    expect(await toolNames(guarded.url, tokens.access_token)).toContain("echo")
    expect(tokens.refresh_token).toBeTypeOf("string")
    const refreshed = await McpSdk.refreshAuthorization(authorizationServer, {
      metadata,
      clientInformation: client,
      refreshToken: tokens.refresh_token!,
      resource: new URL(guarded.url)
    })
    expect(refreshed.access_token).not.toBe(tokens.access_token)
    expect(await toolNames(guarded.url, refreshed.access_token)).toContain("echo")
    expect(sdk).toBe(McpSdk.mcpSdkIfLoaded())
  })
})

/**
 * `POST /v1/mcp-connections/resolve` and `GET /v1/mcp-connections/presets` over HTTP against the MCP and OAuth
 * fakes on 127.0.0.1 (private destinations allowed, but in the test of the guard refusing them): requirements
 * discovery of open, API-key and OAuth servers (metadata, scopes, registration methods), candidates and the winner
 * in order of preference whatever finishes first, the probe timeout, the presets file, and who may call.
 */
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js"
import type { McpResolveResult } from "@orgplane/schema"
import { calls, invalid, ok, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as FakeMcp from "../../../../packages/testkit/src/FakeMcp.js"
import * as FakeOAuth from "../../../../packages/testkit/src/FakeOAuth.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Fs from "node:fs"
import * as NodeHttp from "node:http"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const PROBE_TIMEOUT_MS = 2000

let server: TestServer.RunningServer
let org: Awaited<ReturnType<typeof Http.staffed>>
const fakes: Array<{ close: () => Promise<void> }> = []

beforeAll(async () => {
  server = await TestServer.start({ outboundAllowPrivate: true, mcpProbeTimeout: `${PROBE_TIMEOUT_MS} millis` })
  org = await Http.staffed(server.url)
})
afterAll(async () => {
  for (const fake of fakes) await fake.close()
  await server.close()
})

const fake = async (options: FakeMcp.Options = {}) => {
  const started = await FakeMcp.start(options)
  fakes.push(started)
  return started
}

/**
 * A reverse proxy on its own loopback origin: each request goes to the fake `route` picks, after `holdMs`; `finished`
 * lists the requests answered, in order.
 */
const proxy = async (route: (request: NodeHttp.IncomingMessage) => { readonly to: { readonly origin: string }; readonly holdMs?: number }) => {
  const finished: Array<string> = []
  const front = NodeHttp.createServer((request, response) => {
    const { holdMs, to } = route(request)
    setTimeout(() => {
      const upstream = NodeHttp.request(`${to.origin}${request.url}`, { method: request.method, headers: request.headers }, (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(response)
      })
      request.pipe(upstream)
    }, holdMs ?? 0)
    response.on("finish", () => finished.push(`${request.method} ${request.url}`))
  })
  await new Promise<void>((done) => front.listen(0, "127.0.0.1", done))
  fakes.push({ close: () => new Promise<void>((done) => front.close(() => done())) })
  return { origin: `http://127.0.0.1:${(front.address() as Net.AddressInfo).port}`, finished }
}

const resolve = async (query: string, token = org.admin.token, url = server.url) =>
  calls(url).mcpDiscovery.resolve({ token, payload: { query } })

const resolved = async (query: string, url = server.url, token?: string) => ok(await resolve(query, token ?? org.admin.token, url), 200)

/** The endpoint a resolution found (throws, naming the result, when it found none). */
const matchOf = (result: typeof McpResolveResult.Encoded) => {
  if (result.match === undefined) throw new Error(`no match in ${JSON.stringify(result)}`)
  return result.match
}

describe("resolving an MCP server", { timeout: 60_000 }, () => {
  it("discovers an open server: initialize with the negotiated protocol version, the tools with their hints", async () => {
    const open = await fake()
    const result = await resolved(open.url)
    expect(result.resolution).toBe("discovered")
    expect(result.attempted).toEqual([open.url])
    expect(result).not.toHaveProperty("reason")
    expect(result).not.toHaveProperty("preset")
    expect(matchOf(result).url).toBe(open.url)
    expect(matchOf(result).suggestedName).toBe("127.0.0.1")
    const discovery = matchOf(result).discovery
    expect(discovery.server).toEqual({ url: open.url, protocolVersion: LATEST_PROTOCOL_VERSION, initialize: "succeeded" })
    expect(discovery.status).toBe("ready")
    expect(discovery.authentication).toEqual({
      kind: "none",
      authorizationServers: [],
      requiredScopes: [],
      recommendedScopes: [],
      availableRegistrationMethods: ["pre_registered"],
      recommendedRegistrationMethod: "pre_registered",
      refreshSupport: "unknown"
    })
    expect(discovery.tools.visibility).toBe("available_without_auth")
    expect(discovery.tools.count).toBe(6)
    const byName = Object.fromEntries((discovery.tools.items ?? []).map((tool) => [tool.name, tool]))
    expect(byName.echo).toEqual({ name: "echo", readOnlyHint: true, openWorldHint: false })
    expect(byName.delete_item).toEqual({ name: "delete_item", readOnlyHint: false, destructiveHint: true, openWorldHint: false })
    expect(byName.fail).toEqual({ name: "fail" })
    expect(discovery.manualRequirements.map((requirement) => [requirement.code, requirement.required])).toEqual([
      ["provider_access", false],
      ["network_trust", false]
    ])
    expect(discovery.warnings).toEqual([])
    // Side-effect free towards the server too: initialize and reads, nothing called.
    expect(open.requests.some((request) => request.rpcMethod === "tools/call")).toBe(false)
  })

  it("reads at most 5 pages and 100 tools", async () => {
    const paged = await fake({ extraTools: 60, toolsPageSize: 10 })
    const five = matchOf(await resolved(paged.url)).discovery.tools
    expect(five.count).toBe(50)
    expect(paged.requests.filter((request) => request.rpcMethod === "tools/list").length).toBe(5)
    const many = await fake({ extraTools: 150 })
    const capped = matchOf(await resolved(many.url)).discovery.tools
    expect(capped.count).toBe(100)
    expect(capped.items).toHaveLength(100)
  })

  it("finds a server behind an API key: authentication required, a credential to provide, qualifying for a URL query", async () => {
    const keyed = await fake({ auth: { apiKey: "secret-key" } })
    const result = await resolved(keyed.url)
    expect(result.resolution).toBe("discovered")
    const discovery = matchOf(result).discovery
    expect(discovery.server).toEqual({ url: keyed.url, initialize: "authentication_required" })
    expect(discovery.status).toBe("manual_action_required")
    expect(discovery.authentication.kind).toBe("manual_bearer")
    expect(discovery.tools).toEqual({ visibility: "requires_auth" })
    expect(discovery.manualRequirements.map((requirement) => [requirement.code, requirement.required])).toEqual([
      ["api_key", true],
      ["provider_access", false],
      ["network_trust", false]
    ])
    // No protected-resource metadata: a warning, since authentication is required.
    expect(discovery.warnings.map((warning) => warning.code)).toEqual(["oauth_resource_metadata_unavailable"])
  })

  it("finds an OAuth server: protected-resource and authorization-server metadata, scopes, dynamic registration", async () => {
    const protectedServer = await fake({ auth: { oauth: { requiredScopes: ["mcp:read"] } } })
    const result = await resolved(protectedServer.url)
    expect(result.resolution).toBe("discovered")
    const discovery = matchOf(result).discovery
    const issuer = protectedServer.oauth!.url
    expect(discovery.server.initialize).toBe("authentication_required")
    expect(discovery.status).toBe("ready")
    expect(discovery.tools).toEqual({ visibility: "requires_auth" })
    expect(discovery.authentication).toEqual({
      kind: "oauth",
      authorizationServers: [
        {
          issuer,
          authorizationEndpoint: `${issuer}/authorize`,
          tokenEndpoint: `${issuer}/token`,
          registrationEndpoint: `${issuer}/register`,
          clientIdMetadataDocumentSupported: false,
          scopesSupported: ["mcp:read", "mcp:write"],
          grantTypesSupported: ["authorization_code", "refresh_token"],
          codeChallengeMethodsSupported: ["S256"],
          tokenEndpointAuthMethodsSupported: ["none", "client_secret_basic", "client_secret_post"]
        }
      ],
      requiredScopes: ["mcp:read"],
      recommendedScopes: ["mcp:read"],
      availableRegistrationMethods: ["pre_registered", "dynamic"],
      recommendedRegistrationMethod: "dynamic",
      refreshSupport: "supported",
      resource: protectedServer.url,
      protectedResourceMetadataUrl: protectedServer.resourceMetadataUrl
    })
    expect(discovery.manualRequirements.map((requirement) => requirement.code)).toEqual(["provider_access", "network_trust"])
    expect(discovery.warnings).toEqual([])
    // Nothing registered, nothing asked of the token endpoint.
    expect(protectedServer.oauth!.requests.filter((request) => request.method === "POST")).toEqual([])
  })

  it("recommends the resource's scopes and offline_access when the authorization server offers it with refresh tokens", async () => {
    const offline = await fake({ auth: { oauth: { authorizationServerOptions: { scopesSupported: ["mcp:read", "offline_access"] } } } })
    const authentication = matchOf(await resolved(offline.url)).discovery.authentication
    expect(authentication.requiredScopes).toEqual([])
    // The protected resource's scopes_supported (the fake names mcp:read and mcp:write), then offline_access.
    expect(authentication.recommendedScopes).toEqual(["mcp:read", "mcp:write", "offline_access"])
  })

  it("does not use protected-resource metadata about another resource", async () => {
    // Behind a proxy on another origin, the fake's metadata names the fake's own URL as the resource.
    const protectedServer = await fake({ auth: "oauth" })
    const front = await proxy(() => ({ to: protectedServer }))
    const discovery = matchOf(await resolved(`${front.origin}/mcp`)).discovery
    expect(discovery.warnings.map((warning) => warning.code)).toEqual(["oauth_resource_mismatch"])
    expect(discovery.authentication).toMatchObject({ kind: "manual_bearer", authorizationServers: [], refreshSupport: "unknown" })
    expect(discovery.authentication).not.toHaveProperty("resource")
    expect(protectedServer.oauth!.requests).toEqual([])
  })

  it("skips authorization servers whose metadata names another issuer, or has none", async () => {
    const authorizationServer = await FakeOAuth.start()
    fakes.push(authorizationServer)
    // The resource names the proxy as its authorization server; the metadata behind it names the real issuer.
    const front = await proxy(() => ({ to: { origin: authorizationServer.url } }))
    const mismatched = await fake({ auth: { oauth: { authorizationServer: { ...authorizationServer, url: front.origin } } } })
    const skipped = matchOf(await resolved(mismatched.url)).discovery
    expect(skipped.warnings.map((warning) => warning.code)).toEqual(["oauth_issuer_mismatch"])
    expect(skipped.authentication).toMatchObject({ kind: "oauth", authorizationServers: [], availableRegistrationMethods: ["pre_registered"], refreshSupport: "unknown" })
    expect(skipped.status).toBe("manual_action_required")
    expect(skipped.manualRequirements[0]).toMatchObject({ code: "oauth_client_registration", required: true })

    const nowhere = await fake({ auth: { oauth: { authorizationServer: { ...authorizationServer, url: "http://127.0.0.1:9" } } } })
    const missing = matchOf(await resolved(nowhere.url)).discovery
    expect(missing.warnings.map((warning) => warning.code)).toEqual(["oauth_server_metadata_unavailable"])
    expect(missing.authentication.authorizationServers).toEqual([])
  })

  it("prefers client ID metadata documents, and asks for a registered client when the server offers neither", async () => {
    const cimd = await fake({ auth: { oauth: { authorizationServerOptions: { clientIdMetadataDocuments: true, dynamicRegistration: false } } } })
    const withDocuments = matchOf(await resolved(cimd.url)).discovery
    expect(withDocuments.authentication.availableRegistrationMethods).toEqual(["client_metadata", "pre_registered"])
    expect(withDocuments.authentication.recommendedRegistrationMethod).toBe("client_metadata")
    expect(withDocuments.authentication.authorizationServers[0].clientIdMetadataDocumentSupported).toBe(true)
    expect(withDocuments.status).toBe("ready")

    const closed = await fake({ auth: { oauth: { authorizationServerOptions: { dynamicRegistration: false, metadata: "oidc" } } } })
    const result = await resolved(closed.url)
    // Still OAuth, so still the answer; but an admin must register a client first.
    expect(result.resolution).toBe("discovered")
    const manualOnly = matchOf(result).discovery
    expect(manualOnly.authentication.kind).toBe("oauth")
    expect(manualOnly.authentication.authorizationServers).toHaveLength(1) // found through OpenID Connect discovery
    expect(manualOnly.authentication.availableRegistrationMethods).toEqual(["pre_registered"])
    expect(manualOnly.authentication.recommendedRegistrationMethod).toBe("pre_registered")
    expect(manualOnly.status).toBe("manual_action_required")
    expect(manualOnly.manualRequirements.map((requirement) => [requirement.code, requirement.required])).toEqual([
      ["oauth_client_registration", true],
      ["provider_access", false],
      ["network_trust", false]
    ])
  })

  it("tries the origin and then /mcp for a bare origin: the origin answers 404, /mcp is the winner", async () => {
    const open = await fake()
    const result = await resolved(`${open.origin}`)
    expect(result.attempted).toEqual([`${open.origin}/`, `${open.origin}/mcp`])
    expect(result.resolution).toBe("discovered")
    expect(matchOf(result).url).toBe(`${open.origin}/mcp`)
  })

  it("answers the first qualifying candidate in order of preference, not the first to finish", async () => {
    // One origin: `/` and `/mcp` served by two MCP servers behind a proxy that holds the `/` server's first
    // request (its initialize) for 700 ms; both qualify.
    const first = await fake({ path: "/", name: "first" })
    const second = await fake({ name: "second" })
    let held = false
    const front = await proxy((request) => {
      const hold = !held && request.method === "POST" && request.url === "/"
      if (hold) held = true
      return { to: request.url?.startsWith("/mcp") ? second : first, holdMs: hold ? 700 : 0 }
    })
    const { origin, finished } = front

    const result = await resolved(`${origin}/`)
    expect(result.attempted).toEqual([`${origin}/`, `${origin}/mcp`])
    expect(matchOf(result).url).toBe(`${origin}/`)
    // The second candidate had finished its whole discovery before the first one answered initialize.
    const fastLast = finished.map((line) => line.includes("/mcp")).lastIndexOf(true)
    const slowInitialize = finished.indexOf("POST /")
    expect(fastLast).toBeGreaterThanOrEqual(0)
    expect(slowInitialize).toBeGreaterThan(fastLast)
    // And the second candidate did qualify: it answered initialize.
    expect(second.requests.some((request) => request.rpcMethod === "initialize" && request.status === 200)).toBe(true)
  })

  it("gives up on a hanging candidate after the probe timeout", async () => {
    const hanging = await fake()
    hanging.setMode({ _tag: "hang" })
    // The outcome only: that the probe waits the timeout and not less is McpResolveRules.test.ts's, on a test clock.
    const result = await resolved(hanging.url)
    expect(result).toEqual({ resolution: "not_found", attempted: [hanging.url] })
    expect(hanging.requests.map((request) => request.status)).toEqual([null])
  })

  it("answers not_found with the reason for a query it cannot read, without probing", async () => {
    expect(await resolved("!!!")).toEqual({ resolution: "not_found", attempted: [], reason: "Type a server URL or a product name." })
    expect(await resolved("   ")).toEqual({ resolution: "not_found", attempted: [], reason: "Type a server URL or a product name." })
    expect((await resolved("https://user:pw@mcp.example.com/mcp")).reason).toBe("An MCP server URL cannot contain credentials or a fragment.")
    expect((await resolved("http://[::1")).reason).toBe("That URL could not be parsed.")
    expect((await resolved("bad_host.example.com")).reason).toBe("That host could not be parsed.")
  })

  it("refuses a body that is not {query} of 1 to 200 characters with 400", async () => {
    const refused = async (body: unknown) => {
      const response = await Http.request(server.url, "POST", "/v1/mcp-connections/resolve", { token: org.admin.token, body })
      expect(response.status, JSON.stringify(response.body)).toBe(400)
      expect(invalid(response).error).toBe("invalid_request")
    }
    await refused({ query: "" })
    await refused({ query: "x".repeat(201) })
    await refused({ query: 42 })
    await refused({})
    await refused({ query: "linear", extra: true })
    // 200 characters as sent is accepted (white space included).
    expect((await resolve(` ${"x".repeat(198)} `)).status).toBe(200)
  })

  it("is for owners and admins: members get 403 and nothing is probed", async () => {
    const open = await fake()
    const member = await resolve(open.url, org.member.token)
    expect(member.status).toBe(403)
    expect(refusal(member, 403)).toMatchObject({ reason: "insufficient_role" })
    expect(open.requests).toEqual([])
    expect((await resolve(open.url, org.owner.token)).status).toBe(200)
    expect((await Http.request(server.url, "POST", "/v1/mcp-connections/resolve", { body: { query: "linear" } })).status).toBe(401)
  })
})

describe("the outbound guard in resolve", { timeout: 60_000 }, () => {
  let guarded: TestServer.RunningServer
  let admin: string
  beforeAll(async () => {
    guarded = await TestServer.start()
    admin = (await Http.staffed(guarded.url)).admin.token
  })
  afterAll(() => guarded.close())

  it("refuses loopback candidates when private destinations are not allowed: not_found with the refusal, and no request reaches the server", async () => {
    const open = await fake()
    const result = await resolved(open.origin, guarded.url, admin)
    const reason = "The outbound URL is not allowed: https is required"
    expect(result).toEqual({
      resolution: "not_found",
      attempted: [`${open.origin}/`, `${open.origin}/mcp`],
      reason,
      refused: [{ url: `${open.origin}/`, reason }, { url: `${open.origin}/mcp`, reason }]
    })
    const secure = await resolved("https://127.0.0.1:9/mcp", guarded.url, admin)
    expect(secure.refused).toEqual([{ url: "https://127.0.0.1:9/mcp", reason: "The outbound URL is not allowed: 127.0.0.1 is a loopback address" }])
    expect(open.requests).toEqual([])
  })

  it("resolves an IP address typed in any form as that host: the guard refuses a private one, and says so", async () => {
    const loopback = (host: string, what: string) => {
      const reason = `The outbound URL is not allowed: ${host.replace(/^\[|\]$/g, "")} is ${what}`
      const attempted = [`https://${host}/`, `https://${host}/mcp`]
      return { resolution: "not_found", attempted, reason, refused: attempted.map((url) => ({ url, reason })) }
    }
    for (const query of ["127.0.0.1", "127.1", "0177.0.0.1", "0x7f.1", "１２７.０.０.１", " 127.0.0.1 "]) {
      expect([query, await resolved(query, guarded.url, admin)]).toEqual([query, loopback("127.0.0.1", "a loopback address")])
    }
    for (const query of ["[::1]", "::1"]) {
      expect([query, await resolved(query, guarded.url, admin)]).toEqual([query, loopback("[::1]", "a loopback address")])
    }
    expect(await resolved("10.1.2.3", guarded.url, admin)).toMatchObject({ resolution: "not_found", reason: expect.stringMatching(/^The outbound URL is not allowed: 10\.1\.2\.3 is /) })
  })
})

describe("MCP presets", { timeout: 60_000 }, () => {
  it("are the built-in list by default, for every member", async () => {
    const listed = ok(await calls(server.url).mcpDiscovery.presets({ token: org.member.token }), 200)
    expect(listed.presets.map((preset) => preset.presetId)).toEqual([
      "notion", "linear", "stripe", "sentry", "granola", "polar", "xquik", "slack", "exa", "render", "context7"
    ])
    expect(listed.presets.find((preset) => preset.presetId === "slack")).toMatchObject({
      requiresOAuthClient: true,
      authorizationServerIssuer: "https://mcp.slack.com"
    })
  })

  it("come from ORGPLANE_MCP_PRESETS_FILE when set: matched by id, name or host, probed alone", async () => {
    const open = await fake()
    const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "orgplane-presets-"))
    const file = Path.join(folder, "presets.yaml")
    Fs.writeFileSync(file, [
      "- presetId: acme",
      "  displayName: Acme Tools",
      "  description: Acme's internal tools.",
      `  url: ${open.url}`,
      "  authType: none",
      "  requiresOAuthClient: false",
      "- presetId: gone",
      "  displayName: Gone",
      "  description: Nothing answers here.",
      "  url: http://localhost:9/mcp",
      "  authType: oauth",
      "  requiresOAuthClient: true",
      "  defaultOAuthScopes: [tools:read]",
      ""
    ].join("\n"))
    const custom = await TestServer.start({ outboundAllowPrivate: true, mcpPresetsFile: file, mcpProbeTimeout: "2 seconds" })
    try {
      const staffed = await Http.staffed(custom.url)
      const listed = ok(await calls(custom.url).mcpDiscovery.presets({ token: staffed.member.token }), 200)
      expect(listed.presets.map((preset) => preset.presetId)).toEqual(["acme", "gone"])

      for (const query of ["acme", "ACME tools", `${open.origin}/elsewhere`]) {
        const result = await resolved(query, custom.url, staffed.admin.token)
        expect(result.resolution, query).toBe("preset")
        expect(result.attempted).toEqual([open.url])
        expect(result.preset).toEqual({ presetId: "acme", displayName: "Acme Tools", description: "Acme's internal tools.", url: open.url, authType: "none", requiresOAuthClient: false })
        expect(matchOf(result).url).toBe(open.url)
        expect(matchOf(result).suggestedName).toBe("Acme Tools")
        expect(matchOf(result).discovery.server.initialize).toBe("succeeded")
      }
      // A preset whose endpoint does not answer: the preset, without a match.
      const gone = await resolved("Gone", custom.url, staffed.admin.token)
      expect(gone).toEqual({ resolution: "preset", attempted: ["http://localhost:9/mcp"], preset: expect.objectContaining({ presetId: "gone" }) })
      // The built-in presets are replaced, not extended.
      expect((await resolved("linear", custom.url, staffed.admin.token)).resolution).not.toBe("preset")
      // Connections read the same presets: a client to register, and the preset's scopes by default.
      const created = ok(await calls(custom.url).mcpConnections.create({
        token: staffed.admin.token,
        payload: { name: "Gone", url: "http://localhost:9/mcp", authType: "oauth" }
      }), 201)
      expect(created.item.oauthClientRequired).toBe(true)
      expect(created.item.oauth?.requestedScopes).toEqual(["tools:read"])
    } finally {
      await custom.close()
    }
  })

  it("stop start-up when the file is not a list of presets", async () => {
    const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "orgplane-presets-"))
    const bad = Path.join(folder, "bad.json")
    Fs.writeFileSync(bad, JSON.stringify([{ presetId: "x", displayName: "X" }]))
    await expect(TestServer.start({ mcpPresetsFile: bad })).rejects.toThrow(/ORGPLANE_MCP_PRESETS_FILE.*bad\.json: not an array of MCP presets/s)
    await expect(TestServer.start({ mcpPresetsFile: Path.join(folder, "missing.yaml") })).rejects.toThrow(/missing\.yaml: cannot be read \(ENOENT\)/)
  })
})

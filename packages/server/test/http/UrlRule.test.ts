/**
 * The one URL rule (`packages/schema/src/Urls.ts`) through HTTP: a marketplace's `logoUrl` (create and update) and the
 * other URL members of requests (an SSO sign-in's `returnTo`, audit stream, MCP, LLM provider and worker runtime
 * URLs) refuse what a browser or another parser would read as another host, with 400 `invalid_request` naming the
 * member, and store nothing.
 */
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

const { patch, post } = Http.verbs(() => server.url)
const { auditStreams, marketplaces, mcpConnections, workers } = calls(() => server.url)

/** Paths a browser reads as another host (`/\` and `//` are `//`; tabs and newlines are dropped). */
const hostilePaths = [
  "/\\127.0.0.1:18163/x.png",
  "//127.0.0.1:18163/x.png",
  "\\\\127.0.0.1:18163/x.png",
  "/\t/127.0.0.1:18163/x.png",
  "/\n/127.0.0.1:18163/x.png",
  "/..//127.0.0.1:18163/x.png",
  "/%2e%2e//127.0.0.1:18163/x.png"
]

/** Absolute URLs another parser reads otherwise, with credentials, or not http(s). */
const hostileAbsolute = [
  "https:/\\127.0.0.1:18163/x",
  "https:\\\\127.0.0.1:18163/x",
  "https:///127.0.0.1:18163/x",
  "https://example.com\\@127.0.0.1:18163/x",
  "https://user:pw@example.com/x",
  "https://exa mple.com/x",
  "javascript:alert(1)"
]

/** The answer is 400 `invalid_request`, and its details name `path`. */
const refused = (what: string, response: Http.RawResponse, path: ReadonlyArray<string>) => {
  expect([what, response.status, response.body]).toMatchObject([what, 400, { error: "invalid_request" }])
  const paths = invalid(response).details.map((detail) => JSON.stringify(detail.path))
  expect([what, paths]).toEqual([what, expect.arrayContaining([JSON.stringify(path)])])
}

describe("the URL rule over HTTP", () => {
  it("refuses a marketplace logoUrl a browser would load from another host, on create and update", async () => {
    const org = await Http.owner(server.url)
    for (const logoUrl of [...hostilePaths, ...hostileAbsolute, "http://cdn.example.com/x.png"]) {
      refused(JSON.stringify(logoUrl), await post("/v1/marketplaces", { token: org.token, body: { name: "Tools", logoUrl } }), ["logoUrl"])
    }
    const market = ok(await marketplaces.create({ token: org.token, payload: { name: "Tools", logoUrl: "/logos/tools.png" } }), 201).item
    for (const logoUrl of hostilePaths) {
      refused(JSON.stringify(logoUrl), await patch(`/v1/marketplaces/${market.id}`, { token: org.token, body: { logoUrl } }), ["logoUrl"])
    }
    const after = ok(await marketplaces.get({ token: org.token, path: { marketplaceId: market.id } }), 200)
    expect(after.item.logoUrl).toBe("/logos/tools.png")
    const list = ok(await marketplaces.list({ token: org.token }), 200)
    expect(list.items.map((item) => item.name)).toEqual(["Tools"])
  })

  it("refuses the same in an SSO sign-in's returnTo, an audit stream's, MCP connection's, LLM provider's and worker runtime's URL", async () => {
    const org = await Http.owner(server.url)
    for (const returnTo of [...hostilePaths, ...hostileAbsolute]) {
      refused(JSON.stringify(returnTo), await post("/v1/sso/sign-in", { body: { email: "ada@acme.example", returnTo } }), ["returnTo"])
    }
    const worker = ok(await workers.register({ token: org.token, payload: { name: "Laptop", destination: "local" } }), 201)
    for (const url of hostileAbsolute) {
      const what = JSON.stringify(url)
      refused(what, await post("/v1/audit/streams", { token: org.token, body: { url } }), ["url"])
      refused(what, await post("/v1/mcp-connections", { token: org.token, body: { name: "Docs", url, authType: "none" } }), ["url"])
      refused(
        what,
        await post("/v1/llm-providers", { token: org.token, body: { name: "Custom", apiStyle: "openai-compatible", baseUrl: url, models: [{ id: "m" }] } }),
        ["baseUrl"]
      )
      refused(what, await post("/v1/worker-runtime/instance", { token: worker.token, body: { provider: "static", status: "running", url } }), ["url"])
    }
    expect(ok(await auditStreams.list({ token: org.token }), 200).items).toEqual([])
    expect(ok(await mcpConnections.list({ token: org.token }), 200).items).toEqual([])
  })
})

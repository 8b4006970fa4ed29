/**
 * A bootstrap's claim link opens a page this server serves (`GET /workspace-claim`, identity/ClaimPage.ts), which
 * never repeats the link's token; under a host's mount with no public URL, the links and URLs the server publishes
 * name the mount and open through it; and, as a rule, no error body repeats what a request's URL carried: its query,
 * its path. (The page claiming in a browser: examples/claim-in-browser.test.ts.)
 */
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as Json from "../../../../packages/testkit/src/Json.js"
import { makeNodeListener } from "../../src/Server.js"
import * as TestDatabase from "../support/HttpDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import { createHash } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

const api = calls(() => server.url)

const bootstrap = async () =>
  ok(await api.bootstrap.workspace({ payload: { workspaceName: "Agent's", ownerEmail: "boss@agent.test" } }), 201)

describe("the claim link's page", () => {
  it("answers the link bootstrap prints with a page that says what it is for and never carries the token", async () => {
    const [link] = (await bootstrap()).claimLinks
    const url = new URL(link!.url)
    expect(url.pathname).toBe("/workspace-claim")
    expect(url.searchParams.get("token")).toBe(link!.token)
    const page = await Http.request(server.url, "GET", `${url.pathname}${url.search}`)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(page.text).toContain("<h1>Claim a workspace</h1>")
    expect(page.text).toContain("POST /v1/bootstrap/claims/accept")
    expect(page.text).toContain("orgplane bootstrap claim &lt;token&gt;")
    expect(page.text).not.toContain(link!.token)
    expect(page.text).not.toContain("boss@agent.test")
    // No Referer carries the token away, no cache keeps the page, no frame holds it.
    expect(page.headers.get("referrer-policy")).toBe("no-referrer")
    expect(page.headers.get("cache-control")).toBe("no-store")
    expect(page.headers.get("x-content-type-options")).toBe("nosniff")
    const policy = page.headers.get("content-security-policy") ?? ""
    expect(policy).toContain("frame-ancestors 'none'")
    expect(policy).toContain("connect-src 'self'")
    // The one script the policy allows is the page's own.
    const script = /<script>([\s\S]*)<\/script>/.exec(page.text)?.[1] ?? ""
    expect(script).toContain("v1/bootstrap/claims/accept")
    expect(policy).toContain(`script-src 'sha256-${createHash("sha256").update(script).digest("base64")}'`)
  })
})

describe("under a host's mount, with no public URL", () => {
  it("the claim link, SCIM's base URL and an SSO connection's callback name the mount, and open through it", async () => {
    const orgplane = await makeNodeListener({
      ...TestServer.testSettings,
      database: TestDatabase.layer,
      basePath: "/orgplane",
      defaultPlan: "enterprise"
    })
    // The host serves orgplane only under its mount, stripping it as the README's embedding does.
    const host = createServer((request, response) => {
      const url = request.url ?? "/"
      if (url !== "/orgplane" && !url.startsWith("/orgplane/")) return void response.writeHead(404).end()
      request.url = url.slice("/orgplane".length) || "/"
      orgplane.listener(request, response)
    })
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve))
    try {
      const base = `http://127.0.0.1:${(host.address() as AddressInfo).port}`
      const at = (path: string) => `${base}/orgplane${path}`
      const send = async (method: string, path: string, options: Http.Options = {}) => Http.request(base, method, new URL(at(path)).pathname, options)

      const workspace = Http.expectStatus<{ claimLinks: ReadonlyArray<{ url: string; token: string }> }>(
        "bootstrap",
        await send("POST", "/v1/bootstrap/workspace", { body: { workspaceName: "Mounted" } }),
        201
      )
      const claim = new URL(workspace.claimLinks[0]!.url)
      expect(claim.pathname).toBe("/orgplane/workspace-claim")
      const page = await Http.request(base, "GET", `${claim.pathname}${claim.search}`)
      expect(page.status).toBe(200)
      expect(page.text).toContain("<h1>Claim a workspace</h1>")

      const person = Http.expectStatus<{ session: { token: string } }>(
        "sign-up",
        await send("POST", "/v1/auth/sign-up", { body: { email: "mounted@example.com", password: "correct horse battery", name: "Mounted" } }),
        201
      )
      const token = person.session.token
      Http.expectStatus("organization", await send("POST", "/v1/organizations", { token, body: { name: "Mounted" } }), 201)

      const { connection } = Http.expectStatus<{ connection: { id: string; baseUrl: string } }>(
        "SCIM connection",
        await send("POST", "/v1/scim/connections", { token, body: { name: "Directory" } }),
        201
      )
      expect(connection.baseUrl).toBe(at(`/scim/v2/${connection.id}`))
      const issued = Http.expectStatus<{ token: string }>(
        "SCIM token",
        await send("POST", `/v1/scim/connections/${connection.id}/tokens`, { token, body: { name: "directory" } }),
        201
      )
      const config = await Http.request(base, "GET", `${new URL(connection.baseUrl).pathname}/ServiceProviderConfig`, { token: issued.token })
      expect(config.status, config.text).toBe(200)

      const sso = Http.expectStatus<{ connection: { sp: { redirectUrl: string } } }>(
        "SSO connection",
        await send("POST", "/v1/sso/connections", {
          token,
          body: {
            kind: "oidc",
            name: "Mounted IdP",
            oidc: {
              issuer: "https://idp.mounted.example",
              clientId: "orgplane",
              clientSecret: "secret",
              endpoints: { authorization: "https://idp.mounted.example/auth", token: "https://idp.mounted.example/token", jwks: "https://idp.mounted.example/jwks" }
            }
          }
        }),
        201
      )
      expect(sso.connection.sp.redirectUrl).toBe(at("/v1/sso/oidc/callback"))
    } finally {
      host.closeAllConnections()
      await new Promise<void>((resolve) => host.close(() => resolve()))
      await orgplane.dispose()
    }
  })
})

describe("error bodies never repeat the request's URL", () => {
  const secret = "opc_SECRETtokenSECRETtokenSECRET"
  const answers = () =>
    Promise.all([
      // Unknown paths, the secret in the query and in the path.
      Http.request(server.url, "GET", `/workspace-claims?token=${secret}`),
      Http.request(server.url, "GET", `/v1/no-such-thing/${secret}?token=${secret}`),
      Http.request(server.url, "DELETE", `/v1/no-such-thing/${secret}`),
      // A path the API has, with a method it does not take.
      Http.request(server.url, "PUT", `/v1/teams/${secret}?token=${secret}`),
      // Under the SCIM base, SCIM's 404.
      Http.request(server.url, "GET", `/scim/v2/${secret}/Nothing?token=${secret}`)
    ])

  it("a 404 or 405 names neither the path nor the query, whatever they carry", async () => {
    const [query, path, deleted, method, scim] = await answers()
    for (const response of [query, path, deleted, method, scim]) {
      expect(response.text).not.toContain("SECRET")
      expect(response.text).not.toContain("token=")
    }
    expect([query.status, query.body]).toEqual([404, {
      error: "not_found",
      message: "No route for GET at this path: the API's routes are in its OpenAPI document (GET /openapi.json) and at /docs."
    }])
    expect([path.status, deleted.status]).toEqual([404, 404])
    // A 405 names the path by its route's template, as the document writes it.
    expect([method.status, method.body]).toEqual([405, { error: "method_not_allowed", message: "/v1/teams/{teamId} does not take PUT; it takes GET, HEAD, PATCH, DELETE." }])
    expect([scim.status, Json.at(scim.body, "detail")]).toEqual([404, "No SCIM endpoint at this path: see /scim/v2/{connectionId}/ResourceTypes."])
  })
})

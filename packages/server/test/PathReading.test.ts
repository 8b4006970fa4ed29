/**
 * One reading of a path: a path that a proxy or firewall in front of the server could read as another one (a `;` or
 * `#`, a dot segment, an empty segment, an encoded `/` or a backslash) is refused with 400 before routing, on every
 * route, so the server never acts on a path other than the one those in front of it saw. Sent over raw `node:http`:
 * `fetch` and `new URL` resolve dot segments and drop fragments before anything leaves the process.
 */
import { Http, TestServer } from "@orgplane/testkit"
import * as NodeHttp from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start({ defaultPlan: "enterprise" })
})
afterAll(() => server.close())

const { get, post } = Http.verbs(() => server.url)

interface Raw {
  readonly status: number
  readonly headers: NodeHttp.IncomingHttpHeaders
  readonly body: any
}

/** One request with its path sent byte for byte as given. */
const send = (method: string, path: string, options: { readonly token?: string; readonly body?: unknown; readonly headers?: Record<string, string> } = {}) =>
  new Promise<Raw>((resolve, reject) => {
    const { hostname, port } = new URL(server.url)
    const body = options.body === undefined ? undefined : JSON.stringify(options.body)
    const headers: Record<string, string> = {
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
      ...(body === undefined ? {} : { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }),
      ...options.headers
    }
    const request = NodeHttp.request({ host: hostname, port, method, path, headers }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (text += chunk))
      response.on("end", () => {
        let parsed: unknown
        try {
          parsed = text === "" ? undefined : JSON.parse(text)
        } catch {
          parsed = text
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: parsed })
      })
    })
    request.on("error", reject)
    request.end(body)
  })

/** What a refused path answers outside the SCIM protocol's base. */
const refused = { error: "invalid_request", details: [{ path: [], message: expect.stringMatching(/^The (path|URL) has /) }] }

const teamNames = async (token: string) => (await get("/v1/teams", { token })).body.items.map((team: { name: string }) => team.name)

describe("the paths that reached another operation than the one in front of the server saw", () => {
  it("POST /v1/teams;/../../v1/api-keys and POST /v1/teams;x=1 create nothing", async () => {
    const owner = await Http.owner(server.url)
    const keysBefore = (await get("/v1/api-keys", { token: owner.token })).body.items.length
    for (const path of ["/v1/teams;/../../v1/api-keys", "/v1/teams;x=1"]) {
      const response = await send("POST", path, { token: owner.token, body: { name: "Smuggled" } })
      expect([path, response.status, response.body]).toEqual([path, 400, refused])
    }
    expect(await teamNames(owner.token)).not.toContain("Smuggled")
    expect((await get("/v1/api-keys", { token: owner.token })).body.items.length).toBe(keysBefore)
  })

  it("GET /v1/me;jsessionid=1 is refused, before authentication", async () => {
    const person = await Http.signUp(server.url)
    expect(await send("GET", "/v1/me;jsessionid=1", { token: person.token })).toMatchObject({ status: 400, body: refused })
    expect(await send("GET", "/v1/me;jsessionid=1")).toMatchObject({ status: 400, body: refused })
  })

  it("POST /v1/workers/{id};x=1/tokens is refused, not answered with the Allow of /v1/workers/{id}, and rotates nothing", async () => {
    const owner = await Http.owner(server.url)
    const registered = await post("/v1/workers", { token: owner.token, body: { name: "Box", destination: "local" } })
    const { worker, token } = Http.expectStatus<{ worker: { id: string }; token: string }>("registering a worker", registered, 201)
    const response = await send("POST", `/v1/workers/${worker.id};x=1/tokens`, { token: owner.token })
    expect([response.status, response.headers.allow, response.body]).toEqual([400, undefined, refused])
    // The worker's token still works: nothing was rotated.
    const heartbeat = await post("/v1/worker-runtime/heartbeat", { token, body: { status: "online", sentAt: new Date().toISOString() } })
    expect(heartbeat.status).not.toBe(401)
    // The real path's own methods.
    const allowed = await send("OPTIONS", `/v1/workers/${worker.id}/tokens`, { token: owner.token })
    expect([allowed.status, allowed.headers.allow]).toEqual([405, "POST"])
  })
})

describe("what a path may not have", () => {
  const variants: ReadonlyArray<readonly [what: string, path: string]> = [
    ["a ;", "/v1/me;x=1"],
    ["a ; alone", "/v1/me;"],
    ["a #", "/v1/me#x"],
    ["a # in the query", "/v1/me?x=1#y"],
    ["a . segment", "/v1/./me"],
    ["a .. segment", "/v1/x/../me"],
    ["a trailing . segment", "/v1/me/."],
    ["a trailing .. segment", "/v1/me/x/.."],
    ["%2e", "/v1/%2e/me"],
    ["%2E%2e", "/v1/x/%2E%2e/me"],
    [".%2e", "/v1/x/.%2e/me"],
    ["%2e.", "/v1/x/%2e./me"],
    ["%2f", "/v1%2fme"],
    ["%2F", "/v1%2Fme"],
    ["%5c", "/v1%5cme"],
    ["%5C", "/v1%5Cme"],
    ["a raw backslash", "/v1\\me"],
    ["an empty segment", "/v1//me"],
    ["an empty first segment", "//v1/me"],
    ["an absolute-form target with a ;", "http://127.0.0.1/v1/me;x=1"],
    ["an absolute-form target with a .. segment", "http://127.0.0.1/v1/x/../me"]
  ]

  for (const [what, path] of variants) {
    it(`${what}: ${path}`, async () => {
      const person = await Http.signUp(server.url)
      const response = await send("GET", path, { token: person.token })
      expect([response.status, response.headers.allow, response.body]).toEqual([400, undefined, refused])
    })
  }

  it("a path with one reading still serves: a trailing slash, a dot inside a segment, ; . / and %2F in the query, absolute form", async () => {
    const person = await Http.signUp(server.url)
    expect((await send("GET", "/v1/me/", { token: person.token })).status).toBe(200)
    expect((await send("GET", "/health?x=a;b/../c%2Fd/./e%2e%2e")).status).toBe(200)
    expect((await send("GET", "/docs/scalar.js")).status).toBe(200)
    expect((await send("GET", "http://127.0.0.1/v1/me", { token: person.token })).status).toBe(200)
  })
})

describe("every route family", () => {
  it("health, the document and its reference", async () => {
    for (const path of ["/health;x=1", "/health/.", "/ready;x", "/openapi.json;x=1", "/docs;x=1", "/docs/scalar.js/..", "/docs%2fscalar.js"]) {
      const response = await send("GET", path)
      expect([path, response.status, response.body]).toEqual([path, 400, refused])
    }
  })

  it("the code host's webhook", async () => {
    for (const path of ["/v1/webhooks/connectors/codehost;x=1", "/v1/webhooks/connectors/./codehost", "/v1/webhooks//connectors/codehost"]) {
      const response = await send("POST", path, { body: {}, headers: { "x-github-event": "ping" } })
      expect([path, response.status, response.body]).toEqual([path, 400, refused])
    }
  })

  it("the SCIM protocol: a SCIM error, as every refusal under /scim/v2", async () => {
    const owner = await Http.owner(server.url)
    const { base, token } = await Http.scimDirectory(server.url, owner.token)
    for (const path of [`${base}/Users;x=1`, `${base}/Users/%2e%2e/Groups`, `${base}/Users%2F.search`, `${base}/./Users`]) {
      const response = await send("GET", path, { token })
      expect([path, response.status, response.headers["content-type"]]).toEqual([path, 400, "application/scim+json"])
      expect(response.body).toMatchObject({ schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: "400", detail: expect.stringMatching(/^The (path|URL) has /) })
    }
    // `.search` is a segment, not a dot segment.
    const search = await send("POST", `${base}/Users/.search`, {
      token,
      body: { schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"] },
      headers: { "content-type": "application/scim+json" }
    })
    expect(search.status).toBe(200)
  })
})

describe("the OpenAPI document", () => {
  it("declares 400 for every operation whose template a refused path matches", async () => {
    const document = (await get("/openapi.json")).body
    const wrong: Array<string> = []
    let checked = 0
    for (const [template, item] of Object.entries<Record<string, { responses: Record<string, unknown> }>>(document.paths)) {
      if (!template.includes("{")) continue
      // A `;` inside a parameter's segment: literally, the template's own path, with an odd parameter.
      const path = template.replace(/\{[^}]+\}/, "x1;x=1").replace(/\{[^}]+\}/g, "x1")
      for (const [method, operation] of Object.entries(item)) {
        checked++
        const response = await send(method.toUpperCase(), path)
        if (response.status !== 400 || operation.responses["400"] === undefined) {
          wrong.push(`${method} ${path}: ${response.status}, declared ${Object.keys(operation.responses).join(" ")}`)
        }
      }
    }
    expect(checked).toBeGreaterThan(100)
    expect(wrong).toEqual([])
  })
})

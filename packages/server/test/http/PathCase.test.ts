/**
 * Paths match in their letter case only, as the OpenAPI document writes them: a proxy's rule on `/v1/admin` cannot
 * be passed by `/V1/ADMIN`. Generic over the document: every operation's path, upper-cased, answers 404.
 */
import { openApiDocument } from "@orgplane/schema"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

/** Every operation of the document: its method and its path with each parameter given a plausible value. */
const operations = Object.entries(openApiDocument().paths).flatMap(([path, item]) =>
  Object.keys(item ?? {}).filter((key) => ["get", "post", "put", "patch", "delete"].includes(key)).map((method) => ({
    method: method.toUpperCase(),
    path: path.replace(/\{[^}]+\}/g, "x1")
  }))
)

/** The path with every letter outside its parameters upper-cased. */
const shouted = (path: string) => path.split("/").map((segment) => segment === "x1" ? segment : segment.toUpperCase()).join("/")

describe("paths in another letter case", () => {
  it("the document has operations to try", () => {
    expect(operations.length).toBeGreaterThan(100)
  })

  it("answer 404 for every documented path upper-cased, with no credentials and with them", async () => {
    const { token } = await Http.owner(server.url)
    const wrong: Array<string> = []
    for (const { method, path } of operations) {
      if (shouted(path) === path) continue
      for (const headers of [{}, { authorization: `Bearer ${token}` }]) {
        const response = await Http.request(server.url, method, shouted(path), method === "GET" || method === "DELETE" ? { headers } : { headers, body: {} })
        if (response.status !== 404) wrong.push(`${method} ${shouted(path)}: ${response.status}`)
      }
    }
    expect(wrong).toEqual([])
  }, 120_000)

  it("still route the path as written", async () => {
    expect((await Http.request(server.url, "GET", "/v1/admin/metrics")).status).toBe(401)
    expect((await Http.request(server.url, "GET", "/V1/ADMIN/METRICS")).status).toBe(404)
    expect((await Http.request(server.url, "GET", "/v1/Admin/metrics")).status).toBe(404)
    expect((await Http.request(server.url, "POST", "/V1/TEAMS", { body: { name: "x" } })).status).toBe(404)
    expect((await Http.request(server.url, "GET", "/HEALTH")).status).toBe(404)
    expect((await Http.request(server.url, "GET", "/health")).status).toBe(200)
  })
})

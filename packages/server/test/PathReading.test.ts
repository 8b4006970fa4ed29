/**
 * One reading of a path: a path that a proxy or firewall in front of the server could read as another one (a `;` or
 * `#`, a dot segment, an empty segment, an encoded `/` or a backslash) is refused with 400 before routing, on every
 * route, so the server never acts on a path other than the one those in front of it saw. Sent over raw `node:net`:
 * `fetch` and `new URL` resolve dot segments and drop fragments before anything leaves the process.
 *
 * On a fresh database (the embedded one, or Postgres when DATABASE_URL is set). Not covered here: the cases that
 * create or rotate something (`/v1/teams`, `/v1/api-keys`, `/v1/workers`), authentication, the 405's `Allow`, the
 * document's and docs' routes and the webhook, SCIM's `.search`, and the check that the OpenAPI document declares a
 * 400 for every operation a refused path matches.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Api } from "../src/Api.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Net from "node:net"
import * as Routes from "../src/platform/Routes.js"
import * as TestDatabase from "./support/TestDatabase.js"
import * as TestServer from "./support/TestServer.js"

interface Raw {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
}

/** A chunked body's data (RFC 9112 §7.1), for an answer sent that way. */
const unchunk = (text: string) => {
  let out = ""
  let at = 0
  for (;;) {
    const end = text.indexOf("\r\n", at)
    const size = Number.parseInt(text.slice(at, end), 16)
    if (end === -1 || !(size > 0)) return out
    out += text.slice(end + 2, end + 2 + size)
    at = end + 2 + size + 2
  }
}

/** One request with its target sent byte for byte as given, on a connection of its own. */
const send = (url: string, method: string, target: string) =>
  Effect.promise(() =>
    new Promise<Raw>((resolve, reject) => {
      const { hostname, port } = new URL(url)
      const socket = Net.connect({ host: hostname, port: Number(port) })
      const chunks: Array<Buffer> = []
      socket.on("data", (chunk: Buffer) => chunks.push(chunk))
      socket.on("error", reject)
      socket.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        const split = text.indexOf("\r\n\r\n")
        const [statusLine = "", ...lines] = text.slice(0, split).split("\r\n")
        const headers: Record<string, string> = {}
        for (const line of lines) {
          const colon = line.indexOf(":")
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
        }
        const rest = text.slice(split + 4)
        const bodyText = headers["transfer-encoding"] === "chunked" ? unchunk(rest) : rest
        let body: unknown
        try {
          body = bodyText === "" ? undefined : JSON.parse(bodyText)
        } catch {
          body = bodyText
        }
        resolve({ status: Number(statusLine.split(" ")[1]), headers, body })
      })
      socket.end(`${method} ${target} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`)
    })
  )

/** What a refused path answers outside the SCIM protocol's base. */
const refused = { error: "invalid_request", details: [{ path: [], message: expect.stringMatching(/^The (path|URL) has /) }] }

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
  ["a malformed percent-encoding", "/v1/teams/%zz"],
  ["a % at the path's end", "/v1/me%"],
  ["a % with one digit before the query", "/v1/me%2?x=1"],
  ["an empty segment", "/v1//me"],
  ["an empty first segment", "//v1/me"],
  ["an absolute-form target with a ;", "http://127.0.0.1/v1/me;x=1"],
  ["an absolute-form target with a .. segment", "http://127.0.0.1/v1/x/../me"]
]

/** Paths with one reading, which the guard lets through. */
const fine = ["/health", "/health/", "/health?x=a;b/../c%2Fd/./e%2e%2e", "/docs/scalar.js", "/scim/v2/x/Users/.search", "http://127.0.0.1/health", "*", "/v1/teams/%41b%c3%A9", "/health?x=%zz"]

describe("Routes.pathAmbiguity", () => {
  for (const [what, path] of variants) {
    it(`${what}: ${path}`, () => {
      expect(Routes.pathAmbiguity(path)).toMatch(/^The (path|URL) has /)
    })
  }

  it("a path with one reading has none: a trailing slash, a dot inside a segment, ; . / and %2F in the query, absolute form", () => {
    expect(fine.map((path) => [path, Routes.pathAmbiguity(path)])).toEqual(fine.map((path) => [path, undefined]))
  })
})

describe("Routes.make", () => {
  const routes = Routes.make(Api, [["GET", "/openapi.json"]])

  it("finds a request's route template, HEAD by its GET route, and an extra route", () => {
    expect(routes.find("GET", "/health?x=1")?.route.template).toBe("/health")
    expect(routes.find("HEAD", "/ready")?.route.template).toBe("/ready")
    expect(routes.find("GET", "/openapi.json")?.route.template).toBe("/openapi.json")
    expect(routes.find("POST", "/health")).toBeUndefined()
    expect(routes.methods("/health")).toEqual(["GET", "HEAD"])
  })

  it("has no route, and no methods, for a path it refuses", () => {
    for (const path of ["/health;x=1", "/./health", "//health", "/health/x/.."]) {
      expect([path, routes.find("GET", path), routes.methods(path)]).toEqual([path, undefined, []])
    }
  })
})

class Url extends Context.Service<Url, string>()("test/PathReading/Url") {}

const ServerUrl = Layer.effect(
  Url,
  Effect.gen(function*() {
    const server = yield* TestServer.start({ database: yield* TestDatabase.layer({ migrated: true }) })
    return server.url
  })
)

layer(ServerUrl, { timeout: 60_000, excludeTestServices: true })(`the request guard on ${TestDatabase.kind}`, (it) => {
  describe("what a path may not have", () => {
    for (const [what, path] of variants) {
      it.effect(`${what}: ${path}`, () =>
        Effect.gen(function*() {
          const response = yield* send(yield* Url, "GET", path)
          expect([response.status, response.headers["allow"], response.body]).toEqual([400, undefined, refused])
        }))
    }

    it.effect("a path with one reading still serves: a trailing slash, ; . / and %2F in the query, absolute form", () =>
      Effect.gen(function*() {
        const url = yield* Url
        for (const path of ["/health", "/health/", "/health?x=a;b/../c%2Fd/./e%2e%2e", "http://127.0.0.1/health"]) {
          const response = yield* send(url, "GET", path)
          expect([path, response.status]).toEqual([path, 200])
        }
      }))
  })

  describe("every route family", () => {
    it.effect("health and readiness: refused, where the router alone would have served them", () =>
      Effect.gen(function*() {
        const url = yield* Url
        for (const path of ["/health;x=1", "/health/.", "/ready;x", "/x/../health", "/%2e/health", "//health", "/health#x"]) {
          const response = yield* send(url, "GET", path)
          expect([path, response.status, response.body]).toEqual([path, 400, refused])
        }
      }))

    it.effect("the SCIM protocol: a SCIM error, as every refusal under /scim/v2", () =>
      Effect.gen(function*() {
        const url = yield* Url
        const base = "/scim/v2/scim_0000000000000000000000000"
        for (const path of [`${base}/Users;x=1`, `${base}/Users/%2e%2e/Groups`, `${base}/Users%2F.search`, `${base}/./Users`, "/scim/v2/%zz/Users", `${base}/Users/%z`]) {
          const response = yield* send(url, "GET", path)
          expect([path, response.status, response.headers["content-type"]]).toEqual([path, 400, "application/scim+json"])
          expect(response.body).toEqual({
            schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
            status: "400",
            scimType: "invalidSyntax",
            detail: expect.stringMatching(/^The (path|URL) has /)
          })
        }
      }))
  })
})

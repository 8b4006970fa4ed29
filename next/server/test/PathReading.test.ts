/**
 * One reading of a path: a path that a proxy or firewall in front of the server could read as another one (a `;` or
 * `#`, a dot segment, an empty segment, an encoded `/` or a backslash) has no route in the route table.
 *
 * Ported from packages/server/test/PathReading.test.ts: so far the cases of what a path may not have, on
 * `Routes.pathAmbiguity` and `Routes.make`; the same through real HTTP comes with the request guard.
 */
import { describe, expect, it } from "@effect/vitest"
import { Api } from "../src/Api.js"
import * as Routes from "../src/platform/Routes.js"

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

/** Paths with one reading, which the guard lets through. */
const fine = ["/health", "/health/", "/health?x=a;b/../c%2Fd/./e%2e%2e", "/docs/scalar.js", "/scim/v2/x/Users/.search", "http://127.0.0.1/health", "*"]

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

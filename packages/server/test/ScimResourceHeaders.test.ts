/**
 * scim/ResourceHeaders.ts: `If-None-Match` read as RFC 7232 says (a weak comparison of the versions it lists, `*`
 * for any, a lower-case `w/` entry naming none), and the headers a resource's answer gets, through a web handler: `ETag`, `Location` for a create, 304
 * without a body when `If-None-Match` names the version.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpEffect from "effect/http/HttpEffect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { noneMatchNames, unlessNotModified, withResourceHeaders } from "../src/scim/ResourceHeaders.js"
describe("noneMatchNames", () => {
  it("tells whether If-None-Match names the resource's version", () => {
    // Each header, and whether it names the versions W/"1", "1" and 1.
    const cases: ReadonlyArray<readonly [string | undefined, readonly [boolean, boolean, boolean]]> = [
      [undefined, [false, false, false]],
      ["", [false, false, false]],
      ["*", [true, true, true]],
      [" * ", [true, true, true]],
      ["W/\"1\"", [true, true, false]],
      ["\"1\"", [true, true, false]],
      ["W/\"2\"", [false, false, false]],
      ["W/\"2\", W/\"1\"", [true, true, false]],
      ["w/\"1\"", [false, false, false]],
      ["W/\"1\" ,x", [true, true, false]],
      ["1", [false, false, true]],
      [",", [false, false, false]]
    ]
    for (const [header, named] of cases) {
      expect(["W/\"1\"", "\"1\"", "1"].map((version) => noneMatchNames(header, version)), String(header)).toEqual(named)
    }
    expect(noneMatchNames("\"1\"", "W/\"1\"")).toBe(true)
    expect(noneMatchNames("W/\"2\"", "W/\"1\"")).toBe(false)
  })
})

describe("a resource's answer", () => {
  const resource = { id: "om_1", meta: { version: "W/\"3\"", location: "https://orgplane.test/scim/v2/scc_1/Users/om_1" } }
  const serve = (answer: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>) => async (headers: Record<string, string> = {}) => {
    const handler = HttpEffect.toWebHandler(answer)
    return handler(new Request("http://localhost/scim/v2/scc_1/Users/om_1", { headers }))
  }

  it.effect("a create carries ETag and Location; an update ETag only; a resource without meta neither", () =>
    Effect.promise(async () => {
      const created = await serve(Effect.map(withResourceHeaders(true)(Effect.succeed(resource)), (body) => HttpServerResponse.jsonUnsafe(body)))()
      expect([created.status, created.headers.get("etag"), created.headers.get("location")]).toEqual([200, "W/\"3\"", resource.meta.location])
      const updated = await serve(Effect.map(withResourceHeaders()(Effect.succeed(resource)), (body) => HttpServerResponse.jsonUnsafe(body)))()
      expect([updated.headers.get("etag"), updated.headers.get("location")]).toEqual(["W/\"3\"", null])
      const bare = await serve(Effect.map(withResourceHeaders(true)(Effect.succeed({ id: "x", meta: undefined })), (body) => HttpServerResponse.jsonUnsafe(body)))()
      expect([bare.headers.get("etag"), bare.headers.get("location")]).toEqual([null, null])
    }))

  it.effect("a read answers 304 without a body when If-None-Match names its version, else the resource with its ETag", () =>
    Effect.promise(async () => {
      const read = (ifNoneMatch: string | undefined) =>
        serve(Effect.map(unlessNotModified(ifNoneMatch)(Effect.succeed(resource)), (answer) =>
          HttpServerResponse.isHttpServerResponse(answer) ? answer : HttpServerResponse.jsonUnsafe(answer)))()
      const same = await read("W/\"3\"")
      expect([same.status, same.headers.get("etag"), await same.text()]).toEqual([304, "W/\"3\"", ""])
      const any = await read("*")
      expect(any.status).toBe(304)
      const other = await read("W/\"2\"")
      expect([other.status, other.headers.get("etag"), await other.json()]).toEqual([200, "W/\"3\"", resource])
      const none = await read(undefined)
      expect([none.status, none.headers.get("etag"), none.headers.get("location")]).toEqual([200, "W/\"3\"", null])
    }))
})

/**
 * ApiOf.ts: every operation of the API may answer the errors any request may meet (a bad request, a conflict, a body
 * too large, a URI too long, a media type, a validation failure, headers too large), declared on each.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { apiOf } from "../src/ApiOf.js"
import { savedDocument } from "./support/SavedDocument.js"

describe("ApiOf", () => {
  it("gives every operation of the groups the errors any operation may answer", () => {
    const teams = HttpApiGroup.make("teams").add(HttpApiEndpoint.post("create", "/v1/teams"))
    const members = HttpApiGroup.make("members").add(HttpApiEndpoint.get("list", "/v1/members"))
    const api = apiOf(teams, members)
    expect(api.identifier).toBe("orgplane")
    const statuses = new Map<string, Array<number>>()
    HttpApi.reflect(api, { onGroup() {}, onEndpoint: ({ endpoint, group, errors }) => statuses.set(`${group.identifier}.${endpoint.identifier}`, [...errors.keys()].sort()) })
    const any = [400, 409, 413, 414, 415, 422, 431]
    expect(Object.fromEntries(statuses)).toEqual({ "teams.create": any, "members.list": any })
    // The saved document answers each of them on a write (409 is also teams' conflict).
    expect(savedDocument).toMatchObject({ paths: { "/v1/teams": { post: { responses: Object.fromEntries(any.map((status) => [String(status), {}])) } } } })
  })
})

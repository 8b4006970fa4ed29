import { describe, expect, it } from "@effect/vitest"
import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { apiOf } from "../src/ApiOf.js"
import { fixture } from "./differential.js"

describe("ApiOf on Effect 4", () => {
  it("gives every operation of the groups the errors any operation may answer, with Effect 3's statuses", () => {
    const teams = HttpApiGroup.make("teams").add(HttpApiEndpoint.post("create", "/v1/teams"))
    const members = HttpApiGroup.make("members").add(HttpApiEndpoint.get("list", "/v1/members"))
    const api = apiOf(teams, members)
    expect(api.identifier).toBe("orgplane")
    const statuses = new Map<string, Array<number>>()
    HttpApi.reflect(api, { onGroup() {}, onEndpoint: ({ endpoint, group, errors }) => statuses.set(`${group.identifier}.${endpoint.identifier}`, [...errors.keys()].sort()) })
    const any = [400, 409, 413, 414, 415, 422, 431]
    expect(Object.fromEntries(statuses)).toEqual({ "teams.create": any, "members.list": any })
    // The Effect 3 document answers each of them on an operation of its own (409 is also teams' conflict).
    expect(fixture).toMatchObject({ paths: { "/v1/teams": { post: { responses: Object.fromEntries(any.map((status) => [String(status), {}])) } } } })
  })
})

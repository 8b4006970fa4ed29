import { describe, expect, it } from "@effect/vitest"
import { Context, Option } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { addExtension } from "../src/Extensions.js"
import { fixture } from "./differential.js"

describe("Extensions on Effect 4", () => {
  it("adds each marker to those already there, and the document shows both, as the Effect 3 one does", () => {
    const endpoint = HttpApiEndpoint.post("create", "/v1/teams").pipe(
      addExtension("x-orgplane-audit", { action: "team.create" }),
      addExtension("x-orgplane-actions", ["teams.manage"])
    )
    const markers = { "x-orgplane-audit": { action: "team.create" }, "x-orgplane-actions": ["teams.manage"] }
    expect(Option.getOrUndefined(Context.getOption(endpoint.annotations, OpenApi.Override))).toEqual(markers)
    const spec = OpenApi.fromApi(HttpApi.make("test").add(HttpApiGroup.make("teams").add(endpoint)))
    expect(spec.paths["/v1/teams"]?.post).toMatchObject(markers)
    // The Effect 3 document carries the same members on the same operation.
    expect(fixture).toMatchObject({ paths: { "/v1/teams": { post: markers } } })
  })
})

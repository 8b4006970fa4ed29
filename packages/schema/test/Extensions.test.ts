/** Extensions.ts: an endpoint's `x-orgplane-*` markers, added to one another and shown on the operation. */
import { describe, expect, it } from "@effect/vitest"
import { Context, Option } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { addExtension } from "../src/Extensions.js"
import { savedDocument } from "./support/SavedDocument.js"

describe("Extensions", () => {
  it("adds each marker to those already there, and the document shows both", () => {
    const endpoint = HttpApiEndpoint.post("create", "/v1/teams").pipe(
      addExtension("x-orgplane-audit", { action: "team.create" }),
      addExtension("x-orgplane-actions", ["teams.manage"])
    )
    const markers = { "x-orgplane-audit": { action: "team.create" }, "x-orgplane-actions": ["teams.manage"] }
    expect(Option.getOrUndefined(Context.getOption(endpoint.annotations, OpenApi.Override))).toEqual(markers)
    const spec = OpenApi.fromApi(HttpApi.make("test").add(HttpApiGroup.make("teams").add(endpoint)))
    expect(spec.paths["/v1/teams"]?.post).toMatchObject(markers)
    // The saved document carries them on the same operation.
    expect(savedDocument).toMatchObject({ paths: { "/v1/teams": { post: markers } } })
  })
})

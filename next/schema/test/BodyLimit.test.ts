import { describe, expect, it } from "@effect/vitest"
import { Context, Option } from "effect"
import { HttpApiEndpoint } from "effect/http-api"
import * as BodyLimit3 from "../../../packages/schema/src/BodyLimit.js"
import { MaxBodyBytes, RawBody } from "../src/BodyLimit.js"

describe("BodyLimit on Effect 4", () => {
  it("keeps the annotation keys the server reads", () => {
    expect(MaxBodyBytes.key).toBe(BodyLimit3.MaxBodyBytes.key)
    expect(RawBody.key).toBe(BodyLimit3.RawBody.key)
    const endpoint = HttpApiEndpoint.post("import", "/import").annotate(MaxBodyBytes, 1024).annotate(RawBody, true)
    expect(Option.getOrUndefined(Context.getOption(endpoint.annotations, MaxBodyBytes))).toBe(1024)
    expect(Option.getOrUndefined(Context.getOption(endpoint.annotations, RawBody))).toBe(true)
  })
})

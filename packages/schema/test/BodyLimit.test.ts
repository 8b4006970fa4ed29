import { describe, expect, it } from "@effect/vitest"
import { Context, Option } from "effect"
import { HttpApiEndpoint } from "effect/http-api"
import { MaxBodyBytes, RawBody } from "../src/BodyLimit.js"
import { effect3 } from "./effect3.js"

const BodyLimit3 = effect3("BodyLimit")

describe("BodyLimit on Effect 4", () => {
  it("keeps the annotation keys the server reads", () => {
    expect(MaxBodyBytes.key).toBe(BodyLimit3.MaxBodyBytes.key)
    expect(RawBody.key).toBe(BodyLimit3.RawBody.key)
    const endpoint = HttpApiEndpoint.post("import", "/import").annotate(MaxBodyBytes, 1024).annotate(RawBody, true)
    expect(Option.getOrUndefined(Context.getOption(endpoint.annotations, MaxBodyBytes))).toBe(1024)
    expect(Option.getOrUndefined(Context.getOption(endpoint.annotations, RawBody))).toBe(true)
  })
})

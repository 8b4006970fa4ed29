/** BodyLimit.ts: the annotations an endpoint carries for the server's body reading (a size limit, a raw body). */
import { describe, expect, it } from "@effect/vitest"
import { Context, Option } from "effect"
import { HttpApiEndpoint } from "effect/http-api"
import { MaxBodyBytes, RawBody } from "../src/BodyLimit.js"

describe("BodyLimit", () => {
  it("keeps the annotation keys the server reads", () => {
    expect(MaxBodyBytes.key).toBe("@orgplane/schema/MaxBodyBytes")
    expect(RawBody.key).toBe("@orgplane/schema/RawBody")
    const endpoint = HttpApiEndpoint.post("import", "/import").annotate(MaxBodyBytes, 1024).annotate(RawBody, true)
    expect(Option.getOrUndefined(Context.getOption(endpoint.annotations, MaxBodyBytes))).toBe(1024)
    expect(Option.getOrUndefined(Context.getOption(endpoint.annotations, RawBody))).toBe(true)
  })
})

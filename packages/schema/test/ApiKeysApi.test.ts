import { describe, expect, it } from "@effect/vitest"
import { ApiKeysApi } from "../src/ApiKeysApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const ApiKeysApi3 = effect3("ApiKeysApi").ApiKeysApi

describe("ApiKeysApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(ApiKeysApi, ApiKeysApi3)).toHaveLength(3)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(ApiKeysApi, ApiKeysApi3)).toBeGreaterThan(0)
  })
})

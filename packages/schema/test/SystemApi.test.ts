import { describe, expect, it } from "@effect/vitest"
import { SystemApi } from "../src/SystemApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const SystemApi3 = effect3("SystemApi").SystemApi

describe("SystemApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(SystemApi, SystemApi3)).toEqual(["GET /health", "GET /ready"])
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(SystemApi, SystemApi3)).toBeGreaterThan(0)
  })
})

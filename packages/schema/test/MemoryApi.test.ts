import { describe, expect, it } from "@effect/vitest"
import { MemoryApi } from "../src/MemoryApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const MemoryApi3 = effect3("MemoryApi").MemoryApi

describe("MemoryApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(MemoryApi, MemoryApi3)).toHaveLength(5)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(MemoryApi, MemoryApi3)).toBeGreaterThan(0)
  })
})

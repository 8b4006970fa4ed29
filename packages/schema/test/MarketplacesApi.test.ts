import { describe, expect, it } from "@effect/vitest"
import { MarketplacesApi } from "../src/MarketplacesApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const MarketplacesApi3 = effect3("MarketplacesApi").MarketplacesApi

describe("MarketplacesApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    const operations = sameOperations(MarketplacesApi, MarketplacesApi3, {})
    expect(operations).toHaveLength(12)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(MarketplacesApi, MarketplacesApi3)).toBeGreaterThan(0)
  })
})

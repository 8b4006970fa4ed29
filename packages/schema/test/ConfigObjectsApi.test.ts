import { describe, expect, it } from "@effect/vitest"
import { ConfigObjectsApi } from "../src/ConfigObjectsApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const ConfigObjectsApi3 = effect3("ConfigObjectsApi").ConfigObjectsApi

describe("ConfigObjectsApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    const operations = sameOperations(ConfigObjectsApi, ConfigObjectsApi3, {})
    expect(operations).toHaveLength(14)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(ConfigObjectsApi, ConfigObjectsApi3)).toBeGreaterThan(0)
  })
})

import { describe, expect, it } from "@effect/vitest"
import { PluginsApi } from "../src/PluginsApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const PluginsApi3 = effect3("PluginsApi").PluginsApi

describe("PluginsApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    const operations = sameOperations(PluginsApi, PluginsApi3, {})
    expect(operations).toHaveLength(13)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(PluginsApi, PluginsApi3)).toBeGreaterThan(0)
  })
})

import { describe, expect, it } from "@effect/vitest"
import { BootstrapApi } from "../src/BootstrapApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const BootstrapApi3 = effect3("BootstrapApi").BootstrapApi

describe("BootstrapApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(BootstrapApi, BootstrapApi3)).toHaveLength(2)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(BootstrapApi, BootstrapApi3)).toBeGreaterThan(0)
  })
})

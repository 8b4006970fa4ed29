import { describe, expect, it } from "@effect/vitest"
import { BootstrapApi as BootstrapApi3 } from "../../../packages/schema/src/BootstrapApi.js"
import { BootstrapApi } from "../src/BootstrapApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"

describe("BootstrapApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(BootstrapApi, BootstrapApi3)).toHaveLength(2)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(BootstrapApi, BootstrapApi3)).toBeGreaterThan(0)
  })
})

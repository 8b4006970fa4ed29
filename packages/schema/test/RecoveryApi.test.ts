import { describe, expect, it } from "@effect/vitest"
import { RecoveryApi } from "../src/RecoveryApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const RecoveryApi3 = effect3("RecoveryApi").RecoveryApi

describe("RecoveryApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(RecoveryApi, RecoveryApi3)).toHaveLength(5)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(RecoveryApi, RecoveryApi3)).toBeGreaterThan(0)
  })
})

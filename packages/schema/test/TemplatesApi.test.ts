import { describe, expect, it } from "@effect/vitest"
import * as TemplatesApi from "../src/TemplatesApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const TemplatesApi3 = effect3("TemplatesApi")

describe("TemplatesApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(TemplatesApi.TemplatesApi, TemplatesApi3.TemplatesApi)).toHaveLength(11)
    expect(TemplatesApi.TEMPLATE_BODY_BYTES).toBe(TemplatesApi3.TEMPLATE_BODY_BYTES)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(TemplatesApi.TemplatesApi, TemplatesApi3.TemplatesApi)).toBeGreaterThan(0)
  })
})

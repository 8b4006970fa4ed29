import { describe, expect, it } from "@effect/vitest"
import { ScimConnectionsApi } from "../src/ScimConnectionsApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const ScimConnectionsApi3 = effect3("ScimConnectionsApi").ScimConnectionsApi

describe("ScimConnectionsApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(ScimConnectionsApi, ScimConnectionsApi3)).toHaveLength(10)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(ScimConnectionsApi, ScimConnectionsApi3)).toBeGreaterThan(0)
  })
})

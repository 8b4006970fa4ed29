import { describe, expect, it } from "@effect/vitest"
import { ScimConnectionsApi as ScimConnectionsApi3 } from "../../../packages/schema/src/ScimConnectionsApi.js"
import { ScimConnectionsApi } from "../src/ScimConnectionsApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"

describe("ScimConnectionsApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(ScimConnectionsApi, ScimConnectionsApi3)).toHaveLength(10)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(ScimConnectionsApi, ScimConnectionsApi3)).toBeGreaterThan(0)
  })
})

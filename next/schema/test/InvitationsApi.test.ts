import { describe, expect, it } from "@effect/vitest"
import { InvitationsApi as InvitationsApi3 } from "../../../packages/schema/src/InvitationsApi.js"
import { InvitationsApi } from "../src/InvitationsApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"

describe("InvitationsApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(InvitationsApi, InvitationsApi3)).toHaveLength(6)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(InvitationsApi, InvitationsApi3)).toBeGreaterThan(0)
  })
})

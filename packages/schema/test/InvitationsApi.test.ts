import { describe, expect, it } from "@effect/vitest"
import { InvitationsApi } from "../src/InvitationsApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const InvitationsApi3 = effect3("InvitationsApi").InvitationsApi

describe("InvitationsApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(InvitationsApi, InvitationsApi3)).toHaveLength(6)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(InvitationsApi, InvitationsApi3)).toBeGreaterThan(0)
  })
})

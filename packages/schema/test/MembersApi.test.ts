import { describe, expect, it } from "@effect/vitest"
import { MembersApi, RolesApi } from "../src/MembersApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const MembersApi3 = effect3("MembersApi").MembersApi
const RolesApi3 = effect3("MembersApi").RolesApi

describe("MembersApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(MembersApi, MembersApi3)).toHaveLength(7)
  })

  it("declares the roles operation of the Effect 3 group beside it", () => {
    expect(sameOperations(RolesApi, RolesApi3)).toEqual(["GET /v1/roles"])
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(MembersApi, MembersApi3)).toBeGreaterThan(0)
    expect(sameExamples(RolesApi, RolesApi3)).toBeGreaterThan(0)
  })
})

import { describe, expect, it } from "@effect/vitest"
import { UsersApi as UsersApi3 } from "../../../packages/schema/src/UsersApi.js"
import { UsersApi } from "../src/UsersApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"

describe("UsersApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(UsersApi, UsersApi3).length).toBeGreaterThan(10)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(UsersApi, UsersApi3)).toBeGreaterThan(0)
  })
})

import { describe, expect, it } from "@effect/vitest"
import { UsersApi } from "../src/UsersApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const UsersApi3 = effect3("UsersApi").UsersApi

describe("UsersApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(UsersApi, UsersApi3).length).toBeGreaterThan(10)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(UsersApi, UsersApi3)).toBeGreaterThan(0)
  })
})

import { describe, expect, it } from "@effect/vitest"
import { McpAuthorizationApi } from "../src/McpAuthorizationApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const McpAuthorizationApi3 = effect3("McpAuthorizationApi").McpAuthorizationApi

describe("McpAuthorizationApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(McpAuthorizationApi, McpAuthorizationApi3)).toHaveLength(5)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(McpAuthorizationApi, McpAuthorizationApi3)).toBeGreaterThan(0)
  })
})

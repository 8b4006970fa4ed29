import { describe, expect, it } from "@effect/vitest"
import { McpDiscoveryApi } from "../src/McpDiscoveryApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const McpDiscoveryApi3 = effect3("McpDiscoveryApi").McpDiscoveryApi

describe("McpDiscoveryApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(McpDiscoveryApi, McpDiscoveryApi3)).toHaveLength(2)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(McpDiscoveryApi, McpDiscoveryApi3)).toBeGreaterThan(0)
  })
})

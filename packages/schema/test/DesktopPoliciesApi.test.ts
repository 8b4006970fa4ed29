import { describe, expect, it } from "@effect/vitest"
import { DesktopPoliciesApi } from "../src/DesktopPoliciesApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { isJsonObject, withMember } from "./catalog.js"
import { priorityAsDocumented } from "./desktopPolicies.js"
import { type Json } from "./differential.js"
import { effect3 } from "./effect3.js"

const DesktopPoliciesApi3 = effect3("DesktopPoliciesApi").DesktopPoliciesApi

/** `operation` with its JSON request body read by `read`. */
const withBody = (read: (body: Json) => Json) => (operation: Json): Json => {
  const requestBody = isJsonObject(operation) ? operation["requestBody"] : undefined
  const content = isJsonObject(requestBody) ? requestBody["content"] : undefined
  const body = isJsonObject(content) ? content["application/json"] : undefined
  expect(body).toBeDefined()
  return withMember(operation, "requestBody", withMember(requestBody ?? null, "content", withMember(content ?? null, "application/json", read(body ?? null))))
}

describe("DesktopPoliciesApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    const operations = sameOperations(DesktopPoliciesApi, DesktopPoliciesApi3, {
      // The real difference DesktopPolicies.test.ts names (the requests' priority).
      "POST /v1/desktop-policies": withBody(priorityAsDocumented("Default 0.")),
      "PATCH /v1/desktop-policies/{desktopPolicyId}": withBody(priorityAsDocumented())
    })
    expect(operations).toHaveLength(6)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(DesktopPoliciesApi, DesktopPoliciesApi3)).toBeGreaterThan(0)
  })
})

import { describe, expect, it } from "@effect/vitest"
import { DesktopPoliciesApi as DesktopPoliciesApi3 } from "../../../packages/schema/src/DesktopPoliciesApi.js"
import { DesktopPoliciesApi } from "../src/DesktopPoliciesApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { isJsonObject, withMember } from "./catalog.js"
import { type Json } from "./differential.js"

/** `json` with its member at `path` (which it must have) replaced by `change` of it. */
const changedAt = (json: Json, path: ReadonlyArray<string>, change: (member: Json) => Json): Json => {
  const [key, ...rest] = path
  if (key === undefined) return change(json)
  if (!isJsonObject(json) || json[key] === undefined) throw new Error(`no ${key}`)
  return withMember(json, key, changedAt(json[key], rest, change))
}

/** The priority's bounds and description, as both versions write them. */
const priority = {
  description: "0 to 1000000; for each switch, the highest-priority enabled policy that sets it decides (ties: the older one).",
  minimum: 0,
  maximum: 1_000_000
}

/**
 * The real difference DesktopPolicies.test.ts names: the request's priority, a bounded integer, is inline in Effect 4
 * (a member's own description in `allOf` beside it) where Effect 3 referred to `Int` beside its bounds (the member's
 * description outside). Read here as Effect 3 wrote it.
 */
const priorityAsDocumented = (memberDescription?: string) => (operation: Json): Json => {
  const ported = memberDescription === undefined ? { type: "integer", ...priority } : { type: "integer", ...priority, allOf: [{ description: memberDescription }] }
  const documented = memberDescription === undefined ? { $ref: "ref:Int", ...priority } : { allOf: [{ $ref: "ref:Int", ...priority }], description: memberDescription }
  expect(operation).toMatchObject({ requestBody: { content: { "application/json": { properties: { priority: ported } } } } })
  return changedAt(operation, ["requestBody", "content", "application/json", "properties", "priority"], () => documented)
}

describe("DesktopPoliciesApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    const operations = sameOperations(DesktopPoliciesApi, DesktopPoliciesApi3, {
      "POST /v1/desktop-policies": priorityAsDocumented("Default 0."),
      "PATCH /v1/desktop-policies/{desktopPolicyId}": priorityAsDocumented()
    })
    expect(operations).toHaveLength(6)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(DesktopPoliciesApi, DesktopPoliciesApi3)).toBeGreaterThan(0)
  })
})

/**
 * What DesktopPolicies' differential tests (the module's and its group's) share: a real difference, read back as
 * Effect 3 wrote it.
 */
import { expect } from "@effect/vitest"
import { isJsonObject, refinedIntAsDocumented, withMember } from "./catalog.js"
import { type Json } from "./differential.js"

/** The priority's bounds and description, as both versions write them. */
export const priority = {
  description: "0 to 1000000; for each switch, the highest-priority enabled policy that sets it decides (ties: the older one).",
  minimum: 0,
  maximum: 1_000_000
}

/**
 * A real difference, for the OpenAPI normalisation step: Effect 4 writes a request's priority, a refinement of
 * Common's `Int`, out in full (`Int`'s type and description, its checks in `allOf`, a member's own description
 * beside them), where Effect 3 referred to the `Int` component beside its bounds (a member's own description
 * outside, the rest in `allOf`), as the normalisation writes it (`refinedIntAsDocumented`). The same keywords;
 * `body` (a request body's schema) read here as Effect 3 wrote them.
 */
export const priorityAsDocumented = (memberDescription?: string) => (body: Json): Json => {
  const documented = memberDescription === undefined ? { $ref: "ref:Int", ...priority } : { allOf: [{ $ref: "ref:Int", ...priority }], description: memberDescription }
  const properties = isJsonObject(body) ? body["properties"] : undefined
  expect(refinedIntAsDocumented(isJsonObject(properties) ? properties["priority"] : undefined)).toEqual(documented)
  return withMember(body, "properties", withMember(properties ?? null, "priority", documented))
}

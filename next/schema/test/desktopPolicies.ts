/**
 * What DesktopPolicies' differential tests (the module's and its group's) share: a real difference, read back as
 * Effect 3 wrote it.
 */
import { expect } from "@effect/vitest"
import { isJsonObject, withMember } from "./catalog.js"
import { type Json } from "./differential.js"

/** The priority's bounds and description, as both versions write them. */
export const priority = {
  description: "0 to 1000000; for each switch, the highest-priority enabled policy that sets it decides (ties: the older one).",
  minimum: 0,
  maximum: 1_000_000
}

/**
 * A real difference, for the OpenAPI normalisation step: Effect 4 writes a request's priority, a bounded integer,
 * inline (`{ type: integer, minimum, maximum }`, a member's own description in `allOf` beside it), where Effect 3
 * referred to the `Int` component beside its bounds (a member's own description outside, the rest in `allOf`). The
 * same keywords; `body` (a request body's schema) read here as Effect 3 wrote them.
 */
export const priorityAsDocumented = (memberDescription?: string) => (body: Json): Json => {
  const ported = memberDescription === undefined ? { type: "integer", ...priority } : { type: "integer", ...priority, allOf: [{ description: memberDescription }] }
  const documented = memberDescription === undefined ? { $ref: "ref:Int", ...priority } : { allOf: [{ $ref: "ref:Int", ...priority }], description: memberDescription }
  expect(body).toMatchObject({ properties: { priority: ported } })
  const properties = isJsonObject(body) ? body["properties"] : undefined
  return withMember(body, "properties", withMember(properties ?? null, "priority", documented))
}

/**
 * The saved OpenAPI document (`test/fixtures/openapi.json`, which Api.test.ts holds the generated one equal to) is a
 * valid OpenAPI 3.1 document, as an independent validator reads it: `@seriousme/openapi-schema-validator` holds a
 * document to the OpenAPI Initiative's JSON Schema of its version, then resolves every `$ref` (Schema Objects are
 * checked to be objects or booleans there; the JSON Schema inside them is not read further).
 *
 * One thing is renamed in the copy it reads: SCIM's group member has an attribute named `$ref` (RFC 7643 §4.2), so
 * the document has a property of that name and examples with that member. Neither is a reference, but the validator
 * takes any `$ref` member for one, as many OpenAPI tools do; every other `$ref` (all of them `#/…`) is resolved.
 */
import { describe, expect, it } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import { isJsonObject, type Json, savedDocument } from "./support/SavedDocument.js"

/** `value` with each `$ref` member that is no reference (`#/…`) renamed `x-scim-ref`, and where they were. */
const withScimRefsRenamed = (value: Json, at: string, renamed: Array<string>): Json => {
  if (Array.isArray(value)) return value.map((item, index) => withScimRefsRenamed(item, `${at}/${index}`, renamed))
  if (!isJsonObject(value)) return value
  return Object.fromEntries(Object.entries(value).map(([key, member]) => {
    const reference = key === "$ref" && typeof member === "string" && member.startsWith("#/")
    if (key === "$ref" && !reference) renamed.push(at)
    return [key === "$ref" && !reference ? "x-scim-ref" : key, withScimRefsRenamed(member, `${at}/${key}`, renamed)]
  }))
}

describe("the saved OpenAPI document", () => {
  it("is valid OpenAPI 3.1, its references resolved", async () => {
    const renamed: Array<string> = []
    const document = withScimRefsRenamed(savedDocument, "", renamed)
    // Only SCIM group members' attribute was renamed.
    expect(renamed.length).toBeGreaterThan(0)
    expect(renamed.filter((at) => !/\/members\/(?:0|items\/properties)$/.test(at))).toEqual([])
    if (!isJsonObject(document)) throw new Error("the saved document is no object")
    const validator = new Validator()
    const result = await validator.validate({ ...document })
    expect(result.errors ?? [], "what the validator found").toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe("3.1")
  })

  it("would be refused if it were not (the validator reads what it is given)", async () => {
    const { info: _, ...withoutInfo } = savedDocument
    expect((await new Validator().validate(withoutInfo)).valid).toBe(false)
    const dangling = { ...savedDocument, paths: { "/x": { get: { responses: { "200": { $ref: "#/components/responses/Nothing" } } } } } }
    expect((await new Validator().validate(dangling)).valid).toBe(false)
  })
})

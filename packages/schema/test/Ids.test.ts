/**
 * Ids.ts, the TypeIDs (`tem_…`): what the saved document says of each, their examples taken, another kind of id
 * refused with a message naming both kinds.
 */
import { describe, expect, it } from "@effect/vitest"
import { Exit, Schema } from "effect"
import { checkTypeId, exampleId, IdsByPrefix, type Prefix, TeamId } from "../src/Ids.js"
import { savedDocument } from "./support/SavedDocument.js"

/** Every schema object in the document whose `pattern` is a TypeID's, by prefix (ids are inlined there). */
const idSchemasInDocument = () => {
  const found = new Map<string, Array<unknown>>()
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk)
    if (typeof node !== "object" || node === null) return
    const pattern = (node as { pattern?: unknown }).pattern
    const prefix = typeof pattern === "string" ? /^\^([a-z]+)_\[0-7\]/.exec(pattern)?.[1] : undefined
    if (prefix !== undefined) found.set(prefix, [...(found.get(prefix) ?? []), node])
    Object.values(node).forEach(walk)
  }
  walk(savedDocument)
  return found
}

/** The JSON Schema an id's check gives (its own fragment, as the document inlines it), without the description. */
const fragmentOf = (schema: Schema.Top) => {
  const { definitions } = Schema.toJsonSchemaDocument(schema)
  const [definition] = Object.values(definitions)
  const [fragment] = (definition as { allOf: ReadonlyArray<Record<string, unknown>> }).allOf
  const { description: _, ...rest } = fragment!
  return rest
}

describe("Ids", () => {
  it("are what the saved document says of each id it inlines", () => {
    const inDocument = idSchemasInDocument()
    // The document names most prefixes; each occurrence is the same inline schema as the id's.
    expect(inDocument.size).toBeGreaterThan(30)
    expect(inDocument.get("tem")).toContainEqual(fragmentOf(TeamId))
    for (const [prefix, schemas] of inDocument) {
      expect(prefix in IdsByPrefix, prefix).toBe(true)
      const own = fragmentOf(IdsByPrefix[prefix as Prefix])
      // A field may describe its id ("Only teams this member belongs to.") or leave out its example: what each
      // occurrence says of the id itself is the id's.
      for (const { description: _, ...schema } of schemas as Array<Record<string, unknown>>) expect(own, prefix).toMatchObject(schema)
    }
  })

  it("decode their own examples and refuse other ids with the message naming both kinds", () => {
    for (const prefix of Object.keys(IdsByPrefix) as Array<Prefix>) {
      expect(Exit.isSuccess(Schema.decodeUnknownExit(IdsByPrefix[prefix])(exampleId(prefix, 2))), prefix).toBe(true)
    }
    const member = exampleId("om")
    const refused = Schema.decodeUnknownExit(TeamId)(member)
    expect(Exit.isFailure(refused)).toBe(true)
    expect(String(refused)).toContain("TypeID must start with 'tem_' (team id); 'om_…' is an organization membership id")
    expect(checkTypeId("tem", "tem_short")).toBe("TypeID must be 30 characters (tem_<26 char suffix>)")
    expect(checkTypeId("tem", `tem_8${exampleId("tem").slice(5)}`)).toBe("TypeID suffix is not valid base32")
  })
})

/**
 * The patch of effect 4.1.0's `Statement.defaultTransforms` (patches/effect@4.1.0.patch, to be proposed upstream):
 * rows are renamed reading their columns with `Object.keys` where `Object.entries` allocated a pair per column of
 * every row. Held here: the renamed rows are what renaming each row's own entries, in order, gives (nested objects
 * and arrays of objects renamed too when `nested`), `__proto__` columns included.
 */
import * as Statement from "effect/sql/Statement"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"

const rename = (name: string) => `${name}_`

/** What a row's renaming meant before the patch: each own entry, in order, its value renamed when nested. */
const expectedRow = (row: object, nested: boolean): unknown => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(row)) {
    Object.defineProperty(out, rename(key), { value: nested ? expectedValue(value) : value, enumerable: true, writable: true, configurable: true })
  }
  return out
}

/** An array of rows as the nested renaming walks it: rows renamed, arrays walked, anything else kept. */
const expectedRows = (rows: ReadonlyArray<unknown>): unknown =>
  rows.map((item) => Array.isArray(item) ? expectedRows(item) : typeof item === "object" && item !== null ? expectedRow(item, true) : item)

const expectedValue = (value: unknown): unknown => {
  if (Array.isArray(value)) {
    return value.length === 0 || value[0]?.constructor !== Object ? value : expectedRows(value)
  }
  return typeof value === "object" && value !== null && value.constructor === Object ? expectedRow(value, true) : value
}

const column = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("__proto__", "constructor", "created_at"))
const row = fc.dictionary(column, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 8 }).map((entries) => {
  // As the driver builds a row: own, enumerable properties, `__proto__` as a column like any other.
  const built: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(entries)) {
    Object.defineProperty(built, key, { value, enumerable: true, writable: true, configurable: true })
  }
  return built
})

describe("Statement.defaultTransforms (patched)", () => {
  it("renames every column of every row as renaming its own entries did, nested or not", () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 5 }), fc.boolean(), (rows, nested) => {
        const renamed = Statement.defaultTransforms(rename, nested).array(rows)
        const expected = rows.map((each) => expectedRow(each, nested))
        expect(renamed.map((each) => Object.entries(each))).toEqual(expected.map((each) => Object.entries(each as object)))
      })
    )
  })
})

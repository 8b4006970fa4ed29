/**
 * A string member trimmed on decoding, with a check and the JSON Schema keywords of what remains: the shape of every
 * trimmed request string (text, URLs, email addresses).
 *
 * Effect 4 writes the JSON Schema of the wire side, so a check after `Schema.Trim` (on the decoded side) would not be
 * in the document, and Effect 4 has no `jsonSchema` override. The check runs on the wire text, trimmed, carrying the
 * keywords (`toJsonSchema`), and again on the decoded side, so that a constructor and `Schema.is` refuse what
 * decoding refuses.
 */
import type * as JsonSchema from "effect/JsonSchema"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"

/** What is wrong with a trimmed text, if anything (undefined: nothing). */
export type TextProblem = (text: string) => string | undefined

/** The document's length bounds as bounds for values generated from the schema (`effect/Arbitrary`). */
const lengthsOf = (jsonSchema: JsonSchema.JsonSchema) => ({
  minLength: typeof jsonSchema["minLength"] === "number" ? jsonSchema["minLength"] : undefined,
  maxLength: typeof jsonSchema["maxLength"] === "number" ? jsonSchema["maxLength"] : undefined
})

/**
 * `generated`: a regular expression the values generated from the schema match (`effect/Arbitrary`), for a check that
 * random text of the right length almost never passes (an email address, a URL); without it, text of the lengths.
 */
export const trimmedString = (problem: TextProblem, jsonSchema: JsonSchema.JsonSchema, description: string, generated?: string) =>
  Schema.String.check(
    Schema.makeFilter((raw: string) => problem(raw.trim()) ?? true, { toJsonSchema: () => jsonSchema })
  ).annotate({ description }).pipe(
    Schema.decodeTo(
      Schema.Trimmed.check(Schema.makeFilter((text: string) => problem(text) ?? true, {
        arbitraryConstraint: generated === undefined ? lengthsOf(jsonSchema) : { patterns: [{ source: generated, flags: "" }] }
      })),
      SchemaTransformation.trim()
    )
  )

/**
 * The JSON Schema the document publishes for a schema, whole (without the description and examples annotated beside
 * it), which Effect 4 has no annotation for. The schema's checks still say what it refuses, and its description stays
 * for the CLI's help; OpenApiComponents' `memberDescriptions` writes this JSON Schema in the document where the schema
 * is used.
 */
import type * as JsonSchema from "effect/JsonSchema"
import * as SchemaAST from "effect/SchemaAST"
import type { JsonObject } from "./json.js"

const key = "orgplane/publishedJsonSchema"

/** The annotation: `schema.annotate(publishedAs({ type: "object", ... }))`. */
export const publishedAs = (jsonSchema: JsonSchema.JsonSchema): { readonly [key]: JsonSchema.JsonSchema } => ({ [key]: jsonSchema })

const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/** The JSON Schema `ast` is published as, if it carries one (a copy, to be written into the document). */
export const publishedJsonSchemaOf = (ast: SchemaAST.AST): JsonObject | undefined => {
  const published = SchemaAST.resolveAt<unknown>(key)(ast)
  return isObject(published) ? structuredClone(published) : undefined
}

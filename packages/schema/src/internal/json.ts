/**
 * The OpenAPI document as plain JSON, which the document's steps (Api.ts's transform, OpenApiDocument,
 * OpenApiComponents, OpenApiResponses, OpenApiExamples, the SCIM errors) read member by member and change in place:
 * a member of another JSON type than OpenAPI gives it is skipped.
 */
export type Json = null | boolean | number | string | Array<Json> | JsonObject
export interface JsonObject {
  [key: string]: Json
}

export const isJsonObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `value[key]` when `value` is an object and it is one too. */
export const objectAt = (value: Json | undefined, key: string): JsonObject | undefined => {
  const member = isJsonObject(value) ? value[key] : undefined
  return isJsonObject(member) ? member : undefined
}

/** `value[key]` when `value` is an object and it is an array. */
export const arrayAt = (value: Json | undefined, key: string): Array<Json> | undefined => {
  const member = isJsonObject(value) ? value[key] : undefined
  return Array.isArray(member) ? member : undefined
}

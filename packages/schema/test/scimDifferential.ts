/** What the SCIM modules' differential tests share (ScimProtocol.test.ts, ScimProtocolApi.test.ts). */
import type { Json } from "./differential.js"

type JsonObject = { readonly [key: string]: Json }
const isObject = (value: Json | undefined): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A real difference, for the OpenAPI normalisation step: Effect 3 described a bounded array by its check ("an array
 * of at most 100 item(s)"); Effect 4 generates no description. Written here where Effect 3 wrote it.
 */
export const describedBounds = (schema: Json): Json => {
  if (Array.isArray(schema)) return schema.map(describedBounds)
  if (!isObject(schema)) return schema
  const out = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, describedBounds(value)]))
  const maxItems = schema["maxItems"]
  return schema["type"] === "array" && typeof maxItems === "number" && schema["description"] === undefined
    ? { ...out, description: `an array of at most ${maxItems} item(s)` }
    : out
}

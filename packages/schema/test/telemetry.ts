/**
 * What Telemetry's differential tests (the module's and its group's) share: the real differences of its JSON Schema,
 * read back as Effect 3 wrote them.
 */
import { expect } from "@effect/vitest"
import { NO_NUL_PATTERN } from "../src/Common.js"
import { maxTelemetryDimensions, maxTelemetryEvents } from "../src/Telemetry.js"
import { type Json } from "./differential.js"

type JsonObject = { readonly [key: string]: Json }
const isObject = (value: Json | undefined): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/** `schema` with its member at `path` (which it must have) changed by `change`. */
export const changedAt = (schema: Json, path: ReadonlyArray<string>, change: (member: JsonObject) => Json): Json => {
  const [key, ...rest] = path
  expect(isObject(schema), path.join(".")).toBe(true)
  if (!isObject(schema)) return schema
  if (key === undefined) return change(schema)
  expect(schema, key).toHaveProperty([key])
  return { ...schema, [key]: changedAt(schema[key] ?? null, rest, change) }
}

/**
 * Two real differences, for the OpenAPI normalisation step, in an event: Effect 3 described a checked array by its
 * last check (`dimensions`: "an array of at most 8 item(s)"), where Effect 4 generates no description; and Effect 3's
 * override of `durationMs` left its description out, where Effect 4 keeps it. Read here as Effect 3 wrote them.
 */
export const eventAsDocumented = (event: Json): Json =>
  changedAt(
    changedAt(event, ["properties", "dimensions"], (dimensions) => ({ ...dimensions, description: `an array of at most ${maxTelemetryDimensions} item(s)` })),
    ["properties", "durationMs"],
    ({ description, ...durationMs }) => {
      expect(description).toBe("How long it took, in milliseconds (0 to one day).")
      return durationMs
    }
  )

/**
 * A real difference, for the OpenAPI normalisation step, of the same meaning: an object open to other members has no
 * `additionalProperties` in Effect 4 (a struct with a rest of any other members, whose names Effect 4 writes as a
 * `propertyNames` any name passes; a record of any value), `additionalProperties: true` in Effect 3's overrides. Read
 * here as Effect 3 wrote it.
 */
export const openObjectsAsDocumented = (schema: Json): Json => {
  if (Array.isArray(schema)) return schema.map(openObjectsAsDocumented)
  if (!isObject(schema)) return schema
  const out: Record<string, Json> = {}
  for (const [key, value] of Object.entries(schema)) {
    const names = isObject(value) ? value["anyOf"] : undefined
    const anyName = key === "propertyNames" && Array.isArray(names) && names.some((name) => JSON.stringify(name) === JSON.stringify({ type: "string" }))
    if (!anyName) out[key] = openObjectsAsDocumented(value)
  }
  const open = schema["additionalProperties"] === undefined || JSON.stringify(schema["additionalProperties"]) === "{}"
  if (schema["type"] === "object" && open) out["additionalProperties"] = true
  return out
}

/**
 * An event's strings without the NUL pattern, which the port states and the document's step adds to request strings:
 * for a comparison with Effect 3's own JSON Schema (no step), where it is not.
 */
export const withoutNulPatterns = (event: Json): Json =>
  ["type", "source", "sessionId"].reduce(
    (schema, member) =>
      changedAt(schema, ["properties", member], ({ pattern, ...rest }) => {
        expect(pattern).toBe(NO_NUL_PATTERN)
        return rest
      }),
    event
  )

/** A batch: the differences of an event in its events, and "an array of at most 50 item(s)" for `events`. */
export const batchAsDocumented = (schema: Json): Json =>
  changedAt(
    changedAt(openObjectsAsDocumented(schema), ["properties", "events", "items"], eventAsDocumented),
    ["properties", "events"],
    (events) => ({ ...events, description: `an array of at most ${maxTelemetryEvents} item(s)` })
  )

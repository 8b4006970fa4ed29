import { describe, expect, it } from "@effect/vitest"
import { Exit, Schema } from "effect"
import * as OpenApiExamples3 from "../../../packages/schema/src/OpenApiExamples.js"
import * as Telemetry3 from "../../../packages/schema/src/Telemetry.js"
import { NO_NUL_PATTERN, requestBody } from "../src/Common.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as Telemetry from "../src/Telemetry.js"
import { decode4, examplesOfComponent, type Json, roundTrips, sameOn, sameSchemas, splitKey } from "./differential.js"

type JsonObject = { readonly [key: string]: Json }
const isObject = (value: Json | undefined): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/** `schema` with its member at `path` (which it must have) changed by `change`. */
const changedAt = (schema: Json, path: ReadonlyArray<string>, change: (member: JsonObject) => Json): Json => {
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
const eventAsDocumented = (event: Json): Json =>
  changedAt(
    changedAt(event, ["properties", "dimensions"], (dimensions) => ({ ...dimensions, description: `an array of at most ${Telemetry.maxTelemetryDimensions} item(s)` })),
    ["properties", "durationMs"],
    ({ description, ...durationMs }) => {
      expect(description).toBe("How long it took, in milliseconds (0 to one day).")
      return durationMs
    }
  )

/**
 * A real difference, for the OpenAPI normalisation step, of the same meaning: an object open to other members is
 * `additionalProperties: {}` in Effect 4 (a struct with a rest of any members) or no keyword at all (a record of any
 * value), `additionalProperties: true` in Effect 3's overrides. Read here as Effect 3 wrote it.
 */
const openObjectsAsDocumented = (schema: Json): Json => {
  if (Array.isArray(schema)) return schema.map(openObjectsAsDocumented)
  if (!isObject(schema)) return schema
  const out: Record<string, Json> = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, openObjectsAsDocumented(value)]))
  const open = JSON.stringify(schema["additionalProperties"]) === "{}" || (!("additionalProperties" in schema) && !("properties" in schema))
  if (schema["type"] === "object" && open) out["additionalProperties"] = true
  return out
}

describe("Telemetry on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(Telemetry, Telemetry3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      DimensionMetadata: openObjectsAsDocumented,
      TelemetryDimension: openObjectsAsDocumented,
      // Not a component: held to Effect 3's own JSON Schema, whose strings lack the NUL pattern the document's step
      // adds to request strings (as the document's IngestTelemetryRequest, held to the port below, has it); the port
      // states it itself. Left out here.
      TelemetryEvent: (schema) =>
        ["type", "source", "sessionId"].reduce(
          (event, member) =>
            changedAt(event, ["properties", member], ({ pattern, ...rest }) => {
              expect(pattern).toBe(NO_NUL_PATTERN)
              return rest
            }),
          eventAsDocumented(openObjectsAsDocumented(schema))
        ),
      // The document's component: the differences of an event in its events, and "an array of at most 50 item(s)"
      // for `events`.
      IngestTelemetryRequest: (schema) =>
        changedAt(
          changedAt(openObjectsAsDocumented(schema), ["properties", "events", "items"], eventAsDocumented),
          ["properties", "events"],
          (events) => ({ ...events, description: `an array of at most ${Telemetry.maxTelemetryEvents} item(s)` })
        )
    })
    expect(names.length).toBeGreaterThan(5)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Telemetry.IngestTelemetryRequest, Telemetry3.IngestTelemetryRequest, examplesOfComponent("IngestTelemetryRequest"))
    const [batch] = examplesOfComponent("IngestTelemetryRequest")
    const events = splitKey(batch ?? null, "events").value
    roundTrips(Telemetry.TelemetryEvent, Telemetry3.TelemetryEvent, Array.isArray(events) ? events : [])
  })

  it("takes, drops and refuses what the Effect 3 schemas do", () => {
    const at = "2026-11-02T09:30:00Z"
    const event = { type: "task.completed", timestamp: at }
    sameOn(Telemetry.TelemetryDimension, Telemetry3.TelemetryDimension, [
      { type: "project", label: "Billing service" },
      { type: "Project.Name", label: "  Billing  ", value: "billing-service", metadata: { team: "payments" }, extra: 1 },
      // The Kelvin sign lower-cases to an ASCII k: both check the type once lower-cased.
      { type: "\u212A", label: "Kelvin" },
      { type: "", label: "x" },
      { type: "1project", label: "x" },
      { type: "p".repeat(65), label: "x" },
      { type: "project", label: "" },
      { type: "project", label: "x", value: "-x" },
      { type: "project", label: "x", value: "v".repeat(129) },
      { type: "project", label: "x", value: null },
      { type: "project", label: "x", metadata: { blob: "x".repeat(4096) } },
      { type: "project", label: "x", metadata: [] }
    ])
    sameOn(Telemetry.TelemetryEvent, Telemetry3.TelemetryEvent, [
      event,
      { ...event, source: "", sessionId: "s-1", durationMs: 0, success: false, dimensions: [], unknown: { nested: true } },
      { ...event, type: "anything.else", source: "desktop", durationMs: Telemetry.maxTelemetryDurationMs },
      { ...event, dimensions: [{ type: "model", label: "gpt", other: "dropped" }] },
      { ...event, type: "" },
      { ...event, type: "t".repeat(65) },
      { ...event, type: "task\u0000" },
      { ...event, timestamp: "2026-11-02" },
      { type: "task.completed" },
      { ...event, source: "s".repeat(33) },
      { ...event, sessionId: null },
      { ...event, durationMs: -1 },
      { ...event, durationMs: Telemetry.maxTelemetryDurationMs + 1 },
      { ...event, durationMs: 1.5 },
      { ...event, success: "yes" },
      { ...event, dimensions: Array.from({ length: 9 }, () => ({ type: "project", label: "x" })) }
    ])
    sameOn(Telemetry.IngestTelemetryRequest, Telemetry3.IngestTelemetryRequest, [
      { events: [event] },
      { events: Array.from({ length: Telemetry.maxTelemetryEvents }, () => event), client: "desktop/1.2" },
      { events: [] },
      { events: Array.from({ length: Telemetry.maxTelemetryEvents + 1 }, () => event) },
      {}
    ])
    // Forgiving whatever the API's parse options: with its request bodies' (unknown members refused), members an
    // event does not define are still dropped, at every level.
    const strict = Schema.decodeUnknownExit(Telemetry.IngestTelemetryRequest, requestBody)({
      events: [{ ...event, unknown: 1, dimensions: [{ type: "Project", label: "x", other: 2 }] }],
      client: "desktop"
    })
    expect(Exit.isSuccess(strict) ? Schema.encodeSync(Telemetry.IngestTelemetryRequest)(strict.value) : strict).toEqual({
      events: [{ type: "task.completed", timestamp: "2026-11-02T09:30:00.000Z", dimensions: [{ type: "project", label: "x" }] }]
    })
    expect(decode4(Telemetry.IngestTelemetryRequest, { events: [{ ...event, durationMs: -1 }] })).toMatchObject({ ok: false })
    expect([Telemetry.TelemetryEventTypes, Telemetry.TelemetrySources, Telemetry.maxDimensionMetadataBytes])
      .toEqual([Telemetry3.TelemetryEventTypes, Telemetry3.TelemetrySources, Telemetry3.maxDimensionMetadataBytes])
  })
})

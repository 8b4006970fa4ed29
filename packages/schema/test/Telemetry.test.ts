import { describe, expect, it } from "@effect/vitest"
import { Exit, Schema } from "effect"
import { requestBody } from "../src/Common.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as Telemetry from "../src/Telemetry.js"
import { decode4, examplesOfComponent, roundTrips, sameOn, sameSchemas, splitKey } from "./differential.js"
import { batchAsDocumented, eventAsDocumented, openObjectsAsDocumented, withoutNulPatterns } from "./telemetry.js"
import { effect3 } from "./effect3.js"

const OpenApiExamples3 = effect3("OpenApiExamples")
const Telemetry3 = effect3("Telemetry")

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
      TelemetryEvent: (schema) => withoutNulPatterns(eventAsDocumented(openObjectsAsDocumented(schema))),
      // The document's component: the differences of an event in its events, and "an array of at most 50 item(s)"
      // for `events`.
      IngestTelemetryRequest: batchAsDocumented
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
    // Forgiving whatever the API's parse options: through the JSON codec an HttpApi body goes through, with its
    // request bodies' options (unknown members refused), members an event does not define are still dropped, at every
    // level; and a batch encodes back (a client sends Dates).
    const json = Schema.toCodecJson(Telemetry.IngestTelemetryRequest)
    const strict = Schema.decodeUnknownExit(json, requestBody)({
      events: [{ ...event, unknown: 1, dimensions: [{ type: "Project", label: "x", other: 2 }] }],
      client: "desktop"
    })
    expect(Exit.isSuccess(strict) ? Schema.encodeSync(json)(strict.value) : strict).toEqual({
      events: [{ type: "task.completed", timestamp: "2026-11-02T09:30:00.000Z", dimensions: [{ type: "project", label: "x" }] }]
    })
    expect(decode4(Telemetry.IngestTelemetryRequest, { events: [{ ...event, durationMs: -1 }] })).toMatchObject({ ok: false })
    expect([Telemetry.TelemetryEventTypes, Telemetry.TelemetrySources, Telemetry.maxDimensionMetadataBytes])
      .toEqual([Telemetry3.TelemetryEventTypes, Telemetry3.TelemetrySources, Telemetry3.maxDimensionMetadataBytes])
  })
})

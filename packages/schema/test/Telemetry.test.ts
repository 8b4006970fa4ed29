/**
 * Telemetry.ts: the document's examples of telemetry decode and encode back unchanged, a batch of events taken,
 * trimmed of what an event does not define, or refused, and the event types and sources.
 */
import { describe, expect, it } from "@effect/vitest"
import { Exit, Schema } from "effect"
import { requestBody } from "../src/Common.js"
import * as Telemetry from "../src/Telemetry.js"
import { examplesOfComponent, splitKey } from "./support/SavedDocument.js"
import { decode, refuses, roundTrips, takes } from "./support/Decoding.js"

describe("Telemetry", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Telemetry.IngestTelemetryRequest, examplesOfComponent("IngestTelemetryRequest"))
    const [batch] = examplesOfComponent("IngestTelemetryRequest")
    const events = splitKey(batch ?? null, "events").value
    roundTrips(Telemetry.TelemetryEvent, Array.isArray(events) ? events : [])
  })

  it("takes, drops and refuses what a batch of events holds", () => {
    const at = "2026-11-02T09:30:00Z"
    const event = { type: "task.completed", timestamp: at }
    takes(Telemetry.TelemetryDimension, [
      { type: "project", label: "Billing service" },
      { type: "Project.Name", label: "  Billing  ", value: "billing-service", metadata: { team: "payments" }, extra: 1 },
      // The Kelvin sign lower-cases to an ASCII k: both check the type once lower-cased.
      { type: "\u212A", label: "Kelvin" }
    ])
    refuses(Telemetry.TelemetryDimension, [
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
    takes(Telemetry.TelemetryEvent, [
      event,
      { ...event, source: "", sessionId: "s-1", durationMs: 0, success: false, dimensions: [], unknown: { nested: true } },
      { ...event, type: "anything.else", source: "desktop", durationMs: Telemetry.maxTelemetryDurationMs },
      { ...event, dimensions: [{ type: "model", label: "gpt", other: "dropped" }] }
    ])
    refuses(Telemetry.TelemetryEvent, [
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
    takes(Telemetry.IngestTelemetryRequest, [
      { events: [event] },
      { events: Array.from({ length: Telemetry.maxTelemetryEvents }, () => event), client: "desktop/1.2" }
    ])
    refuses(Telemetry.IngestTelemetryRequest, [
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
    expect(decode(Telemetry.IngestTelemetryRequest, { events: [{ ...event, durationMs: -1 }] })).toMatchObject({ ok: false })
    expect([Telemetry.TelemetryEventTypes, Telemetry.TelemetrySources, Telemetry.maxDimensionMetadataBytes])
      .toEqual([["user.active", "session.active", "session.started", "session.ended", "task.started", "task.completed", "task.failed"], ["app", "worker"], 4096])
  })
})

/**
 * Telemetry: batches of events from the desktop app and workers. Collection is forgiving by design (the app never
 * breaks over telemetry): members an event does not define are dropped, not refused; only a malformed batch is 400.
 */
import * as Schema from "effect/Schema"
import { allErrors, Timestamp, TrimmedText } from "./Common.js"
import { exampleTime } from "./Examples.js"

/** The event types stored; any other type is accepted and dropped. */
export const TelemetryEventTypes = [
  "user.active",
  "session.active",
  "session.started",
  "session.ended",
  "task.started",
  "task.completed",
  "task.failed"
] as const
export type TelemetryEventType = typeof TelemetryEventTypes[number]

/** Sources stored as such; any other source is stored as none (events) or `unknown` (dimensions). */
export const TelemetrySources = ["app", "worker"] as const
export type TelemetrySource = typeof TelemetrySources[number]

/** Most events one request may carry. */
export const maxTelemetryEvents = 50
/** Most dimensions one event may carry. */
export const maxTelemetryDimensions = 8
/** Largest dimension metadata, as JSON, in bytes. */
export const maxDimensionMetadataBytes = 4096
/** Longest duration an event may report: one day. */
export const maxTelemetryDurationMs = 86_400_000

const bounded = (max: number, description: string, min = 0) =>
  Schema.String.pipe(
    Schema.filter((text) => !text.includes("\u0000") || "must not contain the NUL character (U+0000)"),
    Schema.minLength(min, { message: () => `must be ${min} to ${max} characters long` }),
    Schema.maxLength(max, { message: () => `must be ${min} to ${max} characters long` })
  ).annotations({ description, jsonSchema: { type: "string", minLength: min, maxLength: max, description } })

const utf8 = new TextEncoder()

const DIMENSION_TYPE = /^[a-z][a-z0-9_.-]*$/
const DIMENSION_VALUE = /^[a-zA-Z0-9][a-zA-Z0-9_.:-]{0,127}$/

/** A dimension's type: lower-cased first, then a letter followed by letters, digits, `_`, `.` or `-`; at most 64. */
export const DimensionType = Schema.String.pipe(
  Schema.maxLength(64, { message: () => "must be at most 64 characters long" }),
  Schema.compose(Schema.Lowercase),
  Schema.filter((type) =>
    DIMENSION_TYPE.test(type) || "must start with a letter and hold only letters, digits, `_`, `.` and `-`"
  )
).annotations({
  jsonSchema: {
    type: "string",
    minLength: 1,
    maxLength: 64,
    pattern: "^[A-Za-z][A-Za-z0-9_.-]*$",
    description: "What the dimension is (any type: there is no fixed list), stored lower-case."
  }
})

export const DimensionValue = Schema.String.pipe(
  Schema.pattern(DIMENSION_VALUE, {
    message: () => "must be 1 to 128 letters, digits, `_`, `.`, `:` or `-`, starting with a letter or digit"
  })
).annotations({
  jsonSchema: {
    type: "string",
    minLength: 1,
    maxLength: 128,
    pattern: DIMENSION_VALUE.source,
    description:
      "A stable machine value. Left out: the session's previous value of this type is kept, else one is derived from the label (a slug and a hash)."
  }
})

export const DimensionMetadata = Schema.Record({ key: Schema.String, value: Schema.Unknown }).pipe(
  Schema.filter((metadata) =>
    utf8.encode(JSON.stringify(metadata)).length <= maxDimensionMetadataBytes ||
    `must be at most ${maxDimensionMetadataBytes} bytes as JSON`
  )
).annotations({
  jsonSchema: {
    type: "object",
    additionalProperties: true,
    description: `Free-form JSON object, at most ${maxDimensionMetadataBytes} bytes as JSON.`
  }
})

/** Something the session is about (a project, a model, a workspace): stored per session and type, latest wins. */
export const TelemetryDimension = Schema.Struct({
  type: DimensionType,
  label: TrimmedText(1, 255, "What people read"),
  value: Schema.optional(DimensionValue),
  metadata: Schema.optional(DimensionMetadata)
}).annotations({
  ...allErrors,
  jsonSchema: { additionalProperties: true },
  description: "A session dimension. Other members are dropped."
})
export type TelemetryDimension = typeof TelemetryDimension.Type

/** One event. Members not listed here are accepted and dropped (never stored). */
export const TelemetryEvent = Schema.Struct({
  type: bounded(64, "The event type: `user.active`, `session.active`, `session.started`, `session.ended`, `task.started`, `task.completed` or `task.failed` are stored; other types are accepted and dropped.", 1),
  timestamp: Timestamp.annotations({ description: "When it happened." }),
  source: Schema.optional(bounded(32, "`app` or `worker`; any other value is stored as none.")),
  sessionId: Schema.optional(bounded(128, "An opaque session id (never user content); dimensions are stored only with one.")),
  durationMs: Schema.optional(
    Schema.Int.pipe(Schema.between(0, maxTelemetryDurationMs)).annotations({
      description: "How long it took, in milliseconds (0 to one day).",
      jsonSchema: { type: "integer", minimum: 0, maximum: maxTelemetryDurationMs }
    })
  ),
  success: Schema.optional(Schema.Boolean),
  dimensions: Schema.optional(
    Schema.Array(TelemetryDimension).pipe(Schema.maxItems(maxTelemetryDimensions))
  )
}).annotations({
  ...allErrors,
  jsonSchema: { additionalProperties: true },
  description: "A telemetry event. Members not listed are accepted and dropped."
})
export type TelemetryEvent = typeof TelemetryEvent.Type

export const IngestTelemetryRequest = Schema.Struct({
  events: Schema.Array(TelemetryEvent).pipe(Schema.minItems(1), Schema.maxItems(maxTelemetryEvents))
}).annotations({
  ...allErrors,
  identifier: "IngestTelemetryRequest",
  jsonSchema: { additionalProperties: true },
  examples: [{
    events: [
      { type: "session.started", timestamp: exampleTime(100), source: "app", sessionId: "s-7f3a9c" },
      {
        type: "task.completed",
        timestamp: exampleTime(112),
        source: "app",
        sessionId: "s-7f3a9c",
        durationMs: 41_250,
        success: true,
        dimensions: [{ type: "project", label: "Billing service", value: "billing-service" }]
      }
    ]
  }]
})
export type IngestTelemetryRequest = typeof IngestTelemetryRequest.Type

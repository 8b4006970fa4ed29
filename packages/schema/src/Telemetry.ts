/**
 * Telemetry: batches of events from the desktop app and workers. Collection is forgiving by design (the app never
 * breaks over telemetry): members an event does not define are dropped, not refused; only a malformed batch is 400.
 */
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaParser from "effect/SchemaParser"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { NO_NUL_PATTERN, Timestamp, TrimmedText } from "./Common.js"
import { exampleTime } from "./Examples.js"
import { publishedAs } from "./internal/published.js"

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

/**
 * A struct that takes members it does not define and drops them, whatever parse options decode it: Effect 4 reads
 * parse options from the API alone (T1), whose request bodies refuse unknown members. On the wire it is the struct
 * with a rest of any other members (so the document says `additionalProperties`); decoded, the struct without them.
 * Effect 4 applies a record rest to the declared members too, so the rest's keys leave them out (else the JSON codec
 * an HttpApi body goes through would check a member's decoded value, a Date, as JSON); the key check says nothing
 * to JSON Schema (`[{}, true]`), as Errors.ts's exact bodies do.
 */
const forgiving = <const Fields extends Schema.Struct.Fields>(fields: Fields, description?: string) => {
  const struct = Schema.Struct(fields)
  const members = Schema.toType(struct)
  const declared = Object.keys(fields)
  const otherName = Schema.String.check(Schema.makeFilter((name: string) => !declared.includes(name), { toJsonSchema: () => [{}, true] }))
  const wire = Schema.StructWithRest(struct, [Schema.Record(otherName, Schema.Unknown)])
  return (description === undefined ? wire : wire.annotate({ description })).pipe(
    Schema.decodeTo(members, {
      decode: SchemaGetter.transformEffect((value) => SchemaParser.decodeUnknownEffect(members)(value, { onExcessProperty: "ignore" })),
      // A struct of its members is one with no other members: what the wire side takes as it is.
      encode: SchemaGetter.passthrough({ strict: false })
    })
  )
}

const bounded = (max: number, description: string, min = 0) => {
  const message = `must be ${min} to ${max} characters long`
  return Schema.String.check(
    // The request guard refuses NUL in every request string; the document says so here (its pattern).
    Schema.makeFilter((text: string) => !text.includes("\u0000") || "must not contain the NUL character (U+0000)", {
      toJsonSchema: () => ({ pattern: NO_NUL_PATTERN })
    }),
    Schema.isMinLength(min, { message }),
    Schema.isMaxLength(max, { message })
  ).annotate({ description })
}

const utf8 = new TextEncoder()

const DIMENSION_TYPE = /^[a-z][a-z0-9_.-]*$/
const DIMENSION_VALUE = /^[a-zA-Z0-9][a-zA-Z0-9_.:-]{0,127}$/

const dimensionTypeMessage = "must start with a letter and hold only letters, digits, `_`, `.` and `-`"

/** A dimension's type: lower-cased first, then a letter followed by letters, digits, `_`, `.` or `-`; at most 64. */
export const DimensionType = Schema.String.check(
  Schema.isMaxLength(64, { message: "must be at most 64 characters long" }),
  // Checked once lower-cased (it is stored so); the document states it of the text sent.
  Schema.makeFilter((type: string) => DIMENSION_TYPE.test(type.toLowerCase()) || dimensionTypeMessage, {
    toJsonSchema: () => ({ minLength: 1, pattern: "^[A-Za-z][A-Za-z0-9_.-]*$" })
  })
).annotate({ description: "What the dimension is (any type: there is no fixed list), stored lower-case." }).pipe(
  Schema.decodeTo(
    Schema.String.check(Schema.makeFilter((type: string) => DIMENSION_TYPE.test(type) || dimensionTypeMessage)),
    SchemaTransformation.toLowerCase()
  )
)

export const DimensionValue = Schema.String.check(
  Schema.isPattern(DIMENSION_VALUE, {
    message: "must be 1 to 128 letters, digits, `_`, `.`, `:` or `-`, starting with a letter or digit",
    toJsonSchema: () => ({ minLength: 1, maxLength: 128, pattern: DIMENSION_VALUE.source })
  })
).annotate({
  description:
    "A stable machine value. Left out: the session's previous value of this type is kept, else one is derived from the label (a slug and a hash)."
})

export const DimensionMetadata = Schema.Record(Schema.String, Schema.Unknown).annotate({
  description: `Free-form JSON object, at most ${maxDimensionMetadataBytes} bytes as JSON.`
}).check(
  Schema.makeFilter((metadata) =>
    utf8.encode(JSON.stringify(metadata)).length <= maxDimensionMetadataBytes ||
    `must be at most ${maxDimensionMetadataBytes} bytes as JSON`)
).annotate(publishedAs({
  // Published as this JSON Schema alone.
  type: "object",
  additionalProperties: true,
  description: `Free-form JSON object, at most ${maxDimensionMetadataBytes} bytes as JSON.`
}))

// Members are optional keys, so a `null` member is refused: JSON has no `undefined`, and Effect 4's `Schema.optional`
// would let the JSON codec an HttpApi body goes through read `null` as one.

/** Something the session is about (a project, a model, a workspace): stored per session and type, latest wins. */
export const TelemetryDimension = forgiving({
  type: DimensionType,
  label: TrimmedText(1, 255, "What people read"),
  value: Schema.optionalKey(DimensionValue),
  metadata: Schema.optionalKey(DimensionMetadata)
}, "A session dimension. Other members are dropped.")
export type TelemetryDimension = typeof TelemetryDimension.Type

/** One event. Members not listed here are accepted and dropped (never stored). */
export const TelemetryEvent = forgiving({
  type: bounded(64, "The event type: `user.active`, `session.active`, `session.started`, `session.ended`, `task.started`, `task.completed` or `task.failed` are stored; other types are accepted and dropped.", 1),
  timestamp: Timestamp.annotateKey({ description: "When it happened." }),
  source: Schema.optionalKey(bounded(32, "`app` or `worker`; any other value is stored as none.")),
  sessionId: Schema.optionalKey(bounded(128, "An opaque session id (never user content); dimensions are stored only with one.")),
  durationMs: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: maxTelemetryDurationMs })).annotate({
      description: "How long it took, in milliseconds (0 to one day).",
      // Published as this JSON Schema alone (its description not written in it).
      ...publishedAs({ type: "integer", minimum: 0, maximum: maxTelemetryDurationMs })
    })
  ),
  success: Schema.optionalKey(Schema.Boolean),
  dimensions: Schema.optionalKey(Schema.Array(TelemetryDimension).check(Schema.isMaxLength(maxTelemetryDimensions)))
}, "A telemetry event. Members not listed are accepted and dropped.")
export type TelemetryEvent = typeof TelemetryEvent.Type

export const IngestTelemetryRequest = forgiving({
  events: Schema.Array(TelemetryEvent).check(Schema.isMinLength(1), Schema.isMaxLength(maxTelemetryEvents))
}).annotate({
  identifier: "IngestTelemetryRequest",
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

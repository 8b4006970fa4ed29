/**
 * `orgplane telemetry send`: posts telemetry events from a JSON file (or stdin) for the signed-in member, in batches
 * of the API's size. The file is checked with the API's event schema before anything is sent.
 */
import { maxTelemetryEvents, TelemetryApi, TelemetryEvent } from "@orgplane/schema"
import * as CliError from "effect/cli/CliError"
import * as Flags from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Commands from "../Commands.js"
import * as Files from "../Files.js"
import type * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

/** Large enough for thousands of events; the server takes at most 50 per request anyway. */
const MAX_FILE_BYTES = 64 * 1024 * 1024

const invalidFile = (message: string) => new CliError.ValidationError({ message: `--file: ${message}` })

/** `{events: [...]}` or an array of events, each checked with the API's schema (unknown members are dropped as the API drops them). */
const Events = Schema.Union([
  Schema.Array(TelemetryEvent),
  Schema.Struct({ events: Schema.Array(TelemetryEvent) }).pipe(Schema.decodeTo(Schema.toType(Schema.Array(TelemetryEvent)), {
    decode: SchemaGetter.transform(({ events }: { readonly events: ReadonlyArray<TelemetryEvent> }) => events),
    encode: SchemaGetter.transform((events: ReadonlyArray<TelemetryEvent>) => ({ events }))
  }))
])

/** Where a problem is, as people read it: `events[3].timestamp`. */
const where = (path: ReadonlyArray<PropertyKey>) =>
  path.reduce<string>((text, key) => typeof key === "number" ? `${text}[${key}]` : `${text}${text === "" ? "" : "."}${String(key)}`, "")

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** Reads, parses and checks the events before any is sent. */
export const parseEvents = (text: string) =>
  Effect.gen(function*() {
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (error) {
      return yield* Effect.fail(invalidFile(`is not JSON: ${error instanceof Error ? error.message : String(error)}`))
    }
    const isArray = Array.isArray(parsed)
    const events = yield* Effect.mapError(
      Schema.decodeUnknownEffect(Events)(parsed, { errors: "all" }),
      (error) => {
        const all = formatIssue(error.issue).issues.map((problem) => ({
          message: problem.message,
          path: (problem.path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment)
        }))
        const problems = all.filter((problem) => isArray ? typeof problem.path[0] === "number" : problem.path[0] === "events")
        const shown = (problems.length > 0 ? problems : all).slice(0, 5)
        return invalidFile(
          `expected {"events": [...]} or an array of events: ${
            shown.map((problem) => `${where(isArray ? ["events", ...problem.path] : problem.path)}: ${problem.message}`).join("; ")
          }`
        )
      }
    )
    if (events.length === 0) return yield* Effect.fail(invalidFile("holds no events"))
    return events
  })

const eventsFile: Inputs.Flag<ReadonlyArray<TelemetryEvent>> = {
  parser: Flags.String("file").pipe(
    Flags.mapEffect((path) => Effect.flatMap(Effect.mapError(Files.readFileOrStdin(path, MAX_FILE_BYTES, "64 MiB"), invalidFile), parseEvents))
  ),
  doc: {
    kind: "flag",
    name: "file",
    placeholder: "<path>",
    description: 'A JSON file of events, {"events": [...]} or an array (`-` for standard input).',
    optional: false,
    repeated: false
  }
}

const Sent = Schema.Struct({ sent: Schema.Number, batches: Schema.Number })

const plural = (count: number, noun: string, nouns = `${noun}s`) => `${count} ${count === 1 ? noun : nouns}`

export const send = Commands.leaf("send", {
  examples: [
    ["Send the events of a JSON file.", ["telemetry", "send", "--file", "events.json"]],
  ],
  summary: `Send telemetry events from a JSON file as the signed-in member, in batches of ${maxTelemetryEvents}.`,
  details: [
    `Every event is checked with the API's schema first (type, an ISO 8601 timestamp with an offset, and the optional source, sessionId, durationMs, success and dimensions); nothing is sent when one is wrong. The server keeps recognized event types within its retention window and drops the rest without error. If a batch fails, the batches before it stay sent: the error says how many events were.`
  ],
  inputs: { events: eventsFile },
  run: (input) =>
    Commands.withClient(input, (client) =>
      Effect.gen(function*() {
        const { events } = input
        let sent = 0
        let batches = 0
        for (let start = 0; start < events.length; start += maxTelemetryEvents) {
          const batch = events.slice(start, start + maxTelemetryEvents)
          yield* client.telemetry.ingest({ payload: { events: batch } }).pipe(
            Effect.tapError(() =>
              sent > 0 ? Output.note(`Sent ${plural(sent, "event")} of ${events.length} before this failure.`) : Effect.void
            )
          )
          sent += batch.length
          batches++
        }
        yield* Output.emit(input.global, Sent, { sent, batches }, () =>
          `Sent ${plural(sent, "event")} in ${plural(batches, "batch", "batches")}.`)
      }))
})

export const telemetry = Commands.group("telemetry", "Send telemetry events (any member).", [send], [TelemetryApi])

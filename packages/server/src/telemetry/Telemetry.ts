/**
 * Telemetry ingest: keeps the recognized events of a batch inside the stored time range, with their sessions'
 * dimensions, for the calling member. Drops quietly what it does not keep (the app must never break over
 * telemetry), but does not hide a database failure: 503, and the app retries.
 */
import {
  type IngestTelemetryRequest,
  type MemberContext,
  type TelemetryDimension,
  type TelemetryEvent,
  TelemetryEventTypes,
  type TelemetrySource,
  TelemetrySources
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createHash } from "node:crypto"
import { ServerConfig } from "../platform/Config.js"
import { makeId } from "../platform/Ids.js"
import { authorize } from "../platform/Principal.js"
import { isSqlError, orUnavailable, pgCode, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { type Month, monthOf, Partitions, startOf } from "./Partitions.js"
import { firstKeptMonth } from "./Retention.js"
import { type DimensionRow, type EventRow, TelemetryRepository } from "./TelemetryRepository.js"

const kept = new Set<string>(TelemetryEventTypes)
const sources = new Set<string>(TelemetrySources)

/** How far ahead of the server's clock an event may be (clocks of laptops drift). */
export const futureToleranceMs = 24 * 60 * 60 * 1000

const sourceOf = (source: string | undefined): TelemetrySource | null =>
  source !== undefined && sources.has(source) ? source as TelemetrySource : null

/**
 * The value of a dimension sent without one: a slug of the label (lower-case, accents stripped, anything else `-`,
 * `dimension` when nothing is left), `-`, and the first 10 hex digits of sha256(`type:lower-cased trimmed label`),
 * at most 128 characters in all.
 */
export const deriveValue = (type: string, label: string): string => {
  const slug = label.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase().replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "") || "dimension"
  const hash = createHash("sha256").update(`${type}:${label.trim().toLowerCase()}`).digest("hex").slice(0, 10)
  return `${slug.slice(0, 128 - 11).replace(/-+$/, "")}-${hash}`
}

/** A partition believed to exist is gone (dropped by another process): create it again and retry once. */
class MissingPartition extends Data.TaggedError("MissingPartition") {}

/** Postgres found no partition for a row (check_violation, "no partition of relation ... found for row"). */
const isMissingPartition = (error: unknown) => isSqlError(error) && pgCode(error) === "23514"

const make = Effect.gen(function*() {
  const repository = yield* TelemetryRepository
  const partitions = yield* Partitions
  const { telemetryRetentionMonths } = yield* ServerConfig

  // At start-up: the retention window and the next month, so ingest rarely needs DDL.
  const startedAt = yield* now
  yield* partitions.refresh
  yield* partitions.ensureRange(firstKeptMonth(startedAt, telemetryRetentionMonths), monthOf(startedAt) + 1)

  /** One row per (source, session, type) of the batch: the last label and metadata, the last value sent. */
  const dimensionRows = Effect.fnUntraced(function*(events: ReadonlyArray<TelemetryEvent>) {
    const merged = new Map<string, { source: TelemetrySource | "unknown"; sessionId: string; dimension: TelemetryDimension; value?: string }>()
    for (const event of events) {
      if (event.sessionId === undefined || event.sessionId === "" || event.dimensions === undefined) continue
      const source = sourceOf(event.source) ?? "unknown"
      for (const dimension of event.dimensions) {
        const key = JSON.stringify([source, event.sessionId, dimension.type])
        const value = dimension.value ?? merged.get(key)?.value
        merged.set(key, { source, sessionId: event.sessionId, dimension, ...(value === undefined ? {} : { value }) })
      }
    }
    const rows: Array<DimensionRow> = []
    for (const { dimension, sessionId, source, value } of merged.values()) {
      rows.push({
        id: yield* makeId("tsd"),
        source,
        session_id: sessionId,
        dimension_type: dimension.type,
        derived: deriveValue(dimension.type, dimension.label),
        label: dimension.label,
        ...(value === undefined ? {} : { value }),
        ...(dimension.metadata === undefined ? {} : { metadata: dimension.metadata })
      })
    }
    return rows
  })

  const ingest = Effect.fn("Telemetry.ingest")(function*(caller: MemberContext, request: IngestTelemetryRequest) {
    yield* authorize(caller, "telemetry.ingest")
    const receivedAt = yield* now
    const oldest = startOf(firstKeptMonth(receivedAt, telemetryRetentionMonths)).getTime()
    const newest = receivedAt.getTime() + futureToleranceMs
    const events = request.events.filter((event) => {
      const at = event.timestamp.getTime()
      return kept.has(event.type) && at >= oldest && at <= newest
    })
    if (events.length === 0) return

    const rows: Array<EventRow> = []
    for (const event of events) {
      rows.push({
        id: yield* makeId("tev"),
        event_type: event.type,
        occurred_at: event.timestamp.toISOString(),
        source: sourceOf(event.source),
        session_id: event.sessionId === undefined || event.sessionId === "" ? null : event.sessionId,
        duration_ms: event.durationMs ?? null,
        success: event.success ?? null
      })
    }
    const dimensions = yield* dimensionRows(events)
    const months: ReadonlyArray<Month> = [...new Set(events.map((event) => monthOf(event.timestamp)))]
    const batch = {
      organizationId: caller.organization.id,
      membershipId: caller.membership.id,
      userId: caller.membership.userId,
      receivedAt
    }
    const write = Effect.andThen(
      repository.insertEvents(batch, rows),
      dimensions.length === 0 ? Effect.void : repository.upsertDimensions(batch.organizationId, dimensions, receivedAt)
    ).pipe(Effect.catchIf(isMissingPartition, () => Effect.fail(new MissingPartition())))

    yield* orUnavailable(partitions.ensure(months))
    yield* transaction(write).pipe(
      Effect.catchTag("MissingPartition", () =>
        Effect.andThen(
          Effect.andThen(partitions.forget(months), orUnavailable(partitions.ensure(months))),
          transaction(write).pipe(
            Effect.catchTag("MissingPartition", () => Effect.die(new Error("A telemetry partition is still missing after it was created")))
          )
        ))
    )
  })

  return { ingest } as const
})

export class Telemetry extends Context.Service<Telemetry>()("@orgplane/server/telemetry/Telemetry", { make }) {
  /** Without its repository and partitions, for a layer that shares them with the retention job (Http.ts). */
  static readonly layerWithoutDependencies = Layer.effect(this, this.make)
  static readonly layer = this.layerWithoutDependencies.pipe(Layer.provide([TelemetryRepository.layer, Partitions.layer]))
}

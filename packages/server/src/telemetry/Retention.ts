/**
 * Telemetry retention: whole monthly partitions older than the window are dropped (never rows one by one), daily,
 * on the durable engine's cron (`ClusterCron`), so with several server processes it runs once per day. With a
 * window of N months, the current month and the N months before it are kept: on 2026-11-22 with 13, October 2025
 * onwards.
 */
import * as ClusterCron from "effect/cluster/ClusterCron"
import * as Cron from "effect/Cron"
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { ServerConfig } from "../platform/Config.js"
import { now } from "../platform/Time.js"
import { dropBefore, type Month, monthOf, monthOfPartition, Partitions } from "./Partitions.js"

/** The first month kept at `at` with a window of `months` whole months before the current one. */
export const firstKeptMonth = (at: Date, months: number): Month => monthOf(at) - months

/**
 * One run of the job: drops every partition of a month before the window and answers their names. The tests call
 * it directly with the time they want.
 */
export const dropExpired = (
  options: { readonly now: Date; readonly months: number }
): Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> => dropBefore(firstKeptMonth(options.now, options.months))

/** Every day at 03:17 UTC: drop expired months, then make sure the window and the next month have partitions. */
export const schedule = Cron.parseUnsafe("17 3 * * *", "UTC")

/** One run of the daily job, at the clock's time. */
export const run = Effect.gen(function*() {
  const partitions = yield* Partitions
  const { telemetryRetentionMonths: months } = yield* ServerConfig
  const at = yield* now
  const dropped = yield* dropExpired({ now: at, months })
  yield* partitions.forget(dropped.flatMap((name) => monthOfPartition(name) ?? []))
  if (dropped.length > 0) yield* Effect.logInfo(`Telemetry retention dropped ${dropped.join(", ")}`)
  yield* partitions.ensureRange(firstKeptMonth(at, months), monthOf(at) + 1)
})

/** The daily job, once per cluster. */
export const layer = ClusterCron.make({
  name: "telemetry-retention",
  cron: schedule,
  // Its requirements (the database, Partitions, the configuration) are the layer's, taken from where it is provided.
  execute: run
})

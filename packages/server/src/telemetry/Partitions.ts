/**
 * The monthly partitions of `telemetry_events` (platform/MonthlyPartitions.ts). Partitions are created at start-up
 * for the retention window and the next month, by the daily retention job, and on ingest for a month this process
 * has not seen yet (remembered in memory, so the hot path runs no DDL).
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as MonthlyPartitions from "../platform/MonthlyPartitions.js"

export { type Month, monthOf, startOf } from "../platform/MonthlyPartitions.js"

const telemetry = MonthlyPartitions.make("telemetry_events")

export const { partitionName, monthOfPartition, create, list, createRange, dropBefore } = telemetry

/** The partitions this process knows exist, so ingest creates a month's partition at most once per process. */
export class Partitions extends Context.Service<Partitions>()("@orgplane/server/telemetry/Partitions", { make: telemetry.known }) {
  static readonly layer = Layer.effect(this, this.make)
}

/**
 * The monthly partitions of `audit_events` (platform/MonthlyPartitions.ts). An event is written in the transaction
 * of its change, which must not fail for want of a partition nor run DDL: the current month and the next
 * `MONTHS_AHEAD` are made at start-up and every day, once per cluster (a `ClusterCron` on the durable engine).
 */
import * as ClusterCron from "effect/cluster/ClusterCron"
import * as Cron from "effect/Cron"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as MonthlyPartitions from "../platform/MonthlyPartitions.js"
import { now } from "../platform/Time.js"

export const audit = MonthlyPartitions.make("audit_events")

/** Months made ahead of the current one: a server that stops its daily job for weeks still writes events. */
export const MONTHS_AHEAD = 2

/** Makes the partitions of the current month and the next ones (each made once, whoever races). */
export const ensureAhead = Effect.flatMap(now, (at) => {
  const month = MonthlyPartitions.monthOf(at)
  return audit.createRange(month, month + MONTHS_AHEAD)
})

/** Every day at 03:23 UTC. */
export const schedule = Cron.parseUnsafe("23 3 * * *", "UTC")

const daily = ClusterCron.make({ name: "audit-partitions", cron: schedule, execute: ensureAhead })

export const layer = Layer.merge(Layer.effectDiscard(Effect.orDie(ensureAhead)), daily)

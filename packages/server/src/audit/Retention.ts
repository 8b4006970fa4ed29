/**
 * Audit retention: every day, once per cluster (a `ClusterCron` on the durable engine), the events of each
 * organization older than its retention (`audit_settings`, 365 days unless an owner set another) are deleted in
 * batches, and the deletion is recorded in that organization's log by the system (`audit.retention.apply`). Whole
 * months older than the longest retention anyone keeps are dropped as partitions.
 */
import { AUDIT_RETENTION_DEFAULT_DAYS } from "@orgplane/schema"
import * as ClusterCron from "effect/cluster/ClusterCron"
import * as Cron from "effect/Cron"
import * as Effect from "effect/Effect"
import { AuditRecorder } from "../platform/AuditRecorder.js"
import * as MonthlyPartitions from "../platform/MonthlyPartitions.js"
import { orUnavailable } from "../platform/Sql.js"
import { deleteInBatches } from "../platform/Statements.js"
import { now } from "../platform/Time.js"
import { AuditRepository } from "./AuditRepository.js"
import { audit as partitions } from "./Partitions.js"

const DAY = 24 * 60 * 60 * 1000
const BATCH = 5000

/** One run at `at`: what it deleted per organization, and the partitions it dropped. The tests call it directly. */
export const apply = Effect.fn("Retention.apply")(function*(at: Date) {
  const events = yield* AuditRepository
  const recorder = yield* AuditRecorder
  const expiring = yield* orUnavailable(events.expiring({ now: at, defaultDays: AUDIT_RETENTION_DEFAULT_DAYS }))
  const deleted: Array<{ readonly organizationId: string; readonly events: number }> = []
  for (const { organizationId, retentionDays } of expiring) {
    const before = new Date(at.getTime() - retentionDays * DAY)
    const count = yield* orUnavailable(deleteInBatches((limit) => events.deleteBefore(organizationId, before, limit), { batch: BATCH }))
    yield* orUnavailable(recorder.recordSystem({
        organizationId,
        job: "audit-retention",
        action: "audit.retention.apply",
        reason: `deleted ${count} events before ${before.toISOString()} (retention ${retentionDays} days)`
      }))
    deleted.push({ organizationId, events: count })
  }
  const longest = yield* orUnavailable(events.longestRetention(AUDIT_RETENTION_DEFAULT_DAYS))
  const dropped = yield* orUnavailable(partitions.dropBefore(MonthlyPartitions.monthOf(new Date(at.getTime() - longest * DAY))))
  return { deleted, dropped }
})

/** Every day at 03:41 UTC. */
export const schedule = Cron.parseUnsafe("41 3 * * *", "UTC")

export const layer = ClusterCron.make({
  name: "audit-retention",
  cron: schedule,
  execute: Effect.flatMap(now, apply).pipe(
    Effect.tap(({ deleted, dropped }) =>
      deleted.length + dropped.length === 0
        ? Effect.void
        : Effect.logInfo(`Audit retention: ${deleted.reduce((sum, { events }) => sum + events, 0)} events of ${deleted.length} organizations, partitions dropped: ${dropped.join(", ") || "none"}`))
  )
})

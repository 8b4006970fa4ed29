/**
 * Drift: every two minutes, once per cluster (a `ClusterCron` on the durable engine), each organization with an
 * applied document is compared with it (LiveDocuments `driftOf`). Drift not recorded before is written to
 * the organization's audit log by the system (`organization.document.drift`), its reason naming each differing field
 * with who changed it and through which credential, and kept (`organization_documents.drift`) for `/metrics`'
 * `orgplane_document_drift_fields`; drift that went away clears it. The same drift is recorded once.
 */
import type { DriftChange, OrganizationId } from "@orgplane/schema"
import * as ClusterCron from "effect/cluster/ClusterCron"
import * as Cron from "effect/Cron"
import * as Effect from "effect/Effect"
import { AuditRecorder } from "../platform/AuditRecorder.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { DocumentsRepository } from "./DocumentsRepository.js"
import { LiveDocuments } from "./LiveDocuments.js"
import * as Plan from "./Plan.js"

/** The longest reason an event keeps; the rest is counted. */
const MAX_REASON = 4000

const shown = (value: unknown) => (value === undefined ? "absent" : JSON.stringify(value))

/** One drifted change as the event's reason says it: each field, before and after, and who changed it. */
const sentence = (change: DriftChange) => {
  const fields = change.fields.map((field) => `${field.field} ${shown(field.after)} → ${shown(field.before)}`).join(", ")
  const by = change.changedBy === null
    ? "by a change the audit log does not name"
    : `by ${change.changedBy.actor.label ?? `${change.changedBy.actor.type} ${change.changedBy.actor.id}`} (${change.changedBy.actor.type} ${change.changedBy.actor.id}) via ${change.changedBy.credentialId ?? "no credential"}, ${change.changedBy.action} ${change.changedBy.eventId}`
  return `${change.kind} ${change.name}: ${fields} ${by}`
}

const reasonOf = (planHash: string, changes: ReadonlyArray<DriftChange>, problems: ReadonlyArray<{ readonly message: string }>) => {
  const parts = [...changes.map(sentence), ...problems.map((problem) => problem.message)]
  const text = `drifted from plan ${planHash}: ${parts.join("; ")}`
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON - 40)}… (${parts.length} differences in all)` : text
}

/** One run at `at`: the organizations whose drift it recorded (or cleared). The tests call it directly. */
export const check = Effect.fn("Drift.check")(function*(at: Date) {
  const repository = yield* DocumentsRepository
  const documents = yield* LiveDocuments
  const recorder = yield* AuditRecorder
  const recorded: Array<{ readonly organizationId: OrganizationId; readonly differences: number }> = []
  for (const { organizationId } of yield* orUnavailable(repository.applied())) {
    const found = yield* orUnavailable(documents.driftOf(organizationId))
    if (found === undefined) continue
    const { changes, problems } = found.report
    const differences = changes.length + problems.length
    const summary = JSON.stringify({
      changes: changes.map((change) => ({ kind: change.kind, name: change.name, fields: change.fields.map((field) => ({ field: field.field })) })),
      problems: problems.map((problem) => problem.path.join("."))
    })
    const hash = differences === 0 ? null : Plan.hashOf(JSON.stringify([changes.map(({ changedBy: _, ...change }) => change), problems]))
    if (hash === found.recordedHash) continue
    yield* transaction(Effect.gen(function*() {
      yield* repository.setDrift(organizationId, hash === null ? null : { changes: summary, hash }, at)
      if (hash === null) return
      yield* recorder.recordSystem({
        organizationId,
        job: "document-drift",
        action: "organization.document.drift",
        targets: [organizationId, ...found.ids.filter((id) => id !== organizationId)],
        reason: reasonOf(found.report.applied?.planHash ?? "", changes, problems)
      })
    }))
    recorded.push({ organizationId, differences })
  }
  return recorded
})

/** Every two minutes: drift is recorded within that of the change that made it. */
export const schedule = Cron.parseUnsafe("*/2 * * * *", "UTC")

export const layer = ClusterCron.make({
  name: "organization-document-drift",
  cron: schedule,
  execute: Effect.flatMap(now, check).pipe(
    Effect.tap((recorded) =>
      recorded.length === 0
        ? Effect.void
        : Effect.logInfo(`Organization documents: drift recorded or cleared in ${recorded.length} organizations`))
  )
})

/**
 * The purge of organizations (docs/lifecycle.md): deleted ones whose grace ended (`ORGPLANE_ORGANIZATION_DELETION_GRACE`)
 * and provisional workspaces nobody claimed within `ORGPLANE_PROVISIONAL_WORKSPACE_LIFETIME` (marked deleted, due at
 * once). One loop per cluster, a `Singleton` on the durable engine looking every `ORGPLANE_ORGANIZATION_PURGE_INTERVAL`
 * (not a `ClusterCron`, which keeps a message per run).
 *
 * An organization's purge deletes its rows from every tenant table (identity/PurgeRepository.ts: the catalog's tables,
 * children before parents) in batches, each a transaction that first locks the organization and checks it is still
 * due (so a restore that won the lock stops it); then, in a last transaction, what non-tenant tables keep of it (the
 * sessions acting in it or signed in by its SSO, rate-limit windows naming it), the organization's row itself, and
 * the record: `organization.purge` in the operator organization's audit log (its own log went with it), with what was
 * removed per table, counted across every batch and run (`purged_rows`). Without an operator organization the record
 * is the server's log line only. At least once and idempotent: a purge cut off anywhere is taken up by the next run,
 * where it stopped; a row written meanwhile (a request authorized just before the deletion) makes the last step fail
 * on its foreign key, and the next run deletes it first.
 */
import type { OrganizationId } from "@orgplane/schema"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Singleton from "effect/cluster/Singleton"
import { AuditRecorder } from "../platform/AuditRecorder.js"
import { ServerConfig } from "../platform/Config.js"
import { RateLimiter } from "../platform/RateLimiter.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { describeRows, totalOf } from "./OrganizationDeletion.js"
import { ApiKeysRepository } from "./ApiKeysRepository.js"
import { Operator } from "./Operator.js"
import { OrganizationsRepository } from "./OrganizationsRepository.js"
import { PurgeRepository } from "./PurgeRepository.js"
import { SessionsRepository } from "./SessionsRepository.js"

/** Rows deleted per statement (and transaction), so none holds many locks or runs long. */
export const BATCH = 1_000
/** Organizations taken per run; the next run takes the rest. */
export const ORGANIZATIONS_PER_RUN = 20

/** What a purge removed: per table (the organization's own row as `organizations`), and the record's text. */
export interface Purged {
  readonly organizationId: OrganizationId
  readonly rows: Readonly<Record<string, number>>
  readonly record: string
}

/** One organization's purge at `at` (see the module comment); none when it is not due (restored meanwhile, or gone). */
export const purgeOne = Effect.fn("OrganizationPurge.purgeOne")(function*(organizationId: OrganizationId, at: Date) {
  const organizations = yield* OrganizationsRepository
  const purge = yield* PurgeRepository
  const sessions = yield* SessionsRepository
  const apiKeys = yield* ApiKeysRepository
  const limiter = yield* RateLimiter
  const recorder = yield* AuditRecorder
  const operator = yield* Operator
  for (const table of yield* orUnavailable(purge.tenantTables)) {
    for (;;) {
      const deleted = yield* transaction(Effect.gen(function*() {
        if (Option.isNone(yield* organizations.lockDue({ id: organizationId, at }))) return Option.none<number>()
        const count = yield* purge.deleteBatch(table, organizationId, BATCH)
        if (count > 0) yield* organizations.addPurged({ id: organizationId, table, count })
        return Option.some(count)
      }))
      if (Option.isNone(deleted)) return Option.none<Purged>()
      if (deleted.value < BATCH) break
    }
  }
  const operatorOrganization = yield* operator.organizationId
  return yield* transaction(Effect.gen(function*() {
    const due = yield* organizations.lockDue({ id: organizationId, at })
    if (Option.isNone(due)) return Option.none<Purged>()
    const { deletedAt, deletedBy, name, purgedRows } = due.value
    const sessionsDeleted = yield* sessions.forgetOrganization(organizationId)
    yield* apiKeys.forgetAuthenticatingOrganization(organizationId)
    const windows = yield* limiter.clearMentioning(organizationId)
    yield* organizations.remove(organizationId)
    const rows: Record<string, number> = { ...purgedRows, organizations: 1 }
    if (sessionsDeleted > 0) rows["sessions"] = sessionsDeleted
    if (windows > 0) rows["rate_limits"] = windows
    const record = `purged ${organizationId} (${JSON.stringify(name)}), deleted ${deletedAt?.toISOString() ?? "?"} by ${deletedBy ?? "?"}: ` +
      `${totalOf(rows)} rows (${describeRows(rows)})`
    if (Option.isSome(operatorOrganization) && operatorOrganization.value !== organizationId) {
      yield* recorder.recordSystem({
        organizationId: operatorOrganization.value,
        job: "organization-purge",
        action: "organization.purge",
        targets: [organizationId],
        reason: record
      })
    }
    return Option.some<Purged>({ organizationId, rows, record })
  }))
}, (effect, organizationId) => Effect.annotateLogs(effect, { organizationId }))

/**
 * One run at `at`: unclaimed provisional workspaces past their lifetime are marked deleted (due at once), then every
 * organization due is purged, at most `ORGANIZATIONS_PER_RUN`. What each purge removed. The tests call it directly too.
 */
export const run = Effect.fn("OrganizationPurge.run")(function*(at: Date) {
  const settings = yield* ServerConfig
  const organizations = yield* OrganizationsRepository
  const madeBefore = new Date(at.getTime() - Duration.toMillis(settings.provisionalWorkspaceLifetime))
  const expired = yield* transaction(organizations.expireUnclaimed({ madeBefore, at, limit: ORGANIZATIONS_PER_RUN }))
  if (expired.length > 0) yield* Effect.logInfo(`Unclaimed provisional workspaces expired: ${expired.join(", ")}`)
  const due = yield* orUnavailable(organizations.dueForPurge({ at, limit: ORGANIZATIONS_PER_RUN }))
  const purged: Array<Purged> = []
  for (const organizationId of due) {
    const done = yield* purgeOne(organizationId, at).pipe(
      Effect.catchCause((cause) =>
        Effect.as(Effect.logWarning("The purge of an organization failed; the next run takes it up where it stopped", cause), Option.none<Purged>())
      )
    )
    if (Option.isSome(done)) {
      purged.push(done.value)
      yield* Effect.logInfo(`Organization purge: ${done.value.record}`)
    }
  }
  return purged
})

/** The loop: a run every `ORGPLANE_ORGANIZATION_PURGE_INTERVAL`, each failure logged and the next run taken. */
export const loop = Effect.gen(function*() {
  const settings = yield* ServerConfig
  yield* Effect.repeat(
    Effect.flatMap(now, run).pipe(
      // An outage is told once, by platform/DatabaseStatus.ts; the next run takes up what this one could not.
      Effect.catchTag("ServiceUnavailable", () => Effect.void),
      Effect.catchCause((cause) => Effect.logWarning("The organization purge's run failed", cause))
    ),
    Schedule.spaced(settings.organizationPurgeInterval)
  )
}).pipe(
  Effect.provide([OrganizationsRepository.layer, PurgeRepository.layer, SessionsRepository.layer, ApiKeysRepository.layer, Operator.layer])
)

export const layer = Singleton.make("organization-purge", loop)

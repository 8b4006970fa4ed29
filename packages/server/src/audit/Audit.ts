/**
 * Reading the audit log: owners and admins list, filter and get their organization's events, and the catalog of
 * actions. Events are written by `platform/AuditRecorder.ts`, in the transactions of the changes they record.
 */
import {
  AUDIT_CSV_COLUMNS,
  AUDIT_RETENTION_DEFAULT_DAYS,
  AuditActions,
  AuditEvent,
  type AuditEventsQuery,
  AuditExportQuery,
  AuditSettings,
  NotFound,
  type ServiceUnavailable
} from "@orgplane/schema"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { describe, describeChange } from "../platform/AuditRecorder.js"
import { now } from "../platform/Time.js"
import { ServerConfig } from "../platform/Config.js"
import { authorize, type Principal, requireRecentAuthentication } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { AuditRepository } from "./AuditRepository.js"

const defaults = new AuditSettings({ retentionDays: AUDIT_RETENTION_DEFAULT_DAYS, updatedAt: null })

const eventNotFound = () => new NotFound({ error: "audit_event_not_found", message: "Audit event not found." })

/** Events an export reads at a time: the most it holds in memory. */
export const EXPORT_BATCH = 1000

const encodeEvent = Schema.encodeSync(AuditEvent)
const encodeExportQuery = Schema.encodeSync(AuditExportQuery)

/**
 * A CSV cell: always quoted, quotes doubled, and a value a spreadsheet would run as a formula (`=`, `+`, `-`, `@`,
 * a tab or a carriage return first) prefixed with `'`, so an actor's name cannot become a formula (OWASP, CSV
 * injection).
 */
export const csvCell = (value: string | null): string => {
  const text = value ?? ""
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text
  return `"${safe.replaceAll("\"", "\"\"")}"`
}

/** Each CSV column's cell, by the schema's column name: the header and the rows cannot disagree. */
const cells: { readonly [Column in (typeof AUDIT_CSV_COLUMNS)[number]]: (event: AuditEvent) => string | null } = {
  id: (event) => event.id,
  occurredAt: (event) => event.occurredAt.toISOString(),
  action: (event) => event.action,
  category: (event) => event.category,
  outcome: (event) => event.outcome,
  actorType: (event) => event.actor.type,
  actorId: (event) => event.actor.id,
  actorMembershipId: (event) => event.actor.membershipId,
  actorLabel: (event) => event.actor.label,
  credentialId: (event) => event.via.credentialId,
  ssoConnectionId: (event) => event.via.ssoConnectionId,
  ip: (event) => event.via.ip,
  userAgent: (event) => event.via.userAgent,
  targets: (event) => event.targets.map((target) => `${target.type}:${target.id}`).join(" "),
  changedFields: (event) => event.changes === null ? null : event.changes.changedFields.join(" "),
  changes: (event) => event.changes === null ? null : JSON.stringify({ before: event.changes.before, after: event.changes.after }),
  reason: (event) => event.reason,
  requestId: (event) => event.requestId,
  channel: (event) => event.via.channel,
  planHash: (event) => event.via.planHash
}

const csvOf = (event: AuditEvent) => `${AUDIT_CSV_COLUMNS.map((column) => csvCell(cells[column](event))).join(",")}\r\n`

const encoder = new TextEncoder()

/** The catalog, in its declared order (by area). */
const eventTypes = {
  items: Object.entries(AuditActions).map(([action, rule]) => ({
    action: action as keyof typeof AuditActions,
    category: rule.category,
    description: rule.description
  }))
}

const make = Effect.gen(function*() {
  const events = yield* AuditRepository
  const { recentAuthentication } = yield* ServerConfig

  const list = Effect.fn("Audit.list")(function*(principal: Principal, query: AuditEventsQuery) {
    yield* authorize(principal, "audit.read")
    return yield* orUnavailable(events.list(principal.organization.id, query))
  })

  const get = Effect.fn("Audit.get")(function*(principal: Principal, id: string) {
    yield* authorize(principal, "audit.read")
    return yield* orUnavailable(events.get({ organizationId: principal.organization.id, id })).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(eventNotFound()), onSome: (event) => Effect.succeed({ event }) }))
    )
  })

  const types = Effect.fn("Audit.types")((principal: Principal) => Effect.as(authorize(principal, "audit.read"), eventTypes))

  /**
   * The events under the filters, oldest first, as the format's bytes: read `EXPORT_BATCH` at a time after the
   * last one sent, up to the moment the export starts. Authorized before the first byte; a database that fails
   * midway ends the stream (the client sees a truncated body, never a wrong one).
   */
  const exportEvents = Effect.fn("Audit.exportEvents")(function*(principal: Principal, query: AuditExportQuery) {
    yield* authorize(principal, "audit.read")
    // The export's event says what was taken: its query, as the URL said it.
    yield* describe({ reason: new URLSearchParams(encodeExportQuery(query) as Record<string, string>).toString() })
    // Up to the export's start, its millisecond included: `to` is exclusive, and events are stamped to the millisecond
    // (an event stamped in the same millisecond as the export began was left out).
    const upTo = new Date((yield* now).getTime() + 1)
    const filters = { ...query, to: query.to === undefined || query.to > upTo ? upTo : query.to }
    const organizationId = principal.organization.id
    const rows = Stream.paginate<AuditEvent | undefined, AuditEvent, ServiceUnavailable>(undefined, (after) =>
      Effect.map(orUnavailable(events.batch(organizationId, filters, after, EXPORT_BATCH)), (batch) => {
        const last = batch.at(-1)
        return [batch, batch.length < EXPORT_BATCH || last === undefined ? Option.none() : Option.some(last)] as const
      }))
    const lines = query.format === "csv"
      ? Stream.concat(Stream.succeed(`${AUDIT_CSV_COLUMNS.map((column) => `"${column}"`).join(",")}\r\n`), Stream.map(rows, csvOf))
      : Stream.map(rows, (event) => `${JSON.stringify(encodeEvent(event))}\n`)
    // A page's lines are written as one piece, not one write per event.
    return Stream.map(Stream.mapArray(lines, (chunk) => Arr.of(chunk.join(""))), (text) => encoder.encode(text))
  })

  const getSettings = Effect.fn("Audit.getSettings")(function*(principal: Principal) {
    yield* authorize(principal, "audit.read")
    return yield* Effect.map(orUnavailable(events.settings(principal.organization.id)), (stored) => ({
      settings: Option.getOrElse(stored, () => defaults)
    }))
  })

  const setSettings = Effect.fn("Audit.setSettings")(function*(principal: Principal, input: { readonly retentionDays: number }) {
    yield* authorize(principal, "audit.manage")
    yield* requireRecentAuthentication(principal, recentAuthentication)
    const updatedAt = yield* now
    const organizationId = principal.organization.id
    return yield* transaction(Effect.gen(function*() {
      const before = Option.getOrElse(yield* events.settings(organizationId), () => defaults)
      const settings = Option.getOrThrow(yield* events.saveSettings({ organizationId, retentionDays: input.retentionDays, updatedAt }))
      yield* describeChange(AuditSettings, before, settings)
      return { settings }
    }))
  })

  return { list, get, types, exportEvents, getSettings, setSettings } as const
})

export class Audit extends Context.Service<Audit>()("@orgplane/server/audit/Audit", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(AuditRepository.layer))
}

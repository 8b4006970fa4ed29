/** Audit Log: who did what in the organization, when, and through which credential. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as Schema from "effect/Schema"
import {
  AUDIT_CSV_COLUMNS,
  AuditEventPage,
  AuditEventPath,
  AuditEventResponse,
  AuditEventsQuery,
  AuditEventTypes,
  AuditExportQuery,
  AuditSettingsResponse,
  UpdateAuditSettingsRequest
} from "./Audit.js"
import { audits } from "./AuditCatalog.js"
import { ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"

/**
 * The export's other format: `format=csv` answers `text/csv` (a success has one media type in the generator, the
 * NDJSON one).
 */
const withCsv = (operation: Record<string, unknown>): Record<string, unknown> => {
  const responses = operation["responses"]
  const ok = typeof responses === "object" && responses !== null ? Reflect.get(responses, "200") : undefined
  const content: unknown = typeof ok === "object" && ok !== null ? Reflect.get(ok, "content") : undefined
  if (typeof content !== "object" || content === null) return operation
  Reflect.set(content, "text/csv", {
    schema: { type: "string" },
    examples: { example: { value: `${AUDIT_CSV_COLUMNS.map((column) => `"${column}"`).join(",")}\r\n` } }
  })
  return operation
}

/** The errors every endpoint of the group may answer (Effect 4 has no group `addError`: each endpoint declares them). */
const groupErrors = [ForbiddenResponse] as const

export class AuditApi extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("listEvents", "/v1/audit/events", { query: AuditEventsQuery, success: AuditEventPage, error: [...groupErrors] }).pipe(requires("audit.read"))
      .annotate(OpenApi.Summary, "List audit events")
      .annotate(
        OpenApi.Description,
        "The organization's audit events, newest first (`order=asc`: oldest first, to follow the log), filtered by time (`from` included, `to` excluded), action or action family (`member.*`), actor, target, outcome, credential and request id, with keyset paging. Changes nothing.\n\nErrors: 400 `invalid_request` for a cursor of other filters."
      )
  )
  .add(
    HttpApiEndpoint.get("exportEvents", "/v1/audit/export", {
      query: AuditExportQuery,
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "application/x-ndjson" })).annotate({
        examples: [`${JSON.stringify({ id: "aev_01jc0000000000000000000000", action: "member.role.update", outcome: "succeeded" })}\n`]
      }),
      error: [...groupErrors]
    }).pipe(audits("audit.export"), requires("audit.read"))
      .annotate(OpenApi.Transform, withCsv)
      .annotate(OpenApi.Summary, "Export audit events")
      .annotate(
        OpenApi.Description,
        "Every event under the filters, oldest first, streamed as it is read (the server holds one batch at a time, whatever the range): `format=ndjson` answers `application/x-ndjson`, one event per line as `GET /v1/audit/events/{eventId}` shows it; `format=csv` answers `text/csv` with a header row (`id, occurredAt, action, category, outcome, actorType, actorId, actorMembershipId, actorLabel, credentialId, ssoConnectionId, ip, userAgent, targets, changedFields, changes, reason, requestId`; targets as `type:id` and changed fields joined by spaces, changes as the JSON of `before` and `after`), every cell quoted and one that a spreadsheet would read as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) prefixed with `'`. The range ends at the moment the export starts when `to` is later or absent, so what is exported does not grow while it is read. The export itself is recorded (`audit.export`, its filters as the event's reason): taking the log away is logged; reading pages of it is not, or following the log would fill it with its own reads.\n\nErrors: 400 `invalid_request` for a filter or format it does not know."
      )
  )
  .add(
    HttpApiEndpoint.get("getEvent", "/v1/audit/events/:eventId", { params: AuditEventPath, success: AuditEventResponse, error: [NotFoundResponse, ...groupErrors] }).pipe(requires("audit.read"))
      .annotate(OpenApi.Summary, "Get an audit event")
      .annotate(OpenApi.Description, "One audit event. Changes nothing.\n\nErrors: 404 `audit_event_not_found` (also for another organization's event).")
  )
  .add(
    HttpApiEndpoint.get("getSettings", "/v1/audit/settings", { success: AuditSettingsResponse, error: [...groupErrors] }).pipe(requires("audit.read"))
      .annotate(OpenApi.Summary, "Get the audit log settings")
      .annotate(OpenApi.Description, "How long the organization's events are kept. Changes nothing.")
  )
  .add(
    HttpApiEndpoint.put("setSettings", "/v1/audit/settings", { payload: UpdateAuditSettingsRequest, success: AuditSettingsResponse, error: [...groupErrors] }).pipe(audits("audit.settings.update"), requires("audit.manage"))
      .annotate(OpenApi.Summary, "Set the audit log settings")
      .annotate(
        OpenApi.Description,
        "Sets how long the organization's events are kept (7 to 3650 days). Every day a job on the durable engine deletes the events older than that, and records how many it deleted as `audit.retention.apply` by the system; a shorter retention takes effect at its next run."
      )
  )
  .add(
    HttpApiEndpoint.get("listEventTypes", "/v1/audit/event-types", { success: AuditEventTypes, error: [...groupErrors] }).pipe(requires("audit.read"))
      .annotate(OpenApi.Summary, "List audit event types")
      .annotate(OpenApi.Description, "The closed catalog of actions the log records, with their categories and what each means. Changes nothing.")
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Audit Log")
  .annotate(
    OpenApi.Description,
    "Who did what, when, through which credential. Every operation that changes something declares the action it records (`x-orgplane-audit` in this document); its event is written in the same transaction as the change, so there is no change without its event and no event for a change that rolled back. A privileged attempt refused for want of role or access is recorded with `outcome: denied`. Owners and admins read the log, on every plan. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}

/** Audit Log: who did what in the organization, when, and through which credential. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { AuditEventPage, AuditEventPath, AuditEventResponse, AuditEventsQuery, AuditEventTypes } from "./Audit.js"
import { ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"

export class AuditApi extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("listEvents", "/v1/audit/events")
      .setUrlParams(AuditEventsQuery)
      .addSuccess(AuditEventPage)
      .pipe(requires("audit.read"))
      .annotate(OpenApi.Summary, "List audit events")
      .annotate(
        OpenApi.Description,
        "The organization's audit events, newest first (`order=asc`: oldest first, to follow the log), filtered by time (`from` included, `to` excluded), action or action family (`member.*`), actor, target, outcome and request id, with keyset paging. Changes nothing.\n\nErrors: 400 `invalid_request` for a cursor of other filters."
      )
  )
  .add(
    HttpApiEndpoint.get("getEvent", "/v1/audit/events/:eventId")
      .setPath(AuditEventPath)
      .addSuccess(AuditEventResponse)
      .addError(NotFoundResponse)
      .pipe(requires("audit.read"))
      .annotate(OpenApi.Summary, "Get an audit event")
      .annotate(OpenApi.Description, "One audit event. Changes nothing.\n\nErrors: 404 `audit_event_not_found` (also for another organization's event).")
  )
  .add(
    HttpApiEndpoint.get("listEventTypes", "/v1/audit/event-types")
      .addSuccess(AuditEventTypes)
      .pipe(requires("audit.read"))
      .annotate(OpenApi.Summary, "List audit event types")
      .annotate(OpenApi.Description, "The closed catalog of actions the log records, with their categories and what each means. Changes nothing.")
  )
  .addError(ForbiddenResponse)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Audit Log")
  .annotate(
    OpenApi.Description,
    "Who did what, when, through which credential. Every operation that changes something declares the action it records (`x-orgplane-audit` in this document); its event is written in the same transaction as the change, so there is no change without its event and no event for a change that rolled back. A privileged attempt refused for want of role or access is recorded with `outcome: denied`. Owners and admins read the log, on every plan. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}

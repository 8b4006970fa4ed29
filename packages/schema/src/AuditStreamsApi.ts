/** Audit Log Streams: endpoints that receive the organization's audit events, signed, in order, retried. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { audits } from "./AuditCatalog.js"
import {
  AuditStreamListQuery,
  AuditStreamPage,
  AuditStreamPath,
  AuditStreamResponse,
  AuditStreamTestResult,
  AuditStreamWithSecret,
  CreateAuditStreamRequest,
  MAX_AUDIT_STREAMS,
  UpdateAuditStreamRequest
} from "./AuditStreams.js"
import {
  ConflictResponse,
  ForbiddenResponse,
  NotFoundResponse,
  storedCredentialUnreadable,
  StoredCredentialUnreadableResponse
} from "./Errors.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"

const notFound = "404 `audit_stream_not_found` (also for another organization's stream)"
const urlRefused =
  "400 `invalid_request` on `url` when the outbound guard refuses it (plain http, or a host with a loopback, private or link-local address, unless `ORGPLANE_OUTBOUND_ALLOW_PRIVATE`)"

/** The errors every endpoint of the group may answer (Effect 4 has no group `addError`: each endpoint declares them). */
const groupErrors = [ForbiddenResponse] as const

export class AuditStreamsApi extends HttpApiGroup.make("auditStreams")
  .add(
    HttpApiEndpoint.post("create", "/v1/audit/streams", { payload: CreateAuditStreamRequest, success: AuditStreamWithSecret.pipe(HttpApiSchema.status(201)), error: [ConflictResponse, ...groupErrors] }).pipe(audits("audit.stream.create"), requires("audit.manage"))
      .annotate(OpenApi.Summary, "Create an audit stream")
      .annotate(
        OpenApi.Description,
        `Registers an endpoint that will receive the organization's audit events from now on (events recorded before it was made are not sent), and answers it with its signing secret: the only time the secret is shown (\`POST /v1/audit/streams/{streamId}/rotate-secret\` makes a new one). The secret is stored encrypted; it never appears in the log.\n\nErrors: ${urlRefused}; 409 \`audit_stream_limit_reached\` when the organization has ${MAX_AUDIT_STREAMS} streams already.`
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/audit/streams", { query: AuditStreamListQuery, success: AuditStreamPage, error: [...groupErrors] }).pipe(requires("audit.read"))
      .annotate(OpenApi.Summary, "List audit streams")
      .annotate(OpenApi.Description, "The organization's streams, oldest first, with their delivery status. Changes nothing.\n\nErrors: none beyond the group's.")
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/audit/streams/:streamId", { params: AuditStreamPath, success: AuditStreamResponse, error: [NotFoundResponse, ...groupErrors] }).pipe(requires("audit.read"))
      .annotate(OpenApi.Summary, "Get an audit stream")
      .annotate(OpenApi.Description, `One stream with its delivery status (never its secret). Changes nothing.\n\nErrors: ${notFound}.`)
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/audit/streams/:streamId", { params: AuditStreamPath, payload: UpdateAuditStreamRequest, success: AuditStreamResponse, error: [NotFoundResponse, ...groupErrors] }).pipe(audits("audit.stream.update"), requires("audit.manage"))
      .annotate(OpenApi.Summary, "Update an audit stream")
      .annotate(
        OpenApi.Description,
        `Changes the endpoint's URL or description, or pauses or resumes delivery. The position in the log is kept either way: a new URL receives what the old one had not acknowledged, and a resumed stream what happened while it was paused. Resuming, or a new URL, makes the next attempt due at once and forgets past failures.\n\nErrors: ${urlRefused}; ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/audit/streams/:streamId", { params: AuditStreamPath, success: HttpApiSchema.NoContent, error: [NotFoundResponse, ...groupErrors] }).pipe(audits("audit.stream.delete"), requires("audit.manage"))
      .annotate(OpenApi.Summary, "Delete an audit stream")
      .annotate(OpenApi.Description, `Deletes the stream and its encrypted secret; nothing more is sent to it (a delivery under way finishes). 204.\n\nErrors: ${notFound}.`)
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/v1/audit/streams/:streamId/rotate-secret", { params: AuditStreamPath, success: AuditStreamWithSecret, error: [NotFoundResponse, ...groupErrors] }).pipe(audits("audit.stream.secret.rotate"), requires("audit.manage"))
      .annotate(OpenApi.Summary, "Rotate an audit stream's secret")
      .annotate(
        OpenApi.Description,
        `Replaces the signing secret and answers the new one, shown only here. Deliveries from now on are signed with it alone (a retried batch too): update the receiver first to accept both, then rotate.\n\nErrors: ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.post("test", "/v1/audit/streams/:streamId/test", { params: AuditStreamPath, success: AuditStreamTestResult, error: [NotFoundResponse, StoredCredentialUnreadableResponse, ...groupErrors] }).pipe(audits("audit.stream.test"), requires("audit.manage"))
      .annotate(OpenApi.Summary, "Test an audit stream")
      .annotate(
        OpenApi.Description,
        `Sends one signed ping, \`{"events":[],"test":true}\`, to the endpoint now, through the outbound guard, and answers whether it was acknowledged (a 2xx), the status and why not. Paused streams may be tested. Changes neither the stream's position nor its delivery status.\n\nErrors: ${notFound}; ${storedCredentialUnreadable}`
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Audit Log Streams")
  .annotate(
    OpenApi.Description,
    `Endpoints that receive the organization's audit events as they are recorded (at most ${MAX_AUDIT_STREAMS} per organization): \`POST\` batches of up to 100 events, \`{"events":[...]}\` with each event as \`GET /v1/audit/events/{eventId}\` shows it, oldest first, signed with the stream's secret (\`Orgplane-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">\`; reject a \`t\` older than 5 minutes) and named by \`Orgplane-Delivery-Id\`, which a retried batch keeps. A 2xx acknowledges the batch; anything else (or no answer within 10 seconds, or a redirect) is retried with exponential backoff. Delivery is at least once, in the order of \`occurredAt\`, typically 5 to 10 seconds after the event. Owners manage streams; admins read them. Every operation here needs credentials, a session or an API key: 401 \`unauthorized\` without valid ones, 404 \`organization_not_found\` when the caller belongs to no organization; 403 \`insufficient_role\` when the caller's role does not allow the operation.`
  )
{}

/**
 * Capability passthroughs: the suites' OAuth clients (admins), a member's own connection to each suite, and the
 * three capabilities acting as the member.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import {
  CalendarEventPatch,
  CalendarEventPath,
  CalendarEventResult,
  CreateMailDraftRequest,
  MailDraftResult,
  MailMessagePath,
  MailMessageResult,
  SuiteCallbackResult,
  SuiteClient,
  SuiteClientRequest,
  SuiteConnection,
  SuiteConnectResult,
  SuiteDisconnectResult,
  SuitePath
} from "./Capabilities.js"
import { MaxBodyBytes } from "./BodyLimit.js"
import { Ok } from "./Common.js"
import {
  CalendarSuiteApiErrorResponse,
  ConflictResponse,
  ForbiddenResponse,
  MailSuiteApiErrorResponse,
  NeedsConnectionResponse,
  NotFoundResponse,
  ServiceUnavailableResponse,
  SuiteApiErrorResponse,
  storedCredentialUnreadable,
  StoredCredentialUnreadableResponse
} from "./Errors.js"
import { McpOAuthCallbackQuery } from "./McpAuthorization.js"
import { requires } from "./Policy.js"
import { MemberAuthentication, memberAuthenticationErrors } from "./Security.js"
import { audits } from "./AuditCatalog.js"

// Each endpoint lists the group's errors (Effect 4 has no group-wide error).
export class SuiteClientsApi extends HttpApiGroup.make("suiteClients")
  .add(
    HttpApiEndpoint.get("get", "/v1/capabilities/:suite/client", {
      params: SuitePath,
      success: SuiteClient,
      error: [NotFoundResponse, ForbiddenResponse]
    }).pipe(requires("capabilities.manage"))
      .annotate(OpenApi.Summary, "Get a suite's OAuth client")
      .annotate(
        OpenApi.Description,
        "The organization's OAuth client for the suite: its id, whether it has a secret (never returned), the tenant, the enabled features, the endpoints in use, the redirect URI to register with the suite and the scopes connecting asks for.\n\nErrors: 404 `suite_client_not_found` while none is configured."
      )
  )
  .add(
    HttpApiEndpoint.put("put", "/v1/capabilities/:suite/client", {
      params: SuitePath,
      payload: SuiteClientRequest,
      success: SuiteClient,
      error: [ForbiddenResponse]
    }).pipe(audits("suite_client.set"), requires("capabilities.manage"))
      .annotate(OpenApi.Summary, "Configure a suite's OAuth client")
      .annotate(
        OpenApi.Description,
        "Creates or replaces the suite's OAuth client. The secret is encrypted with the server's key; omit it to keep the stored one. Features must belong to the suite (`mailDraft`, `mailRead` on `suite-a`; `calendarWrite` on `suite-b`); `tenant` is for `suite-a` only. Endpoints default to the suite's public cloud; set them for a sovereign cloud (or a test double): they are reached through the outbound guard like any address an organization supplies. A new client id, tenant or token endpoint drops every member's connection and pending authorization (their tokens belong to the old client); a change of features does not: a member connects again to grant what a newly enabled feature needs.\n\nErrors: 400 `invalid_request` for a feature of the other suite, a repeated feature, a tenant on `suite-b` or an endpoint the outbound guard refuses."
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/capabilities/:suite/client", {
      params: SuitePath,
      success: Ok,
      error: [NotFoundResponse, ForbiddenResponse]
    }).pipe(audits("suite_client.delete"), requires("capabilities.manage"))
      .annotate(OpenApi.Summary, "Remove a suite's OAuth client")
      .annotate(
        OpenApi.Description,
        "Removes the suite's OAuth client with every member's connection and pending authorization. Capabilities of the suite then answer 409 `needs_connection`.\n\nErrors: 404 `suite_client_not_found`."
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Suite OAuth clients")
  .annotate(
    OpenApi.Description,
    "The OAuth client (application) an organization registers with each suite for its members' delegated access. Owners and admins (403 `insufficient_role` for members). All operations need credentials (401 `unauthorized`; 404 `organization_not_found` for a caller without an organization); `suite` is `suite-a` or `suite-b` (anything else is a 400)."
  )
{}

export class SuiteConnectionsApi extends HttpApiGroup.make("suiteConnections")
  .add(
    HttpApiEndpoint.get("get", "/v1/capabilities/:suite/connection", {
      params: SuitePath,
      success: SuiteConnection,
      error: [ServiceUnavailableResponse, ForbiddenResponse, ...memberAuthenticationErrors]
    }).pipe(requires("capabilities.use"))
      .middleware(MemberAuthentication)
      .annotate(OpenApi.Summary, "Get my suite connection")
      .annotate(
        OpenApi.Description,
        "The caller's own connection to the suite: whether the suite is configured, the status, the granted scopes, each feature enabled and granted, and when the access token expires. Never a token.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.post("connect", "/v1/capabilities/:suite/connection/connect", {
      params: SuitePath,
      success: SuiteConnectResult,
      error: [ConflictResponse, ServiceUnavailableResponse, ForbiddenResponse, StoredCredentialUnreadableResponse, ...memberAuthenticationErrors]
    }).pipe(audits("suite_connection.connect"), requires("capabilities.use"))
      .middleware(MemberAuthentication)
      .annotate(OpenApi.Summary, "Connect my suite account")
      .annotate(
        OpenApi.Description,
        "Answers `connected` when the caller's connection is usable and holds the scopes of every enabled feature; otherwise `needs_auth` with the suite's authorization URL to open in a browser: an authorization code flow with PKCE (S256) asking for the enabled features' scopes and a refresh token, with a signed `state` that works once for 10 minutes. The suite then sends the browser to `GET /v1/capabilities/oauth/callback`.\n\nErrors: 409 `suite_not_configured` while an admin has not configured the suite's OAuth client or enabled any feature." + " " + storedCredentialUnreadable
      )
  )
  .add(
    HttpApiEndpoint.delete("disconnect", "/v1/capabilities/:suite/connection", {
      params: SuitePath,
      success: SuiteDisconnectResult,
      error: [ServiceUnavailableResponse, ForbiddenResponse, ...memberAuthenticationErrors]
    }).pipe(audits("suite_connection.disconnect"), requires("capabilities.use"))
      .middleware(MemberAuthentication)
      .annotate(OpenApi.Summary, "Disconnect my suite account")
      .annotate(
        OpenApi.Description,
        "Drops the caller's stored tokens for the suite (the suite's own grant stays until the person revokes it in their account). `removed` is false when nothing was connected.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("callback", "/v1/capabilities/oauth/callback", {
      query: McpOAuthCallbackQuery,
      success: SuiteCallbackResult,
      error: [ServiceUnavailableResponse, SuiteApiErrorResponse, StoredCredentialUnreadableResponse]
    })
      .annotate(OpenApi.Summary, "Complete a suite authorization")
      .annotate(
        OpenApi.Description,
        "Where the suite sends the browser back (the redirect URI to register: `<ORGPLANE_PUBLIC_URL>/v1/capabilities/oauth/callback`). Public: the signed `state` names the pending authorization. The server checks it, exchanges the code with the PKCE verifier, and stores the tokens encrypted as the connection of the member who started it, with the scopes the suite granted.\n\n`state` is required, and so is `code` or `error` (the suite sends `state` back with either).\n\nErrors: 400 `invalid_request` on `state` when it is missing or empty; otherwise with a detail `code`: on `state` `oauth_state_invalid`, `oauth_authorization_expired`, `oauth_authorization_used`, `oauth_client_changed`; on `error` `oauth_access_denied` or `oauth_authorization_refused`; on `code` `oauth_code_missing` or `oauth_code_rejected`; 502 `suite_a_api_error` / `suite_b_api_error` when the token endpoint could not be reached." + " " + storedCredentialUnreadable
      )
  )
  .annotate(OpenApi.Title, "Suite connections")
  .annotate(
    OpenApi.Description,
    "A member's own delegated account at a suite, which the capabilities act through. Every member connects their own; nobody sees or uses another's. Tokens are stored encrypted and refreshed before they expire. Operations other than the callback need credentials (401 `unauthorized`; 404 `organization_not_found`)."
  )
{}

/**
 * 4 MiB: a 200000-character body is up to 1.2 MB as JSON (six bytes for an escaped control character), beyond the
 * server's default limit.
 */
export const DRAFT_BODY_BYTES = 4 * 1024 * 1024

const capabilityErrors = "409 `needs_connection` when the caller has no usable connection (not connected, a scope not granted, the feature disabled by an admin, or the suite refused the stored tokens: connect again with `POST /v1/capabilities/{suite}/connection/connect`)"

/** What every capability may answer (Effect 4 has no group-wide error: each endpoint lists them). */
const capabilityGroupErrors = [NeedsConnectionResponse, ServiceUnavailableResponse, ForbiddenResponse] as const

export class CapabilitiesApi extends HttpApiGroup.make("capabilities")
  .add(
    HttpApiEndpoint.post("createMailDraft", "/v1/capabilities/suite-a/mail-drafts", {
      payload: CreateMailDraftRequest,
      success: MailDraftResult,
      error: [MailSuiteApiErrorResponse, StoredCredentialUnreadableResponse, ...capabilityGroupErrors]
    }).pipe(audits("capability.mail_draft.create"), requires("capabilities.use"))
      .annotate(MaxBodyBytes, DRAFT_BODY_BYTES)
      .annotate(OpenApi.Summary, "Create a mail draft")
      .annotate(
        OpenApi.Description,
        `Creates a draft in the caller's mailbox (\`POST me/messages\`); it never sends it. Needs the \`mailDraft\` feature and the delegated \`Mail.ReadWrite\` permission. \`to\` holds 1 to 50 addresses, \`cc\` and \`bcc\` at most 50 each; \`subject\` is trimmed, 1 to 998 characters; \`body\` is plain text of at most 200000 characters; the request may be up to 4 MiB, so any such body fits. Answers the draft as a mail message.\n\nErrors: ${capabilityErrors}; 502 \`suite_a_api_error\` when the suite fails (its status and the start of its answer in \`message\`; \`outcome: "unknown"\` when the draft may have been created although no answer came). ${storedCredentialUnreadable}`
      )
  )
  .add(
    HttpApiEndpoint.get("readMailMessage", "/v1/capabilities/suite-a/mail-message/:messageId", {
      params: MailMessagePath,
      success: MailMessageResult,
      error: [MailSuiteApiErrorResponse, StoredCredentialUnreadableResponse, ...capabilityGroupErrors]
    }).pipe(requires("capabilities.use"))
      .annotate(OpenApi.Summary, "Read a mail message")
      .annotate(
        OpenApi.Description,
        `Reads one message of the caller's mailbox with its body as plain text (\`Prefer: outlook.body-content-type="text"\`), cut at 200000 characters (\`bodyTruncated\`). Needs the \`mailRead\` feature and \`Mail.Read\` (or \`Mail.ReadWrite\`).\n\nErrors: ${capabilityErrors}; 502 \`suite_a_api_error\` when the suite fails, a missing message included (\`404\` in \`message\`). ${storedCredentialUnreadable}`
      )
  )
  .add(
    HttpApiEndpoint.patch("patchCalendarEvent", "/v1/capabilities/suite-b/calendar-event/:eventId", {
      params: CalendarEventPath,
      payload: CalendarEventPatch,
      success: CalendarEventResult,
      error: [CalendarSuiteApiErrorResponse, StoredCredentialUnreadableResponse, ...capabilityGroupErrors]
    }).pipe(audits("capability.calendar_event.update"), requires("capabilities.use"))
      .annotate(OpenApi.Summary, "Add a meeting link to an event")
      .annotate(
        OpenApi.Description,
        `With \`createMeetLink: true\`, asks the calendar to add a video-meeting link to an existing event of the caller's primary calendar (a conference request on the event itself, so no second event is created; an event that has a link keeps it). \`false\` changes nothing and answers the event as it is. Needs the \`calendarWrite\` feature and the \`calendar.events\` scope. \`meetLink\` is the event's meeting link, or the first video entry point of its conference; null while the conference is still being created.\n\nErrors: ${capabilityErrors}; 502 \`suite_b_api_error\` when the calendar fails (\`outcome: "unknown"\` when the change may have been made although no answer came). ${storedCredentialUnreadable}`
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Capabilities")
  .annotate(
    OpenApi.Description,
    "Passthroughs acting as the calling member through their own connection to a suite: a mail draft and a mail message (`suite-a`), a meeting link on a calendar event (`suite-b`). Every upstream request has a 30-second limit (`ORGPLANE_CAPABILITY_TIMEOUT`) and a 5 MiB answer limit. A suite that refuses the stored token (401, or 403 for a permission) is a 409 `needs_connection`: the server first tries a refreshed token once. All operations need credentials (401 `unauthorized`; 404 `organization_not_found`)."
  )
{}

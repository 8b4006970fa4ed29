/**
 * Capability passthroughs: a member's own delegated account at a mail suite (`suite-a`, Microsoft Graph's shapes) and
 * a calendar suite (`suite-b`, Google Calendar's), the OAuth client an admin configures for each, and what the server
 * does through them as the member: create a mail draft, read a mail message, add a video-meeting link to an event.
 */
import * as Schema from "effect/Schema"
import { MailAddress, Timestamp, TrimmedText } from "./Common.js"
import { trimmedString } from "./internal/trimmed.js"
import { UrlOf } from "./Urls.js"
import { MembershipId } from "./Ids.js"
import { ada, alan, exampleTime, grace } from "./Examples.js"
import { publishedAs } from "./internal/published.js"

// Suites and their OAuth clients --------------------------------------------------------------------------------------

/** The example: the mail suite's client, with drafting and reading mail enabled. */
const mailClient = {
  clientId: "3f6c1e2a-8d4b-4c55-9e1f-2a7b6c9d0e12",
  tenant: "organizations",
  features: ["mailDraft", "mailRead"] as Array<"mailDraft" | "mailRead">,
  scopes: ["offline_access", "Mail.ReadWrite", "Mail.Read"]
}

export const Suite = Schema.Literals(["suite-a", "suite-b"]).annotate({
  identifier: "Suite",
  description: "`suite-a`: the mail suite (Microsoft 365 through Microsoft Graph); `suite-b`: the calendar suite (Google Workspace through Google Calendar)."
})
export type Suite = typeof Suite.Type

export const SuiteFeature = Schema.Literals(["mailDraft", "mailRead", "calendarWrite"]).annotate({
  identifier: "SuiteFeature",
  description:
    "A capability an admin enables: `mailDraft` and `mailRead` on `suite-a`, `calendarWrite` on `suite-b`. Connecting asks for the scopes the enabled ones need."
})
export type SuiteFeature = typeof SuiteFeature.Type

export const SuitePath = Schema.Struct({ suite: Suite })

/** An http(s) endpoint of a suite (sovereign clouds, tests), under the URL rule. */
export const SuiteEndpointUrl = UrlOf({ absolute: "http" }, "An endpoint of the suite.", { identifier: "SuiteEndpointUrl" })

const TENANT = /^[A-Za-z0-9][A-Za-z0-9.-]{0,254}$/u

// Trimmed, then checked on the wire text with the keywords the document states (internal/trimmed.ts).
export const SuiteTenant = trimmedString(
  (text) =>
    text.length > 255
      ? "must be at most 255 characters"
      : TENANT.test(text)
      ? undefined
      : "must be a directory tenant: its id, a domain, `organizations` or `common` (letters, digits, dots and hyphens)",
  { minLength: 1, maxLength: 255, pattern: TENANT.source },
  "The suite-a directory tenant: its id (a GUID), a verified domain, `organizations` or `common`."
  // Published as this JSON Schema alone (its description not written in it).
).annotate(publishedAs({ type: "string", minLength: 1, maxLength: 255, pattern: TENANT.source }))

const optionalNull = <S extends Schema.Top>(schema: S, description: string) =>
  Schema.optionalKey(Schema.NullOr(schema)).annotateKey({ description })

/** Configuring a suite's OAuth client (PUT: the whole configuration; an omitted secret keeps the stored one). */
export const SuiteClientRequest = Schema.Struct({
  clientId: TrimmedText(1, 255, "The OAuth client (application) id registered with the suite"),
  clientSecret: optionalNull(
    Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(4096)),
    "The client secret, stored encrypted and never returned. Omitted: the stored one is kept; null: removed (a public client)."
  ),
  tenant: optionalNull(SuiteTenant, "suite-a only: the directory tenant whose accounts may connect. Default `organizations` (any work or school account)."),
  features: Schema.Array(SuiteFeature).check(
    Schema.isMaxLength(3),
    Schema.makeFilter((features) => {
      const index = features.findIndex((feature, i) => features.indexOf(feature) !== i)
      return index === -1 || { path: [index], issue: `\`${features[index]}\` is listed twice` }
    }, { toJsonSchema: () => ({ uniqueItems: true }) })
  ).annotate({
    description: "The capabilities enabled; each at most once and belonging to the suite. Empty: nothing can be used or connected."
  }),
  authorizationEndpoint: optionalNull(SuiteEndpointUrl, "The authorization endpoint. Default: the suite's (suite-a's for the tenant)."),
  tokenEndpoint: optionalNull(SuiteEndpointUrl, "The token endpoint. Default: the suite's (suite-a's for the tenant)."),
  apiBaseUrl: optionalNull(
    SuiteEndpointUrl,
    "The API base URL. Default `https://graph.microsoft.com/v1.0` (suite-a), `https://www.googleapis.com` (suite-b)."
  )
}).annotate({
  identifier: "SuiteClientRequest",
  examples: [{ clientId: mailClient.clientId, clientSecret: "Q8x~client-secret-from-the-suite", tenant: mailClient.tenant, features: mailClient.features }]
})
export type SuiteClientRequest = typeof SuiteClientRequest.Type

export class SuiteClient extends Schema.Class<SuiteClient>("SuiteClient")(Schema.Struct({
  suite: Suite,
  clientId: Schema.String,
  hasClientSecret: Schema.Boolean,
  tenant: Schema.NullOr(Schema.String).annotate({ description: "suite-a's tenant; null on suite-b." }),
  features: Schema.Array(SuiteFeature),
  authorizationEndpoint: Schema.String.annotate({ description: "The endpoint in use (the configured one or the default)." }),
  tokenEndpoint: Schema.String,
  apiBaseUrl: Schema.String,
  redirectUri: Schema.String.annotate({ description: "The redirect URI to register with the suite for this client." }),
  scopes: Schema.Array(Schema.String).annotate({ description: "The scopes connecting asks for with the enabled features." }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  updatedByOrgMembershipId: Schema.NullOr(MembershipId)
}).annotate({
  examples: [{
    suite: "suite-a",
    clientId: mailClient.clientId,
    hasClientSecret: true,
    tenant: mailClient.tenant,
    features: mailClient.features,
    authorizationEndpoint: "https://login.microsoftonline.com/organizations/oauth2/v2.0/authorize",
    tokenEndpoint: "https://login.microsoftonline.com/organizations/oauth2/v2.0/token",
    apiBaseUrl: "https://graph.microsoft.com/v1.0",
    redirectUri: "https://orgplane.acme.example/v1/capabilities/oauth/callback",
    scopes: mailClient.scopes,
    createdAt: exampleTime(700),
    updatedAt: exampleTime(700),
    updatedByOrgMembershipId: ada.membershipId
  }]
})) {}

// A member's connection ------------------------------------------------------------------------------------------------

export const SuiteConnectionStatus = Schema.Literals(["not_connected", "connected", "reconnect_required"]).annotate({
  identifier: "SuiteConnectionStatus",
  description:
    "`connected`: tokens are stored; `reconnect_required`: the suite refused them (revoked, expired refresh): connect again; `not_connected`: none."
})

export const SuiteFeatureState = Schema.Struct({
  feature: SuiteFeature,
  enabled: Schema.Boolean.annotate({ description: "The admin enabled it." }),
  granted: Schema.Boolean.annotate({ description: "The caller's connection holds every scope it needs." })
}).annotate({ identifier: "SuiteFeatureState" })

export class SuiteConnection extends Schema.Class<SuiteConnection>("SuiteConnection")(Schema.Struct({
  suite: Suite,
  configured: Schema.Boolean.annotate({ description: "An admin configured the suite's OAuth client." }),
  status: SuiteConnectionStatus,
  grantedScopes: Schema.Array(Schema.String),
  features: Schema.Array(SuiteFeatureState).annotate({ description: "The suite's features: enabled, and granted to this connection." }),
  connectedAt: Schema.NullOr(Timestamp),
  accessTokenExpiresAt: Schema.NullOr(Timestamp).annotate({ description: "Refreshed before use when a refresh token is held." })
}).annotate({
  examples: [{
    suite: "suite-a",
    configured: true,
    status: "connected",
    grantedScopes: mailClient.scopes,
    features: [
      { feature: "mailDraft", enabled: true, granted: true },
      { feature: "mailRead", enabled: true, granted: true }
    ],
    connectedAt: exampleTime(710),
    accessTokenExpiresAt: exampleTime(770)
  }]
})) {}

export const SuiteConnectResult = Schema.Struct({
  status: Schema.Literals(["connected", "needs_auth"]),
  authorizeUrl: Schema.NullOr(Schema.String).annotate({
    description: "With `needs_auth`: the suite's page to open in a browser (valid 10 minutes, once). Null with `connected`."
  }),
  scopes: Schema.Array(Schema.String).annotate({ description: "The scopes asked for." })
}).annotate({
  identifier: "SuiteConnectResult",
  examples: [{
    status: "needs_auth",
    authorizeUrl: `https://login.microsoftonline.com/organizations/oauth2/v2.0/authorize?response_type=code&client_id=${mailClient.clientId}&scope=offline_access%20Mail.ReadWrite%20Mail.Read&state=eyJ2IjoxfQ.p2Qs`,
    scopes: mailClient.scopes
  }]
})
export type SuiteConnectResult = typeof SuiteConnectResult.Type

export const SuiteCallbackResult = Schema.Struct({
  ok: Schema.Literal(true),
  suite: Suite,
  status: Schema.Literal("connected"),
  grantedFeatures: Schema.Array(SuiteFeature).annotate({ description: "The enabled features the granted scopes cover." })
}).annotate({ identifier: "SuiteCallbackResult", examples: [{ ok: true, suite: "suite-a", status: "connected", grantedFeatures: mailClient.features }] })

export const SuiteDisconnectResult = Schema.Struct({
  ok: Schema.Literal(true),
  removed: Schema.Boolean.annotate({ description: "Whether there was a connection to drop." })
}).annotate({ identifier: "SuiteDisconnectResult", examples: [{ ok: true, removed: true }] })

// Mail (suite-a) -------------------------------------------------------------------------------------------------------

export const MAIL_BODY_MAX = 200_000

const Recipients = (min: 0 | 1, description: string) =>
  (min === 1 ? Schema.Array(MailAddress).check(Schema.isMinLength(1), Schema.isMaxLength(50)) : Schema.Array(MailAddress).check(Schema.isMaxLength(50)))
    .annotate({ description })

export const CreateMailDraftRequest = Schema.Struct({
  to: Recipients(1, "1 to 50 addresses."),
  subject: TrimmedText(1, 998, "The subject"),
  body: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(MAIL_BODY_MAX))).annotateKey({
    description: "Plain text, at most 200000 characters. Default empty."
  }),
  cc: Schema.optionalKey(Recipients(0, "At most 50 addresses.")),
  bcc: Schema.optionalKey(Recipients(0, "At most 50 addresses."))
}).annotate({
  identifier: "CreateMailDraftRequest",
  examples: [{
    to: [grace.email],
    subject: "Staging credentials rotated",
    body: "Hi Grace,\n\nThe staging credentials were rotated this morning; the new ones are in the vault.\n\nAda",
    cc: [alan.email]
  }]
})
export type CreateMailDraftRequest = typeof CreateMailDraftRequest.Type

export const MailRecipient = Schema.Struct({ name: Schema.String, address: Schema.String }).annotate({
  identifier: "MailRecipient",
  examples: [{ name: ada.name, address: ada.email }]
})

export class MailMessage extends Schema.Class<MailMessage>("MailMessage")(Schema.Struct({
  id: Schema.String,
  conversationId: Schema.String,
  subject: Schema.String,
  receivedDateTime: Schema.String,
  preview: Schema.String,
  from: Schema.NullOr(MailRecipient),
  to: Schema.Array(MailRecipient),
  webLink: Schema.String,
  hasAttachments: Schema.Boolean,
  cc: Schema.Array(MailRecipient),
  body: Schema.String,
  bodyContentType: Schema.String,
  bodyTruncated: Schema.Boolean.annotate({ description: "The body was cut at 200000 characters." })
}).annotate({ examples: [{
  id: "AAMkAGI2TG93AAA=",
  conversationId: "AAQkAGI2TAAA=",
  subject: "Staging credentials rotated",
  receivedDateTime: "2026-11-02T11:05:00Z",
  preview: "The staging credentials were rotated this morning; the new ones are in the vault.",
  from: { name: grace.name, address: grace.email },
  to: [{ name: ada.name, address: ada.email }],
  webLink: "https://outlook.office365.com/owa/?ItemID=AAMkAGI2TG93AAA%3D&exvsurl=1&viewmodel=ReadMessageItem",
  hasAttachments: false,
  cc: [],
  body: "Hi Ada,\n\nThe staging credentials were rotated this morning; the new ones are in the vault.\n\nGrace",
  bodyContentType: "text",
  bodyTruncated: false
}] })) {}

export const MailDraftResult = Schema.Struct({ ok: Schema.Literal(true), draft: MailMessage }).annotate({ identifier: "MailDraftResult" })
export const MailMessageResult = Schema.Struct({ ok: Schema.Literal(true), message: MailMessage }).annotate({
  identifier: "MailMessageResult"
})

export const MailMessageId = Schema.String.check(
  Schema.makeFilter((id: string) => {
    if (id.length < 1 || id.length > 512) return "must be 1 to 512 characters"
    if (/[\s/\\?#]/.test(id)) return "must not contain white space, `/`, `\\`, `?` or `#`"
    if (id === "." || id === "..") return "must not be `.` or `..`"
    return true
  }, { toJsonSchema: () => ({ minLength: 1, maxLength: 512, pattern: "^(?!\\.\\.?$)[^\\s/\\\\?#\\u0000]+$" }) })
).annotate({
  description: "The suite's message id: 1 to 512 characters, no white space, `/`, `\\`, `?` or `#`, not `.` or `..`.",
  // Published as this JSON Schema alone (its description not written in it).
  ...publishedAs({ type: "string", minLength: 1, maxLength: 512, pattern: "^(?!\\.\\.?$)[^\\s/\\\\?#\\u0000]+$" })
})
export const MailMessagePath = Schema.Struct({ messageId: MailMessageId }).annotate({
  examples: [{ messageId: "AAMkAGI2TG93AAA=" }]
})

// Calendar (suite-b) ---------------------------------------------------------------------------------------------------

export const CalendarEventPath = Schema.Struct({
  eventId: TrimmedText(1, 512, "The primary calendar's event id")
}).annotate({ examples: [{ eventId: "7kq0d2v5e1m8s9b3c4n6p0r2t4" }] })

export const CalendarEventPatch = Schema.Struct({
  createMeetLink: Schema.Boolean.annotate({
    description: "true: add a video-meeting link (kept if the event has one); false: change nothing and answer the event as it is."
  })
}).annotate({ identifier: "CalendarEventPatch", examples: [{ createMeetLink: true }] })
export type CalendarEventPatch = typeof CalendarEventPatch.Type

export const CalendarEventResult = Schema.Struct({
  ok: Schema.Literal(true),
  eventId: Schema.String,
  htmlLink: Schema.String,
  summary: Schema.String,
  start: Schema.String.annotate({ description: "The start's date-time, or its date for an all-day event." }),
  end: Schema.String,
  meetLink: Schema.NullOr(Schema.String).annotate({
    description: "The video-meeting link; null while the suite has not created it yet (its conference request is pending)."
  })
}).annotate({
  identifier: "CalendarEventResult",
  examples: [{
    ok: true,
    eventId: "7kq0d2v5e1m8s9b3c4n6p0r2t4",
    htmlLink: "https://www.google.com/calendar/event?eid=N2txMGQydjVlMW04czliM2M0bjZwMHIydDQgYWRhQGFjbWUuZXhhbXBsZQ",
    summary: "Release review",
    start: "2026-11-03T15:00:00+01:00",
    end: "2026-11-03T15:30:00+01:00",
    meetLink: "https://meet.google.com/abc-mnop-xyz"
  }]
})
export type CalendarEventResult = typeof CalendarEventResult.Type

/**
 * The audit log: one event per change an operation made in an organization, and per privileged attempt it refused,
 * written in the transaction of the change (see `AuditCatalog.ts` for the actions and each operation's declaration).
 */
import * as Schema from "effect/Schema"
import { AuditActions } from "./AuditCatalog.js"
import { AuditChannel } from "./CallerHeaders.js"
import { Int, Timestamp } from "./Common.js"
import { ada, acme, exampleTime } from "./Examples.js"
import { AuditEventId, exampleId, MembershipId, OrganizationId, SsoConnectionId } from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"

const actionNames = Object.keys(AuditActions) as Array<keyof typeof AuditActions>

export const AuditActionName = Schema.Literals(actionNames).annotate({
  identifier: "AuditAction",
  description: "What happened, from the closed catalog of `GET /v1/audit/event-types`: `<resource>.<verb>`, so a prefix selects a family."
})

export const AuditCategoryName = Schema.Literals(["change", "security", "access", "execution"]).annotate({
  identifier: "AuditCategory",
  description:
    "`change`: state of the organization changed; `security`: sign-in, credentials, SSO and SCIM settings; `access`: protected data was read (a credential); `execution`: something was run (a sync, a test, a tool)."
})

export const AuditOutcome = Schema.Literals(["succeeded", "denied", "failed"]).annotate({
  identifier: "AuditOutcome",
  description:
    "`succeeded`: the change was made (the event committed with it); `denied`: the caller lacked the role or access, and nothing changed; `failed`: a security attempt failed (a sign-in with a wrong password), and nothing changed."
})
export type AuditOutcome = typeof AuditOutcome.Type

export const AuditActorType = Schema.Literals(["user", "api_key", "scim", "worker", "system", "anonymous"]).annotate({
  identifier: "AuditActorType",
  description:
    "`user`: a person with a session; `api_key`: an organization API key (acting as the member who made it); `scim`: a directory through a SCIM connection; `worker`: a worker's runtime; `system`: the server's own background work; `anonymous`: someone not identified, in a sign-in through the organization's SSO that failed (`id` is `anonymous`; `label` is the email the identity provider vouched for, when its answer was valid)."
})
export type AuditActorType = typeof AuditActorType.Type

export const AuditActor = Schema.Struct({
  type: AuditActorType,
  id: Schema.String.annotate({
    description: "The person's user id (`usr_`), the API key's (`apk_`), the SCIM connection's (`scc_`), the worker's (`wrk_`), or `system:<job>`."
  }),
  membershipId: Schema.NullOr(MembershipId).annotate({ description: "The member who acted (for an API key, the member who made it); null for the system, a directory or a worker." }),
  label: Schema.NullOr(Schema.String).annotate({ description: "A display name at the time of the event: the person's name and email, the key's name." })
}).annotate({ identifier: "AuditActor" })

export const AuditVia = Schema.Struct({
  credentialId: Schema.NullOr(Schema.String).annotate({ description: "The session (`ses_`), API key (`apk_`), SCIM token (`sct_`) or worker token that authenticated the request." }),
  ssoConnectionId: Schema.NullOr(SsoConnectionId).annotate({ description: "The SSO connection that signed in the session, for a session made by SSO." }),
  ip: Schema.NullOr(Schema.String).annotate({ description: "The client's address as the server saw it (see `ORGPLANE_TRUST_PROXY`)." }),
  userAgent: Schema.NullOr(Schema.String).annotate({ description: "The request's `User-Agent`, at most 512 characters." }),
  channel: AuditChannel,
  planHash: Schema.NullOr(Schema.String).annotate({
    description: "For a change an organization document's apply made (`POST /v1/organization/document/apply`): the applied plan's `planHash`; null otherwise."
  })
}).annotate({ identifier: "AuditVia", description: "How the actor came in." })

export const AuditTarget = Schema.Struct({
  type: Schema.String.annotate({ description: "The kind of resource: `member`, `team`, `api_key`, `sso_connection`, ... (the id's kind)." }),
  id: Schema.String
}).annotate({ identifier: "AuditTarget" })

/** What marks a secret's value in `changes`: the value itself is never stored. */
export const AUDIT_REDACTED = "[redacted]"

export const AuditChanges = Schema.Struct({
  before: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)).annotate({
    description: "The resource as the API showed it before the change (its changed fields only); null for a creation."
  }),
  after: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)).annotate({
    description: "The same fields after the change; null for a deletion."
  }),
  changedFields: Schema.Array(Schema.String).annotate({
    description: `The top-level fields that changed, \`updatedAt\` aside. A secret that changed (an API key, a client secret) is named here and shown as \`"${AUDIT_REDACTED}"\` on both sides: its value is never stored.`
  })
}).annotate({ identifier: "AuditChanges", description: "Before and after, for an operation that changed an existing resource." })
export type AuditChanges = typeof AuditChanges.Type

export class AuditEvent extends Schema.Class<AuditEvent>("AuditEvent")(Schema.Struct({
  id: AuditEventId,
  organizationId: OrganizationId,
  occurredAt: Timestamp,
  action: AuditActionName,
  category: AuditCategoryName,
  outcome: AuditOutcome,
  actor: AuditActor,
  via: AuditVia,
  targets: Schema.Array(AuditTarget).annotate({
    description: "What the operation acted on: the resources its path names and the one it created, in that order."
  }),
  changes: Schema.NullOr(AuditChanges).annotate({
    description: "For an update: the changed fields before and after, secrets redacted. Null when the operation made, removed or ran something (the targets say what)."
  }),
  reason: Schema.NullOr(Schema.String).annotate({
    description: "For `denied`: the refusal's code (`insufficient_role`, `insufficient_access`, ...); for `failed`: why (`invalid_password`; `rate_limited` when the sign-in throttle refused the attempt); for `audit.export`: the export's query (`format=csv&action=member.*`); for `user.password.reset`: who issued the link (`link issued by Ada Lovelace <ada@acme.example>`)."
  }),
  requestId: Schema.NullOr(Schema.String).annotate({ description: "The request's `x-request-id`, as its log line carries it." })
}).annotate({
  description: "Who did what, when, through which credential.",
  examples: [{
    id: exampleId("aev"),
    organizationId: acme.id,
    occurredAt: exampleTime(12),
    action: "member.role.update",
    category: "change",
    outcome: "succeeded",
    actor: { type: "user", id: ada.userId, membershipId: ada.membershipId, label: `${ada.name} <${ada.email}>` },
    via: { credentialId: exampleId("ses"), ssoConnectionId: null, ip: "203.0.113.7", userAgent: "orgplane-cli/0.1.0", channel: "api", planHash: null },
    targets: [{ type: "member", id: exampleId("om", 3) }],
    changes: { before: { role: "member" }, after: { role: "admin" }, changedFields: ["role"] },
    reason: null,
    requestId: "9b2f4c1e-5d7a-4f0b-8e21-3c6d9a0f1b2c"
  }]
})) {}

export const AuditEventResponse = Schema.Struct({ event: AuditEvent })

export const AuditEventPage = Page(AuditEvent).annotate({ identifier: "AuditEventPage" })

export const AuditEventPath = Schema.Struct({ eventId: AuditEventId })

/** `member.role.update`, or a family: `member.*`, `sso.connection.*`. */
const ActionFilter = Schema.String.check(
  Schema.isPattern(/^[a-z_]+(\.[a-z_]+)*(\.\*)?$/u),
  Schema.isMaxLength(100)
).annotate({
  description: "An action (`member.role.update`), or a family ending in `.*` (`member.*`, `sso.connection.*`)."
})

/** An id or request id a filter names: 1 to 100 characters. */
const FilterId = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))

/** The filters the list and the export share. */
const AuditFilterFields = {
  from: Schema.optionalKey(Timestamp).annotateKey({ description: "Events at or after this instant." }),
  to: Schema.optionalKey(Timestamp).annotateKey({ description: "Events before this instant." }),
  action: Schema.optionalKey(ActionFilter),
  actorId: Schema.optionalKey(FilterId.annotate({
    description: "Events of one actor: a user id, API key id, SCIM connection id or worker id.",
    examples: [ada.userId]
  })),
  targetId: Schema.optionalKey(FilterId.annotate({
    description: "Events that acted on one resource, by its id.",
    examples: [exampleId("om", 3)]
  })),
  outcome: Schema.optionalKey(AuditOutcome),
  credentialId: Schema.optionalKey(FilterId.annotate({
    description: "Events of one credential: a session (`ses_`), API key (`apk_`), SCIM token or worker token, as `via.credentialId` shows it.",
    examples: [exampleId("apk")]
  })),
  requestId: Schema.optionalKey(FilterId.annotate({
    description: "The events of one request, by the `x-request-id` its answer carried (a support case quotes it).",
    examples: ["9b2f4c1e-5d7a-4f0b-8e21-3c6d9a0f1b2c"]
  }))
}

export type AuditFilters = Schema.Struct.Type<typeof AuditFilterFields>

export const AuditEventsQuery = Schema.Struct({
  ...PageQueryFields,
  ...AuditFilterFields,
  order: Schema.optionalKey(Schema.Literals(["desc", "asc"])).annotateKey({
    description:
      "`desc` (default): newest first; `asc`: oldest first, to follow the log: every `asc` page carries a `nextCursor` (after its last event, or the one given while nothing newer is there), so a client keeps the last one and asks again for what came since. Events are ordered by `occurredAt`, taken as the change starts, and appear when it commits: one of a change that took long to commit may land before the cursor of a follower that read in between (audit streams wait for open transactions; see the server README)."
  })
}).annotate({ examples: [{ action: "member.*", outcome: "succeeded" }] })
export type AuditEventsQuery = typeof AuditEventsQuery.Type

export const AuditExportFormat = Schema.Literals(["ndjson", "csv"]).annotate({
  identifier: "AuditExportFormat",
  description: "`ndjson`: one event per line, as the API shows it (`application/x-ndjson`); `csv`: one row per event (`text/csv`), a header row first."
})
export type AuditExportFormat = typeof AuditExportFormat.Type

export const AuditExportQuery = Schema.Struct({
  format: AuditExportFormat,
  ...AuditFilterFields
}).annotate({ examples: [{ format: "ndjson", action: "sso.*" }] })
export type AuditExportQuery = typeof AuditExportQuery.Type

/** The columns of the CSV export, in order. */
export const AUDIT_CSV_COLUMNS = [
  "id",
  "occurredAt",
  "action",
  "category",
  "outcome",
  "actorType",
  "actorId",
  "actorMembershipId",
  "actorLabel",
  "credentialId",
  "ssoConnectionId",
  "ip",
  "userAgent",
  "targets",
  "changedFields",
  "changes",
  "reason",
  "requestId",
  "channel",
  "planHash"
] as const

/** How long events are kept by default, and the bounds an organization may choose between. */
export const AUDIT_RETENTION_DEFAULT_DAYS = 365
export const AUDIT_RETENTION_MIN_DAYS = 7
export const AUDIT_RETENTION_MAX_DAYS = 3650

export const RetentionDays = Int.check(Schema.isBetween({ minimum: AUDIT_RETENTION_MIN_DAYS, maximum: AUDIT_RETENTION_MAX_DAYS })).annotate({
  description: `Days an event is kept, ${AUDIT_RETENTION_MIN_DAYS} to ${AUDIT_RETENTION_MAX_DAYS} (${AUDIT_RETENTION_DEFAULT_DAYS} unless set): a daily job deletes older ones.`
})

export class AuditSettings extends Schema.Class<AuditSettings>("AuditSettings")(Schema.Struct({
  retentionDays: RetentionDays,
  updatedAt: Schema.NullOr(Timestamp).annotate({ description: "When an owner last changed them; null while they are the defaults." })
}).annotate({
  description: "The organization's audit log settings.",
  examples: [{ retentionDays: 400, updatedAt: exampleTime(30) }]
})) {}

export const AuditSettingsResponse = Schema.Struct({ settings: AuditSettings })

export const UpdateAuditSettingsRequest = Schema.Struct({ retentionDays: RetentionDays }).annotate({
  examples: [{ retentionDays: 400 }]
})

export const AuditEventType = Schema.Struct({
  action: AuditActionName,
  category: AuditCategoryName,
  description: Schema.String
}).annotate({ identifier: "AuditEventType" })

export const AuditEventTypes = Schema.Struct({ items: Schema.Array(AuditEventType) }).annotate({
  identifier: "AuditEventTypes",
  examples: [{ items: [{ action: "member.role.update", category: "change", description: AuditActions["member.role.update"].description }] }]
})

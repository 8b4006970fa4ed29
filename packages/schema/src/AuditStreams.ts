/**
 * Audit log streaming: endpoints an organization registers to receive its audit events, in batches, signed with a
 * per-stream secret (shown once, on create and on rotation), delivered in order and retried with backoff; each
 * stream's delivery status is readable by owners and admins. See the server README, "Audit log: streaming".
 */
import * as Schema from "effect/Schema"
import { Int, Timestamp, TrimmedText } from "./Common.js"
import { UrlOf } from "./Urls.js"
import { ada, acme, exampleTime, exampleToken } from "./Examples.js"
import { AuditEventId, AuditStreamDeliveryId, AuditStreamId, exampleId, MembershipId, OrganizationId } from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"

/** Streams one organization may have. */
export const MAX_AUDIT_STREAMS = 5

/** Events sent in one delivery, at most. */
export const AUDIT_STREAM_BATCH = 100

/** The header carrying a delivery's signature: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`. */
export const AUDIT_STREAM_SIGNATURE_HEADER = "orgplane-signature"

/** The header naming a delivery: the same for every attempt of one batch, so a receiver may drop a repeat. */
export const AUDIT_STREAM_DELIVERY_HEADER = "orgplane-delivery-id"

/**
 * The receiving endpoint, under the URL rule. The server also refuses `http` and non-public addresses unless private
 * URLs are allowed (`ORGPLANE_OUTBOUND_ALLOW_PRIVATE`).
 */
export const AuditStreamUrl = UrlOf(
  { absolute: "http" },
  "The endpoint that receives the batches, by `POST`: every address of its host must be public (unless private URLs are allowed). Redirects are not followed.",
  { identifier: "AuditStreamUrl" }
)

export const AuditStreamDescription = TrimmedText(1, 255, "What the endpoint is, for people (a SIEM, a bucket's collector)")

export const AuditStreamStatus = Schema.Literals(["active", "paused"]).annotate({
  identifier: "AuditStreamStatus",
  description:
    "`active`: events are delivered; `paused`: nothing is sent, the position is kept, and resuming sends what happened meanwhile (events the retention has not deleted)."
})
export type AuditStreamStatus = typeof AuditStreamStatus.Type

export const AuditStreamDelivery = Schema.Struct({
  lastDeliveredEventId: Schema.NullOr(AuditEventId).annotate({
    description: "The last event the endpoint acknowledged (a 2xx answer); null before the first delivery. Later events follow it."
  }),
  lastDeliveredAt: Schema.NullOr(Timestamp).annotate({ description: "That event's `occurredAt`." }),
  lastAttemptAt: Schema.NullOr(Timestamp).annotate({ description: "When a delivery was last sent, acknowledged or not." }),
  lastSuccessAt: Schema.NullOr(Timestamp).annotate({ description: "When the endpoint last acknowledged a delivery." }),
  consecutiveFailures: Schema.Int.annotate({
    description: "Attempts that failed since the last success; each failure doubles the wait before the next attempt, up to a cap."
  }),
  lastError: Schema.NullOr(Schema.String).annotate({
    description: "Why the last attempt failed (`HTTP 503`, `timeout`, `network: ECONNREFUSED`, `blocked: ...`); null after a success."
  }),
  nextAttemptAt: Schema.NullOr(Timestamp).annotate({
    description: "When the next attempt is due (while failing, after the backoff); null while paused."
  })
}).annotate({ identifier: "AuditStreamDelivery", description: "How delivery goes." })

export class AuditStream extends Schema.Class<AuditStream>("AuditStream")(Schema.Struct({
  id: AuditStreamId,
  organizationId: OrganizationId,
  url: Schema.String.annotate({ description: "The endpoint receiving the batches." }),
  description: Schema.NullOr(Schema.String),
  status: AuditStreamStatus,
  delivery: AuditStreamDelivery,
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({
  description: "An endpoint that receives the organization's audit events. Its signing secret is shown only when it is made.",
  examples: [{
    id: exampleId("ast"),
    organizationId: acme.id,
    url: "https://siem.acme.example/ingest/orgplane",
    description: "Splunk HEC collector",
    status: "active",
    delivery: {
      lastDeliveredEventId: exampleId("aev"),
      lastDeliveredAt: exampleTime(12),
      lastAttemptAt: exampleTime(13),
      lastSuccessAt: exampleTime(13),
      consecutiveFailures: 0,
      lastError: null,
      nextAttemptAt: exampleTime(13)
    },
    createdByOrgMembershipId: ada.membershipId,
    createdAt: exampleTime(5),
    updatedAt: exampleTime(5)
  }]
})) {}

export const AuditStreamResponse = Schema.Struct({ stream: AuditStream }).annotate({ identifier: "AuditStreamResponse" })

export const AuditStreamPage = Page(AuditStream).annotate({ identifier: "AuditStreamPage" })

export const AuditStreamListQuery = Schema.Struct(PageQueryFields).annotate({ examples: [{ limit: 5 }] })
export type AuditStreamListQuery = typeof AuditStreamListQuery.Type

export const AuditStreamPath = Schema.Struct({ streamId: AuditStreamId })

const AuditStreamSecret = Schema.String.annotate({
  description:
    "The signing secret, shown only in this answer: keep it where the receiver can read it. Each delivery carries `Orgplane-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\" keyed by this secret's UTF-8 bytes>`.",
  examples: [exampleToken("whsec")]
})

/** A stream with its secret: the answer of create and rotate-secret, the only ones that show it. */
export const AuditStreamWithSecret = Schema.Struct({
  stream: AuditStream,
  secret: AuditStreamSecret
}).annotate({ identifier: "AuditStreamWithSecret" })

export const CreateAuditStreamRequest = Schema.Struct({
  url: AuditStreamUrl,
  description: Schema.optionalKey(AuditStreamDescription),
  status: Schema.optionalKey(AuditStreamStatus).annotateKey({ description: "`active` (default) or `paused`." })
}).annotate({
  examples: [{ url: "https://siem.acme.example/ingest/orgplane", description: "Splunk HEC collector" }]
})
export type CreateAuditStreamRequest = typeof CreateAuditStreamRequest.Type

export const UpdateAuditStreamRequest = Schema.Struct({
  url: Schema.optionalKey(AuditStreamUrl),
  description: Schema.optionalKey(Schema.NullOr(AuditStreamDescription)).annotateKey({
    description: "A new description; null removes it."
  }),
  status: Schema.optionalKey(AuditStreamStatus).annotateKey({
    description: "`paused` stops delivery where it is; `active` resumes it at once, failures forgotten."
  })
}).check(
  Schema.makeFilter((body) => Object.keys(body).length > 0 || "give url, description, status or several", {
    toJsonSchema: () => ({ minProperties: 1 })
  })
).annotate({ examples: [{ status: "paused" }] })
export type UpdateAuditStreamRequest = typeof UpdateAuditStreamRequest.Type

export const AuditStreamTestResult = Schema.Struct({
  delivered: Schema.Boolean.annotate({ description: "Whether the endpoint acknowledged the ping with a 2xx answer." }),
  status: Schema.NullOr(Int).annotate({ description: "The endpoint's HTTP status; null when there was no answer." }),
  error: Schema.NullOr(Schema.String).annotate({ description: "Why it was not delivered, as `delivery.lastError` words it; null when delivered." }),
  deliveryId: AuditStreamDeliveryId.annotateKey({ description: "The ping's `Orgplane-Delivery-Id`." })
}).annotate({
  identifier: "AuditStreamTestResult",
  examples: [{ delivered: true, status: 200, error: null, deliveryId: exampleId("asd") }]
})

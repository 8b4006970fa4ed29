/** Organizations, their plans, profile (logo, metadata) and deletion, and memberships with their roles. */
import * as Schema from "effect/Schema"
import { BooleanFromString, Int, NO_NUL_PATTERN, searchText, Timestamp, TrimmedText } from "./Common.js"
import { MembershipId, OrganizationId, UserId } from "./Ids.js"
import { acme, ada, exampleTime, exampleToken } from "./Examples.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { UrlOf } from "./Urls.js"
import { publishedAs } from "./internal/published.js"

export const Role = Schema.Literals(["owner", "admin", "member"]).annotate({
  identifier: "Role",
  description: "Organization role. `owner` > `admin` > `member`: a role may do everything the roles below it may."
})
export type Role = typeof Role.Type

export const Plan = Schema.Literals(["free", "team", "enterprise"]).annotate({
  identifier: "Plan",
  description: "Organization plan. Enterprise-only features answer 402 `enterprise_plan_required` on other plans."
})
export type Plan = typeof Plan.Type

export const OrganizationName = TrimmedText(2, 120, "Organization name")

/** Acme as `Organization` shows it, in the examples of every resource that carries an organization's fields. */
const acmeOrganization = { id: acme.id, name: acme.name, plan: "team", provisional: false, createdAt: exampleTime() } as const

export class Organization extends Schema.Class<Organization>("Organization")(Schema.Struct({
  id: OrganizationId,
  name: Schema.String,
  plan: Plan,
  provisional: Schema.Boolean.annotate({
    description: "True for a workspace created by bootstrap whose owner claim has not been redeemed yet."
  }),
  createdAt: Timestamp
}).annotate({ examples: [acmeOrganization] })) {}

export class Membership extends Schema.Class<Membership>("Membership")(Schema.Struct({
  id: MembershipId,
  organizationId: OrganizationId,
  userId: Schema.NullOr(UserId),
  role: Role,
  createdAt: Timestamp
}).annotate({
  examples: [{ id: ada.membershipId, organizationId: acme.id, userId: ada.userId, role: "owner", createdAt: exampleTime() }]
})) {}

export const CreateOrganizationRequest = Schema.Struct({ name: OrganizationName }).annotate({
  examples: [{ name: acme.name }]
})

export const OrganizationWithMembership = Schema.Struct({
  organization: Organization,
  membership: Membership
}).annotate({ identifier: "OrganizationWithMembership" })

export const ChangePlanRequest = Schema.Struct({ plan: Plan }).annotate({ examples: [{ plan: "enterprise" }] })

export const ClaimOperatorRequest = Schema.Struct({
  setupToken: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(512)).annotate({
    description:
      "The instance's one-time setup token: `ORGPLANE_SETUP_TOKEN`, or the one the server logs at its start while nothing names the operator."
  })
}).annotate({ examples: [{ setupToken: exampleToken("opsetup") }] })

// The organization's profile: what `GET /v1/organization` answers and `PATCH /v1/organization` changes. Its logo and
// metadata are not members of `Organization`, which every sign-in, `GET /v1/me` and list carries and which
// authentication reads on every request: they are read where they are asked for (docs/lifecycle.md).

/** The organization's logo: an https URL, or a path on this service (`/logos/acme.png`), under the URL rule. */
export const OrganizationLogoUrl = UrlOf({ absolute: "https", path: true }, "The organization's logo.")

export const ORGANIZATION_METADATA_MAX_KEYS = 50
export const ORGANIZATION_METADATA_KEY_MAX = 40
export const ORGANIZATION_METADATA_VALUE_MAX = 500
const METADATA_KEY = /^[A-Za-z0-9_.:-]{1,40}$/

/** What is wrong with a metadata object, member by member (JSON Schema cannot say all of it about a map's keys). */
const metadataProblems = (metadata: Readonly<Record<string, string>>) => {
  const keys = Object.keys(metadata)
  if (keys.length > ORGANIZATION_METADATA_MAX_KEYS) return `must have at most ${ORGANIZATION_METADATA_MAX_KEYS} keys`
  const issues = keys.flatMap((key) => {
    const value = metadata[key]!
    if (!METADATA_KEY.test(key)) return [{ path: [key], issue: `is not a metadata key: 1 to ${ORGANIZATION_METADATA_KEY_MAX} letters, digits, '_', '.', ':' or '-'` }]
    if (value.length > ORGANIZATION_METADATA_VALUE_MAX) return [{ path: [key], issue: `must be at most ${ORGANIZATION_METADATA_VALUE_MAX} characters` }]
    if (value.includes("\u0000")) return [{ path: [key], issue: "must not contain the NUL character (U+0000)" }]
    return []
  })
  return issues.length > 0 ? issues : true
}

/** The organization's metadata as a request gives it: a small JSON object of string values, checked. */
export const OrganizationMetadata = Schema.Record(Schema.String, Schema.String).annotate({
  description:
    `The organization's own key-value pairs for its tools (a billing account, a cost center): at most ${ORGANIZATION_METADATA_MAX_KEYS} keys of 1 to ${ORGANIZATION_METADATA_KEY_MAX} letters, digits, \`_\`, \`.\`, \`:\` or \`-\`, each with a string value of at most ${ORGANIZATION_METADATA_VALUE_MAX} characters (no NUL). Members read it: keep secrets out.`,
  examples: [{ costCenter: "R&D-42", billingAccount: "acct_1029" }]
}).check(
  // The keys are checked here (which JSON Schema cannot say of a map's keys): documented with its bounds.
  Schema.makeFilter(metadataProblems, { toJsonSchema: () => ({ maxProperties: ORGANIZATION_METADATA_MAX_KEYS }) })
).annotate({
  identifier: "OrganizationMetadata",
  // Published as an open object with its bounds (its description and examples not written in it).
  ...publishedAs({ type: "object", additionalProperties: true, maxProperties: ORGANIZATION_METADATA_MAX_KEYS })
})

export class OrganizationDetails extends Schema.Class<OrganizationDetails>("OrganizationDetails")(Schema.Struct({
  ...Organization.fields,
  logoUrl: Schema.NullOr(Schema.String).annotate({ description: "The organization's logo (an https URL or a path on this service), or null." }),
  metadata: Schema.Record(Schema.String, Schema.String).annotate({
    description: "The organization's own key-value pairs (`{}` when none)."
  }),
  memberCount: Schema.Int.annotate({ description: "Its active members (suspended ones included, removed ones not)." }),
  updatedAt: Timestamp
}).annotate({
  examples: [{
    ...acmeOrganization,
    logoUrl: "https://cdn.acme.example/logo.png",
    metadata: { costCenter: "R&D-42" },
    memberCount: 3,
    updatedAt: exampleTime(30)
  }]
})) {}

export const OrganizationDetailsResponse = Schema.Struct({ organization: OrganizationDetails }).annotate({
  identifier: "OrganizationDetailsResponse"
})

export const UpdateOrganizationRequest = Schema.Struct({
  name: Schema.optionalKey(OrganizationName),
  logoUrl: Schema.optionalKey(Schema.NullOr(OrganizationLogoUrl)).annotateKey({ description: "The new logo, or null for none." }),
  metadata: Schema.optionalKey(OrganizationMetadata).annotateKey({
    description: "Replaces the whole metadata object (`{}` removes every key)."
  })
}).check(
  Schema.makeFilter((body) =>
    body.name !== undefined || body.logoUrl !== undefined || body.metadata !== undefined ||
    "give at least one of name, logoUrl and metadata", { toJsonSchema: () => ({ minProperties: 1 }) })
).annotate({ examples: [{ name: "Acme Corporation", metadata: { costCenter: "R&D-42" } }] })
export type UpdateOrganizationRequest = typeof UpdateOrganizationRequest.Type

export const DeleteOrganizationRequest = Schema.Struct({
  confirmName: Schema.String.annotate({
    description: "The organization's name exactly as `GET /v1/organization` shows it: a deletion names what it deletes."
  }).check(
    Schema.isMaxLength(200),
    // The request guard refuses NUL in every request string; the document says so here too.
    Schema.makeFilter((text: string) => !text.includes("\u0000") || "must not contain the NUL character (U+0000)", {
      toJsonSchema: () => ({ pattern: NO_NUL_PATTERN })
    })
  ).annotate(publishedAs({ type: "string", maxLength: 200, pattern: NO_NUL_PATTERN }))
}).annotate({ examples: [{ confirmName: acme.name }] })

/** The rows of each table the purge removes (or removed), by table name; tables without any are left out. */
export const PurgeRows = Schema.Record(Schema.String, Int).annotate({
  identifier: "PurgeRows",
  description: "Rows per table, by table name (tables without any are left out).",
  examples: [{ memberships: 3, teams: 1, audit_events: 42 }]
})

export class OrganizationDeletion extends Schema.Class<OrganizationDeletion>("OrganizationDeletion")(Schema.Struct({
  organization: Organization,
  deletedAt: Timestamp,
  purgeAfter: Timestamp.annotateKey({
    description: "Until then an owner (or the instance's operator) may restore it; after it the purge removes every row of it."
  }),
  rows: PurgeRows.annotateKey({ description: "What the purge will remove, counted when it was deleted: rows per table." }),
  totalRows: Schema.Int.annotate({ description: "The sum of `rows`." })
}).annotate({
  examples: [{
    // An instance: Effect 4 encodes no plain object as a class, and an example it cannot encode is left out.
    organization: new Organization(acmeOrganization),
    deletedAt: exampleTime(60),
    purgeAfter: exampleTime(60 + 7 * 24 * 60),
    rows: { memberships: 3, teams: 1, audit_events: 42 },
    totalRows: 46
  }]
})) {}

export const OrganizationDeletionResponse = Schema.Struct({ deletion: OrganizationDeletion }).annotate({
  identifier: "OrganizationDeletionResponse"
})

export const OrganizationResponse = Schema.Struct({ organization: Organization }).annotate({ identifier: "OrganizationResponse" })

export const OrganizationPath = Schema.Struct({ organizationId: OrganizationId })

/** An organization as the instance's operator lists it: deleted ones too, with when the purge may take them. */
export class AdminOrganization extends Schema.Class<AdminOrganization>("AdminOrganization")(Schema.Struct({
  ...Organization.fields,
  memberCount: Schema.Int.annotate({ description: "Its active members (the placeholder owner of an unclaimed workspace included)." }),
  deletedAt: Schema.NullOr(Timestamp).annotate({ description: "When it was deleted; null while it is not." }),
  purgeAfter: Schema.NullOr(Timestamp).annotate({
    description:
      "When the purge may remove it: a deleted one's end of grace, an unclaimed provisional workspace's expiry (`ORGPLANE_PROVISIONAL_WORKSPACE_LIFETIME` after it was made); null otherwise."
  })
}).annotate({
  examples: [{
    ...acmeOrganization,
    memberCount: 3,
    deletedAt: exampleTime(60),
    purgeAfter: exampleTime(60 + 7 * 24 * 60)
  }]
})) {}

export const AdminOrganizationPage = Page(AdminOrganization).annotate({ identifier: "AdminOrganizationPage" })

export const AdminOrganizationListQuery = Schema.Struct({
  ...PageQueryFields,
  q: Schema.optionalKey(searchText("Only organizations whose name contains this text (case-insensitive).")),
  deleted: Schema.optionalKey(BooleanFromString).annotateKey({
    description: "`true`: only deleted organizations (not purged yet); `false`: only those that are not; left out, both."
  })
}).annotate({ examples: [{ q: "acme", deleted: true }] })
export type AdminOrganizationListQuery = typeof AdminOrganizationListQuery.Type

/** One of the caller's organizations, and, for one deleted, when and until when an owner may restore it. */
export const MyOrganization = Schema.Struct({
  organization: Organization,
  membership: Membership,
  deletedAt: Schema.optionalKey(Timestamp).annotateKey({
    description: "When it was deleted: only in `GET /v1/me/organizations?deleted=true`."
  }),
  purgeAfter: Schema.optionalKey(Timestamp).annotateKey({
    description: "Until when its owners may restore it (`POST /v1/organizations/{organizationId}/restore`): only with `deleted=true`."
  })
}).annotate({ identifier: "MyOrganization" })
export type MyOrganization = typeof MyOrganization.Type

/**
 * Directory provisioning, managed (enterprise plan; owners and admins): SCIM connections, their tokens, their
 * provisioning event log and the reconcile report. The protocol a directory speaks is ScimProtocol.ts.
 */
import * as Schema from "effect/Schema"
import { allErrors, requestBody, Timestamp, TrimmedText } from "./Common.js"
import { ada, acme, exampleTime, exampleToken } from "./Examples.js"
import { exampleId, MembershipId, OrganizationId, ScimConnectionId, ScimEventId, ScimTokenId } from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"

export const ScimGroupMappingMode = Schema.Literal("metadata_only", "create_teams", "link_by_external_key").annotations({
  identifier: "ScimGroupMappingMode",
  description:
    "What the directory's Groups do to the organization's teams. `metadata_only`: nothing (groups are kept, teams untouched; the default). `create_teams`: a team per group, named after it (` (SCIM)` appended when the name is taken), holding the group's active members, managed by the directory. `link_by_external_key`: the team whose `externalKey` is the group's `externalId` holds the group's active members while linked; no team is created."
})
export type ScimGroupMappingMode = typeof ScimGroupMappingMode.Type

export const ScimDefaultRole = Schema.Literal("admin", "member").annotations({
  description:
    "The role of a member the directory creates (default `member`); while the connection has role rules, also the role of every member it provisioned that no rule raises. The directory never makes an owner."
})

export const ScimRoleRule = Schema.Struct({
  group: TrimmedText(1, 255, "A group's displayName or externalId, compared case-insensitively"),
  role: Schema.Literal("admin", "member").annotations({ description: "The role members of that group get." })
}).annotations({ identifier: "ScimRoleRule" })

export const ScimRoleRules = Schema.Array(ScimRoleRule).pipe(Schema.maxItems(100)).annotations({
  description:
    "Explicit group → role rules, at most 100 (none by default: a group's name never grants a role by itself). A member in a group a rule names gets the rule's role when it is higher than `defaultRole`; leaving the group gives the default role back. Owners are never demoted."
})

export const ScimConnectionName = TrimmedText(1, 100, "SCIM connection name")

export const ScimConnectionHealth = Schema.Struct({
  lastSuccessAt: Schema.NullOr(Timestamp).annotations({ description: "The directory's last successful write; null before the first." }),
  lastFailureAt: Schema.NullOr(Timestamp).annotations({ description: "The directory's last refused or failed write; null before the first." }),
  unresolvedFailures: Schema.Int.annotations({
    description:
      "Writes refused or failed since the last successful one. Directories retry failed writes, so a later success clears the count; a count that grows says provisioning is stuck (read the event log)."
  })
}).annotations({ identifier: "ScimConnectionHealth" })

export class ScimConnection extends Schema.Class<ScimConnection>("ScimConnection")(Schema.Struct({
  id: ScimConnectionId,
  organizationId: OrganizationId,
  name: Schema.String,
  baseUrl: Schema.String.annotations({
    description: "The SCIM base URL to give the directory (`<server>/scim/v2/<connection id>`), from `ORGPLANE_PUBLIC_URL` or the request's host."
  }),
  groupMappingMode: ScimGroupMappingMode,
  defaultRole: ScimDefaultRole,
  roleRules: ScimRoleRules,
  users: Schema.Int.annotations({ description: "SCIM Users the directory provisioned and has not deleted." }),
  groups: Schema.Int.annotations({ description: "SCIM Groups of the connection." }),
  activeTokens: Schema.Int.annotations({ description: "Tokens neither revoked nor expired." }),
  health: ScimConnectionHealth,
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotations({
  examples: [{
    id: exampleId("scc"),
    organizationId: acme.id,
    name: "Okta",
    baseUrl: `https://orgplane.acme.example/scim/v2/${exampleId("scc")}`,
    groupMappingMode: "create_teams",
    defaultRole: "member",
    roleRules: [{ group: "Platform admins", role: "admin" }],
    users: 42,
    groups: 5,
    activeTokens: 1,
    health: { lastSuccessAt: exampleTime(90), lastFailureAt: null, unresolvedFailures: 0 },
    createdByOrgMembershipId: ada.membershipId,
    createdAt: exampleTime(60),
    updatedAt: exampleTime(60)
  }]
})) {}

export const ScimConnectionResponse = Schema.Struct({ connection: ScimConnection }).annotations({
  identifier: "ScimConnectionResponse"
})
export const ScimConnectionPage = Page(ScimConnection).annotations({ identifier: "ScimConnectionPage" })
export const ScimConnectionListQuery = Schema.Struct(PageQueryFields).annotations({ ...allErrors, examples: [{ limit: 20 }] })

export const ScimConnectionIdPath = Schema.Struct({ connectionId: ScimConnectionId })

export const CreateScimConnectionRequest = Schema.Struct({
  name: ScimConnectionName,
  groupMappingMode: Schema.optionalWith(ScimGroupMappingMode, { exact: true }),
  defaultRole: Schema.optionalWith(ScimDefaultRole, { exact: true }),
  roleRules: Schema.optionalWith(ScimRoleRules, { exact: true })
}).annotations({
  ...requestBody,
  examples: [{ name: "Okta", groupMappingMode: "create_teams", defaultRole: "member", roleRules: [{ group: "Platform admins", role: "admin" }] }]
})

export const UpdateScimConnectionRequest = Schema.Struct({
  name: Schema.optionalWith(ScimConnectionName, { exact: true }),
  groupMappingMode: Schema.optionalWith(ScimGroupMappingMode, { exact: true }),
  defaultRole: Schema.optionalWith(ScimDefaultRole, { exact: true }),
  roleRules: Schema.optionalWith(ScimRoleRules, { exact: true })
}).pipe(
  Schema.filter((body) => Object.keys(body).length > 0 || "give name, groupMappingMode, defaultRole, roleRules or several", {
    jsonSchema: { minProperties: 1 }
  })
).annotations({ ...requestBody, examples: [{ groupMappingMode: "link_by_external_key" }] })

export const ScimRepair = Schema.Struct({
  resourceType: Schema.Literal("User", "Group"),
  resourceId: Schema.String.annotations({ description: "The SCIM id: a member id (`om_`) for a User, `scg_` for a Group." }),
  change: Schema.String.annotations({ description: "What was made true again, in words." })
}).annotations({ identifier: "ScimRepair" })

export const ScimReconcileReport = Schema.Struct({
  checked: Schema.Int.annotations({ description: "SCIM Users and Groups compared with the organization." }),
  repaired: Schema.Array(ScimRepair).annotations({ description: "Each repair made; empty when nothing had drifted." })
}).annotations({
  identifier: "ScimReconcileReport",
  examples: [{
    checked: 47,
    repaired: [{ resourceType: "User", resourceId: exampleId("om", 3), change: "membership suspended: the User is inactive in the directory" }]
  }]
})

export const UpdatedScimConnection = Schema.Struct({
  connection: ScimConnection,
  reconciled: Schema.NullOr(ScimReconcileReport).annotations({
    description:
      "When `groupMappingMode`, `defaultRole` or `roleRules` changed, the organization was reconciled with the new settings in the same transaction: what that repaired. Null otherwise."
  })
}).annotations({ identifier: "UpdatedScimConnection" })

export const ScimTokenState = Schema.Literal("active", "expired", "revoked")

export class ScimToken extends Schema.Class<ScimToken>("ScimToken")(Schema.Struct({
  id: ScimTokenId,
  connectionId: ScimConnectionId,
  name: Schema.String,
  state: ScimTokenState,
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  expiresAt: Schema.NullOr(Timestamp),
  lastUsedAt: Schema.NullOr(Timestamp).annotations({
    description: "When the directory last authenticated with it (recorded at most once a minute); null if never."
  }),
  revokedAt: Schema.NullOr(Timestamp)
}).annotations({
  examples: [{
    id: exampleId("sct"),
    connectionId: exampleId("scc"),
    name: "Okta 2026-11",
    state: "active",
    createdByOrgMembershipId: ada.membershipId,
    createdAt: exampleTime(61),
    expiresAt: exampleTime(61 + 365 * 24 * 60),
    lastUsedAt: exampleTime(90),
    revokedAt: null
  }]
})) {}

export const ScimTokenPage = Page(ScimToken).annotations({ identifier: "ScimTokenPage" })
export const ScimTokenListQuery = Schema.Struct(PageQueryFields).annotations({ ...allErrors, examples: [{ limit: 20 }] })
export const ScimTokenPath = Schema.Struct({ connectionId: ScimConnectionId, tokenId: ScimTokenId })

export const CreateScimTokenRequest = Schema.Struct({
  name: TrimmedText(1, 64, "SCIM token name"),
  expiresAt: Schema.optionalWith(Timestamp, { exact: true }).annotations({
    description: "When the token stops working; must be in the future. Omit for a token that does not expire."
  })
}).annotations({ ...requestBody, examples: [{ name: "Okta 2026-11", expiresAt: exampleTime(61 + 365 * 24 * 60) }] })

export const CreatedScimToken = Schema.Struct({
  scimToken: ScimToken,
  token: Schema.String.annotations({
    description: "The bearer token to give the directory (`scim_…`). Shown only once: orgplane keeps only its hash.",
    examples: [exampleToken("scim")]
  }),
  baseUrl: Schema.String.annotations({
    description: "The connection's SCIM base URL, for the directory's settings beside the token.",
    examples: [`https://orgplane.acme.example/scim/v2/${exampleId("scc")}`]
  })
}).annotations({ identifier: "CreatedScimToken" })

export const ScimEventOutcome = Schema.Literal("succeeded", "refused", "failed").annotations({
  description: "`succeeded` (2xx), `refused` (4xx: the request was wrong, retrying it as is will not help), `failed` (5xx: the directory should retry)."
})

export class ScimEvent extends Schema.Class<ScimEvent>("ScimEvent")(Schema.Struct({
  id: ScimEventId,
  connectionId: ScimConnectionId,
  tokenId: Schema.NullOr(ScimTokenId).annotations({ description: "The token the directory used; null for a reconcile by an admin." }),
  method: Schema.String,
  path: Schema.String.annotations({ description: "The request's path, without its query (a filter may carry personal data)." }),
  resourceType: Schema.NullOr(Schema.Literal("User", "Group")),
  resourceId: Schema.NullOr(Schema.String),
  status: Schema.Int.annotations({ description: "The HTTP status answered." }),
  outcome: ScimEventOutcome,
  scimType: Schema.NullOr(Schema.String).annotations({ description: "The SCIM error's `scimType`, if any." }),
  detail: Schema.NullOr(Schema.String).annotations({ description: "The error's detail as the directory got it (at most 1000 characters)." }),
  createdAt: Timestamp
}).annotations({
  examples: [{
    id: exampleId("sce"),
    connectionId: exampleId("scc"),
    tokenId: exampleId("sct"),
    method: "POST",
    path: `/scim/v2/${exampleId("scc")}/Users`,
    resourceType: "User",
    resourceId: exampleId("om", 3),
    status: 201,
    outcome: "succeeded",
    scimType: null,
    detail: null,
    createdAt: exampleTime(90)
  }]
})) {}

export const ScimEventPage = Page(ScimEvent).annotations({ identifier: "ScimEventPage" })
export const ScimEventListQuery = Schema.Struct({
  ...PageQueryFields,
  outcome: Schema.optionalWith(ScimEventOutcome, { exact: true }),
  resourceType: Schema.optionalWith(Schema.Literal("User", "Group"), { exact: true }).annotations({
    description: "Only events about this resource type."
  })
}).annotations({ ...allErrors, examples: [{ outcome: "refused", resourceType: "User" }] })
export type ScimEventListQuery = typeof ScimEventListQuery.Type

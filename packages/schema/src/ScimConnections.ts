/**
 * Directory provisioning, managed (enterprise plan; owners and admins): SCIM connections, their tokens, their
 * provisioning event log and the reconcile report. The protocol a directory speaks is ScimProtocol.ts.
 */
import * as Schema from "effect/Schema"
import { Timestamp, TrimmedText } from "./Common.js"
import { ada, acme, exampleTime, exampleToken } from "./Examples.js"
import { exampleId, MembershipId, OrganizationId, ScimConnectionId, ScimEventId, ScimTokenId } from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"

export const ScimGroupMappingMode = Schema.Literals(["metadata_only", "create_teams", "link_by_external_key"]).annotate({
  identifier: "ScimGroupMappingMode",
  description:
    "What the directory's Groups do to the organization's teams. `metadata_only`: nothing (groups are kept, teams untouched; the default). `create_teams`: a team per group, named after it (` (SCIM)` appended when the name is taken), holding the group's active members, managed by the directory. `link_by_external_key`: the team whose `externalKey` is the group's `externalId` holds the group's active members while linked; no team is created."
})
export type ScimGroupMappingMode = typeof ScimGroupMappingMode.Type

export const ScimDefaultRole = Schema.Literals(["admin", "member"]).annotate({
  description:
    "The role of a member the directory creates (default `member`); while the connection has role rules, also the role of every member it provisioned that no rule raises. The directory never makes an owner."
})

export const ScimRoleRule = Schema.Struct({
  group: TrimmedText(1, 255, "A group's displayName or externalId, compared case-insensitively"),
  role: Schema.Literals(["admin", "member"]).annotate({ description: "The role members of that group get." })
}).annotate({ identifier: "ScimRoleRule" })

export const ScimRoleRules = Schema.Array(ScimRoleRule).check(Schema.isMaxLength(100)).annotate({
  description:
    "Explicit group → role rules, at most 100 (none by default: a group's name never grants a role by itself). A member in a group a rule names gets the rule's role when it is higher than `defaultRole`; leaving the group gives the default role back. Owners are never demoted."
})

export const ScimConnectionName = TrimmedText(1, 100, "SCIM connection name")

export const ScimConnectionHealth = Schema.Struct({
  lastSuccessAt: Schema.NullOr(Timestamp).annotate({ description: "The directory's last successful write; null before the first." }),
  lastFailureAt: Schema.NullOr(Timestamp).annotate({ description: "The directory's last refused or failed write; null before the first." }),
  unresolvedFailures: Schema.Int.annotate({
    description:
      "Writes refused or failed since the last successful one. Directories retry failed writes, so a later success clears the count; a count that grows says provisioning is stuck (read the event log)."
  })
}).annotate({ identifier: "ScimConnectionHealth" })

export class ScimConnection extends Schema.Class<ScimConnection>("ScimConnection")(Schema.Struct({
  id: ScimConnectionId,
  organizationId: OrganizationId,
  name: Schema.String,
  baseUrl: Schema.String.annotate({
    description: "The SCIM base URL to give the directory (`<server>/scim/v2/<connection id>`), from `ORGPLANE_PUBLIC_URL` or the request's host."
  }),
  groupMappingMode: ScimGroupMappingMode,
  defaultRole: ScimDefaultRole,
  roleRules: ScimRoleRules,
  users: Schema.Int.annotate({ description: "SCIM Users the directory provisioned and has not deleted." }),
  groups: Schema.Int.annotate({ description: "SCIM Groups of the connection." }),
  activeTokens: Schema.Int.annotate({ description: "Tokens neither revoked nor expired." }),
  health: ScimConnectionHealth,
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({
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

export const ScimConnectionResponse = Schema.Struct({ connection: ScimConnection }).annotate({
  identifier: "ScimConnectionResponse"
})
export const ScimConnectionPage = Page(ScimConnection).annotate({ identifier: "ScimConnectionPage" })
export const ScimConnectionListQuery = Schema.Struct(PageQueryFields).annotate({ examples: [{ limit: 20 }] })

export const ScimConnectionIdPath = Schema.Struct({ connectionId: ScimConnectionId })

export const CreateScimConnectionRequest = Schema.Struct({
  name: ScimConnectionName,
  groupMappingMode: Schema.optionalKey(ScimGroupMappingMode),
  defaultRole: Schema.optionalKey(ScimDefaultRole),
  roleRules: Schema.optionalKey(ScimRoleRules)
}).annotate({
  examples: [{ name: "Okta", groupMappingMode: "create_teams", defaultRole: "member", roleRules: [{ group: "Platform admins", role: "admin" }] }]
})

export const UpdateScimConnectionRequest = Schema.Struct({
  name: Schema.optionalKey(ScimConnectionName),
  groupMappingMode: Schema.optionalKey(ScimGroupMappingMode),
  defaultRole: Schema.optionalKey(ScimDefaultRole),
  roleRules: Schema.optionalKey(ScimRoleRules)
}).check(
  Schema.makeFilter((body) => Object.keys(body).length > 0 || "give name, groupMappingMode, defaultRole, roleRules or several", {
    toJsonSchema: () => ({ minProperties: 1 })
  })
).annotate({ examples: [{ groupMappingMode: "link_by_external_key" }] })

export const ScimRepair = Schema.Struct({
  resourceType: Schema.Literals(["User", "Group"]),
  resourceId: Schema.String.annotate({ description: "The SCIM id: a member id (`om_`) for a User, `scg_` for a Group." }),
  change: Schema.String.annotate({ description: "What was made true again, in words." })
}).annotate({ identifier: "ScimRepair" })

export const ScimReconcileReport = Schema.Struct({
  checked: Schema.Int.annotate({ description: "SCIM Users and Groups compared with the organization." }),
  repaired: Schema.Array(ScimRepair).annotate({ description: "Each repair made; empty when nothing had drifted." })
}).annotate({
  identifier: "ScimReconcileReport",
  examples: [{
    checked: 47,
    repaired: [{ resourceType: "User", resourceId: exampleId("om", 3), change: "membership suspended: the User is inactive in the directory" }]
  }]
})

export const UpdatedScimConnection = Schema.Struct({
  connection: ScimConnection,
  reconciled: Schema.NullOr(ScimReconcileReport).annotate({
    description:
      "When `groupMappingMode`, `defaultRole` or `roleRules` changed, the organization was reconciled with the new settings in the same transaction: what that repaired. Null otherwise."
  })
}).annotate({ identifier: "UpdatedScimConnection" })

export const ScimTokenState = Schema.Literals(["active", "expired", "revoked"])

export class ScimToken extends Schema.Class<ScimToken>("ScimToken")(Schema.Struct({
  id: ScimTokenId,
  connectionId: ScimConnectionId,
  name: Schema.String,
  state: ScimTokenState,
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  expiresAt: Schema.NullOr(Timestamp),
  lastUsedAt: Schema.NullOr(Timestamp).annotate({
    description: "When the directory last authenticated with it (recorded at most once a minute); null if never."
  }),
  revokedAt: Schema.NullOr(Timestamp)
}).annotate({
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

export const ScimTokenPage = Page(ScimToken).annotate({ identifier: "ScimTokenPage" })
export const ScimTokenListQuery = Schema.Struct(PageQueryFields).annotate({ examples: [{ limit: 20 }] })
export const ScimTokenPath = Schema.Struct({ connectionId: ScimConnectionId, tokenId: ScimTokenId })

export const CreateScimTokenRequest = Schema.Struct({
  name: TrimmedText(1, 64, "SCIM token name"),
  expiresAt: Schema.optionalKey(Timestamp).annotateKey({
    description: "When the token stops working; must be in the future. Omit for a token that does not expire."
  })
}).annotate({ examples: [{ name: "Okta 2026-11", expiresAt: exampleTime(61 + 365 * 24 * 60) }] })

export const CreatedScimToken = Schema.Struct({
  scimToken: ScimToken,
  token: Schema.String.annotate({
    description: "The bearer token to give the directory (`scim_…`). Shown only once: orgplane keeps only its hash.",
    examples: [exampleToken("scim")]
  }),
  baseUrl: Schema.String.annotate({
    description: "The connection's SCIM base URL, for the directory's settings beside the token.",
    examples: [`https://orgplane.acme.example/scim/v2/${exampleId("scc")}`]
  })
}).annotate({ identifier: "CreatedScimToken" })

export const ScimEventOutcome = Schema.Literals(["succeeded", "refused", "failed"]).annotate({
  description: "`succeeded` (2xx), `refused` (4xx: the request was wrong, retrying it as is will not help), `failed` (5xx: the directory should retry)."
})

export class ScimEvent extends Schema.Class<ScimEvent>("ScimEvent")(Schema.Struct({
  id: ScimEventId,
  connectionId: ScimConnectionId,
  tokenId: Schema.NullOr(ScimTokenId).annotate({ description: "The token the directory used; null for a reconcile by an admin." }),
  method: Schema.String,
  path: Schema.String.annotate({ description: "The request's path, without its query (a filter may carry personal data)." }),
  resourceType: Schema.NullOr(Schema.Literals(["User", "Group"])),
  resourceId: Schema.NullOr(Schema.String),
  status: Schema.Int.annotate({ description: "The HTTP status answered." }),
  outcome: ScimEventOutcome,
  scimType: Schema.NullOr(Schema.String).annotate({ description: "The SCIM error's `scimType`, if any." }),
  detail: Schema.NullOr(Schema.String).annotate({ description: "The error's detail as the directory got it (at most 1000 characters)." }),
  createdAt: Timestamp
}).annotate({
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

export const ScimEventPage = Page(ScimEvent).annotate({ identifier: "ScimEventPage" })
export const ScimEventListQuery = Schema.Struct({
  ...PageQueryFields,
  outcome: Schema.optionalKey(ScimEventOutcome),
  resourceType: Schema.optionalKey(Schema.Literals(["User", "Group"])).annotateKey({
    description: "Only events about this resource type."
  })
}).annotate({ examples: [{ outcome: "refused", resourceType: "User" }] })
export type ScimEventListQuery = typeof ScimEventListQuery.Type

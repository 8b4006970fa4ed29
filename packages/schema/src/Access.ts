/**
 * Access grants: who may view, edit or manage one config object, plugin or marketplace. A grant is direct (one
 * member), team-wide or organization-wide; revoking keeps the record with `removedAt`.
 */
import * as Schema from "effect/Schema"
import { BooleanFromString, Timestamp } from "./Common.js"
import {
  ConfigObjectAccessGrantId,
  ConfigObjectId,
  ConnectorInstanceAccessGrantId,
  ConnectorInstanceId,
  exampleId,
  ExternalMcpConnectionId,
  LlmProviderAccessGrantId,
  LlmProviderId,
  MarketplaceAccessGrantId,
  MarketplaceId,
  McpConnectionAccessGrantId,
  MembershipId,
  PluginAccessGrantId,
  PluginId,
  TeamId,
  TemplateAccessGrantId,
  TemplateId
} from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { ada, exampleTime } from "./Examples.js"

/** What a grant allows, lowest first: each role includes the ones before it. */
export const AccessRole = Schema.Literals(["viewer", "editor", "manager"]).annotate({
  identifier: "AccessRole",
  description:
    "`viewer` reads the resource; `editor` also changes it (new versions, name, members); `manager` also archives, deletes and restores it and manages its grants. Owners and admins are managers of everything."
})
export type AccessRole = typeof AccessRole.Type

/** Roles from lowest to highest. */
export const AccessRoles: ReadonlyArray<AccessRole> = ["viewer", "editor", "manager"]

/** Whether `role` includes what `required` allows. */
export const includesRole = (role: AccessRole, required: AccessRole): boolean =>
  AccessRoles.indexOf(role) >= AccessRoles.indexOf(required)

const grantFields = {
  orgMembershipId: Schema.NullOr(MembershipId).annotate({ description: "The member a direct grant is for." }),
  teamId: Schema.NullOr(TeamId).annotate({ description: "The team a team-wide grant is for." }),
  orgWide: Schema.Boolean.annotate({ description: "Whether the grant is for every member of the organization." }),
  role: AccessRole,
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  removedAt: Schema.NullOr(Timestamp).annotate({ description: "When the grant was revoked; null while it applies." })
}

/** The example grant: the Platform team may edit. */
const grantExample = <Id>(id: Id) => ({
  id,
  orgMembershipId: null,
  teamId: exampleId("tem"),
  orgWide: false,
  role: "editor" as const,
  createdByOrgMembershipId: ada.membershipId,
  createdAt: exampleTime(150),
  removedAt: null
})

export class ConfigObjectAccessGrant extends Schema.Class<ConfigObjectAccessGrant>("ConfigObjectAccessGrant")(Schema.Struct({
  id: ConfigObjectAccessGrantId,
  ...grantFields
}).annotate({ examples: [grantExample(exampleId("coa"))] })) {}

export class PluginAccessGrant extends Schema.Class<PluginAccessGrant>("PluginAccessGrant")(Schema.Struct({
  id: PluginAccessGrantId,
  ...grantFields
}).annotate({ examples: [grantExample(exampleId("pag"))] })) {}

export class MarketplaceAccessGrant extends Schema.Class<MarketplaceAccessGrant>("MarketplaceAccessGrant")(Schema.Struct({
  id: MarketplaceAccessGrantId,
  ...grantFields
}).annotate({ examples: [grantExample(exampleId("mag"))] })) {}

export class ConnectorInstanceAccessGrant extends Schema.Class<ConnectorInstanceAccessGrant>("ConnectorInstanceAccessGrant")(Schema.Struct({
  id: ConnectorInstanceAccessGrantId,
  ...grantFields
}).annotate({ examples: [grantExample(exampleId("cia"))] })) {}

export class McpConnectionAccessGrant extends Schema.Class<McpConnectionAccessGrant>("McpConnectionAccessGrant")(Schema.Struct({
  id: McpConnectionAccessGrantId,
  ...grantFields
}).annotate({ examples: [grantExample(exampleId("emg"))] })) {}

export class TemplateAccessGrant extends Schema.Class<TemplateAccessGrant>("TemplateAccessGrant")(Schema.Struct({
  id: TemplateAccessGrantId,
  ...grantFields
}).annotate({ examples: [grantExample(exampleId("tpa"))] })) {}
export class LlmProviderAccessGrant extends Schema.Class<LlmProviderAccessGrant>("LlmProviderAccessGrant")(Schema.Struct({
  id: LlmProviderAccessGrantId,
  ...grantFields
}).annotate({ examples: [grantExample(exampleId("lpg"))] })) {}

export type AccessGrant =
  | TemplateAccessGrant
  | ConfigObjectAccessGrant
  | PluginAccessGrant
  | MarketplaceAccessGrant
  | ConnectorInstanceAccessGrant
  | McpConnectionAccessGrant
  | LlmProviderAccessGrant

export const ConfigObjectAccessGrantPage = Page(ConfigObjectAccessGrant).annotate({ identifier: "ConfigObjectAccessGrantPage" })
export const PluginAccessGrantPage = Page(PluginAccessGrant).annotate({ identifier: "PluginAccessGrantPage" })
export const MarketplaceAccessGrantPage = Page(MarketplaceAccessGrant).annotate({ identifier: "MarketplaceAccessGrantPage" })

export const ConfigObjectAccessGrantResponse = Schema.Struct({ ok: Schema.Literal(true), item: ConfigObjectAccessGrant })
  .annotate({ identifier: "ConfigObjectAccessGrantResponse" })
export const PluginAccessGrantResponse = Schema.Struct({ ok: Schema.Literal(true), item: PluginAccessGrant })
  .annotate({ identifier: "PluginAccessGrantResponse" })
export const ConnectorInstanceAccessGrantPage = Page(ConnectorInstanceAccessGrant).annotate({ identifier: "ConnectorInstanceAccessGrantPage" })
export const ConnectorInstanceAccessGrantResponse = Schema.Struct({ ok: Schema.Literal(true), item: ConnectorInstanceAccessGrant })
  .annotate({ identifier: "ConnectorInstanceAccessGrantResponse" })
export const McpConnectionAccessGrantPage = Page(McpConnectionAccessGrant).annotate({ identifier: "McpConnectionAccessGrantPage" })
export const McpConnectionAccessGrantResponse = Schema.Struct({ ok: Schema.Literal(true), item: McpConnectionAccessGrant })
export const McpConnectionGrantPath = Schema.Struct({ connectionId: ExternalMcpConnectionId, grantId: McpConnectionAccessGrantId })
export const TemplateAccessGrantPage = Page(TemplateAccessGrant).annotate({ identifier: "TemplateAccessGrantPage" })
export const TemplateAccessGrantResponse = Schema.Struct({ ok: Schema.Literal(true), item: TemplateAccessGrant })
  .annotate({ identifier: "TemplateAccessGrantResponse" })
export const LlmProviderAccessGrantPage = Page(LlmProviderAccessGrant).annotate({ identifier: "LlmProviderAccessGrantPage" })
export const LlmProviderAccessGrantResponse = Schema.Struct({ ok: Schema.Literal(true), item: LlmProviderAccessGrant })
  .annotate({ identifier: "LlmProviderAccessGrantResponse" })
export const LlmProviderGrantPath = Schema.Struct({ llmProviderId: LlmProviderId, grantId: LlmProviderAccessGrantId })
export const MarketplaceAccessGrantResponse = Schema.Struct({ ok: Schema.Literal(true), item: MarketplaceAccessGrant })
  .annotate({ identifier: "MarketplaceAccessGrantResponse" })

/**
 * Grants `role` to exactly one of: a member, a team, or the whole organization. Granting again to the same member,
 * team or the organization replaces the role of that grant (and re-activates it when it was revoked) instead of
 * adding a second one.
 */
export const CreateAccessGrantRequest = Schema.Struct({
  orgMembershipId: Schema.optionalKey(MembershipId).annotateKey({
    description: "A direct grant to this active member."
  }),
  teamId: Schema.optionalKey(TeamId).annotateKey({ description: "A grant to every member of this team." }),
  orgWide: Schema.optionalKey(Schema.Literal(true)).annotateKey({
    description: "A grant to every member of the organization (owners and admins only)."
  }),
  role: AccessRole
}).check(
  Schema.makeFilter(
    (body) =>
      [body.orgMembershipId, body.teamId, body.orgWide].filter((target) => target !== undefined).length === 1 ||
      "give exactly one of orgMembershipId, teamId or orgWide: true",
    { toJsonSchema: () => ({ allOf: [{ oneOf: [{ required: ["orgMembershipId"] }, { required: ["teamId"] }, { required: ["orgWide"] }] }] }) }
  )
).annotate({ examples: [{ teamId: exampleId("tem"), role: "editor" }] })
export type CreateAccessGrantRequest = typeof CreateAccessGrantRequest.Type

export const AccessListQuery = Schema.Struct({
  ...PageQueryFields,
  includeRevoked: Schema.optionalKey(BooleanFromString).annotateKey({
    description: "Also list revoked grants (default false)."
  })
}).annotate({ examples: [{ includeRevoked: false }] })
export type AccessListQuery = typeof AccessListQuery.Type

export const ConfigObjectGrantPath = Schema.Struct({ configObjectId: ConfigObjectId, grantId: ConfigObjectAccessGrantId })
export const PluginGrantPath = Schema.Struct({ pluginId: PluginId, grantId: PluginAccessGrantId })
export const ConnectorInstanceGrantPath = Schema.Struct({ connectorInstanceId: ConnectorInstanceId, grantId: ConnectorInstanceAccessGrantId })
export const TemplateGrantPath = Schema.Struct({ templateId: TemplateId, grantId: TemplateAccessGrantId })
export const MarketplaceGrantPath = Schema.Struct({ marketplaceId: MarketplaceId, grantId: MarketplaceAccessGrantId })

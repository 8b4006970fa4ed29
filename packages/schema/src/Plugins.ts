/**
 * Plugins bundle config objects; marketplaces list plugins for members to find. Both are shared through access
 * grants (see Access.ts).
 */
import * as Schema from "effect/Schema"
import { BooleanFromString, Int, searchText, Timestamp, TrimmedText } from "./Common.js"
import { ConfigObject, ObjectType } from "./ConfigObjects.js"
import {
  ConfigObjectId,
  ConfigObjectVersionId,
  ConnectorAccountId,
  ConnectorInstanceId,
  ConnectorMappingId,
  exampleId,
  MarketplaceId,
  MarketplacePluginId,
  MembershipId,
  OrganizationId,
  PluginConfigObjectId,
  PluginId
} from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { acme, ada, exampleOf, exampleTime, grace } from "./Examples.js"
import { UrlOf } from "./Urls.js"

export const CatalogStatus = Schema.Literals(["active", "archived", "deleted"]).annotate({
  identifier: "CatalogStatus",
  description: "`active`; `archived` (kept and readable, but out of use); `deleted` (soft-deleted: `deletedAt` is set)."
})
export type CatalogStatus = typeof CatalogStatus.Type

export const MembershipSource = Schema.Literals(["manual", "connector", "system"]).annotate({
  identifier: "MembershipSource",
  description: "Who added the entry: a member (`manual`), a connector's sync (`connector`), or the service itself (`system`)."
})
export type MembershipSource = typeof MembershipSource.Type

export const PluginName = TrimmedText(1, 255, "Plugin name")
export const MarketplaceName = TrimmedText(1, 255, "Marketplace name")
export const CatalogDescription = TrimmedText(0, 4000, "Description")

/** One config object the plugin brings, as its manifest lists it. */
export const ManifestResource = Schema.Struct({
  configObjectId: ConfigObjectId,
  objectType: ObjectType,
  title: Schema.String,
  versionId: ConfigObjectVersionId
}).annotate({ identifier: "ManifestResource" })

/** The config objects of one type in the plugin. */
export const ManifestContribution = Schema.Struct({
  objectType: ObjectType,
  configObjectIds: Schema.Array(ConfigObjectId)
}).annotate({ identifier: "ManifestContribution" })

export const PluginManifest = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  id: PluginId,
  name: Schema.String,
  description: Schema.String,
  source: Schema.Struct({
    trusted: Schema.Boolean.annotate({ description: "Whether the organization itself publishes the plugin (always true for plugins made here)." }),
    reference: Schema.String.annotate({ description: "Where the plugin comes from: `orgplane:plugin/<id>` for plugins made here." })
  }),
  resources: Schema.Array(ManifestResource).annotate({
    description: "The active config objects of the plugin (not archived or deleted), oldest membership first."
  }),
  contributions: Schema.Array(ManifestContribution).annotate({ description: "The same objects grouped by type, in type order." }),
  // An empty object. Effect 4 documents `Struct({})` as "any value but null" (an object or an array), which is what
  // it takes; the document states the empty object it is (OpenApiComponents' `objectsAsPublished`).
  setup: Schema.Struct({}).annotate({ description: "What installing the plugin needs; empty until MCP connections exist." }),
  lifecycle: Schema.Struct({ status: CatalogStatus, updatedAt: Timestamp })
}).annotate({
  identifier: "PluginManifest",
  description: "The plugin as a desktop extension reads it, derived from its current config objects."
})

export const MarketplaceRef = Schema.Struct({ id: MarketplaceId, name: Schema.String }).annotate({ identifier: "MarketplaceRef" })

/** The example plugin: release tooling with the deploy skill, listed in the internal marketplace. */
const releaseTooling = { id: exampleId("plg"), name: "Release tooling", description: "Skills and commands for shipping services." }
const internalMarketplace = { id: exampleId("mkt"), name: "Acme internal" }

export const PluginSourceMetadata = Schema.Struct({
  version: Schema.NullOr(Schema.String),
  author: Schema.NullOr(Schema.String).annotate({ description: "The author's name (`author.name`, or `author` when it is text)." }),
  authorEmail: Schema.NullOr(Schema.String).annotate({ description: "`author.email`, when the author is an object that gives one." }),
  authorUrl: Schema.NullOr(Schema.String).annotate({ description: "`author.url`, when the author is an object that gives one." }),
  homepage: Schema.NullOr(Schema.String),
  repository: Schema.NullOr(Schema.String),
  license: Schema.NullOr(Schema.String),
  keywords: Schema.Array(Schema.String),
  category: Schema.NullOr(Schema.String)
}).annotate({
  identifier: "PluginSourceMetadata",
  description:
    "What the repository says of a plugin a discovery apply made: `plugin.json` and its marketplace entry together, `plugin.json` winning, as Claude Code reads them. Members the repository does not give are null (keywords empty)."
})
export type PluginSourceMetadata = typeof PluginSourceMetadata.Type

export const PluginSkippedFile = Schema.Struct({
  path: Schema.String.annotate({ description: "The file, from the repository root." }),
  reason: Schema.String
}).annotate({ identifier: "PluginSkippedFile" })

export class Plugin extends Schema.Class<Plugin>("Plugin")(Schema.Struct({
  id: PluginId,
  organizationId: OrganizationId,
  name: Schema.String,
  description: Schema.String,
  status: CatalogStatus,
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  deletedAt: Schema.NullOr(Timestamp),
  memberCount: Schema.Int.annotate({ description: "How many config objects the plugin holds (active memberships)." }),
  sourceMetadata: Schema.NullOr(PluginSourceMetadata).annotate({
    description: "Version, author and the like from the repository, for a plugin a discovery apply made; null for one people made."
  }),
  skippedFiles: Schema.Array(PluginSkippedFile).annotate({
    description:
      "Files of the plugin's connector mappings that the last sync of their repository could not import, with the reason (at most 100, by path): a plugin that lists some is missing components its repository has."
  }),
  marketplaces: Schema.Array(MarketplaceRef).annotate({
    description: "The marketplaces (not deleted) that list the plugin, by name."
  }),
  extension: Schema.Struct({
    id: PluginId,
    name: Schema.String,
    description: Schema.String,
    manifest: PluginManifest
  })
}).annotate({
  examples: [{
    ...releaseTooling,
    organizationId: acme.id,
    status: "active",
    createdByOrgMembershipId: grace.membershipId,
    createdAt: exampleTime(130),
    updatedAt: exampleTime(140),
    deletedAt: null,
    memberCount: 1,
    sourceMetadata: null,
    skippedFiles: [],
    marketplaces: [internalMarketplace],
    extension: {
      ...releaseTooling,
      manifest: {
        schemaVersion: 1,
        ...releaseTooling,
        source: { trusted: true, reference: `orgplane:plugin/${releaseTooling.id}` },
        resources: [{ configObjectId: exampleId("cob"), objectType: "skill", title: "deploy-to-staging", versionId: exampleId("cov") }],
        contributions: [{ objectType: "skill", configObjectIds: [exampleId("cob")] }],
        setup: {},
        lifecycle: { status: "active", updatedAt: exampleTime(140) }
      }
    }
  }]
})) {}

export const PluginPage = Page(Plugin).annotate({ identifier: "PluginPage" })
export const PluginDetail = Schema.Struct({ item: Plugin }).annotate({ identifier: "PluginDetail" })
export const PluginResponse = Schema.Struct({ ok: Schema.Literal(true), item: Plugin }).annotate({ identifier: "PluginResponse" })

export const CreatePluginRequest = Schema.Struct({
  name: PluginName,
  description: Schema.optionalKey(CatalogDescription)
}).annotate({ examples: [{ name: releaseTooling.name, description: releaseTooling.description }] })
export type CreatePluginRequest = typeof CreatePluginRequest.Type

export const UpdatePluginRequest = Schema.Struct({
  name: Schema.optionalKey(PluginName),
  description: Schema.optionalKey(CatalogDescription)
}).check(
  Schema.makeFilter((body) => body.name !== undefined || body.description !== undefined || "give name, description or both", {
    toJsonSchema: () => ({ minProperties: 1 })
  })
).annotate({ examples: [{ description: "Skills, commands and agents for shipping services." }] })
export type UpdatePluginRequest = typeof UpdatePluginRequest.Type

export const CatalogListQueryFields = {
  ...PageQueryFields,
  status: Schema.optionalKey(CatalogStatus).annotateKey({
    description: "Only entries in this status (by default every status but `deleted`)."
  }),
  includeDeleted: Schema.optionalKey(BooleanFromString).annotateKey({
    description: "Also list deleted entries (default false)."
  }),
  q: Schema.optionalKey(searchText("Only entries whose name or description contains this text (case-insensitive)."))
}

export const PluginListQuery = Schema.Struct({
  ...CatalogListQueryFields,
  marketplaceId: Schema.optionalKey(MarketplaceId).annotateKey({
    description: "Only plugins this marketplace lists."
  })
}).annotate({ examples: [{ status: "active", includeDeleted: false, q: "release", marketplaceId: internalMarketplace.id }] })
export type PluginListQuery = typeof PluginListQuery.Type

export const MembershipListQuery = Schema.Struct({
  ...PageQueryFields,
  includeRemoved: Schema.optionalKey(BooleanFromString).annotateKey({
    description: "Also list removed entries (default false)."
  })
}).annotate({ examples: [{ includeRemoved: false }] })
export type MembershipListQuery = typeof MembershipListQuery.Type

export class PluginConfigObject extends Schema.Class<PluginConfigObject>("PluginConfigObject")(Schema.Struct({
  id: PluginConfigObjectId,
  pluginId: PluginId,
  configObjectId: ConfigObjectId,
  membershipSource: MembershipSource,
  connectorMappingId: Schema.NullOr(ConnectorMappingId),
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  removedAt: Schema.NullOr(Timestamp),
  configObject: ConfigObject
}).annotate({
  examples: [{
    id: exampleId("pco"),
    pluginId: releaseTooling.id,
    configObjectId: exampleId("cob"),
    membershipSource: "manual",
    connectorMappingId: null,
    createdByOrgMembershipId: grace.membershipId,
    createdAt: exampleTime(135),
    removedAt: null,
    configObject: exampleOf(ConfigObject)
  }]
})) {}

export const PluginConfigObjectPage = Page(PluginConfigObject).annotate({ identifier: "PluginConfigObjectPage" })
export const PluginConfigObjectResponse = Schema.Struct({ ok: Schema.Literal(true), item: PluginConfigObject }).annotate({
  identifier: "PluginConfigObjectResponse"
})

export const AddPluginConfigObjectRequest = Schema.Struct({ configObjectId: ConfigObjectId }).annotate({
  examples: [{ configObjectId: exampleId("cob") }]
})

export const PluginPath = Schema.Struct({ pluginId: PluginId })
export const PluginConfigObjectPath = Schema.Struct({ pluginId: PluginId, configObjectId: ConfigObjectId })

// Marketplaces

/** The marketplace's logo: an https URL, or a path on this service (`/logos/acme.png`), under the URL rule. */
export const LogoUrl = UrlOf({ absolute: "https", path: true }, "The marketplace's logo.")

export class Marketplace extends Schema.Class<Marketplace>("Marketplace")(Schema.Struct({
  id: MarketplaceId,
  organizationId: OrganizationId,
  name: Schema.String,
  description: Schema.String,
  logoUrl: Schema.NullOr(Schema.String),
  status: CatalogStatus,
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  deletedAt: Schema.NullOr(Timestamp),
  canDelete: Schema.Boolean.annotate({
    description: "Whether a manager may delete it: false while a connector or the service itself lists plugins in it."
  }),
  pluginCount: Schema.Int.annotate({ description: "How many plugins it lists (active memberships)." }),
  staleSince: Schema.NullOr(Timestamp).annotate({
    description:
      "For a marketplace a connector made: when the first sync failed since the last one that completed (a `marketplace.json` that does not read, a repository gone), so what it lists is that sync's, not the branch head's; null while its syncs complete, and for marketplaces people made (docs/connectors.md)."
  }),
  lastSyncError: Schema.NullOr(Schema.String).annotate({
    description: "Why the latest of those failed syncs failed, while `staleSince` is set; null otherwise."
  })
}).annotate({
  examples: [{
    ...internalMarketplace,
    organizationId: acme.id,
    description: "What Acme's teams share with each other.",
    logoUrl: "/logos/acme.png",
    status: "active",
    createdByOrgMembershipId: ada.membershipId,
    createdAt: exampleTime(125),
    updatedAt: exampleTime(140),
    deletedAt: null,
    canDelete: true,
    pluginCount: 1,
    staleSince: null,
    lastSyncError: null
  }]
})) {}

export const MarketplacePage = Page(Marketplace).annotate({ identifier: "MarketplacePage" })
export const MarketplaceDetail = Schema.Struct({ item: Marketplace }).annotate({ identifier: "MarketplaceDetail" })
export const MarketplaceResponse = Schema.Struct({ ok: Schema.Literal(true), item: Marketplace }).annotate({
  identifier: "MarketplaceResponse"
})

export const CreateMarketplaceRequest = Schema.Struct({
  name: MarketplaceName,
  description: Schema.optionalKey(CatalogDescription),
  logoUrl: Schema.optionalKey(LogoUrl)
}).annotate({
  examples: [{ name: internalMarketplace.name, description: "What Acme's teams share with each other.", logoUrl: "/logos/acme.png" }]
})
export type CreateMarketplaceRequest = typeof CreateMarketplaceRequest.Type

export const UpdateMarketplaceRequest = Schema.Struct({
  name: Schema.optionalKey(MarketplaceName),
  description: Schema.optionalKey(CatalogDescription),
  logoUrl: Schema.optionalKey(Schema.NullOr(LogoUrl)).annotateKey({ description: "The new logo, or null for none." })
}).check(
  Schema.makeFilter((body) =>
    body.name !== undefined || body.description !== undefined || body.logoUrl !== undefined ||
    "give at least one of name, description and logoUrl", { toJsonSchema: () => ({ minProperties: 1 }) })
).annotate({ examples: [{ logoUrl: "https://cdn.acme.example/logos/marketplace.png" }] })
export type UpdateMarketplaceRequest = typeof UpdateMarketplaceRequest.Type

export const MarketplaceListQuery = Schema.Struct(CatalogListQueryFields).annotate({
  examples: [{ status: "active", includeDeleted: false, q: "internal" }]
})
export type MarketplaceListQuery = typeof MarketplaceListQuery.Type

export class MarketplacePlugin extends Schema.Class<MarketplacePlugin>("MarketplacePlugin")(Schema.Struct({
  id: MarketplacePluginId,
  marketplaceId: MarketplaceId,
  pluginId: PluginId,
  membershipSource: MembershipSource,
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  removedAt: Schema.NullOr(Timestamp),
  plugin: Plugin
}).annotate({
  examples: [{
    id: exampleId("mkp"),
    marketplaceId: internalMarketplace.id,
    pluginId: releaseTooling.id,
    membershipSource: "manual",
    createdByOrgMembershipId: ada.membershipId,
    createdAt: exampleTime(140),
    removedAt: null,
    plugin: exampleOf(Plugin)
  }]
})) {}

export const MarketplacePluginPage = Page(MarketplacePlugin).annotate({ identifier: "MarketplacePluginPage" })
export const MarketplacePluginResponse = Schema.Struct({ ok: Schema.Literal(true), item: MarketplacePlugin }).annotate({
  identifier: "MarketplacePluginResponse"
})

export const AddMarketplacePluginRequest = Schema.Struct({ pluginId: PluginId }).annotate({
  examples: [{ pluginId: releaseTooling.id }]
})

/** An MCP server a plugin's config objects need, matched to the organization's external MCP connections. */
export const CloudConnection = Schema.Struct({
  configObjectId: ConfigObjectId,
  id: Schema.NullOr(Schema.String).annotate({ description: "The matching external MCP connection (`emc_`), or null when none matches." }),
  name: Schema.String,
  serverName: Schema.String,
  url: Schema.String,
  authTypeMismatch: Schema.Boolean,
  connectedForMe: Schema.Boolean,
  oauthClientConfigured: Schema.Boolean,
  oauthClientRequired: Schema.Boolean
}).annotate({ identifier: "CloudConnection" })

export const ResolvedMarketplacePlugin = Schema.Struct({
  ...Plugin.fields,
  componentCounts: Schema.Record(ObjectType, Schema.optionalKey(Int)).annotate({
    description: "How many active config objects of each type the plugin holds; types it has none of are left out."
  }),
  cloudReadiness: Schema.Struct({
    hasInstructional: Schema.Boolean.annotate({
      description: "Whether the plugin holds a skill, agent, command, context or custom object (something a cloud agent can read)."
    }),
    connections: Schema.Array(CloudConnection).annotate({
      description:
        "The remote MCP servers its `mcp` objects declare (servers by name under `mcpServers` or `mcp`, or the object itself with a `url`; local `command` servers are left out), each matched to an external MCP connection of the organization by URL (scheme and host ignoring case, default port and trailing slash ignored). For a member, only connections a grant gives them match; `id` is null without a match. `connectedForMe` and the OAuth flags are the matched connection's, for the caller; `authTypeMismatch` says a server that names an `authType` got a connection of another."
    })
  })
}).annotate({
  identifier: "ResolvedMarketplacePlugin",
  examples: [{
    ...exampleOf(Plugin),
    componentCounts: { skill: 1 },
    cloudReadiness: { hasInstructional: true, connections: [] }
  }]
})

export const MarketplaceSource = Schema.Struct({
  connectorAccountId: ConnectorAccountId,
  connectorInstanceId: ConnectorInstanceId,
  accountLogin: Schema.String,
  repositoryFullName: Schema.String,
  branch: Schema.String
}).annotate({
  identifier: "MarketplaceSource",
  examples: [{
    connectorAccountId: exampleId("cac"),
    connectorInstanceId: exampleId("cin"),
    accountLogin: "acme",
    repositoryFullName: "acme/agent-plugins",
    branch: "main"
  }]
})

export const ResolvedMarketplaceResponse = Schema.Struct({
  ok: Schema.Literal(true),
  item: Schema.Struct({
    marketplace: Marketplace,
    plugins: Schema.Array(ResolvedMarketplacePlugin).annotate({
      description: "The plugins it lists that are not deleted, by name."
    }),
    source: Schema.NullOr(MarketplaceSource).annotate({
      description: "The repository branch a marketplace made by a discovery apply is synced from (its connector instance's first target); null for a marketplace people made."
    })
  })
}).annotate({ identifier: "ResolvedMarketplaceResponse" })

export const MarketplacePath = Schema.Struct({ marketplaceId: MarketplaceId })
export const MarketplacePluginPath = Schema.Struct({ marketplaceId: MarketplaceId, pluginId: PluginId })

/**
 * Connectors: a code-hosting account (a GitHub App installation, or a token), instances that link one repository
 * of it to the organization, targets (the branch an instance follows), mappings (which files of the branch become
 * which config objects, in which plugin), and what syncing them records.
 */
import { Schema } from "effect"
import { allErrors, QueryInteger, requestBody, searchText, Timestamp, TrimmedText } from "./Common.js"
import { JsonObject, ObjectType } from "./ConfigObjects.js"
import {
  DiscoveredMarketplace,
  DiscoveredPlugin,
  DiscoveryStep,
  RepositoryClassification,
  TreeEntry,
  TreeSummary
} from "./Discovery.js"
import {
  ConnectorAccountId,
  ConnectorInstanceId,
  ConnectorMappingId,
  ConnectorSyncEventId,
  ConnectorTargetId,
  MarketplaceId,
  MembershipId,
  OrganizationId,
  PluginId
} from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"

export const ConnectorType = Schema.Literal("codehost").annotations({
  identifier: "ConnectorType",
  description: "The external system: `codehost`, a GitHub (or GitHub Enterprise Server) repository."
})
export type ConnectorType = typeof ConnectorType.Type

/** Optional in requests: there is one connector type today. */
const connectorTypeInput = Schema.optionalWith(ConnectorType, { exact: true }).annotations({
  description: "`codehost` (the default; the only type)."
})

/** `owner/name`, as GitHub spells a repository. */
export const RepositoryFullName = Schema.Trim.pipe(
  Schema.pattern(/^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/, {
    message: () => "must be a repository as owner/name (letters, digits, '.', '-', '_')"
  })
).annotations({
  identifier: "RepositoryFullName",
  description: "A repository as `owner/name`.",
  jsonSchema: { type: "string", minLength: 3, maxLength: 201, pattern: "^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$" }
})

/** A branch name, as git allows it (no `..`, no control characters, no leading `-` or `/`). */
export const BranchName = TrimmedText(1, 255, "Branch name").pipe(
  Schema.filter((name) =>
    (/^[^\u0000-\u001f\u007f ~^:?*[\\]+$/.test(name) && !name.includes("..") && !name.startsWith("-") && !name.startsWith("/") &&
      !name.endsWith("/") && !name.endsWith(".lock")) || "is not a valid git branch name"
  )
)

// ---------------------------------------------------------------------------------------------------------------
// Accounts

export const ConnectorAccountKind = Schema.Literal("app_installation", "token").annotations({
  identifier: "ConnectorAccountKind",
  description:
    "`app_installation`: an installation of the server's GitHub App (`ORGPLANE_CODEHOST_APP_ID`); tokens are minted per installation and webhooks arrive. `token`: a personal or fine-grained access token, for servers without an app."
})
export type ConnectorAccountKind = typeof ConnectorAccountKind.Type

export const ConnectorAccountStatus = Schema.Literal("active", "disconnected").annotations({
  identifier: "ConnectorAccountStatus",
  description: "`disconnected` once GitHub reports the app uninstalled: its instances stop syncing."
})

export class ConnectorAccount extends Schema.Class<ConnectorAccount>("ConnectorAccount")({
  id: ConnectorAccountId,
  organizationId: OrganizationId,
  connectorType: ConnectorType,
  kind: ConnectorAccountKind,
  remoteId: Schema.NullOr(Schema.String).annotations({
    description: "The GitHub App installation id (as a string); null for a token account."
  }),
  externalAccountRef: Schema.NullOr(Schema.String).annotations({ description: "The GitHub account (user or organization) login." }),
  displayName: Schema.String,
  status: ConnectorAccountStatus,
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  updatedAt: Timestamp
}) {}

const accountFields = {
  displayName: Schema.optionalWith(TrimmedText(1, 255, "Name shown for the account"), { exact: true }),
  accountLogin: Schema.optionalWith(TrimmedText(1, 255, "The GitHub user or organization login"), { exact: true })
}

/** An app installation (`installationId`) or a token (`token`): exactly one, matching `kind`. */
export const CreateConnectorAccountRequest = Schema.Struct({
  connectorType: connectorTypeInput,
  kind: ConnectorAccountKind,
  installationId: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, Number.MAX_SAFE_INTEGER)), { exact: true }).annotations({
    description: "With `kind: app_installation`: the GitHub App installation id (from the installation's settings URL or its webhooks)."
  }),
  token: Schema.optionalWith(
    TrimmedText(1, 1000, "With `kind: token`: a GitHub access token that can read the repository contents; stored encrypted, never returned"),
    { exact: true }
  ),
  ...accountFields
}).pipe(
  Schema.filter((body) =>
    body.installationId === undefined && body.token === undefined
      ? "give installationId (kind app_installation) or token (kind token)"
      : body.kind === "app_installation"
      ? body.token === undefined || { path: ["token"], message: "an app_installation account takes installationId, not token" }
      : body.installationId === undefined || { path: ["installationId"], message: "a token account takes token, not installationId" }, {
    jsonSchema: { allOf: [{ oneOf: [{ required: ["installationId"] }, { required: ["token"] }] }] }
  })
).annotations({ ...requestBody, identifier: "CreateConnectorAccountRequest" })
export type CreateConnectorAccountRequest = typeof CreateConnectorAccountRequest.Type

export const DisconnectConnectorAccountRequest = Schema.Struct({
  reason: Schema.optionalWith(TrimmedText(1, 255, "Why, for the record"), { exact: true })
}).annotations(requestBody)

export const ConnectorAccountResponse = Schema.Struct({ ok: Schema.Literal(true), item: ConnectorAccount })
export const ConnectorAccountDetail = Schema.Struct({ item: ConnectorAccount })
export const ConnectorAccountPage = Page(ConnectorAccount).annotations({ identifier: "ConnectorAccountPage" })
export const ConnectorAccountListQuery = Schema.Struct({ ...PageQueryFields }).annotations(allErrors)
export type ConnectorAccountListQuery = typeof ConnectorAccountListQuery.Type
export const ConnectorAccountPath = Schema.Struct({ connectorAccountId: ConnectorAccountId })

export const DisconnectConnectorAccountResponse = Schema.Struct({
  ok: Schema.Literal(true),
  item: Schema.Struct({
    disconnectedAccountId: ConnectorAccountId,
    deletedConnectorInstanceCount: Schema.Int,
    deletedConfigObjectCount: Schema.Int,
    deletedConnectorMappingCount: Schema.Int,
    deletedPluginCount: Schema.Int,
    deletedMarketplaceCount: Schema.Int,
    reason: Schema.NullOr(Schema.String)
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Instances

export const ConnectorInstanceStatus = Schema.Literal("active", "disabled").annotations({
  identifier: "ConnectorInstanceStatus",
  description:
    "`active`, or `disabled` (kept with everything it imported, until enabled again)."
})

export const SyncStatus = Schema.Literal("queued", "running", "completed", "failed", "ignored").annotations({
  identifier: "SyncStatus",
  description:
    "`queued` (recorded, waiting for a runner), `running`, `completed`, `failed` (gave up: `lastError` says why), `ignored` (nothing to do: the instance was disabled or removed, or the target removed, before the sync ran; `lastError` says which)."
})
export type SyncStatus = typeof SyncStatus.Type

export class ConnectorInstance extends Schema.Class<ConnectorInstance>("ConnectorInstance")({
  id: ConnectorInstanceId,
  organizationId: OrganizationId,
  connectorAccountId: ConnectorAccountId,
  connectorType: ConnectorType,
  remoteId: Schema.String.annotations({ description: "The repository, `owner/name`." }),
  name: Schema.String,
  status: ConnectorInstanceStatus,
  instanceConfigJson: JsonObject.annotations({
    description:
      "Free-form settings. Read by the server: `autoImportNewPlugins` (boolean, default true): whether a sync also imports plugins that appear in the repository after discovery was applied: once the instance has a live plugin made by an apply, a sync other than the apply's imports the supported candidates of its commit whose key no apply offered and no sync imported before (a candidate left out at apply, or whose plugin was deleted, is not imported again; apply it to bring it back)."
  }),
  lastSyncedAt: Schema.NullOr(Timestamp).annotations({ description: "When the last completed sync finished." }),
  lastSyncStatus: Schema.NullOr(SyncStatus),
  lastSyncCursor: Schema.NullOr(Schema.String).annotations({
    description: "The commit the last completed sync materialized."
  }),
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  updatedAt: Timestamp
}) {}

export const CreateConnectorInstanceRequest = Schema.Struct({
  connectorAccountId: ConnectorAccountId,
  connectorType: connectorTypeInput,
  name: TrimmedText(1, 255, "Name, unique in the organization"),
  remoteId: RepositoryFullName,
  config: Schema.optionalWith(JsonObject, { exact: true })
}).annotations(requestBody)
export type CreateConnectorInstanceRequest = typeof CreateConnectorInstanceRequest.Type

export const UpdateConnectorInstanceRequest = Schema.Struct({
  remoteId: Schema.optionalWith(RepositoryFullName, { exact: true }),
  name: Schema.optionalWith(TrimmedText(1, 255, "Name, unique in the organization"), { exact: true }),
  config: Schema.optionalWith(JsonObject, { exact: true }).annotations({
    description: "Replaces `instanceConfigJson` as a whole."
  })
}).pipe(
  Schema.filter((body) =>
    body.remoteId !== undefined || body.name !== undefined || body.config !== undefined ||
    { path: ["name"], message: "give at least one of remoteId, name or config" }, {
    jsonSchema: { minProperties: 1 }
  })
).annotations(requestBody)
export type UpdateConnectorInstanceRequest = typeof UpdateConnectorInstanceRequest.Type

export const ConnectorInstanceResponse = Schema.Struct({ ok: Schema.Literal(true), item: ConnectorInstance })
export const ConnectorInstanceDetail = Schema.Struct({ item: ConnectorInstance })
export const ConnectorInstancePage = Page(ConnectorInstance).annotations({ identifier: "ConnectorInstancePage" })
export const ConnectorInstanceListQuery = Schema.Struct({
  ...PageQueryFields,
  connectorAccountId: Schema.optionalWith(ConnectorAccountId, { exact: true }),
  q: Schema.optionalWith(searchText("Text to look for in the name and repository."), { exact: true })
}).annotations(allErrors)
export type ConnectorInstanceListQuery = typeof ConnectorInstanceListQuery.Type
export const ConnectorInstancePath = Schema.Struct({ connectorInstanceId: ConnectorInstanceId })

export const RemoveConnectorInstanceResponse = Schema.Struct({
  ok: Schema.Literal(true),
  item: Schema.Struct({
    removedConnectorInstanceId: ConnectorInstanceId,
    deletedConfigObjectCount: Schema.Int,
    deletedConnectorMappingCount: Schema.Int,
    deletedPluginCount: Schema.Int.annotations({ description: "Plugins the instance created that held nothing else." }),
    deletedMarketplaceCount: Schema.Int.annotations({
      description: "Marketplaces the instance created that listed nothing else."
    })
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Targets

export const TargetKind = Schema.Literal("repository_branch").annotations({
  identifier: "TargetKind",
  description: "`repository_branch`: one branch of the instance's repository."
})

export class ConnectorTarget extends Schema.Class<ConnectorTarget>("ConnectorTarget")({
  id: ConnectorTargetId,
  connectorInstanceId: ConnectorInstanceId,
  connectorType: ConnectorType,
  remoteId: Schema.String.annotations({ description: "The repository, `owner/name`." }),
  targetKind: TargetKind,
  externalTargetRef: Schema.String.annotations({ description: "The branch." }),
  targetConfigJson: JsonObject.annotations({ description: "Free-form settings of the target; not read by the server." }),
  createdAt: Timestamp,
  updatedAt: Timestamp
}) {}

export const CreateConnectorTargetRequest = Schema.Struct({
  connectorType: connectorTypeInput,
  targetKind: Schema.optionalWith(TargetKind, { exact: true }),
  remoteId: Schema.optionalWith(RepositoryFullName, { exact: true }).annotations({
    description: "The repository; default: the instance's."
  }),
  externalTargetRef: BranchName.annotations({ description: "The branch to follow." }),
  config: Schema.optionalWith(JsonObject, { exact: true })
}).annotations(requestBody)
export type CreateConnectorTargetRequest = typeof CreateConnectorTargetRequest.Type

export const UpdateConnectorTargetRequest = Schema.Struct({
  remoteId: Schema.optionalWith(RepositoryFullName, { exact: true }),
  externalTargetRef: Schema.optionalWith(BranchName, { exact: true }),
  config: Schema.optionalWith(JsonObject, { exact: true }).annotations({ description: "Replaces `targetConfigJson`." })
}).pipe(
  Schema.filter((body) =>
    body.remoteId !== undefined || body.externalTargetRef !== undefined || body.config !== undefined ||
    { path: ["remoteId"], message: "give at least one of remoteId, externalTargetRef or config" }, {
    jsonSchema: { minProperties: 1 }
  })
).annotations(requestBody)
export type UpdateConnectorTargetRequest = typeof UpdateConnectorTargetRequest.Type

export const ConnectorTargetResponse = Schema.Struct({ ok: Schema.Literal(true), item: ConnectorTarget })
export const ConnectorTargetDetail = Schema.Struct({ item: ConnectorTarget })
export const ConnectorTargetPage = Page(ConnectorTarget).annotations({ identifier: "ConnectorTargetPage" })
export const ConnectorTargetListQuery = Schema.Struct({ ...PageQueryFields }).annotations(allErrors)
export type ConnectorTargetListQuery = typeof ConnectorTargetListQuery.Type
export const ConnectorTargetPath = Schema.Struct({ connectorTargetId: ConnectorTargetId })

// ---------------------------------------------------------------------------------------------------------------
// Mappings

export const MappingKind = Schema.Literal("path", "api", "custom").annotations({
  identifier: "MappingKind",
  description:
    "`path`: `selector` is a repository path (`skills/deploy/SKILL.md`) or a folder glob (`skills/**`), and sync materializes the matching files. `api` and `custom` are stored for integrations and not materialized by sync."
})
export type MappingKind = typeof MappingKind.Type

export class ConnectorMapping extends Schema.Class<ConnectorMapping>("ConnectorMapping")({
  id: ConnectorMappingId,
  connectorInstanceId: ConnectorInstanceId,
  connectorTargetId: ConnectorTargetId,
  connectorType: ConnectorType,
  remoteId: Schema.NullOr(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255))),
  mappingKind: MappingKind,
  selector: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)),
  objectType: ObjectType,
  pluginId: Schema.NullOr(PluginId),
  autoAddToPlugin: Schema.Boolean.annotations({
    description: "Whether sync adds the objects it materializes to `pluginId` (it never removes memberships people added)."
  }),
  mappingConfigJson: Schema.NullOr(JsonObject),
  createdAt: Timestamp,
  updatedAt: Timestamp
}) {}

export const Selector = TrimmedText(1, 255, "A repository path, or a folder followed by `/**` for every file under it")

export const CreateConnectorMappingRequest = Schema.Struct({
  mappingKind: MappingKind,
  selector: Selector,
  objectType: ObjectType,
  pluginId: Schema.optionalWith(Schema.NullOr(PluginId), { exact: true }).annotations({
    description: "The plugin the mapped objects belong to (editor access on it needed)."
  }),
  autoAddToPlugin: Schema.optionalWith(Schema.Boolean, { exact: true }).annotations({ description: "Default false." }),
  config: Schema.optionalWith(Schema.NullOr(JsonObject), { exact: true })
}).annotations(requestBody)
export type CreateConnectorMappingRequest = typeof CreateConnectorMappingRequest.Type

export const UpdateConnectorMappingRequest = Schema.Struct({
  selector: Schema.optionalWith(Selector, { exact: true }),
  objectType: Schema.optionalWith(ObjectType, { exact: true }),
  pluginId: Schema.optionalWith(Schema.NullOr(PluginId), { exact: true }).annotations({ description: "null detaches the plugin." }),
  autoAddToPlugin: Schema.optionalWith(Schema.Boolean, { exact: true }),
  config: Schema.optionalWith(Schema.NullOr(JsonObject), { exact: true })
}).pipe(
  Schema.filter((body) =>
    Object.values(body).some((value) => value !== undefined) ||
    { path: ["selector"], message: "give at least one of selector, objectType, pluginId, autoAddToPlugin or config" }, {
    jsonSchema: { minProperties: 1 }
  })
).annotations(requestBody)
export type UpdateConnectorMappingRequest = typeof UpdateConnectorMappingRequest.Type

export const ConnectorMappingResponse = Schema.Struct({ ok: Schema.Literal(true), item: ConnectorMapping })
export const ConnectorMappingDetail = Schema.Struct({ item: ConnectorMapping })
/** The spec's cursor for this list: 1 to 255 characters. */
export const MappingCursor = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)).annotations({
  description: "Opaque position returned as `nextCursor`; pass it back unchanged with the same filters."
})
export const ConnectorMappingPage = Schema.Struct({
  items: Schema.Array(ConnectorMapping),
  nextCursor: Schema.NullOr(MappingCursor)
}).annotations({ identifier: "ConnectorMappingPage" })
export const ConnectorMappingListQuery = Schema.Struct({
  cursor: Schema.optionalWith(MappingCursor, { exact: true }),
  limit: Schema.optionalWith(QueryInteger(1, 100, "Page size, 1 to 100 (default 50)."), { exact: true }),
  mappingKind: Schema.optionalWith(MappingKind, { exact: true }),
  objectType: Schema.optionalWith(ObjectType, { exact: true }),
  pluginId: Schema.optionalWith(PluginId, { exact: true }),
  q: Schema.optionalWith(searchText("Text to look for in the selector and remote id (case-insensitive substring)."), { exact: true })
}).annotations(allErrors)
export type ConnectorMappingListQuery = typeof ConnectorMappingListQuery.Type
export const ConnectorMappingPath = Schema.Struct({ connectorMappingId: ConnectorMappingId })

// ---------------------------------------------------------------------------------------------------------------
// Sync

export const SyncEventType = Schema.Literal("push", "sync_now", "resync", "apply").annotations({
  identifier: "SyncEventType",
  description:
    "What asked for the sync: a webhook `push` to the target's branch, `sync_now` (`POST /v1/connector-instances/{id}/sync`), `resync` (`POST /v1/connector-targets/{id}/resync`: every mapped file is read again, unchanged or not), or `apply` (a discovery selection was applied)."
})
export type SyncEventType = typeof SyncEventType.Type

export const SyncSummary = Schema.Struct({
  created: Schema.Int.annotations({ description: "Config objects created." }),
  updated: Schema.Int.annotations({ description: "Config objects given a new version." }),
  deleted: Schema.Int.annotations({ description: "Config objects whose file disappeared: a deleted version was written and the object soft-deleted." }),
  unchanged: Schema.Int.annotations({ description: "Mapped files whose blob had not changed since the last sync (not read again)." }),
  skipped: Schema.Int.annotations({ description: "Mapped files that could not be materialized (too large, not text, unparseable); `warnings` says which." }),
  warnings: Schema.Array(Schema.String).annotations({
    description: "At most 100: one per skipped file, and one when the import of new plugins could not run."
  }),
  importedPluginKeys: Schema.Array(Schema.String).annotations({
    description:
      "Discovery candidate keys this sync imported (`autoImportNewPlugins`): plugins that appeared in the repository since discovery was applied, created with their mappings before the sync read the tree. Empty when none."
  })
}).annotations({ identifier: "SyncSummary" })
export type SyncSummary = typeof SyncSummary.Type

export class ConnectorSyncEvent extends Schema.Class<ConnectorSyncEvent>("ConnectorSyncEvent")({
  id: ConnectorSyncEventId,
  connectorInstanceId: ConnectorInstanceId,
  connectorTargetId: ConnectorTargetId,
  eventType: SyncEventType,
  externalEventRef: Schema.NullOr(Schema.String).annotations({ description: "The webhook delivery id, for `push`." }),
  sourceRevisionRef: Schema.NullOr(Schema.String).annotations({
    description: "The commit synced: the pushed head for `push`; for the others, the branch head read when the sync started (null until then)."
  }),
  status: SyncStatus,
  attempts: Schema.Int.annotations({ description: "Calls to the code host that were retried after a transient failure (429, 5xx, network), in all." }),
  lastError: Schema.NullOr(Schema.String).annotations({ description: "Why the sync failed, or the last transient failure it retried." }),
  summary: Schema.NullOr(SyncSummary).annotations({ description: "What the sync changed; null until it completes." }),
  createdAt: Timestamp,
  startedAt: Schema.NullOr(Timestamp),
  completedAt: Schema.NullOr(Timestamp).annotations({ description: "When it completed or failed." })
}) {}

export const ConnectorSyncEventPath = Schema.Struct({ connectorSyncEventId: ConnectorSyncEventId })
export const ConnectorSyncEventDetail = Schema.Struct({ item: ConnectorSyncEvent })
export const ConnectorSyncEventPage = Page(ConnectorSyncEvent).annotations({ identifier: "ConnectorSyncEventPage" })
export const ConnectorSyncEventListQuery = Schema.Struct({
  ...PageQueryFields,
  connectorTargetId: Schema.optionalWith(ConnectorTargetId, { exact: true }),
  status: Schema.optionalWith(SyncStatus, { exact: true })
}).annotations(allErrors)
export type ConnectorSyncEventListQuery = typeof ConnectorSyncEventListQuery.Type

/** One event per target of the instance: a target whose head was already synced or queued answers that event. */
export const SyncNowResponse = Schema.Struct({
  ok: Schema.Literal(true),
  items: Schema.Array(ConnectorSyncEvent)
}).annotations({ identifier: "SyncNowResponse" })
export const ResyncResponse = Schema.Struct({ ok: Schema.Literal(true), item: ConnectorSyncEvent }).annotations({
  identifier: "ResyncResponse"
})

// ---------------------------------------------------------------------------------------------------------------
// Discovery

export class DiscoveryResult extends Schema.Class<DiscoveryResult>("DiscoveryResult")({
  autoImportNewPlugins: Schema.Boolean.annotations({
    description: "The instance's `instanceConfigJson.autoImportNewPlugins` (default true)."
  }),
  classification: RepositoryClassification,
  connectorInstance: ConnectorInstance,
  connectorTarget: ConnectorTarget,
  discoveredPlugins: Schema.Array(DiscoveredPlugin),
  marketplace: Schema.NullOr(DiscoveredMarketplace).annotations({
    description: "The marketplace a `claude_marketplace_repo` describes; null otherwise."
  }),
  repositoryFullName: Schema.String,
  sourceRevisionRef: Schema.String.annotations({ description: "The commit scanned: the branch head when discovery ran." }),
  steps: Schema.Array(DiscoveryStep),
  treeSummary: TreeSummary,
  warnings: Schema.Array(Schema.String)
}) {}

export const DiscoveryResponse = Schema.Struct({ ok: Schema.Literal(true), item: DiscoveryResult }).annotations({
  identifier: "DiscoveryResponse"
})

export const DiscoveryQuery = Schema.Struct({
  connectorTargetId: Schema.optionalWith(ConnectorTargetId, { exact: true }).annotations({
    description: "The target (branch) to scan; default: the instance's first target."
  })
}).annotations(allErrors)
export type DiscoveryQuery = typeof DiscoveryQuery.Type

export const TreeCursor = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)).annotations({
  description: "Opaque position returned as `nextCursor`; pass it back unchanged with the same `prefix`."
})
export const DiscoveryTreeQuery = Schema.Struct({
  cursor: Schema.optionalWith(TreeCursor, { exact: true }),
  limit: Schema.optionalWith(QueryInteger(1, 500, "Page size, 1 to 500 (default 100)."), { exact: true }),
  prefix: Schema.optionalWith(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1024)), { exact: true }).annotations({
    description: "Only entries whose path starts with this text (1 to 1024 characters), for example `skills/`."
  }),
  connectorTargetId: Schema.optionalWith(ConnectorTargetId, { exact: true }).annotations({
    description: "The target whose tree to list; default: the instance's first target."
  })
}).annotations(allErrors)
export type DiscoveryTreeQuery = typeof DiscoveryTreeQuery.Type

export const TreeEntryPage = Schema.Struct({
  items: Schema.Array(TreeEntry),
  nextCursor: Schema.NullOr(TreeCursor)
}).annotations({ identifier: "TreeEntryPage" })

export const ApplyDiscoveryRequest = Schema.Struct({
  keys: Schema.Array(TrimmedText(1, 1024, "A discovered plugin's `key`.")).pipe(Schema.minItems(1), Schema.maxItems(500)).annotations({
    description: "The candidates to import, by `key` (1 to 500). Each must be a `supported` candidate of the current discovery."
  }),
  connectorTargetId: Schema.optionalWith(ConnectorTargetId, { exact: true }).annotations({
    description: "The target discovered; default: the instance's first target."
  })
}).annotations(requestBody)
export type ApplyDiscoveryRequest = typeof ApplyDiscoveryRequest.Type

export const AppliedPlugin = Schema.Struct({
  key: Schema.String,
  pluginId: PluginId,
  created: Schema.Boolean.annotations({ description: "False when a plugin the instance created earlier for this key was reused." }),
  mappingIds: Schema.Array(ConnectorMappingId)
}).annotations({ identifier: "AppliedPlugin" })

export const ApplyDiscoveryResponse = Schema.Struct({
  ok: Schema.Literal(true),
  item: Schema.Struct({
    sourceRevisionRef: Schema.String,
    plugins: Schema.Array(AppliedPlugin),
    marketplaceId: Schema.NullOr(MarketplaceId).annotations({
      description: "The marketplace created or reused for a marketplace repository; null otherwise."
    }),
    syncEvent: ConnectorSyncEvent.annotations({ description: "The sync that materializes the files (queued)." })
  })
}).annotations({ identifier: "ApplyDiscoveryResponse" })

// ---------------------------------------------------------------------------------------------------------------
// Webhook

export const WebhookIgnored = Schema.Struct({
  ok: Schema.Literal(true),
  accepted: Schema.Literal(false),
  reason: Schema.String.annotations({ description: "Why nothing was recorded, for example `no tracked branch`." })
}).annotations({ identifier: "WebhookIgnored" })

export const WebhookAccepted = Schema.Struct({
  ok: Schema.Literal(true),
  accepted: Schema.Literal(true),
  deliveryId: Schema.String.annotations({ description: "The delivery's `X-GitHub-Delivery`." }),
  queued: Schema.Literal(true)
}).annotations({ identifier: "WebhookAccepted" })

export const WebhookResponse = Schema.Union(WebhookAccepted, WebhookIgnored).annotations({ identifier: "WebhookResponse" })
export type WebhookResponse = typeof WebhookResponse.Type

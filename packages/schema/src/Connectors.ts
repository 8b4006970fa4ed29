/**
 * Connectors: a code-hosting account (a GitHub App installation, or a token), instances that link one repository
 * of it to the organization, targets (the branch an instance follows), mappings (which files of the branch become
 * which config objects, in which plugin), and what syncing them records.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Int, QueryInteger, searchText, Timestamp, TrimmedText } from "./Common.js"
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
  exampleId,
  MarketplaceId,
  MembershipId,
  OrganizationId,
  PluginId
} from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { acme, ada, exampleOf, exampleTime } from "./Examples.js"
import { trimmedString } from "./internal/trimmed.js"
import { publishedAs } from "./internal/published.js"

export const ConnectorType = Schema.Literal("codehost").annotate({
  identifier: "ConnectorType",
  description: "The external system: `codehost`, a GitHub (or GitHub Enterprise Server) repository."
})
export type ConnectorType = typeof ConnectorType.Type

/** Optional in requests: there is one connector type today. */
const connectorTypeInput = Schema.optionalKey(ConnectorType).annotateKey({
  description: "`codehost` (the default; the only type)."
})

/** `owner/name`, as GitHub spells a repository. */
const REPOSITORY_FULL_NAME = "^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$"
const repositoryFullName = new RegExp(REPOSITORY_FULL_NAME)
export const RepositoryFullName = trimmedString(
  (text) => repositoryFullName.test(text) ? undefined : "must be a repository as owner/name (letters, digits, '.', '-', '_')",
  { minLength: 3, maxLength: 201, pattern: REPOSITORY_FULL_NAME },
  "A repository as `owner/name`."
).annotate({
  identifier: "RepositoryFullName",
  description: "A repository as `owner/name`.",
  // Published as this JSON Schema alone (its description not written in it).
  ...publishedAs({ type: "string", minLength: 3, maxLength: 201, pattern: REPOSITORY_FULL_NAME })
})

/** A branch name, as git allows it (no `..`, no control characters, no leading `-` or `/`). */
export const BranchName = TrimmedText(1, 255, "Branch name", "^(?![-/])(?!.*\\.\\.)(?!.*(?:/|\\.lock)$)[^\\u0000-\\u001f\\u007f ~^:?*[\\\\]+$").check(
  Schema.makeFilter((name: string) =>
    (/^[^\u0000-\u001f\u007f ~^:?*[\\]+$/.test(name) && !name.includes("..") && !name.startsWith("-") && !name.startsWith("/") &&
      !name.endsWith("/") && !name.endsWith(".lock")) || "is not a valid git branch name"
  )
)

/** The example repository: Acme's agent plugins on GitHub, through the app's installation. */
const repository = { fullName: "acme/agent-plugins", login: "acme", installationId: 51234567, head: "9fceb02d0ae598e95dc970b74767f19372d61af8" }

// ---------------------------------------------------------------------------------------------------------------
// Accounts

export const ConnectorAccountKind = Schema.Literals(["app_installation", "token"]).annotate({
  identifier: "ConnectorAccountKind",
  description:
    "`app_installation`: an installation of the server's GitHub App (`ORGPLANE_CODEHOST_APP_ID`); tokens are minted per installation and webhooks arrive. `token`: a personal or fine-grained access token, for servers without an app."
})
export type ConnectorAccountKind = typeof ConnectorAccountKind.Type

export const ConnectorAccountStatus = Schema.Literals(["active", "disconnected"]).annotate({
  identifier: "ConnectorAccountStatus",
  description: "`disconnected` once GitHub reports the app uninstalled: its instances stop syncing."
})

export class ConnectorAccount extends Schema.Class<ConnectorAccount>("ConnectorAccount")(Schema.Struct({
  id: ConnectorAccountId,
  organizationId: OrganizationId,
  connectorType: ConnectorType,
  kind: ConnectorAccountKind,
  remoteId: Schema.NullOr(Schema.String).annotate({
    description: "The GitHub App installation id (as a string); null for a token account."
  }),
  externalAccountRef: Schema.NullOr(Schema.String).annotate({ description: "The GitHub account (user or organization) login." }),
  displayName: Schema.String,
  status: ConnectorAccountStatus,
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({
  examples: [{
    id: exampleId("cac"),
    organizationId: acme.id,
    connectorType: "codehost",
    kind: "app_installation",
    remoteId: String(repository.installationId),
    externalAccountRef: repository.login,
    displayName: "Acme on GitHub",
    status: "active",
    createdByOrgMembershipId: ada.membershipId,
    createdAt: exampleTime(200),
    updatedAt: exampleTime(200)
  }]
})) {}

export const ConnectorAccountDisplayName = TrimmedText(1, 255, "Name shown for the account")
export const ConnectorAccountLogin = TrimmedText(1, 255, "The GitHub user or organization login")

const accountFields = {
  displayName: Schema.optionalKey(ConnectorAccountDisplayName),
  accountLogin: Schema.optionalKey(ConnectorAccountLogin)
}

/** A GitHub App installation's id (from the installation's settings URL or its webhooks). */
export const InstallationId = Int.check(Schema.isBetween({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })).annotate({
  description: "The GitHub App installation id (from the installation's settings URL or its webhooks)."
})

/** A GitHub access token: stored encrypted, never returned. */
export const CodehostToken = TrimmedText(1, 1000, "A GitHub access token that can read the repository contents; stored encrypted, never returned")

/** An app installation (`installationId`) or a token (`token`): one member of the union per `kind`. */
export const CreateConnectorAccountRequest = Schema.Union([
  Schema.Struct({
    connectorType: connectorTypeInput,
    kind: Schema.Literal("app_installation"),
    installationId: InstallationId,
    ...accountFields
  }).annotate({
    identifier: "CreateAppInstallationAccountRequest",
    description: "An installation of the server's GitHub App.",
    examples: [{ kind: "app_installation", installationId: repository.installationId, displayName: "Acme on GitHub", accountLogin: repository.login }]
  }),
  Schema.Struct({
    connectorType: connectorTypeInput,
    kind: Schema.Literal("token"),
    token: CodehostToken,
    ...accountFields
  }).annotate({
    identifier: "CreateTokenAccountRequest",
    description: "An access token.",
    examples: [{ kind: "token", token: "github_pat_11AAAAAAA0example0token", accountLogin: repository.login }]
  })
]).annotate({ identifier: "CreateConnectorAccountRequest" })
export type CreateConnectorAccountRequest = typeof CreateConnectorAccountRequest.Type

export const DisconnectConnectorAccountRequest = Schema.Struct({
  reason: Schema.optionalKey(TrimmedText(1, 255, "Why, for the record"))
}).annotate({ examples: [{ reason: "The plugins moved to another GitHub organization" }] })

export const ConnectorAccountResponse = Schema.Struct({ ok: Schema.Literal(true), item: ConnectorAccount })
export const ConnectorAccountDetail = Schema.Struct({ item: ConnectorAccount })
export const ConnectorAccountPage = Page(ConnectorAccount).annotate({ identifier: "ConnectorAccountPage" })
export const ConnectorAccountListQuery = Schema.Struct({ ...PageQueryFields })
export type ConnectorAccountListQuery = typeof ConnectorAccountListQuery.Type
export const ConnectorAccountPath = Schema.Struct({ connectorAccountId: ConnectorAccountId })

export const DisconnectConnectorAccountResponse = Schema.Struct({
  ok: Schema.Literal(true),
  item: Schema.Struct({
    disconnectedAccountId: ConnectorAccountId,
    deletedConnectorInstanceCount: Int,
    deletedConfigObjectCount: Int,
    deletedConnectorMappingCount: Int,
    deletedPluginCount: Int,
    deletedMarketplaceCount: Int,
    reason: Schema.NullOr(Schema.String)
  })
}).annotate({
  examples: [{
    ok: true,
    item: {
      disconnectedAccountId: exampleId("cac"),
      deletedConnectorInstanceCount: 1,
      deletedConfigObjectCount: 4,
      deletedConnectorMappingCount: 2,
      deletedPluginCount: 1,
      deletedMarketplaceCount: 0,
      reason: "The plugins moved to another GitHub organization"
    }
  }]
})

// ---------------------------------------------------------------------------------------------------------------
// Instances

export const ConnectorInstanceStatus = Schema.Literals(["active", "disabled"]).annotate({
  identifier: "ConnectorInstanceStatus",
  description:
    "`active`, or `disabled` (kept with everything it imported, until enabled again)."
})

export const SyncStatus = Schema.Literals(["queued", "running", "completed", "failed", "ignored"]).annotate({
  identifier: "SyncStatus",
  description:
    "`queued` (recorded, waiting for a runner), `running`, `completed`, `failed` (gave up: `lastError` says why), `ignored` (nothing to do: the instance was disabled or removed, or the target removed, before the sync ran; `lastError` says which)."
})
export type SyncStatus = typeof SyncStatus.Type

export class ConnectorInstance extends Schema.Class<ConnectorInstance>("ConnectorInstance")(Schema.Struct({
  id: ConnectorInstanceId,
  organizationId: OrganizationId,
  connectorAccountId: ConnectorAccountId,
  connectorType: ConnectorType,
  remoteId: Schema.String.annotate({ description: "The repository, `owner/name`." }),
  name: Schema.String,
  status: ConnectorInstanceStatus,
  instanceConfigJson: JsonObject.annotateKey({
    description:
      "Free-form settings. Read by the server: `autoImportNewPlugins` (boolean, default true): whether a sync also imports plugins that appear in the repository after discovery was applied: once the instance has a live plugin made by an apply, a sync other than the apply's imports the supported candidates of its commit whose key no apply offered and no sync imported before (a candidate left out at apply, or whose plugin was deleted, is not imported again; apply it to bring it back)."
  }),
  lastSyncedAt: Schema.NullOr(Timestamp).annotate({ description: "When the last completed sync finished." }),
  lastSyncStatus: Schema.NullOr(SyncStatus),
  lastSyncCursor: Schema.NullOr(Schema.String).annotate({
    description: "The commit the last completed sync materialized."
  }),
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({
  examples: [{
    id: exampleId("cin"),
    organizationId: acme.id,
    connectorAccountId: exampleId("cac"),
    connectorType: "codehost",
    remoteId: repository.fullName,
    name: "Agent plugins",
    status: "active",
    instanceConfigJson: { autoImportNewPlugins: true },
    lastSyncedAt: exampleTime(230),
    lastSyncStatus: "completed",
    lastSyncCursor: repository.head,
    createdByOrgMembershipId: ada.membershipId,
    createdAt: exampleTime(210),
    updatedAt: exampleTime(230)
  }]
})) {}

/** A connector instance's name: what the API, and an organization's document, name it by. */
export const ConnectorInstanceName = TrimmedText(1, 255, "Name, unique in the organization")

export const CreateConnectorInstanceRequest = Schema.Struct({
  connectorAccountId: ConnectorAccountId,
  connectorType: connectorTypeInput,
  name: ConnectorInstanceName,
  remoteId: RepositoryFullName,
  config: Schema.optionalKey(JsonObject)
}).annotate({
  examples: [{ connectorAccountId: exampleId("cac"), name: "Agent plugins", remoteId: repository.fullName, config: { autoImportNewPlugins: true } }]
})
export type CreateConnectorInstanceRequest = typeof CreateConnectorInstanceRequest.Type

export const UpdateConnectorInstanceRequest = Schema.Struct({
  remoteId: Schema.optionalKey(RepositoryFullName),
  name: Schema.optionalKey(ConnectorInstanceName),
  config: Schema.optionalKey(JsonObject).annotateKey({
    description: "Replaces `instanceConfigJson` as a whole."
  })
}).check(
  Schema.makeFilter((body) =>
    body.remoteId !== undefined || body.name !== undefined || body.config !== undefined ||
    { path: ["name"], issue: "give at least one of remoteId, name or config" }, {
    toJsonSchema: () => ({ minProperties: 1 })
  })
).annotate({ examples: [{ config: { autoImportNewPlugins: false } }] })
export type UpdateConnectorInstanceRequest = typeof UpdateConnectorInstanceRequest.Type

export const ConnectorInstanceResponse = Schema.Struct({ ok: Schema.Literal(true), item: ConnectorInstance })
export const ConnectorInstanceDetail = Schema.Struct({ item: ConnectorInstance })
export const ConnectorInstancePage = Page(ConnectorInstance).annotate({ identifier: "ConnectorInstancePage" })
export const ConnectorInstanceListQuery = Schema.Struct({
  ...PageQueryFields,
  connectorAccountId: Schema.optionalKey(ConnectorAccountId),
  q: Schema.optionalKey(searchText("Text to look for in the name and repository."))
}).annotate({ examples: [{ connectorAccountId: exampleId("cac"), q: "plugins" }] })
export type ConnectorInstanceListQuery = typeof ConnectorInstanceListQuery.Type
export const ConnectorInstancePath = Schema.Struct({ connectorInstanceId: ConnectorInstanceId })

export const RemoveConnectorInstanceResponse = Schema.Struct({
  ok: Schema.Literal(true),
  item: Schema.Struct({
    removedConnectorInstanceId: ConnectorInstanceId,
    deletedConfigObjectCount: Int,
    deletedConnectorMappingCount: Int,
    deletedPluginCount: Schema.Int.annotate({ description: "Plugins the instance created that held nothing else." }),
    deletedMarketplaceCount: Schema.Int.annotate({
      description: "Marketplaces the instance created that listed nothing else."
    })
  })
}).annotate({
  examples: [{
    ok: true,
    item: {
      removedConnectorInstanceId: exampleId("cin"),
      deletedConfigObjectCount: 4,
      deletedConnectorMappingCount: 2,
      deletedPluginCount: 1,
      deletedMarketplaceCount: 0
    }
  }]
})

// ---------------------------------------------------------------------------------------------------------------
// Targets

export const TargetKind = Schema.Literal("repository_branch").annotate({
  identifier: "TargetKind",
  description: "`repository_branch`: one branch of the instance's repository."
})

export class ConnectorTarget extends Schema.Class<ConnectorTarget>("ConnectorTarget")(Schema.Struct({
  id: ConnectorTargetId,
  connectorInstanceId: ConnectorInstanceId,
  connectorType: ConnectorType,
  remoteId: Schema.String.annotate({ description: "The repository, `owner/name`." }),
  targetKind: TargetKind,
  externalTargetRef: Schema.String.annotate({ description: "The branch." }),
  targetConfigJson: JsonObject.annotateKey({ description: "Free-form settings of the target; not read by the server." }),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({
  examples: [{
    id: exampleId("ctg"),
    connectorInstanceId: exampleId("cin"),
    connectorType: "codehost",
    remoteId: repository.fullName,
    targetKind: "repository_branch",
    externalTargetRef: "main",
    targetConfigJson: {},
    createdAt: exampleTime(215),
    updatedAt: exampleTime(215)
  }]
})) {}

export const CreateConnectorTargetRequest = Schema.Struct({
  connectorType: connectorTypeInput,
  targetKind: Schema.optionalKey(TargetKind),
  remoteId: Schema.optionalKey(RepositoryFullName).annotateKey({
    description: "The repository; default: the instance's."
  }),
  // The document shows the wire side's description (BranchName's), not this member's.
  externalTargetRef: BranchName.annotate({ description: "The branch to follow." }),
  config: Schema.optionalKey(JsonObject)
}).annotate({ examples: [{ externalTargetRef: "main" }] })
export type CreateConnectorTargetRequest = typeof CreateConnectorTargetRequest.Type

export const UpdateConnectorTargetRequest = Schema.Struct({
  remoteId: Schema.optionalKey(RepositoryFullName),
  externalTargetRef: Schema.optionalKey(BranchName),
  config: Schema.optionalKey(JsonObject).annotateKey({ description: "Replaces `targetConfigJson`." })
}).check(
  Schema.makeFilter((body) =>
    body.remoteId !== undefined || body.externalTargetRef !== undefined || body.config !== undefined ||
    { path: ["remoteId"], issue: "give at least one of remoteId, externalTargetRef or config" }, {
    toJsonSchema: () => ({ minProperties: 1 })
  })
).annotate({ examples: [{ externalTargetRef: "release/2026.11" }] })
export type UpdateConnectorTargetRequest = typeof UpdateConnectorTargetRequest.Type

export const ConnectorTargetResponse = Schema.Struct({ ok: Schema.Literal(true), item: ConnectorTarget })
export const ConnectorTargetDetail = Schema.Struct({ item: ConnectorTarget })
export const ConnectorTargetPage = Page(ConnectorTarget).annotate({ identifier: "ConnectorTargetPage" })
export const ConnectorTargetListQuery = Schema.Struct({ ...PageQueryFields })
export type ConnectorTargetListQuery = typeof ConnectorTargetListQuery.Type
export const ConnectorTargetPath = Schema.Struct({ connectorTargetId: ConnectorTargetId })

// ---------------------------------------------------------------------------------------------------------------
// Mappings

export const MappingKind = Schema.Literals(["path", "api", "custom"]).annotate({
  identifier: "MappingKind",
  description:
    "`path`: `selector` is a repository path (`skills/deploy/SKILL.md`) or a folder glob (`skills/**`), and sync materializes the matching files. `api` and `custom` are stored for integrations and not materialized by sync."
})
export type MappingKind = typeof MappingKind.Type

export class ConnectorMapping extends Schema.Class<ConnectorMapping>("ConnectorMapping")(Schema.Struct({
  id: ConnectorMappingId,
  connectorInstanceId: ConnectorInstanceId,
  connectorTargetId: ConnectorTargetId,
  connectorType: ConnectorType,
  remoteId: Schema.NullOr(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255))),
  mappingKind: MappingKind,
  selector: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255)),
  objectType: ObjectType,
  pluginId: Schema.NullOr(PluginId),
  autoAddToPlugin: Schema.Boolean.annotate({
    description: "Whether sync adds the objects it materializes to `pluginId` (it never removes memberships people added)."
  }),
  mappingConfigJson: Schema.NullOr(JsonObject),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({
  examples: [{
    id: exampleId("cmp"),
    connectorInstanceId: exampleId("cin"),
    connectorTargetId: exampleId("ctg"),
    connectorType: "codehost",
    remoteId: repository.fullName,
    mappingKind: "path",
    selector: "skills/**",
    objectType: "skill",
    pluginId: exampleId("plg"),
    autoAddToPlugin: true,
    mappingConfigJson: null,
    createdAt: exampleTime(220),
    updatedAt: exampleTime(220)
  }]
})) {}

export const Selector = TrimmedText(1, 255, "A repository path, or a folder followed by `/**` for every file under it")

export const CreateConnectorMappingRequest = Schema.Struct({
  mappingKind: MappingKind,
  selector: Selector,
  objectType: ObjectType,
  pluginId: Schema.optionalKey(Schema.NullOr(PluginId)).annotateKey({
    description: "The plugin the mapped objects belong to (editor access on it needed)."
  }),
  autoAddToPlugin: Schema.optionalKey(Schema.Boolean).annotateKey({ description: "Default false." }),
  config: Schema.optionalKey(Schema.NullOr(JsonObject))
}).annotate({
  examples: [{ mappingKind: "path", selector: "skills/**", objectType: "skill", pluginId: exampleId("plg"), autoAddToPlugin: true }]
})
export type CreateConnectorMappingRequest = typeof CreateConnectorMappingRequest.Type

export const UpdateConnectorMappingRequest = Schema.Struct({
  selector: Schema.optionalKey(Selector),
  objectType: Schema.optionalKey(ObjectType),
  pluginId: Schema.optionalKey(Schema.NullOr(PluginId)).annotateKey({ description: "null detaches the plugin." }),
  autoAddToPlugin: Schema.optionalKey(Schema.Boolean),
  config: Schema.optionalKey(Schema.NullOr(JsonObject))
}).check(
  Schema.makeFilter((body) =>
    Object.values(body).some((value) => value !== undefined) ||
    { path: ["selector"], issue: "give at least one of selector, objectType, pluginId, autoAddToPlugin or config" }, {
    toJsonSchema: () => ({ minProperties: 1 })
  })
).annotate({ examples: [{ selector: "plugins/release/skills/**", autoAddToPlugin: false }] })
export type UpdateConnectorMappingRequest = typeof UpdateConnectorMappingRequest.Type

export const ConnectorMappingResponse = Schema.Struct({ ok: Schema.Literal(true), item: ConnectorMapping })
export const ConnectorMappingDetail = Schema.Struct({ item: ConnectorMapping })
/** The spec's cursor for this list: 1 to 255 characters. */
export const MappingCursor = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255)).annotate({
  description: "Opaque position returned as `nextCursor`; pass it back unchanged with the same filters."
})
export const ConnectorMappingPage = Schema.Struct({
  items: Schema.Array(ConnectorMapping),
  nextCursor: Schema.NullOr(MappingCursor)
}).annotate({ identifier: "ConnectorMappingPage" })
export const ConnectorMappingListQuery = Schema.Struct({
  cursor: Schema.optionalKey(MappingCursor),
  limit: Schema.optionalKey(QueryInteger(1, 100, "Page size, 1 to 100 (default 50).")),
  mappingKind: Schema.optionalKey(MappingKind),
  objectType: Schema.optionalKey(ObjectType),
  pluginId: Schema.optionalKey(PluginId),
  q: Schema.optionalKey(searchText("Text to look for in the selector and remote id (case-insensitive substring)."))
}).annotate({
  examples: [{ limit: 20, mappingKind: "path", objectType: "skill", pluginId: exampleId("plg"), q: "skills" }]
})
export type ConnectorMappingListQuery = typeof ConnectorMappingListQuery.Type
export const ConnectorMappingPath = Schema.Struct({ connectorMappingId: ConnectorMappingId })

// ---------------------------------------------------------------------------------------------------------------
// Sync

export const SyncEventType = Schema.Literals(["push", "sync_now", "resync", "apply"]).annotate({
  identifier: "SyncEventType",
  description:
    "What asked for the sync: a webhook `push` to the target's branch, `sync_now` (`POST /v1/connector-instances/{id}/sync`), `resync` (`POST /v1/connector-targets/{id}/resync`: every mapped file is read again, unchanged or not), or `apply` (a discovery selection was applied)."
})
export type SyncEventType = typeof SyncEventType.Type

export const SyncOutcome = Schema.Literals(["complete", "partial"]).annotate({
  identifier: "SyncOutcome",
  description:
    "`complete` when every mapped file was imported (or was unchanged, or deleted as its file was); `partial` when some were skipped (`skippedFiles` says which and why) or the import of new plugins could not run. `orgplane connectors sync --wait` exits non-zero on a partial sync unless given `--allow-partial`."
})
export type SyncOutcome = typeof SyncOutcome.Type

export const SkippedFile = Schema.Struct({
  path: Schema.String.annotate({ description: "The file, from the repository root." }),
  reason: Schema.String.annotate({ description: "Why it was not imported, naming the field when one is at fault." }),
  connectorMappingId: ConnectorMappingId
}).annotate({ identifier: "SkippedFile" })
export type SkippedFile = typeof SkippedFile.Type

export const FollowedPluginChange = Schema.Literals(["updated", "renamed", "moved", "left", "returned"]).annotate({
  identifier: "FollowedPluginChange",
  description:
    "How a plugin the instance imported followed its repository: `updated` (version, description, author, keywords or components changed), `renamed` (same folder, new name), `moved` (same name, new folder), `left` (no longer listed: archived and taken out of the marketplace, its config objects kept as history), `returned` (listed again after it left: active again)."
})
export type FollowedPluginChange = typeof FollowedPluginChange.Type

export const FollowedPlugin = Schema.Struct({
  pluginId: PluginId,
  change: FollowedPluginChange,
  name: Schema.String.annotate({ description: "The plugin's name after the sync." }),
  previousName: Schema.NullOr(Schema.String).annotate({ description: "Its name before a rename; null otherwise." }),
  key: Schema.String.annotate({ description: "The discovery candidate key it is imported from after the sync (a move changes it)." })
}).annotate({ identifier: "FollowedPlugin" })
export type FollowedPlugin = typeof FollowedPlugin.Type

export const SyncSummary = Schema.Struct({
  // Left out on the wire (summaries stored before 0.1.0): the defaults, when decoding and when constructing. A
  // member's description goes on its wire side, which the document shows.
  outcome: SyncOutcome.pipe(
    Schema.withDecodingDefaultKey(Effect.succeed("complete" as const)),
    Schema.withConstructorDefault(Effect.succeed("complete" as const))
  ),
  skippedFiles: Schema.Array(SkippedFile).pipe(
    Schema.annotateEncoded({
      description: "At most 100: the skipped files with their reasons (summaries stored before 0.1.0 have none)."
    }),
    Schema.withDecodingDefaultKey(Effect.succeed([])),
    Schema.withConstructorDefault(Effect.succeed([]))
  ),
  created: Schema.Int.annotate({ description: "Config objects created." }),
  updated: Schema.Int.annotate({ description: "Config objects given a new version." }),
  deleted: Schema.Int.annotate({ description: "Config objects whose file disappeared: a deleted version was written and the object soft-deleted." }),
  unchanged: Schema.Int.annotate({ description: "Mapped files whose blob had not changed since the last sync (not read again)." }),
  skipped: Schema.Int.annotate({ description: "Mapped files that could not be materialized (too large, not text, unparseable); `warnings` says which." }),
  warnings: Schema.Array(Schema.String).annotate({
    description: "At most 100: one per skipped file, and one when the import of new plugins could not run."
  }),
  importedPluginKeys: Schema.Array(Schema.String).annotate({
    description:
      "Discovery candidate keys this sync imported (`autoImportNewPlugins`): plugins that appeared in the repository since discovery was applied, created with their mappings before the sync read the tree. Empty when none."
  }),
  followedPlugins: Schema.Array(FollowedPlugin).pipe(
    Schema.annotateEncoded({
      description:
        "The plugins the instance imported that changed with the repository at this commit, before the sync read the tree (docs/connectors.md, \"Following a marketplace\"): new metadata or component kinds, renames, moves, plugins that left the marketplace or came back. Empty when none (and in summaries stored before 0.3.0)."
    }),
    Schema.withDecodingDefaultKey(Effect.succeed([])),
    Schema.withConstructorDefault(Effect.succeed([]))
  )
}).annotate({ identifier: "SyncSummary" })
export type SyncSummary = typeof SyncSummary.Type

export class ConnectorSyncEvent extends Schema.Class<ConnectorSyncEvent>("ConnectorSyncEvent")(Schema.Struct({
  id: ConnectorSyncEventId,
  connectorInstanceId: ConnectorInstanceId,
  connectorTargetId: ConnectorTargetId,
  eventType: SyncEventType,
  externalEventRef: Schema.NullOr(Schema.String).annotate({ description: "The webhook delivery id, for `push`." }),
  sourceRevisionRef: Schema.NullOr(Schema.String).annotate({
    description: "The commit synced: the pushed head for `push`; for the others, the branch head read when the sync started (null until then)."
  }),
  status: SyncStatus,
  attempts: Schema.Int.annotate({ description: "Calls to the code host that were retried after a transient failure (429, 5xx, network), in all." }),
  lastError: Schema.NullOr(Schema.String).annotate({ description: "Why the sync failed, or the last transient failure it retried." }),
  summary: Schema.NullOr(SyncSummary).annotate({ description: "What the sync changed; null until it completes." }),
  createdAt: Timestamp,
  startedAt: Schema.NullOr(Timestamp),
  completedAt: Schema.NullOr(Timestamp).annotate({ description: "When it completed or failed." })
}).annotate({
  examples: [{
    id: exampleId("cse"),
    connectorInstanceId: exampleId("cin"),
    connectorTargetId: exampleId("ctg"),
    eventType: "sync_now",
    externalEventRef: null,
    sourceRevisionRef: repository.head,
    status: "completed",
    attempts: 0,
    lastError: null,
    summary: { outcome: "complete", skippedFiles: [], created: 3, updated: 1, deleted: 0, unchanged: 12, skipped: 0, warnings: [], importedPluginKeys: [], followedPlugins: [] },
    createdAt: exampleTime(225),
    startedAt: exampleTime(226),
    completedAt: exampleTime(230)
  }]
})) {}

export const ConnectorSyncEventPath = Schema.Struct({ connectorSyncEventId: ConnectorSyncEventId })
export const ConnectorSyncEventDetail = Schema.Struct({ item: ConnectorSyncEvent })
export const ConnectorSyncEventPage = Page(ConnectorSyncEvent).annotate({ identifier: "ConnectorSyncEventPage" })
export const ConnectorSyncEventListQuery = Schema.Struct({
  ...PageQueryFields,
  connectorTargetId: Schema.optionalKey(ConnectorTargetId),
  status: Schema.optionalKey(SyncStatus)
})
export type ConnectorSyncEventListQuery = typeof ConnectorSyncEventListQuery.Type

/** One event per target of the instance: a target whose head was already synced or queued answers that event. */
export const SyncNowResponse = Schema.Struct({
  ok: Schema.Literal(true),
  items: Schema.Array(ConnectorSyncEvent)
}).annotate({ identifier: "SyncNowResponse" })
export const ResyncResponse = Schema.Struct({ ok: Schema.Literal(true), item: ConnectorSyncEvent }).annotate({
  identifier: "ResyncResponse"
})

// ---------------------------------------------------------------------------------------------------------------
// Discovery

export class DiscoveryResult extends Schema.Class<DiscoveryResult>("DiscoveryResult")(Schema.Struct({
  autoImportNewPlugins: Schema.Boolean.annotate({
    description: "The instance's `instanceConfigJson.autoImportNewPlugins` (default true)."
  }),
  classification: RepositoryClassification,
  connectorInstance: ConnectorInstance,
  connectorTarget: ConnectorTarget,
  discoveredPlugins: Schema.Array(DiscoveredPlugin),
  marketplace: Schema.NullOr(DiscoveredMarketplace).annotate({
    description: "The marketplace a `claude_marketplace_repo` describes; null otherwise."
  }),
  repositoryFullName: Schema.String,
  sourceRevisionRef: Schema.String.annotate({ description: "The commit scanned: the branch head when discovery ran." }),
  steps: Schema.Array(DiscoveryStep),
  treeSummary: TreeSummary,
  warnings: Schema.Array(Schema.String)
}).annotate({
  examples: [{
    autoImportNewPlugins: true,
    classification: "claude_single_plugin_repo",
    connectorInstance: exampleOf(ConnectorInstance),
    connectorTarget: exampleOf(ConnectorTarget),
    discoveredPlugins: [exampleOf(DiscoveredPlugin)],
    marketplace: null,
    repositoryFullName: repository.fullName,
    sourceRevisionRef: repository.head,
    steps: [
      { id: "read_repository_structure", label: "Read the repository structure", status: "completed" },
      { id: "check_marketplace_manifest", label: "Check for a marketplace manifest", status: "skipped" },
      { id: "check_plugin_manifests", label: "Check plugin manifests", status: "completed" },
      { id: "prepare_discovered_plugins", label: "Prepare the discovered plugins", status: "completed" }
    ],
    treeSummary: { scannedEntryCount: 17, strategy: "git-tree-recursive", truncated: false, walkedSubtrees: 0 },
    warnings: []
  }]
})) {}

export const DiscoveryResponse = Schema.Struct({ ok: Schema.Literal(true), item: DiscoveryResult }).annotate({
  identifier: "DiscoveryResponse"
})

export const DiscoveryQuery = Schema.Struct({
  connectorTargetId: Schema.optionalKey(ConnectorTargetId).annotateKey({
    description: "The target (branch) to scan; default: the instance's first target."
  })
})
export type DiscoveryQuery = typeof DiscoveryQuery.Type

export const TreeCursor = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255)).annotate({
  description: "Opaque position returned as `nextCursor`; pass it back unchanged with the same `prefix`."
})
export const DiscoveryTreeQuery = Schema.Struct({
  cursor: Schema.optionalKey(TreeCursor),
  limit: Schema.optionalKey(QueryInteger(1, 500, "Page size, 1 to 500 (default 100).")),
  prefix: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(1024))).annotateKey({
    description: "Only entries whose path starts with this text (1 to 1024 characters), for example `skills/`."
  }),
  connectorTargetId: Schema.optionalKey(ConnectorTargetId).annotateKey({
    description: "The target whose tree to list; default: the instance's first target."
  })
}).annotate({ examples: [{ limit: 100, prefix: "skills/", connectorTargetId: exampleId("ctg") }] })
export type DiscoveryTreeQuery = typeof DiscoveryTreeQuery.Type

export const TreeEntryPage = Schema.Struct({
  items: Schema.Array(TreeEntry),
  nextCursor: Schema.NullOr(TreeCursor)
}).annotate({ identifier: "TreeEntryPage" })

export const ApplyDiscoveryRequest = Schema.Struct({
  keys: Schema.Array(TrimmedText(1, 1024, "A discovered plugin's `key`.")).check(Schema.isMinLength(1), Schema.isMaxLength(500)).annotate({
    description: "The candidates to import, by `key` (1 to 500). Each must be a `supported` candidate of the current discovery."
  }),
  connectorTargetId: Schema.optionalKey(ConnectorTargetId).annotateKey({
    description: "The target discovered; default: the instance's first target."
  })
}).annotate({ examples: [{ keys: ["manifest:root"], connectorTargetId: exampleId("ctg") }] })
export type ApplyDiscoveryRequest = typeof ApplyDiscoveryRequest.Type

export const AppliedPlugin = Schema.Struct({
  key: Schema.String,
  pluginId: PluginId,
  created: Schema.Boolean.annotate({ description: "False when a plugin the instance created earlier for this key was reused." }),
  mappingIds: Schema.Array(ConnectorMappingId)
}).annotate({ identifier: "AppliedPlugin" })

export const ApplyDiscoveryResponse = Schema.Struct({
  ok: Schema.Literal(true),
  item: Schema.Struct({
    sourceRevisionRef: Schema.String,
    plugins: Schema.Array(AppliedPlugin),
    marketplaceId: Schema.NullOr(MarketplaceId).annotate({
      description: "The marketplace created or reused for a marketplace repository; null otherwise."
    }),
    syncEvent: ConnectorSyncEvent.annotateKey({ description: "The sync that materializes the files (queued)." })
  })
}).annotate({
  identifier: "ApplyDiscoveryResponse",
  examples: [{
    ok: true,
    item: {
      sourceRevisionRef: repository.head,
      plugins: [{ key: "manifest:root", pluginId: exampleId("plg"), created: true, mappingIds: [exampleId("cmp")] }],
      marketplaceId: null,
      // An instance: Effect 4 encodes no plain object as a class, and an example it cannot encode is left out.
      syncEvent: new ConnectorSyncEvent({
        ...exampleOf(ConnectorSyncEvent),
        eventType: "apply",
        status: "queued",
        summary: null,
        startedAt: null,
        completedAt: null
      })
    }
  }]
})

// ---------------------------------------------------------------------------------------------------------------
// Webhook

export const WebhookIgnored = Schema.Struct({
  ok: Schema.Literal(true),
  accepted: Schema.Literal(false),
  reason: Schema.String.annotate({ description: "Why nothing was recorded, for example `no tracked branch`." })
}).annotate({ identifier: "WebhookIgnored", examples: [{ ok: true, accepted: false, reason: "no tracked branch" }] })

export const WebhookAccepted = Schema.Struct({
  ok: Schema.Literal(true),
  accepted: Schema.Literal(true),
  deliveryId: Schema.String.annotate({ description: "The delivery's `X-GitHub-Delivery`." }),
  queued: Schema.Literal(true)
}).annotate({
  identifier: "WebhookAccepted",
  examples: [{ ok: true, accepted: true, deliveryId: "72d3162e-cc78-11e3-81ab-4c9367dc0958", queued: true }]
})

export const WebhookResponse = Schema.Union([WebhookAccepted, WebhookIgnored]).annotate({ identifier: "WebhookResponse" })
export type WebhookResponse = typeof WebhookResponse.Type

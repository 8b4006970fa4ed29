/**
 * Connectors: a code-hosting account (a GitHub App installation, or a token), instances that link one repository
 * of it to the organization, targets (the branch an instance follows), mappings (which files of the branch become
 * which config objects, in which plugin), and what syncing them records.
 */
import { Schema } from "effect"
import { allErrors, QueryInteger, requestBody, searchText, Timestamp, TrimmedText } from "./Common.js"
import { JsonObject, ObjectType } from "./ConfigObjects.js"
import {
  ConnectorAccountId,
  ConnectorInstanceId,
  ConnectorMappingId,
  ConnectorTargetId,
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
    "`queued` (recorded, waiting for a runner), `running`, `completed`, `failed` (gave up: `lastError` says why), `ignored` (nothing to do: the instance's auto-import is off)."
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
      "Free-form settings. Read by the server: `autoImportNewPlugins` (boolean, default true): whether a sync also imports plugins that appear in the repository after discovery was applied."
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

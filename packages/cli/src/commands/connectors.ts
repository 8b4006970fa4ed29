/**
 * `orgplane connectors accounts | instances | targets | mappings`: code-host accounts the organization syncs from,
 * instances (one repository each, with access grants), targets (the branch an instance follows) and mappings (which
 * files become which config objects). Owners and admins connect accounts and create instances; the rest is per
 * instance (viewer reads, editor changes, manager removes and shares).
 */
import {
  AccessRole,
  type ConnectorAccount,
  ConnectorAccountDetail,
  ConnectorAccountId,
  ConnectorAccountPage,
  ConnectorAccountResponse,
  type ConnectorInstance,
  ConnectorInstanceAccessGrantId,
  ConnectorInstanceAccessGrantPage,
  ConnectorInstanceAccessGrantResponse,
  ConnectorInstanceDetail,
  ConnectorInstanceId,
  ConnectorInstanceListQuery,
  ConnectorInstancePage,
  ConnectorInstanceResponse,
  type ConnectorMapping,
  ConnectorMappingDetail,
  ConnectorMappingId,
  ConnectorMappingListQuery,
  ConnectorMappingPage,
  ConnectorMappingResponse,
  type ConnectorTarget,
  ConnectorTargetDetail,
  ConnectorTargetId,
  ConnectorTargetPage,
  ConnectorTargetResponse,
  CreateConnectorAccountRequest,
  CreateConnectorInstanceRequest,
  CreateConnectorTargetRequest,
  DisconnectConnectorAccountRequest,
  DisconnectConnectorAccountResponse,
  JsonObject,
  MappingKind,
  ObjectType,
  PluginId,
  RemoveConnectorInstanceResponse,
  RepositoryFullName,
  Selector,
} from "@orgplane/schema"
import { Effect, Option, Redacted, Schema } from "effect"
import * as Commands from "../Commands.js"
import * as CliConfig from "../Config.js"
import { apply, discover, resync, sync, syncs, tree } from "./connectorSync.js"
import { UsageError } from "../Errors.js"
import * as Files from "../Files.js"
import * as Inputs from "../Inputs.js"
import { grantColumns, grantee, granteeInputs, granteePayload } from "./access.js"
import * as Output from "../Output.js"
import { ifOn, requireSome } from "./catalog.js"

// ---------------------------------------------------------------------------------------------------------------
// Shared inputs

const accountId = Inputs.argument("accountId", { schema: ConnectorAccountId, description: "The connector account (cac_…)." })
const instanceId = Inputs.argument("instanceId", { schema: ConnectorInstanceId, description: "The connector instance (cin_…)." })
const targetId = Inputs.argument("targetId", { schema: ConnectorTargetId, description: "The target (ctg_…)." })
const mappingId = Inputs.argument("mappingId", { schema: ConnectorMappingId, description: "The mapping (cmp_…)." })

/** `--config '{"…": …}'`: a JSON object, parsed while parsing the flags, sent whole (it replaces the stored one). */
const config = (description: string) =>
  Inputs.optional(Inputs.text("config", { placeholder: "<json>", description, schema: Schema.parseJson(JsonObject) }))

const repository = (description: string) =>
  Inputs.optional(Inputs.text("repository", { placeholder: "<owner/name>", description, schema: RepositoryFullName }))

const branch = (description: string) =>
  Inputs.optional(Inputs.text("branch", { placeholder: "<branch>", description, schema: CreateConnectorTargetRequest.fields.externalTargetRef }))

const json = (value: unknown) => JSON.stringify(value)

// ---------------------------------------------------------------------------------------------------------------
// Accounts

const TOKEN_VARIABLE = CliConfig.CODEHOST_TOKEN_VARIABLE

const readStdin = Effect.mapError(Files.readStdin, (message) => new UsageError({ message: `--token-stdin: ${message}` }))

const InstallationId = Schema.compose(Schema.NumberFromString, CreateConnectorAccountRequest.from.fields.installationId.from)
const AccountToken = CreateConnectorAccountRequest.from.fields.token.from

/** The token from stdin or the environment, checked with the API's rule; the message never quotes it. */
const readToken = (stdin: boolean) =>
  Effect.gen(function*() {
    const text = stdin ? yield* readStdin : Option.getOrUndefined(yield* Effect.orDie(CliConfig.codehostToken))
    if (text === undefined) {
      return yield* new UsageError({
        message: `give --installation-id <n> for an app installation, or a token with --token-stdin or ${TOKEN_VARIABLE}`
      })
    }
    const value = Redacted.isRedacted(text) ? Redacted.value(text) : text
    return yield* Schema.decode(AccountToken)(value).pipe(
      Effect.mapError(() => new UsageError({ message: "the token must be 1 to 1000 characters (surrounding spaces are trimmed)" }))
    )
  })

const describeAccount = (account: ConnectorAccount) =>
  `${account.kind === "token" ? "token" : "app installation"} account ${account.displayName} (${account.id})`

export const connect = Commands.endpoint("connect", {
  summary: "Connect a GitHub account: an installation of the server's app, or an access token (owners and admins).",
  details: [
    `The token is read from standard input with --token-stdin, else from ${TOKEN_VARIABLE}; never from an argument, which other local users can see. It is stored encrypted and never shown again. Nothing is read from GitHub when connecting.`
  ],
  inputs: {
    installationId: Inputs.optional(Inputs.text("installation-id", {
      placeholder: "<n>",
      description: "The GitHub App installation id (the server must be configured with the app).",
      schema: InstallationId
    })),
    tokenStdin: Inputs.boolean("token-stdin", { description: `Read an access token from standard input (else ${TOKEN_VARIABLE}).` }),
    displayName: Inputs.optional(Inputs.text("display-name", {
      placeholder: "<name>",
      schema: CreateConnectorAccountRequest.from.fields.displayName.from
    })),
    login: Inputs.optional(Inputs.text("login", {
      placeholder: "<login>",
      schema: CreateConnectorAccountRequest.from.fields.accountLogin.from
    }))
  },
  call: (client, { displayName, installationId, login, tokenStdin }) =>
    Effect.gen(function*() {
      if (Option.isSome(installationId) && tokenStdin) {
        return yield* new UsageError({ message: "give --installation-id or --token-stdin, not both" })
      }
      const names = { ...Inputs.ifSome("displayName", displayName), ...Inputs.ifSome("accountLogin", login) }
      const payload = Option.isSome(installationId)
        ? { kind: "app_installation" as const, installationId: installationId.value, ...names }
        : { kind: "token" as const, token: yield* readToken(tokenStdin), ...names }
      return yield* client.connectorAccounts.create({ payload })
    }),
  output: ConnectorAccountResponse,
  human: ({ item }) => `Connected ${describeAccount(item)}.`
})

export const accountsList = Commands.list("list", {
  summary: "List the organization's connected accounts, newest first (any member may).",
  noun: "accounts",
  inputs: {},
  call: (client, _, page) => client.connectorAccounts.list({ urlParams: page }),
  output: ConnectorAccountPage,
  columns: [
    ["id", (account) => account.id],
    ["kind", (account) => account.kind],
    ["name", (account) => account.displayName],
    ["login", (account) => account.externalAccountRef ?? "-"],
    ["installation", (account) => account.remoteId ?? "-"],
    ["status", (account) => account.status],
    ["created", (account) => Output.date(account.createdAt)]
  ]
})

export const accountsGet = Commands.endpoint("get", {
  summary: "Show a connected account (never its token).",
  inputs: { accountId },
  call: (client, { accountId }) => client.connectorAccounts.get({ path: { connectorAccountId: accountId } }),
  output: ConnectorAccountDetail,
  human: ({ item }) =>
    Output.fields([
      ["id", item.id],
      ["kind", item.kind],
      ["name", item.displayName],
      ["login", item.externalAccountRef ?? "-"],
      ["installation", item.remoteId ?? "-"],
      ["status", item.status],
      ["created by", item.createdByOrgMembershipId ?? "-"],
      ["created", Output.date(item.createdAt)],
      ["updated", Output.date(item.updatedAt)]
    ])
})

export const disconnect = Commands.endpoint("disconnect", {
  summary: "Disconnect an account: remove every instance of it as 'instances remove' does, then delete it and its credential.",
  inputs: {
    accountId,
    reason: Inputs.optional(Inputs.text("reason", { schema: DisconnectConnectorAccountRequest.fields.reason.from }))
  },
  call: (client, { accountId, reason }) =>
    client.connectorAccounts.disconnect({ path: { connectorAccountId: accountId }, payload: Inputs.ifSome("reason", reason) }),
  output: DisconnectConnectorAccountResponse,
  human: ({ item }) =>
    `Disconnected account ${item.disconnectedAccountId}: deleted ${item.deletedConnectorInstanceCount} instance(s), ${item.deletedConfigObjectCount} config object(s), ${item.deletedConnectorMappingCount} mapping(s), ${item.deletedPluginCount} plugin(s) and ${item.deletedMarketplaceCount} marketplace(s).`
})

export const accounts = Commands.group("accounts", "Connect, list and disconnect GitHub accounts (owners and admins connect).", [
  accountsList,
  accountsGet,
  connect,
  disconnect
])

// ---------------------------------------------------------------------------------------------------------------
// Instances

const describeInstance = (instance: ConnectorInstance) => `instance ${instance.name} (${instance.id}) of ${instance.remoteId}`

const instanceName = (description: string) =>
  Inputs.text("name", { placeholder: "<name>", description, schema: CreateConnectorInstanceRequest.fields.name })

export const instancesList = Commands.list("list", {
  summary: "List the connector instances you can view, newest first.",
  noun: "instances",
  inputs: {
    account: Inputs.optional(Inputs.text("account", {
      placeholder: "<accountId>",
      description: "Only instances of this account (cac_…).",
      schema: ConnectorAccountId
    })),
    query: Inputs.optional(Inputs.text("query", { schema: ConnectorInstanceListQuery.fields.q.from }))
  },
  call: (client, { account, query }, page) =>
    client.connectorInstances.list({
      urlParams: { ...Inputs.ifSome("connectorAccountId", account), ...Inputs.ifSome("q", query), ...page }
    }),
  output: ConnectorInstancePage,
  columns: [
    ["id", (instance) => instance.id],
    ["name", (instance) => instance.name],
    ["repository", (instance) => instance.remoteId],
    ["status", (instance) => instance.status],
    ["last sync", (instance) => instance.lastSyncStatus ?? "-"],
    ["synced", (instance) => Output.date(instance.lastSyncedAt)]
  ]
})

export const instancesGet = Commands.endpoint("get", {
  summary: "Show a connector instance (needs viewer access).",
  inputs: { instanceId },
  call: (client, { instanceId }) => client.connectorInstances.get({ path: { connectorInstanceId: instanceId } }),
  output: ConnectorInstanceDetail,
  human: ({ item }) =>
    Output.fields([
      ["id", item.id],
      ["name", item.name],
      ["repository", item.remoteId],
      ["account", item.connectorAccountId],
      ["status", item.status],
      ["config", json(item.instanceConfigJson)],
      ["last sync", item.lastSyncStatus ?? "-"],
      ["synced", Output.date(item.lastSyncedAt)],
      ["commit", item.lastSyncCursor ?? "-"],
      ["created", Output.date(item.createdAt)],
      ["updated", Output.date(item.updatedAt)]
    ])
})

export const instancesCreate = Commands.endpoint("create", {
  summary: "Link one repository of a connected account to the organization (owners and admins); you become its manager.",
  details: ["Add a target (the branch) next with 'connectors targets add', then mappings."],
  inputs: {
    account: Inputs.text("account", { placeholder: "<accountId>", description: "The connected account (cac_…).", schema: ConnectorAccountId }),
    repository: Inputs.text("repository", {
      placeholder: "<owner/name>",
      description: "The repository, as owner/name.",
      schema: CreateConnectorInstanceRequest.fields.remoteId
    }),
    name: instanceName("Name, unique in the organization (ignoring case)."),
    config: config("Settings as a JSON object, e.g. '{\"autoImportNewPlugins\": false}'.")
  },
  call: (client, { account, config, name, repository }) =>
    client.connectorInstances.create({
      payload: { connectorAccountId: account, remoteId: repository, name, ...Inputs.ifSome("config", config) }
    }),
  output: ConnectorInstanceResponse,
  human: ({ item }) => `Created ${describeInstance(item)}.`
})

export const instancesUpdate = Commands.endpoint("update", {
  summary: "Change an instance's repository, name or settings (needs editor access); give at least one.",
  inputs: {
    instanceId,
    repository: repository("The new repository, as owner/name."),
    name: Inputs.optional(instanceName("The new name.")),
    config: config("Settings as a JSON object; replaces the stored settings whole.")
  },
  call: (client, { config, instanceId, name, repository }) =>
    Effect.zipRight(
      requireSome([["repository", repository], ["name", name], ["config", config]]),
      client.connectorInstances.update({
        path: { connectorInstanceId: instanceId },
        payload: {
          ...Inputs.ifSome("remoteId", repository),
          ...Inputs.ifSome("name", name),
          ...Inputs.ifSome("config", config)
        }
      })
    ),
  output: ConnectorInstanceResponse,
  human: ({ item }) => `Updated ${describeInstance(item)}.`
})

const lifecycle = (name: "enable" | "disable", summary: string) =>
  Commands.endpoint(name, {
    summary,
    inputs: { instanceId },
    call: (client, { instanceId }) => client.connectorInstances[name]({ path: { connectorInstanceId: instanceId } }),
    output: ConnectorInstanceResponse,
    human: ({ item }) => `${describeInstance(item)} is now ${item.status}.`.replace(/^i/, "I")
  })

export const enable = lifecycle("enable", "Make an instance active again (needs editor access).")
export const disable = lifecycle("disable", "Disable an instance: it stops syncing, what it imported stays (needs editor access).")

export const remove = Commands.endpoint("remove", {
  summary: "Remove an instance with its targets, mappings, grants and every config object it imported (needs manager access).",
  details: [
    "Plugins and marketplaces its discovery created go too, unless they hold things from elsewhere; ones people created are never deleted."
  ],
  inputs: { instanceId },
  call: (client, { instanceId }) => client.connectorInstances.remove({ path: { connectorInstanceId: instanceId } }),
  output: RemoveConnectorInstanceResponse,
  human: ({ item }) =>
    `Removed instance ${item.removedConnectorInstanceId}: deleted ${item.deletedConfigObjectCount} config object(s), ${item.deletedConnectorMappingCount} mapping(s), ${item.deletedPluginCount} plugin(s) and ${item.deletedMarketplaceCount} marketplace(s).`
})

// Instance access: the same three operations as `orgplane access`, for cin_… ids.

export const accessGrant = Commands.endpoint("grant", {
  summary: "Give a member, a team or the whole organization a role on an instance (needs manager access).",
  details: ["Granting again to the same member, team or organization replaces that grant's role. --org-wide also needs an owner or admin."],
  inputs: {
    instanceId,
    role: Inputs.choice("role", AccessRole.literals, {
      description: "viewer reads it; editor also changes it, its targets and mappings; manager also removes it and manages its grants."
    }),
    ...granteeInputs
  },
  call: (client, { instanceId, role, ...who }) =>
    Effect.flatMap(granteePayload(role, who), (payload) =>
      client.connectorInstances.connectorInstanceGrant({ path: { connectorInstanceId: instanceId }, payload })),
  output: ConnectorInstanceAccessGrantResponse,
  human: ({ item }, { instanceId }) => `Granted ${item.role} on instance ${instanceId} to ${grantee(item)} (grant ${item.id}).`
})

export const accessList = Commands.list("list", {
  summary: "List an instance's grants, newest first (needs manager access).",
  noun: "grants",
  inputs: { instanceId, includeRevoked: Inputs.boolean("include-revoked", { description: "Also list revoked grants." }) },
  call: (client, { includeRevoked, instanceId }, page) =>
    client.connectorInstances.connectorInstanceListAccess({
      path: { connectorInstanceId: instanceId },
      urlParams: { ...ifOn("includeRevoked", includeRevoked), ...page }
    }),
  output: ConnectorInstanceAccessGrantPage,
  columns: grantColumns
})

const Revoked = Schema.Struct({ ok: Schema.Literal(true), instance: ConnectorInstanceId, revoked: ConnectorInstanceAccessGrantId })

export const accessRevoke = Commands.endpoint("revoke", {
  summary: "Revoke a grant of an instance; it stops applying at once (needs manager access).",
  inputs: {
    instanceId,
    grantId: Inputs.argument("grantId", { schema: ConnectorInstanceAccessGrantId, description: "The grant (cia_…), from 'access list'." })
  },
  call: (client, { grantId, instanceId }) =>
    client.connectorInstances.connectorInstanceRevoke({ path: { connectorInstanceId: instanceId, grantId } }).pipe(
      Effect.as({ ok: true as const, instance: instanceId, revoked: grantId })
    ),
  output: Revoked,
  human: ({ instance, revoked }) => `Revoked grant ${revoked} of instance ${instance}; it stops applying at once.`
})

export const instances = Commands.group(
  "instances",
  "Manage connector instances: one repository each, shared with grants (viewer, editor, manager).",
  [
    instancesList,
    instancesGet,
    instancesCreate,
    instancesUpdate,
    enable,
    disable,
    remove,
    Commands.group("access", "Grant, list and revoke access to a connector instance.", [accessGrant, accessList, accessRevoke])
  ]
)

// ---------------------------------------------------------------------------------------------------------------
// Targets

const describeTarget = (target: ConnectorTarget) => `target ${target.id}: branch ${target.externalTargetRef} of ${target.remoteId}`

export const targetsList = Commands.list("list", {
  summary: "List an instance's targets, oldest first (discovery uses the first; needs viewer access).",
  noun: "targets",
  inputs: { instanceId },
  call: (client, { instanceId }, page) =>
    client.connectorInstances.listTargets({ path: { connectorInstanceId: instanceId }, urlParams: page }),
  output: ConnectorTargetPage,
  columns: [
    ["id", (target) => target.id],
    ["repository", (target) => target.remoteId],
    ["branch", (target) => target.externalTargetRef],
    ["created", (target) => Output.date(target.createdAt)]
  ]
})

const targetFields = (target: ConnectorTarget) =>
  Output.fields([
    ["id", target.id],
    ["instance", target.connectorInstanceId],
    ["repository", target.remoteId],
    ["branch", target.externalTargetRef],
    ["config", json(target.targetConfigJson)],
    ["created", Output.date(target.createdAt)],
    ["updated", Output.date(target.updatedAt)]
  ])

export const targetsGet = Commands.endpoint("get", {
  summary: "Show a target (needs viewer access on its instance).",
  inputs: { targetId },
  call: (client, { targetId }) => client.connectorTargets.get({ path: { connectorTargetId: targetId } }),
  output: ConnectorTargetDetail,
  human: ({ item }) => targetFields(item)
})

export const targetsAdd = Commands.endpoint("add", {
  summary: "Make an instance follow a branch of its repository (needs editor access).",
  inputs: {
    instanceId,
    branch: Inputs.text("branch", { placeholder: "<branch>", description: "The branch to follow.", schema: CreateConnectorTargetRequest.fields.externalTargetRef }),
    repository: repository("The repository, as owner/name; default: the instance's."),
    config: config("Settings of the target as a JSON object (not read by the server).")
  },
  call: (client, { branch, config, instanceId, repository }) =>
    client.connectorInstances.createTarget({
      path: { connectorInstanceId: instanceId },
      payload: { externalTargetRef: branch, ...Inputs.ifSome("remoteId", repository), ...Inputs.ifSome("config", config) }
    }),
  output: ConnectorTargetResponse,
  human: ({ item }) => `Added ${describeTarget(item)}.`
})

export const targetsUpdate = Commands.endpoint("update", {
  summary: "Change a target's repository, branch or settings (needs editor access); give at least one.",
  inputs: {
    targetId,
    repository: repository("The new repository, as owner/name."),
    branch: branch("The new branch."),
    config: config("Settings as a JSON object; replaces the stored settings whole.")
  },
  call: (client, { branch, config, repository, targetId }) =>
    Effect.zipRight(
      requireSome([["repository", repository], ["branch", branch], ["config", config]]),
      client.connectorTargets.update({
        path: { connectorTargetId: targetId },
        payload: {
          ...Inputs.ifSome("remoteId", repository),
          ...Inputs.ifSome("externalTargetRef", branch),
          ...Inputs.ifSome("config", config)
        }
      })
    ),
  output: ConnectorTargetResponse,
  human: ({ item }) => `Updated ${describeTarget(item)}.`
})

export const targets = Commands.group("targets", "Manage the branches connector instances follow (access is the instance's).", [
  targetsList,
  targetsGet,
  targetsAdd,
  targetsUpdate
])

// ---------------------------------------------------------------------------------------------------------------
// Mappings

const describeMapping = (mapping: ConnectorMapping) =>
  `${mapping.mappingKind} mapping ${mapping.id}: ${mapping.selector} → ${mapping.objectType}${mapping.pluginId === null ? "" : ` in ${mapping.pluginId}`}`

const objectType = (description: string) => Inputs.choice("object-type", ObjectType.literals, { description })
const plugin = (description: string) =>
  Inputs.optional(Inputs.text("plugin-id", { placeholder: "<pluginId>", description, schema: PluginId }))
const selector = (description: string) => Inputs.text("selector", { placeholder: "<selector>", description, schema: Selector })

export const mappingsList = Commands.list("list", {
  summary: "List a target's mappings, most recently updated first (needs viewer access).",
  noun: "mappings",
  inputs: {
    targetId,
    mappingKind: Inputs.optional(Inputs.choice("mapping-kind", MappingKind.literals, { description: "Only mappings of this kind." })),
    objectType: Inputs.optional(objectType("Only mappings to this object type.")),
    pluginId: plugin("Only mappings into this plugin (plg_…)."),
    query: Inputs.optional(Inputs.text("query", { schema: ConnectorMappingListQuery.fields.q.from }))
  },
  call: (client, { mappingKind, objectType, pluginId, query, targetId }, page) =>
    client.connectorTargets.listMappings({
      path: { connectorTargetId: targetId },
      urlParams: {
        ...Inputs.ifSome("mappingKind", mappingKind),
        ...Inputs.ifSome("objectType", objectType),
        ...Inputs.ifSome("pluginId", pluginId),
        ...Inputs.ifSome("q", query),
        ...page
      }
    }),
  output: ConnectorMappingPage,
  columns: [
    ["id", (mapping) => mapping.id],
    ["kind", (mapping) => mapping.mappingKind],
    ["selector", (mapping) => mapping.selector],
    ["type", (mapping) => mapping.objectType],
    ["plugin", (mapping) => mapping.pluginId ?? "-"],
    ["auto-add", (mapping) => mapping.autoAddToPlugin ? "yes" : "no"],
    ["updated", (mapping) => Output.date(mapping.updatedAt)]
  ]
})

export const mappingsGet = Commands.endpoint("get", {
  summary: "Show a mapping (needs viewer access on its instance).",
  inputs: { mappingId },
  call: (client, { mappingId }) => client.connectorMappings.get({ path: { connectorMappingId: mappingId } }),
  output: ConnectorMappingDetail,
  human: ({ item }) =>
    Output.fields([
      ["id", item.id],
      ["instance", item.connectorInstanceId],
      ["target", item.connectorTargetId],
      ["kind", item.mappingKind],
      ["selector", item.selector],
      ["type", item.objectType],
      ["plugin", item.pluginId ?? "-"],
      ["auto-add", item.autoAddToPlugin ? "yes" : "no"],
      ["config", item.mappingConfigJson === null ? "-" : json(item.mappingConfigJson)],
      ["created", Output.date(item.createdAt)],
      ["updated", Output.date(item.updatedAt)]
    ])
})

export const mappingsAdd = Commands.endpoint("add", {
  summary: "Map files of a target's branch to config objects of one type, optionally in a plugin (needs editor access).",
  details: ["With --plugin, editor access on the plugin is needed too. One mapping per target, selector and object type."],
  inputs: {
    targetId,
    selector: selector("A repository path (skills/deploy/SKILL.md), or a folder followed by /** for every file under it."),
    objectType: objectType("The type of the config objects the files become."),
    mappingKind: Inputs.withDefault(
      Inputs.choice("mapping-kind", MappingKind.literals, { description: "path is materialized by sync; api and custom are stored for integrations." }),
      "path"
    ),
    pluginId: plugin("The plugin (plg_…) the mapped objects belong to."),
    autoAdd: Inputs.boolean("auto-add", { description: "Have sync add the objects it materializes to the plugin." }),
    config: config("Settings of the mapping as a JSON object.")
  },
  call: (client, { autoAdd, config, mappingKind, objectType, pluginId, selector, targetId }) =>
    client.connectorTargets.createMapping({
      path: { connectorTargetId: targetId },
      payload: {
        mappingKind,
        selector,
        objectType,
        ...Inputs.ifSome("pluginId", pluginId),
        ...(autoAdd ? { autoAddToPlugin: true } : {}),
        ...Inputs.ifSome("config", config)
      }
    }),
  output: ConnectorMappingResponse,
  human: ({ item }) => `Added ${describeMapping(item)}.`
})

export const mappingsUpdate = Commands.endpoint("update", {
  summary: "Change a mapping's selector, object type, plugin, auto-add or settings (needs editor access); give at least one.",
  inputs: {
    mappingId,
    selector: Inputs.optional(selector("The new selector.")),
    objectType: Inputs.optional(objectType("The new object type.")),
    pluginId: plugin("The new plugin (plg_…)."),
    noPlugin: Inputs.boolean("no-plugin", { description: "Detach the mapping from its plugin." }),
    autoAdd: Inputs.optional(Inputs.choice("auto-add", ["on", "off"], { description: "Whether sync adds the objects it materializes to the plugin." })),
    config: config("Settings as a JSON object; replaces the stored settings whole.")
  },
  call: (client, { autoAdd, config, mappingId, noPlugin, objectType, pluginId, selector }) =>
    Effect.gen(function*() {
      yield* requireSome([
        ["selector", selector],
        ["object-type", objectType],
        ["plugin-id", pluginId],
        ["no-plugin", noPlugin],
        ["auto-add", autoAdd],
        ["config", config]
      ])
      if (noPlugin && Option.isSome(pluginId)) return yield* new UsageError({ message: "give --plugin-id or --no-plugin, not both" })
      return yield* client.connectorMappings.update({
        path: { connectorMappingId: mappingId },
        payload: {
          ...Inputs.ifSome("selector", selector),
          ...Inputs.ifSome("objectType", objectType),
          ...(noPlugin ? { pluginId: null } : Inputs.ifSome("pluginId", pluginId)),
          ...Inputs.ifSome("autoAddToPlugin", Option.map(autoAdd, (value) => value === "on")),
          ...Inputs.ifSome("config", config)
        }
      })
    }),
  output: ConnectorMappingResponse,
  human: ({ item }) => `Updated ${describeMapping(item)}.`
})

const Deleted = Schema.Struct({ ok: Schema.Literal(true), deleted: ConnectorMappingId })

export const mappingsDelete = Commands.endpoint("delete", {
  summary: "Delete a mapping and the plugin memberships it created; the config objects it made stay, no longer synced.",
  inputs: { mappingId },
  call: (client, { mappingId }) =>
    client.connectorMappings.delete({ path: { connectorMappingId: mappingId } }).pipe(Effect.as({ ok: true as const, deleted: mappingId })),
  output: Deleted,
  human: ({ deleted }) => `Deleted mapping ${deleted}; the config objects it made stay, no longer synced.`
})

export const mappings = Commands.group("mappings", "Manage which files of a target's branch become which config objects.", [
  mappingsList,
  mappingsGet,
  mappingsAdd,
  mappingsUpdate,
  mappingsDelete
])

export const connectors = Commands.group(
  "connectors",
  "Sync config objects from GitHub: connected accounts, instances (one repository each), their targets and mappings, discovery and syncs.",
  [accounts, instances, targets, mappings, discover, tree, apply, sync, resync, syncs]
)

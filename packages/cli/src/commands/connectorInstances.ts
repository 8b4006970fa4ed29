/**
 * `orgplane connectors instances`: one repository of a connected account each, created by owners and admins, then
 * shared with grants (viewer reads, editor changes, manager removes and shares), as `orgplane access` does for
 * catalog items.
 */
import { AccessRole, ConnectorAccountId, type ConnectorInstance, ConnectorInstanceAccessGrantId, ConnectorInstanceAccessGrantPage, ConnectorInstanceAccessGrantResponse, ConnectorInstanceDetail, ConnectorInstanceId, ConnectorInstanceListQuery, ConnectorInstancePage, ConnectorInstanceResponse, CreateConnectorInstanceRequest, exampleId, RemoveConnectorInstanceResponse } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Commands from "../Commands.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import { grantColumns, grantee, granteeInputs, granteePayload } from "./access.js"
import { ifOn, requireSome } from "./catalog.js"
import { config, instanceId, json, repository } from "./connectorInputs.js"

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
    query: Inputs.optional(Inputs.text("query", { schema: ConnectorInstanceListQuery.fields.q.schema }))
  },
  call: (client, { account, query }, page) =>
    client.connectorInstances.list({
      query: { ...Inputs.ifSome("connectorAccountId", account), ...Inputs.ifSome("q", query), ...page }
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
  call: (client, { instanceId }) => client.connectorInstances.get({ params: { connectorInstanceId: instanceId } }),
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
  examples: [
    ["Rename an instance.", ["connectors", "instances", "update", exampleId("cin"), "--name", "Agents repository"]],
  ],
  summary: "Change an instance's repository, name or settings (needs editor access); give at least one.",
  inputs: {
    instanceId,
    repository: repository("The new repository, as owner/name."),
    name: Inputs.optional(instanceName("The new name.")),
    config: config("Settings as a JSON object; replaces the stored settings whole.")
  },
  call: (client, { config, instanceId, name, repository }) =>
    Effect.andThen(
      requireSome([["repository", repository], ["name", name], ["config", config]]),
      client.connectorInstances.update({
        params: { connectorInstanceId: instanceId },
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
    call: (client, { instanceId }) => client.connectorInstances[name]({ params: { connectorInstanceId: instanceId } }),
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
  call: (client, { instanceId }) => client.connectorInstances.remove({ params: { connectorInstanceId: instanceId } }),
  output: RemoveConnectorInstanceResponse,
  human: ({ item }) =>
    `Removed instance ${item.removedConnectorInstanceId}: deleted ${item.deletedConfigObjectCount} config object(s), ${item.deletedConnectorMappingCount} mapping(s), ${item.deletedPluginCount} plugin(s) and ${item.deletedMarketplaceCount} marketplace(s).`
})

// Instance access: the same three operations as `orgplane access`, for cin_… ids.

export const accessGrant = Commands.endpoint("grant", {
  examples: [
    ["Let the whole organization use an instance.", ["connectors", "instances", "access", "grant", exampleId("cin"), "--role", "viewer", "--org-wide"]],
  ],
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
      client.connectorInstances.connectorInstanceGrant({ params: { connectorInstanceId: instanceId }, payload })),
  output: ConnectorInstanceAccessGrantResponse,
  human: ({ item }, { instanceId }) => `Granted ${item.role} on instance ${instanceId} to ${grantee(item)} (grant ${item.id}).`
})

export const accessList = Commands.list("list", {
  summary: "List an instance's grants, newest first (needs manager access).",
  noun: "grants",
  inputs: { instanceId, includeRevoked: Inputs.boolean("include-revoked", { description: "Also list revoked grants." }) },
  call: (client, { includeRevoked, instanceId }, page) =>
    client.connectorInstances.connectorInstanceListAccess({
      params: { connectorInstanceId: instanceId },
      query: { ...ifOn("includeRevoked", includeRevoked), ...page }
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
    client.connectorInstances.connectorInstanceRevoke({ params: { connectorInstanceId: instanceId, grantId } }).pipe(
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

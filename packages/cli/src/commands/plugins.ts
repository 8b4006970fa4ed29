/**
 * `orgplane plugins create | list | get | update | archive | restore | delete | objects | add-object |
 * remove-object | download`: named bundles of config objects that desktop apps install. Access is per plugin (see
 * `orgplane access`); a plugin listed in a marketplace is visible to whoever can view the marketplace.
 */
import type { OrgplaneApiClient } from "@orgplane/client"
import { CatalogDescription, CatalogStatus, ConfigObjectId, ConfigObjectsApi, exampleId, MarketplaceId, type Plugin, PluginConfigObjectPage, PluginConfigObjectResponse, PluginDetail, PluginId, PluginListQuery, PluginName, PluginPage, PluginResponse, PluginsApi, type PluginSourceMetadata } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Commands from "../Commands.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import { ifOn, requireSome, statusOf } from "./catalog.js"
import { download } from "./pluginFiles.js"

const pluginId = Inputs.argument("pluginId", { schema: PluginId, description: "The plugin (plg_…)." })
const configObjectId = Inputs.argument("configObjectId", { schema: ConfigObjectId, description: "The config object (cob_…)." })

const describePlugin = (plugin: Plugin) => `plugin ${plugin.name} (${plugin.id})`

export const create = Commands.endpoint("create", {
  summary: "Create an empty plugin (any member); you become its manager. Names are unique, ignoring case.",
  inputs: {
    name: Inputs.text("name", { placeholder: "<name>", schema: PluginName }),
    description: Inputs.optional(Inputs.text("description", { schema: CatalogDescription }))
  },
  call: (client, { description, name }) => client.plugins.create({ payload: { name, ...Inputs.ifSome("description", description) } }),
  output: PluginResponse,
  human: ({ item }) => `Created ${describePlugin(item)}.`
})

export const list = Commands.list("list", {
  summary: "List the plugins you can view, by name.",
  noun: "plugins",
  inputs: {
    query: Inputs.optional(Inputs.text("query", {
      description: "Only plugins whose name or description contains this text (case-insensitive).",
      schema: PluginListQuery.fields.q.schema
    })),
    status: Inputs.optional(Inputs.choice("status", CatalogStatus.literals, {
      description: "Only plugins in this status (by default every status but deleted)."
    })),
    marketplace: Inputs.optional(Inputs.text("marketplace", {
      placeholder: "<marketplaceId>",
      description: "Only plugins this marketplace (mkt_…) lists.",
      schema: MarketplaceId
    })),
    includeDeleted: Inputs.boolean("include-deleted", { description: "Also list deleted plugins." })
  },
  call: (client, input, page) =>
    client.plugins.list({
      query: {
        ...Inputs.ifSome("q", input.query),
        ...Inputs.ifSome("status", input.status),
        ...Inputs.ifSome("marketplaceId", input.marketplace),
        ...ifOn("includeDeleted", input.includeDeleted),
        ...page
      }
    }),
  output: PluginPage,
  columns: [
    ["id", (plugin) => plugin.id],
    ["name", (plugin) => plugin.name],
    ["status", (plugin) => plugin.status],
    ["objects", (plugin) => String(plugin.memberCount)],
    ["marketplaces", (plugin) => plugin.marketplaces.map((marketplace) => marketplace.name).join(", ") || "-"],
    ["updated", (plugin) => Output.date(plugin.updatedAt)]
  ]
})

/** What the repository says of a plugin a discovery apply made: the members it gives. */
const sourceFields = (metadata: PluginSourceMetadata | null): Array<readonly [string, string]> =>
  metadata === null ? [] : ([
    ["version", metadata.version],
    ["author", metadata.author],
    ["homepage", metadata.homepage],
    ["repository", metadata.repository],
    ["license", metadata.license],
    ["category", metadata.category],
    ["keywords", metadata.keywords.length === 0 ? null : metadata.keywords.join(", ")]
  ] satisfies ReadonlyArray<readonly [string, string | null]>).flatMap(([label, value]) => value === null ? [] : [[label, value] as const])

export const get = Commands.endpoint("get", {
  summary: "Show a plugin: its config objects as its manifest lists them, and the marketplaces that list it.",
  inputs: { pluginId },
  call: (client, { pluginId }) => client.plugins.get({ params: { pluginId } }),
  output: PluginDetail,
  human: ({ item }) => {
    const resources = item.extension.manifest.resources
    return [
      Output.fields([
        ["id", item.id],
        ["name", item.name],
        ["description", item.description === "" ? "-" : item.description],
        ["status", statusOf(item)],
        ["objects", String(item.memberCount)],
        ...sourceFields(item.sourceMetadata),
        ...item.skippedFiles.map((file) => ["skipped", `${file.path}: ${file.reason}`] as const),
        ["marketplaces", item.marketplaces.map((marketplace) => `${marketplace.name} (${marketplace.id})`).join(", ") || "-"],
        ["created", Output.date(item.createdAt)],
        ["updated", Output.date(item.updatedAt)]
      ]),
      ...(resources.length === 0 ? [] : [
        "",
        Output.table(
          ["config object", "type", "title", "version"],
          resources.map((resource) => [resource.configObjectId, resource.objectType, resource.title, resource.versionId])
        )
      ])
    ].join("\n")
  }
})

export const update = Commands.endpoint("update", {
  examples: [
    ["Rename a plugin.", ["plugins", "update", exampleId("plg"), "--name", "Deploys"]],
  ],
  summary: "Rename a plugin or change its description (needs editor access).",
  inputs: {
    pluginId,
    name: Inputs.optional(Inputs.text("name", { placeholder: "<name>", description: "The new name.", schema: PluginName })),
    description: Inputs.optional(Inputs.text("description", {
      description: "The new description ('' for none).",
      schema: CatalogDescription
    }))
  },
  call: (client, { description, name, pluginId }) =>
    Effect.andThen(
      requireSome([["name", name], ["description", description]]),
      client.plugins.update({ params: { pluginId }, payload: { ...Inputs.ifSome("name", name), ...Inputs.ifSome("description", description) } })
    ),
  output: PluginResponse,
  human: ({ item }) => `Updated ${describePlugin(item)}.`
})

const lifecycle = (
  name: "archive" | "restore" | "delete",
  summary: string,
  call: (client: OrgplaneApiClient, pluginId: PluginId) => Effect.Effect<typeof PluginResponse.Type, unknown>,
  done: string
) =>
  Commands.endpoint(name, {
    summary,
    inputs: { pluginId },
    call: (client, { pluginId }) => call(client, pluginId),
    output: PluginResponse,
    human: ({ item }) => `${done} ${describePlugin(item)}; its status is now ${item.status}.`
  })

export const archive = lifecycle(
  "archive",
  "Archive a plugin: kept and readable, but out of use (needs manager access).",
  (client, pluginId) => client.plugins.archive({ params: { pluginId } }),
  "Archived"
)

export const restore = lifecycle(
  "restore",
  "Make an archived or deleted plugin active again (needs manager access).",
  (client, pluginId) => client.plugins.restore({ params: { pluginId } }),
  "Restored"
)

export const del = lifecycle(
  "delete",
  "Delete a plugin (soft: marketplaces stop showing it; its objects, members and grants are kept; needs manager access).",
  (client, pluginId) => client.plugins.delete({ params: { pluginId } }),
  "Deleted"
)

export const objects = Commands.list("objects", {
  summary: "List a plugin's config objects in the order they were added (needs viewer access).",
  noun: "config objects",
  inputs: {
    pluginId,
    includeRemoved: Inputs.boolean("include-removed", { description: "Also list objects taken out of the plugin." })
  },
  call: (client, { includeRemoved, pluginId }, page) =>
    client.plugins.listConfigObjects({ params: { pluginId }, query: { ...ifOn("includeRemoved", includeRemoved), ...page } }),
  output: PluginConfigObjectPage,
  columns: [
    ["config object", (entry) => entry.configObjectId],
    ["type", (entry) => entry.configObject.objectType],
    ["title", (entry) => entry.configObject.title],
    ["status", (entry) => entry.configObject.status],
    ["added", (entry) => Output.date(entry.createdAt)],
    ["removed", (entry) => Output.date(entry.removedAt)]
  ]
})

export const addObject = Commands.endpoint("add-object", {
  summary: "Add a config object to a plugin (editor on the plugin, viewer on the object); adding it again changes nothing.",
  inputs: { pluginId, configObjectId },
  call: (client, { configObjectId, pluginId }) => client.plugins.addConfigObject({ params: { pluginId }, payload: { configObjectId } }),
  output: PluginConfigObjectResponse,
  human: ({ item }) =>
    `Plugin ${item.pluginId} now holds ${item.configObject.objectType} '${item.configObject.title}' (${item.configObjectId}).`
})

const RemovedObject = Schema.Struct({ ok: Schema.Literal(true), plugin: PluginId, removed: ConfigObjectId })

export const removeObject = Commands.endpoint("remove-object", {
  summary: "Take a config object out of a plugin (needs editor access on the plugin); the object is unchanged.",
  inputs: { pluginId, configObjectId },
  call: (client, { configObjectId, pluginId }) =>
    client.plugins.removeConfigObject({ params: { pluginId, configObjectId } }).pipe(
      Effect.as({ ok: true as const, plugin: pluginId, removed: configObjectId })
    ),
  output: RemovedObject,
  human: ({ plugin, removed }) => `Config object ${removed} is no longer in plugin ${plugin}; the object itself is unchanged.`
})

export const plugins = Commands.group(
  "plugins",
  "Manage plugins: bundles of config objects that desktop apps install (access per plugin).",
  [create, list, get, update, archive, restore, del, objects, addObject, removeObject, download],
  [ConfigObjectsApi, PluginsApi]
)

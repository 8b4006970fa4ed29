/**
 * `orgplane connectors mappings`: which files of a target's branch become which config objects (a path or a folder
 * selector, an object type, optionally a plugin they join). Access is the instance's: viewer reads, editor changes.
 */
import { type ConnectorMapping, ConnectorMappingDetail, ConnectorMappingId, ConnectorMappingListQuery, ConnectorMappingPage, ConnectorMappingResponse, exampleId, MappingKind, ObjectType, PluginId, Selector } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Commands from "../Commands.js"
import { UsageError } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import { requireSome } from "./catalog.js"
import { config, json, targetId } from "./connectorInputs.js"

const mappingId = Inputs.argument("mappingId", { schema: ConnectorMappingId, description: "The mapping (cmp_…)." })

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
    query: Inputs.optional(Inputs.text("query", { schema: ConnectorMappingListQuery.fields.q.schema }))
  },
  call: (client, { mappingKind, objectType, pluginId, query, targetId }, page) =>
    client.connectorTargets.listMappings({
      params: { connectorTargetId: targetId },
      query: {
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
  call: (client, { mappingId }) => client.connectorMappings.get({ params: { connectorMappingId: mappingId } }),
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
      params: { connectorTargetId: targetId },
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
  examples: [
    ["Map another folder.", ["connectors", "mappings", "update", exampleId("cmp"), "--selector", "skills/*"]],
  ],
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
        params: { connectorMappingId: mappingId },
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
    client.connectorMappings.delete({ params: { connectorMappingId: mappingId } }).pipe(Effect.as({ ok: true as const, deleted: mappingId })),
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

/**
 * `orgplane marketplaces create | list | get | update | delete | plugins | add-plugin | remove-plugin | resolved`:
 * curated lists of plugins. Owners and admins create them; access is per marketplace (see `orgplane access`), and
 * whoever can view a marketplace can view the plugins it lists.
 */
import { CatalogDescription, CatalogStatus, exampleId, LogoUrl, type Marketplace, MarketplaceDetail, MarketplaceId, MarketplaceListQuery, MarketplaceName, MarketplacePage, MarketplacePluginPage, MarketplacePluginResponse, MarketplaceResponse, MarketplacesApi, PluginId, ResolvedMarketplaceResponse } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as Commands from "../Commands.js"
import { UsageError } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import { ifOn, plural, requireSome, statusOf } from "./catalog.js"

const marketplaceId = Inputs.argument("marketplaceId", { schema: MarketplaceId, description: "The marketplace (mkt_…)." })
const pluginId = Inputs.argument("pluginId", { schema: PluginId, description: "The plugin (plg_…)." })

/** LogoUrl describes its wire side, the text (as the schema's URL rules do), where the flag's description is read. */
const logoUrlDescription = SchemaAST.resolveDescription(SchemaAST.toEncoded(LogoUrl.ast)) ?? ""

const describeMarketplace = (marketplace: Marketplace) => `marketplace ${marketplace.name} (${marketplace.id})`

export const create = Commands.endpoint("create", {
  summary: "Create an empty marketplace (owners and admins); you become its manager. Names are unique, ignoring case.",
  inputs: {
    name: Inputs.text("name", { placeholder: "<name>", schema: MarketplaceName }),
    description: Inputs.optional(Inputs.text("description", { schema: CatalogDescription })),
    logoUrl: Inputs.optional(Inputs.text("logo-url", { placeholder: "<url>", description: logoUrlDescription, schema: LogoUrl }))
  },
  call: (client, { description, logoUrl, name }) =>
    client.marketplaces.create({
      payload: { name, ...Inputs.ifSome("description", description), ...Inputs.ifSome("logoUrl", logoUrl) }
    }),
  output: MarketplaceResponse,
  human: ({ item }) => `Created ${describeMarketplace(item)}.`
})

export const list = Commands.list("list", {
  summary: "List the marketplaces you can view, by name.",
  noun: "marketplaces",
  inputs: {
    query: Inputs.optional(Inputs.text("query", {
      description: "Only marketplaces whose name or description contains this text (case-insensitive).",
      schema: MarketplaceListQuery.fields.q.schema
    })),
    status: Inputs.optional(Inputs.choice("status", CatalogStatus.literals, {
      description: "Only marketplaces in this status (by default every status but deleted)."
    })),
    includeDeleted: Inputs.boolean("include-deleted", { description: "Also list deleted marketplaces." })
  },
  call: (client, input, page) =>
    client.marketplaces.list({
      query: {
        ...Inputs.ifSome("q", input.query),
        ...Inputs.ifSome("status", input.status),
        ...ifOn("includeDeleted", input.includeDeleted),
        ...page
      }
    }),
  output: MarketplacePage,
  columns: [
    ["id", (marketplace) => marketplace.id],
    ["name", (marketplace) => marketplace.name],
    ["status", (marketplace) => marketplace.status],
    ["plugins", (marketplace) => String(marketplace.pluginCount)],
    ["updated", (marketplace) => Output.date(marketplace.updatedAt)]
  ]
})

const fieldsOf = (marketplace: Marketplace, more: ReadonlyArray<readonly [string, string]> = []) =>
  Output.fields([
    ["id", marketplace.id],
    ["name", marketplace.name],
    ["description", marketplace.description === "" ? "-" : marketplace.description],
    ["logo", marketplace.logoUrl ?? "-"],
    ["status", statusOf(marketplace)],
    ["plugins", String(marketplace.pluginCount)],
    ["can delete", marketplace.canDelete ? "yes" : "no (a connector or the service lists plugins in it)"],
    ...(marketplace.staleSince === null
      ? []
      : [
        ["stale since", `${Output.date(marketplace.staleSince)}: its syncs fail, it lists what the last good sync left`] as const,
        ["sync error", marketplace.lastSyncError ?? "-"] as const
      ]),
    ["created", Output.date(marketplace.createdAt)],
    ["updated", Output.date(marketplace.updatedAt)],
    ...more
  ])

export const get = Commands.endpoint("get", {
  summary: "Show a marketplace (needs viewer access).",
  inputs: { marketplaceId },
  call: (client, { marketplaceId }) => client.marketplaces.get({ params: { marketplaceId } }),
  output: MarketplaceDetail,
  human: ({ item }) => fieldsOf(item)
})

export const update = Commands.endpoint("update", {
  examples: [
    ["Describe a marketplace.", ["marketplaces", "update", exampleId("mkt"), "--description", "What the platform team supports"]],
  ],
  summary: "Change a marketplace's name, description or logo (needs editor access).",
  inputs: {
    marketplaceId,
    name: Inputs.optional(Inputs.text("name", { placeholder: "<name>", description: "The new name.", schema: MarketplaceName })),
    description: Inputs.optional(Inputs.text("description", {
      description: "The new description ('' for none).",
      schema: CatalogDescription
    })),
    logoUrl: Inputs.optional(Inputs.text("logo-url", {
      placeholder: "<url>",
      description: "The new logo: an https URL, or a path starting with / on the same host.",
      schema: LogoUrl
    })),
    noLogo: Inputs.boolean("no-logo", { description: "Remove the logo." })
  },
  call: (client, { description, logoUrl, marketplaceId, name, noLogo }) =>
    Effect.gen(function*() {
      yield* requireSome([["name", name], ["description", description], ["logo-url", logoUrl], ["no-logo", noLogo]])
      if (noLogo && Option.isSome(logoUrl)) {
        return yield* Effect.fail(new UsageError({ message: "give --logo-url or --no-logo, not both" }))
      }
      return yield* client.marketplaces.update({
        params: { marketplaceId },
        payload: {
          ...Inputs.ifSome("name", name),
          ...Inputs.ifSome("description", description),
          ...(noLogo ? { logoUrl: null } : Inputs.ifSome("logoUrl", logoUrl))
        }
      })
    }),
  output: MarketplaceResponse,
  human: ({ item }) => `Updated ${describeMarketplace(item)}.`
})

export const del = Commands.endpoint("delete", {
  summary: "Delete a marketplace (soft: its plugins stay; members who saw them only through it no longer do).",
  inputs: { marketplaceId },
  call: (client, { marketplaceId }) => client.marketplaces.delete({ params: { marketplaceId } }),
  output: MarketplaceResponse,
  human: ({ item }) => `Deleted ${describeMarketplace(item)}; its status is now ${item.status}.`
})

export const plugins = Commands.list("plugins", {
  summary: "List the plugins a marketplace lists, in the order they were added (needs viewer access).",
  noun: "plugins",
  inputs: {
    marketplaceId,
    includeRemoved: Inputs.boolean("include-removed", { description: "Also list plugins taken out of the marketplace." })
  },
  call: (client, { includeRemoved, marketplaceId }, page) =>
    client.marketplaces.listPlugins({ params: { marketplaceId }, query: { ...ifOn("includeRemoved", includeRemoved), ...page } }),
  output: MarketplacePluginPage,
  columns: [
    ["plugin", (entry) => entry.pluginId],
    ["name", (entry) => entry.plugin.name],
    ["status", (entry) => entry.plugin.status],
    ["objects", (entry) => String(entry.plugin.memberCount)],
    ["added", (entry) => Output.date(entry.createdAt)],
    ["removed", (entry) => Output.date(entry.removedAt)]
  ]
})

export const addPlugin = Commands.endpoint("add-plugin", {
  summary: "List a plugin in a marketplace (editor on the marketplace, viewer on the plugin); adding it again changes nothing.",
  inputs: { marketplaceId, pluginId },
  call: (client, { marketplaceId, pluginId }) => client.marketplaces.addPlugin({ params: { marketplaceId }, payload: { pluginId } }),
  output: MarketplacePluginResponse,
  human: ({ item }) => `Marketplace ${item.marketplaceId} now lists plugin ${item.plugin.name} (${item.pluginId}).`
})

const RemovedPlugin = Schema.Struct({ ok: Schema.Literal(true), marketplace: MarketplaceId, removed: PluginId })

export const removePlugin = Commands.endpoint("remove-plugin", {
  summary: "Take a plugin out of a marketplace (needs editor access on the marketplace); the plugin is unchanged.",
  inputs: { marketplaceId, pluginId },
  call: (client, { marketplaceId, pluginId }) =>
    client.marketplaces.removePlugin({ params: { marketplaceId, pluginId } }).pipe(
      Effect.as({ ok: true as const, marketplace: marketplaceId, removed: pluginId })
    ),
  output: RemovedPlugin,
  human: ({ marketplace, removed }) => `Plugin ${removed} is no longer listed in marketplace ${marketplace}; the plugin itself is unchanged.`
})

export const resolved = Commands.endpoint("resolved", {
  summary: "Show a marketplace with every plugin it lists, what each holds and whether a cloud agent can use it.",
  inputs: { marketplaceId },
  call: (client, { marketplaceId }) => client.marketplaces.resolved({ params: { marketplaceId } }),
  output: ResolvedMarketplaceResponse,
  human: ({ item }) =>
    [
      fieldsOf(item.marketplace, [["source", item.source === null ? "-" : `${item.source.repositoryFullName}@${item.source.branch}`]]),
      "",
      item.plugins.length === 0 ? "No plugins." : Output.table(
        ["plugin", "name", "status", "holds", "skipped", "instructional"],
        item.plugins.map((plugin) => [
          plugin.id,
          plugin.name,
          plugin.status,
          Object.entries(plugin.componentCounts).map(([type, count]) => plural(count, type)).join(", ") || "-",
          // Files its repository has that the last sync could not import: `plugins get` lists them with reasons.
          plugin.skippedFiles.length === 0 ? "-" : plural(plugin.skippedFiles.length, "file"),
          plugin.cloudReadiness.hasInstructional ? "yes" : "no"
        ])
      )
    ].join("\n")
})

export const marketplaces = Commands.group(
  "marketplaces",
  "Manage marketplaces: curated lists of plugins (owners and admins create them; access per marketplace).",
  [create, list, get, update, del, plugins, addPlugin, removePlugin, resolved],
  [MarketplacesApi]
)

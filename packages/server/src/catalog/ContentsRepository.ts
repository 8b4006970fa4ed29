/**
 * What plugins and marketplaces contain: the two membership tables, config objects in plugins and plugins in
 * marketplaces. One row per pair: removing sets `removed_at`, adding again clears it (the row keeps its id and creation).
 */
import type {
  ConfigObjectId,
  MarketplaceId,
  MarketplacePluginId,
  MembershipId,
  MembershipSource,
  OrganizationId,
  PluginConfigObjectId,
  PluginId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { makeId } from "../platform/Ids.js"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /**
   * Puts config objects in plugins, one statement for every pair (re-activating removed memberships, leaving active
   * ones as they are), and answers the memberships' ids in the order of `pairs`.
   */
  const addConfigObjects = Effect.fn("ContentsRepository.addConfigObjects")(function*(input: {
    readonly organizationId: OrganizationId
    readonly pairs: ReadonlyArray<{ readonly pluginId: PluginId; readonly configObjectId: ConfigObjectId }>
    readonly source: MembershipSource
    readonly createdBy: MembershipId | null
    readonly at: Date
    /** The connector mapping that added them (a sync), so that deleting the mapping removes them. */
    readonly connectorMappingId?: string | null | undefined
  }) {
    const row = ({ configObjectId, pluginId }: { readonly pluginId: PluginId; readonly configObjectId: ConfigObjectId }) =>
      Effect.map(makeId("pco"), (id) => ({
        id,
        organizationId: input.organizationId,
        pluginId,
        configObjectId,
        membershipSource: input.source,
        connectorMappingId: input.connectorMappingId ?? null,
        createdByMembershipId: input.createdBy,
        createdAt: input.at
      }))
    const [first, ...others] = input.pairs
    if (first === undefined) return [] as ReadonlyArray<PluginConfigObjectId>
    const firstRow = yield* row(first)
    const otherRows = yield* Effect.forEach(others, row)
    const result = yield* sql<{ id: PluginConfigObjectId; pluginId: PluginId; configObjectId: ConfigObjectId }>`
          INSERT INTO plugin_config_objects ${sql.insert([firstRow, ...otherRows])}
          ON CONFLICT (organization_id, plugin_id, config_object_id) DO UPDATE SET removed_at = NULL
          RETURNING id, plugin_id, config_object_id`
    const ids = new Map(result.map((row) => [`${row.pluginId} ${row.configObjectId}`, row.id]))
    return yield* Effect.forEach(input.pairs, ({ configObjectId, pluginId }) => {
      const id = ids.get(`${pluginId} ${configObjectId}`)
      return id === undefined ? Effect.die(new Error(`the upsert answered no row for ${pluginId} ${configObjectId}`)) : Effect.succeed(id)
    })
  })

  /** Takes a config object out of a plugin; false when it was not in it. */
  const removeConfigObject = (input: {
    readonly organizationId: OrganizationId
    readonly pluginId: PluginId
    readonly configObjectId: ConfigObjectId
    readonly at: Date
  }) =>
    sql`UPDATE plugin_config_objects SET removed_at = ${input.at}
          WHERE organization_id = ${input.organizationId} AND plugin_id = ${input.pluginId}
            AND config_object_id = ${input.configObjectId} AND removed_at IS NULL
          RETURNING id`.pipe(Effect.map((rows) => rows.length > 0))

  /** Lists a plugin in a marketplace (re-activating a removed membership) and answers the membership's id. */
  const addPlugin = Effect.fn("ContentsRepository.addPlugin")(function*(input: {
    readonly organizationId: OrganizationId
    readonly marketplaceId: MarketplaceId
    readonly pluginId: PluginId
    readonly source: MembershipSource
    readonly createdBy: MembershipId | null
    readonly at: Date
  }) {
    const id = yield* makeId("mkp")
    const [row] = yield* sql<{ id: MarketplacePluginId }>`
          INSERT INTO marketplace_plugins ${
      sql.insert({
        id,
        organizationId: input.organizationId,
        marketplaceId: input.marketplaceId,
        pluginId: input.pluginId,
        membershipSource: input.source,
        createdByMembershipId: input.createdBy,
        createdAt: input.at
      })
    }
          ON CONFLICT (organization_id, marketplace_id, plugin_id) DO UPDATE SET removed_at = NULL
          RETURNING id`
    if (row === undefined) return yield* Effect.die(new Error("the upsert of a marketplace's plugin answered no row"))
    return row.id
  })

  /** Takes a plugin out of a marketplace; false when it was not listed. */
  const removePlugin = (input: {
    readonly organizationId: OrganizationId
    readonly marketplaceId: MarketplaceId
    readonly pluginId: PluginId
    readonly at: Date
  }) =>
    sql`UPDATE marketplace_plugins SET removed_at = ${input.at}
          WHERE organization_id = ${input.organizationId} AND marketplace_id = ${input.marketplaceId}
            AND plugin_id = ${input.pluginId} AND removed_at IS NULL
          RETURNING id`.pipe(Effect.map((rows) => rows.length > 0))

  return { addConfigObjects, removeConfigObject, addPlugin, removePlugin } as const
})

export class ContentsRepository extends Context.Service<ContentsRepository>()("@orgplane/server/catalog/ContentsRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

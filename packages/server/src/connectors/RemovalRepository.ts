/**
 * Removing a connector instance: every row tied to it, in dependency order, inside the caller's transaction.
 *
 * Tied to an instance, and deleted with it:
 * - its targets, mappings, sync events, discovery cache, grants;
 * - the config objects it materialized (`config_objects.connector_instance_id`), with their versions, grants,
 *   plugin memberships and source bindings, and every plugin membership its mappings made;
 * - the plugins its discovery apply created (`plugins.connector_instance_id`), unless they still hold config
 *   objects from elsewhere or another instance's mapping points at them: those are kept and untied;
 * - the marketplaces its apply created (`marketplaces.connector_instance_id`), unless they still list a plugin
 *   that is kept: those are kept and untied.
 * Plugins and marketplaces people made and pointed mappings at are never deleted.
 */
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { ConnectorInstanceId, MarketplaceId, OrganizationId, PluginId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { execute, findAll, single } from "../platform/Statements.js"

export interface RemovalCounts {
  readonly deletedConfigObjectCount: number
  readonly deletedConnectorMappingCount: number
  readonly deletedPluginCount: number
  readonly deletedMarketplaceCount: number
}

const Instance = Schema.Struct({ organizationId: OrganizationId, instanceId: ConnectorInstanceId })
const Count = Schema.Struct({ count: Schema.Int })

type Statement = Effect.Effect<unknown, SqlError>

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** A statement over one instance's rows. */
  const ofInstance = (statement: (org: string, instanceId: string) => Statement) =>
    execute({ Request: Instance, execute: ({ instanceId, organizationId }) => statement(organizationId, instanceId) })
  /** A DELETE over one instance's rows, answering how many it deleted. */
  const countedOfInstance = (table: string, column: string) =>
    single({
      Request: Instance,
      Result: Count,
      execute: ({ instanceId, organizationId }) =>
        sql`WITH d AS (DELETE FROM ${sql.literal(table)} WHERE organization_id = ${organizationId} AND ${sql.literal(column)} = ${instanceId} RETURNING 1)
              SELECT count(*)::int AS count FROM d`
    })
  /** A statement over some rows of one organization, by id; nothing when there are none. */
  const byIds = <A extends string>(id: Schema.Codec<A, string>, statement: (org: string, ids: ReadonlyArray<string>) => Statement) =>
    execute({
      Request: Schema.Struct({ organizationId: OrganizationId, ids: Schema.Array(id) }),
      execute: ({ ids, organizationId }) => (ids.length === 0 ? Effect.void : statement(organizationId, ids))
    })

  const objects = (org: string, instanceId: string) =>
    sql`SELECT id FROM config_objects WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`
  const mappings = (org: string, instanceId: string) =>
    sql`SELECT id FROM connector_mappings WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`
  const targets = (org: string, instanceId: string) =>
    sql`SELECT id FROM connector_targets WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`

  const deleteBindings = ofInstance((org, instanceId) =>
    sql`DELETE FROM connector_source_bindings WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`
  )
  const deleteMemberships = ofInstance((org, instanceId) =>
    sql`DELETE FROM plugin_config_objects WHERE organization_id = ${org}
          AND (config_object_id IN (${objects(org, instanceId)}) OR connector_mapping_id IN (${mappings(org, instanceId)}))`
  )
  const deleteObjectGrants = ofInstance((org, instanceId) =>
    sql`DELETE FROM config_object_grants WHERE organization_id = ${org} AND config_object_id IN (${objects(org, instanceId)})`
  )
  // The files the versions list (migration 0016); their bytes stay in component_file_contents, shared by content.
  const deleteVersionFiles = ofInstance((org, instanceId) =>
    sql`DELETE FROM config_object_version_files WHERE organization_id = ${org} AND config_object_version_id IN (
            SELECT id FROM config_object_versions WHERE organization_id = ${org} AND config_object_id IN (${objects(org, instanceId)}))`
  )
  const deleteVersions = ofInstance((org, instanceId) =>
    sql`DELETE FROM config_object_versions WHERE organization_id = ${org} AND config_object_id IN (${objects(org, instanceId)})`
  )
  const deleteObjects = countedOfInstance("config_objects", "connector_instance_id")
  const deleteMappings = countedOfInstance("connector_mappings", "connector_instance_id")
  const deleteTreeEntries = ofInstance((org, instanceId) =>
    sql`DELETE FROM connector_tree_entries WHERE organization_id = ${org} AND connector_target_id IN (${targets(org, instanceId)})`
  )
  const deleteDiscoveries = ofInstance((org, instanceId) =>
    sql`DELETE FROM connector_discoveries WHERE organization_id = ${org} AND connector_target_id IN (${targets(org, instanceId)})`
  )
  const deleteEvents = ofInstance((org, instanceId) =>
    sql`DELETE FROM connector_sync_events WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`
  )

  /** Plugins the instance created that hold nothing else now, and no other instance maps to; locked. */
  const doomedPlugins = findAll({
    Request: Instance,
    Result: Schema.Struct({ id: PluginId }),
    execute: ({ instanceId, organizationId }) =>
      sql`SELECT p.id FROM plugins p
            WHERE p.organization_id = ${organizationId} AND p.connector_instance_id = ${instanceId}
              AND NOT EXISTS (SELECT 1 FROM plugin_config_objects pm
                              WHERE pm.organization_id = p.organization_id AND pm.plugin_id = p.id AND pm.removed_at IS NULL)
              AND NOT EXISTS (SELECT 1 FROM connector_mappings om
                              WHERE om.organization_id = p.organization_id AND om.plugin_id = p.id)
            FOR UPDATE`
  })
  const deletePlugins = byIds(PluginId, (org, ids) =>
    Effect.all([
      sql`DELETE FROM marketplace_plugins WHERE organization_id = ${org} AND plugin_id IN ${sql.in(ids)}`,
      sql`DELETE FROM plugin_grants WHERE organization_id = ${org} AND plugin_id IN ${sql.in(ids)}`,
      sql`DELETE FROM plugin_config_objects WHERE organization_id = ${org} AND plugin_id IN ${sql.in(ids)}`,
      sql`DELETE FROM plugins WHERE organization_id = ${org} AND id IN ${sql.in(ids)}`
    ], { discard: true })
  )
  // A kept plugin joins the organization's own plugins, whose names are unique (migration 0045): one whose name a
  // live plugin there holds takes its id after the name.
  const untiePlugins = ofInstance((org, instanceId) =>
    sql`UPDATE plugins p SET connector_instance_id = NULL,
            name = CASE WHEN EXISTS (SELECT 1 FROM plugins o
                                     WHERE o.organization_id = p.organization_id AND o.connector_instance_id IS NULL
                                       AND o.deleted_at IS NULL AND lower(o.name) = lower(p.name))
                        THEN left(p.name, 255 - length(p.id) - 3) || ' (' || p.id || ')' ELSE p.name END
          WHERE p.organization_id = ${org} AND p.connector_instance_id = ${instanceId}`
  )

  /** Marketplaces the instance created that list nothing now; locked. */
  const doomedMarketplaces = findAll({
    Request: Instance,
    Result: Schema.Struct({ id: MarketplaceId }),
    execute: ({ instanceId, organizationId }) =>
      sql`SELECT m.id FROM marketplaces m
            WHERE m.organization_id = ${organizationId} AND m.connector_instance_id = ${instanceId}
              AND NOT EXISTS (SELECT 1 FROM marketplace_plugins mp
                              WHERE mp.organization_id = m.organization_id AND mp.marketplace_id = m.id AND mp.removed_at IS NULL)
            FOR UPDATE`
  })
  const deleteMarketplaces = byIds(MarketplaceId, (org, ids) =>
    Effect.all([
      sql`DELETE FROM marketplace_plugins WHERE organization_id = ${org} AND marketplace_id IN ${sql.in(ids)}`,
      sql`DELETE FROM marketplace_grants WHERE organization_id = ${org} AND marketplace_id IN ${sql.in(ids)}`,
      sql`DELETE FROM marketplaces WHERE organization_id = ${org} AND id IN ${sql.in(ids)}`
    ], { discard: true })
  )
  const untieMarketplaces = ofInstance((org, instanceId) =>
    sql`UPDATE marketplaces SET connector_instance_id = NULL WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`
  )

  const deleteTargets = ofInstance((org, instanceId) =>
    sql`DELETE FROM connector_targets WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`
  )
  const deleteInstanceGrants = ofInstance((org, instanceId) =>
    sql`DELETE FROM connector_instance_grants WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`
  )
  const deleteInstance = ofInstance((org, instanceId) =>
    sql`DELETE FROM connector_instances WHERE organization_id = ${org} AND id = ${instanceId}`
  )

  const remove = Effect.fn("RemovalRepository.remove")(function*(organizationId: OrganizationId, instanceId: ConnectorInstanceId) {
    const instance = { organizationId, instanceId }
    yield* deleteBindings(instance)
    yield* deleteMemberships(instance)
    yield* deleteObjectGrants(instance)
    yield* deleteVersionFiles(instance)
    yield* deleteVersions(instance)
    const objectCount = yield* deleteObjects(instance)
    const mappingCount = yield* deleteMappings(instance)
    yield* deleteTreeEntries(instance)
    yield* deleteDiscoveries(instance)
    yield* deleteEvents(instance)

    const pluginIds = (yield* doomedPlugins(instance)).map((row) => row.id)
    yield* deletePlugins({ organizationId, ids: pluginIds })
    yield* untiePlugins(instance)

    const marketplaceIds = (yield* doomedMarketplaces(instance)).map((row) => row.id)
    yield* deleteMarketplaces({ organizationId, ids: marketplaceIds })
    yield* untieMarketplaces(instance)

    yield* deleteTargets(instance)
    yield* deleteInstanceGrants(instance)
    yield* deleteInstance(instance)
    return {
      deletedConfigObjectCount: objectCount.count,
      deletedConnectorMappingCount: mappingCount.count,
      deletedPluginCount: pluginIds.length,
      deletedMarketplaceCount: marketplaceIds.length
    } satisfies RemovalCounts
  })

  return { remove } as const
})

export class RemovalRepository extends Context.Service<RemovalRepository>()("@orgplane/server/connectors/RemovalRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

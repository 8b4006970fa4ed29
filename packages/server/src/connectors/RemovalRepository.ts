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
import { SqlClient } from "@effect/sql"
import type { ConnectorInstanceId, OrganizationId } from "@orgplane/schema"
import { Effect } from "effect"

export interface RemovalCounts {
  readonly deletedConfigObjectCount: number
  readonly deletedConnectorMappingCount: number
  readonly deletedPluginCount: number
  readonly deletedMarketplaceCount: number
}

export class RemovalRepository extends Effect.Service<RemovalRepository>()("@orgplane/server/RemovalRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const remove = (organizationId: OrganizationId, instanceId: ConnectorInstanceId) =>
      Effect.gen(function*() {
        const org = organizationId
        const objects = sql`SELECT id FROM config_objects WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`
        const mappings = sql`SELECT id FROM connector_mappings WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`
        const targets = sql`SELECT id FROM connector_targets WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`

        yield* sql`DELETE FROM connector_source_bindings WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`
        yield* sql`DELETE FROM plugin_config_objects WHERE organization_id = ${org}
                   AND (config_object_id IN (${objects}) OR connector_mapping_id IN (${mappings}))`
        yield* sql`DELETE FROM config_object_grants WHERE organization_id = ${org} AND config_object_id IN (${objects})`
        yield* sql`DELETE FROM config_object_versions WHERE organization_id = ${org} AND config_object_id IN (${objects})`
        const [objectCount] = yield* sql<{ count: number }>`
          WITH d AS (DELETE FROM config_objects WHERE organization_id = ${org} AND connector_instance_id = ${instanceId} RETURNING 1)
          SELECT count(*)::int AS count FROM d`
        const [mappingCount] = yield* sql<{ count: number }>`
          WITH d AS (DELETE FROM connector_mappings WHERE organization_id = ${org} AND connector_instance_id = ${instanceId} RETURNING 1)
          SELECT count(*)::int AS count FROM d`
        yield* sql`DELETE FROM connector_tree_entries WHERE organization_id = ${org} AND connector_target_id IN (${targets})`
        yield* sql`DELETE FROM connector_discoveries WHERE organization_id = ${org} AND connector_target_id IN (${targets})`
        yield* sql`DELETE FROM connector_sync_events WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`

        // Plugins the instance created that hold nothing else now, and no other instance maps to.
        const doomedPlugins = yield* sql<{ id: string }>`
          SELECT p.id FROM plugins p
          WHERE p.organization_id = ${org} AND p.connector_instance_id = ${instanceId}
            AND NOT EXISTS (SELECT 1 FROM plugin_config_objects pm
                            WHERE pm.organization_id = p.organization_id AND pm.plugin_id = p.id AND pm.removed_at IS NULL)
            AND NOT EXISTS (SELECT 1 FROM connector_mappings om
                            WHERE om.organization_id = p.organization_id AND om.plugin_id = p.id)
          FOR UPDATE`
        const pluginIds = doomedPlugins.map((row) => row.id)
        if (pluginIds.length > 0) {
          yield* sql`DELETE FROM marketplace_plugins WHERE organization_id = ${org} AND plugin_id IN ${sql.in(pluginIds)}`
          yield* sql`DELETE FROM plugin_grants WHERE organization_id = ${org} AND plugin_id IN ${sql.in(pluginIds)}`
          yield* sql`DELETE FROM plugin_config_objects WHERE organization_id = ${org} AND plugin_id IN ${sql.in(pluginIds)}`
          yield* sql`DELETE FROM plugins WHERE organization_id = ${org} AND id IN ${sql.in(pluginIds)}`
        }
        yield* sql`UPDATE plugins SET connector_instance_id = NULL WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`

        // Marketplaces the instance created that list nothing now.
        const doomedMarketplaces = yield* sql<{ id: string }>`
          SELECT m.id FROM marketplaces m
          WHERE m.organization_id = ${org} AND m.connector_instance_id = ${instanceId}
            AND NOT EXISTS (SELECT 1 FROM marketplace_plugins mp
                            WHERE mp.organization_id = m.organization_id AND mp.marketplace_id = m.id AND mp.removed_at IS NULL)
          FOR UPDATE`
        const marketplaceIds = doomedMarketplaces.map((row) => row.id)
        if (marketplaceIds.length > 0) {
          yield* sql`DELETE FROM marketplace_plugins WHERE organization_id = ${org} AND marketplace_id IN ${sql.in(marketplaceIds)}`
          yield* sql`DELETE FROM marketplace_grants WHERE organization_id = ${org} AND marketplace_id IN ${sql.in(marketplaceIds)}`
          yield* sql`DELETE FROM marketplaces WHERE organization_id = ${org} AND id IN ${sql.in(marketplaceIds)}`
        }
        yield* sql`UPDATE marketplaces SET connector_instance_id = NULL WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`

        yield* sql`DELETE FROM connector_targets WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`
        yield* sql`DELETE FROM connector_instance_grants WHERE organization_id = ${org} AND connector_instance_id = ${instanceId}`
        yield* sql`DELETE FROM connector_instances WHERE organization_id = ${org} AND id = ${instanceId}`
        return {
          deletedConfigObjectCount: objectCount.count,
          deletedConnectorMappingCount: mappingCount.count,
          deletedPluginCount: pluginIds.length,
          deletedMarketplaceCount: marketplaceIds.length
        } satisfies RemovalCounts
      })

    return { remove } as const
  })
}) {}

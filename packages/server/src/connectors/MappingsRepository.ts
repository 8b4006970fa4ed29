/** Storage of connector mappings: one target's list is a keyset over `connector_mappings_list_idx`. */
import { SqlClient } from "@effect/sql"
import {
  Conflict,
  type ConnectorInstanceId,
  ConnectorMapping,
  type ConnectorMappingId,
  type ConnectorMappingListQuery,
  type ConnectorTargetId,
  type ObjectType,
  type OrganizationId,
  type PluginId
} from "@orgplane/schema"
import { Effect, Option } from "effect"
import * as Keyset from "../platform/Keyset.js"
import { catchUniqueViolation, first } from "../platform/Sql.js"
import { likePattern } from "../staff/MembersRepository.js"
import { parseJson } from "./ConnectorsRepository.js"

type Row = { readonly [column: string]: unknown }

/** Most recently updated first, as the index orders them. */
const recentlyUpdated = Keyset.make<ConnectorMapping>("connector_mappings", "desc", [
  { column: "m.updated_at", value: (mapping) => mapping.updatedAt.toISOString() },
  { column: "m.id", value: (mapping) => mapping.id }
])

export const mappingExists = () =>
  new Conflict({
    error: "connector_mapping_exists",
    message: "The target already has a mapping with this selector and object type."
  })

const toMapping = (row: Row) => new ConnectorMapping({ ...row, mappingConfigJson: parseJson(row.mappingConfigJson) } as any, true)

export interface MappingFields {
  readonly mappingKind: ConnectorMapping["mappingKind"]
  readonly selector: string
  readonly objectType: ObjectType
  readonly pluginId: PluginId | null
  readonly autoAddToPlugin: boolean
  readonly config: object | null
}

export class MappingsRepository extends Effect.Service<MappingsRepository>()("@orgplane/server/MappingsRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`m.id, m.connector_instance_id, m.connector_target_id, m.connector_type, m.remote_id, m.mapping_kind,
      m.selector, m.object_type, m.plugin_id, m.auto_add_to_plugin, m.mapping_config_json::text AS mapping_config_json, m.created_at, m.updated_at`

    const insert = (row: MappingFields & {
      readonly id: ConnectorMappingId
      readonly organizationId: OrganizationId
      readonly connectorInstanceId: ConnectorInstanceId
      readonly connectorTargetId: ConnectorTargetId
      readonly at: Date
    }) =>
      sql`INSERT INTO connector_mappings ${
        sql.insert({
          id: row.id,
          organizationId: row.organizationId,
          connectorInstanceId: row.connectorInstanceId,
          connectorTargetId: row.connectorTargetId,
          connectorType: "codehost",
          remoteId: null,
          mappingKind: row.mappingKind,
          selector: row.selector,
          objectType: row.objectType,
          pluginId: row.pluginId,
          autoAddToPlugin: row.autoAddToPlugin,
          mappingConfigJson: row.config === null ? null : JSON.stringify(row.config),
          createdAt: row.at,
          updatedAt: row.at
        })
      }`.pipe(catchUniqueViolation(mappingExists))

    const find = (organizationId: OrganizationId, id: ConnectorMappingId) =>
      sql<Row>`SELECT ${columns} FROM connector_mappings m WHERE m.organization_id = ${organizationId} AND m.id = ${id}`.pipe(
        Effect.map((rows) => Option.map(first(rows), toMapping))
      )

    const update = (
      organizationId: OrganizationId,
      id: ConnectorMappingId,
      changes: Partial<Omit<MappingFields, "mappingKind">>,
      at: Date
    ) => {
      const set: Record<string, unknown> = { updatedAt: at }
      for (const [key, value] of Object.entries(changes)) {
        if (value === undefined) continue
        if (key === "config") set.mappingConfigJson = value === null ? null : JSON.stringify(value)
        else set[key] = value
      }
      return sql`UPDATE connector_mappings SET ${sql.update(set)} WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
        catchUniqueViolation(mappingExists)
      )
    }

    /** Deletes the mapping with the plugin memberships and source bindings it made (the config objects stay). */
    const remove = (organizationId: OrganizationId, id: ConnectorMappingId) =>
      Effect.all([
        sql`DELETE FROM plugin_config_objects WHERE organization_id = ${organizationId} AND connector_mapping_id = ${id}`,
        sql`DELETE FROM connector_source_bindings WHERE organization_id = ${organizationId} AND connector_mapping_id = ${id}`,
        sql`DELETE FROM connector_mappings WHERE organization_id = ${organizationId} AND id = ${id}`
      ], { discard: true })

    const list = (organizationId: OrganizationId, targetId: ConnectorTargetId, query: ConnectorMappingListQuery) =>
      Keyset.page(recentlyUpdated, query, (page) =>
        sql<Row>`SELECT ${columns} FROM connector_mappings m WHERE ${
          sql.and([
            sql`m.organization_id = ${organizationId}`,
            sql`m.connector_target_id = ${targetId}`,
            query.mappingKind !== undefined ? sql`m.mapping_kind = ${query.mappingKind}` : sql`true`,
            query.objectType !== undefined ? sql`m.object_type = ${query.objectType}` : sql`true`,
            query.pluginId !== undefined ? sql`m.plugin_id = ${query.pluginId}` : sql`true`,
            query.q !== undefined
              ? sql`(m.selector || E'\\n' || COALESCE(m.remote_id, '')) ILIKE ${likePattern(query.q)}`
              : sql`true`,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`.pipe(Effect.map((rows) => rows.map(toMapping))))

    /** Every mapping of a target (sync evaluates them all against the tree). */
    const ofTarget = (organizationId: OrganizationId, targetId: ConnectorTargetId) =>
      sql<Row>`SELECT ${columns} FROM connector_mappings m
               WHERE m.organization_id = ${organizationId} AND m.connector_target_id = ${targetId}
               ORDER BY m.created_at, m.id`.pipe(Effect.map((rows) => rows.map(toMapping)))

    /** The mapping of a target with this selector and type, if any (discovery apply reuses it). */
    const findBySelector = (organizationId: OrganizationId, targetId: ConnectorTargetId, selector: string, objectType: ObjectType) =>
      sql<Row>`SELECT ${columns} FROM connector_mappings m
               WHERE m.organization_id = ${organizationId} AND m.connector_target_id = ${targetId}
                 AND m.selector = ${selector} AND m.object_type = ${objectType}`.pipe(Effect.map((rows) => Option.map(first(rows), toMapping)))

    return { insert, find, update, remove, list, ofTarget, findBySelector } as const
  })
}) {}

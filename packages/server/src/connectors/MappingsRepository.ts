/**
 * Storage of connector mappings: one target's list is a keyset over `connector_mappings_list_idx`.
 * A rank read beside a row is `withColumns(row, { accessRank: Schema.Int })`, what access/Access's `ranked` is.
 */
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import {
  Conflict,
  ConnectorInstanceId,
  ConnectorMapping,
  ConnectorMappingId,
  type ConnectorMappingListQuery,
  ConnectorTargetId,
  JsonObject,
  ObjectType,
  OrganizationId,
  type PluginId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Keyset from "../platform/Keyset.js"
import { catchUniqueViolation } from "../platform/Sql.js"
import { classRow, DateColumn, execute, findAll, findOne, Fragment, likePattern, trustedClassRow, withColumns } from "../platform/Statements.js"

/** A nullable JSON column written from its object: SQL NULL for null. */
const NullableJsonColumn = Schema.NullOr(Schema.fromJsonString(JsonObject))

export class ConnectorMappingRow extends Model.Class<ConnectorMappingRow>("ConnectorMappingRow")({
  id: Model.GeneratedByApp(ConnectorMappingId),
  organizationId: OrganizationId,
  connectorInstanceId: ConnectorInstanceId,
  connectorTargetId: ConnectorTargetId,
  connectorType: ConnectorMapping.fields.connectorType,
  remoteId: ConnectorMapping.fields.remoteId,
  mappingKind: ConnectorMapping.fields.mappingKind,
  selector: ConnectorMapping.fields.selector,
  objectType: ObjectType,
  pluginId: ConnectorMapping.fields.pluginId,
  autoAddToPlugin: ConnectorMapping.fields.autoAddToPlugin,
  mappingConfigJson: NullableJsonColumn,
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

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

/** A mapping as `columns` reads it (its JSON column as text). */
const Mapping = classRow(ConnectorMapping, { json: ["mappingConfigJson"] })

export interface MappingFields {
  readonly mappingKind: ConnectorMapping["mappingKind"]
  readonly selector: string
  readonly objectType: ObjectType
  readonly pluginId: PluginId | null
  readonly autoAddToPlugin: boolean
  readonly config: JsonObject | null
}

const Scoped = Schema.Struct({ organizationId: OrganizationId, id: ConnectorMappingId })
const OfTarget = Schema.Struct({ organizationId: OrganizationId, targetId: ConnectorTargetId })

/** What an update may change (absent: unchanged). */
const Changes = Schema.Struct({
  selector: Schema.optionalKey(ConnectorMappingRow.fields.selector),
  objectType: Schema.optionalKey(ObjectType),
  pluginId: Schema.optionalKey(ConnectorMappingRow.fields.pluginId),
  autoAddToPlugin: Schema.optionalKey(Schema.Boolean),
  mappingConfigJson: Schema.optionalKey(NullableJsonColumn)
})

const makeMappingsRepository = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql`m.id, m.connector_instance_id, m.connector_target_id, m.connector_type, m.remote_id, m.mapping_kind,
      m.selector, m.object_type, m.plugin_id, m.auto_add_to_plugin, m.mapping_config_json::text AS mapping_config_json, m.created_at, m.updated_at`

  const insertRow = execute({
    Request: ConnectorMappingRow.insert,
    execute: (row) => sql`INSERT INTO connector_mappings ${sql.insert(row)}`
  })
  const insert = (row: MappingFields & {
    readonly id: ConnectorMappingId
    readonly organizationId: OrganizationId
    readonly connectorInstanceId: ConnectorInstanceId
    readonly connectorTargetId: ConnectorTargetId
    readonly at: Date
  }) =>
    insertRow({
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
      mappingConfigJson: row.config,
      createdAt: row.at,
      updatedAt: row.at
    }).pipe(catchUniqueViolation(mappingExists))

  const findRow = findOne({
    Request: Scoped,
    Result: Mapping,
    execute: ({ id, organizationId }) => sql`SELECT ${columns} FROM connector_mappings m WHERE m.organization_id = ${organizationId} AND m.id = ${id}`
  })
  const find = (organizationId: OrganizationId, id: ConnectorMappingId) => findRow({ organizationId, id })

  /**
   * A mapping with the caller's rank on its instance (`rank`: an `Access.rank` expression over the instance's
   * alias `i`); with `lock`, the instance's row is locked.
   */
  const findRanked = findOne({
    Request: Schema.Struct({ ...Scoped.fields, rank: Fragment, lock: Schema.Boolean }),
    Result: withColumns(Mapping, { accessRank: Schema.Int }),
    execute: ({ id, lock, organizationId, rank }) =>
      sql`SELECT ${rank} AS access_rank, ${columns} FROM connector_mappings m
            JOIN connector_instances i ON i.organization_id = m.organization_id AND i.id = m.connector_instance_id
            WHERE m.organization_id = ${organizationId} AND m.id = ${id} ${lock ? sql`FOR UPDATE OF i` : sql``}`
  })

  const updateRow = execute({
    Request: Schema.Struct({ ...Scoped.fields, changes: Changes, at: DateColumn }),
    execute: ({ at, changes, id, organizationId }) => {
      const set = { ...Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)), updatedAt: at }
      return sql`UPDATE connector_mappings SET ${sql.update(set)} WHERE organization_id = ${organizationId} AND id = ${id}`
    }
  })
  const update = (
    organizationId: OrganizationId,
    id: ConnectorMappingId,
    changes: Partial<Omit<MappingFields, "mappingKind">>,
    at: Date
  ) => {
    const { config, ...columns } = changes
    return updateRow({ organizationId, id, changes: { ...columns, ...(config !== undefined ? { mappingConfigJson: config } : {}) }, at }).pipe(
      catchUniqueViolation(mappingExists)
    )
  }

  const removeRows = execute({
    Request: Scoped,
    execute: ({ id, organizationId }) =>
      Effect.all([
        sql`DELETE FROM plugin_config_objects WHERE organization_id = ${organizationId} AND connector_mapping_id = ${id}`,
        sql`DELETE FROM connector_source_bindings WHERE organization_id = ${organizationId} AND connector_mapping_id = ${id}`,
        sql`DELETE FROM connector_mappings WHERE organization_id = ${organizationId} AND id = ${id}`
      ], { discard: true })
  })
  /** Deletes the mapping with the plugin memberships and source bindings it made (the config objects stay). */
  const remove = (organizationId: OrganizationId, id: ConnectorMappingId) => removeRows({ organizationId, id })

  const listRows = findAll({
    Request: Schema.Struct({
      ...OfTarget.fields,
      query: Schema.Struct({
        mappingKind: Schema.optional(ConnectorMapping.fields.mappingKind),
        objectType: Schema.optional(ObjectType),
        pluginId: Schema.optional(Schema.String),
        q: Schema.optional(Schema.String)
      }),
      page: Keyset.PageRequest
    }),
    Result: trustedClassRow(ConnectorMapping, { json: ["mappingConfigJson"] }),
    execute: ({ organizationId, page, query, targetId }) =>
      sql`SELECT ${columns} FROM connector_mappings m WHERE ${
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
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })
  const list = (organizationId: OrganizationId, targetId: ConnectorTargetId, query: ConnectorMappingListQuery) =>
    Keyset.page(recentlyUpdated, query, (page) =>
      listRows({
        organizationId,
        targetId,
        query: { mappingKind: query.mappingKind, objectType: query.objectType, pluginId: query.pluginId, q: query.q },
        page
      }))

  const ofTargetRows = findAll({
    Request: OfTarget,
    Result: Mapping,
    execute: ({ organizationId, targetId }) =>
      sql`SELECT ${columns} FROM connector_mappings m
            WHERE m.organization_id = ${organizationId} AND m.connector_target_id = ${targetId}
            ORDER BY m.created_at, m.id`
  })
  /** Every mapping of a target (sync evaluates them all against the tree). */
  const ofTarget = (organizationId: OrganizationId, targetId: ConnectorTargetId) => ofTargetRows({ organizationId, targetId })

  /** The organization's mappings with these ids (a sync's batch: those deleted since its plan are missing). */
  const byIds = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, ids: Schema.Array(Schema.String) }),
    Result: Mapping,
    execute: ({ ids, organizationId }) =>
      ids.length === 0
        ? Effect.succeed([])
        : sql`SELECT ${columns} FROM connector_mappings m WHERE m.organization_id = ${organizationId} AND m.id IN ${sql.in(ids)}`
  })

  const findBySelectorRow = findOne({
    Request: Schema.Struct({ ...OfTarget.fields, selector: Schema.String, objectType: ObjectType }),
    Result: Mapping,
    execute: ({ objectType, organizationId, selector, targetId }) =>
      sql`SELECT ${columns} FROM connector_mappings m
            WHERE m.organization_id = ${organizationId} AND m.connector_target_id = ${targetId}
              AND m.selector = ${selector} AND m.object_type = ${objectType}`
  })
  /** The mapping of a target with this selector and type, if any (discovery apply reuses it). */
  const findBySelector = (organizationId: OrganizationId, targetId: ConnectorTargetId, selector: string, objectType: ObjectType) =>
    findBySelectorRow({ organizationId, targetId, selector, objectType })

  return { insert, find, findRanked, update, remove, list, ofTarget, byIds, findBySelector } as const
})

export class MappingsRepository extends Context.Service<MappingsRepository>()("@orgplane/server/connectors/MappingsRepository", { make: makeMappingsRepository }) {
  static readonly layer = Layer.effect(this, this.make)
}

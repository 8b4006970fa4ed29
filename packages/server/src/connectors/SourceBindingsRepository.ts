/**
 * Storage of source bindings (`connector_source_bindings`): which file of which mapping each materialized config
 * object is, and the blob it was last made from; and the state a sync compares a file with, the bound object's
 * latest version.
 */
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import {
  ConfigObjectId,
  ConfigObjectVersion,
  ConnectorInstanceId,
  ConnectorMappingId,
  ConnectorTargetId,
  ObjectType,
  OrganizationId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { DateColumn, execute, findAll, findOne } from "../platform/Statements.js"

export class SourceBindingRow extends Model.Class<SourceBindingRow>("SourceBindingRow")({
  configObjectId: ConfigObjectId,
  organizationId: OrganizationId,
  connectorInstanceId: ConnectorInstanceId,
  connectorTargetId: ConnectorTargetId,
  connectorMappingId: ConnectorMappingId,
  path: Schema.String,
  blobSha: Schema.String,
  sourceRevisionRef: Schema.String,
  /** The files the object was last made with (`ComponentFileSelection.Fingerprint` as JSON); null before 0016. */
  filesJson: Schema.NullOr(Schema.String),
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

/** What a sync's plan compares a mapped file with. */
export const Binding = Schema.Struct({
  configObjectId: ConfigObjectId,
  connectorMappingId: ConnectorMappingId,
  path: Schema.String,
  blobSha: Schema.String,
  filesJson: Schema.NullOr(Schema.String)
})
export type Binding = typeof Binding.Type

/** A bound config object with its latest version (a deletion record included). */
export const ObjectState = Schema.Struct({
  status: Schema.String,
  objectType: ObjectType,
  number: Schema.Int,
  rawSourceText: Schema.NullOr(Schema.String),
  connectorSyncEventId: Schema.NullOr(Schema.String),
  schemaVersion: Schema.String,
  parserMode: ConfigObjectVersion.fields.parserMode
})
export type ObjectState = typeof ObjectState.Type

const bindingColumns = "config_object_id, connector_mapping_id, path, blob_sha, files_json"

const makeSourceBindingsRepository = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const ofTarget = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, targetId: ConnectorTargetId }),
    Result: Binding,
    execute: ({ organizationId, targetId }) =>
      sql`SELECT ${sql.literal(bindingColumns)} FROM connector_source_bindings
            WHERE organization_id = ${organizationId} AND connector_target_id = ${targetId}`
  })
  /** Every binding of a target (a sync's plan). */
  const bindingsOf = (organizationId: OrganizationId, targetId: ConnectorTargetId) => ofTarget({ organizationId, targetId })

  const ofFile = findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, mappingId: ConnectorMappingId, path: Schema.String }),
    Result: Binding,
    execute: ({ mappingId, organizationId, path }) =>
      sql`SELECT ${sql.literal(bindingColumns)} FROM connector_source_bindings
            WHERE organization_id = ${organizationId} AND connector_mapping_id = ${mappingId} AND path = ${path}`
  })
  /** The binding of one mapped file, if it was materialized. */
  const bindingOf = (organizationId: OrganizationId, mappingId: ConnectorMappingId, path: string) =>
    ofFile({ organizationId, mappingId, path })

  /** Binds an object to its file, or moves the binding to the file's new blob and commit. */
  const upsert = execute({
    Request: SourceBindingRow.insert,
    execute: (row) =>
      sql`INSERT INTO connector_source_bindings ${sql.insert(row)}
            ON CONFLICT (config_object_id) DO UPDATE SET blob_sha = EXCLUDED.blob_sha, files_json = EXCLUDED.files_json,
              source_revision_ref = EXCLUDED.source_revision_ref, updated_at = EXCLUDED.updated_at`
  })

  const removeRow = execute({
    Request: Schema.Struct({ organizationId: OrganizationId, configObjectId: ConfigObjectId }),
    execute: ({ configObjectId, organizationId }) =>
      sql`DELETE FROM connector_source_bindings WHERE organization_id = ${organizationId} AND config_object_id = ${configObjectId}`
  })
  /** Unbinds an object (its file is gone). */
  const remove = (organizationId: OrganizationId, configObjectId: ConfigObjectId) => removeRow({ organizationId, configObjectId })

  const stateRow = findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, id: ConfigObjectId }),
    Result: ObjectState,
    execute: ({ id, organizationId }) =>
      sql`SELECT c.status, c.object_type, v.number, v.raw_source_text, v.connector_sync_event_id, v.schema_version, v.parser_mode
            FROM config_objects c
            JOIN config_object_versions v ON v.organization_id = c.organization_id AND v.config_object_id = c.id
            WHERE c.organization_id = ${organizationId} AND c.id = ${id}
            ORDER BY v.number DESC LIMIT 1 FOR UPDATE OF c`
  })
  /** A bound object with its latest version (a deletion record included), row-locked. */
  const stateOf = (organizationId: OrganizationId, id: ConfigObjectId) => stateRow({ organizationId, id })

  return { bindingsOf, bindingOf, upsert, remove, stateOf } as const
})

export class SourceBindingsRepository extends Context.Service<SourceBindingsRepository>()("@orgplane/server/connectors/SourceBindingsRepository", { make: makeSourceBindingsRepository }) {
  static readonly layer = Layer.effect(this, this.make)
}

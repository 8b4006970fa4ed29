/**
 * Storage of the mapped files the last sync of a target could not import (`connector_skipped_files`), so that a
 * plugin shows what it is missing between syncs (see migration 0017).
 */
import * as SqlClient from "effect/sql/SqlClient"
import { ConnectorMappingId, ConnectorSyncEventId, ConnectorTargetId, OrganizationId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { DateColumn, execute } from "../platform/Statements.js"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** Records a skipped file (again, on a later sync: the reason and event are the latest). */
  const record = execute({
    Request: Schema.Struct({
      organizationId: OrganizationId,
      connectorTargetId: ConnectorTargetId,
      connectorMappingId: ConnectorMappingId,
      path: Schema.String,
      reason: Schema.String,
      connectorSyncEventId: ConnectorSyncEventId,
      createdAt: DateColumn
    }),
    execute: (row) =>
      sql`INSERT INTO connector_skipped_files ${sql.insert(row)}
            ON CONFLICT (organization_id, connector_mapping_id, path) DO UPDATE SET reason = EXCLUDED.reason,
              connector_sync_event_id = EXCLUDED.connector_sync_event_id, created_at = EXCLUDED.created_at`
  })

  /** Drops what earlier syncs of the target skipped: a sync that finishes has recorded all it skipped itself. */
  const settle = execute({
    Request: Schema.Struct({ organizationId: OrganizationId, targetId: ConnectorTargetId, eventId: ConnectorSyncEventId }),
    execute: ({ eventId, organizationId, targetId }) =>
      sql`DELETE FROM connector_skipped_files
            WHERE organization_id = ${organizationId} AND connector_target_id = ${targetId} AND connector_sync_event_id <> ${eventId}`
  })

  return { record, settle } as const
})

export class SkippedFilesRepository extends Context.Service<SkippedFilesRepository>()("@orgplane/server/connectors/SkippedFilesRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

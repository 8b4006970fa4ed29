/** Storage of config objects and their versions. */
import { SqlClient } from "@effect/sql"
import {
  ConfigObject,
  ConfigObjectId,
  ConfigObjectVersion,
  OrganizationId
} from "@orgplane/schema"
import { Effect, Option } from "effect"

/** A config object row joined with its latest version's columns (prefixed `v_`), as `select` reads it. */
interface JoinedRow {
  readonly [column: string]: unknown
}

/**
 * The row of `select` as the API's resource: trusted (our own tables, written through typed statements); the
 * response schema still checks it on the way out.
 */
export const toConfigObject = (row: JoinedRow): ConfigObject =>
  new ConfigObject(
    {
      id: row.id as ConfigObjectId,
      organizationId: row.organizationId as OrganizationId,
      objectType: row.objectType as ConfigObject["objectType"],
      sourceMode: row.sourceMode as ConfigObject["sourceMode"],
      status: row.status as ConfigObject["status"],
      title: row.title as string,
      description: row.description as string,
      searchText: row.searchText as string,
      currentFileName: row.currentFileName as string | null,
      currentFileExtension: row.currentFileExtension as string | null,
      currentRelativePath: row.currentRelativePath as string | null,
      createdByOrgMembershipId: row.createdByOrgMembershipId as ConfigObject["createdByOrgMembershipId"],
      connectorInstanceId: row.connectorInstanceId as ConfigObject["connectorInstanceId"],
      createdAt: row.createdAt as Date,
      updatedAt: row.updatedAt as Date,
      deletedAt: row.deletedAt as Date | null,
      latestVersion: toVersion(row, "v")
    },
    true
  )

/** A version from its columns; with a `prefix`, from `<prefix>_<column>` (camel-cased by the client). */
export const toVersion = (row: JoinedRow, prefix?: string): ConfigObjectVersion => {
  const get = (name: string) => row[prefix === undefined ? name : prefix + name[0]!.toUpperCase() + name.slice(1)]
  return new ConfigObjectVersion(
    {
      id: get("id") as ConfigObjectVersion["id"],
      configObjectId: get("configObjectId") as ConfigObjectId,
      number: get("number") as number,
      schemaVersion: get("schemaVersion") as string,
      parserMode: get("parserMode") as ConfigObjectVersion["parserMode"],
      normalizedPayloadJson: get("normalizedPayloadJson") as ConfigObjectVersion["normalizedPayloadJson"],
      rawSourceText: get("rawSourceText") as string | null,
      metadata: get("metadata") as ConfigObjectVersion["metadata"],
      createdVia: get("createdVia") as ConfigObjectVersion["createdVia"],
      createdByOrgMembershipId: get("createdByOrgMembershipId") as ConfigObjectVersion["createdByOrgMembershipId"],
      connectorSyncEventId: get("connectorSyncEventId") as string | null,
      sourceRevisionRef: get("sourceRevisionRef") as string | null,
      isDeletedVersion: get("isDeletedVersion") as boolean,
      createdAt: get("createdAt") as Date
    },
    true
  )
}

export class ConfigObjectsRepository extends Effect.Service<ConfigObjectsRepository>()("@orgplane/server/ConfigObjectsRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Version columns of alias `alias`, each named `<prefix>_<column>` when a prefix is given. */
    const versionColumns = (alias: string, prefix?: string) => {
      const as = (column: string) => sql.literal(prefix === undefined ? column : `${prefix}_${column}`)
      const a = sql.literal(alias)
      return sql`${a}.id AS ${as("id")}, ${a}.config_object_id AS ${as("config_object_id")}, ${a}.number AS ${as("number")},
        ${a}.schema_version AS ${as("schema_version")}, ${a}.parser_mode AS ${as("parser_mode")},
        ${a}.normalized_payload_json AS ${as("normalized_payload_json")}, ${a}.raw_source_text AS ${as("raw_source_text")},
        ${a}.metadata AS ${as("metadata")}, ${a}.created_via AS ${as("created_via")},
        ${a}.created_by_membership_id AS ${as("created_by_org_membership_id")},
        ${a}.connector_sync_event_id AS ${as("connector_sync_event_id")}, ${a}.source_revision_ref AS ${as("source_revision_ref")},
        ${a}.is_deleted_version AS ${as("is_deleted_version")}, ${a}.created_at AS ${as("created_at")}`
    }

    /**
     * Config objects (alias `c`) with their latest version: `${select} WHERE c.organization_id = ... AND ...`. The
     * latest version is the one with the highest number (an index lookup per row).
     */
    const select = sql`
      SELECT c.id, c.organization_id, c.object_type, c.source_mode, c.status, c.title, c.description, c.search_text,
             c.current_file_name, c.current_file_extension, c.current_relative_path,
             c.created_by_membership_id AS created_by_org_membership_id, c.connector_instance_id,
             c.created_at, c.updated_at, c.deleted_at, ${versionColumns("v", "v")}
      FROM config_objects c
      JOIN LATERAL (
        SELECT * FROM config_object_versions lv
        WHERE lv.organization_id = c.organization_id AND lv.config_object_id = c.id
        ORDER BY lv.number DESC LIMIT 1
      ) v ON true`

    const find = (organizationId: OrganizationId, id: ConfigObjectId) =>
      sql<JoinedRow>`${select} WHERE c.organization_id = ${organizationId} AND c.id = ${id}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toConfigObject))
      )

    /** The organization's config objects among `ids`, in no particular order (missing ones are left out). */
    const findMany = (organizationId: OrganizationId, ids: ReadonlyArray<ConfigObjectId>) =>
      ids.length === 0
        ? Effect.succeed([] as ReadonlyArray<ConfigObject>)
        : sql<JoinedRow>`${select} WHERE c.organization_id = ${organizationId} AND c.id IN ${sql.in(ids)}`.pipe(
          Effect.map((rows) => rows.map(toConfigObject))
        )

    return { select, versionColumns, find, findMany } as const
  })
}) {}

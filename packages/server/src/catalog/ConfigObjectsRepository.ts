/**
 * Storage of config objects and their versions.
 */
import {
  ConfigObject,
  ConfigObjectId,
  type ConfigObjectListQuery,
  type ConfigObjectStatus,
  ConfigObjectVersion,
  type ConfigObjectVersionId,
  type JsonObject,
  type MembershipId,
  type ObjectType,
  OrganizationId,
  type ParserMode,
  type PluginId,
  type SourceMode,
  type VersionListQuery
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import * as Keyset from "../platform/Keyset.js"
import type { Derived } from "./Parsing.js"

export interface ObjectState {
  readonly objectType: ObjectType
  readonly sourceMode: SourceMode
  readonly status: ConfigObjectStatus
}

export interface PluginCheck {
  readonly id: PluginId
  readonly deleted: boolean
  readonly rank: number
}

export interface ObjectRow extends Derived {
  readonly id: ConfigObjectId
  readonly organizationId: OrganizationId
  readonly objectType: ObjectType
  readonly sourceMode: SourceMode
  readonly currentFileName: string | null
  readonly currentFileExtension: string | null
  readonly currentRelativePath: string | null
  readonly createdByMembershipId: MembershipId | null
  readonly connectorInstanceId: string | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface VersionRow {
  readonly id: ConfigObjectVersionId
  readonly organizationId: OrganizationId
  readonly configObjectId: ConfigObjectId
  readonly number: number
  readonly schemaVersion: string
  readonly parserMode: ParserMode
  readonly normalizedPayloadJson: JsonObject | null
  readonly rawSourceText: string | null
  readonly metadata: JsonObject | null
  readonly createdVia: SourceMode | "system"
  readonly createdByMembershipId: MembershipId | null
  readonly sourceRevisionRef: string | null
  /** The sync that wrote a connector's version. */
  readonly connectorSyncEventId?: string | null | undefined
  readonly isDeletedVersion: boolean
  readonly createdAt: Date
}

/** Config objects newest first: by creation, then id. */
const newestFirst = Keyset.make<ConfigObject>("config_objects", "desc", [
  { column: "c.created_at", value: (object) => object.createdAt.toISOString() },
  { column: "c.id", value: (object) => object.id }
])

/** One object's versions, newest first. */
const versionsNewestFirst = Keyset.make<ConfigObjectVersion>("config_object_versions", "desc", [
  { column: "v.number", value: (version) => String(version.number), compare: (value, sql) => sql`${value}::integer` }
])

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
    { disableChecks: true }
  )

/**
 * A JSON column as `versionColumns` reads it: as text, parsed here, because the SQL client's result-name transform
 * would camel-case the members of a parsed object (a payload's `mcp_servers` would come back as `mcpServers`).
 */
const json = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

/** A version from its columns; with a `prefix`, from `<prefix>_<column>` (camel-cased by the client). */
export const toVersion = (row: JoinedRow, prefix?: string): ConfigObjectVersion => {
  const get = (name: string) => row[prefix === undefined ? name : prefix + name.charAt(0).toUpperCase() + name.slice(1)]
  return new ConfigObjectVersion(
    {
      id: get("id") as ConfigObjectVersion["id"],
      configObjectId: get("configObjectId") as ConfigObjectId,
      number: get("number") as number,
      schemaVersion: get("schemaVersion") as string,
      parserMode: get("parserMode") as ConfigObjectVersion["parserMode"],
      normalizedPayloadJson: json(get("normalizedPayloadJson")) as ConfigObjectVersion["normalizedPayloadJson"],
      rawSourceText: get("rawSourceText") as string | null,
      metadata: json(get("metadata")) as ConfigObjectVersion["metadata"],
      createdVia: get("createdVia") as ConfigObjectVersion["createdVia"],
      createdByOrgMembershipId: get("createdByOrgMembershipId") as ConfigObjectVersion["createdByOrgMembershipId"],
      connectorSyncEventId: get("connectorSyncEventId") as string | null,
      sourceRevisionRef: get("sourceRevisionRef") as string | null,
      isDeletedVersion: get("isDeletedVersion") as boolean,
      createdAt: get("createdAt") as Date
    },
    { disableChecks: true }
  )
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** Version columns of alias `alias`, each named `<prefix>_<column>` when a prefix is given. */
  const versionColumns = (alias: string, prefix?: string) => {
    const as = (column: string) => sql.literal(prefix === undefined ? column : `${prefix}_${column}`)
    const a = sql.literal(alias)
    return sql`${a}.id AS ${as("id")}, ${a}.config_object_id AS ${as("config_object_id")}, ${a}.number AS ${as("number")},
        ${a}.schema_version AS ${as("schema_version")}, ${a}.parser_mode AS ${as("parser_mode")},
        ${a}.normalized_payload_json::text AS ${as("normalized_payload_json")}, ${a}.raw_source_text AS ${as("raw_source_text")},
        ${a}.metadata::text AS ${as("metadata")}, ${a}.created_via AS ${as("created_via")},
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
      Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toConfigObject))
    )

  /** The organization's config objects among `ids`, in no particular order (missing ones are left out). */
  const findMany = (organizationId: OrganizationId, ids: ReadonlyArray<ConfigObjectId>) =>
    ids.length === 0
      ? Effect.succeed([] as ReadonlyArray<ConfigObject>)
      : sql<JoinedRow>`${select} WHERE c.organization_id = ${organizationId} AND c.id IN ${sql.in(ids)}`.pipe(
        Effect.map((rows) => rows.map(toConfigObject))
      )

  /** What a change to one object needs to know of it; none when the organization has no such object. */
  const state = (organizationId: OrganizationId, id: ConfigObjectId) =>
    sql<ObjectState>`SELECT object_type, source_mode, status FROM config_objects
                       WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(Effect.map((rows) => Option.fromNullishOr(rows[0])))

  /**
   * The organization's plugins among `ids` with the caller's `rank` on each (an `Access.rank` fragment over
   * alias `p`) and whether each is deleted, in one statement; each row stays share-locked for the transaction,
   * so none can be deleted before the memberships are written.
   */
  const pluginsForMembership = (organizationId: OrganizationId, ids: ReadonlyArray<PluginId>, rank: Statement.Fragment) =>
    ids.length === 0
      ? Effect.succeed([] as ReadonlyArray<PluginCheck>)
      : sql<PluginCheck>`SELECT p.id, p.deleted_at IS NOT NULL AS deleted, ${rank} AS rank FROM plugins p
                          WHERE p.organization_id = ${organizationId} AND p.id IN ${sql.in(ids)}
                          ORDER BY p.id FOR SHARE OF p`

  const insert = (row: ObjectRow) =>
    sql`INSERT INTO config_objects ${sql.insert({ ...row, status: "active", deletedAt: null })}`

  /** The number the object's next version gets; call it holding the object's row lock. */
  const nextNumber = (organizationId: OrganizationId, id: ConfigObjectId) =>
    sql<{ next: number }>`SELECT COALESCE(max(number), 0) + 1 AS next FROM config_object_versions
                            WHERE organization_id = ${organizationId} AND config_object_id = ${id}`.pipe(
      Effect.flatMap((rows) =>
        rows[0] === undefined ? Effect.die(new Error("an aggregate answered no row")) : Effect.succeed(rows[0].next)
      )
    )

  /** Adds a version; json members go as their text, so nothing transforms their member names on the way in. */
  const insertVersion = (row: VersionRow) =>
    sql`INSERT INTO config_object_versions ${
        sql.insert({
          ...row,
          connectorSyncEventId: row.connectorSyncEventId ?? null,
          normalizedPayloadJson: row.normalizedPayloadJson === null ? null : JSON.stringify(row.normalizedPayloadJson),
          metadata: row.metadata === null ? null : JSON.stringify(row.metadata)
        })
      }`

  /** The content of the object's latest version that is not a deletion record. */
  const lastContent = (organizationId: OrganizationId, id: ConfigObjectId) =>
    sql<JoinedRow>`SELECT ${versionColumns("v")} FROM config_object_versions v
                     WHERE v.organization_id = ${organizationId} AND v.config_object_id = ${id} AND NOT v.is_deleted_version
                     ORDER BY v.number DESC LIMIT 1`.pipe(Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (row) => toVersion(row))))

  const updateDerived = (organizationId: OrganizationId, id: ConfigObjectId, derived: Derived, at: Date) =>
    sql`UPDATE config_objects SET title = ${derived.title}, description = ${derived.description},
            search_text = ${derived.searchText}, updated_at = ${at}
          WHERE organization_id = ${organizationId} AND id = ${id}`

  const setStatus = (organizationId: OrganizationId, id: ConfigObjectId, status: ConfigObjectStatus, at: Date) =>
    sql`UPDATE config_objects SET status = ${status}, deleted_at = ${status === "deleted" ? at : null}, updated_at = ${at}
          WHERE organization_id = ${organizationId} AND id = ${id}`

  /**
   * Every word of `q` as a word or the start of one, over the search text's GIN index. Each word is quoted as a
   * tsquery operand (quotes doubled, backslashes escaped), so no tsquery syntax gets through; Postgres's parser
   * then splits it as it split the indexed text (`deploy-to` becomes the phrase of its parts).
   */
  const matches = (q: string) => {
    const words = q.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word)).slice(0, 32)
    if (words.length === 0) return sql`false`
    const query = words.map((word) => `'${word.replace(/\\/g, "\\\\").replace(/'/g, "''")}':*`).join(" & ")
    return sql`to_tsvector('simple', c.search_text) @@ to_tsquery('simple', ${query})`
  }

  /** A page of the organization's objects that `visible` (an `Access.visible` fragment over alias `c`) lets through. */
  const list = (organizationId: OrganizationId, visible: Statement.Fragment, query: ConfigObjectListQuery) =>
    Keyset.page(newestFirst, query, (page) =>
      sql<JoinedRow>`${select} WHERE ${
          sql.and([
            sql`c.organization_id = ${organizationId}`,
            query.status !== undefined
              ? sql`c.status = ${query.status}`
              : query.includeDeleted === true
              ? sql`true`
              : sql`c.status <> 'deleted'`,
            query.objectType !== undefined ? sql`c.object_type = ${query.objectType}` : sql`true`,
            query.sourceMode !== undefined ? sql`c.source_mode = ${query.sourceMode}` : sql`true`,
            query.connectorInstanceId !== undefined ? sql`c.connector_instance_id = ${query.connectorInstanceId}` : sql`true`,
            query.pluginId !== undefined
              ? sql`EXISTS (SELECT 1 FROM plugin_config_objects fp
                            WHERE fp.organization_id = c.organization_id AND fp.config_object_id = c.id
                              AND fp.plugin_id = ${query.pluginId} AND fp.removed_at IS NULL)`
              : sql`true`,
            query.q !== undefined ? matches(query.q) : sql`true`,
            visible,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`.pipe(Effect.map((rows) => rows.map(toConfigObject))))

  /** A page of one object's versions, newest first; deletion records only with `includeDeleted`. */
  const listVersions = (organizationId: OrganizationId, id: ConfigObjectId, query: VersionListQuery) =>
    // The cursor is bound to the object too: one object's cursor cannot page another's versions.
    Keyset.page(versionsNewestFirst, { ...query, configObjectId: id } as Keyset.PageQuery, (page) =>
      sql<JoinedRow>`SELECT ${versionColumns("v")} FROM config_object_versions v WHERE ${
          sql.and([
            sql`v.organization_id = ${organizationId}`,
            sql`v.config_object_id = ${id}`,
            query.includeDeleted === true ? sql`true` : sql`NOT v.is_deleted_version`,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`.pipe(Effect.map((rows) => rows.map((row) => toVersion(row)))))

  const findVersion = (organizationId: OrganizationId, id: ConfigObjectId, versionId: ConfigObjectVersionId) =>
    sql<JoinedRow>`SELECT ${versionColumns("v")} FROM config_object_versions v
                     WHERE v.organization_id = ${organizationId} AND v.config_object_id = ${id} AND v.id = ${versionId}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (row) => toVersion(row)))
    )

  /**
   * The config objects people made that have a path and are not deleted, with their latest version's content, in one
   * statement (the organization as a document reads them all at once).
   */
  const ownObjects = (organizationId: OrganizationId) =>
    sql<{
      readonly id: ConfigObjectId
      readonly objectType: ObjectType
      readonly status: "active" | "archived"
      readonly relativePath: string
      readonly parserMode: ParserMode
      readonly schemaVersion: string
      readonly rawSourceText: string | null
      readonly metadata: string | null
    }>`SELECT c.id, c.object_type, c.status, c.current_relative_path AS relative_path,
              v.parser_mode, v.schema_version, v.raw_source_text, v.metadata::text AS metadata
         FROM config_objects c
         JOIN LATERAL (
           SELECT parser_mode, schema_version, raw_source_text, metadata FROM config_object_versions
            WHERE organization_id = c.organization_id AND config_object_id = c.id ORDER BY number DESC LIMIT 1
         ) v ON true
        WHERE c.organization_id = ${organizationId} AND c.status <> 'deleted' AND c.source_mode <> 'connector'
          AND c.current_relative_path IS NOT NULL
        ORDER BY c.current_relative_path, c.id`.pipe(
      Effect.map((rows) => rows.map((row) => ({ ...row, metadata: json(row.metadata) as JsonObject | null })))
    )

  return {
    select,
    versionColumns,
    ownObjects,
    find,
    findMany,
    state,
    pluginsForMembership,
    insert,
    nextNumber,
    insertVersion,
    lastContent,
    updateDerived,
    setStatus,
    list,
    listVersions,
    findVersion
  } as const
})

export class ConfigObjectsRepository extends Context.Service<ConfigObjectsRepository>()("@orgplane/server/catalog/ConfigObjectsRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

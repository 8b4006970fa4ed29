/**
 * Storage of plugins and their config-object memberships. A plugin is read with everything its resource carries
 * (member count, marketplaces, manifest) in the same statement, by correlated subqueries over its id: a plugin, or
 * a page of them, costs one statement whatever it holds.
 */
import {
  Conflict,
  type ConfigObjectId,
  type ConnectorInstanceId,
  type ConfigObjectVersionId,
  type MarketplaceId,
  type MembershipId,
  type MembershipListQuery,
  type ObjectType,
  ObjectTypes,
  type OrganizationId,
  Plugin,
  type PluginConfigObject,
  type PluginConfigObjectId,
  type PluginId,
  type PluginListQuery,
  type PluginSourceMetadata
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import * as Keyset from "../platform/Keyset.js"
import { catchUniqueViolation } from "../platform/Sql.js"
import { likePattern } from "../platform/Statements.js"

/**
 * Metadata stored before a member existed, with that member as the repository not giving it (`authorEmail` and
 * `authorUrl` came in 0.3.0): what a response shows and what a sync compares.
 */
export const storedMetadata = (stored: object): PluginSourceMetadata => ({
  version: null,
  author: null,
  authorEmail: null,
  authorUrl: null,
  homepage: null,
  repository: null,
  license: null,
  keywords: [],
  category: null,
  ...stored
})

type Row = { readonly [column: string]: unknown }

/**
 * The columns of plugin row `p` that make a `Plugin` (see `toPlugin`): its own, its active member count, the
 * marketplaces (not deleted) that list it, and its manifest's resources: the active config objects of its active
 * memberships, oldest membership first, each `[id, type, title, latest version id]`.
 *
 * The subqueries are correlated with `p` by default (a page of plugins). A read of one plugin passes its
 * organization and id as values (`of`), so Postgres plans them for that plugin, from the statistics of its own
 * rows, rather than for an average plugin: one plugin of 10,000 config objects makes the average one large enough
 * for a sequential scan of all memberships.
 */
export const pluginColumns = (
  sql: SqlClient.SqlClient,
  of: { readonly organizationId: Statement.Fragment; readonly id: Statement.Fragment } = {
    organizationId: sql`p.organization_id`,
    id: sql`p.id`
  }
): Statement.Fragment =>
  sql`p.id, p.organization_id, p.name, p.description, p.status,
      p.created_by_membership_id AS created_by_org_membership_id, p.created_at, p.updated_at, p.deleted_at,
      (SELECT count(*)::int FROM plugin_config_objects pm
       WHERE pm.organization_id = ${of.organizationId} AND pm.plugin_id = ${of.id} AND pm.removed_at IS NULL) AS member_count,
      COALESCE((SELECT json_agg(json_build_array(pk.id, pk.name) ORDER BY lower(pk.name), pk.id)
                FROM marketplace_plugins pkm
                JOIN marketplaces pk ON pk.organization_id = pkm.organization_id AND pk.id = pkm.marketplace_id
                WHERE pkm.organization_id = ${of.organizationId} AND pkm.plugin_id = ${of.id}
                  AND pkm.removed_at IS NULL AND pk.deleted_at IS NULL), '[]'::json) AS marketplace_refs,
      COALESCE((SELECT json_agg(json_build_array(pc.id, pc.object_type, pc.title, pcv.id) ORDER BY pcm.created_at, pcm.id)
                FROM plugin_config_objects pcm
                JOIN config_objects pc ON pc.organization_id = pcm.organization_id AND pc.id = pcm.config_object_id
                JOIN LATERAL (SELECT lv.id FROM config_object_versions lv
                              WHERE lv.organization_id = pc.organization_id AND lv.config_object_id = pc.id
                              ORDER BY lv.number DESC LIMIT 1) pcv ON true
                WHERE pcm.organization_id = ${of.organizationId} AND pcm.plugin_id = ${of.id}
                  AND pcm.removed_at IS NULL AND pc.status = 'active'), '[]'::json) AS resources,
      p.source_metadata::text AS source_metadata,
      COALESCE((SELECT json_agg(json_build_array(sk.path, sk.reason) ORDER BY sk.path)
                FROM (SELECT sf.path, sf.reason FROM connector_skipped_files sf
                      JOIN connector_mappings sm ON sm.organization_id = sf.organization_id AND sm.id = sf.connector_mapping_id
                      WHERE sf.organization_id = ${of.organizationId} AND sm.organization_id = ${of.organizationId}
                        AND sm.plugin_id = ${of.id}
                      ORDER BY sf.path LIMIT 100) sk), '[]'::json) AS skipped_files`

/** A row of `pluginColumns` as the API's resource (trusted: the response schema still checks it on the way out). */
export const toPlugin = (row: Row): Plugin => {
  const id = row.id as PluginId
  const name = row.name as string
  const description = row.description as string
  const status = row.status as Plugin["status"]
  const resources = (row.resources as ReadonlyArray<[ConfigObjectId, ObjectType, string, ConfigObjectVersionId]>).map(
    ([configObjectId, objectType, title, versionId]) => ({ configObjectId, objectType, title, versionId })
  )
  const contributions = ObjectTypes.flatMap((objectType) => {
    const configObjectIds = resources.filter((resource) => resource.objectType === objectType).map((resource) => resource.configObjectId)
    return configObjectIds.length === 0 ? [] : [{ objectType, configObjectIds }]
  })
  return new Plugin(
    {
      id,
      organizationId: row.organizationId as OrganizationId,
      name,
      description,
      status,
      createdByOrgMembershipId: row.createdByOrgMembershipId as MembershipId | null,
      createdAt: row.createdAt as Date,
      updatedAt: row.updatedAt as Date,
      deletedAt: row.deletedAt as Date | null,
      memberCount: row.memberCount as number,
      // As text: the result-name transform would camel-case the members of a parsed object.
      sourceMetadata: row.sourceMetadata === null ? null : storedMetadata(JSON.parse(row.sourceMetadata as string)),
      skippedFiles: (row.skippedFiles as ReadonlyArray<[string, string]>).map(([path, reason]) => ({ path, reason })),
      marketplaces: (row.marketplaceRefs as ReadonlyArray<[MarketplaceId, string]>).map(([id, name]) => ({ id, name })),
      extension: {
        id,
        name,
        description,
        manifest: {
          schemaVersion: 1,
          id,
          name,
          description,
          source: { trusted: true, reference: `orgplane:plugin/${id}` },
          resources,
          contributions,
          setup: {},
          lifecycle: { status, updatedAt: row.updatedAt as Date }
        }
      }
    },
    { disableChecks: true }
  )
}

/** By name (case-insensitive), then id. */
const byName = Keyset.make<Plugin>("plugins", "asc", [
  { column: "lower(p.name)", value: (plugin) => plugin.name, compare: (value, sql) => sql`lower(${value})` },
  { column: "p.id", value: (plugin) => plugin.id }
])

/** A plugin's config-object membership, without its config object. */
export type MembershipRow = Omit<PluginConfigObject, "configObject">

/** Memberships in the order they were added. */
const byAddition = Keyset.make<MembershipRow>("plugin_config_objects", "asc", [
  { column: "pc.created_at", value: (row) => row.createdAt.toISOString() },
  { column: "pc.id", value: (row) => row.id }
])

export const pluginExists = (name: string) =>
  new Conflict({ error: "plugin_exists", message: `The organization already has a plugin named "${name}".` })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = pluginColumns(sql)

  /** One plugin with the caller's rank on it (`rank`: an `Access.rank` expression over alias `p`). */
  const one = (organizationId: OrganizationId, id: PluginId) => pluginColumns(sql, { organizationId: sql`${organizationId}`, id: sql`${id}` })

  const view = (organizationId: OrganizationId, id: PluginId, rank: Statement.Fragment) =>
    sql<Row>`SELECT ${rank} AS rank, ${one(organizationId, id)} FROM plugins p WHERE p.organization_id = ${organizationId} AND p.id = ${id}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (row) => ({ rank: row.rank as number, plugin: toPlugin(row) })))
    )

  const find = (organizationId: OrganizationId, id: PluginId) =>
    sql<Row>`SELECT ${one(organizationId, id)} FROM plugins p WHERE p.organization_id = ${organizationId} AND p.id = ${id}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toPlugin))
    )

  /** The plugins the `visible` expression (over alias `p`) lets through, filtered, by name. */
  const list = (organizationId: OrganizationId, query: PluginListQuery, visible: Statement.Fragment) =>
    Keyset.page(byName, query, (page) =>
      sql<Row>`SELECT ${columns} FROM plugins p WHERE ${
          sql.and([
            sql`p.organization_id = ${organizationId}`,
            query.status !== undefined
              ? sql`p.status = ${query.status}`
              : query.includeDeleted === true
              ? sql`true`
              : sql`p.deleted_at IS NULL`,
            query.q !== undefined
              ? sql`(p.name ILIKE ${likePattern(query.q)} OR p.description ILIKE ${likePattern(query.q)})`
              : sql`true`,
            query.marketplaceId !== undefined
              ? sql`EXISTS (SELECT 1 FROM marketplace_plugins fm WHERE fm.organization_id = p.organization_id
                            AND fm.plugin_id = p.id AND fm.marketplace_id = ${query.marketplaceId} AND fm.removed_at IS NULL)`
              : sql`true`,
            visible,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`.pipe(Effect.map((rows) => rows.map(toPlugin))))

  const insert = (row: {
    readonly id: PluginId
    readonly organizationId: OrganizationId
    readonly name: string
    readonly description: string
    readonly createdByMembershipId: MembershipId | null
    readonly at: Date
    /**
     * For a plugin a discovery apply makes: its instance and candidate key. Its name is then unique among the
     * instance's plugins, not the organization's own (migration 0045).
     */
    readonly candidate?: { readonly connectorInstanceId: ConnectorInstanceId; readonly key: string } | undefined
  }) =>
    sql`INSERT INTO plugins ${
        sql.insert({
          id: row.id,
          organizationId: row.organizationId,
          name: row.name,
          description: row.description,
          status: "active",
          createdByMembershipId: row.createdByMembershipId,
          createdAt: row.at,
          updatedAt: row.at,
          ...(row.candidate === undefined
            ? {}
            : { connectorInstanceId: row.candidate.connectorInstanceId, connectorCandidateKey: row.candidate.key })
        })
      }`.pipe(catchUniqueViolation(() => pluginExists(row.name)))

  /** What the repository says of a plugin a discovery apply made (see `PluginSourceMetadata`). */
  const setSourceMetadata = (organizationId: OrganizationId, id: PluginId, metadata: PluginSourceMetadata | null) =>
    sql`UPDATE plugins SET source_metadata = ${metadata === null ? null : JSON.stringify(metadata)}::jsonb
          WHERE organization_id = ${organizationId} AND id = ${id}`

  /** The plugin's name and status, locking its row for the rest of the transaction; none when the organization has no such plugin. */
  const lock = (organizationId: OrganizationId, id: PluginId) =>
    sql<{ readonly name: string; readonly status: Plugin["status"] }>`
        SELECT name, status FROM plugins WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`.pipe(
      Effect.map((rows) => Option.fromNullishOr(rows[0]))
    )

  /** Changes name and/or description of a plugin that is not deleted. */
  const update = (
    organizationId: OrganizationId,
    id: PluginId,
    input: { readonly name?: string | undefined; readonly description?: string | undefined },
    at: Date
  ) =>
    sql`UPDATE plugins SET ${
        sql.update({
          ...(input.name === undefined ? {} : { name: input.name }),
          ...(input.description === undefined ? {} : { description: input.description }),
          updatedAt: at
        })
      } WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(catchUniqueViolation(() => pluginExists(input.name ?? "")))

  /** Makes the plugin active or archived (no longer deleted); a name another plugin took meanwhile is a 409. */
  const setStatus = (organizationId: OrganizationId, id: PluginId, name: string, status: "active" | "archived", at: Date) =>
    sql`UPDATE plugins SET status = ${status}, updated_at = ${at}, deleted_at = NULL
          WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(catchUniqueViolation(() => pluginExists(name)))

  /** Soft-deletes the plugin. */
  const markDeleted = (organizationId: OrganizationId, id: PluginId, at: Date) =>
    sql`UPDATE plugins SET status = 'deleted', updated_at = ${at}, deleted_at = ${at}
          WHERE organization_id = ${organizationId} AND id = ${id}`

  const touch = (organizationId: OrganizationId, id: PluginId, at: Date) =>
    sql`UPDATE plugins SET updated_at = ${at} WHERE organization_id = ${organizationId} AND id = ${id}`

  const membershipColumns = sql`pc.id, pc.plugin_id, pc.config_object_id, pc.membership_source, pc.connector_mapping_id,
      pc.created_by_membership_id AS created_by_org_membership_id, pc.created_at, pc.removed_at`

  /** A page of the plugin's config-object memberships, in the order they were added. */
  const listMemberships = (organizationId: OrganizationId, id: PluginId, query: MembershipListQuery) =>
    Keyset.page(byAddition, query, (page) =>
      sql<MembershipRow>`SELECT ${membershipColumns} FROM plugin_config_objects pc WHERE ${
          sql.and([
            sql`pc.organization_id = ${organizationId}`,
            sql`pc.plugin_id = ${id}`,
            query.includeRemoved === true ? sql`true` : sql`pc.removed_at IS NULL`,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`)

  const findMembership = (organizationId: OrganizationId, id: PluginConfigObjectId) =>
    sql<MembershipRow>`SELECT ${membershipColumns} FROM plugin_config_objects pc
                         WHERE pc.organization_id = ${organizationId} AND pc.id = ${id}`.pipe(
      Effect.map((rows) => Option.fromNullishOr(rows[0]))
    )

  /**
   * The plugins people made that are not deleted, with their names, descriptions and status (organization as code):
   * plugins a connector syncs are its repository's.
   */
  const ownPlugins = (organizationId: OrganizationId) =>
    sql<{ readonly id: PluginId; readonly name: string; readonly description: string; readonly status: "active" | "archived" }>`
        SELECT id, name, description, status FROM plugins
        WHERE organization_id = ${organizationId} AND deleted_at IS NULL AND connector_instance_id IS NULL
        ORDER BY lower(name), id`

  /** Every config object each plugin holds now, in one statement (the organization as a document reads them all). */
  const heldConfigObjects = (organizationId: OrganizationId) =>
    sql<{ readonly pluginId: PluginId; readonly configObjectId: ConfigObjectId }>`
        SELECT plugin_id, config_object_id FROM plugin_config_objects
        WHERE organization_id = ${organizationId} AND removed_at IS NULL`

  /** The plugins connectors sync, each with its connector, in one statement. */
  const syncedPlugins = (organizationId: OrganizationId) =>
    sql<{ readonly id: PluginId; readonly name: string; readonly connectorInstanceId: ConnectorInstanceId }>`
        SELECT id, name, connector_instance_id FROM plugins
        WHERE organization_id = ${organizationId} AND deleted_at IS NULL AND connector_instance_id IS NOT NULL`

  return { view, find, list, insert, setSourceMetadata, lock, update, setStatus, markDeleted, touch, listMemberships, findMembership, ownPlugins, heldConfigObjects, syncedPlugins } as const
})

export class PluginsRepository extends Context.Service<PluginsRepository>()("@orgplane/server/catalog/PluginsRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

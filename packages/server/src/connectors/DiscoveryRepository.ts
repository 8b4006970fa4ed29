/**
 * Storage of the discovery cache (one result and one tree per target and commit, see migration 0005) and of what a
 * discovery apply writes beyond the catalog's own rows: the plugins and the marketplace an instance created.
 */
import { SqlClient } from "@effect/sql"
import {
  type ConnectorInstanceId,
  type ConnectorMappingId,
  type ConnectorSyncEventId,
  type ConnectorTargetId,
  DiscoveredMarketplace,
  DiscoveredPlugin,
  DiscoveryStep,
  type MarketplaceId,
  type ObjectType,
  type OrganizationId,
  type PluginId,
  RepositoryClassification,
  TreeEntry,
  TreeSummary
} from "@orgplane/schema"
import { Effect, Option, Schema } from "effect"
import * as Keyset from "../platform/Keyset.js"
import { first } from "../platform/Sql.js"
import type { Entry } from "./Discovery.js"

/** What is kept of a discovery: everything of `DiscoveryResult` but the instance and target, read fresh each time. */
export const StoredDiscovery = Schema.Struct({
  classification: RepositoryClassification,
  discoveredPlugins: Schema.Array(DiscoveredPlugin),
  marketplace: Schema.NullOr(DiscoveredMarketplace),
  steps: Schema.Array(DiscoveryStep),
  treeSummary: TreeSummary,
  warnings: Schema.Array(Schema.String)
})
export type StoredDiscovery = typeof StoredDiscovery.Type

const encodeStored = Schema.encodeSync(Schema.parseJson(StoredDiscovery))
const decodeStored = Schema.decodeUnknownOption(Schema.parseJson(StoredDiscovery))

/** Revisions of one target kept in the cache: the newest few, so that a page of a just-moved branch still reads. */
export const keptRevisions = 3

/** Tree entries per INSERT (about 1.5 MB of JSON for typical paths). */
const insertBatch = 10_000

/** Code-point order, which is the byte order of UTF-8 and so Postgres's `COLLATE "C"`. */
export const byteOrder = (a: string, b: string): number => {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i)!
    const y = b.codePointAt(i)!
    if (x !== y) return x - y
    if (x > 0xffff) i++
  }
  return a.length - b.length
}

/**
 * The smallest text after every text starting with `prefix`, in code-point order: the prefix with its last code
 * point incremented (dropping trailing maximal ones); undefined when there is none (the prefix is all U+10FFFF).
 */
export const prefixEnd = (prefix: string): string | undefined => {
  const points = [...prefix]
  while (points.length > 0) {
    const last = points.pop()!.codePointAt(0)!
    if (last < 0x10ffff) {
      // The surrogates are not characters: skip over them.
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1
      return points.join("") + String.fromCodePoint(next)
    }
  }
  return undefined
}

interface PositionedEntry {
  readonly position: number
  readonly entry: TreeEntry
}

/** Tree entries in path order; the cursor is the position (short, whatever the path's length). */
const byPosition = Keyset.make<PositionedEntry>("connector_tree_entries", "asc", [
  { column: "e.position", value: (row) => String(row.position), compare: (value, sql) => sql`${value}::int` }
])

export class DiscoveryRepository extends Effect.Service<DiscoveryRepository>()("@orgplane/server/DiscoveryRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The stored discovery of a target at a commit; none when missing, or stored in a form this server no longer reads. */
    const find = (organizationId: OrganizationId, targetId: ConnectorTargetId, revision: string) =>
      sql<{ resultJson: string }>`SELECT result_json::text AS result_json FROM connector_discoveries
        WHERE organization_id = ${organizationId} AND connector_target_id = ${targetId} AND source_revision_ref = ${revision}`.pipe(
        Effect.map((rows) => Option.flatMap(first(rows), (row) => decodeStored(row.resultJson)))
      )

    /**
     * Stores a discovery and its tree (sorted here into path order), then forgets all but the newest
     * `keptRevisions` of the target. A discovery stored meanwhile by a concurrent request is kept as it is (the same
     * commit gives the same result); one this server cannot read any more is replaced.
     */
    const store = (input: {
      readonly organizationId: OrganizationId
      readonly targetId: ConnectorTargetId
      readonly revision: string
      readonly result: StoredDiscovery
      readonly entries: ReadonlyArray<Entry>
      readonly at: Date
    }) =>
      Effect.gen(function*() {
        const { organizationId, targetId, revision } = input
        const existing = yield* sql<{ resultJson: string }>`SELECT result_json::text AS result_json FROM connector_discoveries
          WHERE organization_id = ${organizationId} AND connector_target_id = ${targetId} AND source_revision_ref = ${revision}
          FOR UPDATE`
        if (existing.length > 0) {
          if (Option.isSome(decodeStored(existing[0].resultJson))) return
          yield* sql`DELETE FROM connector_discoveries
            WHERE organization_id = ${organizationId} AND connector_target_id = ${targetId} AND source_revision_ref = ${revision}`
        }
        const inserted = yield* sql`INSERT INTO connector_discoveries ${
          sql.insert({
            organizationId,
            connectorTargetId: targetId,
            sourceRevisionRef: revision,
            resultJson: encodeStored(input.result),
            createdAt: input.at
          })
        } ON CONFLICT (connector_target_id, source_revision_ref) DO NOTHING RETURNING source_revision_ref`
        if (inserted.length === 0) return
        const sorted = [...input.entries].sort((a, b) => byteOrder(a.path, b.path))
        // One JSON parameter per batch, not eight parameters per row: a large tree is a few statements.
        for (let start = 0; start < sorted.length; start += insertBatch) {
          const rows = sorted.slice(start, start + insertBatch).map((entry, i) => ({
            position: start + i,
            path: entry.path,
            kind: entry.type,
            sha: entry.sha,
            size: entry.size
          }))
          yield* sql`INSERT INTO connector_tree_entries (organization_id, connector_target_id, source_revision_ref, position, path, kind, sha, size)
            SELECT ${organizationId}, ${targetId}, ${revision}, r.position, r.path, r.kind, r.sha, r.size
            FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(position integer, path text, kind text, sha text, size bigint)`
        }
        yield* sql`DELETE FROM connector_discoveries d
          WHERE d.organization_id = ${organizationId} AND d.connector_target_id = ${targetId}
            AND d.source_revision_ref NOT IN (
              SELECT k.source_revision_ref FROM connector_discoveries k
              WHERE k.organization_id = ${organizationId} AND k.connector_target_id = ${targetId}
              ORDER BY k.created_at DESC, k.source_revision_ref LIMIT ${keptRevisions})`
      })

    /** The whole stored tree of a target at a commit, in path order. */
    const entries = (organizationId: OrganizationId, targetId: ConnectorTargetId, revision: string) =>
      sql<{ path: string; kind: "blob" | "tree"; sha: string; size: string | number }>`
        SELECT path, kind, sha, size FROM connector_tree_entries
        WHERE organization_id = ${organizationId} AND connector_target_id = ${targetId} AND source_revision_ref = ${revision}
        ORDER BY position`.pipe(
        Effect.map((rows) => rows.map((row): Entry => ({ path: row.path, type: row.kind, sha: row.sha, size: Number(row.size) })))
      )

    /**
     * A page of the stored tree, optionally of the paths starting with `prefix`. Positions follow path order, so a
     * prefix is one run of positions: its bounds come from the path index, and the page from the primary key.
     */
    const page = (
      organizationId: OrganizationId,
      targetId: ConnectorTargetId,
      revision: string,
      query: { readonly cursor?: string | undefined; readonly limit?: number | undefined; readonly prefix?: string | undefined }
    ) => {
      const scope = sql`organization_id = ${organizationId} AND connector_target_id = ${targetId} AND source_revision_ref = ${revision}`
      const firstAtOrAfter = (path: string) =>
        sql`(SELECT position FROM connector_tree_entries WHERE ${scope} AND path COLLATE "C" >= ${path}
             ORDER BY path COLLATE "C" LIMIT 1)`
      const end = query.prefix === undefined ? undefined : prefixEnd(query.prefix)
      const range = sql.and([
        query.prefix === undefined ? sql`true` : sql`e.position >= ${firstAtOrAfter(query.prefix)}`,
        end === undefined ? sql`true` : sql`e.position < coalesce(${firstAtOrAfter(end)}, 2147483647)`
      ])
      // The cursor is bound to the commit and the prefix: a cursor of another listing is a 400 on `cursor`.
      const binding = { cursor: query.cursor, limit: query.limit, prefix: query.prefix, target: targetId, revision }
      return Keyset.page(byPosition, binding, (page) =>
        sql<{ position: number; path: string; kind: "blob" | "tree"; sha: string; size: string | number }>`
          SELECT e.position, e.path, e.kind, e.sha, e.size FROM connector_tree_entries e
          WHERE ${scope} AND ${range} AND ${page.after}
          ORDER BY ${page.orderBy} LIMIT ${page.fetch}`.pipe(
          Effect.map((rows) =>
            rows.map((row): PositionedEntry => ({
              position: row.position,
              entry: new TreeEntry({ id: row.path, kind: row.kind, path: row.path, sha: row.sha, size: Number(row.size) }, true)
            }))
          )
        )).pipe(Effect.map(({ items, nextCursor }) => ({ items: items.map((row) => row.entry), nextCursor })))
    }

    // Apply

    /** The live plugin the instance created for a candidate, locked; none when it has none (or deleted it). */
    const pluginOfCandidate = (organizationId: OrganizationId, instanceId: ConnectorInstanceId, key: string) =>
      sql<{ id: PluginId }>`SELECT id FROM plugins
        WHERE organization_id = ${organizationId} AND connector_instance_id = ${instanceId}
          AND connector_candidate_key = ${key} AND deleted_at IS NULL FOR UPDATE`.pipe(Effect.map((rows) => Option.map(first(rows), (row) => row.id)))

    const markPluginOfCandidate = (organizationId: OrganizationId, pluginId: PluginId, instanceId: ConnectorInstanceId, key: string) =>
      sql`UPDATE plugins SET connector_instance_id = ${instanceId}, connector_candidate_key = ${key}
          WHERE organization_id = ${organizationId} AND id = ${pluginId}`

    /** Whether a live plugin of this instance holds the name (compared as the catalog does, ignoring case). */
    const pluginNameHeldBy = (organizationId: OrganizationId, name: string, instanceId: ConnectorInstanceId) =>
      sql<{ held: boolean }>`SELECT EXISTS (SELECT 1 FROM plugins
        WHERE organization_id = ${organizationId} AND lower(name) = lower(${name}) AND deleted_at IS NULL
          AND connector_instance_id = ${instanceId}) AS held`.pipe(Effect.map((rows) => rows[0]?.held === true))

    /** The live marketplace the instance created, locked; none when it has none. */
    const marketplaceOfInstance = (organizationId: OrganizationId, instanceId: ConnectorInstanceId) =>
      sql<{ id: MarketplaceId }>`SELECT id FROM marketplaces
        WHERE organization_id = ${organizationId} AND connector_instance_id = ${instanceId} AND deleted_at IS NULL
        ORDER BY created_at, id LIMIT 1 FOR UPDATE`.pipe(Effect.map((rows) => Option.map(first(rows), (row) => row.id)))

    const markMarketplaceOfInstance = (organizationId: OrganizationId, marketplaceId: MarketplaceId, instanceId: ConnectorInstanceId) =>
      sql`UPDATE marketplaces SET connector_instance_id = ${instanceId}
          WHERE organization_id = ${organizationId} AND id = ${marketplaceId}`

    /** The mapping of a target with this selector and object type (unique), if any, and whether its plugin is deleted. */
    const findMapping = (organizationId: OrganizationId, targetId: ConnectorTargetId, selector: string, objectType: ObjectType) =>
      sql<{ id: ConnectorMappingId; pluginDeleted: boolean }>`
        SELECT m.id, coalesce(p.deleted_at IS NOT NULL, false) AS plugin_deleted FROM connector_mappings m
        LEFT JOIN plugins p ON p.organization_id = m.organization_id AND p.id = m.plugin_id
        WHERE m.organization_id = ${organizationId} AND m.connector_target_id = ${targetId}
          AND m.selector = ${selector} AND m.object_type = ${objectType}`.pipe(Effect.map(first))

    const repointMapping = (organizationId: OrganizationId, id: ConnectorMappingId, pluginId: PluginId, at: Date) =>
      sql`UPDATE connector_mappings SET plugin_id = ${pluginId}, auto_add_to_plugin = true, updated_at = ${at}
          WHERE organization_id = ${organizationId} AND id = ${id}`

    // Auto-import (see migration 0007)

    /** Locks the instance's row for the rest of the transaction (no access check: for the sync, which acts for the system). */
    const lockInstance = (organizationId: OrganizationId, instanceId: ConnectorInstanceId) =>
      sql`SELECT id FROM connector_instances WHERE organization_id = ${organizationId} AND id = ${instanceId} FOR UPDATE`

    /** Whether a discovery was applied to the instance: it has a live plugin made for a candidate. */
    const applied = (organizationId: OrganizationId, instanceId: ConnectorInstanceId) =>
      sql<{ applied: boolean }>`SELECT EXISTS (SELECT 1 FROM plugins
        WHERE organization_id = ${organizationId} AND connector_instance_id = ${instanceId}
          AND connector_candidate_key IS NOT NULL AND deleted_at IS NULL) AS applied`.pipe(Effect.map((rows) => rows[0]?.applied === true))

    /** The candidate keys the instance has decided on (offered by an apply or imported by a sync). */
    const knownKeys = (organizationId: OrganizationId, instanceId: ConnectorInstanceId) =>
      sql<{ candidateKey: string }>`SELECT candidate_key FROM connector_candidate_keys
        WHERE organization_id = ${organizationId} AND connector_instance_id = ${instanceId}`.pipe(
        Effect.map((rows) => new Set(rows.map((row) => row.candidateKey)))
      )

    /** Records keys as decided; a key recorded before keeps its first record. */
    const recordKeys = (
      organizationId: OrganizationId,
      instanceId: ConnectorInstanceId,
      keys: ReadonlyArray<string>,
      syncEventId: ConnectorSyncEventId | null,
      at: Date
    ) =>
      keys.length === 0 ? Effect.void : sql`INSERT INTO connector_candidate_keys ${
        sql.insert(keys.map((candidateKey) => ({
          organizationId,
          connectorInstanceId: instanceId,
          candidateKey,
          connectorSyncEventId: syncEventId,
          createdAt: at
        })))
      } ON CONFLICT (organization_id, connector_instance_id, candidate_key) DO NOTHING`.pipe(Effect.asVoid)

    /** The keys a sync event imported, in key order. */
    const importedBy = (organizationId: OrganizationId, instanceId: ConnectorInstanceId, syncEventId: ConnectorSyncEventId) =>
      sql<{ candidateKey: string }>`SELECT candidate_key FROM connector_candidate_keys
        WHERE organization_id = ${organizationId} AND connector_instance_id = ${instanceId}
          AND connector_sync_event_id = ${syncEventId} ORDER BY candidate_key COLLATE "C"`.pipe(
        Effect.map((rows) => rows.map((row) => row.candidateKey))
      )

    return {
      find,
      store,
      entries,
      page,
      pluginOfCandidate,
      markPluginOfCandidate,
      pluginNameHeldBy,
      marketplaceOfInstance,
      markMarketplaceOfInstance,
      findMapping,
      repointMapping,
      lockInstance,
      applied,
      knownKeys,
      recordKeys,
      importedBy
    } as const
  })
}) {}

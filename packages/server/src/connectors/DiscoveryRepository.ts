/**
 * Storage of the discovery cache (one result and one tree per target and commit, see migration 0005) and of what a
 * discovery apply writes beyond the catalog's own rows: the plugins and the marketplace an instance created.
 */
import * as SqlClient from "effect/sql/SqlClient"
import {
  CatalogStatus,
  ConnectorInstanceId,
  ConnectorMappingId,
  ConnectorSyncEventId,
  ConnectorTargetId,
  DiscoveredMarketplace,
  DiscoveredPlugin,
  DiscoveryStep,
  MarketplaceId,
  ObjectType,
  OrganizationId,
  PluginId,
  RepositoryClassification,
  TreeEntry,
  TreeSummary
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Keyset from "../platform/Keyset.js"
import { DateColumn, execute, findAll, findOne, single, trusted, trustedClassRow, withColumns } from "../platform/Statements.js"
import type { Entry } from "./RepositoryTree.js"

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

const encodeStored = Schema.encodeSync(Schema.fromJsonString(StoredDiscovery))
const decodeStored = Schema.decodeUnknownOption(Schema.fromJsonString(StoredDiscovery))

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

/** A page's entry with its position in the tree. */
const PositionedEntry = withColumns(trustedClassRow(TreeEntry), { position: Schema.Int })
type PositionedEntry = typeof PositionedEntry.Type

/** Tree entries in path order; the cursor is the position (short, whatever the path's length). */
const byPosition = Keyset.make<PositionedEntry>("connector_tree_entries", "asc", [
  { column: "e.position", value: (entry) => String(entry.position), compare: (value, sql) => sql`${value}::int` }
])

/** One stored commit of a target. */
const AtRevision = Schema.Struct({ organizationId: OrganizationId, targetId: ConnectorTargetId, revision: Schema.String })
const ResultText = Schema.Struct({ resultJson: Schema.String })

/** A tree entry as `connector_tree_entries` holds it: its position in path order, `kind` for the entry's type. */
interface TreeRow {
  readonly position: number
  readonly path: string
  readonly kind: Entry["type"]
  readonly sha: string
  readonly size: number
  readonly executable: boolean
}

/** A stored tree entry as read: `executable` is null for one stored before entries kept their mode (migration 0048). */
type StoredEntry = Omit<Entry, "executable"> & { readonly executable: boolean | null }

const OfInstance = Schema.Struct({ organizationId: OrganizationId, instanceId: ConnectorInstanceId })
const Held = Schema.Struct({ held: Schema.Boolean })

/** A plugin an instance made for a discovery candidate, as a sync that follows the repository reads it. */
const OwnPlugin = Schema.Struct({
  id: PluginId,
  name: Schema.String,
  status: CatalogStatus,
  description: Schema.String,
  key: Schema.String,
  candidateName: Schema.NullOr(Schema.String),
  /** `source_metadata` as JSON text, compared by the sync with what the repository says now. */
  sourceMetadata: Schema.NullOr(Schema.String),
  left: Schema.Boolean
})
export type OwnPlugin = typeof OwnPlugin.Type

const makeDiscoveryRepository = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const atRevision = ({ organizationId, revision, targetId }: typeof AtRevision.Encoded) =>
    sql`organization_id = ${organizationId} AND connector_target_id = ${targetId} AND source_revision_ref = ${revision}`

  const findRow = findOne({
    Request: AtRevision,
    Result: ResultText,
    execute: (at) => sql`SELECT result_json::text AS result_json FROM connector_discoveries WHERE ${atRevision(at)}`
  })
  /** The stored discovery of a target at a commit; none when missing, or stored in a form this server no longer reads. */
  const find = (organizationId: OrganizationId, targetId: ConnectorTargetId, revision: string) =>
    Effect.map(findRow({ organizationId, targetId, revision }), Option.flatMap((row) => decodeStored(row.resultJson)))

  const lockStored = findOne({
    Request: AtRevision,
    Result: ResultText,
    execute: (at) => sql`SELECT result_json::text AS result_json FROM connector_discoveries WHERE ${atRevision(at)} FOR UPDATE`
  })
  const deleteStored = execute({
    Request: AtRevision,
    execute: (at) => sql`DELETE FROM connector_discoveries WHERE ${atRevision(at)}`
  })
  const insertStored = findOne({
    Request: Schema.Struct({ ...AtRevision.fields, resultJson: Schema.String, at: DateColumn }),
    Result: Schema.Struct({ sourceRevisionRef: Schema.String }),
    execute: ({ at, organizationId, resultJson, revision, targetId }) =>
      sql`INSERT INTO connector_discoveries ${
          sql.insert({ organizationId, connectorTargetId: targetId, sourceRevisionRef: revision, resultJson, createdAt: at })
        } ON CONFLICT (connector_target_id, source_revision_ref) DO NOTHING RETURNING source_revision_ref`
  })
  // One JSON parameter per batch, not eight parameters per row: a large tree is a few statements.
  const insertEntries = execute({
    Request: Schema.Struct({ ...AtRevision.fields, rows: trusted<ReadonlyArray<TreeRow>>() }),
    execute: ({ organizationId, revision, rows, targetId }) =>
      sql`INSERT INTO connector_tree_entries (organization_id, connector_target_id, source_revision_ref, position, path, kind, sha, size, executable)
            SELECT ${organizationId}, ${targetId}, ${revision}, r.position, r.path, r.kind, r.sha, r.size, r.executable
            FROM json_to_recordset(${JSON.stringify(rows)}::json)
              AS r(position integer, path text, kind text, sha text, size bigint, executable boolean)`
  })
  const forgetOld = execute({
    Request: Schema.Struct({ organizationId: OrganizationId, targetId: ConnectorTargetId }),
    execute: ({ organizationId, targetId }) =>
      sql`DELETE FROM connector_discoveries d
            WHERE d.organization_id = ${organizationId} AND d.connector_target_id = ${targetId}
              AND d.source_revision_ref NOT IN (
                SELECT k.source_revision_ref FROM connector_discoveries k
                WHERE k.organization_id = ${organizationId} AND k.connector_target_id = ${targetId}
                ORDER BY k.created_at DESC, k.source_revision_ref LIMIT ${keptRevisions})`
  })

  /**
   * Stores a discovery and its tree (sorted here into path order), then forgets all but the newest
   * `keptRevisions` of the target. A discovery stored meanwhile by a concurrent request is kept as it is (the same
   * commit gives the same result); one this server cannot read any more is replaced.
   */
  const store = Effect.fn("DiscoveryRepository.store")(function*(input: {
    readonly organizationId: OrganizationId
    readonly targetId: ConnectorTargetId
    readonly revision: string
    readonly result: StoredDiscovery
    readonly entries: ReadonlyArray<Entry>
    readonly at: Date
  }) {
    const at = { organizationId: input.organizationId, targetId: input.targetId, revision: input.revision }
    const existing = yield* lockStored(at)
    if (Option.isSome(existing)) {
      if (Option.isSome(decodeStored(existing.value.resultJson))) return
      yield* deleteStored(at)
    }
    const inserted = yield* insertStored({ ...at, resultJson: encodeStored(input.result), at: input.at })
    if (Option.isNone(inserted)) return
    const sorted = [...input.entries].sort((a, b) => byteOrder(a.path, b.path))
    for (let start = 0; start < sorted.length; start += insertBatch) {
      const rows = sorted.slice(start, start + insertBatch).map((entry, i): TreeRow => ({
        position: start + i,
        path: entry.path,
        kind: entry.type,
        sha: entry.sha,
        size: entry.size,
        executable: entry.executable === true
      }))
      yield* insertEntries({ ...at, rows })
    }
    yield* forgetOld(at)
  })

  const entriesRows = findAll({
    Request: AtRevision,
    Result: trusted<StoredEntry>(),
    execute: (at) =>
      sql`SELECT path, kind AS type, sha, size::float8 AS size, executable FROM connector_tree_entries
            WHERE ${atRevision(at)} ORDER BY position`
  })
  const asEntries = (rows: ReadonlyArray<StoredEntry>): ReadonlyArray<Entry> =>
    rows.map(({ executable, ...entry }) => (executable === true ? { ...entry, executable: true as const } : entry))
  /** The whole stored tree of a target at a commit, in path order. */
  const entries = (organizationId: OrganizationId, targetId: ConnectorTargetId, revision: string) =>
    Effect.map(entriesRows({ organizationId, targetId, revision }), asEntries)
  /**
   * The stored tree with its files' modes: none for a tree stored before entries kept them (migration 0048), which
   * the sync then reads from the code host again.
   */
  const entriesWithModes = (organizationId: OrganizationId, targetId: ConnectorTargetId, revision: string) =>
    Effect.map(entriesRows({ organizationId, targetId, revision }), (rows) => rows.some((row) => row.executable === null) ? [] : asEntries(rows))

  const pageRows = findAll({
    Request: Schema.Struct({ ...AtRevision.fields, prefix: Schema.optional(Schema.String), page: Keyset.PageRequest }),
    Result: PositionedEntry,
    execute: ({ page, prefix, ...at }) => {
      const firstAtOrAfter = (path: string) =>
        sql`(SELECT position FROM connector_tree_entries WHERE ${atRevision(at)} AND path COLLATE "C" >= ${path}
               ORDER BY path COLLATE "C" LIMIT 1)`
      const end = prefix === undefined ? undefined : prefixEnd(prefix)
      const range = sql.and([
        prefix === undefined ? sql`true` : sql`e.position >= ${firstAtOrAfter(prefix)}`,
        end === undefined ? sql`true` : sql`e.position < coalesce(${firstAtOrAfter(end)}, 2147483647)`
      ])
      return sql`SELECT e.position, e.path AS id, e.kind, e.path, e.sha, e.size::float8 AS size FROM connector_tree_entries e
                   WHERE ${atRevision(at)} AND ${range} AND ${page.after}
                   ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
    }
  })
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
    // The cursor is bound to the commit and the prefix: a cursor of another listing is a 400 on `cursor`.
    const binding = { cursor: query.cursor, limit: query.limit, prefix: query.prefix, target: targetId, revision }
    return Keyset.page(byPosition, binding, (page) => pageRows({ organizationId, targetId, revision, prefix: query.prefix, page })).pipe(
      Effect.map(({ items, nextCursor }) => ({ items: items.map((entry) => entry.row), nextCursor }))
    )
  }

  // Apply

  const OfCandidate = Schema.Struct({ ...OfInstance.fields, key: Schema.String })

  const pluginOfCandidateRow = findOne({
    Request: OfCandidate,
    Result: Schema.Struct({ id: PluginId }),
    execute: ({ instanceId, key, organizationId }) =>
      sql`SELECT id FROM plugins
            WHERE organization_id = ${organizationId} AND connector_instance_id = ${instanceId}
              AND connector_candidate_key = ${key} AND deleted_at IS NULL FOR UPDATE`
  })
  /** The live plugin the instance created for a candidate, locked; none when it has none (or deleted it). */
  const pluginOfCandidate = (organizationId: OrganizationId, instanceId: ConnectorInstanceId, key: string) =>
    Effect.map(pluginOfCandidateRow({ organizationId, instanceId, key }), Option.map((row) => row.id))

  const markPluginOfCandidateRow = execute({
    Request: Schema.Struct({ ...OfCandidate.fields, pluginId: PluginId }),
    execute: ({ instanceId, key, organizationId, pluginId }) =>
      sql`UPDATE plugins SET connector_instance_id = ${instanceId}, connector_candidate_key = ${key}
            WHERE organization_id = ${organizationId} AND id = ${pluginId}`
  })
  const markPluginOfCandidate = (organizationId: OrganizationId, pluginId: PluginId, instanceId: ConnectorInstanceId, key: string) =>
    markPluginOfCandidateRow({ organizationId, pluginId, instanceId, key })

  const pluginNameHeldByRow = single({
    Request: Schema.Struct({ ...OfInstance.fields, name: Schema.String }),
    Result: Held,
    execute: ({ instanceId, name, organizationId }) =>
      sql`SELECT EXISTS (SELECT 1 FROM plugins
              WHERE organization_id = ${organizationId} AND lower(name) = lower(${name}) AND deleted_at IS NULL
                AND connector_instance_id = ${instanceId}) AS held`
  })
  /** Whether a live plugin of this instance holds the name (compared as the catalog does, ignoring case). */
  const pluginNameHeldBy = (organizationId: OrganizationId, name: string, instanceId: ConnectorInstanceId) =>
    Effect.map(pluginNameHeldByRow({ organizationId, instanceId, name }), (row) => row.held)

  const pluginsOfInstanceRows = findAll({
    Request: OfInstance,
    Result: OwnPlugin,
    execute: ({ instanceId, organizationId }) =>
      sql`SELECT id, name, status, description, connector_candidate_key AS key, connector_candidate_name AS candidate_name,
                 source_metadata::text AS source_metadata, connector_left_at IS NOT NULL AS left FROM plugins
            WHERE organization_id = ${organizationId} AND connector_instance_id = ${instanceId}
              AND connector_candidate_key IS NOT NULL AND deleted_at IS NULL
            ORDER BY created_at, id FOR UPDATE`
  })
  /** The live plugins the instance created for candidates (active or archived), locked, oldest first. */
  const pluginsOfInstance = (organizationId: OrganizationId, instanceId: ConnectorInstanceId) =>
    pluginsOfInstanceRows({ organizationId, instanceId })

  const setCandidateNameRow = execute({
    Request: Schema.Struct({ organizationId: OrganizationId, pluginId: PluginId, name: Schema.String }),
    execute: ({ name, organizationId, pluginId }) =>
      sql`UPDATE plugins SET connector_candidate_name = ${name} WHERE organization_id = ${organizationId} AND id = ${pluginId}`
  })
  /** Records the name the plugin has in its repository (migration 0044). */
  const setCandidateName = (organizationId: OrganizationId, pluginId: PluginId, name: string) =>
    setCandidateNameRow({ organizationId, pluginId, name })

  const setLeftRow = execute({
    Request: Schema.Struct({ organizationId: OrganizationId, pluginId: PluginId, at: Schema.NullOr(DateColumn) }),
    execute: ({ at, organizationId, pluginId }) =>
      sql`UPDATE plugins SET connector_left_at = ${at} WHERE organization_id = ${organizationId} AND id = ${pluginId}`
  })
  /** Records when the plugin left its repository; null when it is listed again. */
  const setLeft = (organizationId: OrganizationId, pluginId: PluginId, at: Date | null) => setLeftRow({ organizationId, pluginId, at })

  const nameHeldByOtherRow = single({
    Request: Schema.Struct({ ...OfInstance.fields, pluginId: PluginId, name: Schema.String }),
    Result: Held,
    execute: ({ instanceId, name, organizationId, pluginId }) =>
      sql`SELECT EXISTS (SELECT 1 FROM plugins
              WHERE organization_id = ${organizationId} AND connector_instance_id = ${instanceId}
                AND lower(name) = lower(${name}) AND deleted_at IS NULL AND id <> ${pluginId}) AS held`
  })
  /**
   * Whether another live plugin of the instance holds the name (compared as the catalog does, ignoring case): names
   * are unique within an instance's plugins (migration 0045).
   */
  const nameHeldByOther = (organizationId: OrganizationId, instanceId: ConnectorInstanceId, name: string, pluginId: PluginId) =>
    Effect.map(nameHeldByOtherRow({ organizationId, instanceId, pluginId, name }), (row) => row.held)

  const marketplaceNameHeldRow = single({
    Request: Schema.Struct({ organizationId: OrganizationId, name: Schema.String }),
    Result: Held,
    execute: ({ name, organizationId }) =>
      sql`SELECT EXISTS (SELECT 1 FROM marketplaces
              WHERE organization_id = ${organizationId} AND lower(name) = lower(${name}) AND deleted_at IS NULL) AS held`
  })
  /** Whether a live marketplace of the organization holds the name (ignoring case, as their unique index does). */
  const marketplaceNameHeld = (organizationId: OrganizationId, name: string) =>
    Effect.map(marketplaceNameHeldRow({ organizationId, name }), (row) => row.held)

  const marketplaceOfInstanceRow = findOne({
    Request: OfInstance,
    Result: Schema.Struct({ id: MarketplaceId }),
    execute: ({ instanceId, organizationId }) =>
      sql`SELECT id FROM marketplaces
            WHERE organization_id = ${organizationId} AND connector_instance_id = ${instanceId} AND deleted_at IS NULL
            ORDER BY created_at, id LIMIT 1 FOR UPDATE`
  })
  /** The live marketplace the instance created, locked; none when it has none. */
  const marketplaceOfInstance = (organizationId: OrganizationId, instanceId: ConnectorInstanceId) =>
    Effect.map(marketplaceOfInstanceRow({ organizationId, instanceId }), Option.map((row) => row.id))

  const markMarketplaceOfInstanceRow = execute({
    Request: Schema.Struct({ ...OfInstance.fields, marketplaceId: MarketplaceId }),
    execute: ({ instanceId, marketplaceId, organizationId }) =>
      sql`UPDATE marketplaces SET connector_instance_id = ${instanceId}
            WHERE organization_id = ${organizationId} AND id = ${marketplaceId}`
  })
  const markMarketplaceOfInstance = (organizationId: OrganizationId, marketplaceId: MarketplaceId, instanceId: ConnectorInstanceId) =>
    markMarketplaceOfInstanceRow({ organizationId, marketplaceId, instanceId })

  const findMappingRow = findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, targetId: ConnectorTargetId, selector: Schema.String, objectType: ObjectType }),
    Result: Schema.Struct({ id: ConnectorMappingId, pluginDeleted: Schema.Boolean }),
    execute: ({ objectType, organizationId, selector, targetId }) =>
      sql`SELECT m.id, coalesce(p.deleted_at IS NOT NULL, false) AS plugin_deleted FROM connector_mappings m
            LEFT JOIN plugins p ON p.organization_id = m.organization_id AND p.id = m.plugin_id
            WHERE m.organization_id = ${organizationId} AND m.connector_target_id = ${targetId}
              AND m.selector = ${selector} AND m.object_type = ${objectType}`
  })
  /** The mapping of a target with this selector and object type (unique), if any, and whether its plugin is deleted. */
  const findMapping = (organizationId: OrganizationId, targetId: ConnectorTargetId, selector: string, objectType: ObjectType) =>
    findMappingRow({ organizationId, targetId, selector, objectType })

  const repointMappingRow = execute({
    Request: Schema.Struct({ organizationId: OrganizationId, id: ConnectorMappingId, pluginId: PluginId, at: DateColumn }),
    execute: ({ at, id, organizationId, pluginId }) =>
      sql`UPDATE connector_mappings SET plugin_id = ${pluginId}, auto_add_to_plugin = true, updated_at = ${at}
            WHERE organization_id = ${organizationId} AND id = ${id}`
  })
  const repointMapping = (organizationId: OrganizationId, id: ConnectorMappingId, pluginId: PluginId, at: Date) =>
    repointMappingRow({ organizationId, id, pluginId, at })

  // Auto-import (see migration 0007)

  const lockInstanceRow = execute({
    Request: OfInstance,
    execute: ({ instanceId, organizationId }) =>
      sql`SELECT id FROM connector_instances WHERE organization_id = ${organizationId} AND id = ${instanceId} FOR UPDATE`
  })
  /** Locks the instance's row for the rest of the transaction (no access check: for the sync, which acts for the system). */
  const lockInstance = (organizationId: OrganizationId, instanceId: ConnectorInstanceId) => lockInstanceRow({ organizationId, instanceId })

  const appliedRow = single({
    Request: OfInstance,
    Result: Schema.Struct({ applied: Schema.Boolean }),
    execute: ({ instanceId, organizationId }) =>
      sql`SELECT EXISTS (SELECT 1 FROM plugins
              WHERE organization_id = ${organizationId} AND connector_instance_id = ${instanceId}
                AND connector_candidate_key IS NOT NULL AND deleted_at IS NULL) AS applied`
  })
  /** Whether a discovery was applied to the instance: it has a live plugin made for a candidate. */
  const applied = (organizationId: OrganizationId, instanceId: ConnectorInstanceId) =>
    Effect.map(appliedRow({ organizationId, instanceId }), (row) => row.applied)

  const CandidateKey = Schema.Struct({ candidateKey: Schema.String })

  const knownKeysRows = findAll({
    Request: OfInstance,
    Result: CandidateKey,
    execute: ({ instanceId, organizationId }) =>
      sql`SELECT candidate_key FROM connector_candidate_keys
            WHERE organization_id = ${organizationId} AND connector_instance_id = ${instanceId}`
  })
  /** The candidate keys the instance has decided on (offered by an apply or imported by a sync). */
  const knownKeys = (organizationId: OrganizationId, instanceId: ConnectorInstanceId) =>
    Effect.map(knownKeysRows({ organizationId, instanceId }), (rows) => new Set(rows.map((row) => row.candidateKey)))

  const recordKeysRows = execute({
    Request: Schema.Struct({
      ...OfInstance.fields,
      keys: Schema.Array(Schema.String),
      syncEventId: Schema.NullOr(ConnectorSyncEventId),
      at: DateColumn
    }),
    execute: ({ at, instanceId, keys, organizationId, syncEventId }) => {
      const row = (candidateKey: string) => ({
        organizationId,
        connectorInstanceId: instanceId,
        candidateKey,
        connectorSyncEventId: syncEventId,
        createdAt: at
      })
      const [first, ...rest] = keys
      return first === undefined ? Effect.void : sql`INSERT INTO connector_candidate_keys ${sql.insert([row(first), ...rest.map(row)])}
            ON CONFLICT (organization_id, connector_instance_id, candidate_key) DO NOTHING`
    }
  })
  /** Records keys as decided; a key recorded before keeps its first record. */
  const recordKeys = (
    organizationId: OrganizationId,
    instanceId: ConnectorInstanceId,
    keys: ReadonlyArray<string>,
    syncEventId: ConnectorSyncEventId | null,
    at: Date
  ) => recordKeysRows({ organizationId, instanceId, keys, syncEventId, at })

  const importedByRows = findAll({
    Request: Schema.Struct({ ...OfInstance.fields, syncEventId: ConnectorSyncEventId }),
    Result: CandidateKey,
    execute: ({ instanceId, organizationId, syncEventId }) =>
      sql`SELECT candidate_key FROM connector_candidate_keys
            WHERE organization_id = ${organizationId} AND connector_instance_id = ${instanceId}
              AND connector_sync_event_id = ${syncEventId} ORDER BY candidate_key COLLATE "C"`
  })
  /** The keys a sync event imported, in key order. */
  const importedBy = (organizationId: OrganizationId, instanceId: ConnectorInstanceId, syncEventId: ConnectorSyncEventId) =>
    Effect.map(importedByRows({ organizationId, instanceId, syncEventId }), (rows) => rows.map((row) => row.candidateKey))

  return {
    find,
    store,
    entries,
    entriesWithModes,
    page,
    pluginOfCandidate,
    markPluginOfCandidate,
    pluginNameHeldBy,
    pluginsOfInstance,
    setCandidateName,
    setLeft,
    nameHeldByOther,
    marketplaceOfInstance,
    marketplaceNameHeld,
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

export class DiscoveryRepository extends Context.Service<DiscoveryRepository>()("@orgplane/server/connectors/DiscoveryRepository", { make: makeDiscoveryRepository }) {
  static readonly layer = Layer.effect(this, this.make)
}

/**
 * Storage of marketplaces and their plugin memberships. A marketplace is read with `canDelete` and `pluginCount`
 * in the same statement; a page of memberships with their plugins, and a resolved marketplace's plugins, in one
 * statement each (see `pluginColumns`).
 */
import {
  Conflict,
  type ConnectorInstanceId,
  Marketplace,
  type MarketplaceId,
  type MarketplaceListQuery,
  MarketplacePlugin,
  type MarketplacePluginId,
  type MarketplaceSource,
  type MembershipId,
  type MembershipListQuery,
  type OrganizationId,
  type PluginId
} from "@orgplane/schema"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import * as Keyset from "../platform/Keyset.js"
import { catchUniqueViolation } from "../platform/Sql.js"
import { classRow, likePattern, trustedClassRow } from "../platform/Statements.js"
import { pluginColumns, toPlugin } from "./PluginsRepository.js"

type Row = { readonly [column: string]: unknown }

/** By name (case-insensitive), then id. */
const byName = Keyset.make<Marketplace>("marketplaces", "asc", [
  { column: "lower(m.name)", value: (marketplace) => marketplace.name, compare: (value, sql) => sql`lower(${value})` },
  { column: "m.id", value: (marketplace) => marketplace.id }
])

/** Memberships in the order they were added. */
const byAddition = Keyset.make<MarketplacePlugin>("marketplace_plugins", "asc", [
  { column: "mp.created_at", value: (membership) => membership.createdAt.toISOString() },
  { column: "mp.id", value: (membership) => membership.id }
])

export const marketplaceExists = (name: string) =>
  new Conflict({ error: "marketplace_exists", message: `The organization already has a marketplace named "${name}".` })

/** A row of `columns` as the API's marketplace: validated when read one by one, taken as typed in lists. */
const toMarketplace: (row: Row) => Marketplace = Schema.decodeUnknownSync(classRow(Marketplace))
const toListedMarketplace: (row: Row) => Marketplace = Schema.decodeUnknownSync(trustedClassRow(Marketplace))

/** A row of `membershipColumns` + `pluginColumns` as the API's membership. */
const toMembership = (row: Row) =>
  new MarketplacePlugin(
    {
      id: row.membershipId as MarketplacePluginId,
      marketplaceId: row.membershipMarketplaceId as MarketplaceId,
      pluginId: row.id as MarketplacePlugin["pluginId"],
      membershipSource: row.membershipSource as MarketplacePlugin["membershipSource"],
      createdByOrgMembershipId: row.membershipCreatedBy as MembershipId | null,
      createdAt: row.membershipCreatedAt as Date,
      removedAt: row.membershipRemovedAt as Date | null,
      plugin: toPlugin(row)
    },
    { disableChecks: true }
  )

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const plugin = pluginColumns(sql)

  /** The columns of marketplace row `m` that make a `Marketplace`. */
  const columns = sql`m.id, m.organization_id, m.name, m.description, m.logo_url, m.status,
      m.created_by_membership_id AS created_by_org_membership_id, m.created_at, m.updated_at, m.deleted_at,
      NOT EXISTS (SELECT 1 FROM marketplace_plugins cm
                  WHERE cm.organization_id = m.organization_id AND cm.marketplace_id = m.id
                    AND cm.removed_at IS NULL AND cm.membership_source <> 'manual') AS can_delete,
      (SELECT count(*)::int FROM marketplace_plugins cm
       JOIN plugins cp ON cp.organization_id = cm.organization_id AND cp.id = cm.plugin_id
       WHERE cm.organization_id = m.organization_id AND cm.marketplace_id = m.id
         AND cm.removed_at IS NULL AND cp.deleted_at IS NULL) AS plugin_count,
      stale.since AS stale_since, stale.error AS last_sync_error`

  /**
   * For a marketplace a connector made (`m.connector_instance_id`): the failed syncs of its instance since the last
   * one that completed, the first's time and the latest's error; nulls when there are none.
   */
  const stale = sql`LEFT JOIN LATERAL (
      SELECT min(f.completed_at) AS since, (array_agg(f.last_error ORDER BY f.completed_at DESC, f.id DESC))[1] AS error
      FROM connector_sync_events f
      WHERE f.organization_id = m.organization_id AND f.connector_instance_id = m.connector_instance_id
        AND f.status = 'failed'
        AND f.completed_at > coalesce((
          SELECT max(c.completed_at) FROM connector_sync_events c
          WHERE c.organization_id = m.organization_id AND c.connector_instance_id = m.connector_instance_id
            AND c.status = 'completed'), '-infinity'::timestamptz)
    ) stale ON true`

  /** One marketplace with the caller's rank on it (`rank`: an `Access.rank` expression over alias `m`). */
  const view = (organizationId: OrganizationId, id: MarketplaceId, rank: Statement.Fragment) =>
    sql<Row>`SELECT ${rank} AS rank, ${columns} FROM marketplaces m ${stale} WHERE m.organization_id = ${organizationId} AND m.id = ${id}`.pipe(
      Effect.map((rows) =>
        Option.map(Option.fromNullishOr(rows[0]), ({ rank, ...row }) => ({ rank: rank as number, marketplace: toMarketplace(row) }))
      )
    )

  const find = (organizationId: OrganizationId, id: MarketplaceId) =>
    sql<Row>`SELECT ${columns} FROM marketplaces m ${stale} WHERE m.organization_id = ${organizationId} AND m.id = ${id}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toMarketplace))
    )

  /** The marketplaces the `visible` expression (over alias `m`) lets through, filtered, by name. */
  const list = (organizationId: OrganizationId, query: MarketplaceListQuery, visible: Statement.Fragment) =>
    Keyset.page(byName, query, (page) =>
      sql<Row>`SELECT ${columns} FROM marketplaces m ${stale} WHERE ${
          sql.and([
            sql`m.organization_id = ${organizationId}`,
            query.status !== undefined
              ? sql`m.status = ${query.status}`
              : query.includeDeleted === true
              ? sql`true`
              : sql`m.deleted_at IS NULL`,
            query.q !== undefined
              ? sql`(m.name ILIKE ${likePattern(query.q)} OR m.description ILIKE ${likePattern(query.q)})`
              : sql`true`,
            visible,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`.pipe(Effect.map((rows) => rows.map(toListedMarketplace))))

  const insert = (row: {
    readonly id: MarketplaceId
    readonly organizationId: OrganizationId
    readonly name: string
    readonly description: string
    readonly logoUrl: string | null
    readonly createdByMembershipId: MembershipId | null
    readonly at: Date
  }) =>
    sql`INSERT INTO marketplaces ${
        sql.insert({
          id: row.id,
          organizationId: row.organizationId,
          name: row.name,
          description: row.description,
          logoUrl: row.logoUrl,
          status: "active",
          createdByMembershipId: row.createdByMembershipId,
          createdAt: row.at,
          updatedAt: row.at
        })
      }`.pipe(catchUniqueViolation(() => marketplaceExists(row.name)))

  /**
   * The marketplace's status and whether a connector or the service lists plugins in it, locking its row for the
   * rest of the transaction; none when the organization has no such marketplace.
   */
  const lock = (organizationId: OrganizationId, id: MarketplaceId) =>
    sql<{ readonly status: Marketplace["status"]; readonly managed: boolean }>`
        SELECT m.status, EXISTS (SELECT 1 FROM marketplace_plugins mp
                                 WHERE mp.organization_id = m.organization_id AND mp.marketplace_id = m.id
                                   AND mp.removed_at IS NULL AND mp.membership_source <> 'manual') AS managed
        FROM marketplaces m WHERE m.organization_id = ${organizationId} AND m.id = ${id} FOR UPDATE OF m`.pipe(
      Effect.map((rows) => Option.fromNullishOr(rows[0]))
    )

  const update = (
    organizationId: OrganizationId,
    id: MarketplaceId,
    input: { readonly name?: string | undefined; readonly description?: string | undefined; readonly logoUrl?: string | null | undefined },
    at: Date
  ) =>
    sql`UPDATE marketplaces SET ${
        sql.update({
          ...(input.name === undefined ? {} : { name: input.name }),
          ...(input.description === undefined ? {} : { description: input.description }),
          ...(input.logoUrl === undefined ? {} : { logoUrl: input.logoUrl }),
          updatedAt: at
        })
      } WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(catchUniqueViolation(() => marketplaceExists(input.name ?? "")))

  const markDeleted = (organizationId: OrganizationId, id: MarketplaceId, at: Date) =>
    sql`UPDATE marketplaces SET status = 'deleted', updated_at = ${at}, deleted_at = ${at}
          WHERE organization_id = ${organizationId} AND id = ${id}`

  const touch = (organizationId: OrganizationId, id: MarketplaceId, at: Date) =>
    sql`UPDATE marketplaces SET updated_at = ${at} WHERE organization_id = ${organizationId} AND id = ${id}`

  const membershipColumns = sql`mp.id AS membership_id, mp.marketplace_id AS membership_marketplace_id,
      mp.membership_source, mp.created_by_membership_id AS membership_created_by,
      mp.created_at AS membership_created_at, mp.removed_at AS membership_removed_at`

  const memberships = sql`marketplace_plugins mp JOIN plugins p ON p.organization_id = mp.organization_id AND p.id = mp.plugin_id`

  /** A page of the marketplace's plugin memberships with their plugins, in the order they were added. */
  const listMemberships = (organizationId: OrganizationId, id: MarketplaceId, query: MembershipListQuery) =>
    Keyset.page(byAddition, query, (page) =>
      sql<Row>`SELECT ${membershipColumns}, ${plugin} FROM ${memberships} WHERE ${
          sql.and([
            sql`mp.organization_id = ${organizationId}`,
            sql`mp.marketplace_id = ${id}`,
            query.includeRemoved === true ? sql`true` : sql`mp.removed_at IS NULL`,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`.pipe(Effect.map((rows) => rows.map(toMembership))))

  const findMembership = (organizationId: OrganizationId, id: MarketplacePluginId) =>
    sql<Row>`SELECT ${membershipColumns}, ${plugin} FROM ${memberships}
               WHERE mp.organization_id = ${organizationId} AND mp.id = ${id}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toMembership))
    )

  /** The plugins the marketplace lists that are not deleted, by name. */
  const listedPlugins = (organizationId: OrganizationId, id: MarketplaceId) =>
    sql<Row>`SELECT ${plugin} FROM ${memberships}
               WHERE mp.organization_id = ${organizationId} AND mp.marketplace_id = ${id}
                 AND mp.removed_at IS NULL AND p.deleted_at IS NULL
               ORDER BY lower(p.name), p.id`.pipe(Effect.map((rows) => rows.map(toPlugin)))

  /**
   * Where a marketplace a discovery apply created is synced from: its instance's account, repository and first
   * branch; none for any other marketplace (or an instance without a target).
   */
  const source = (organizationId: OrganizationId, id: MarketplaceId) =>
    sql<typeof MarketplaceSource.Type>`
        SELECT a.id AS connector_account_id, i.id AS connector_instance_id,
               coalesce(a.external_account_ref, a.display_name) AS account_login,
               t.remote_id AS repository_full_name, t.external_target_ref AS branch
        FROM marketplaces m
        JOIN connector_instances i ON i.organization_id = m.organization_id AND i.id = m.connector_instance_id
        JOIN connector_accounts a ON a.organization_id = i.organization_id AND a.id = i.connector_account_id
        JOIN LATERAL (SELECT ct.remote_id, ct.external_target_ref FROM connector_targets ct
                      WHERE ct.organization_id = i.organization_id AND ct.connector_instance_id = i.id
                      ORDER BY ct.created_at, ct.id LIMIT 1) t ON true
        WHERE m.organization_id = ${organizationId} AND m.id = ${id}`.pipe(Effect.map((rows) => Option.fromNullishOr(rows[0])))

  /** A plugin other than `pluginId` the marketplace lists under `name` (compared ignoring case), if any. */
  const listedUnder = (organizationId: OrganizationId, id: MarketplaceId, name: string, pluginId: string) =>
    sql<{ readonly id: string }>`
        SELECT p.id FROM marketplace_plugins mp
        JOIN plugins p ON p.organization_id = mp.organization_id AND p.id = mp.plugin_id
        WHERE mp.organization_id = ${organizationId} AND mp.marketplace_id = ${id} AND mp.removed_at IS NULL
          AND p.deleted_at IS NULL AND lower(p.name) = lower(${name}) AND p.id <> ${pluginId}
        LIMIT 1`.pipe(Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (row) => row.id)))

  /**
   * The marketplaces people made that are not deleted, each with the ids of the plugins it lists (organization as
   * code), in two statements: the marketplaces, then all their listings. A connector's marketplaces are its
   * repository's.
   */
  const ownMarketplaces = (organizationId: OrganizationId) =>
    Effect.gen(function*() {
      const marketplaces = yield* sql<{ readonly id: MarketplaceId; readonly name: string; readonly description: string; readonly logoUrl: string | null }>`
          SELECT id, name, description, logo_url FROM marketplaces
          WHERE organization_id = ${organizationId} AND deleted_at IS NULL AND connector_instance_id IS NULL`
      const listings = yield* sql<{ readonly marketplaceId: MarketplaceId; readonly pluginId: PluginId }>`
          SELECT marketplace_id, plugin_id FROM marketplace_plugins WHERE organization_id = ${organizationId} AND removed_at IS NULL`
      const byMarketplace = Arr.groupBy(listings, (listing) => listing.marketplaceId)
      return marketplaces.map((marketplace) => ({ ...marketplace, pluginIds: (byMarketplace[marketplace.id] ?? []).map((listing) => listing.pluginId) }))
    })

  /** The marketplaces connectors made, each with its connector, in one statement. */
  const syncedMarketplaces = (organizationId: OrganizationId) =>
    sql<{ readonly id: MarketplaceId; readonly name: string; readonly connectorInstanceId: ConnectorInstanceId }>`
        SELECT id, name, connector_instance_id FROM marketplaces
        WHERE organization_id = ${organizationId} AND deleted_at IS NULL AND connector_instance_id IS NOT NULL`

  return { view, find, list, insert, lock, update, markDeleted, touch, listMemberships, findMembership, listedPlugins, listedUnder, source, ownMarketplaces, syncedMarketplaces } as const
})

export class MarketplacesRepository extends Context.Service<MarketplacesRepository>()("@orgplane/server/catalog/MarketplacesRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

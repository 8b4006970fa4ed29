/**
 * What an organization's purge reads and deletes across every tenant table. The tables come from the database's own
 * catalog: every table of the schema with an `organization_id` column (partitioned tables as one, their partitions
 * with them), in an order that deletes a table's rows before those of the tables it references, so a table a later
 * migration adds is purged too, without a list to keep. Table names are the catalog's, quoted as identifiers.
 */
import type { OrganizationId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

/** A tenant table and the other tables its foreign keys reference. */
export interface TenantTable {
  readonly name: string
  readonly references: ReadonlyArray<string>
}

/**
 * The tables in the order the purge deletes from them: every table before the tables it references (a self-reference
 * aside: one statement deletes a table's rows of the organization together). Dies on a cycle, which the schema does
 * not have (a test holds the order against the catalog).
 */
export const deletionOrder = (tables: ReadonlyArray<TenantTable>): ReadonlyArray<string> => {
  const names = new Set(tables.map((table) => table.name))
  // Who references each table: it may go only once they have.
  const referencedBy = new Map<string, Set<string>>(tables.map((table) => [table.name, new Set<string>()]))
  for (const table of tables) {
    for (const parent of table.references) {
      if (parent !== table.name && names.has(parent)) referencedBy.get(parent)!.add(table.name)
    }
  }
  const order: Array<string> = []
  const done = new Set<string>()
  while (order.length < tables.length) {
    const ready = [...referencedBy.entries()]
      .filter(([name, children]) => !done.has(name) && [...children].every((child) => done.has(child)))
      .map(([name]) => name)
      .sort()
    if (ready.length === 0) {
      throw new Error(`The tenant tables' foreign keys form a cycle: ${[...names].filter((name) => !done.has(name)).join(", ")}`)
    }
    for (const name of ready) {
      done.add(name)
      order.push(name)
    }
  }
  return order
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** Every tenant table with the tables it references, from the catalog. */
  const catalog = sql<{ name: string; parents: ReadonlyArray<string> | null }>`
    /* instance-wide: the tenant tables, from the catalog (identity/PurgeRepository.ts) */
    SELECT c.relname AS name,
      ARRAY(SELECT DISTINCT p.relname::text FROM pg_constraint f JOIN pg_class p ON p.oid = f.confrelid
            WHERE f.conrelid = c.oid AND f.contype = 'f') AS parents
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id' AND a.attnum > 0 AND NOT a.attisdropped)
    ORDER BY c.relname`

  /** The tenant tables, in the order the purge deletes from them (`deletionOrder`). */
  const tenantTables: Effect.Effect<ReadonlyArray<string>, SqlError> = Effect.flatMap(catalog, (rows) =>
    Effect.try({
      try: () => deletionOrder(rows.map((row) => ({ name: row.name, references: row.parents ?? [] }))),
      catch: (error) => error
    }).pipe(Effect.orDie))

  /** How many rows of each table (of `tables`) the organization has, in one statement; tables without any left out. */
  const count = (organizationId: OrganizationId, tables: ReadonlyArray<string>) =>
    tables.length === 0 ? Effect.succeed({} as Record<string, number>) : Effect.map(
      sql<{ tableName: string; count: number }>`${
        sql.join(" UNION ALL ", false)(tables.map((table) =>
          sql`SELECT ${table}::text AS table_name, count(*)::int AS count FROM ${sql(table)} WHERE organization_id = ${organizationId}`
        ))
      }`,
      (rows) => Object.fromEntries(rows.filter((row) => row.count > 0).map((row) => [row.tableName, row.count])) as Record<string, number>
    )

  /**
   * Deletes up to `limit` of the organization's rows of `table` (a partitioned table's across its partitions): how
   * many. Batches keep each statement short (`ORGPLANE_DB_STATEMENT_TIMEOUT`) whatever the organization holds.
   */
  const deleteBatch = (table: string, organizationId: OrganizationId, limit: number) =>
    Effect.map(
      sql<{ count: number }>`WITH gone AS (
          DELETE FROM ${sql(table)} WHERE organization_id = ${organizationId} AND (tableoid, ctid) IN (
            SELECT tableoid, ctid FROM ${sql(table)} WHERE organization_id = ${organizationId} LIMIT ${limit})
          RETURNING 1)
        SELECT count(*)::int AS count FROM gone`,
      (rows) => rows[0]?.count ?? 0
    )

  return { tenantTables, count, deleteBatch } as const
})

export class PurgeRepository extends Context.Service<PurgeRepository>()("@orgplane/server/identity/PurgeRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

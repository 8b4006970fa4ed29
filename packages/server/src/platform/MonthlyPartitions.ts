/**
 * Monthly range partitions of an append-only table on a timestamp: `<table>_pYYYYMM` holds [YYYY-MM-01T00:00Z, the
 * next month's first day) in UTC. There is no DEFAULT partition, so a month must exist before a row of it is
 * inserted, and retention drops whole months. Telemetry's events and the audit log use it.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { isSqlError, pgCode } from "./Sql.js"

/** A month as a whole number: `year * 12 + month` with January 0, in UTC. */
export type Month = number

export const monthOf = (date: Date): Month => date.getUTCFullYear() * 12 + date.getUTCMonth()

/** The first instant of a month. */
export const startOf = (month: Month): Date => new Date(Date.UTC(Math.floor(month / 12), month % 12, 1))

/**
 * Another process created the same partition at the same moment: `IF NOT EXISTS` does not cover a race, which
 * fails with duplicate_table (42P07) or a unique violation on the catalog (23505). Either way the partition exists.
 */
const createdElsewhere = (error: unknown): error is SqlError =>
  isSqlError(error) && ["42P07", "23505"].includes(pgCode(error) ?? "")

const months = (first: Month, last: Month): Array<Month> =>
  Array.from({ length: Math.max(0, last - first + 1) }, (_, index) => first + index)

/** The partitions of one table. `table` is a constant of the code, never input. */
export const make = (table: string) => {
  /** `<table>_p202611` for November 2026. */
  const partitionName = (month: Month): string =>
    `${table}_p${Math.floor(month / 12)}${String((month % 12) + 1).padStart(2, "0")}`

  const name = new RegExp(`^${table}_p(\\d{4})(\\d{2})$`)

  /** The month a partition's name stands for, or undefined for a table that does not follow the convention. */
  const monthOfPartition = (partition: string): Month | undefined => {
    const match = name.exec(partition)
    if (match === null) return undefined
    const month = Number(match[2])
    return month >= 1 && month <= 12 ? Number(match[1]) * 12 + month - 1 : undefined
  }

  /** Creates the partition of `month` unless it exists; safe when several processes race to create it. */
  const create = (month: Month): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
    SqlClient.SqlClient.use((sql) => {
      const from = startOf(month).toISOString()
      const to = startOf(month + 1).toISOString()
      return sql.unsafe(`CREATE TABLE IF NOT EXISTS ${partitionName(month)} PARTITION OF ${table} FOR VALUES FROM ('${from}') TO ('${to}')`)
        .pipe(Effect.asVoid, Effect.catchIf(createdElsewhere, () => Effect.void))
    })

  /** The table's partitions that follow the naming convention, by name, with their months. */
  const list: Effect.Effect<ReadonlyArray<{ readonly name: string; readonly month: Month }>, SqlError, SqlClient.SqlClient> =
    SqlClient.SqlClient.use((sql) =>
      sql<{ name: string }>`
        SELECT c.relname AS name FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = ${table}::regclass
        ORDER BY c.relname`.pipe(
        Effect.map((rows) =>
          rows.flatMap(({ name }) => {
            const month = monthOfPartition(name)
            return month === undefined ? [] : [{ name, month }]
          })
        )
      ))

  /** Creates the partitions of every month from `first` to `last` (both included) that do not exist. */
  const createRange = (first: Month, last: Month): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
    Effect.forEach(months(first, last), create, { discard: true })

  /**
   * Drops every partition of a month before `first` and answers their names. The name comes from the catalog and
   * matched the naming convention: it is safe to put in the statement.
   */
  const dropBefore = (first: Month): Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const expired = (yield* list).filter(({ month }) => month < first)
      for (const { name } of expired) yield* sql.unsafe(`DROP TABLE IF EXISTS ${name}`)
      return expired.map(({ name }) => name)
    })

  /**
   * The partitions this process knows exist, so a write path creates a month's partition at most once per process
   * and runs no DDL otherwise (the `make` of a service per table).
   */
  const known = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const known = new Set<Month>()

    /** Makes sure every month given has its partition: DDL only for months not known to exist. */
    const ensure = (wanted: Iterable<Month>): Effect.Effect<void, SqlError> =>
      Effect.suspend(() =>
        Effect.forEach(
          [...new Set(wanted)].filter((month) => !known.has(month)),
          (month) => Effect.tap(create(month), () => Effect.sync(() => known.add(month))),
          { discard: true }
        )
      ).pipe(Effect.provideService(SqlClient.SqlClient, sql))

    /** Every month from `first` to `last`, both included. */
    const ensureRange = (first: Month, last: Month) => ensure(months(first, last))

    /** Learns which partitions exist (one catalog query), so that a start-up on a prepared database runs no DDL. */
    const refresh = list.pipe(
      Effect.tap((partitions) => Effect.sync(() => partitions.forEach(({ month }) => known.add(month)))),
      Effect.asVoid,
      Effect.provideService(SqlClient.SqlClient, sql)
    )

    /** Forgets months (dropped by retention, or missing although believed to exist), so they are checked again. */
    const forget = (months: Iterable<Month>) => Effect.sync(() => [...months].forEach((month) => known.delete(month)))

    return { ensure, ensureRange, forget, refresh } as const
  })

  return { table, partitionName, monthOfPartition, create, list, createRange, dropBefore, known } as const
}

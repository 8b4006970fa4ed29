/**
 * The monthly partitions of `telemetry_events`: `telemetry_events_pYYYYMM` holds [YYYY-MM-01T00:00Z, the next month's
 * first day) in UTC. There is no DEFAULT partition, so an event's month must exist before the event is inserted:
 * partitions are created at start-up for the retention window and the next month, by the daily retention job, and
 * on ingest for a month this process has not seen yet (remembered in memory, so the hot path runs no DDL).
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { isSqlError, pgCode } from "../platform/Sql.js"

/** A month as a whole number: `year * 12 + month` with January 0, in UTC. */
export type Month = number

export const monthOf = (date: Date): Month => date.getUTCFullYear() * 12 + date.getUTCMonth()

/** The first instant of a month. */
export const startOf = (month: Month): Date => new Date(Date.UTC(Math.floor(month / 12), month % 12, 1))

/** `telemetry_events_p202611` for November 2026. */
export const partitionName = (month: Month): string =>
  `telemetry_events_p${Math.floor(month / 12)}${String((month % 12) + 1).padStart(2, "0")}`

const NAME = /^telemetry_events_p(\d{4})(\d{2})$/

/** The month a partition's name stands for, or undefined for a table that does not follow the convention. */
export const monthOfPartition = (name: string): Month | undefined => {
  const match = NAME.exec(name)
  if (match === null) return undefined
  const month = Number(match[2])
  return month >= 1 && month <= 12 ? Number(match[1]) * 12 + month - 1 : undefined
}

/**
 * Another process created the same partition at the same moment: `IF NOT EXISTS` does not cover a race, which
 * fails with duplicate_table (42P07) or a unique violation on the catalog (23505). Either way the partition exists.
 */
const createdElsewhere = (error: unknown): error is SqlError =>
  isSqlError(error) && ["42P07", "23505"].includes(pgCode(error) ?? "")

/** Creates the partition of `month` unless it exists; safe when several processes race to create it. */
export const create = (month: Month): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const from = startOf(month).toISOString()
    const to = startOf(month + 1).toISOString()
    return sql.unsafe(
      `CREATE TABLE IF NOT EXISTS ${partitionName(month)} PARTITION OF telemetry_events FOR VALUES FROM ('${from}') TO ('${to}')`
    ).pipe(Effect.asVoid, Effect.catchIf(createdElsewhere, () => Effect.void))
  })

/** The partitions of `telemetry_events` that follow the naming convention, by name, with their months. */
export const list: Effect.Effect<ReadonlyArray<{ readonly name: string; readonly month: Month }>, SqlError, SqlClient.SqlClient> =
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ name: string }>`
      SELECT c.relname AS name FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'telemetry_events'::regclass
      ORDER BY c.relname`.pipe(
      Effect.map((rows) =>
        rows.flatMap(({ name }) => {
          const month = monthOfPartition(name)
          return month === undefined ? [] : [{ name, month }]
        })
      )
    ))

/** Creates the partitions of every month from `first` to `last` (both included) that do not exist. */
export const createRange = (first: Month, last: Month): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.forEach(Array.from({ length: Math.max(0, last - first + 1) }, (_, index) => first + index), create, { discard: true })

/** The partitions this process knows exist, so ingest creates a month's partition at most once per process. */
export class Partitions extends Effect.Service<Partitions>()("@orgplane/server/telemetry/Partitions", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const known = new Set<Month>()

    /** Makes sure every month given has its partition: DDL only for months not known to exist. */
    const ensure = (months: Iterable<Month>): Effect.Effect<void, SqlError> =>
      Effect.suspend(() =>
        Effect.forEach(
          [...new Set(months)].filter((month) => !known.has(month)),
          (month) => Effect.tap(create(month), () => Effect.sync(() => known.add(month))),
          { discard: true }
        )
      ).pipe(Effect.provideService(SqlClient.SqlClient, sql))

    /** Every month from `first` to `last`, both included. */
    const ensureRange = (first: Month, last: Month) =>
      ensure(Array.from({ length: Math.max(0, last - first + 1) }, (_, index) => first + index))

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
}) {}

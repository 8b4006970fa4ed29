/**
 * platform/MonthlyPartitions.ts on a real database (the embedded one, or Postgres with DATABASE_URL): names and months
 * as earlier releases named them, partitions made, listed, raced and dropped (http/Audit.test.ts's retention asserts
 * the drop of a month 400 days back), and `known`'s memory of them.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import * as MonthlyPartitions from "../src/platform/MonthlyPartitions.js"
import * as TestDatabase from "./support/TestDatabase.js"

const DAY = 86_400_000

describe("MonthlyPartitions, pure", () => {
  it("numbers months, names partitions as the databases of earlier releases have them, and reads names back", () => {
    const port = MonthlyPartitions.make("probe_events")
    const months: ReadonlyArray<readonly [date: string, month: number, start: string, partition: string]> = [
      ["2026-11-26T06:00:00Z", 24322, "2026-11-01T00:00:00.000Z", "probe_events_p202611"],
      ["2026-01-01T00:00:00Z", 24312, "2026-01-01T00:00:00.000Z", "probe_events_p202601"],
      ["2025-12-31T23:59:59.999Z", 24311, "2025-12-01T00:00:00.000Z", "probe_events_p202512"],
      ["1999-02-28T12:00:00Z", 23989, "1999-02-01T00:00:00.000Z", "probe_events_p199902"],
      ["2100-07-15T00:00:00Z", 25206, "2100-07-01T00:00:00.000Z", "probe_events_p210007"]
    ]
    for (const [text, expected, start, partition] of months) {
      const month = MonthlyPartitions.monthOf(new Date(text))
      expect(month, text).toBe(expected)
      expect(MonthlyPartitions.startOf(month).toISOString()).toBe(start)
      expect(port.partitionName(month)).toBe(partition)
      expect(port.monthOfPartition(partition)).toBe(month)
    }
    expect(port.partitionName(MonthlyPartitions.monthOf(new Date("2026-11-26T06:00:00Z")))).toBe("probe_events_p202611")
    expect(MonthlyPartitions.startOf(2026 * 12 + 10).toISOString()).toBe("2026-11-01T00:00:00.000Z")
    for (const name of ["probe_events_p202613", "probe_events_p202600", "probe_events_extra", "other_p202611", "probe_events_p20261"]) {
      expect(port.monthOfPartition(name), name).toBeUndefined()
    }
  })
})

const table = MonthlyPartitions.make("probe_events")

const setUp = SqlClient.SqlClient.use((sql) =>
  Effect.andThen(
    sql`DROP TABLE IF EXISTS probe_events`,
    sql`CREATE TABLE probe_events (id integer NOT NULL, occurred_at timestamptz NOT NULL) PARTITION BY RANGE (occurred_at)`
  ))

const insertAt = (at: Date) => SqlClient.SqlClient.use((sql) => sql`INSERT INTO probe_events (id, occurred_at) VALUES (1, ${at})`)

layer(Layer.unwrap(TestDatabase.layer()), { timeout: 60_000, excludeTestServices: true })(`MonthlyPartitions on ${TestDatabase.kind}`, (it) => {
  it.effect("createRange makes each month's partition once, list reads them with their months, a row goes in its month", () =>
    Effect.gen(function*() {
      yield* setUp
      const now = new Date("2026-11-26T06:00:00Z")
      const month = MonthlyPartitions.monthOf(now)
      // No DEFAULT partition: a month that does not exist takes no row.
      expect(Exit.isFailure(yield* Effect.exit(insertAt(now)))).toBe(true)
      yield* table.createRange(month, month + 2)
      yield* table.createRange(month, month + 2)
      // A table of another name under the same parent is no month.
      yield* SqlClient.SqlClient.use((sql) =>
        sql.unsafe(`CREATE TABLE probe_events_extra PARTITION OF probe_events FOR VALUES FROM ('2000-01-01') TO ('2000-02-01')`))
      expect(yield* table.list).toEqual([
        { name: "probe_events_p202611", month },
        { name: "probe_events_p202612", month: month + 1 },
        { name: "probe_events_p202701", month: month + 2 }
      ])
      yield* insertAt(now)
      yield* insertAt(new Date("2026-12-31T23:59:59.999Z"))
      yield* insertAt(new Date("2027-01-01T00:00:00Z"))
      expect(Exit.isFailure(yield* Effect.exit(insertAt(new Date("2027-02-01T00:00:00Z"))))).toBe(true)
      yield* table.createRange(month + 1, month)
      expect((yield* table.list).length).toBe(3)
    }))

  it.effect("several creations of one month at once all succeed (the loser of the race finds it made)", () =>
    Effect.gen(function*() {
      yield* setUp
      const month = MonthlyPartitions.monthOf(new Date("2026-05-10T00:00:00Z"))
      yield* Effect.all(Array.from({ length: 6 }, () => table.create(month)), { concurrency: "unbounded" })
      expect((yield* table.list).map(({ name }) => name)).toEqual(["probe_events_p202605"])
    }))

  it.effect("dropBefore drops the months before the one given and answers their names; later months keep their rows", () =>
    Effect.gen(function*() {
      yield* setUp
      const now = new Date("2026-11-26T06:00:00Z")
      const oldest = MonthlyPartitions.monthOf(new Date(now.getTime() - 400 * DAY))
      yield* table.createRange(oldest, MonthlyPartitions.monthOf(now))
      yield* insertAt(now)
      const dropped = yield* table.dropBefore(MonthlyPartitions.monthOf(new Date(now.getTime() - 365 * DAY)))
      expect(dropped).toContain(table.partitionName(oldest))
      expect(dropped).toEqual(["probe_events_p202510"])
      expect((yield* table.list)[0]!.name).toBe("probe_events_p202511")
      expect(yield* table.dropBefore(oldest)).toEqual([])
      const [row] = yield* SqlClient.SqlClient.use((sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM probe_events`)
      expect(row!.n).toBe(1)
    }))

  it.effect("known runs DDL only for months it does not know: refresh learns them, forget makes it look again", () =>
    Effect.gen(function*() {
      yield* setUp
      const month = MonthlyPartitions.monthOf(new Date("2026-11-26T06:00:00Z"))
      const sql = yield* SqlClient.SqlClient
      const known = yield* table.known
      yield* known.ensureRange(month, month + 1)
      expect((yield* table.list).length).toBe(2)
      // Dropped behind its back: believed to exist, so not made again until forgotten.
      yield* sql.unsafe(`DROP TABLE ${table.partitionName(month)}`)
      yield* known.ensure([month, month])
      expect((yield* table.list).map(({ month }) => month)).toEqual([month + 1])
      yield* known.forget([month])
      yield* known.ensure([month])
      expect((yield* table.list).map(({ month }) => month)).toEqual([month, month + 1])

      // Another process's memory: refresh reads the catalog, after which ensuring them runs nothing.
      const other = yield* table.known
      yield* other.refresh
      yield* sql.unsafe(`DROP TABLE ${table.partitionName(month + 1)}`)
      yield* other.ensure([month + 1])
      expect((yield* table.list).map(({ month }) => month)).toEqual([month])
    }))
})

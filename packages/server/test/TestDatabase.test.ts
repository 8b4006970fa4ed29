/**
 * The embedded test databases (support/TestDatabase.ts) a server is done with are restored and handed to the next
 * server of the process: what a server's start makes as a matter of course (the durable engine's tables, the months'
 * partitions) does not stop that, and does not make the restore read the catalog again; any other change of the
 * schema, or of a setting, closes the engine instead. An engine is the same one when its socket folder is.
 * The test loads the migrated template into three engines (the first, then one after each closing): on a busy
 * 2-core machine that took over vitest's 30 seconds (2026-11-29), so it has two minutes.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import * as Database from "../src/platform/Database.js"
import * as TestDatabase from "./support/TestDatabase.js"

/** Runs `statements` on a migrated engine and gives it back; the engine's socket folder. */
const used = (statements: ReadonlyArray<string>) =>
  Effect.scoped(Effect.gen(function*() {
    const database = yield* TestDatabase.fresh({ migrated: true })
    if (!("socketDir" in database)) return yield* Effect.die("an embedded database has a socket folder")
    const sql = Context.get(yield* Layer.build(Database.layerSocket(database.socketDir)), SqlClient.SqlClient)
    for (const statement of statements) yield* sql.unsafe(statement)
    return database.socketDir
  }))

describe.skipIf(TestDatabase.onPostgres)("an embedded test database given back", () => {
  it.effect("is handed on after a server's own DDL, and closed after a test changed the schema or a setting", () =>
    Effect.gen(function*() {
      const first = yield* used([
        "CREATE TABLE IF NOT EXISTS orgplane_cluster_probe (id BIGINT PRIMARY KEY, rowid BIGSERIAL, tag text)",
        "CREATE INDEX IF NOT EXISTS orgplane_cluster_probe_tag_idx ON orgplane_cluster_probe (tag)",
        "ALTER TABLE orgplane_cluster_probe ALTER COLUMN tag TYPE varchar(40)",
        "CREATE TABLE IF NOT EXISTS audit_events_p209901 PARTITION OF audit_events FOR VALUES FROM ('2099-01-01') TO ('2099-02-01')"
      ])
      expect(yield* used([])).toBe(first)
      // A column added: the count moved, the catalog is read, and it is not the template's.
      expect(yield* used(["ALTER TABLE teams ADD COLUMN probe integer"])).toBe(first)
      const second = yield* used([])
      expect(second).not.toBe(first)
      // A function replaced keeps every name: only the catalog read tells.
      yield* used(["CREATE OR REPLACE FUNCTION orgplane_test.counts(schema_name text, identity text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$ SELECT true $$"])
      const third = yield* used([])
      expect(third).not.toBe(second)
      // A setting is no DDL to the count: it is read at every restore.
      expect(yield* used(["ALTER DATABASE postgres SET work_mem = '8MB'"])).toBe(third)
      expect(yield* used([])).not.toBe(third)
    }), 120_000)
})

/**
 * The database pools (platform/Database.ts): statements are prepared, and on the embedded database, whose one
 * session outlives its connections, a new connection does not inherit what an earlier one prepared.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Database from "../src/platform/Database.js"

/** The prepared statements of the session, by their text. */
const prepared = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ readonly name: string; readonly statement: string }>`SELECT name, statement FROM pg_prepared_statements ORDER BY name`)

describe("the embedded database's pool", () => {
  it.scopedLive("prepares its statements, and a later connection to the same session starts without the earlier one's", () =>
    Effect.gen(function*() {
      const { socketDir } = yield* Database.embedded({ dataDir: "memory" })
      const firstStatement = (sql: SqlClient.SqlClient) => sql`SELECT ${1}::int AS first_connection`
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(Database.layerSocket(socketDir))
        return yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          expect(yield* firstStatement(sql)).toEqual([{ firstConnection: 1 }])
          yield* firstStatement(sql)
          return yield* prepared
        }).pipe(Effect.provide(context))
      }))
      // The first connection prepared its statement once, under a name, although it ran twice.
      expect(first.filter((row) => row.statement.includes("first_connection"))).toHaveLength(1)

      // The first pool has ended and its connection gone; PGlite's session is the same. The socket server admits one
      // connection and lets the closed one go on a later turn.
      yield* Effect.sleep("200 millis")
      const second = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        expect(yield* sql`SELECT ${2}::int AS second_connection`).toEqual([{ secondConnection: 2 }])
        return yield* prepared
      }).pipe(Effect.provide(Database.layerSocket(socketDir)))
      expect(second.map((row) => row.statement).filter((text) => text.includes("_connection"))).toEqual([
        expect.stringContaining("second_connection")
      ])
      expect(second.map((row) => row.name)).not.toContain(first[0]!.name)
    }))
})

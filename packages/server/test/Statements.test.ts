/**
 * platform/Statements.ts on a table the test creates, on a real database (the embedded one, or Postgres with
 * DATABASE_URL): the typed statements (a row failing its schema is a defect; `findOne` is an Option, `single` must
 * find its row), the rows read as resource classes (`classRow` validating, `trustedClassRow` not, JSON text columns,
 * `withColumns`), `Fragment`, `likePattern` and `deleteInBatches`; and which requests go to their statement as they are
 * (`encodesAsItself`: those Schema's encoding would send unchanged, over generated values).
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Team, TeamId } from "@orgplane/schema"
import { isDeepStrictEqual } from "node:util"
import * as Arbitrary from "effect/Arbitrary"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlErrors from "effect/sql/SqlError"
import * as Statements from "../src/platform/Statements.js"
import * as TestDatabase from "./support/TestDatabase.js"

/** A resource as the API's are: checks on its fields, an ISO timestamp on the wire, an optional member, JSON. */
class Widget extends Schema.Class<Widget>("Widget")({
  id: Schema.String.check(Schema.isStartingWith("wdg_")),
  name: Schema.String.check(Schema.isMinLength(3)),
  settings: Schema.Struct({ auto_import: Schema.Boolean, max_size: Schema.Number }),
  extra: Schema.NullOr(Schema.Struct({ note_text: Schema.String })),
  label: Schema.optionalKey(Schema.String),
  createdAt: Schema.String.pipe(Schema.decodeTo(Schema.Date, {
    decode: SchemaGetter.transform((text) => new Date(text)),
    encode: SchemaGetter.transform((date) => date.toISOString())
  }))
}) {}

const defectOf = <A, E>(exit: Exit.Exit<A, E>): unknown =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) ?? exit.cause.reasons.find((reason) => reason._tag === "Die")?.defect : undefined

const setUp = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS test_widgets (
    id text PRIMARY KEY, name text NOT NULL, settings_json jsonb NOT NULL, extra_json jsonb, created_at timestamptz NOT NULL
  )`
  yield* sql`DELETE FROM test_widgets`
  yield* sql`INSERT INTO test_widgets VALUES
    ('wdg_1', 'First', '{"auto_import": true, "max_size": 10}', '{"note_text": "hello"}', '2030-01-01T00:00:00Z'),
    ('wdg_2', 'Se', '{"auto_import": false, "max_size": 2}', NULL, '2030-01-02T00:00:00Z')`
  return sql
})

const columns = (sql: SqlClient.SqlClient) => sql`id, name, settings_json::text AS settings, extra_json::text AS extra, created_at`

layer(Layer.unwrap(TestDatabase.layer()), { timeout: 60_000, excludeTestServices: true })(`Statements on ${TestDatabase.kind}`, (it) => {
  it.effect("classRow reads a row as the resource: its checks applied, JSON text parsed as written, NULL kept, optional left out", () =>
    Effect.gen(function*() {
      const sql = yield* setUp
      const byId = Statements.findOne({
        Request: Schema.String,
        Result: Statements.classRow(Widget, { json: ["settings", "extra"] }),
        execute: (id) => sql`SELECT ${columns(sql)} FROM test_widgets WHERE id = ${id}`
      })
      const first = yield* byId("wdg_1")
      expect(Option.isSome(first) && first.value).toBeInstanceOf(Widget)
      expect(Option.getOrThrow(first)).toEqual(new Widget({
        id: "wdg_1",
        name: "First",
        settings: { auto_import: true, max_size: 10 },
        extra: { note_text: "hello" },
        createdAt: new Date("2030-01-01T00:00:00Z")
      }))
      expect(yield* byId("wdg_9")).toEqual(Option.none())
      // 'Se' fails the name's check: a bug of ours, a defect, not a failure the caller handles.
      const exit = yield* Effect.exit(byId("wdg_2"))
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause) && !Cause.hasFails(exit.cause)).toBe(true)
      expect(Schema.isSchemaError(defectOf(exit))).toBe(true)
    }))

  it.effect("trustedClassRow makes the resource without its checks, JSON text parsed; findAll reads every row", () =>
    Effect.gen(function*() {
      const sql = yield* setUp
      const all = Statements.findAll({
        Request: Schema.Void,
        Result: Statements.trustedClassRow(Widget, { json: ["settings", "extra"] }),
        execute: () => sql`SELECT ${columns(sql)} FROM test_widgets ORDER BY id`
      })
      const rows = yield* all(undefined)
      expect(rows.map((row) => row instanceof Widget)).toEqual([true, true])
      expect(rows.map((row) => [row.name, row.settings, row.extra])).toEqual([
        ["First", { auto_import: true, max_size: 10 }, { note_text: "hello" }],
        ["Se", { auto_import: false, max_size: 2 }, null]
      ])
    }))

  it.effect("single finds its row or dies; execute encodes its request (Req[\"Encoded\"]) before the statement", () =>
    Effect.gen(function*() {
      const sql = yield* setUp
      const rename = Statements.execute({
        Request: Schema.Struct({ id: Schema.String, size: Schema.NumberFromString }),
        execute: (request) => {
          // The encoded side: the size as the text the schema writes.
          expect(typeof request.size).toBe("string")
          return sql`UPDATE test_widgets SET name = ${`Size ${request.size}`} WHERE id = ${request.id}`
        }
      })
      yield* rename({ id: "wdg_1", size: 12 })
      const name = Statements.single({
        Request: Schema.String,
        Result: Schema.Struct({ name: Schema.String }),
        execute: (id) => sql`SELECT name FROM test_widgets WHERE id = ${id}`
      })
      expect(yield* name("wdg_1")).toEqual({ name: "Size 12" })
      const missing = yield* Effect.exit(name("wdg_9"))
      expect(Exit.isFailure(missing) && Cause.hasDies(missing.cause) && Cause.isNoSuchElementError(defectOf(missing))).toBe(true)
      // A storage failure stays a typed failure.
      const broken = Statements.findAll({ Request: Schema.Void, Result: Schema.Unknown, execute: () => sql`SELEC 1` })
      expect(SqlErrors.isSqlError(yield* Effect.flip(broken(undefined)))).toBe(true)
    }))

  it.effect("withColumns reads the resource and the columns beside it; a Fragment goes into a request as it is", () =>
    Effect.gen(function*() {
      const sql = yield* setUp
      const ranked = Statements.findAll({
        Request: Schema.Struct({ where: Statements.Fragment }),
        Result: Statements.withColumns(Statements.trustedClassRow(Widget, { json: ["settings", "extra"] }), { accessRank: Schema.Int }),
        execute: ({ where }) => sql`SELECT 3 AS access_rank, ${columns(sql)} FROM test_widgets WHERE ${where} ORDER BY id`
      })
      const rows = yield* ranked({ where: sql`name = ${"First"}` })
      expect(rows).toHaveLength(1)
      expect(rows[0]!.accessRank).toBe(3)
      expect(rows[0]!.row).toBeInstanceOf(Widget)
      expect(rows[0]!.row.id).toBe("wdg_1")
      const badRank = Statements.findAll({
        Request: Schema.Void,
        Result: Statements.withColumns(Statements.trustedClassRow(Widget, { json: ["settings", "extra"] }), { accessRank: Schema.Int }),
        execute: () => sql`SELECT 'high' AS access_rank, ${columns(sql)} FROM test_widgets`
      })
      expect(Schema.isSchemaError(defectOf(yield* Effect.exit(badRank(undefined))))).toBe(true)
    }))

  it.effect("classRow reads an API resource class of @orgplane/schema (Team) from its columns", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const id = "tem_01h455vb4pex5vsknk084sn02q"
      const organizationId = "org_01h455vb4pex5vsknk084sn02q"
      const team = Statements.single({
        Request: TeamId,
        Result: Statements.classRow(Team),
        execute: (id) =>
          sql`SELECT ${id} AS id, ${organizationId} AS organization_id, 'Platform' AS name, ARRAY[]::text[] AS member_ids,
            NULL AS created_by_org_membership_id, NULL AS external_key, NULL AS scim_connection_id,
            '2030-01-01T00:00:00Z'::timestamptz AS created_at, '2030-01-01T00:00:00Z'::timestamptz AS updated_at`
      })
      const read = yield* team(Schema.decodeUnknownSync(TeamId)(id))
      expect(read).toBeInstanceOf(Team)
      expect(read.createdAt).toEqual(new Date("2030-01-01T00:00:00Z"))
      expect(Schema.encodeSync(Team)(read)).toMatchObject({ id, name: "Platform", createdAt: "2030-01-01T00:00:00.000Z" })
    }))

  it.effect("likePattern: % and _ match themselves in a containment search", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ text: string }>`SELECT text FROM (VALUES ('100% sure'), ('1000 sure'), ('a_b'), ('axb')) AS t(text)
        WHERE text ILIKE ${Statements.likePattern("0%")} OR text ILIKE ${Statements.likePattern("a_")} ORDER BY text`
      expect(rows.map((row) => row.text)).toEqual(["100% sure", "a_b"])
    }))

  it.effect("deleteInBatches deletes batch after batch until one is not full, or at most `batches` statements", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE test_batches (id int PRIMARY KEY)`
      const fill = sql`INSERT INTO test_batches SELECT generate_series(1, 25)`
      let statements = 0
      const batch = (limit: number) =>
        Effect.map(
          Effect.tap(sql<{ n: number }>`WITH gone AS (DELETE FROM test_batches WHERE id IN (SELECT id FROM test_batches LIMIT ${limit}) RETURNING id)
            SELECT count(*)::int AS n FROM gone`, () => Effect.sync(() => void statements++)),
          ([row]) => row!.n
        )
      yield* fill
      expect(yield* Statements.deleteInBatches(batch, { batch: 10 })).toBe(25)
      expect(statements).toBe(3)
      yield* fill
      statements = 0
      expect(yield* Statements.deleteInBatches(batch, { batch: 10, batches: 2 })).toBe(20)
      expect(statements).toBe(2)
    }))
})

/** `value` with its objects as the server's are (the generated ones have no prototype). */
const plain = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(plain)
    : typeof value === "object" && value !== null && Object.getPrototypeOf(value) === null
    ? Object.fromEntries(Object.entries(value).map(([key, member]) => [key, plain(member)]))
    : value

describe("a statement's request that is its own encoding", () => {
  // Requests as the server's statements declare them: ids, texts, dates, nulls, lists, fragments.
  const asThemselves = {
    "ids and dates": Schema.Struct({ id: TeamId, name: Schema.String, at: Statements.DateColumn }),
    "nulls, optional keys, literals": Schema.Struct({
      note: Schema.NullOr(Schema.String),
      label: Schema.optionalKey(Schema.String),
      kind: Schema.Literals(["a", "b"])
    }),
    "lists, records, unions": Schema.Struct({
      ids: Schema.Array(TeamId),
      counts: Schema.Record(Schema.String, Schema.Number),
      either: Schema.Union([Schema.Number, Schema.Struct({ at: Statements.DateColumn })])
    }),
    "checked texts": Schema.Struct({ name: Schema.String.check(Schema.isMinLength(3)) }),
    "a single id": TeamId
  }
  // And requests with an encoding of their own, which must still be encoded.
  const encoded = {
    "a class": Widget,
    "a JSON string": Schema.fromJsonString(Schema.Struct({ a: Schema.Number })),
    "renamed keys": Schema.Struct({ fullName: Schema.String }).pipe(Schema.encodeKeys({ fullName: "full_name" })),
    "a number from a string, nested": Schema.Struct({ inner: Schema.Array(Schema.NumberFromString) }),
    "a decoding default": Schema.Struct({ size: Schema.Number.pipe(Schema.optionalKey, Schema.withDecodingDefaultKey(Effect.succeed(1))) })
  }

  it("tells the two apart", () => {
    expect(Object.fromEntries(Object.entries(asThemselves).map(([name, schema]) => [name, Statements.encodesAsItself(schema.ast)])))
      .toEqual(Object.fromEntries(Object.keys(asThemselves).map((name) => [name, true])))
    expect(Object.fromEntries(Object.entries(encoded).map(([name, schema]) => [name, Statements.encodesAsItself(schema.ast)])))
      .toEqual(Object.fromEntries(Object.keys(encoded).map((name) => [name, false])))
  })

  it("sends what Schema's encoding would, for values generated from each schema it sends as they are", () =>
    Effect.gen(function*() {
      for (const [name, schema] of Object.entries(asThemselves)) {
        const encode = Schema.encodeUnknownSync(schema)
        const result = yield* Arbitrary.checkEffect(
          Arbitrary.schema(Schema.toType(schema)),
          (value) => isDeepStrictEqual(encode(value), plain(value)),
          { runs: 50, seed: name }
        )
        expect({ name, failure: Arbitrary.formatCheckFailure(result) }).toEqual({ name, failure: undefined })
      }
    }).pipe(Effect.runPromise))
})

/**
 * platform/DumpStatements.ts's rule, alone: every statement the real dumper (`DatabaseDump.dumpOf`, PGlite's pg_dump)
 * writes for orgplane's real schema passes, whatever rows the tables hold (a property: text with quotes, semicolons,
 * dollar signs and comment marks, JSON, times, numbers and booleans in tables of several kinds); the same statements
 * mutated into something hostile (a second statement, another schema, a call, a setting's other value) are
 * refused, and so is every statement of the kinds a crafted dump tries (roles, COPY, DO, functions, extensions,
 * ALTER SYSTEM, other schemas, transaction control).
 */
import type { PGlite } from "@electric-sql/pglite"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as SqlMessageStorage from "effect/cluster/SqlMessageStorage"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as fc from "fast-check"
import * as AuditPartitions from "../src/audit/Partitions.js"
import * as Database from "../src/platform/Database.js"
import { dumpOf } from "../src/platform/DatabaseDump.js"
import * as Durable from "../src/platform/Durable.js"
import * as MonthlyPartitions from "../src/platform/MonthlyPartitions.js"
import * as TelemetryPartitions from "../src/telemetry/Partitions.js"
import { loadParser, type Parse, refusal, statements } from "../src/platform/DumpStatements.js"
import { embeddedMigrated } from "./support/TestDatabase.js"

let parse: Parse
let db: PGlite
let scope: Scope.Closeable
/** The statements of the real schema's dump, with a few rows. */
let genuine: ReadonlyArray<string>

/**
 * The statements of the database's dump now. PGlite's pg_dump leaves its snapshot's transaction open and its
 * settings (an empty search path) on the session: both are undone.
 */
const dumped = async () => {
  const { sql } = await dumpOf(db)
  await db.exec("ROLLBACK; RESET ALL")
  return statements(sql)
}

beforeAll(async () => {
  parse = await Effect.runPromise(loadParser)
  // The migrated schema, with the durable engine's tables, which a server makes at its start (platform/Durable.ts).
  scope = await Effect.runPromise(Scope.make())
  const embedded = await Effect.runPromise(
    Database.embedded({ dataDir: "memory", loadDataDir: await embeddedMigrated() }).pipe(Effect.provideService(Scope.Scope, scope))
  )
  db = embedded.db
  // And the monthly partitions it makes (audit/Partitions.ts, telemetry/Partitions.ts), with their indexes.
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(
      SqlMessageStorage.layerMigrations({ prefix: Durable.defaultPrefix }).pipe(Layer.provideMerge(Database.layerSocket(embedded.socketDir)))
    )
    const month = MonthlyPartitions.monthOf(new Date())
    yield* Effect.provide(Effect.andThen(AuditPartitions.ensureAhead, TelemetryPartitions.createRange(month - 1, month)), context)
  })))
  await db.exec(`
    INSERT INTO organizations (id, name, plan, created_at, updated_at, metadata)
      VALUES ('org_1', 'It''s; a -- name /* with */ $$ marks $a$', 'team', now(), now(), '{"a": [1, "b;c", null]}');
    INSERT INTO instance_settings (key, value) VALUES ('note', E'back\\\\slash and ''quote''');
  `)
  genuine = await dumped()
}, 120_000)

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
})

const refused = (statement: string) => refusal(statement, parse)

describe("DumpStatements.refusal", () => {
  it("passes every statement the dumper writes for orgplane's schema", () => {
    expect(genuine.length).toBeGreaterThan(500)
    // Of every kind the schema makes: the rule is held to each.
    const kinds = new Set(genuine.map((statement) => /^\w+ \w+/u.exec(statement)?.[0]))
    for (const kind of ["SET client_encoding", "SELECT pg_catalog", "CREATE TABLE", "CREATE SEQUENCE", "ALTER SEQUENCE", "ALTER TABLE", "CREATE INDEX", "CREATE UNIQUE", "ALTER INDEX", "CREATE FUNCTION", "CREATE TRIGGER", "INSERT INTO"]) {
      expect(kinds).toContain(kind)
    }
    expect(genuine.map((statement) => [statement.slice(0, 80), refused(statement)]).filter(([, why]) => why !== undefined)).toEqual([])
  })

  it("passes the dump of any rows the tables hold (property)", async () => {
    const text = fc.stringOf(fc.oneof(
      fc.constantFrom("'", "''", ";", "$$", "$a$", "--", "/*", "*/", "\\", "\"", "E'", "\n", "\t", " ", "é", "🙂"),
      fc.fullUnicode().filter((char) => char !== "\u0000")
    ))
    const json = fc.jsonValue().map((value) => JSON.stringify(value).replaceAll("\\u0000", ""))
    const time = fc.date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2200-01-01T00:00:00Z"), noInvalidDate: true })
    const row = fc.record({
      name: text,
      metadata: json,
      provisional: fc.boolean(),
      created: time,
      id: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
      kind: fc.integer(),
      payload: fc.option(text, { nil: null })
    })
    await fc.assert(
      // Rows of distinct ids: the messages' id is their primary key.
      fc.asyncProperty(fc.uniqueArray(row, { minLength: 1, maxLength: 5, selector: (value) => value.id }), async (rows) => {
        await db.exec("DELETE FROM instance_settings WHERE key LIKE 'prop_%'; DELETE FROM organizations WHERE id LIKE 'prop_%'; DELETE FROM orgplane_cluster_messages WHERE shard_id = 'prop'")
        for (const [index, value] of rows.entries()) {
          await db.query(
            "INSERT INTO organizations (id, name, plan, provisional, created_at, updated_at, metadata) VALUES ($1, $2, 'free', $3, $4, $4, $5)",
            [`prop_${index}`, value.name, value.provisional, value.created, value.metadata]
          )
          await db.query("INSERT INTO instance_settings (key, value) VALUES ($1, $2)", [`prop_${index}`, value.name])
          await db.query(
            "INSERT INTO orgplane_cluster_messages (id, rowid, shard_id, entity_type, entity_id, kind, payload, request_id, last_read, deliver_at, sampled) VALUES ($1, $2, 'prop', $3, $3, $4, $5, $1, $6, $1, $7)",
            [String(value.id), index, value.name.slice(0, 100), value.kind, value.payload, value.created, value.provisional]
          )
        }
        const all = await dumped()
        expect(all.filter((statement) => statement.startsWith("INSERT INTO public.orgplane_cluster_messages VALUES")).length).toBeGreaterThanOrEqual(rows.length)
        const failing = all.map((statement) => [statement.slice(0, 120), refused(statement)]).filter(([, why]) => why !== undefined)
        expect(failing).toEqual([])
      }),
      { numRuns: 12 }
    )
  }, 180_000)

  /** Ways to turn a genuine statement into a hostile one: each answers the changed statement, or undefined where it does not apply. */
  const mutations: ReadonlyArray<readonly [string, (statement: string) => string | undefined]> = [
    ["a second statement after it", (statement) => `${statement}; CREATE ROLE intruder SUPERUSER`],
    ["a second statement before it", (statement) => `COPY (SELECT 1) TO PROGRAM 'id'; ${statement}`],
    ["another schema for public", (statement) => statement.includes("public.") ? statement.replace("public.", "pg_catalog.") : undefined],
    ["an unqualified name for public's", (statement) => /^(CREATE TABLE|INSERT INTO|ALTER TABLE ONLY) public\./u.test(statement) ? statement.replace("public.", "") : undefined],
    [
      "a call in a row's value",
      (statement) => statement.startsWith("INSERT INTO") ? statement.replace(/VALUES \(/u, "VALUES (pg_catalog.pg_read_file('/etc/passwd'), ") : undefined
    ],
    ["a subquery in a row's value", (statement) => statement.startsWith("INSERT INTO") ? statement.replace(/VALUES \(/u, "VALUES ((SELECT rolpassword FROM pg_catalog.pg_authid LIMIT 1), ") : undefined],
    [
      "a default that calls a function",
      (statement) => statement.startsWith("CREATE TABLE") && statement.includes("(\n") ? statement.replace("(\n", "(\n    intruder text DEFAULT pg_catalog.pg_read_file('/etc/passwd'),\n") : undefined
    ],
    [
      "a check that writes a file",
      (statement) =>
        statement.startsWith("CREATE TABLE") && statement.includes("(\n")
          ? statement.replace("(\n", "(\n    CONSTRAINT intruder CHECK (pg_catalog.lo_export(pg_catalog.lo_from_bytea(0, '\\x00'::bytea), '/tmp/x') > 0),\n")
          : undefined
    ],
    ["an index over a function of its own", (statement) => /^CREATE (UNIQUE )?INDEX/u.test(statement) ? statement.replace(/USING (\w+) \(/u, "USING $1 (public.intruder(id), ") : undefined],
    ["a setting's other value", (statement) => statement.startsWith("SET client_encoding") ? "SET client_encoding = 'SJIS'" : statement.startsWith("SET standard_conforming_strings") ? "SET standard_conforming_strings = off" : undefined],
    ["another setting", (statement) => statement.startsWith("SET ") ? statement.replace(/^SET \w+/u, "SET session_authorization") : undefined],
    ["another function selected", (statement) => statement.startsWith("SELECT pg_catalog.") ? statement.replace(/pg_catalog\.\w+/u, "pg_catalog.pg_reload_conf") : undefined],
    ["a function's other body", (statement) => statement.startsWith("CREATE FUNCTION") ? statement.replace("RETURN OLD;", "EXECUTE 'CREATE ROLE intruder SUPERUSER'; RETURN OLD;") : undefined],
    ["a trigger on another event", (statement) => statement.startsWith("CREATE TRIGGER") ? statement.replace("BEFORE DELETE", "BEFORE INSERT OR DELETE") : undefined],
    [
      "an ALTER TABLE doing otherwise",
      (statement) => /^ALTER TABLE ONLY \S+\s+ADD CONSTRAINT /u.test(statement) ? statement.replace(/\s+ADD CONSTRAINT [\s\S]*$/u, " OWNER TO intruder") : undefined
    ]
  ]

  it("refuses the dump's statements mutated into something hostile (property)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...genuine), fc.constantFrom(...mutations), (statement, [, mutate]) => {
        const mutated = mutate(statement)
        fc.pre(mutated !== undefined && mutated !== statement)
        expect(refused(mutated!)).toBeDefined()
      }),
      { numRuns: 2000 }
    )
  })

  it("refuses each mutation somewhere it applies", () => {
    for (const [what, mutate] of mutations) {
      const applied = genuine.map(mutate).filter((mutated): mutated is string => mutated !== undefined)
      expect(applied.length, what).toBeGreaterThan(0)
      expect(applied.filter((mutated) => refused(mutated) === undefined), what).toEqual([])
    }
  })

  it("refuses what a crafted dump tries, each saying what it is", () => {
    const name = fc.stringMatching(/^[a-z_][a-z0-9_]{0,20}$/u)
    const hostile = fc.oneof(
      name.map((role) => `CREATE ROLE ${role} SUPERUSER LOGIN`),
      name.map((role) => `ALTER ROLE ${role} SUPERUSER`),
      name.map((role) => `GRANT pg_execute_server_program TO ${role}`),
      name.map((file) => `COPY (SELECT 1) TO PROGRAM 'touch /tmp/${file}'`),
      name.map((file) => `COPY public.users TO '/tmp/${file}'`),
      name.map((file) => `COPY public.users FROM PROGRAM 'cat /tmp/${file}'`),
      name.map((role) => `DO $$BEGIN EXECUTE 'CREATE ROLE ${role} SUPERUSER'; END$$`),
      name.map((fn) => `CREATE FUNCTION public.${fn}() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$`),
      name.map((fn) => `CREATE TRIGGER ${fn} BEFORE INSERT ON public.users FOR EACH ROW EXECUTE FUNCTION public.cancel_api_key_invitations()`),
      name.map((ext) => `CREATE EXTENSION ${ext}`),
      fc.constant("ALTER SYSTEM SET shared_preload_libraries = 'evil'"),
      name.map((schema) => `CREATE SCHEMA ${schema}`),
      name.map((table) => `CREATE TABLE ${table}.t (id int)`),
      name.map((table) => `CREATE TABLE information_schema.${table} (id int)`),
      name.map((table) => `CREATE TABLE public.${table} (id int) INHERITS (pg_catalog.pg_authid)`),
      name.map((view) => `CREATE VIEW public.${view} AS SELECT * FROM pg_catalog.pg_authid`),
      name.map((table) => `INSERT INTO pg_catalog.pg_authid (rolname) VALUES ('${table}')`),
      name.map((table) => `UPDATE public.users SET email = '${table}'`),
      name.map((table) => `DROP TABLE public.${table}`),
      fc.constantFrom(
        "COMMIT",
        "BEGIN",
        "SET ROLE postgres",
        "RESET ALL",
        "SET search_path = public",
        "SELECT pg_catalog.pg_read_file('/etc/passwd')",
        "SELECT pg_catalog.set_config('search_path', 'public', false)",
        "SELECT pg_catalog.setval('pg_catalog.x', 1, true)",
        "SELECT pg_catalog.lo_import('/etc/passwd')",
        "LOAD 'evil'",
        "CHECKPOINT",
        "VACUUM",
        "CALL public.intruder()",
        "LISTEN x",
        "PREPARE p AS SELECT 1",
        "CREATE LANGUAGE plperlu",
        "CREATE OPERATOR public.=== (FUNCTION = pg_catalog.texteq, LEFTARG = text, RIGHTARG = text)",
        "CREATE CAST (text AS int) WITH INOUT",
        "COMMENT ON TABLE public.users IS 'x'",
        "TRUNCATE public.users",
        "SELECT 1; SELECT 2",
        "not sql at all"
      )
    )
    fc.assert(fc.property(hostile, (statement) => {
      const why = refused(statement)
      expect(why, statement).toBeDefined()
      expect(why).not.toBe("")
    }), { numRuns: 500 })
  })

  it("says why in words", () => {
    expect(refused("CREATE ROLE intruder SUPERUSER")).toBe("a CreateRoleStmt")
    expect(refused("COPY (SELECT 1) TO PROGRAM 'id'")).toBe("a CopyStmt")
    expect(refused("INSERT INTO public.t VALUES (pg_catalog.pg_read_file('/etc/passwd'))")).toBe("a row value that is a FuncCall")
    expect(refused("CREATE TABLE other.t (id int)")).toBe("other.t, outside schema public")
    expect(refused("CREATE TABLE public.t (id int DEFAULT public.f())")).toBe("a call of public.f()")
    expect(refused("SET client_encoding = 'SJIS'")).toBe("a setting pg_dump does not write (client_encoding)")
    expect(refused("SELECT 1; SELECT 2")).toBe("it is 2 statements, not one")
  })
})

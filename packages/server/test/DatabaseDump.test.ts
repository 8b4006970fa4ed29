/**
 * platform/DatabaseDump.ts without a database: pg_dump's SQL read statement by statement (a semicolon in a string,
 * a quoted name, a dollar-quoted body or a comment ends nothing; psql's meta-commands are left out), and the dumps a
 * restore refuses before it connects (not orgplane's, of a newer schema). The whole move, on a real Postgres, is
 * packages/cli/test/DatabaseMove.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { restore, statements } from "../src/platform/DatabaseDump.js"

describe("DatabaseDump.statements", () => {
  it("splits at the semicolons that end statements, and nowhere else", () => {
    const sql = [
      "--",
      "-- PostgreSQL database dump",
      "--",
      "\\restrict abc",
      "SET statement_timeout = 0;",
      "SELECT pg_catalog.set_config('search_path', '', false);",
      "CREATE FUNCTION public.f() RETURNS trigger LANGUAGE plpgsql AS $_$ BEGIN PERFORM 1; RETURN NEW; END $_$;",
      "CREATE TABLE public.\"odd;name\" (\"a\"\"b\" text);",
      "INSERT INTO public.t VALUES (1, 'it''s; fine', E'back\\\\slash\\'; quote', '-- not a comment', '/* nor this */');",
      "/* a comment; with a semicolon */ INSERT INTO public.t VALUES (2, $$dollar; body$$);",
      "INSERT INTO public.t VALUES (3, 'many",
      "lines;",
      "here');",
      "-- PostgreSQL database dump complete",
      ""
    ].join("\n")
    expect(statements(sql)).toEqual([
      "SET statement_timeout = 0",
      "SELECT pg_catalog.set_config('search_path', '', false)",
      "CREATE FUNCTION public.f() RETURNS trigger LANGUAGE plpgsql AS $_$ BEGIN PERFORM 1; RETURN NEW; END $_$",
      "CREATE TABLE public.\"odd;name\" (\"a\"\"b\" text)",
      "INSERT INTO public.t VALUES (1, 'it''s; fine', E'back\\\\slash\\'; quote', '-- not a comment', '/* nor this */')",
      "/* a comment; with a semicolon */ INSERT INTO public.t VALUES (2, $$dollar; body$$)",
      "INSERT INTO public.t VALUES (3, 'many\nlines;\nhere')"
    ])
  })
})

describe("DatabaseDump.restore", () => {
  // Nothing listens here: a restore that got as far as connecting would fail with a SqlError instead.
  const nowhere = Redacted.make("postgres://nobody@127.0.0.1:1/none")

  it.effect("refuses a file that is not a dump of orgplane db dump", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(restore({ url: nowhere }, "CREATE TABLE t (id int);\n", 100))
      expect(refused._tag).toBe("RestoreRefused")
      expect(refused.message).toContain("not a dump of `orgplane db dump`")
    }))

  it.effect("refuses a dump of a newer schema than this version knows", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(restore({ url: nowhere }, "-- orgplane database dump\n-- orgplane schema version: 101\nSELECT 1;\n", 100))
      expect(refused._tag).toBe("RestoreRefused")
      expect(refused.message).toContain("schema version 101, newer than this orgplane's (100)")
    }))
})

/**
 * platform/DatabaseDump.ts without a database: pg_dump's SQL read statement by statement (a semicolon in a string,
 * a quoted name, a dollar-quoted body or a comment ends nothing; psql's meta-commands are left out), a dump's
 * signature (platform/DumpSignature.ts: over all of it, with the key its line names among a ring's), and the dumps a
 * restore refuses before it connects (not orgplane's, unsigned, altered, signed with a key it does not hold, with
 * no key to check, of a newer schema, holding a statement pg_dump does not write). The statements' rule is
 * test/DumpStatements.test.ts; the whole move, on a real Postgres, is packages/cli/test/DatabaseMove.test.ts, and
 * the refusals through the commands packages/cli/test/DatabaseDumpTrust.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as NodeCrypto from "node:crypto"
import type { EncryptionKey } from "../src/platform/Crypto.js"
import { restore } from "../src/platform/DatabaseDump.js"
import * as DumpSignature from "../src/platform/DumpSignature.js"
import { statements } from "../src/platform/DumpStatements.js"

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

const keyOf = (id: string): EncryptionKey => ({ id, key: NodeCrypto.randomBytes(32) })

describe("DumpSignature", () => {
  const current = keyOf("k2")
  const older = keyOf("local")
  const body = "-- orgplane database dump\n-- orgplane schema version: 1\nSELECT 1;\n"

  it("signs all of a dump in its last line, naming the key, and checks it with the key of that id among a ring's", () => {
    const signed = DumpSignature.sign(body, older)
    expect(signed.startsWith(body)).toBe(true)
    expect(signed.slice(body.length)).toMatch(/^-- orgplane signature: hmac-sha256 key "local" [A-Za-z0-9_-]{43}\n$/u)
    // An older key of the ring still verifies while the ring holds it.
    expect(DumpSignature.verify(signed, [current, older])).toEqual({ _tag: "Signed", keyId: "local", body })
    expect(DumpSignature.verify(signed, [current])).toEqual({ _tag: "UnknownKey", keyId: "local" })
    expect(DumpSignature.verify(signed, [{ id: "local", key: current.key }])).toEqual({ _tag: "Altered", keyId: "local" })
  })

  it("finds a dump altered anywhere, cut short, or with lines after its signature", () => {
    const signed = DumpSignature.sign(body, current)
    expect(DumpSignature.verify(signed.replace("SELECT 1", "SELECT 2"), [current])._tag).toBe("Altered")
    expect(DumpSignature.verify(signed.replace("version: 1", "version: 2"), [current])._tag).toBe("Altered")
    expect(DumpSignature.verify(`\n${signed}`, [current])._tag).toBe("Altered")
    expect(DumpSignature.verify(`${signed}SELECT 3;\n`, [current])._tag).toBe("Unsigned")
    expect(DumpSignature.verify(signed.slice(0, -20), [current])._tag).toBe("Unsigned")
    expect(DumpSignature.verify(body, [current])._tag).toBe("Unsigned")
  })
})

describe("DatabaseDump.restore", () => {
  // Nothing listens here: a restore that got as far as connecting would fail with a SqlError instead.
  const nowhere = Redacted.make("postgres://nobody@127.0.0.1:1/none")
  const key = keyOf("local")
  const keys = { keys: [key], origin: "ORGPLANE_ENCRYPTION_KEYS" }
  const dump = (version: number, ...lines: ReadonlyArray<string>) =>
    DumpSignature.sign(["-- orgplane database dump", `-- orgplane schema version: ${version}`, ...lines, ""].join("\n"), key)

  const refusal = (text: string, given = keys) => Effect.flip(restore({ url: nowhere }, text, 100, given))

  it.effect("refuses a file that is not a dump of orgplane db dump", () =>
    Effect.gen(function*() {
      const refused = yield* refusal("CREATE TABLE t (id int);\n")
      expect(refused._tag).toBe("RestoreRefused")
      expect(refused.message).toContain("not a dump of `orgplane db dump`")
    }))

  it.effect("refuses an unsigned dump, saying to dump again with this version", () =>
    Effect.gen(function*() {
      const refused = yield* refusal("-- orgplane database dump\n-- orgplane schema version: 1\nSELECT 1;\n")
      expect(refused.message).toContain("The dump is not signed")
      expect(refused.message).toContain("dump the database again with this version")
    }))

  it.effect("refuses a dump when there is no key to check it with, an unknown key's, and an altered one", () =>
    Effect.gen(function*() {
      expect((yield* refusal(dump(1), { keys: [], origin: "ORGPLANE_ENCRYPTION_KEYS" })).message).toContain("There is no key to check the dump's signature with")
      expect((yield* refusal(dump(1), { keys: [keyOf("other")], origin: "ORGPLANE_ENCRYPTION_KEYS" })).message).toContain(
        `signed with key "local", which ORGPLANE_ENCRYPTION_KEYS does not hold (it holds "other")`
      )
      expect((yield* refusal(dump(1).replace("version: 1", "version: 2"))).message).toContain("was altered after it was written")
    }))

  it.effect("refuses a signed dump holding a statement pg_dump does not write for orgplane's schema", () =>
    Effect.gen(function*() {
      const refused = yield* refusal(dump(1, "SET client_encoding = 'UTF8';", "CREATE ROLE intruder SUPERUSER;"))
      expect(refused.message).toContain("The dump holds a statement pg_dump does not write for orgplane's schema (a CreateRoleStmt): CREATE ROLE intruder SUPERUSER")
    }))

  it.effect("refuses a dump of a newer schema than this version knows", () =>
    Effect.gen(function*() {
      const refused = yield* refusal(dump(101, "SELECT pg_catalog.set_config('search_path', '', false);"))
      expect(refused._tag).toBe("RestoreRefused")
      expect(refused.message).toContain("schema version 101, newer than this orgplane's (100)")
    }))
})

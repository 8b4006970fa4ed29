/**
 * platform/Keyset.ts's `page` on a table the test creates, on a real database: what http/Paging.test.ts holds over
 * HTTP, at the module's level (a name-sorted list in its order, case-insensitively;
 * long names of any script; a cursor refused by another list, other filters, another instance's key, or when
 * tampered with or made by hand; the page size not a filter; `follow`), and its cursors byte for byte 0.1.0's
 * format (`base64url(key parts joined with NUL) + "." + base64url(16 bytes of HMAC)`), so a cursor a 0.1.0 server
 * handed out reads the next page here: the signatures below are the ones 0.1.0 made under the instance key of fixed
 * bytes (recorded from its code; they are never re-recorded).
 */
import { expect, layer } from "@effect/vitest"
import { InvalidRequest } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import * as Keyset from "../src/platform/Keyset.js"
import * as TestDatabase from "./support/TestDatabase.js"

interface Team {
  readonly id: string
  readonly name: string
}

const byName = Keyset.make<Team>("teams", "asc", [
  { column: "lower(t.name)", value: (team) => team.name, compare: (value, sql) => sql`lower(${value})` },
  { column: "t.id", value: (team) => team.id }
])
/** Another list sorted the same way. */
const otherList = Keyset.make<Team>("invitations", "asc", byName.parts)
const newest = Keyset.make<Team>("teams-by-id", "desc", [{ column: "t.id", value: (team) => team.id }])

/** The instance's cursor key: fixed bytes, the ones 0.1.0's signatures below were made under. */
const key = Buffer.from("6f7267706c616e652d6b65797365742d746573742d637572736f722d6b657921", "hex")

/** The signatures 0.1.0's server made under `key` (16 bytes of HMAC, base64url), by the message signed. */
const signedBy010: ReadonlyMap<string, string> = new Map([
  ["teams\n[[\"q\",\"a\"]]\nQWxwaGEAdGVtXzE", "-3AHcdmDflNhnSquZoB6OA"],
  ["teams\n[]\nQWxwaGE", "hs17RlIGuhqvXRkJ-oOk6A"],
  ["teams\n[]\nYmV0YQB0ZW1fMg", "-B26G4gcaMcN_lyNVI_82Q"]
])

/** 0.1.0's signature over `message`. */
const signatureBy010 = (message: string) => {
  const signature = signedBy010.get(message)
  if (signature === undefined) throw new Error(`0.1.0 signed no ${JSON.stringify(message)} here`)
  return signature
}

const badCursor = { details: [{ message: "is not a cursor returned by this list with these filters", path: ["cursor"] }] }

const setUp = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS test_teams (id text PRIMARY KEY, name text NOT NULL)`
  yield* sql`DELETE FROM test_teams`
  yield* sql`INSERT INTO test_teams VALUES ('tem_1', 'Alpha'), ('tem_2', 'beta'), ('tem_3', 'Gamma'), ('tem_4', 'delta')`
  return sql
})

/** One page of `keyset` over the test table, with `query`'s filter (`q`: a name containing it). */
const page = (
  keyset: Keyset.Keyset<Team>,
  query: Keyset.PageQuery & { readonly q?: string | undefined },
  options?: { readonly follow?: boolean; readonly key?: Buffer }
) =>
  Keyset.page(keyset, query, (request) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<Team>`SELECT t.id, t.name FROM test_teams t
        WHERE ${request.after} AND ${query.q === undefined ? sql`true` : sql`t.name LIKE ${`%${query.q}%`}`}
        ORDER BY ${request.orderBy} LIMIT ${request.fetch}`
    }), options).pipe(
    Effect.provideService(Keyset.CursorKey, options?.key ?? key)
  )

/** Every item of a list, page by page. */
const all = (keyset: Keyset.Keyset<Team>, query: { readonly q?: string; readonly limit: number }) =>
  Effect.gen(function*() {
    const items: Array<Team> = []
    let cursor: string | null = null
    do {
      const result: { readonly items: ReadonlyArray<Team>; readonly nextCursor: string | null } = yield* page(
        keyset,
        cursor === null ? query : { ...query, cursor }
      )
      items.push(...result.items)
      cursor = result.nextCursor
    } while (cursor !== null)
    return items
  })

const refused = (effect: Effect.Effect<unknown, unknown, SqlClient.SqlClient>) =>
  Effect.map(Effect.flip(effect), (error) => {
    expect(error).toBeInstanceOf(InvalidRequest)
    expect(error).toMatchObject(badCursor)
  })

layer(Layer.unwrap(TestDatabase.layer()), { timeout: 60_000, excludeTestServices: true })(`Keyset on ${TestDatabase.kind}`, (it) => {
  it.effect("pages a name-sorted list in its order, case-insensitively, without repeats or gaps", () =>
    Effect.gen(function*() {
      yield* setUp
      expect((yield* all(byName, { limit: 1 })).map((team) => team.name)).toEqual(["Alpha", "beta", "delta", "Gamma"])
      expect((yield* all(byName, { limit: 3 })).map((team) => team.name)).toEqual(["Alpha", "beta", "delta", "Gamma"])
      expect((yield* all(newest, { limit: 3 })).map((team) => team.id)).toEqual(["tem_4", "tem_3", "tem_2", "tem_1"])
      const last = yield* page(byName, { limit: 4 })
      expect(last.nextCursor).toBeNull()
    }))

  it.effect("carries long names of any script (the cursor holds the sort key)", () =>
    Effect.gen(function*() {
      const sql = yield* setUp
      const names = ["é".repeat(255), "日".repeat(255), "😀".repeat(127)]
      for (const [i, name] of names.entries()) yield* sql`INSERT INTO test_teams VALUES (${`tem_x${i}`}, ${name})`
      expect((yield* all(byName, { q: "日", limit: 1 })).map((team) => team.name)).toEqual([names[1]])
      expect((yield* all(byName, { limit: 2 })).map((team) => team.name)).toEqual(expect.arrayContaining(names))
      expect(yield* all(byName, { limit: 2 })).toHaveLength(7)
    }))

  it.effect("writes 0.1.0's cursors: the sort key, NUL-joined, and the signature over list, filters and key; a cursor 0.1.0 handed out reads on", () =>
    Effect.gen(function*() {
      yield* setUp
      const first = yield* page(byName, { limit: 1, q: "a" })
      const payload = Buffer.from(["Alpha", "tem_1"].join("\u0000"), "utf8").toString("base64url")
      const filters = JSON.stringify([["q", "a"]])
      expect(first.nextCursor).toBe(`${payload}.${signatureBy010(`teams\n${filters}\n${payload}`)}`)
      // A cursor 0.1.0 handed out, for a page this server never handed out, reads its next page.
      const made = Buffer.from(["beta", "tem_2"].join("\u0000"), "utf8").toString("base64url")
      const cursor = `${made}.${signatureBy010(`teams\n${JSON.stringify([])}\n${made}`)}`
      const next = yield* page(byName, { limit: 10, cursor })
      expect(next.items.map((team) => team.name)).toEqual(["delta", "Gamma"])
    }))

  it.effect("refuses a cursor of another list, even one sorted the same way", () =>
    Effect.gen(function*() {
      yield* setUp
      const first = yield* page(byName, { limit: 1 })
      expect(first.nextCursor).not.toBeNull()
      yield* refused(page(otherList, { cursor: first.nextCursor! }))
    }))

  it.effect("refuses a cursor with other filters than the ones that issued it; the page size is not a filter", () =>
    Effect.gen(function*() {
      yield* setUp
      const first = yield* page(byName, { limit: 1 })
      const cursor = first.nextCursor!
      expect((yield* page(byName, { limit: 1, cursor })).items).toHaveLength(1)
      yield* refused(page(byName, { limit: 1, q: "a", cursor }))
      expect((yield* page(byName, { limit: 5, cursor })).items.map((team) => team.name)).toEqual(["beta", "delta", "Gamma"])
    }))

  it.effect("refuses a cursor tampered with or made by hand, even with a well-formed key", () =>
    Effect.gen(function*() {
      yield* setUp
      const cursor = (yield* page(byName, { limit: 1 })).nextCursor!
      const [payload, signature] = cursor.split(".")
      const forgedPayload = Buffer.from("aaaa\u0000tem_00000000000000000000000000").toString("base64url")
      for (
        const bad of [
          `${forgedPayload}.${signature}`,
          `${payload}.${signature![0] === "A" ? "B" : "A"}${signature!.slice(1)}`,
          `${payload}`,
          Buffer.from(JSON.stringify(["Alpha", "tem_00000000000000000000000000"])).toString("base64url"),
          // Signed, but with a sort key of another length.
          (() => {
            const one = Buffer.from("Alpha", "utf8").toString("base64url")
            return `${one}.${signatureBy010(`teams\n[]\n${one}`)}`
          })()
        ]
      ) {
        yield* refused(page(byName, { limit: 1, cursor: bad }))
      }
    }))

  it.effect("refuses a cursor of another instance (each instance signs with its own key)", () =>
    Effect.gen(function*() {
      yield* setUp
      const cursor = (yield* page(byName, { limit: 1 })).nextCursor!
      yield* refused(page(byName, { cursor }, { key: NodeCrypto.randomBytes(32) }))
    }))

  it.effect("follows a log: every page carries a cursor, the one it was given when nothing came since", () =>
    Effect.gen(function*() {
      const sql = yield* setUp
      const first = yield* page(newest, { limit: 10 }, { follow: true })
      expect(first.items).toHaveLength(4)
      expect(first.nextCursor).not.toBeNull()
      const empty = yield* page(newest, { limit: 10, cursor: first.nextCursor! }, { follow: true })
      expect(empty).toEqual({ items: [], nextCursor: first.nextCursor })
      yield* sql`INSERT INTO test_teams VALUES ('tem_0', 'Zero')`
      expect((yield* page(newest, { limit: 10, cursor: first.nextCursor! }, { follow: true })).items.map((team) => team.id)).toEqual(["tem_0"])
      expect((yield* page(newest, { limit: 10 })).nextCursor).toBeNull()
      expect(yield* page(newest, { limit: 10 }, { follow: true }).pipe(Effect.map((result) => result.nextCursor))).not.toBeNull()
    }))
})

/**
 * Pagination.ts: the page query every list reads (a cursor and a limit, each optional, the limit in plain digits from
 * 1 to 100) and the page every list answers (its items and the next cursor, or null).
 */
import { describe, expect, it } from "@effect/vitest"
import { Timestamp } from "../src/Common.js"
import * as Pagination from "../src/Pagination.js"
import { decode, encode, refuses, takes } from "./support/Decoding.js"
import { savedDocument } from "./support/SavedDocument.js"

describe("Pagination", () => {
  it("reads the page query: cursor and limit, each optional, limit in plain digits from 1 to 100", () => {
    takes(Pagination.PageQuery, [{}, { cursor: "abc" }, { limit: "20" }, { cursor: "abc", limit: "100" }, { cursor: "x".repeat(2048) }])
    refuses(Pagination.PageQuery, [
      { cursor: "" },
      { cursor: "x".repeat(2049) },
      { limit: "0" },
      { limit: "101" },
      { limit: "1e1" },
      { limit: 20 },
      { cursor: null }
    ])
    expect(decode(Pagination.PageQuery, { cursor: "abc", limit: "100" })).toEqual({ ok: true, value: { cursor: "abc", limit: 100 } })
    expect(encode(Pagination.PageQuery, { cursor: "abc", limit: 100 })).toEqual({ ok: true, value: { cursor: "abc", limit: "100" } })
    expect(decode(Pagination.Limit, "20")).toEqual({ ok: true, value: 20 })
    expect(Pagination.DEFAULT_LIMIT).toBe(50)
    // As the saved document says of every list's `limit`.
    expect(savedDocument).toMatchObject({
      paths: { "/v1/teams": { get: { parameters: expect.arrayContaining([expect.objectContaining({ name: "limit", schema: { type: "integer", minimum: 1, maximum: 100, description: "Page size, 1 to 100 (default 50)." } })]) } } }
    })
  })

  it("writes pages: items and a cursor or null", () => {
    const page = Pagination.Page(Timestamp)
    for (const input of [{ items: ["2026-11-02T09:30:00.000Z"], nextCursor: null }, { items: [], nextCursor: "abc" }]) {
      const decoded = decode(page, input)
      expect(decoded, JSON.stringify(input)).toMatchObject({ ok: true })
      if (decoded.ok) expect(encode(page, decoded.value)).toEqual({ ok: true, value: input })
    }
    refuses(page, [{ items: ["2026-11-02"], nextCursor: null }, { items: [], nextCursor: "" }, { items: [] }, { nextCursor: null }])
  })
})

import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { Timestamp } from "../src/Common.js"
import * as Pagination from "../src/Pagination.js"
import { componentSchema, decode3, decode4, encode3, encode4, jsonSchemaOf, normalise, parameterSchema } from "./differential.js"
import { type Effect3, effect3 } from "./effect3.js"

const Schema3 = effect3("effect/Schema")
const Common3 = effect3("Common")
const Pagination3 = effect3("Pagination")

const same = <A, I>(port: Schema.Codec<A, I>, original: Effect3, input: unknown) => {
  const ported = decode4(port, input)
  expect(ported.ok, JSON.stringify(input)).toBe(decode3(original, input).ok)
  return ported
}

describe("Pagination on Effect 4", () => {
  it("reads the page query as Effect 3: cursor and limit, each optional, limit in plain digits from 1 to 100", () => {
    const inputs = [
      {},
      { cursor: "abc" },
      { limit: "20" },
      { cursor: "abc", limit: "100" },
      { cursor: "" },
      { cursor: "x".repeat(2049) },
      { cursor: "x".repeat(2048) },
      { limit: "0" },
      { limit: "101" },
      { limit: "1e1" },
      { limit: 20 },
      { cursor: null }
    ]
    for (const input of inputs) {
      const ported = same(Pagination.PageQuery, Pagination3.PageQuery, input)
      if (ported.ok) {
        expect(ported.value).toEqual(Schema3.decodeUnknownSync(Pagination3.PageQuery)(input))
        expect(encode4(Pagination.PageQuery, ported.value)).toEqual(encode3(Pagination3.PageQuery, ported.value))
      }
    }
    expect(decode4(Pagination.Limit, "20")).toEqual({ ok: true, value: 20 })
    expect(Pagination.DEFAULT_LIMIT).toBe(Pagination3.DEFAULT_LIMIT)
  })

  it("writes pages as Effect 3: items and a cursor or null", () => {
    const page = Pagination.Page(Timestamp)
    const page3 = Pagination3.Page(Common3.Timestamp)
    for (const input of [
      { items: ["2026-11-02T09:30:00.000Z"], nextCursor: null },
      { items: [], nextCursor: "abc" },
      { items: ["2026-11-02"], nextCursor: null },
      { items: [], nextCursor: "" },
      { items: [] },
      { nextCursor: null }
    ]) {
      const ported = same(page, page3, input)
      if (ported.ok) expect(encode4(page, ported.value)).toEqual({ ok: true, value: input })
    }
  })

  it("gives the JSON Schema of the Effect 3 document", () => {
    expect(jsonSchemaOf(Pagination.Cursor)).toEqual(componentSchema("Cursor"))
    // A page of the document (TeamPage) with its item as a reference: the same shape as Page(item).
    const team = Schema.String.annotate({ identifier: "Team" })
    expect(jsonSchemaOf(Pagination.Page(team))).toEqual(componentSchema("TeamPage"))
    // The document adds the no-NUL pattern to each request string (Api.ts), and documents `limit` as an integer: the
    // latter is the QueryInteger difference (see Common.test.ts), left to the OpenAPI normalisation step.
    expect(parameterSchema("get", "/v1/teams", "cursor")).toEqual(normalise({ $ref: "#/components/schemas/Cursor", pattern: "^[^\\u0000]*$" }))
    expect(parameterSchema("get", "/v1/teams", "limit")).toEqual({ type: "integer", minimum: 1, maximum: 100, description: "Page size, 1 to 100 (default 50)." })
    expect(jsonSchemaOf(Pagination.Limit)).toEqual({
      type: "string",
      description: "Page size, 1 to 100 (default 50).",
      allOf: [{ type: "integer", minimum: 1, maximum: 100 }]
    })
  })
})

import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import * as Common from "../src/Common.js"
import { componentSchema, decode4, encode4, examplesOfComponent, jsonSchema3Of, jsonSchemaOf, parameterSchema, sameOn } from "./differential.js"
import { effect3 } from "./effect3.js"

const Schema3 = effect3("effect/Schema")
const Common3 = effect3("Common")

describe("Common on Effect 4", () => {
  it("Timestamp reads and writes what the Effect 3 one does", () => {
    const examples = examplesOfComponent("Timestamp")
    sameOn(Common.Timestamp, Common3.Timestamp, [
      ...examples,
      "2030-01-01T00:00:00Z",
      "2030-01-01t00:00:00.123456789z",
      "2030-01-01T00:00:00.5+02:00",
      "0099-03-01T12:00:00-05:30",
      "2030-02-31T00:00:00Z",
      "2030-01-01",
      "2030",
      "2030-01-01T24:00:00Z",
      "2030-01-01T00:00:00+24:00",
      "2030-01-01 00:00:00Z",
      "2030-01-01T00:00:00.1234567890Z",
      "",
      1893456000000,
      null
    ])
    expect(decode4(Common.Timestamp, "2030-02-31T00:00:00Z")).toMatchObject({ ok: false, message: expect.stringContaining("must be an ISO 8601 date-time") })
    // Written with Z and milliseconds; an invalid Date is refused on the way out, as Effect 3's ValidDateFromSelf did.
    expect(encode4(Common.Timestamp, new Date("2030-01-01T02:00:00+02:00"))).toEqual({ ok: true, value: "2030-01-01T00:00:00.000Z" })
    expect(encode4(Common.Timestamp, new Date(Number.NaN)).ok).toBe(false)
    expect(jsonSchemaOf(Common.Timestamp)).toEqual(componentSchema("Timestamp"))
  })

  it("Email and MailAddress take the addresses the Effect 3 ones take, trimmed", () => {
    const inputs = [
      "ada@acme.example",
      "  ada@acme.example\n",
      "admin@localhost",
      "ops@intranet",
      "o'brien+tag@example.com",
      "ada@sub.example.c0m",
      "ada@-acme.example",
      "ada@acme-.example",
      "ada@127.0.0.1",
      "\"ada\"@acme.example",
      ".ada@acme.example",
      "ada..l@acme.example",
      "ada@",
      "@acme.example",
      "ada@acme.e",
      `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}.example`,
      "ada@acme.example\u0000",
      42
    ]
    sameOn(Common.Email, Common3.Email, inputs)
    sameOn(Common.MailAddress, Common3.MailAddress, inputs)
    expect(decode4(Common.Email, "not an address")).toMatchObject({ ok: false, message: expect.stringContaining("must be an email address") })
    expect(Schema.is(Common.Email)("ada@")).toBe(Schema3.is(Common3.Email)("ada@"))
    expect(jsonSchemaOf(Common.Email)).toEqual(componentSchema("Email"))
    expect(jsonSchemaOf(Common.MailAddress)).toEqual(componentSchema("MailAddress"))
  })

  it("TrimmedText refuses NUL and lengths out of bounds after trimming, as Effect 3, with its message", () => {
    for (const [min, max, description] of [[1, 5, undefined], [2, 10, "A team name."], [0, 3, "Notes"]] as const) {
      const port = Common.TrimmedText(min, max, description)
      const original = Common3.TrimmedText(min, max, description)
      sameOn(port, original, ["a", "  ab  ", "abcde", "abcdef", "  abc  ", "", "   ", "a\u0000b", "\tabcdefghij\t", "abcdefghijk", "é", 5])
      expect(jsonSchemaOf(port)).toEqual(jsonSchema3Of(original))
      // The decoded side holds the bounds too, as Effect 3's refinements did (constructors, Schema.is).
      expect(Schema.is(port)("abcdefghijk")).toBe(false)
    }
    expect(decode4(Common.TrimmedText(2, 4), " a ")).toMatchObject({ ok: false, message: expect.stringContaining("must be 2 to 4 characters long (after trimming white space)") })
    expect(decode4(Common.TrimmedText(1, 4), "a\u0000")).toMatchObject({ ok: false, message: expect.stringContaining("must not contain the NUL character (U+0000)") })
    const slug = Common.TrimmedText(1, 10, "A slug.", "^[a-z]+$")
    expect(jsonSchemaOf(slug)).toEqual(jsonSchema3Of(Common3.TrimmedText(1, 10, "A slug.", "^[a-z]+$")))
    // The document's text parameters are these: `q` of GET /v1/teams.
    expect(jsonSchemaOf(Common.searchText("Only teams whose name contains this text (case-insensitive).")))
      .toEqual(parameterSchema("get", "/v1/teams", "q"))
  })

  it("QueryInteger takes plain decimal digits only, as Effect 3", () => {
    const port = Common.QueryInteger(1, 100, "Page size.")
    const original = Common3.QueryInteger(1, 100, "Page size.")
    sameOn(port, original, ["1", "16", "100", "0", "101", "0x10", "1e1", " 16", "16.0", "+16", "-1", "", "007", "1234567890123456", 16])
    expect(decode4(port, "0x10")).toMatchObject({ ok: false, message: expect.stringContaining("must be an integer from 1 to 100") })
    // A real difference, for the OpenAPI normalisation step: Effect 4 keeps the wire string's `type` and puts the
    // integer's in `allOf`, where Effect 3's override replaced it (`{ type: "integer", minimum, maximum, description }`).
    expect(jsonSchemaOf(port)).toEqual({ type: "string", description: "Page size.", allOf: [{ type: "integer", minimum: 1, maximum: 100 }] })
    expect(jsonSchema3Of(original)).toEqual({ type: "integer", minimum: 1, maximum: 100, description: "Page size." })
  })

  it("keeps the small values: Ok, SearchText, the NUL pattern and the parse options", () => {
    sameOn(Common.Ok, Common3.Ok, [{ ok: true }, { ok: false }, {}])
    sameOn(Common.SearchText, Common3.SearchText, ["plat", "  plat ", "", "x".repeat(256)])
    expect(jsonSchemaOf(Common.SearchText)).toEqual(jsonSchema3Of(Common3.SearchText))
    expect(Common.NO_NUL_PATTERN).toBe(Common3.NO_NUL_PATTERN)
    // Effect 3's Schema.Int, named as the document names it.
    expect(jsonSchemaOf(Common.Int)).toEqual(componentSchema("Int"))
    sameOn(Common.Int, Schema3.Int, [1, -3, 0, 1.5, "1", Number.NaN])
    // Effect 3 annotated them on schemas; Effect 4 sets them on the API (HttpApi.PayloadParseOptions, QueryParseOptions).
    expect(Common.allErrors).toEqual(Common3.allErrors.parseOptions)
    expect(Common.requestBody).toEqual(Common3.requestBody.parseOptions)
  })
})

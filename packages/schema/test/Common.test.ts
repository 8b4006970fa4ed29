/**
 * Common.ts, the API's shared schemas: timestamps, email and mail addresses, trimmed text, query integers, and the
 * parse options the API reads requests with.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import * as Common from "../src/Common.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { decode, encode, refuses, takes } from "./support/Decoding.js"

describe("Common", () => {
  it("Timestamp reads RFC 3339 date-times and writes them in UTC with milliseconds", () => {
    const examples = examplesOfComponent("Timestamp")
    takes(Common.Timestamp, [
      ...examples,
      "2030-01-01T00:00:00Z",
      "2030-01-01t00:00:00.123456789z",
      "2030-01-01T00:00:00.5+02:00",
      "0099-03-01T12:00:00-05:30"
    ])
    refuses(Common.Timestamp, [
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
    expect(decode(Common.Timestamp, "2030-02-31T00:00:00Z")).toMatchObject({ ok: false, message: expect.stringContaining("must be an ISO 8601 date-time") })
    // Written with Z and milliseconds; an invalid Date is refused on the way out.
    expect(encode(Common.Timestamp, new Date("2030-01-01T02:00:00+02:00"))).toEqual({ ok: true, value: "2030-01-01T00:00:00.000Z" })
    expect(encode(Common.Timestamp, new Date(Number.NaN)).ok).toBe(false)
  })

  it("Email takes addresses as typed in (a host without a dot too), MailAddress only what a mail server delivers to, both trimmed", () => {
    takes(Common.Email, [
      "ada@acme.example",
      "  ada@acme.example\n",
      "admin@localhost",
      "ops@intranet",
      "o'brien+tag@example.com",
      "ada@sub.example.c0m",
      "ada@acme.e"
    ])
    takes(Common.MailAddress, ["ada@acme.example", "  ada@acme.example\n", "o'brien+tag@example.com"])
    const neither = [
      "ada@-acme.example",
      "ada@acme-.example",
      "ada@127.0.0.1",
      "\"ada\"@acme.example",
      ".ada@acme.example",
      "ada..l@acme.example",
      "ada@",
      "@acme.example",
      `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}.example`,
      "ada@acme.example\u0000",
      42
    ]
    refuses(Common.Email, neither)
    refuses(Common.MailAddress, [...neither, "admin@localhost", "ops@intranet", "ada@sub.example.c0m", "ada@acme.e"])
    expect(decode(Common.Email, "not an address")).toMatchObject({ ok: false, message: expect.stringContaining("must be an email address") })
    expect(Schema.is(Common.Email)("ada@")).toBe(false)
  })

  it("TrimmedText refuses NUL and lengths out of bounds after trimming, with its message", () => {
    const inputs = ["a", "  ab  ", "abcde", "abcdef", "  abc  ", "", "   ", "a\u0000b", "\tabcdefghij\t", "abcdefghijk", "é", 5]
    const taken: ReadonlyArray<readonly [number, number, string | undefined, ReadonlyArray<string>]> = [
      [1, 5, undefined, ["a", "  ab  ", "abcde", "  abc  ", "é"]],
      [2, 10, "A team name.", ["  ab  ", "abcde", "abcdef", "  abc  ", "\tabcdefghij\t"]],
      [0, 3, "Notes", ["a", "  ab  ", "  abc  ", "", "   ", "é"]]
    ]
    for (const [min, max, description, ok] of taken) {
      const schema = Common.TrimmedText(min, max, description)
      takes(schema, ok)
      refuses(schema, inputs.filter((input) => typeof input !== "string" || !ok.includes(input)))
      // The decoded side holds the bounds too (constructors, Schema.is).
      expect(Schema.is(schema)("abcdefghijk")).toBe(false)
    }
    expect(decode(Common.TrimmedText(2, 4), " a ")).toMatchObject({ ok: false, message: expect.stringContaining("must be 2 to 4 characters long (after trimming white space)") })
    expect(decode(Common.TrimmedText(1, 4), "a\u0000")).toMatchObject({ ok: false, message: expect.stringContaining("must not contain the NUL character (U+0000)") })
  })

  it("QueryInteger takes plain decimal digits only", () => {
    const port = Common.QueryInteger(1, 100, "Page size.")
    takes(port, ["1", "16", "100", "007"])
    refuses(port, ["0", "101", "0x10", "1e1", " 16", "16.0", "+16", "-1", "", "1234567890123456", 16])
    expect(decode(port, "0x10")).toMatchObject({ ok: false, message: expect.stringContaining("must be an integer from 1 to 100") })
  })

  it("keeps the small values: Ok, SearchText, the NUL pattern and the parse options", () => {
    takes(Common.Ok, [{ ok: true }])
    refuses(Common.Ok, [{ ok: false }, {}])
    takes(Common.SearchText, ["plat", "  plat "])
    refuses(Common.SearchText, ["", "x".repeat(256)])
    expect(Common.NO_NUL_PATTERN).toBe("^[^\\u0000]*$")
    takes(Common.Int, [1, -3, 0])
    refuses(Common.Int, [1.5, "1", Number.NaN])
    // Set on the API (HttpApi.PayloadParseOptions, QueryParseOptions): every issue reported, a body's unknown members refused.
    expect(Common.allErrors).toEqual({ errors: "all" })
    expect(Common.requestBody).toEqual({ errors: "all", onExcessProperty: "error" })
  })
})

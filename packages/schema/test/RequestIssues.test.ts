/**
 * RequestIssues.ts, the words of a 400's `details`: a value none of a union's literals names them and the value, a
 * member a body does not have names the members it has, a tagged union names its tag, long texts are cut, and the
 * list is capped with a count of the rest; and the details on one line, as error messages show them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Result, Schema, SchemaIssue } from "effect"
import type * as SchemaAST from "effect/SchemaAST"
import { allErrors, requestBody } from "../src/Common.js"
import * as RequestIssues from "../src/RequestIssues.js"
import { formatPath, invalidRequestDetails, summarizeDetails } from "../src/RequestIssues.js"

const issues: ReadonlyArray<RequestIssues.RequestIssue> = [
  { path: ["role"], message: "Expected \"owner\", actual \"boss\"" },
  { path: ["role"], message: "Expected \"admin\", actual \"boss\"" },
  { path: ["role"], message: "Expected \"member\", actual \"boss\"" },
  { path: ["name"], message: `Expected a string at most 120 character(s) long, actual "${"x".repeat(300)}"` },
  { path: ["input", "rawSourceText"], message: "is missing" },
  { path: ["memberIds", 0], message: "Expected string, actual 1" },
  { path: ["k".repeat(700)], message: "m".repeat(700) },
  ...Array.from({ length: 60 }, (_, i) => ({ path: ["items", i], message: "Expected number, actual null" }))
]

describe("RequestIssues", () => {
  it("words issues for a 400's details: a value's literals in one, long texts cut, at most 50 and a count of the rest", () => {
    const details = RequestIssues.invalidRequestDetails(issues)
    expect(details).toHaveLength(51)
    expect(details.slice(0, 6)).toEqual([
      { path: ["role"], message: "Expected \"owner\", \"admin\" or \"member\", actual \"boss\"" },
      { path: ["name"], message: `Expected a string at most 120 character(s) long, actual "${"x".repeat(100)}…" (300 characters)` },
      { path: ["input", "rawSourceText"], message: "is missing" },
      { path: ["memberIds", 0], message: "Expected string, actual 1" },
      { path: [`${"k".repeat(100)}…`], message: `${"m".repeat(500)}…` },
      { path: ["items", 0], message: "Expected number, actual null" }
    ])
    expect(details.at(-1)).toEqual({ path: [], message: "15 more problems not listed." })
    expect(RequestIssues.summarizeDetails(details)).toBe(
      `role: Expected "owner", "admin" or "member", actual "boss"; name: Expected a string at most 120 character(s) long, actual "${"x".repeat(100)}…" (300 characters); input.rawSourceText: is missing (and 62 more problems)`
    )
  })

  it("reads the schema formatter's issues in its own words, which quote no value back", () => {
    const Body = Schema.Struct({ role: Schema.Literals(["owner", "admin", "member"]), name: Schema.String })
    const input = { role: "boss", name: 1 }
    const result = Schema.decodeUnknownResult(Body)(input, { errors: "all" })
    const reported = Result.isFailure(result) ? SchemaIssue.makeFormatterStandardSchemaV1()(result.failure.issue).issues : []
    const details = RequestIssues.invalidRequestDetails(reported.map(({ path, message }) => ({
      path: (path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment),
      message
    })))
    // The formatter names a union of literals in one issue and does not quote the actual value back.
    expect(details).toEqual([
      { path: ["role"], message: "Expected \"owner\" | \"admin\" | \"member\"" },
      { path: ["name"], message: "Expected string" }
    ])
  })

  it("words a value that is none of a union's literals with the literals and the value, when the issues keep the value (`reportInput`, as the server decodes)", () => {
    const Role = Schema.Literals(["owner", "admin", "member"]).annotate({ identifier: "Role" })
    const Body = Schema.Struct({
      role: Role,
      size: Schema.optionalKey(Schema.Literals([1, 2])),
      owner: Schema.NullOr(Role),
      roles: Schema.Array(Role),
      kind: Schema.Literal("plugin"),
      name: Schema.String,
      mode: Schema.optionalKey(Schema.Literals(["a", "b"]).annotate({ message: "must be a or b" }))
    })
    const detailsOf = (input: unknown, options: SchemaAST.ParseOptions) => {
      const result = Schema.decodeUnknownResult(Body)(input, { ...options, reportInput: true })
      return Result.isFailure(result) ? RequestIssues.invalidRequestDetails(RequestIssues.requestIssuesOf(result.failure.issue)) : []
    }
    const literals = { role: "boss", size: 3, owner: { a: [1] }, roles: ["admin", "x".repeat(300)], kind: "skill", name: "A" }
    expect(detailsOf(literals, requestBody)).toEqual([
      { path: ["role"], message: "Expected \"owner\", \"admin\" or \"member\", actual \"boss\"" },
      { path: ["size"], message: "Expected 1 or 2, actual 3" },
      { path: ["owner"], message: "Expected \"owner\", \"admin\", \"member\" or null, actual {\"a\":[1]}" },
      { path: ["roles", 1], message: `Expected "owner", "admin" or "member", actual "${"x".repeat(100)}…" (300 characters)` },
      { path: ["kind"], message: "Expected \"plugin\", actual \"skill\"" }
    ])
    expect(detailsOf(literals, allErrors)).toEqual(detailsOf(literals, requestBody))
    // The other messages keep the formatter's words, without the value, and a union's own message stays its message;
    // a member the body does not have is worded with the members it has (the next test), without its value.
    const others = { owner: null, roles: [], kind: "plugin", name: 1, mode: "c", extra: "secret" }
    expect(detailsOf(others, requestBody)).toEqual([
      { path: ["extra"], message: "is unexpected, expected: \"role\" | \"size\" | \"owner\" | \"roles\" | \"kind\" | \"name\" | \"mode\"" },
      { path: ["role"], message: "Missing key" },
      { path: ["name"], message: "Expected string" },
      { path: ["mode"], message: "must be a or b" }
    ])
    // Decoded without `reportInput` (as the client encodes), nothing is quoted back: the formatter's words stay.
    const unreported = Schema.decodeUnknownResult(Body)(literals, requestBody)
    const words = Result.isFailure(unreported) ? RequestIssues.requestIssuesOf(unreported.failure.issue) : []
    expect(RequestIssues.invalidRequestDetails(words)[0]).toEqual({ path: ["role"], message: "Expected Role" })
  })

  it("words a member an object or a tuple does not have with the members it has", () => {
    const Connection = Schema.Union([
      Schema.Struct({ name: Schema.String, authType: Schema.Literal("none"), credentialMode: Schema.optionalKey(Schema.String) }),
      Schema.Struct({ name: Schema.String, authType: Schema.Literal("apikey"), apiKey: Schema.String })
    ])
    const Body = Schema.Struct({ connection: Connection, pair: Schema.Tuple([Schema.String, Schema.Number]), empty: Schema.Struct({}) })
    const Labels = Schema.StructWithRest(Schema.Struct({ id: Schema.String }), [Schema.Record(Schema.String, Schema.Number)])
    const detailsOf = (schema: Schema.Decoder<unknown>, input: unknown, reportInput: boolean) => {
      const result = Schema.decodeUnknownResult(schema)(input, { ...requestBody, reportInput })
      return Result.isFailure(result) ? RequestIssues.invalidRequestDetails(RequestIssues.requestIssuesOf(result.failure.issue)) : []
    }
    const input = {
      connection: { name: "A", authType: "none", apiKey: "k", oauth: { clientId: "c" } },
      pair: ["a", 1, true],
      // An empty struct takes any object.
      empty: { x: 1 },
      more: "secret"
    }
    // Whether or not the issues keep the input: nothing of the value is quoted back.
    expect(detailsOf(Body, input, false)).toEqual(detailsOf(Body, input, true))
    expect(detailsOf(Body, input, true)).toEqual([
      { path: ["more"], message: "is unexpected, expected: \"connection\" | \"pair\" | \"empty\"" },
      { path: ["connection", "apiKey"], message: "is unexpected, expected: \"name\" | \"authType\" | \"credentialMode\"" },
      { path: ["connection", "oauth"], message: "is unexpected, expected: \"name\" | \"authType\" | \"credentialMode\"" },
      { path: ["pair", 2], message: "is unexpected, expected: 0 | 1" }
    ])
    // A struct with an index signature: a key the signature refuses is not an excess member (its value is checked by
    // the signature, the declared member's too).
    expect(detailsOf(Labels, { id: "a", size: 1 }, true)).toEqual([{ path: ["id"], message: "Expected number" }])
    expect(detailsOf(Labels, { id: "a", size: "big" }, true)).toEqual([
      { path: ["id"], message: "Expected number" },
      { path: ["size"], message: "Expected number" }
    ])
  })

  it("names the tag of a tagged union when no member has the object's tag", () => {
    const Connection = Schema.Union([
      Schema.Struct({ name: Schema.String, authType: Schema.Literal("none") }),
      Schema.Struct({ name: Schema.String, authType: Schema.Literal("apikey"), apiKey: Schema.String }),
      Schema.Struct({ name: Schema.String, authType: Schema.Literal("oauth") })
    ]).annotate({ identifier: "CreateConnection" })
    const detailsOf = (input: unknown) => {
      const result = Schema.decodeUnknownResult(Connection)(input, { ...requestBody, reportInput: true })
      return Result.isFailure(result) ? RequestIssues.invalidRequestDetails(RequestIssues.requestIssuesOf(result.failure.issue)) : []
    }
    // Only the tag is named, not the other members' issues.
    expect(detailsOf({ name: "A", authType: "magic", extra: 1 })).toEqual([
      { path: ["authType"], message: "Expected \"none\" | \"apikey\" | \"oauth\", actual \"magic\"" }
    ])
    expect(detailsOf({ name: 1, authType: 5 })).toEqual([{ path: ["authType"], message: "Expected \"none\" | \"apikey\" | \"oauth\", actual 5" }])
    expect(detailsOf({ name: "A", authType: "magic" })).toEqual([
      { path: ["authType"], message: "Expected \"none\" | \"apikey\" | \"oauth\", actual \"magic\"" }
    ])
    // A missing tag in the formatter's words for a missing key; not an object: the formatter's words.
    expect(detailsOf({ name: "A" })).toEqual([{ path: ["authType"], message: "Missing key" }])
    expect(detailsOf("x")).toEqual([{ path: [], message: "Expected CreateConnection" }])
    // A member's tag matched: the member's own issues, as the formatter reports them.
    expect(detailsOf({ name: "A", authType: "apikey" })).toEqual([{ path: ["apiKey"], message: "Missing key" }])
  })
})

// The wording of a 400's details on one line, as error messages show them (the details themselves: the server's
// HttpErrors and HostileInput tests).
describe("summarizeDetails", () => {
  it("names the first problems with their paths, then counts the rest", () => {
    const details = invalidRequestDetails([
      { path: ["name"], message: "must be 1 to 255 characters long (after trimming white space)" },
      { path: ["memberIds", 0], message: "TypeID must start with 'om_'" },
      { path: [], message: "Expected an object,\n  actual null" },
      { path: ["input", "rawSourceText"], message: "is missing" },
      { path: ["limit"], message: "must be an integer from 1 to 100" }
    ])
    expect(summarizeDetails(details)).toBe(
      "name: must be 1 to 255 characters long (after trimming white space); memberIds[0]: TypeID must start with 'om_'; "
        + "Expected an object, actual null (and 2 more problems)"
    )
    expect(summarizeDetails(details.slice(0, 4))).toMatch(/ \(and 1 more problem\)$/)
    expect(summarizeDetails(details.slice(0, 1))).toBe("name: must be 1 to 255 characters long (after trimming white space)")
  })

  it("counts what a capped list left out", () => {
    const details = invalidRequestDetails(Array.from({ length: 120 }, (_, index) => ({ path: ["items", index], message: "is missing" })))
    expect(details).toHaveLength(51)
    expect(details.at(-1)).toEqual({ path: [], message: "70 more problems not listed." })
    expect(summarizeDetails(details)).toBe("items[0]: is missing; items[1]: is missing; items[2]: is missing (and 117 more problems)")
  })

  it("writes paths as code would", () => {
    expect(formatPath(["input", "rawSourceText"])).toBe("input.rawSourceText")
    expect(formatPath(["memberIds", 3, "id"])).toBe("memberIds[3].id")
    expect(formatPath(["headers", "x-api-key"])).toBe("headers[\"x-api-key\"]")
    expect(formatPath([])).toBe("")
  })
})

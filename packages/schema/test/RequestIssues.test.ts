import { describe, expect, it } from "@effect/vitest"
import { Result, Schema, SchemaIssue } from "effect"
import type * as SchemaAST from "effect/SchemaAST"
import { allErrors, requestBody } from "../src/Common.js"
import * as RequestIssues from "../src/RequestIssues.js"
import { formatPath, invalidRequestDetails, summarizeDetails } from "../src/RequestIssues.js"
import { type Effect3, effect3 } from "./effect3.js"

const Either3 = effect3("effect/Either")
const ParseResult3 = effect3("effect/ParseResult")
const Schema3 = effect3("effect/Schema")
const RequestIssues3 = effect3("RequestIssues")

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

describe("RequestIssues on Effect 4", () => {
  it("words the same issues as the Effect 3 module does", () => {
    const details = RequestIssues.invalidRequestDetails(issues)
    expect(details).toEqual(RequestIssues3.invalidRequestDetails(issues))
    expect(details).toHaveLength(51)
    expect(details[0]).toEqual({ path: ["role"], message: "Expected \"owner\", \"admin\" or \"member\", actual \"boss\"" })
    expect(RequestIssues.summarizeDetails(details)).toBe(RequestIssues3.summarizeDetails(details))
    for (const path of [["input", "rawSourceText"], ["memberIds", 0], ["a b"], []] as const) {
      expect(RequestIssues.formatPath(path)).toBe(RequestIssues3.formatPath(path))
    }
  })

  it("reads Effect 4's issues, which are worded otherwise (a difference for the server's 400 bodies)", () => {
    const Body = Schema.Struct({ role: Schema.Literals(["owner", "admin", "member"]), name: Schema.String })
    const Body3 = Schema3.Struct({ role: Schema3.Literal("owner", "admin", "member"), name: Schema3.String })
    const input = { role: "boss", name: 1 }
    const result = Schema.decodeUnknownResult(Body)(input, { errors: "all" })
    const reported = Result.isFailure(result) ? SchemaIssue.makeFormatterStandardSchemaV1()(result.failure.issue).issues : []
    const details = RequestIssues.invalidRequestDetails(reported.map(({ path, message }) => ({
      path: (path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment),
      message
    })))
    // Effect 4 names a union of literals in one issue and does not quote the actual value back.
    expect(details).toEqual([
      { path: ["role"], message: "Expected \"owner\" | \"admin\" | \"member\"" },
      { path: ["name"], message: "Expected string" }
    ])
    const result3 = Schema3.decodeUnknownEither(Body3, { errors: "all" })(input)
    const reported3 = Either3.isLeft(result3) ? ParseResult3.ArrayFormatter.formatErrorSync(result3.left) : []
    expect(RequestIssues3.invalidRequestDetails(reported3)).toEqual([
      { path: ["role"], message: "Expected \"owner\", \"admin\" or \"member\", actual \"boss\"" },
      { path: ["name"], message: "Expected string, actual 1" }
    ])
  })

  it("words a value that is none of a union's literals as Effect 3 did, when the issues keep the value (`reportInput`, as the server decodes)", () => {
    const Role = Schema.Literals(["owner", "admin", "member"]).annotate({ identifier: "Role" })
    const Role3 = Schema3.Literal("owner", "admin", "member").annotations({ identifier: "Role" })
    const Body = Schema.Struct({
      role: Role,
      size: Schema.optionalKey(Schema.Literals([1, 2])),
      owner: Schema.NullOr(Role),
      roles: Schema.Array(Role),
      kind: Schema.Literal("plugin"),
      name: Schema.String,
      mode: Schema.optionalKey(Schema.Literals(["a", "b"]).annotate({ message: "must be a or b" }))
    })
    const Body3 = Schema3.Struct({
      role: Role3,
      size: Schema3.optionalWith(Schema3.Literal(1, 2), { exact: true }),
      owner: Schema3.NullOr(Role3),
      roles: Schema3.Array(Role3),
      kind: Schema3.Literal("plugin"),
      name: Schema3.String
    })
    const detailsOf = (input: unknown, options: SchemaAST.ParseOptions) => {
      const result = Schema.decodeUnknownResult(Body)(input, { ...options, reportInput: true })
      return Result.isFailure(result) ? RequestIssues.invalidRequestDetails(RequestIssues.requestIssuesOf(result.failure.issue)) : []
    }
    const details3Of = (input: unknown) => {
      const result = Schema3.decodeUnknownEither(Body3, { errors: "all", onExcessProperty: "error" })(input)
      return Either3.isLeft(result) ? RequestIssues3.invalidRequestDetails(ParseResult3.ArrayFormatter.formatErrorSync(result.left)) : []
    }
    const literals = { role: "boss", size: 3, owner: { a: [1] }, roles: ["admin", "x".repeat(300)], kind: "skill", name: "A" }
    expect(detailsOf(literals, requestBody)).toEqual(details3Of(literals))
    expect(detailsOf(literals, allErrors)).toEqual(details3Of(literals))
    expect(detailsOf(literals, requestBody).slice(0, 3)).toEqual([
      { path: ["role"], message: "Expected \"owner\", \"admin\" or \"member\", actual \"boss\"" },
      { path: ["size"], message: "Expected 1 or 2, actual 3" },
      { path: ["owner"], message: "Expected \"owner\", \"admin\", \"member\" or null, actual {\"a\":[1]}" }
    ])
    // The other messages keep Effect 4's words, without the value (Effect 3: "Expected string, actual 1", "is missing"),
    // and a union's own message stays its message (Effect 3's formatter worded the members instead); a member the
    // body does not have is worded as Effect 3 did (the next test), without its value.
    const others = { owner: null, roles: [], kind: "plugin", name: 1, mode: "c", extra: "secret" }
    expect(detailsOf(others, requestBody)).toEqual([
      { path: ["extra"], message: "is unexpected, expected: \"role\" | \"size\" | \"owner\" | \"roles\" | \"kind\" | \"name\" | \"mode\"" },
      { path: ["role"], message: "Missing key" },
      { path: ["name"], message: "Expected string" },
      { path: ["mode"], message: "must be a or b" }
    ])
    // Decoded without `reportInput` (as the client encodes), nothing is quoted back: Effect 4's words stay.
    const unreported = Schema.decodeUnknownResult(Body)(literals, requestBody)
    const words = Result.isFailure(unreported) ? RequestIssues.requestIssuesOf(unreported.failure.issue) : []
    expect(RequestIssues.invalidRequestDetails(words)[0]).toEqual({ path: ["role"], message: "Expected Role" })
  })

  it("words a member an object or a tuple does not have as Effect 3 did: the members it has", () => {
    const Connection = Schema.Union([
      Schema.Struct({ name: Schema.String, authType: Schema.Literal("none"), credentialMode: Schema.optionalKey(Schema.String) }),
      Schema.Struct({ name: Schema.String, authType: Schema.Literal("apikey"), apiKey: Schema.String })
    ])
    const Connection3 = Schema3.Union(
      Schema3.Struct({ name: Schema3.String, authType: Schema3.Literal("none"), credentialMode: Schema3.optionalWith(Schema3.String, { exact: true }) }),
      Schema3.Struct({ name: Schema3.String, authType: Schema3.Literal("apikey"), apiKey: Schema3.String })
    )
    const Body = Schema.Struct({ connection: Connection, pair: Schema.Tuple([Schema.String, Schema.Number]), empty: Schema.Struct({}) })
    const Body3 = Schema3.Struct({ connection: Connection3, pair: Schema3.Tuple(Schema3.String, Schema3.Number), empty: Schema3.Struct({}) })
    const Labels = Schema.StructWithRest(Schema.Struct({ id: Schema.String }), [Schema.Record(Schema.String, Schema.Number)])
    const Labels3 = Schema3.Struct({ id: Schema3.String }, Schema3.Record({ key: Schema3.String, value: Schema3.Number }))
    const detailsOf = (schema: Schema.Decoder<unknown>, input: unknown, reportInput: boolean) => {
      const result = Schema.decodeUnknownResult(schema)(input, { ...requestBody, reportInput })
      return Result.isFailure(result) ? RequestIssues.invalidRequestDetails(RequestIssues.requestIssuesOf(result.failure.issue)) : []
    }
    const details3Of = (schema: Effect3, input: unknown) => {
      const result = Schema3.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(input)
      return Either3.isLeft(result) ? RequestIssues3.invalidRequestDetails(ParseResult3.ArrayFormatter.formatErrorSync(result.left)) : []
    }
    const input = {
      connection: { name: "A", authType: "none", apiKey: "k", oauth: { clientId: "c" } },
      pair: ["a", 1, true],
      // An empty struct takes any object, in both.
      empty: { x: 1 },
      more: "secret"
    }
    expect(detailsOf(Body, input, true)).toEqual(details3Of(Body3, input))
    // Whether or not the issues keep the input: nothing of the value is quoted back.
    expect(detailsOf(Body, input, false)).toEqual(details3Of(Body3, input))
    expect(detailsOf(Body, input, true)).toEqual([
      { path: ["more"], message: "is unexpected, expected: \"connection\" | \"pair\" | \"empty\"" },
      { path: ["connection", "apiKey"], message: "is unexpected, expected: \"name\" | \"authType\" | \"credentialMode\"" },
      { path: ["connection", "oauth"], message: "is unexpected, expected: \"name\" | \"authType\" | \"credentialMode\"" },
      { path: ["pair", 2], message: "is unexpected, expected: 0 | 1" }
    ])
    // A struct with an index signature: a key the signature refuses is not an excess member, Effect 3's words or not.
    for (const labels of [{ id: "a", size: 1 }, { id: "a", size: "big" }]) {
      expect(detailsOf(Labels, labels, true)).toEqual([...details3Of(Labels3, labels)].map((detail) => ({ ...detail, message: detail.message.replace(/, actual .*$/, "") })))
    }
  })

  it("names the tag of a tagged union where Effect 3 did, when no member has the object's tag", () => {
    const Connection = Schema.Union([
      Schema.Struct({ name: Schema.String, authType: Schema.Literal("none") }),
      Schema.Struct({ name: Schema.String, authType: Schema.Literal("apikey"), apiKey: Schema.String }),
      Schema.Struct({ name: Schema.String, authType: Schema.Literal("oauth") })
    ]).annotate({ identifier: "CreateConnection" })
    const Connection3 = Schema3.Union(
      Schema3.Struct({ name: Schema3.String, authType: Schema3.Literal("none") }),
      Schema3.Struct({ name: Schema3.String, authType: Schema3.Literal("apikey"), apiKey: Schema3.String }),
      Schema3.Struct({ name: Schema3.String, authType: Schema3.Literal("oauth") })
    ).annotations({ identifier: "CreateConnection" })
    const detailsOf = (input: unknown) => {
      const result = Schema.decodeUnknownResult(Connection)(input, { ...requestBody, reportInput: true })
      return Result.isFailure(result) ? RequestIssues.invalidRequestDetails(RequestIssues.requestIssuesOf(result.failure.issue)) : []
    }
    const details3Of = (input: unknown) => {
      const result = Schema3.decodeUnknownEither(Connection3, { errors: "all", onExcessProperty: "error" })(input)
      return Either3.isLeft(result) ? RequestIssues3.invalidRequestDetails(ParseResult3.ArrayFormatter.formatErrorSync(result.left)) : []
    }
    for (const input of [{ name: "A", authType: "magic", extra: 1 }, { name: 1, authType: 5 }]) {
      expect(detailsOf(input)).toEqual(details3Of(input))
    }
    expect(detailsOf({ name: "A", authType: "magic" })).toEqual([
      { path: ["authType"], message: "Expected \"none\" | \"apikey\" | \"oauth\", actual \"magic\"" }
    ])
    // A missing tag in Effect 4's words for a missing key (Effect 3: "is missing"); not an object: Effect 4's words.
    expect(detailsOf({ name: "A" })).toEqual([{ path: ["authType"], message: "Missing key" }])
    expect(detailsOf("x")).toEqual([{ path: [], message: "Expected CreateConnection" }])
    // A member's tag matched: the member's own issues, as Effect 4 reports them.
    expect(detailsOf({ name: "A", authType: "apikey" })).toEqual([{ path: ["apiKey"], message: "Missing key" }])
  })
})

// packages/schema/test/RequestIssues.test.ts, on Effect 4: the wording of a 400's details on one line, as error
// messages show them (the details themselves: HttpErrors and HostileInput tests).
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

import { describe, expect, it } from "@effect/vitest"
import { Result, Schema, SchemaIssue } from "effect"
import { Either as Either3, ParseResult as ParseResult3, Schema as Schema3 } from "effect-3"
import * as RequestIssues3 from "../../../packages/schema/src/RequestIssues.js"
import * as RequestIssues from "../src/RequestIssues.js"

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
})

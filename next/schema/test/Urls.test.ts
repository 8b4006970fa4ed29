import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import * as Urls from "../src/Urls.js"
import { componentSchema, decode3, decode4, encode4, jsonSchema3Of, jsonSchemaOf } from "./differential.js"
import { effect3 } from "./effect3.js"

const Schema3 = effect3("effect/Schema")
const Urls3 = effect3("Urls")

const rules: ReadonlyArray<Urls.UrlRule> = (["https", "http", "loopback"] as const).flatMap((absolute) =>
  [false, true].flatMap((path) => [false, true].map((query) => ({ absolute, path, query })))
)

const inputs = [
  "https://example.com/logo.png",
  "  https://example.com/logo.png\n",
  "http://example.com/hook",
  "http://127.0.0.1:8123/callback?code=1",
  "http://localhost/cb",
  "http://[::1]:9/x",
  "http://evil.example/cb",
  "/logos/acme.png",
  "/logos/acme.png?size=2",
  "//evil.example/x",
  "/\\evil.example/x",
  "/\t/evil.example",
  "/a/../../b",
  "/a/..//evil.example",
  "https:///host",
  "https://user:secret@example.com/",
  "https://example.com/#fragment",
  "HTTPS://example.com/",
  "ftp://example.com/",
  "https://exa mple.com/",
  "https://example.com/\u0000",
  "",
  "   ",
  `https://example.com/${"a".repeat(2048)}`,
  `  https://example.com/${"a".repeat(2020)}  `,
  "javascript:alert(1)",
  "mailto:ada@acme.example"
]

describe("Urls on Effect 4", () => {
  it("keeps the rule's words, checks and pattern", () => {
    expect(Urls.URL_RULE).toBe(Urls3.URL_RULE)
    expect(Urls.MAX_URL_CHARS).toBe(Urls3.MAX_URL_CHARS)
    for (const rule of rules) {
      expect(Urls.describeRule(rule)).toBe(Urls3.describeRule(rule))
      expect(Urls.urlPattern(rule)).toBe(Urls3.urlPattern(rule))
      for (const input of inputs) expect(Urls.urlProblem(input, rule), `${JSON.stringify(rule)} ${input}`).toBe(Urls3.urlProblem(input, rule))
    }
  })

  it("takes and refuses the same URLs as the Effect 3 schema, trimmed, with the rule's message", () => {
    for (const rule of rules) {
      const port = Urls.UrlOf(rule, "A URL.", { refine: (text) => text.includes("forbidden") ? "must not be forbidden" : undefined })
      const original = Urls3.UrlOf(rule, "A URL.", { refine: (text: string) => text.includes("forbidden") ? "must not be forbidden" : undefined })
      for (const input of [...inputs, "https://example.com/forbidden", "/forbidden"]) {
        const ported = decode4(port, input)
        expect(ported.ok, `${JSON.stringify(rule)} ${JSON.stringify(input)}`).toBe(decode3(original, input).ok)
        // The decoded side holds the rule too (constructors, Schema.is), as the Effect 3 refinement did.
        expect(Schema.is(port)(input.trim())).toBe(Schema3.is(original)(input.trim()))
        if (ported.ok) {
          expect(ported.value).toBe(input.trim())
          expect(encode4(port, ported.value)).toEqual({ ok: true, value: input.trim() })
        } else {
          const problem = Urls.urlProblem(input.trim(), rule) ?? "must not be forbidden"
          expect(ported.message).toContain(problem)
        }
      }
    }
    // The one check the pattern cannot make: a path that leaves the server once resolved.
    expect(decode4(Urls.UrlOf({ absolute: "https", path: true }, "Logo."), "/a/..//evil.example").ok).toBe(false)
  })

  it("gives the JSON Schema of the Effect 3 document", () => {
    const suite = Urls.UrlOf({ absolute: "http" }, "An endpoint of the suite.", { identifier: "SuiteEndpointUrl" })
    expect(jsonSchemaOf(suite)).toEqual(componentSchema("SuiteEndpointUrl"))
    for (const rule of rules) {
      expect(jsonSchemaOf(Urls.UrlOf(rule, "A URL."))).toEqual(jsonSchema3Of(Urls3.UrlOf(rule, "A URL.")))
    }
  })
})

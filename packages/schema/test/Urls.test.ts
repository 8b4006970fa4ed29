/**
 * Urls.ts, the one URL rule every URL member of a request follows: its words, the schemas that apply it (trimmed,
 * refused with the rule's message), a table of hostile inputs read as browsers read them, and the document stating it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { OpenApi } from "effect/http-api"
import { Api, LogoUrl, RuntimeUrl, URL_RULE, urlPattern, urlProblem, type UrlRule } from "../src/index.js"
import * as Urls from "../src/Urls.js"
import { decode, encode } from "./support/Decoding.js"

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

describe("Urls", () => {
  it("says the rule in its words, after what each field takes", () => {
    expect(Urls.MAX_URL_CHARS).toBe(2048)
    expect(Urls.URL_RULE).toMatch(/^The URL rule: at most 2048 characters once leading and trailing white space is removed; no white space, control character or backslash anywhere/)
    for (const rule of rules) expect(Urls.describeRule(rule).endsWith(` ${Urls.URL_RULE}`), JSON.stringify(rule)).toBe(true)
    expect(Urls.describeRule({ absolute: "https", path: false, query: false })).toMatch(/^Takes an absolute `https` URL, without a query\. /)
    expect(Urls.describeRule({ absolute: "http", path: true, query: true }))
      .toMatch(/^Takes an absolute `https` URL \(`http` only where the server allows private destinations, `ORGPLANE_OUTBOUND_ALLOW_PRIVATE`\) or a path on this server \(`\/…`\)\. /)
    expect(Urls.describeRule({ absolute: "loopback", path: false, query: true })).toMatch(/^Takes an `http` URL on a loopback host \(/)
  })

  it("takes what the rule takes, trimmed, and refuses the rest with the rule's message", () => {
    for (const rule of rules) {
      const refine = (text: string) => text.includes("forbidden") ? "must not be forbidden" : undefined
      const schema = Urls.UrlOf(rule, "A URL.", { refine })
      for (const input of [...inputs, "https://example.com/forbidden", "/forbidden"]) {
        const decoded = decode(schema, input)
        const problem = Urls.urlProblem(input.trim(), rule) ?? refine(input.trim())
        expect(decoded.ok, `${JSON.stringify(rule)} ${JSON.stringify(input)}`).toBe(problem === undefined)
        // The decoded side holds the rule too (constructors, Schema.is).
        expect(Schema.is(schema)(input.trim())).toBe(problem === undefined)
        if (decoded.ok) {
          expect(decoded.value).toBe(input.trim())
          expect(encode(schema, decoded.value)).toEqual({ ok: true, value: input.trim() })
        } else if (problem !== undefined) {
          expect(decoded.message).toContain(problem)
        }
      }
    }
    // The one check the pattern cannot make: a path that leaves the server once resolved.
    expect(decode(Urls.UrlOf({ absolute: "https", path: true }, "Logo."), "/a/..//evil.example").ok).toBe(false)
  })
})

// The one URL rule over a table of hostile inputs, each read by the WHATWG URL parser as browsers read it, and every
// URL member of every request in the OpenAPI document stating it.

const LOGO: UrlRule = { absolute: "https", path: true }
const CALLED: UrlRule = { absolute: "http" }
const BASE: UrlRule = { absolute: "http", query: false }
const RETURN_TO: UrlRule = { absolute: "loopback", path: true }

/** A page of this origin, where a browser resolves a stored path. */
const PAGE = "https://orgplane.acme.example/app/marketplaces"

/** Paths that a browser on `PAGE` reads as another host (or, resolved once more, would): the rule refuses them all. */
const hostilePaths = [
  "/\\127.0.0.1:18163/x.png",
  "/\\evil.example/x.png",
  "//evil.example/x.png",
  "\\\\evil.example/x.png",
  "\\/evil.example/x.png",
  "/\t/evil.example/x.png",
  "/\n/evil.example/x.png",
  "/\r\n/evil.example/x.png",
  "/\u0000/evil.example",
  "/\u000b/evil.example",
  "/\u007f/evil.example",
  "/ /evil.example",
  "/\u00a0/evil.example",
  "/\u2028/evil.example",
  "/\u3000/evil.example",
  "/.//evil.example/x.png",
  "/..//evil.example/x.png",
  "/a/../..//evil.example/x.png",
  "/%2e//evil.example/x.png",
  "/%2E%2E//evil.example/x.png",
  "/logos/x.png#\\evil"
]

type JsonSchema = { readonly [key: string]: unknown }

const asJsonSchema = (value: unknown): JsonSchema => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`not a JSON object: ${JSON.stringify(value)}`)
  return Object.fromEntries(Object.entries(value))
}
const asArray = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])
const member = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null ? Reflect.get(value, key) : undefined

describe("the URL rule", () => {
  it("refuses every path a browser could read as another host", () => {
    for (const text of hostilePaths) {
      expect([text, urlProblem(text, LOGO)]).toEqual([text, expect.any(String)])
      // What a browser makes of the ones whose danger is hidden: not this page's host, or a path starting with `//`.
      const read = new URL(text, PAGE)
      const risky = read.host !== "orgplane.acme.example" || read.pathname.startsWith("//") || /[\s\u0000-\u001f\u007f\\]/.test(text)
      expect([text, risky || text.includes("#")]).toEqual([text, true])
    }
    // The example: a browser loads the logo from 127.0.0.1:18163.
    expect(new URL("/\\127.0.0.1:18163/x.png", PAGE).host).toBe("127.0.0.1:18163")
  })

  it("refuses absolute URLs other parsers could read otherwise, other schemes, credentials and fragments", () => {
    const hostile = [
      "https:\\\\evil.example/x.png",
      "https:/\\evil.example/x.png",
      "https:/evil.example/x.png",
      "https:evil.example/x.png",
      "https:///evil.example/x.png",
      "https://evil.example\\@good.example/x.png",
      "https://good.example\t.evil.example/x.png",
      "https://good.example /x.png",
      "HTTPS://example.com/x.png",
      "\u0000https://example.com/x.png",
      "https://user:pass@example.com/x.png",
      "https://user@example.com/x.png",
      "https://@example.com/x.png",
      "https://example.com%2F@evil.example/x.png",
      "https://example.com/x.png#top",
      "https://",
      "https://example.com:99999/",
      "javascript:alert(1)",
      "javascript://example.com/%0aalert(1)",
      "data:image/png;base64,iVBORw0KGgo=",
      "file:///etc/passwd",
      "ftp://example.com/x.png",
      "http://example.com/x.png",
      "x.png",
      "",
      `https://example.com/${"a".repeat(2048)}`
    ]
    for (const text of hostile) expect([text, urlProblem(text, LOGO)]).toEqual([text, expect.any(String)])
  })

  it("takes https URLs and paths that stay on this server", () => {
    for (
      const text of [
        "/logos/acme.png",
        "/",
        "/logos/a%20b.png?v=2",
        "/%09/x.png",
        "/logos/../acme.png",
        "https://cdn.acme.example/logos/marketplace.png",
        "https://example.com",
        "https://example.com:8443/x.png?size=64",
        "https://[2001:db8::1]/x.png",
        "https://bücher.example/logo.png"
      ]
    ) {
      expect([text, urlProblem(text, LOGO)]).toEqual([text, undefined])
      if (text.startsWith("/")) expect(new URL(text, PAGE).host).toBe("orgplane.acme.example")
    }
  })

  it("takes http only where a field says so, never a path where it does not, a query only where allowed", () => {
    expect(urlProblem("http://10.0.0.5:8080/mcp", CALLED)).toBeUndefined()
    expect(urlProblem("https://mcp.example.com/mcp?tenant=a", CALLED)).toBeUndefined()
    expect(urlProblem("/mcp", CALLED)).toBe("must be an http or https URL")
    expect(urlProblem("https://api.example.com/v1?x=1", BASE)).toBe("must not carry a query (?…)")
    expect(urlProblem("http://example.com/x.png", LOGO)).toBe("must be an https URL or a path on this server starting with a single /")
    for (const text of ["/\\evil.example", "https:/\\evil.example", "https://a:b@evil.example", "https://evil.example/#x", "https://evil .example"]) {
      expect([text, urlProblem(text, CALLED)]).toEqual([text, expect.any(String)])
      expect([text, urlProblem(text, BASE)]).toEqual([text, expect.any(String)])
    }
  })

  it("sends a browser back to a loopback listener or a path of this server only", () => {
    for (const text of ["http://127.0.0.1:53682/callback", "http://localhost:1/x?y=z", "http://[::1]:9/", "/app/sso-done"]) {
      expect([text, urlProblem(text, RETURN_TO)]).toEqual([text, undefined])
    }
    for (
      const text of [
        "https://evil.example/",
        "http://evil.example/",
        "http://127.0.0.1.evil.example/",
        "http://localhost@evil.example/",
        "http://127.0.0.1:1@evil.example/",
        "https://127.0.0.1/",
        "//evil.example/",
        "/\\evil.example/",
        "/..//evil.example/",
        "http://127.0.0.1:1/#x"
      ]
    ) {
      expect([text, urlProblem(text, RETURN_TO)]).toEqual([text, expect.any(String)])
    }
  })

  it("is the schemas' rule: trimmed first, then checked", () => {
    const logo = Schema.decodeUnknownResult(LogoUrl)
    expect(logo("  /logos/acme.png ")).toMatchObject({ _tag: "Success", success: "/logos/acme.png" })
    expect(logo("/\\127.0.0.1:18163/x.png")._tag).toBe("Failure")
    expect(logo(" \t//evil.example/x.png")._tag).toBe("Failure")
    const runtime = Schema.decodeUnknownResult(RuntimeUrl)
    expect(runtime("https://w.example.com/base/")._tag).toBe("Success")
    expect(runtime("https://w.example.com/?x")._tag).toBe("Failure")
  })

  it("is stated by its pattern, which refuses what it can see of the hostile inputs", () => {
    const logo = new RegExp(urlPattern(LOGO), "u")
    for (const text of hostilePaths.filter((text) => !/^\/(?:\.|%2e|a\/\.\.)/i.test(text))) expect([text, logo.test(text)]).toEqual([text, false])
    expect(logo.test("/logos/acme.png")).toBe(true)
    expect(logo.test("https://cdn.acme.example/x.png")).toBe(true)
    expect(logo.test("http://cdn.acme.example/x.png")).toBe(false)
    const base = new RegExp(urlPattern(BASE), "u")
    expect(base.test("https://api.example.com/v1")).toBe(true)
    expect(base.test("https://api.example.com/v1?x")).toBe(false)
  })
})

describe("the OpenAPI document", () => {
  const document = asJsonSchema(JSON.parse(JSON.stringify(OpenApi.fromApi(Api))))
  const resolve = (schema: JsonSchema): JsonSchema =>
    typeof schema.$ref === "string" ? resolve(asJsonSchema(member(member(document.components, "schemas"), schema.$ref.split("/").pop() ?? ""))) : schema

  /** Every string member of every request body and parameter, with where it is and its name. */
  const requestStrings = function*(): Generator<{ at: string; name: string; schema: JsonSchema }> {
    const seen = new Set<JsonSchema>()
    const walk = function*(schema: JsonSchema, at: string, name: string): Generator<{ at: string; name: string; schema: JsonSchema }> {
      const own = resolve(schema)
      if (seen.has(own)) return
      seen.add(own)
      if (own.type === "string") yield { at, name, schema: own }
      for (const [key, member] of Object.entries(asJsonSchema(own.properties ?? {}))) yield* walk(asJsonSchema(member), `${at}.${key}`, key)
      if (own.items !== undefined) yield* walk(asJsonSchema(own.items), `${at}[]`, name)
      for (const key of ["anyOf", "oneOf", "allOf"]) for (const member of asArray(own[key])) yield* walk(asJsonSchema(member), at, name)
      if (typeof own.additionalProperties === "object") yield* walk(asJsonSchema(own.additionalProperties), `${at}{}`, name)
    }
    for (const [path, item] of Object.entries(asJsonSchema(document.paths))) {
      for (const [method, value] of Object.entries(asJsonSchema(item))) {
        if (typeof value !== "object" || value === null || !("responses" in value)) continue
        const operation = asJsonSchema(value)
        const at = `${method.toUpperCase()} ${path}`
        for (const parameter of asArray(operation.parameters).map(asJsonSchema)) {
          yield* walk(asJsonSchema(parameter.schema), `${at} ${String(parameter.in)} ${String(parameter.name)}`, String(parameter.name))
        }
        for (const content of Object.values(asJsonSchema(member(operation.requestBody, "content") ?? {}))) yield* walk(asJsonSchema(member(content, "schema")), `${at} body`, "")
      }
    }
  }

  it("states the one URL rule on every URL member of every request", () => {
    const urls = [...requestStrings()].filter(({ name, schema }) =>
      schema.enum === undefined &&
      (schema.format === "uri" || schema.format === "uri-reference" || /url|uri|issuer|endpoint|logo|href|redirect|returnTo|relayState/i.test(name))
    )
    // Not URLs the server keeps or sends anyone to as given: a SAML ACS's RelayState is a signed state of a sign-in
    // the server started, or exactly a member of the connection's `relayStateAllowList` (which the rule checked);
    // anything else is refused.
    const exceptions = new Set(["POST /v1/sso/saml/{connectionId}/acs body.RelayState"])
    const silent = urls.filter(({ at, schema }) => !exceptions.has(at) && !String(schema.description ?? "").includes(URL_RULE))
    expect(silent.map(({ at }) => at)).toEqual([])
    expect(urls.length).toBeGreaterThanOrEqual(15)
  })
})

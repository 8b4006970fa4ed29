/**
 * OpenApiDocument.ts, the steps that shape the generated document as it is published: generated titles and `$id`s
 * removed, the NUL rule on request strings that do not refuse NUL already, request unions of tagged objects as
 * discriminated `oneOf`s; shaping leaves its input as it was, and the saved document as it is.
 */
import { describe, expect, it } from "@effect/vitest"
import { NO_NUL_PATTERN } from "../src/Common.js"
import * as OpenApiDocument from "../src/OpenApiDocument.js"
import type { Json, JsonObject } from "../src/OpenApiExamples.js"
import { savedDocument } from "./support/SavedDocument.js"

const isJson = (value: unknown): value is Json =>
  value === null || typeof value === "boolean" || typeof value === "number" || typeof value === "string" ||
  (Array.isArray(value) ? value.every(isJson) : isJsonObject(value))

const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every(isJson)

/** A document as it is, the objects the generator shares between schemas still shared, once it is checked to be JSON. */
const asDocument = (value: unknown): JsonObject => {
  if (!isJsonObject(value)) throw new Error("not a JSON document")
  return value
}

/**
 * `actual` is the JSON `expected` is, its members in the same order (the published document is written in that
 * order): compared as text, and as values where the texts differ, for a readable difference.
 */
const sameJson = (actual: unknown, expected: unknown, message: string) => {
  const text = JSON.stringify(actual)
  if (text !== JSON.stringify(expected)) expect(actual, message).toStrictEqual(expected)
  expect(text === JSON.stringify(expected), `${message}: the members in the same order`).toBe(true)
  expect(isJson(actual), `${message}: JSON`).toBe(true)
}

/** `shapeDocument` of `input`, which it must leave as it was; its answer is JSON. */
const shape = (input: JsonObject): JsonObject => {
  const before = structuredClone(input)
  const shaped = OpenApiDocument.shapeDocument(input)
  sameJson(input, before, "shapeDocument leaves its input as it was")
  expect(isJson(shaped), "JSON").toBe(true)
  return shaped
}

const documentOf = (paths: JsonObject, schemas: JsonObject = {}): JsonObject => ({
  openapi: "3.1.0",
  info: { title: "orgplane", version: "dev" },
  paths,
  components: { schemas }
})

const ok = (schema: Json): JsonObject => ({ "200": { description: "OK", content: { "application/json": { schema } } } })
const body = (schema: Json, type = "application/json"): JsonObject => ({ required: true, content: { [type]: { schema } } })
const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` })
const tagged = (key: string, tag: Json, tagAs: "const" | "enum" = "const"): JsonObject => ({
  type: "object",
  required: [key, "name"],
  properties: { [key]: tagAs === "const" ? { const: tag } : { type: "string", enum: [tag] }, name: { type: "string" } }
})

/** `value` at `path` (keys of objects, indexes of arrays), or undefined. */
const at = (value: Json | undefined, ...path: ReadonlyArray<string | number>): Json | undefined =>
  path.reduce<Json | undefined>(
    (node, key) => Array.isArray(node) ? node[Number(key)] : isJsonObject(node) ? node[String(key)] : undefined,
    value
  )

const countOf = (document: unknown, text: string) => JSON.stringify(document).split(text).length - 1

describe("OpenApiDocument", () => {
  it("leaves the saved document as it is: shaping it again changes nothing, step by step too", () => {
    const saved = asDocument(structuredClone(savedDocument))
    sameJson(shape(saved), savedDocument, "shapeDocument")
    for (const step of ["removeGeneratedNoise", "documentNulRule", "discriminateRequestUnions"] as const) {
      const copy = asDocument(structuredClone(savedDocument))
      OpenApiDocument[step](copy)
      sameJson(copy, savedDocument, step)
    }
    // Not vacuous: the saved document has what the steps write.
    expect(countOf(savedDocument, `"pattern":${JSON.stringify(NO_NUL_PATTERN)}`)).toBeGreaterThan(100)
    expect(countOf(savedDocument, `"discriminator"`)).toBeGreaterThan(0)
    expect(countOf(savedDocument, `"$id":"/schemas/`)).toBe(0)
  })

  it("adds the NUL rule to the request strings that do not refuse NUL", () => {
    // Those whose grammar has no NUL, and one that has.
    const formats = ["date-time", "date", "time", "email", "hostname", "uri", "uri-reference", "uuid", "ipv4", "ipv6", "binary"]
    const shaped = shape(documentOf({
      "/v1/things": {
        get: {
          parameters: [
            { name: "q", in: "query", schema: { type: "string" } },
            { name: "slug", in: "query", schema: { type: "string", pattern: "^[a-z]+$" } },
            { name: "text", in: "query", schema: { type: "string", pattern: "^.*$" } },
            { name: "id", in: "path", required: true, schema: { type: "string", allOf: [{ pattern: "^.*$" }, { pattern: "^[^\\x00]+$" }] } },
            { name: "since", in: "query", schema: { type: "string", format: "date-time" } },
            { name: "kind", in: "query", schema: { type: "string", enum: ["a", "b"] } },
            { name: "one", in: "query", schema: { type: "string", const: "x" } },
            { name: "cursor", in: "query", schema: { ...ref("Cursor"), description: "A cursor a list returned." } },
            { name: "after", in: "query", schema: { allOf: [ref("Cursor")], description: "Also a cursor." } },
            { name: "name", in: "query", schema: ref("Name") },
            { name: "limit", in: "query", schema: { type: "integer" } },
            ...formats.map((format) => ({ name: format, in: "query", schema: { type: "string", format } }))
          ],
          responses: ok({
            type: "object",
            properties: { nextCursor: { anyOf: [ref("Cursor"), { type: "null" }] }, name: { type: "string" } },
            // An example that looks like a reference refers to nothing: Name is still only the requests'.
            example: { nextCursor: null, name: ref("Name") },
            examples: [ref("Name")]
          })
        }
      },
      "/v1/things/{id}": {
        post: {
          requestBody: body({
            type: "object",
            properties: {
              tags: { type: "array", items: { type: "string" } },
              meta: { type: "object", additionalProperties: { type: "string" } },
              either: { anyOf: [{ type: "string" }, { type: "null" }] },
              at: { type: "string", format: "uri" }
            }
          }),
          responses: ok(ref("Thing"))
        },
        put: { requestBody: body({ type: "string" }, "application/octet-stream"), responses: ok({ type: "string" }) }
      }
    }, {
      Cursor: { type: "string", minLength: 1 },
      Name: { type: "string", maxLength: 10 },
      Thing: { type: "object", properties: { name: { type: "string" } } }
    }))
    const parameters = at(shaped, "paths", "/v1/things", "get", "parameters")
    const schemaOf = (i: number) => at(parameters, i, "schema")
    expect(schemaOf(0)).toStrictEqual({ type: "string", pattern: NO_NUL_PATTERN })
    expect(schemaOf(1)).toStrictEqual({ type: "string", pattern: "^[a-z]+$" })
    expect(schemaOf(2)).toStrictEqual({ type: "string", pattern: "^.*$", allOf: [{ pattern: NO_NUL_PATTERN }] })
    expect(at(schemaOf(3), "allOf")).toHaveLength(2)
    for (const i of [4, 5, 6, 10]) expect(at(schemaOf(i), "pattern")).toBeUndefined()
    formats.forEach((format, i) => expect(at(schemaOf(11 + i), "pattern"), format).toBe(format === "binary" ? NO_NUL_PATTERN : undefined))
    // The cursor is shared with the response: the rule goes on the references, the component keeps none.
    expect(schemaOf(7)).toStrictEqual({ allOf: [ref("Cursor")], description: "A cursor a list returned.", pattern: NO_NUL_PATTERN })
    expect(schemaOf(8)).toStrictEqual({ allOf: [ref("Cursor")], description: "Also a cursor.", pattern: NO_NUL_PATTERN })
    expect(at(shaped, "components", "schemas", "Cursor")).toStrictEqual({ type: "string", minLength: 1 })
    expect(at(shaped, "components", "schemas", "Name", "pattern")).toBe(NO_NUL_PATTERN)
    expect(at(shaped, "components", "schemas", "Thing", "properties", "name", "pattern")).toBeUndefined()
    const properties = at(shaped, "paths", "/v1/things/{id}", "post", "requestBody", "content", "application/json", "schema", "properties")
    expect(at(properties, "tags", "items", "pattern")).toBe(NO_NUL_PATTERN)
    expect(at(properties, "meta", "additionalProperties", "pattern")).toBe(NO_NUL_PATTERN)
    expect(at(properties, "either", "anyOf", 0, "pattern")).toBe(NO_NUL_PATTERN)
    expect(at(properties, "at", "pattern")).toBeUndefined()
    expect(at(shaped, "paths", "/v1/things/{id}", "put", "requestBody", "content", "application/octet-stream", "schema")).toStrictEqual({ type: "string" })
  })

  it("shapes a copy where the generator shares an object between a request and a response", () => {
    const shared: JsonObject = { type: "string", title: "Trim" }
    const shaped = shape(documentOf({
      "/v1/things": {
        post: { requestBody: body({ type: "object", properties: { name: shared } }), responses: ok({ type: "object", properties: { name: shared } }) }
      }
    }))
    expect(shared).toStrictEqual({ type: "string", title: "Trim" })
    expect(at(shaped, "paths", "/v1/things", "post", "responses", "200", "content", "application/json", "schema", "properties", "name"))
      .toStrictEqual({ type: "string", pattern: NO_NUL_PATTERN })
  })

  it("writes the request unions of tagged objects as discriminated oneOfs", () => {
    const unionAt = (shaped: JsonObject, path: string) => at(shaped, "paths", path, "post", "requestBody", "content", "application/json", "schema")
    const shaped = shape(documentOf({
      "/v1/credentials": {
        post: {
          requestBody: body({ anyOf: [{ anyOf: [ref("Password"), ref("Token")] }, ref("OAuth")] }),
          responses: ok({ anyOf: [ref("Password"), ref("Token")] })
        }
      },
      "/v1/inline": {
        post: { requestBody: body({ type: "object", properties: { source: { anyOf: [tagged("kind", "a"), tagged("kind", "b")] } } }), responses: ok({}) }
      },
      "/v1/same-tags": { post: { requestBody: body({ anyOf: [tagged("kind", "a"), tagged("kind", "a")] }), responses: ok({}) } },
      "/v1/untagged": {
        post: { requestBody: body({ anyOf: [tagged("kind", "a"), { type: "object", properties: { kind: { const: "b" } } }] }), responses: ok({}) }
      },
      "/v1/one": { post: { requestBody: body({ anyOf: [tagged("kind", "a")] }), responses: ok({}) } },
      "/v1/scalars": { post: { requestBody: body({ anyOf: [{ type: "string" }, { type: "null" }] }), responses: ok({}) } },
      "/v1/named": { post: { requestBody: body(ref("Auth")), responses: ok({}) } }
    }, {
      Password: tagged("authType", "password", "enum"),
      Token: tagged("authType", "token"),
      OAuth: tagged("authType", "oauth", "enum"),
      Auth: { anyOf: [ref("Password"), ref("OAuth")] }
    }))
    expect(unionAt(shaped, "/v1/credentials")).toStrictEqual({
      oneOf: [ref("Password"), ref("Token"), ref("OAuth")],
      discriminator: {
        propertyName: "authType",
        mapping: { password: "#/components/schemas/Password", token: "#/components/schemas/Token", oauth: "#/components/schemas/OAuth" }
      }
    })
    expect(at(shaped, "paths", "/v1/credentials", "post", "responses", "200", "content", "application/json", "schema", "anyOf")).toHaveLength(2)
    expect(at(unionAt(shaped, "/v1/inline"), "properties", "source", "discriminator")).toStrictEqual({ propertyName: "kind" })
    for (const path of ["/v1/same-tags", "/v1/untagged", "/v1/one", "/v1/scalars"]) expect(at(unionAt(shaped, path), "oneOf"), path).toBeUndefined()
    expect(at(shaped, "components", "schemas", "Auth", "discriminator", "propertyName")).toBe("authType")
  })

  it("removes the generator's titles and $ids", () => {
    const shaped = shape(documentOf({
      "/v1/things": {
        post: {
          parameters: [{ name: "q", in: "query", schema: { type: "string", title: "Trim", pattern: "^[a-z]*$" } }],
          requestBody: body({ $id: "/schemas/object", type: "object", properties: { title: { type: "string", title: "maxLength(120)" } } }),
          responses: ok({ title: "int", $id: "/schemas/unknown", type: "integer" })
        }
      }
    }, {
      Thing: { title: "Thing", $id: "https://orgplane.dev/thing", type: "object", properties: { title: { $id: "/schemas/unknown" } } },
      Text: { title: "nonEmptyString", type: "string", description: "Titled by a refinement." }
    }))
    expect(at(shaped, "components", "schemas")).toStrictEqual({
      Thing: { $id: "https://orgplane.dev/thing", type: "object", properties: { title: {} } },
      Text: { type: "string", description: "Titled by a refinement." }
    })
    expect(at(shaped, "paths", "/v1/things", "post", "parameters", 0, "schema")).toStrictEqual({ type: "string", pattern: "^[a-z]*$" })
    expect(at(shaped, "paths", "/v1/things", "post", "requestBody", "content", "application/json", "schema"))
      .toStrictEqual({ type: "object", properties: { title: { type: "string", pattern: NO_NUL_PATTERN } } })
    expect(at(shaped, "paths", "/v1/things", "post", "responses", "200", "content", "application/json", "schema")).toStrictEqual({ type: "integer" })
  })

  it("tells the patterns that exclude NUL", () => {
    // [pattern, excludes NUL]; a pattern it cannot read is taken to allow NUL (the conservative answer).
    const patterns: ReadonlyArray<readonly [string, boolean]> = [
      [NO_NUL_PATTERN, true],
      ["^[a-z]+$", true],
      ["^org_[0-7][0-9a-hjkmnp-tv-z]{25}$", true],
      ["^[\\x21-\\x7e]{1,255}$", true],
      ["^[^\\u0000-\\u001f]*$", true],
      ["^.*$", false],
      [".", false],
      ["[\\s\\S]*", false],
      ["[^]", false],
      ["^\\S(.*\\S)?$", false],
      // Escapes of NUL, and of other characters.
      ["\\0", false],
      ["\\x00", false],
      ["\\u0000", false],
      ["\\u{0}", false],
      ["\\u{000000}", false],
      ["\\u{61}", true],
      ["\\cA", true],
      ["\\n", true],
      ["\\u00", false],
      ["\\", false],
      ["a|\\0", false],
      // Classes.
      ["[\\x00-\\x1f]", false],
      ["[^\\x00]", true],
      ["[^\\\\]+", false],
      ["[\\]]", true],
      ["[\\0]", false],
      ["[\\d\\s]+", true],
      ["[\\u{1}-\\u{10FFFF}]", true],
      ["[\\u{0}-\\u{10FFFF}]", false],
      ["[a-z", false],
      ["[]a]", false],
      ["\\D", false],
      ["\\W", false],
      ["\\S", false],
      ["\\w+", true],
      ["\\p{L}+", true],
      ["\\p{Lu}", true],
      ["\\P{L}", false],
      ["\\p{Cc}", false],
      // Groups and lookarounds (which consume nothing).
      ["^(?!.*\\u0000)[a-z]*$", true],
      ["(?=\\x00)a", true],
      ["(?<=a)b", true],
      ["(?<!\\0)b", true],
      ["(?=a)|\\0", false],
      ["(?:a|b)+", true],
      ["(?<name>[a-z]+)-\\k<name>", false],
      ["(?<name", false],
      ["(?i:a)", true],
      ["(a)\\1", false],
      ["\\1", false],
      ["\\b[a-z]\\b", true],
      // Quantifiers and lone closers.
      ["a{2,3}", true],
      ["]", true],
      ["}", true]
    ]
    for (const [pattern, excludes] of patterns) {
      expect(OpenApiDocument.excludesNul(pattern), pattern).toBe(excludes)
    }
  })
})

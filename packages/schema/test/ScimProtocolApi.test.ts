/**
 * ScimProtocolApi.ts, the SCIM protocol's operations: their errors written in SCIM's form and media type, each schema
 * named once, and requests read as a directory sends them (members they do not declare ignored).
 */
import { describe, expect, it } from "@effect/vitest"
import { Context } from "effect"
import * as HttpApi from "effect/http-api/HttpApi"
import * as OpenApi from "effect/http-api/OpenApi"
import { apiOf } from "../src/ApiOf.js"
import type { JsonObject as Document } from "../src/OpenApiExamples.js"
import { documentScimErrors, ScimDiscoveryApi, ScimGroupsApi, ScimUsersApi } from "../src/ScimProtocolApi.js"
import { isJsonObject as isObject, type Json, type JsonObject, memberAt, savedDocument } from "./support/SavedDocument.js"

const asDocument = (value: unknown): Document => JSON.parse(JSON.stringify(value))

/** The operations of a document by `METHOD /path`. */
const operationsOf = (document: Json): Map<string, JsonObject> => {
  const out = new Map<string, JsonObject>()
  const paths = isObject(document) ? document["paths"] : undefined
  for (const [path, item] of Object.entries(isObject(paths) ? paths : {})) {
    for (const [method, operation] of Object.entries(isObject(item) ? item : {})) {
      if (isObject(operation)) out.set(`${method.toUpperCase()} ${path}`, operation)
    }
  }
  return out
}

const generated = () => asDocument(OpenApi.fromApi(apiOf(ScimDiscoveryApi, ScimUsersApi, ScimGroupsApi)))
const written = () => documentScimErrors(asDocument(OpenApi.fromApi(apiOf(ScimDiscoveryApi, ScimUsersApi, ScimGroupsApi))))

/** The media types of the error answers (4xx, 5xx) of the SCIM protocol's operations (`/scim/v2/…`), counted. */
const errorMediaTypes = (document: Json): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const [at, operation] of operationsOf(document)) {
    if (!at.includes(" /scim/v2/")) continue
    const responses = operation["responses"]
    for (const [status, response] of Object.entries(isObject(responses) ? responses : {})) {
      const content = isObject(response) ? response["content"] : undefined
      if (Number(status) >= 400) for (const type of Object.keys(isObject(content) ? content : {})) out[type] = (out[type] ?? 0) + 1
    }
  }
  return out
}

describe("ScimProtocolApi", () => {
  it("writes the SCIM error forms into a document: a SCIM error answered as application/scim+json", () => {
    const before = errorMediaTypes(generated())
    const after = errorMediaTypes(written())
    expect(before["application/json"]).toBeGreaterThan(after["application/json"] ?? 0)
    expect(after["application/scim+json"]).toBeGreaterThan(before["application/scim+json"] ?? 0)
    expect(JSON.stringify(written())).toContain(`"application/scim+json":{"schema":{"$ref":"#/components/schemas/ScimBadRequest"}}`)
    // The saved document, which the generated one equals (Api.test.ts), shows the same.
    expect(memberAt(savedDocument, "paths", "/scim/v2/{connectionId}/Users", "post", "responses", "400", "content"))
      .toEqual({ "application/scim+json": { schema: { $ref: "#/components/schemas/ScimBadRequest" } } })
  })

  it("names each schema once, but for the Group variants of the PatchOp and SearchRequest bodies", () => {
    const components = written()["components"]
    const schemas = isObject(components) ? components["schemas"] : undefined
    const named = isObject(schemas) ? schemas : {}
    expect(Object.keys(named)).toContain("ScimUser")
    // The Groups' PatchOp and SearchRequest are the Users' with examples of their own, so two schemas of one identifier,
    // which the generator names apart (`…_1`; the published document writes them where used: Api.ts's
    // `annotatedBodiesInline`). The copies differ in their examples only.
    const copies = Object.keys(named).filter((name) => /_\d+$/.test(name)).sort()
    expect(copies).toEqual(["ScimPatchRequest_1", "ScimSearchRequest_1"])
    for (const copy of copies) {
      // (The examples are annotated after the check saying the body is open, so the generator writes them beside it.)
      const withoutExamples = (schema: Json | undefined): Json => {
        if (!isObject(schema)) return null
        const { examples: _, allOf, ...rest } = schema
        return Array.isArray(allOf) ? { ...rest, allOf: allOf.map(withoutExamples) } : rest
      }
      expect(withoutExamples(named[copy]), copy).toEqual(withoutExamples(named[copy.replace(/_\d+$/, "")]))
    }
  })

  it("reads SCIM requests with Schema's defaults: members they do not declare are ignored (RFC 7644)", () => {
    const options: Array<unknown> = []
    const api = apiOf(ScimUsersApi, ScimGroupsApi).annotate(HttpApi.PayloadParseOptions, { errors: "all", onExcessProperty: "error" })
    HttpApi.reflect(api, {
      onGroup() {},
      onEndpoint: ({ group, endpoint }) => {
        const annotations = Context.merge(Context.merge(api.annotations, group.annotations), endpoint.annotations)
        options.push(Context.getOrUndefined(annotations, HttpApi.PayloadParseOptions), Context.getOrUndefined(annotations, HttpApi.QueryParseOptions))
      }
    })
    expect(options).toHaveLength(28)
    expect(new Set(options.map((option) => JSON.stringify(option)))).toEqual(new Set(["{}"]))
  })
})

import { describe, expect, it } from "@effect/vitest"
import { Context } from "effect"
import * as HttpApi from "effect/http-api/HttpApi"
import * as OpenApi from "effect/http-api/OpenApi"
import { groupDocument } from "./apiDifferential.js"
import { apiOf } from "../src/ApiOf.js"
import type { JsonObject as Document } from "../src/OpenApiExamples.js"
import { documentScimErrors, ScimDiscoveryApi, ScimGroupsApi, ScimUsersApi } from "../src/ScimProtocolApi.js"
import { operationView, sameExamples } from "./apiDifferential.js"
import { idsAsReferences, type Json } from "./differential.js"
import { describedBounds } from "./scimDifferential.js"
import { effect3 } from "./effect3.js"

const documentScimErrors3 = effect3("ScimProtocolApi").documentScimErrors
const ScimDiscoveryApi3 = effect3("ScimProtocolApi").ScimDiscoveryApi
const ScimGroupsApi3 = effect3("ScimProtocolApi").ScimGroupsApi
const ScimUsersApi3 = effect3("ScimProtocolApi").ScimUsersApi

type JsonObject = { readonly [key: string]: Json }
const isObject = (value: Json | undefined): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)
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

const ported = () => documentScimErrors(asDocument(OpenApi.fromApi(apiOf(ScimDiscoveryApi, ScimUsersApi, ScimGroupsApi))))

/**
 * Holds the SCIM groups to their Effect 3 originals as `sameOperations` does (`operationView`, `known` by
 * `METHOD /path`), each document first given the SCIM error forms by its own `documentScimErrors`, as Api.ts does to
 * the whole document. Before that step the two differ: Effect 4 puts each status's errors under the media type each is
 * sent as (the API's own under `application/json`, the SCIM ones under `application/scim+json`), Effect 3 all under
 * JSON; the step writes both the same. Returns the operations compared.
 */
const sameScimOperations = (known: Record<string, (operation: Json) => Json>) => {
  const port = ported()
  const expected = documentScimErrors3(asDocument(groupDocument(ScimDiscoveryApi3, ScimUsersApi3, ScimGroupsApi3)))
  expect(port["tags"]).toEqual(expected["tags"])
  const portOperations = operationsOf(port)
  const expectedOperations = operationsOf(expected)
  expect([...portOperations.keys()].sort()).toEqual([...expectedOperations.keys()].sort())
  for (const [at, operation] of expectedOperations) {
    const found = portOperations.get(at)
    const adjust = known[at] ?? ((view: Json) => view)
    if (found !== undefined) expect(adjust(operationView(port, found, false)), at).toEqual(operationView(expected, operation, true))
  }
  for (const at of Object.keys(known)) expect(expectedOperations.has(at), `known difference of ${at}`).toBe(true)
  return [...expectedOperations.keys()]
}

/** The view with its JSON request body's schema rewritten by `f`. */
const requestBody = (f: (schema: JsonObject) => Json) => (view: Json): Json => {
  const body = isObject(view) ? view["requestBody"] : undefined
  const content = isObject(body) ? body["content"] : undefined
  const schema = isObject(content) ? content["application/json"] : undefined
  expect(schema).toBeDefined()
  if (!isObject(view) || !isObject(body) || !isObject(content) || !isObject(schema)) return view
  return { ...view, requestBody: { ...body, content: { ...content, "application/json": f(schema) } } }
}

// The real differences ScimProtocol.test.ts names, for the OpenAPI normalisation step, as the operations show them.
/** Effect 3's override of a resource request dropped its description; Effect 4 keeps it. */
const withoutDescription = requestBody((schema) => {
  expect(schema["description"]).toEqual(expect.stringContaining("as the directory sends it"))
  const { description: _, ...rest } = schema
  return rest
})
/** The member ids of a Group request are documented by hand, as Effect 3 did; Effect 3's side reads them as references. */
const groupRequest = (view: Json): Json => idsAsReferences(withoutDescription(view))
/**
 * Effect 4 writes `additionalProperties: false` on the open PatchOp and SearchRequest bodies, and their check saying
 * they are open (`true`) in `allOf` beside it, which the document writes on the struct (`arrayChecksInline`).
 */
const open = requestBody((schema) => {
  expect(schema).toMatchObject({ additionalProperties: false, allOf: [{ additionalProperties: true }] })
  const { allOf, ...rest } = schema
  const [check] = Array.isArray(allOf) ? allOf : []
  return { ...rest, ...(isObject(check) ? check : {}) }
})
/** A SearchRequest: open, and its bounded attribute lists undescribed (`describedBounds`). */
const search = (view: Json): Json => requestBody(describedBounds)(open(view))

describe("ScimProtocolApi on Effect 4", () => {
  it("declares the operations of the Effect 3 groups", () => {
    const operations = sameScimOperations({
      "POST /scim/v2/{connectionId}/Users": withoutDescription,
      "PUT /scim/v2/{connectionId}/Users/{userId}": withoutDescription,
      "POST /scim/v2/{connectionId}/Users/.search": search,
      "PATCH /scim/v2/{connectionId}/Users/{userId}": open,
      "POST /scim/v2/{connectionId}/Groups": groupRequest,
      "PUT /scim/v2/{connectionId}/Groups/{groupId}": groupRequest,
      "POST /scim/v2/{connectionId}/Groups/.search": search,
      "PATCH /scim/v2/{connectionId}/Groups/{groupId}": open
    })
    expect(operations).toHaveLength(19)
  })

  it("writes the SCIM error forms into a document as the Effect 3 documentScimErrors does", () => {
    // The same input (the Effect 3 groups' document, whose errors of one status share one media type): the same output.
    const document = () => asDocument(groupDocument(ScimDiscoveryApi3, ScimUsersApi3, ScimGroupsApi3))
    const expected = documentScimErrors3(document())
    expect(documentScimErrors(document())).toEqual(expected)
    expect(JSON.stringify(expected)).toContain(`"application/scim+json":{"schema":{"$ref":"#/components/schemas/ScimBadRequest"}}`)
  })

  it("names each schema once, but for the Group variants of the PatchOp and SearchRequest bodies", () => {
    const components = ported()["components"]
    const schemas = isObject(components) ? components["schemas"] : undefined
    const named = isObject(schemas) ? schemas : {}
    expect(Object.keys(named)).toContain("ScimUser")
    // A real difference, for the OpenAPI normalisation step: the Groups' PatchOp and SearchRequest are the Users' with
    // examples of their own, so two schemas of one identifier, which Effect 4 names apart (`…_1`); Effect 3 wrote one
    // component (the examples the document shows are the operations'). The copies differ in their examples only.
    const copies = Object.keys(named).filter((name) => /_\d+$/.test(name)).sort()
    expect(copies).toEqual(["ScimPatchRequest_1", "ScimSearchRequest_1"])
    for (const copy of copies) {
      // (The examples are annotated after the check saying the body is open, so Effect 4 writes them beside it.)
      const withoutExamples = (schema: Json | undefined): Json => {
        if (!isObject(schema)) return null
        const { examples: _, allOf, ...rest } = schema
        return Array.isArray(allOf) ? { ...rest, allOf: allOf.map(withoutExamples) } : rest
      }
      expect(withoutExamples(named[copy]), copy).toEqual(withoutExamples(named[copy.replace(/_\d+$/, "")]))
    }
  })

  it("shows the examples of the Effect 3 groups", () => {
    expect(sameExamples(ScimDiscoveryApi, ScimDiscoveryApi3)).toBeGreaterThan(0)
    expect(sameExamples(ScimUsersApi, ScimUsersApi3)).toBeGreaterThan(0)
    expect(sameExamples(ScimGroupsApi, ScimGroupsApi3)).toBeGreaterThan(0)
  })

  it("reads SCIM requests with Schema's defaults, as Effect 3 did: members they do not declare are ignored", () => {
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

/**
 * The whole OpenAPI document, the contract clients are generated from: the document the API generates equals the
 * saved one (`test/fixtures/openapi.json`), member order aside, so a change to what clients see is never made by
 * accident. When the API changes on purpose, write the saved document again (`pnpm openapi:fixture`) and review its
 * diff in the same commit. The document's parts are compared one by one first, for a failure that says where.
 * (Contract010.test.ts holds what 0.1.0's clients call; OpenApiValid.test.ts checks the saved document is OpenAPI 3.1.)
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as HttpApi from "effect/http-api/HttpApi"
import { Api, openApiDocument, unroutedMember } from "../src/Api.js"
import { allErrors, requestBody } from "../src/Common.js"
import { isJsonObject as isObject, type Json, type JsonObject, objectAt, savedDocument } from "./support/SavedDocument.js"

/** A JSON value with its objects' members in one order (the order of members is no part of the contract). */
const canonical = (value: Json | undefined): Json | undefined =>
  Array.isArray(value)
    ? value.map((item) => canonical(item) ?? null)
    : isObject(value)
    ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical(value[key]) ?? null]))
    : value
const same = (a: Json | undefined, b: Json | undefined) => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b))

const generated: JsonObject = JSON.parse(JSON.stringify(openApiDocument()))
const saved: JsonObject = JSON.parse(JSON.stringify(savedDocument))

/** What to do when the generated document is not the saved one. */
const rerecord = "the generated OpenAPI document differs from test/fixtures/openapi.json: if the API changed on purpose, " +
  "run `pnpm openapi:fixture` and review the diff (every change there is one clients see); if not, the change is a mistake"

const operationsOf = (document: JsonObject): Map<string, Json> =>
  new Map(Object.entries(objectAt(document, "paths")).flatMap(([path, item]) =>
    Object.entries(isObject(item) ? item : {}).map(([method, operation]): [string, Json] => [`${method.toUpperCase()} ${path}`, operation])
  ))

const schemasOf = (document: JsonObject) => objectAt(objectAt(document, "components"), "schemas")

describe("the whole OpenAPI document", () => {
  it("has the saved document's operations, info, servers, security, tags, shared headers and security schemes", () => {
    expect([...operationsOf(generated).keys()].sort(), rerecord).toEqual([...operationsOf(saved).keys()].sort())
    for (const member of ["openapi", "info", "servers", "security", "tags"]) expect(generated[member], `${member}: ${rerecord}`).toEqual(saved[member])
    for (const member of ["headers", "securitySchemes"]) {
      expect(objectAt(generated, "components")[member], `${member}: ${rerecord}`).toEqual(objectAt(saved, "components")[member])
    }
    // Each unrouted answer.
    const unrouted = objectAt(generated, unroutedMember)
    const expected = objectAt(saved, unroutedMember)
    expect(Object.keys(unrouted).sort(), rerecord).toEqual(Object.keys(expected).sort())
    for (const status of ["400", "404", "405", "413", "414", "431"]) expect(unrouted[status], `${status}: ${rerecord}`).toEqual(expected[status])
  })

  it("names the saved document's components, and no more", () => {
    const names = Object.keys(schemasOf(generated))
    const before = Object.keys(schemasOf(saved))
    expect(before.filter((name) => !names.includes(name)), `components gone: ${rerecord}`).toEqual([])
    expect(names.filter((name) => !before.includes(name)).sort(), `components added: ${rerecord}`).toEqual([])
  })

  it("equals the saved document, member order aside", () => {
    // Which components and operations differ, named first.
    const schemas = schemasOf(generated)
    const components = Object.entries(schemasOf(saved)).filter(([name, schema]) => !same(schemas[name], schema)).map(([name]) => name)
    const operations = operationsOf(generated)
    const changed = [...operationsOf(saved)].filter(([at, operation]) => !same(operations.get(at), operation)).map(([at]) => at)
    expect({ components, operations: changed }, rerecord).toEqual({ components: [], operations: [] })
    expect(canonical(generated), rerecord).toEqual(canonical(saved))
  })

  it("reads request bodies strictly and queries and paths reporting every issue, but for the endpoints that say otherwise", () => {
    const options = new Map<string, unknown>()
    HttpApi.reflect(Api, {
      onGroup() {},
      onEndpoint({ endpoint, group, mergedAnnotations }) {
        options.set(`${group.identifier}.${endpoint.identifier}`, [
          Context.getOrUndefined(mergedAnnotations, HttpApi.PayloadParseOptions),
          Context.getOrUndefined(mergedAnnotations, HttpApi.QueryParseOptions)
        ])
      }
    })
    expect(options.get("teams.create")).toEqual([requestBody, allErrors])
    expect(options.get("users.signIn")).toEqual([requestBody, allErrors])
    // The directory's SCIM requests are read as sent (RFC 7644), and the SAML ACS form reports every issue.
    expect(options.get("scimUsers.create")).toEqual([{}, {}])
    expect(options.get("ssoSignIn.samlAcs")).toEqual([allErrors, allErrors])
  })
})

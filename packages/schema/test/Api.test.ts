/**
 * The whole document against the one Effect 3 published (`test/fixtures/openapi.json`, a copy of packages/schema's):
 * the OpenAPI normalisation step's acceptance test. What already compares equal is held here, member by member, and
 * how much of the rest does (components and operations identical to the fixture's) can only go up; the step ends
 * when the document equals the fixture, which it now does but for the order of members.
 *
 * The normalisation rules (`OpenApiComponents.ts` and `OpenApiResponses.ts`, applied by Api.ts's transform) write
 * what Effect 4's generator writes otherwise in the form Effect 3 published, which the clients generated from the
 * document expect, each a general rule over the document (and the API's schemas where the JSON alone does not say):
 * - `nameEncodedComponents`, `inlineIds`, `lowerCaseSchemes`: components named by their identifiers, TypeIDs written
 *   out where used, `bearer` (285 of 438 components identical with them);
 * - `componentExamples`: each component's examples in their wire form, from the schema it was written from (Effect 4
 *   writes the Type form and leaves out an example holding a `Date`): 285 → 337;
 * - `integersAsPublished`: integers without the safe-integer bounds Effect 4's `Schema.Int` writes, and counts as a
 *   reference to `NonNegative` beside `type: integer`, as Effect 3 wrote them: 337 → 362;
 * - `responsesAsPublished` (`OpenApiResponses.ts`): an error response's middleware errors before the operation's own,
 *   described by the first (a 400 by Effect 3's decode error), a bodiless success described as `Success`, as Effect 3
 *   declared and described them: operations 16 → 118;
 * - `descriptionsBeside`: a described union, enum, reference or TypeID with its description beside it (Effect 4 writes
 *   it as an `allOf` member), as Effect 3 wrote it: components 362 → 384, operations 118 → 123;
 * - `parametersAsPublished`: a query integer as an integer (Effect 4 writes the string it is read from) and each
 *   parameter described as its schema is, as Effect 3 wrote them: operations 123 → 157;
 * - `annotatedBodiesInline` (`OpenApiResponses.ts`): a success body the API annotates for HTTP (a status other than
 *   200, SCIM's media type) written where used and described as `Success`, as Effect 3 wrote it (its annotation made
 *   a new schema), and only the components the document refers to: operations 157 → 184, 26 fewer extra components;
 * - `memberDescriptions`: a member's or parameter's description of a transformed schema (`Timestamp`,
 *   `BooleanFromString`), which Effect 4 leaves out, written as Effect 3 wrote it: components 384 → 392, operations
 *   184 → 204;
 * - `objectsAsPublished`: a struct's `required` and a record's `properties` and `required` written even when empty,
 *   as Effect 3 wrote them: components 392 → 402, operations 204 → 217;
 * - `annotatedBodiesInline` again: a request union (one member per `kind`) and a request body of another media type
 *   than JSON written where used, as Effect 3 wrote them: operations 217 → 221, 5 fewer extra components;
 * - `memberDescriptions` on the request bodies written where used too, with their examples in wire form: operations
 *   221 → 226;
 * - `objectsAsPublished` again: a struct with a record's rest written with the record's `additionalProperties` (Effect
 *   4 writes an `allOf` of the record): components 402 → 403;
 * - `memberDescriptions` again: a required member's description of a named schema as Effect 3 wrote it (a copy of
 *   the schema with the member's description, a transformation's with its own, a class's bare reference):
 *   components 403 → 408;
 * - `checksFlattened`: a check annotated after it (a struct's "one of these members") written in the schema's `allOf`
 *   with the examples on the schema, as Effect 3 wrote it: operations 226 → 235;
 * - `responsesAsPublished` again: an error response described by its first error's description when it has one, a
 *   plain string's success as `a string`, as Effect 3 described them: operations 235 → 239;
 * - `objectsAsPublished` again: no `propertyNames` that allows every name (Effect 4 writes one beside a struct's
 *   members), as Effect 3 wrote them: components 408 → 410;
 * - `arrayChecksInline`: an array's checks (its length, its items) on the array, not in an `allOf`, as Effect 3 wrote
 *   them: operations 239 → 240;
 * - `objectsAsPublished` again, a record of any values as Effect 3 wrote it (Effect 4 writes any object), and
 *   `annotatedBodiesInline` again, Effect 4's `<Name>_1` copies of a named schema annotated again written where used
 *   without their examples: components 410 → 413, 3 fewer extra components;
 * - `memberDescriptions` again: an undescribed string or array member described by its last length check, as Effect 3
 *   generated it ("a string at most 256 character(s) long"): components 413 → 414, operations 240 → 244; and the
 *   members (and own examples, in wire form) of a struct written inside another: components 414 → 415, operations
 *   244 → 245;
 * - `annotatedBodiesInline` again: a union of named successes as their `anyOf`, described by the first, as Effect 3
 *   took each member as a success: operations 245 → 246, 1 fewer extra component;
 * - `arrayChecksInline` on objects too, and `JsonObject` (ConfigObjects.ts) saying it takes any member with a check's
 *   JSON Schema, as Effect 3's override did (a fix of the port: Workers' and ConfigObjects' known differences for it
 *   are gone): components 415 → 416; and a member needing another (`dependentRequired`): components 416 → 417;
 * - a fix of the ports: an endpoint Effect 3 applied `MemberAuthentication` to alone (the endpoint's `.middleware`,
 *   Invitations' `middlewareEndpoints`) declares its errors after its own (`memberAuthenticationErrors`, Security.ts),
 *   where Effect 3 added them, so `responsesAsPublished` keeps their order (its `NotFound` before
 *   `OrganizationNotFound`): operations 246 → 252;
 * - `integersAsPublished` again, with a fix of the ports: a bounded integer Effect 3 wrote as a refinement of its
 *   `Schema.Int` (`retentionDays`, a desktop policy's `priority`, `installationId`, a model's token counts) is a check
 *   on Common's `Int` in the port, and a refinement of the `Int` component (its type and description with bounds of
 *   its own) is written as a reference to it with the bounds and description beside (a `between` undescribed
 *   described as Effect 3 generated it), as Effect 3 wrote it: components 417 → 419, operations 252 → 255;
 * - `arrayChecksInline` again, with a fix of the ports: SCIM's open PatchOp and SearchRequest bodies say so by a check
 *   (`additionalProperties: true`, ScimProtocol.ts's `open`), as Effect 3's override did, which is written on the
 *   struct in place of the `false` Effect 4 writes on every struct, and an object's check's examples with it (a
 *   `JsonObject` body's too): components 419 → 420, operations 255 → 256;
 * - `memberDescriptions` again: a union's undescribed, unnamed members described by their last check as Effect 3
 *   generated it (a length's bound, and a number's `between`, "a number between 0 and 1000000"): components
 *   420 → 422; an optional member's union too, and in Effect 4's `<Name>_1` copies: components 422 → 423.
 * - `memberDescriptions` again, with a fix of the ports: a schema Effect 3 documented by its `jsonSchema` override
 *   carries that override (`publishedAs`, internal/published.ts: Effect 4 has no override) and is written as it
 *   where used (an unnamed member, a union's member, a parameter, a required member described again, a request body:
 *   SCIM's resources) and as its component (`OrganizationMetadata`, `LlmHeaders`, `RepositoryFullName`, `JsonObject`),
 *   without the description and examples annotated beside it, as Effect 3 wrote it; a required TypeID member without
 *   its description (a TypeID's override replaced it); and the members of an array of structs written inside another
 *   (`IngestTelemetryRequest`'s events), a transformation's copy with its own description read from the named schema
 *   (a struct's Type side has its members' Type sides): components 423 → 434, operations 256 → 265, 2 fewer extra
 *   components;
 * - `annotatedBodiesInline` again: a request union written as its members' `oneOf` alone (Effect 3 took each member
 *   as a payload: no description of the union's), and a request body's `<Name>_1` copy with its own examples (SCIM's
 *   group search and patch): operations 265 → 268;
 * - `objectsAsPublished` again: an empty struct (`PluginManifest`'s `setup`, which Effect 4 writes as any value but
 *   null) as the empty object Effect 3's override documented: components 434 → 435;
 * - `defaultedClassesInline`: a class whose struct decodes a member with a default (`DiscoveredPlugin`'s
 *   `skippedFiles`) written where used, as Effect 3 wrote it (its wire side had no name): components 435 → 436, 1
 *   fewer extra component;
 * - `memberDescriptions` again: an unnamed member checked further than what it refines described by its last check
 *   (`memberIds`, "an array of at least 1 item(s)"): operations 268 → 269; a class described where used giving its
 *   first use's description (in the API's order) to its component, which has none (Effect 3's described class kept
 *   the class's name: `ConnectorSyncEvent`, `TemplateVersion`): components 436 → 438; a parameter of a named schema
 *   annotated again (`SsoDomain` with its examples) written as a copy of it: operations 269 → 270.
 * - a fix of the ports: `LlmModelInputs` checked in Effect 3's order, its description on a check the document cannot
 *   state (each model once), which Effect 4 writes nothing of, as Effect 3 did not; `memberDescriptions` describing
 *   such a member by its last check it can state (as Effect 3 generated it, "an array of at most 500 item(s)");
 *   `UpdateLlmProviderRequest`'s `models` described by its key, as Effect 3's property signature was: operations
 *   270 → 271; and `SsoJit`'s `defaultRole` the described copy of `SsoJitRole`'s literals it was in Effect 3 (which
 *   named no `SsoJitRole` component): components 438 → 439, no extra component;
 * - the unrouted 405's bodies closed (`onExcessProperty: "error"`), as the generator writes the document's objects.
 * The document now equals the fixture, member order aside (`equals the fixture` below): 748 objects have their
 * members in another order (a struct's `properties` before its `required`, a check's keywords before or after the
 * description as Effect 3's refinements happened to nest), which no reader of JSON sees; not worth a rule.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as HttpApi from "effect/http-api/HttpApi"
import { Api, openApiDocument, unroutedMember } from "../src/Api.js"
import { allErrors, requestBody } from "../src/Common.js"
import type { Json, JsonObject } from "../src/OpenApiExamples.js"
import { as010 } from "./changes.js"
import { fixture } from "./differential.js"

const isObject = (value: Json | undefined): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)
const objectAt = (value: Json | undefined, key: string): JsonObject => {
  const member = isObject(value) ? value[key] : undefined
  return isObject(member) ? member : {}
}
/** A JSON value with its objects' members in one order (the document's order is not compared yet). */
const canonical = (value: Json | undefined): Json | undefined =>
  Array.isArray(value)
    ? value.map((item) => canonical(item) ?? null)
    : isObject(value)
    ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical(value[key]) ?? null]))
    : value
const same = (a: Json | undefined, b: Json | undefined) => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b))

// The changes made on purpose since 0.1.0 put back (changes.ts): the rest is held to 0.1.0's document.
const ported: JsonObject = as010(JSON.parse(JSON.stringify(openApiDocument())))
const published: JsonObject = JSON.parse(JSON.stringify(fixture))

const operationsOf = (document: JsonObject): Map<string, Json> =>
  new Map(Object.entries(objectAt(document, "paths")).flatMap(([path, item]) =>
    Object.entries(isObject(item) ? item : {}).map(([method, operation]): [string, Json] => [`${method.toUpperCase()} ${path}`, operation])
  ))

const schemasOf = (document: JsonObject) => objectAt(objectAt(document, "components"), "schemas")

describe("the whole OpenAPI document on Effect 4", () => {
  it("has the fixture's operations, info, servers, security, tags, shared headers and security schemes", () => {
    expect([...operationsOf(ported).keys()].sort()).toEqual([...operationsOf(published).keys()].sort())
    for (const member of ["openapi", "info", "servers", "security", "tags"]) expect(ported[member], member).toEqual(published[member])
    for (const member of ["headers", "securitySchemes"]) {
      expect(objectAt(ported, "components")[member], member).toEqual(objectAt(published, "components")[member])
    }
    // Each unrouted answer.
    const unrouted = objectAt(ported, unroutedMember)
    const expected = objectAt(published, unroutedMember)
    expect(Object.keys(unrouted).sort()).toEqual(Object.keys(expected).sort())
    for (const status of ["400", "404", "405", "413", "414", "431"]) expect(unrouted[status], status).toEqual(expected[status])
  })

  it("names the fixture's components, and no more", () => {
    const names = Object.keys(schemasOf(ported))
    const before = Object.keys(schemasOf(published))
    // Every one (Effect 3's NonNegative, which counts refer to, is added by `integersAsPublished`).
    expect(before.filter((name) => !names.includes(name))).toEqual([])
    // And no other.
    expect(names.filter((name) => !before.includes(name)).sort()).toEqual([])
  })

  it("has as many components and operations identical to the fixture's as the step has reached (only ever more)", () => {
    const schemas = schemasOf(ported)
    const components = Object.entries(schemasOf(published)).filter(([name, schema]) => same(schemas[name], schema)).length
    const operations = operationsOf(ported)
    const identical = [...operationsOf(published)].filter(([at, operation]) => same(operations.get(at), operation)).length
    // Reached (2026-11-26): every one of the 439 components and 271 operations.
    expect(components).toBe(439)
    expect(identical).toBe(271)
  })

  it("equals the fixture, member order aside", () => {
    expect(canonical(ported)).toEqual(canonical(published))
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

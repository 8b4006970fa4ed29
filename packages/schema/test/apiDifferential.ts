/**
 * What the differential tests of the HttpApi groups share: the OpenAPI document Effect 4 gives a ported group and
 * the one Effect 3 gives the original (both before Api.ts's own steps: `apiOf(group)` through `OpenApi.fromApi`),
 * compared operation by operation after a normalisation that leaves out what the OpenAPI normalisation step writes
 * anyway (response descriptions, parameter descriptions) and what the resource modules' own tests compare (the
 * components).
 */
import { expect } from "@effect/vitest"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { apiOf } from "../src/ApiOf.js"
import { addExamples, type JsonObject as Document } from "../src/OpenApiExamples.js"
import { idsAsReferences, type Json, normalise, queryIntegersAsDocumented, withoutGeneratedNoise, withoutTransformedMemberDescriptions } from "./differential.js"
import { as010 } from "./changes.js"
import { type AnyGroup, effect3, recordStep } from "./effect3.js"

export type { AnyGroup } from "./effect3.js"

const ApiOf3 = effect3("ApiOf")
const OpenApiExamples3 = effect3("OpenApiExamples")
const GroupDocument3 = effect3("support/groupDocument")

/**
 * The OpenAPI document Effect 3 gives the groups (packages/schema's `test/support/groupDocument.ts`: `apiOf` of them
 * through `OpenApi.fromApi`), recorded (effect3.ts).
 */
export const groupDocument = (...groups: ReadonlyArray<AnyGroup>): unknown =>
  recordStep("groupDocument", groups, () => GroupDocument3.groupDocument(...groups))

type JsonObject = { readonly [key: string]: Json }

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const json = (value: unknown): Json => JSON.parse(JSON.stringify(value))

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

/** The group's operations by `METHOD /path`. */
const operationsOf = (document: Json): Map<string, JsonObject> => {
  const out = new Map<string, JsonObject>()
  const paths = isObject(document) ? document["paths"] : undefined
  for (const [path, item] of Object.entries(isObject(paths) ? paths : {})) {
    for (const [method, operation] of Object.entries(isObject(item) ? item : {})) {
      if (methods.includes(method) && isObject(operation)) out.set(`${method.toUpperCase()} ${path}`, operation)
    }
  }
  return out
}

/**
 * A schema in a form both versions share: `normalise`'s, with Effect 3's side as `sameSchemas` reads it (no generated
 * `title`s, ids as references, no descriptions of transformed members) and Effect 4's query integers as the document
 * has them (differential.ts says why), the members
 * of an `anyOf` in one order (Effect 4 puts the endpoint's errors before the API's, Effect 3 after), and Effect 3's
 * `HttpApiDecodeError`, the 400 it adds to every operation, left out (Effect 4 declares `InvalidRequest` alone, through
 * the `ApiErrors` middleware).
 */
const schemaView = (schema: Json, effect3: boolean): Json => {
  const shared = effect3 ? withoutTransformedMemberDescriptions(idsAsReferences(normalise(withoutGeneratedNoise(schema)))) : queryIntegersAsDocumented(normalise(schema))
  const sortAnyOf = (value: Json): Json => {
    if (Array.isArray(value)) return value.map(sortAnyOf)
    if (!isObject(value)) return value
    const out: Record<string, Json> = {}
    for (const [key, member] of Object.entries(value)) {
      // Effect 4 writes `propertyNames: { anyOf: [{ enum: [...the members] }, { type: "string" }] }` beside a
      // struct's members (an exact error body's): it allows every name, so says nothing. For the normalisation step.
      const names = isObject(member) ? member["anyOf"] : undefined
      // Examples: the resource modules' tests compare them (`sameSchemas`), and the document's are written by
      // OpenApiExamples (Effect 4 leaves out an example holding a Date).
      if (key === "examples") continue
      if (key === "propertyNames" && Array.isArray(names) && names.some((name) => isObject(name) && name["type"] === "string" && Object.keys(name).length === 1)) continue
      out[key] = sortAnyOf(member)
    }
    const anyOf = out["anyOf"]
    if (Array.isArray(anyOf)) {
      const members = anyOf.filter((member) => !(isObject(member) && member["$ref"] === "ref:HttpApiDecodeError"))
        .map((member) => JSON.stringify(member)).sort().map((member): Json => JSON.parse(member))
      if (members.length === 1 && Object.keys(out).length === 1) return members[0] ?? null
      out["anyOf"] = members
    }
    return out
  }
  return sortAnyOf(shared)
}

/**
 * A body's schema (`schemaView`), a reference at its root read as the component it names: Effect 4 refers to a named
 * success schema of a 201 where Effect 3 inlined it (the normalisation step writes it Effect 3's way).
 */
const contentView = (document: Json, content: Json | undefined, effect3: boolean): Json => {
  if (!isObject(content)) return null
  const components = isObject(document) && isObject(document["components"]) ? document["components"]["schemas"] : undefined
  const resolved = (schema: Json): Json => {
    const ref = isObject(schema) ? schema["$ref"] : undefined
    // Effect 4 names a transformed schema's component `<Name>Encoded` (a class answered as the whole body).
    const found = typeof ref === "string" && ref.startsWith("ref:") && isObject(components)
      ? components[ref.slice(4)] ?? components[`${ref.slice(4)}Encoded`]
      : undefined
    return found === undefined || Object.keys(isObject(schema) ? schema : {}).length > 1 ? schema : schemaView(found, effect3)
  }
  return Object.fromEntries(
    Object.entries(content).map(([type, entry]) => [type, isObject(entry) ? resolved(schemaView(entry["schema"] ?? null, effect3)) : null])
  )
}

/**
 * What an operation declares, in the form compared: its tags, id, summary, description, security, `x-orgplane-*`
 * members, parameters (by place and name; their descriptions left out: Effect 4 does not copy a parameter schema's
 * description, which the normalisation step writes), request body, and the status, media types and body schema of
 * each response (their descriptions left out: Effect 3 wrote `Success` and the first error's, Effect 4 the schema's
 * identifier; the normalisation step writes them).
 */
export const operationView = (document: Json, operation: JsonObject, effect3: boolean): Json => {
  const view: Record<string, Json> = {}
  for (const [key, value] of Object.entries(operation)) {
    if (["tags", "operationId", "summary", "description", "security", "deprecated"].includes(key) || key.startsWith("x-")) view[key] = value
  }
  const parameters = operation["parameters"]
  view["parameters"] = (Array.isArray(parameters) ? parameters : []).flatMap((parameter): Array<Json> =>
    isObject(parameter)
      ? [{ in: parameter["in"] ?? null, name: parameter["name"] ?? null, required: parameter["required"] ?? false, schema: schemaView(parameter["schema"] ?? null, effect3) }]
      : []
  ).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
  const body = operation["requestBody"]
  if (isObject(body)) view["requestBody"] = { required: body["required"] ?? false, content: contentView(document, body["content"], effect3) }
  const responses = operation["responses"]
  view["responses"] = Object.fromEntries(
    Object.entries(isObject(responses) ? responses : {}).map(([status, response]) => [
      status,
      isObject(response) && response["content"] !== undefined ? { content: contentView(document, response["content"], effect3) } : {}
    ])
  )
  return view
}

/** The document's tag of the group: its name and description. */
const tagsOf = (document: Json): Json => (isObject(document) ? document["tags"] ?? null : null)

/**
 * Holds a ported group to its Effect 3 original: the same operations (method and path), and each declaring the same
 * (`operationView`); the same tags. The changes made on purpose since 0.1.0 are put back first (changes.ts); `known` rewrites a ported operation's view where a difference is real and written
 * down, by `METHOD /path`. Returns the operations compared.
 */
export const sameOperations = (
  port: HttpApiGroup.Constraint,
  original: AnyGroup,
  known: Record<string, (operation: Json) => Json> = {}
): Array<string> => {
  const ported = as010(json(OpenApi.fromApi(apiOf(port))))
  const expected = json(groupDocument(original))
  expect(tagsOf(ported)).toEqual(tagsOf(expected))
  const portedOperations = operationsOf(ported)
  const expectedOperations = operationsOf(expected)
  expect([...portedOperations.keys()].sort()).toEqual([...expectedOperations.keys()].sort())
  for (const [at, operation] of expectedOperations) {
    const port = portedOperations.get(at)
    if (port === undefined) continue
    const adjust = known[at] ?? ((view: Json) => view)
    expect(adjust(operationView(ported, port, false)), at).toEqual(operationView(expected, operation, true))
  }
  for (const at of Object.keys(known)) expect(expectedOperations.has(at), `known difference of ${at}`).toBe(true)
  return [...expectedOperations.keys()]
}

/** Every `examples` the document's operations show, by where: `METHOD /path request|<status> <media type>`, `... parameter <in> <name>`. */
const examplesOf = (document: Json): Record<string, Json> => {
  const out: Record<string, Json> = {}
  for (const [at, operation] of operationsOf(document)) {
    const media = (where: string, content: Json | undefined) => {
      for (const [type, entry] of Object.entries(isObject(content) ? content : {})) {
        if (isObject(entry) && entry["examples"] !== undefined) out[`${at} ${where} ${type}`] = entry["examples"]
      }
    }
    const body = operation["requestBody"]
    if (isObject(body)) media("request", body["content"])
    const parameters = operation["parameters"]
    for (const parameter of Array.isArray(parameters) ? parameters : []) {
      if (isObject(parameter) && parameter["examples"] !== undefined) {
        out[`${at} parameter ${String(parameter["in"])} ${String(parameter["name"])}`] = parameter["examples"]
      }
    }
    const responses = operation["responses"]
    for (const [status, response] of Object.entries(isObject(responses) ? responses : {})) {
      if (isObject(response)) media(status, response["content"])
    }
  }
  return out
}

const asDocument = (value: unknown): Document => JSON.parse(JSON.stringify(value))

/**
 * The examples OpenApiExamples writes into the group's operations (`addExamples`: request bodies, parameters, success
 * responses) are the ones the Effect 3 writer writes, everywhere. Returns how many places show one.
 */
export const sameExamples = (port: HttpApiGroup.Constraint, original: AnyGroup): number => {
  const ported = examplesOf(addExamples(apiOf(port), asDocument(OpenApi.fromApi(apiOf(port)))))
  // Recorded as its difference from the group's document (effect3.ts): the examples it adds.
  const document = asDocument(groupDocument(original))
  const expected = examplesOf(json(recordStep("addExamples", [original], () => OpenApiExamples3.addExamples(ApiOf3.apiOf(original), asDocument(document)), document)))
  expect(as010(ported)).toEqual(expected)
  return Object.keys(expected).length
}

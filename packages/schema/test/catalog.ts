/**
 * What the differential tests of the catalog's modules (config objects, connectors, access, plugins) share beyond
 * `differential.ts`: the document's inline request examples, and the real differences they read back.
 */
import { expect } from "@effect/vitest"
import * as SchemaAST from "effect/SchemaAST"
import { Int } from "../src/Common.js"
import { refinedIntegerAsPublished } from "../src/OpenApiComponents.js"
import type { JsonObject as DocumentObject } from "../src/OpenApiExamples.js"
import { componentSchema, documentExamples, type Json, splitKey } from "./differential.js"

type JsonObject = { readonly [key: string]: Json }

/**
 * A refinement of Common's `Int` (`Int.check(…)`, Effect 3's `Schema.Int.pipe(Schema.between(…))`) in the port's JSON
 * Schema as the document writes it (OpenApiComponents' `integersAsPublished`: a reference to `Int` with the bounds and
 * description beside it), as Effect 3 wrote it; `undefined` when it is none.
 */
export const refinedIntAsDocumented = (schema: Json | undefined): Json | undefined => {
  if (!isJsonObject(schema)) return undefined
  const copy: DocumentObject = JSON.parse(JSON.stringify(schema))
  return refinedIntegerAsPublished(copy, "ref:Int", SchemaAST.resolveDescription(Int.ast) ?? "")
}

export const isJsonObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `schema` (an object) with member `key` set to `value`. */
export const withMember = (schema: Json, key: string, value: Json): Json =>
  isJsonObject(schema) ? { ...schema, [key]: value } : schema

/** The document's examples of an operation's request body or answer (`POST /v1/config-objects request`, `... 201`): inline ones too. */
export const operationExamples = (at: string): Array<Json> =>
  documentExamples().flatMap((example) => example.at.startsWith(`${at} `) ? [example.value] : [])

/**
 * A real difference, for the OpenAPI normalisation step: a member that describes a named schema refers to it with its
 * description beside (annotateKey), where Effect 3 inlined a described copy. `schema` (an object schema) with each
 * such member read back as the copy the document's `component` (or `document`, when it is no component) has, which
 * must say what the member says; at least one is there.
 */
export const describedCopies = (schema: Json, component: string, document: Json = componentSchema(component)): Json => {
  const copies = splitKey(document, "properties").value
  const own = splitKey(schema, "properties").value
  if (!isJsonObject(own) || !isJsonObject(copies)) throw new Error(`${component} has no properties`)
  let described = 0
  const properties = Object.fromEntries(Object.entries(own).map(([key, value]) => {
    const isDescribedReference = isJsonObject(value) && Object.keys(value).length === 2 &&
      typeof value["$ref"] === "string" && typeof value["description"] === "string"
    if (!isDescribedReference) return [key, value]
    described++
    const copy = copies[key]
    expect(copy, `${component}.${key}`).toMatchObject({ description: value["description"] })
    return [key, copy ?? value]
  }))
  expect(described, component).toBeGreaterThan(0)
  return withMember(schema, "properties", properties)
}

/**
 * A real difference, for the OpenAPI normalisation step: a member that describes a JsonObject refers to it with its
 * description beside (annotateKey); Effect 3 inlined JsonObject's override, whose own description replaced the
 * member's. `schema` with each such member read back as that copy; at least one is there.
 */
export const jsonObjectCopies = (schema: Json): Json => {
  const own = splitKey(schema, "properties").value
  if (!isJsonObject(own)) throw new Error("no properties")
  let described = 0
  const properties = Object.fromEntries(Object.entries(own).map(([key, value]) => {
    if (!isJsonObject(value) || value["$ref"] !== "ref:JsonObject" || typeof value["description"] !== "string") return [key, value]
    described++
    return [key, componentSchema("JsonObject")]
  }))
  expect(described).toBeGreaterThan(0)
  return withMember(schema, "properties", properties)
}

/**
 * What the differential tests share: the Effect 3 OpenAPI document, the JSON Schema of a ported schema in the form
 * the document has it, and decoding with either Effect version (the Effect 3 side recorded and replayed: effect3.ts).
 */
import { expect } from "@effect/vitest"
import { Exit, Schema, SchemaAST } from "effect"
import * as Fs from "node:fs"
import { IdsByPrefix, type Prefix } from "../src/Ids.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { as010 } from "./changes.js"
import { effect3, type Effect3, isHandle, recordStep, recording } from "./effect3.js"

const Schema3 = effect3("effect/Schema")
const JSONSchema3 = effect3("effect/JSONSchema")

export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type JsonObject = { readonly [key: string]: Json }

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const fixtureText = Fs.readFileSync(new URL("./fixtures/openapi.json", import.meta.url), "utf8")
// While the Effect 3 tree exists, its saved document (`pnpm openapi:fixture`, held to the Effect 3 API by
// packages/schema's OpenApiFixture test) is this copy.
if (recording && fixtureText !== Fs.readFileSync(new URL("../../../packages/schema/test/fixtures/openapi.json", import.meta.url), "utf8")) {
  throw new Error("test/fixtures/openapi.json is not packages/schema/test/fixtures/openapi.json: copy it")
}

/** The Effect 3 package's OpenAPI document, saved before the move (a copy of packages/schema's `test/fixtures/openapi.json`). */
export const fixture: JsonObject = JSON.parse(fixtureText)

const componentsOf = (document: JsonObject): JsonObject => {
  const components = document["components"]
  const schemas = isObject(components) ? components["schemas"] : undefined
  return isObject(schemas) ? schemas : {}
}

/** The document's `components.schemas` entry `name` (throws when it has none: a test names only those it has). */
export const component = (name: string): Json => {
  const found = componentsOf(fixture)[name]
  if (found === undefined) throw new Error(`no component ${name} in the fixture`)
  return found
}

/**
 * Every `examples` value the document gives: the components' own, and the request and response examples (Example
 * Objects' `value`s), by where they are (`components.schemas.Team`, `POST /v1/teams 201`…).
 */
export const documentExamples = (): Array<{ readonly at: string; readonly schema: Json | undefined; readonly value: Json }> => {
  const out: Array<{ readonly at: string; readonly schema: Json | undefined; readonly value: Json }> = []
  for (const [name, schema] of Object.entries(componentsOf(fixture))) {
    const examples = isObject(schema) ? schema["examples"] : undefined
    if (Array.isArray(examples)) for (const value of examples) out.push({ at: `components.schemas.${name}`, schema: { $ref: `#/components/schemas/${name}` }, value })
  }
  const media = (at: string, content: Json | undefined) => {
    if (!isObject(content)) return
    for (const [type, entry] of Object.entries(content)) {
      if (!isObject(entry) || !isObject(entry["examples"])) continue
      for (const example of Object.values(entry["examples"])) {
        if (isObject(example) && example["value"] !== undefined) out.push({ at: `${at} ${type}`, schema: entry["schema"], value: example["value"] })
      }
    }
  }
  const paths = fixture["paths"]
  for (const [path, item] of Object.entries(isObject(paths) ? paths : {})) {
    for (const [method, operation] of Object.entries(isObject(item) ? item : {})) {
      if (!isObject(operation)) continue
      const body = operation["requestBody"]
      if (isObject(body)) media(`${method.toUpperCase()} ${path} request`, body["content"])
      const responses = operation["responses"]
      for (const [status, response] of Object.entries(isObject(responses) ? responses : {})) {
        if (isObject(response)) media(`${method.toUpperCase()} ${path} ${status}`, response["content"])
      }
    }
  }
  return out
}

/** The examples the document gives for values of component `name` (its own and every request or response of it). */
export const examplesOfComponent = (name: string): Array<Json> =>
  documentExamples().flatMap(({ schema, value }) =>
    isObject(schema) && schema["$ref"] === `#/components/schemas/${name}` ? [value] : []
  )

/**
 * A JSON Schema in a form both versions' output share: references as `ref:<Name>` (Effect 4 names a transformed
 * schema's definition `<Name>Encoded`, the document `#/components/schemas/<Name>`), an `allOf` whose members add
 * keywords the schema does not already have merged into it (Effect 4 puts a check's keywords in `allOf` when they
 * repeat `type`; Effect 3 wraps a described `$ref` in `allOf`), and `$defs`/`definitions`, an empty `properties` or
 * `required` (Effect 3's records) and Effect 4's safe-integer bounds left out.
 */
export const normalise = (schema: Json): Json => {
  if (Array.isArray(schema)) return schema.map(normalise)
  if (!isObject(schema)) return schema
  let out: Record<string, Json> = {}
  for (const [key, value] of Object.entries(schema)) {
    // Effect 4's Schema.Int states the safe-integer bounds, Effect 3's did not: for the OpenAPI normalisation step.
    if ((key === "minimum" || key === "maximum") && Math.abs(Number(value)) === Number.MAX_SAFE_INTEGER && schema["type"] === "integer") continue
    if (key === "$defs" || key === "definitions") continue
    // Effect 3 writes a record's empty `properties` and `required`; they say nothing.
    if ((key === "properties" && isObject(value) && Object.keys(value).length === 0) || (key === "required" && Array.isArray(value) && value.length === 0)) continue
    if (key === "$ref" && typeof value === "string") {
      out[key] = `ref:${value.replace(/^#\/(?:\$defs|components\/schemas)\//, "").replace(/Encoded$/, "")}`
    } else out[key] = normalise(value)
  }
  const allOf = out["allOf"]
  if (Array.isArray(allOf)) {
    const rest: Array<Json> = []
    const { allOf: _, ...merged } = out
    out = merged
    for (const member of allOf) {
      const conflicts = isObject(member) && Object.entries(member).some(([key, value]) =>
        key in out && JSON.stringify(out[key]) !== JSON.stringify(value)
      )
      if (isObject(member) && !conflicts) out = { ...out, ...member }
      else rest.push(member)
    }
    if (rest.length > 0) out["allOf"] = rest
  }
  return out
}

/**
 * The JSON Schema Effect 4 gives `schema`, the definition it refers to at its root resolved, normalised. Objects
 * refuse unknown members (`additionalProperties: false`), as the Effect 3 document's request and response bodies do.
 */
export const jsonSchemaOf = (schema: Schema.Top): Json => {
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  const root = document.schema
  const ref = typeof root.$ref === "string" ? root.$ref.replace("#/$defs/", "") : undefined
  const resolved = ref === undefined ? root : document.definitions[ref]
  return normalise(JSON.parse(JSON.stringify(resolved)))
}

/** The JSON Schema Effect 3 gives the original, the same way (the document's generator, before OpenAPI's own steps). */
export const jsonSchema3Of = (schema: Effect3): Json => {
  const document: JsonObject = JSON.parse(JSON.stringify(recordStep("JSONSchema.make", [schema], () => JSONSchema3.make(schema))))
  const ref = document["$ref"]
  const definitions = document["$defs"]
  const resolved = typeof ref === "string" && isObject(definitions) ? definitions[ref.replace("#/$defs/", "")] : document
  const { $schema: _, ...rest } = isObject(resolved) ? resolved : {}
  return normalise(withoutGeneratedNoise(rest))
}

/** Without `title` and `$id` members, as the document's `removeGeneratedNoise` leaves Effect 3's output. */
export const withoutGeneratedNoise = (schema: Json): Json => {
  if (Array.isArray(schema)) return schema.map(withoutGeneratedNoise)
  if (!isObject(schema)) return schema
  return Object.fromEntries(
    Object.entries(schema).filter(([key, value]) => !((key === "title" || key === "$id") && typeof value === "string"))
      .map(([key, value]) => [key, withoutGeneratedNoise(value)])
  )
}

/** The normalised document component `name`. */
export const componentSchema = (name: string): Json => normalise(component(name))

/** Decoding `input`: the value, or the text. */
export type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string }

export const decode4 = (schema: Schema.ConstraintDecoder<unknown>, input: unknown): Outcome => {
  const exit = Schema.decodeUnknownExit(schema)(input)
  return Exit.isSuccess(exit) ? { ok: true, value: exit.value } : { ok: false, message: String(exit.cause) }
}

export const encode4 = (schema: Schema.ConstraintEncoder<unknown>, value: unknown): Outcome => {
  const exit = Schema.encodeUnknownExit(schema)(value)
  return Exit.isSuccess(exit) ? { ok: true, value: exit.value } : { ok: false, message: String(exit.cause) }
}

/** An Either of Effect 3 as an outcome (record mode: the step's own computation). */
const outcomeOf3 = (result: Effect3): { readonly ok: boolean; readonly value?: Effect3; readonly message?: Effect3 } =>
  String(result._tag) === "Right" ? { ok: true, value: result.right } : { ok: false, message: result.left.message }

/** A recorded outcome, read back. */
const outcome = (recorded: unknown): Outcome => {
  if (typeof recorded === "object" && recorded !== null && "ok" in recorded) {
    if (recorded.ok === true && "value" in recorded) return { ok: true, value: recorded.value }
    if (recorded.ok === false && "message" in recorded && typeof recorded.message === "string") return { ok: false, message: recorded.message }
  }
  throw new Error(`no outcome: ${JSON.stringify(recorded)}`)
}

export const decode3 = (schema: Effect3, input: unknown): Outcome =>
  outcome(recordStep("decode", [schema, input], () => outcomeOf3(Schema3.decodeUnknownEither(schema, { errors: "all" })(input)), { ok: true, value: input }))

export const encode3 = (schema: Effect3, value: unknown): Outcome =>
  outcome(recordStep("encode", [schema, value], () => outcomeOf3(Schema3.encodeUnknownEither(schema)(value)), { ok: true, value }))

/** The normalised schema of parameter `name` of the operation `method path` in the document. */
export const parameterSchema = (method: string, path: string, name: string): Json => {
  const paths = fixture["paths"]
  const item = isObject(paths) ? paths[path] : undefined
  const operation = isObject(item) ? item[method] : undefined
  const parameters = isObject(operation) ? operation["parameters"] : undefined
  const found = Array.isArray(parameters) ? parameters.find((p: Json) => isObject(p) && p["name"] === name) : undefined
  if (!isObject(found) || found["schema"] === undefined) throw new Error(`no parameter ${name} of ${method} ${path}`)
  return normalise(found["schema"])
}

/**
 * Decodes each input with both versions: both take it (to the same value, encoded back the same) or both refuse it.
 * Each list holds inputs of both kinds, so neither half of the comparison is empty.
 */
export const sameOn = <A, I>(port: Schema.Codec<A, I>, original: Effect3, inputs: ReadonlyArray<unknown>) => {
  let taken = 0
  for (const input of inputs) {
    const ported = decode4(port, input)
    const expected = decode3(original, input)
    expect(ported.ok, JSON.stringify(input)).toBe(expected.ok)
    if (ported.ok && expected.ok) {
      taken++
      expect(encode4(port, ported.value)).toEqual(encode3(original, expected.value))
    }
  }
  expect(taken).toBeGreaterThan(0)
  expect(taken).toBeLessThan(inputs.length)
}

/** Each example (a wire body) decodes with the port and with the original, and the port encodes it back unchanged. */
export const roundTrips = <A, I>(port: Schema.Codec<A, I>, original: Effect3, examples: ReadonlyArray<unknown>) => {
  expect(examples.length).toBeGreaterThan(0)
  for (const example of examples) {
    const ported = decode4(port, example)
    expect(ported, JSON.stringify(example)).toMatchObject({ ok: true })
    expect(decode3(original, example), JSON.stringify(example)).toMatchObject({ ok: true })
    if (ported.ok) expect(encode4(port, ported.value)).toEqual({ ok: true, value: example })
  }
}

/** `schema`'s member `key` and the schema without it. */
export const splitKey = (schema: Json, key: string): { readonly value: Json | undefined; readonly rest: Json } => {
  if (!isObject(schema)) return { value: undefined, rest: schema }
  const { [key]: value, ...rest } = schema
  return { value, rest }
}

/** The name of the document component `schema`'s JSON Schema refers to at its root (`<identifier>Encoded` read as it). */
export const componentNameOf = (schema: Schema.Top): string | undefined => {
  const ref = Schema.toJsonSchemaDocument(schema).schema.$ref
  const name = typeof ref === "string" ? ref.replace("#/$defs/", "").replace(/Encoded$/, "") : undefined
  return name !== undefined && componentsOf(fixture)[name] !== undefined ? name : undefined
}

/**
 * Holds every schema a module exports to the one of the same name in its Effect 3 original: the JSON Schema (the
 * document's component when it has one, else Effect 3's own), and the examples (`wireExamples`, what the document
 * shows), the changes made on purpose since 0.1.0 put back first (changes.ts). `known` rewrites a port's JSON Schema where a difference is real and written down, by name. Returns the
 * names compared.
 */
export const sameSchemas = (
  port: object,
  original: object,
  compare: (name: string, ported: Schema.Top, original: Effect3) => void,
  known: Record<string, (schema: Json) => Json> = {}
): Array<string> => {
  const names: Array<string> = []
  for (const name of Object.keys(original)) {
    const before: unknown = Reflect.get(original, name)
    if (!Schema3.isSchema(before) || !isHandle(before)) continue
    const after: unknown = Reflect.get(port, name)
    expect(Schema.isSchema(after), `${name} is ported`).toBe(true)
    if (!Schema.isSchema(after)) continue
    names.push(name)
    const component = componentNameOf(after)
    const adjust = known[name] ?? ((schema: Json) => schema)
    const ported = queryIntegersAsDocumented(adjust(as010(jsonSchemaOf(after))))
    const expected = withoutTransformedMemberDescriptions(idsAsReferences(component === undefined ? jsonSchema3Of(before) : componentSchema(component)))
    // Real differences, for the OpenAPI normalisation step: Effect 4 writes only JSON examples into a JSON Schema,
    // and writes them as the Type has them (a Date-holding example is left out; `deleted: true` where the wire has
    // "true"). The document's examples are the port's wire examples, which the step writes.
    const { value: examples, rest } = splitKey(expected, "examples")
    if (examples !== undefined) expect(examples, `${name} examples`).toEqual(as010(wireExamples(after.ast)))
    expect(splitKey(ported, "examples").rest, name).toEqual(rest)
    compare(name, after, before)
  }
  return names
}

const idNames: ReadonlyMap<string, string> = new Map(
  (Object.keys(IdsByPrefix) as Array<Prefix>).map((prefix) => [prefix, SchemaAST.resolveIdentifier(IdsByPrefix[prefix].ast) ?? ""])
)

/**
 * The document with each inline TypeID (Effect 3 inlines them, recognisable by their pattern) as the reference Effect
 * 4 makes of it: a real difference, for the OpenAPI normalisation step (`referencePolicy` inlines them again). What
 * the occurrence says of itself (`description`) stays beside the reference.
 */
export const idsAsReferences = (schema: Json): Json => {
  if (Array.isArray(schema)) return schema.map(idsAsReferences)
  if (!isObject(schema)) return schema
  const pattern = schema["pattern"]
  const prefix = typeof pattern === "string" ? /^\^([a-z]+)_\[0-7\]/.exec(pattern)?.[1] : undefined
  const id = prefix === undefined ? undefined : idNames.get(prefix)
  if (id !== undefined && id !== "") {
    const description = schema["description"]
    return typeof description === "string" ? { $ref: `ref:${id}`, description } : { $ref: `ref:${id}` }
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, idsAsReferences(value)]))
}

/** Named schemas that are transformations: what Effect 4 writes of a member of them. */
const transformed = new Set(["ref:Timestamp", "ref:BooleanFromString", "ref:Email", "ref:MailAddress"])

/**
 * A real difference, for the OpenAPI normalisation step: a member's own description of a transformed named schema
 * (a Timestamp member's "When it was deleted", with annotateKey or annotate) does not reach Effect 4's JSON Schema;
 * Effect 3 wrote it beside the reference. Left out of the document's side here.
 */
export const withoutTransformedMemberDescriptions = (schema: Json): Json => {
  if (Array.isArray(schema)) return schema.map(withoutTransformedMemberDescriptions)
  if (!isObject(schema)) return schema
  // A real difference too: Effect 3 described a checked string by its last check ("a string at most 256
  // character(s) long", once in the document: SignInRequest's password); Effect 4 generates no description.
  const description = schema["description"]
  if (typeof description === "string" && /^a string at (?:most|least) \d+ character\(s\) long$/.test(description)) {
    return withoutTransformedMemberDescriptions(splitKey(schema, "description").rest)
  }
  const ref = schema["$ref"]
  if (typeof ref === "string" && transformed.has(ref)) return { $ref: ref }
  // Effect 3 inlined a copy of a transformed schema a member described (its override then dropped the description).
  for (const name of ["Timestamp", "Email", "MailAddress"]) {
    if (JSON.stringify(schema) === JSON.stringify(component(name))) return { $ref: `ref:${name}` }
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, withoutTransformedMemberDescriptions(value)]))
}

/**
 * A real difference, for the OpenAPI normalisation step (see Common.test.ts): a QueryInteger member is
 * `{ type: "string", allOf: [{ type: "integer", minimum, maximum }] }` in Effect 4, `{ type: "integer", minimum,
 * maximum }` in the document. Read here as the document has it, to compare the rest.
 */
export const queryIntegersAsDocumented = (schema: Json): Json => {
  if (Array.isArray(schema)) return schema.map(queryIntegersAsDocumented)
  if (!isObject(schema)) return schema
  const allOf = schema["allOf"]
  const integer = Array.isArray(allOf) && allOf.length === 1 ? allOf[0] : undefined
  if (schema["type"] === "string" && isObject(integer) && integer["type"] === "integer") {
    const { allOf: _, ...rest } = schema
    return { ...rest, ...integer }
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, queryIntegersAsDocumented(value)]))
}

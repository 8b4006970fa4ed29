/**
 * What the OpenAPI document says beyond what the generator writes: the request guard's NUL rule on every request
 * string, request unions as discriminated `oneOf`s, and none of the generator's noise (refinement titles, `$id`s of
 * keywords). Pure functions over the generated document, which `Api.ts`'s transform applies.
 */
import { NO_NUL_PATTERN } from "./Common.js"
import type { Json, JsonObject } from "./OpenApiExamples.js"
import { arrayAt, isJsonObject, objectAt } from "./internal/json.js"


/** A schema's `$ref`, when it is one. */
const refOf = (schema: Json | undefined): string | undefined => {
  const ref = isJsonObject(schema) ? schema["$ref"] : undefined
  return typeof ref === "string" ? ref : undefined
}

/** The document's `components.schemas`. */
const componentsOf = (spec: JsonObject): JsonObject => objectAt(objectAt(spec, "components"), "schemas") ?? {}

/** Formats whose grammar has no NUL (RFC 3339, RFC 5321, RFC 1123, RFC 3986, RFC 4122, ...). */
const formatsWithoutNul = new Set(["date-time", "date", "time", "email", "hostname", "uri", "uri-reference", "uuid", "ipv4", "ipv6"])

/** The index just past the group that opens at `start`, or -1. */
const groupEnd = (pattern: string, start: number): number => {
  let depth = 0
  let inClass = false
  for (let i = start; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === "\\") i++
    else if (inClass) inClass = c !== "]"
    else if (c === "[") inClass = true
    else if (c === "(") depth++
    else if (c === ")" && --depth === 0) return i + 1
  }
  return -1
}

/**
 * The atoms of a regular expression that consume characters (character classes, escapes, `.` and literal
 * characters), leaving out what consumes none (anchors, groups, alternation, quantifiers, lookarounds).
 */
const atomsOf = (pattern: string): Array<string> | undefined => {
  const atoms: Array<string> = []
  let i = 0
  while (i < pattern.length) {
    const c = pattern[i]!
    if (c === "\\") {
      const next = pattern[i + 1]
      if (next === undefined) return undefined
      let end = i + 2
      if (next === "u" && pattern[end] === "{") end = pattern.indexOf("}", end) + 1
      else if (next === "u") end += 4
      else if (next === "x") end += 2
      else if ((next === "p" || next === "P") && pattern[end] === "{") end = pattern.indexOf("}", end) + 1
      else if (next === "c") end += 1
      if (end <= i) return undefined
      atoms.push(pattern.slice(i, end))
      i = end
    } else if (c === "[") {
      let end = i + 1
      if (pattern[end] === "^") end++
      if (pattern[end] === "]") end++
      while (end < pattern.length && pattern[end] !== "]") end += pattern[end] === "\\" ? 2 : 1
      if (end >= pattern.length) return undefined
      atoms.push(pattern.slice(i, end + 1))
      i = end + 1
    } else if (c === "(") {
      const lookaround = pattern[i + 1] === "?" &&
        (pattern[i + 2] === "=" || pattern[i + 2] === "!" || (pattern[i + 2] === "<" && (pattern[i + 3] === "=" || pattern[i + 3] === "!")))
      // A lookaround consumes nothing: skipped whole. Otherwise only the group's opening, whose atoms follow.
      if (lookaround) i = groupEnd(pattern, i)
      else if (pattern[i + 1] !== "?") i++
      else if (pattern[i + 2] === "<") i = pattern.indexOf(">", i) + 1
      else i += 3
      if (i <= 0) return undefined
    } else if (c === "{") {
      const end = pattern.indexOf("}", i)
      if (end === -1) return undefined
      i = end + 1
    } else if ("^$|)*+?".includes(c)) {
      i++
    } else {
      // `]` and `}` alone are syntax errors with the `u` flag: escaped, they are the characters.
      atoms.push(c === "]" || c === "}" ? `\\${c}` : c)
      i++
    }
  }
  return atoms
}

/**
 * Whether no string that contains NUL can match `pattern`: none of its atoms matches NUL. Conservative: a pattern it
 * cannot read is taken to allow NUL.
 */
export const excludesNul = (pattern: string): boolean => {
  const atoms = atomsOf(pattern)
  if (atoms === undefined) return false
  try {
    return atoms.every((atom) => !new RegExp(`^(?:${atom})$`, "u").test("\u0000"))
  } catch {
    return false
  }
}

const isText = (schema: JsonObject) => schema["type"] === "string" && !("enum" in schema) && !("const" in schema)

/** Whether the schema already refuses NUL: a format without it, or a pattern (its own or in `allOf`) that excludes it. */
const refusesNul = (schema: JsonObject): boolean => {
  const format = schema["format"]
  const patterns = [schema["pattern"], ...(arrayAt(schema, "allOf") ?? []).map((member) => isJsonObject(member) ? member["pattern"] : undefined)]
  return (typeof format === "string" && formatsWithoutNul.has(format)) ||
    patterns.some((pattern) => typeof pattern === "string" && excludesNul(pattern))
}

/** The rule added to a schema: as its pattern, or beside its own pattern in `allOf` (a schema has one `pattern`). */
const addNulRule = (schema: JsonObject) => {
  if (schema["pattern"] === undefined) schema["pattern"] = NO_NUL_PATTERN
  else schema["allOf"] = [...(arrayAt(schema, "allOf") ?? []), { pattern: NO_NUL_PATTERN }]
}

/** The schemas directly under `schema`: members, items, alternatives. */
const subschemas = function*(schema: JsonObject): Generator<JsonObject> {
  for (const key of ["properties", "patternProperties", "dependentSchemas", "$defs"]) {
    yield* Object.values(objectAt(schema, key) ?? {}).filter(isJsonObject)
  }
  for (const key of ["items", "additionalProperties", "propertyNames", "contains", "not", "if", "then", "else"]) {
    const member = objectAt(schema, key)
    if (member !== undefined) yield member
  }
  for (const key of ["allOf", "anyOf", "oneOf", "prefixItems"]) {
    yield* (arrayAt(schema, key) ?? []).filter(isJsonObject)
  }
}

const REF_PREFIX = "#/components/schemas/"

const refsUnder = (value: Json | undefined, found: Set<string>, components: JsonObject) => {
  if (Array.isArray(value)) {
    for (const item of value) refsUnder(item, found, components)
  } else if (isJsonObject(value)) {
    const ref = value["$ref"]
    if (typeof ref === "string" && ref.startsWith(REF_PREFIX)) {
      const name = ref.slice(REF_PREFIX.length)
      if (!found.has(name)) {
        found.add(name)
        refsUnder(components[name], found, components)
      }
    }
    for (const [key, member] of Object.entries(value)) {
      if (key !== "examples" && key !== "example") refsUnder(member, found, components)
    }
  }
}

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

const operationsOf = function*(spec: JsonObject): Generator<JsonObject> {
  for (const item of Object.values(objectAt(spec, "paths") ?? {})) {
    for (const [method, operation] of Object.entries(isJsonObject(item) ? item : {})) {
      if (methods.includes(method) && isJsonObject(operation)) yield operation
    }
  }
}

/** The body media types whose strings the request guard checks for NUL (a raw body, such as a webhook's, is not read). */
const checkedMediaTypes = ["application/json", "application/x-www-form-urlencoded", "text/plain"]

/** The schema of every parameter and checked body of every operation. */
const requestSchemasOf = function*(spec: JsonObject): Generator<JsonObject> {
  for (const operation of operationsOf(spec)) {
    for (const parameter of arrayAt(operation, "parameters") ?? []) {
      const schema = objectAt(parameter, "schema")
      if (schema !== undefined) yield schema
    }
    for (const [type, media] of Object.entries(objectAt(objectAt(operation, "requestBody"), "content") ?? {})) {
      const schema = objectAt(media, "schema")
      if (checkedMediaTypes.includes(type) && schema !== undefined) yield schema
    }
  }
}

/**
 * Adds the NUL rule (`^[^\u0000]*$`) to every request string that does not already refuse NUL, which the request
 * guard refuses in every string of every request. Components only requests use are changed in place; a string
 * component that responses use too (a cursor) gets the rule where a request refers to it, so responses keep theirs.
 */
export const documentNulRule = (spec: JsonObject): void => {
  const components = componentsOf(spec)
  const responseComponents = new Set<string>()
  for (const operation of operationsOf(spec)) refsUnder(operation["responses"], responseComponents, components)
  const visited = new Set<JsonObject>()
  const visit = (schema: JsonObject) => {
    if (visited.has(schema)) return
    visited.add(schema)
    const allOf = arrayAt(schema, "allOf")
    const ref = refOf(schema) ?? (allOf?.length === 1 ? refOf(allOf[0]) : undefined)
    const name = ref?.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : undefined
    const target = name === undefined ? undefined : components[name]
    if (name !== undefined && target !== undefined && responseComponents.has(name)) {
      // Shared with responses: the rule goes on the reference, never on the component (nor anything under it).
      if (isJsonObject(target) && isText(target) && !refusesNul(target) && !refusesNul(schema)) {
        if (schema["$ref"] !== undefined) {
          const { $ref, ...rest } = schema
          for (const key of Object.keys(schema)) delete schema[key]
          Object.assign(schema, { allOf: [{ $ref }], ...rest })
        }
        addNulRule(schema)
      }
      return
    } else if (isJsonObject(target)) {
      visit(target)
    }
    if (isText(schema) && !refusesNul(schema)) addNulRule(schema)
    for (const member of subschemas(schema)) visit(member)
  }
  for (const schema of requestSchemasOf(spec)) visit(schema)
}

/** The single value a member schema allows: `const`, or an `enum` of one. */
const singleValue = (schema: Json | undefined): Json | undefined => {
  if (!isJsonObject(schema)) return undefined
  const values = schema["enum"]
  return "const" in schema ? schema["const"] : Array.isArray(values) && values.length === 1 ? values[0] : undefined
}

/** The single value member `key` of an object schema allows when the schema requires it: the object's tag. */
const tagOf = (schema: Json | undefined, key: string): Json | undefined =>
  isJsonObject(schema) && schema["type"] === "object" && arrayAt(schema, "required")?.includes(key) === true
    ? singleValue(objectAt(schema, "properties")?.[key])
    : undefined

/** `anyOf` alternatives with nested bare `anyOf`s (how the platform joins union members) flattened. */
const flatAlternatives = (alternatives: ReadonlyArray<Json>): Array<Json> =>
  alternatives.flatMap((alternative): Array<Json> =>
    isJsonObject(alternative) && Array.isArray(alternative["anyOf"]) && Object.keys(alternative).length === 1
      ? flatAlternatives(alternative["anyOf"])
      : [alternative]
  )

/**
 * Writes each request union of objects told apart by one member (`authType`, `kind`, `protocol`) as a `oneOf` with a
 * `discriminator`, so that generated clients get a tagged union: the generator writes `anyOf`, nested pairwise.
 */
export const discriminateRequestUnions = (spec: JsonObject): void => {
  const components = componentsOf(spec)
  const resolve = (schema: Json): Json | undefined => {
    const ref = refOf(schema)
    return ref === undefined ? schema : components[ref.slice(REF_PREFIX.length)]
  }
  const visited = new Set<JsonObject>()
  const visit = (schema: JsonObject) => {
    if (visited.has(schema)) return
    visited.add(schema)
    const anyOf = arrayAt(schema, "anyOf")
    if (anyOf !== undefined) {
      const alternatives = flatAlternatives(anyOf)
      const objects = alternatives.map(resolve)
      const first = objects[0]
      const propertyName = first === undefined || alternatives.length < 2
        ? undefined
        : Object.keys(objectAt(first, "properties") ?? {}).find((key) => {
          const tags = objects.map((object) => tagOf(object, key))
          return tags.every((tag) => tag !== undefined) && new Set(tags).size === objects.length
        })
      if (propertyName !== undefined) {
        const refs = alternatives.map(refOf)
        delete schema["anyOf"]
        schema["oneOf"] = alternatives
        schema["discriminator"] = {
          propertyName,
          ...(refs.every((ref) => ref !== undefined)
            ? { mapping: Object.fromEntries(refs.map((ref, i) => [String(tagOf(objects[i], propertyName)), ref])) }
            : {})
        }
      }
    }
    const target = refOf(schema) === undefined ? undefined : resolve(schema)
    if (isJsonObject(target)) visit(target)
    for (const member of subschemas(schema)) visit(member)
  }
  for (const schema of requestSchemasOf(spec)) visit(schema)
}

/** `$id`s the generator gives keywords (`/schemas/unknown`, `/schemas/object`, ...): they name nothing. */
const GENERATED_ID = /^\/schemas\//

/**
 * Removes what the generator writes for every refinement and keyword: titles such as `maxLength(4096)`, `int` or
 * `Trim`, and `$id: /schemas/unknown`. The API gives its schemas no titles of its own (components are named by their
 * identifiers), so every `title` of a schema is such noise; `title` members of objects (under `properties`) stay.
 */
export const removeGeneratedNoise = (spec: JsonObject): void => {
  const visited = new Set<JsonObject>()
  const visit = (schema: JsonObject) => {
    if (visited.has(schema)) return
    visited.add(schema)
    if (typeof schema["title"] === "string") delete schema["title"]
    const id = schema["$id"]
    if (typeof id === "string" && GENERATED_ID.test(id)) delete schema["$id"]
    for (const member of subschemas(schema)) visit(member)
  }
  // A parameter's or media type's schema.
  const visitSchemaOf = (holder: Json) => {
    const schema = objectAt(holder, "schema")
    if (schema !== undefined) visit(schema)
  }
  for (const schema of Object.values(componentsOf(spec)).filter(isJsonObject)) visit(schema)
  for (const operation of operationsOf(spec)) {
    for (const parameter of arrayAt(operation, "parameters") ?? []) visitSchemaOf(parameter)
    for (const media of Object.values(objectAt(objectAt(operation, "requestBody"), "content") ?? {})) visitSchemaOf(media)
    for (const response of Object.values(objectAt(operation, "responses") ?? {})) {
      for (const media of Object.values(objectAt(response, "content") ?? {})) visitSchemaOf(media)
    }
  }
}

/**
 * The document as published: a copy of the generated one (the generator may share objects between schemas, and
 * with the schemas' own annotations) with the request guard's NUL rule, discriminated request unions, and no noise.
 */
export const shapeDocument = (spec: JsonObject): JsonObject => {
  const shaped = structuredClone(spec)
  removeGeneratedNoise(shaped)
  documentNulRule(shaped)
  discriminateRequestUnions(shaped)
  return shaped
}

/**
 * What the OpenAPI document says beyond what the generator writes: the request guard's NUL rule on every request
 * string, request unions as discriminated `oneOf`s, and none of the generator's noise (refinement titles, `$id`s of
 * keywords). Pure functions over the generated document, which `Api.ts`'s transform applies.
 */
import { NO_NUL_PATTERN } from "./Common.js"

type JsonSchema = Record<string, any>

const isObject = (value: unknown): value is JsonSchema => typeof value === "object" && value !== null && !Array.isArray(value)

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

const isText = (schema: JsonSchema) => schema.type === "string" && !("enum" in schema) && !("const" in schema)

/** Whether the schema already refuses NUL: a format without it, or a pattern (its own or in `allOf`) that excludes it. */
const refusesNul = (schema: JsonSchema): boolean =>
  formatsWithoutNul.has(schema.format) ||
  [schema.pattern, ...(Array.isArray(schema.allOf) ? schema.allOf.map((member: JsonSchema) => member?.pattern) : [])]
    .some((pattern) => typeof pattern === "string" && excludesNul(pattern))

/** The rule added to a schema: as its pattern, or beside its own pattern in `allOf` (a schema has one `pattern`). */
const addNulRule = (schema: JsonSchema) => {
  if (schema.pattern === undefined) schema.pattern = NO_NUL_PATTERN
  else schema.allOf = [...(schema.allOf ?? []), { pattern: NO_NUL_PATTERN }]
}

/** The schemas directly under `schema`: members, items, alternatives. */
const subschemas = function*(schema: JsonSchema): Generator<JsonSchema> {
  for (const key of ["properties", "patternProperties", "dependentSchemas", "$defs"]) {
    if (isObject(schema[key])) yield* Object.values(schema[key]).filter(isObject)
  }
  for (const key of ["items", "additionalProperties", "propertyNames", "contains", "not", "if", "then", "else"]) {
    if (isObject(schema[key])) yield schema[key]
  }
  for (const key of ["allOf", "anyOf", "oneOf", "prefixItems"]) {
    if (Array.isArray(schema[key])) yield* schema[key].filter(isObject)
  }
}

const REF_PREFIX = "#/components/schemas/"

const refsUnder = (value: unknown, found: Set<string>, components: Record<string, JsonSchema>) => {
  if (Array.isArray(value)) {
    for (const item of value) refsUnder(item, found, components)
  } else if (isObject(value)) {
    const ref = value.$ref
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

const operationsOf = function*(spec: JsonSchema): Generator<JsonSchema> {
  for (const item of Object.values<JsonSchema>(spec.paths ?? {})) {
    for (const [method, operation] of Object.entries<JsonSchema>(item)) {
      if (["get", "put", "post", "delete", "options", "head", "patch", "trace"].includes(method) && isObject(operation)) yield operation
    }
  }
}

/** The body media types whose strings the request guard checks for NUL (a raw body, such as a webhook's, is not read). */
const checkedMediaTypes = ["application/json", "application/x-www-form-urlencoded", "text/plain"]

/** The schema of every parameter and checked body of every operation. */
const requestSchemasOf = function*(spec: JsonSchema): Generator<JsonSchema> {
  for (const operation of operationsOf(spec)) {
    for (const parameter of operation.parameters ?? []) {
      if (isObject(parameter.schema)) yield parameter.schema
    }
    for (const [type, media] of Object.entries<JsonSchema>(operation.requestBody?.content ?? {})) {
      if (checkedMediaTypes.includes(type) && isObject(media.schema)) yield media.schema
    }
  }
}

/**
 * Adds the NUL rule (`^[^\u0000]*$`) to every request string that does not already refuse NUL, which the request
 * guard refuses in every string of every request. Components only requests use are changed in place; a string
 * component that responses use too (a cursor) gets the rule where a request refers to it, so responses keep theirs.
 */
export const documentNulRule = (spec: JsonSchema): void => {
  const components: Record<string, JsonSchema> = spec.components?.schemas ?? {}
  const responseComponents = new Set<string>()
  for (const operation of operationsOf(spec)) refsUnder(operation.responses, responseComponents, components)
  const visited = new Set<JsonSchema>()
  const visit = (schema: JsonSchema) => {
    if (visited.has(schema)) return
    visited.add(schema)
    const ref = typeof schema.$ref === "string"
      ? schema.$ref
      : Array.isArray(schema.allOf) && schema.allOf.length === 1 && typeof schema.allOf[0]?.$ref === "string"
      ? schema.allOf[0].$ref as string
      : undefined
    const name = ref?.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : undefined
    const target = name === undefined ? undefined : components[name]
    if (name !== undefined && target !== undefined && responseComponents.has(name)) {
      // Shared with responses: the rule goes on the reference, never on the component (nor anything under it).
      if (isText(target) && !refusesNul(target) && !refusesNul(schema)) {
        if (schema.$ref !== undefined) {
          const { $ref, ...rest } = schema
          for (const key of Object.keys(schema)) delete schema[key]
          Object.assign(schema, { allOf: [{ $ref }], ...rest })
        }
        addNulRule(schema)
      }
      return
    } else if (target !== undefined) {
      visit(target)
    }
    if (isText(schema) && !refusesNul(schema)) addNulRule(schema)
    for (const member of subschemas(schema)) visit(member)
  }
  for (const schema of requestSchemasOf(spec)) visit(schema)
}

/** The single value a member schema allows: `const`, or an `enum` of one. */
const singleValue = (schema: JsonSchema | undefined): unknown =>
  schema === undefined ? undefined : "const" in schema ? schema.const : Array.isArray(schema.enum) && schema.enum.length === 1 ? schema.enum[0] : undefined

/** `anyOf` alternatives with nested bare `anyOf`s (how the platform joins union members) flattened. */
const flatAlternatives = (alternatives: ReadonlyArray<JsonSchema>): Array<JsonSchema> =>
  alternatives.flatMap((alternative) =>
    Array.isArray(alternative.anyOf) && Object.keys(alternative).length === 1 ? flatAlternatives(alternative.anyOf) : [alternative]
  )

/**
 * Writes each request union of objects told apart by one member (`authType`, `kind`, `protocol`) as a `oneOf` with a
 * `discriminator`, so that generated clients get a tagged union: the generator writes `anyOf`, nested pairwise.
 */
export const discriminateRequestUnions = (spec: JsonSchema): void => {
  const components: Record<string, JsonSchema> = spec.components?.schemas ?? {}
  const resolve = (schema: JsonSchema): JsonSchema | undefined =>
    typeof schema.$ref === "string" ? components[schema.$ref.slice(REF_PREFIX.length)] : schema
  const visited = new Set<JsonSchema>()
  const visit = (schema: JsonSchema) => {
    if (visited.has(schema)) return
    visited.add(schema)
    if (Array.isArray(schema.anyOf)) {
      const alternatives = flatAlternatives(schema.anyOf)
      const objects = alternatives.map(resolve)
      const first = objects[0]
      const propertyName = first === undefined || alternatives.length < 2
        ? undefined
        : Object.keys(first.properties ?? {}).find((key) =>
          objects.every((object) => object?.type === "object" && object.required?.includes(key) && singleValue(object.properties?.[key]) !== undefined) &&
          new Set(objects.map((object) => singleValue(object!.properties[key]))).size === objects.length
        )
      if (propertyName !== undefined) {
        delete schema.anyOf
        schema.oneOf = alternatives
        schema.discriminator = {
          propertyName,
          ...(alternatives.every((alternative) => typeof alternative.$ref === "string")
            ? { mapping: Object.fromEntries(alternatives.map((alternative, i) => [String(singleValue(objects[i]!.properties[propertyName])), alternative.$ref])) }
            : {})
        }
      }
    }
    const target = typeof schema.$ref === "string" ? resolve(schema) : undefined
    if (target !== undefined) visit(target)
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
export const removeGeneratedNoise = (spec: JsonSchema): void => {
  const visited = new Set<JsonSchema>()
  const visit = (schema: JsonSchema) => {
    if (visited.has(schema)) return
    visited.add(schema)
    if (typeof schema.title === "string") delete schema.title
    if (typeof schema.$id === "string" && GENERATED_ID.test(schema.$id)) delete schema.$id
    for (const member of subschemas(schema)) visit(member)
  }
  for (const schema of Object.values<JsonSchema>(spec.components?.schemas ?? {})) visit(schema)
  for (const operation of operationsOf(spec)) {
    for (const parameter of operation.parameters ?? []) {
      if (isObject(parameter.schema)) visit(parameter.schema)
    }
    for (const media of Object.values<JsonSchema>(operation.requestBody?.content ?? {})) {
      if (isObject(media.schema)) visit(media.schema)
    }
    for (const response of Object.values<JsonSchema>(operation.responses ?? {})) {
      for (const media of Object.values<JsonSchema>(response.content ?? {})) {
        if (isObject(media.schema)) visit(media.schema)
      }
    }
  }
}

/**
 * The document as published: a copy of the generated one (the generator may share objects between schemas, and
 * with the schemas' own annotations) with the request guard's NUL rule, discriminated request unions, and no noise.
 */
export const shapeDocument = (spec: JsonSchema): JsonSchema => {
  const shaped = structuredClone(spec)
  removeGeneratedNoise(shaped)
  documentNulRule(shaped)
  discriminateRequestUnions(shaped)
  return shaped
}

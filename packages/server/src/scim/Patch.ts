/**
 * SCIM resources as values and PATCH (RFC 7644 §3.5.2) as real directories send it.
 *
 * `readResource` turns what a client sent into the canonical resource (advertised attributes only, canonical names,
 * typed values); `applyPatch` first normalises the operations (ops in any case, `"False"`/`"True"` strings, a
 * no-path add/replace split into one operation per key including dotted keys such as `name.givenName` and
 * `emails[type eq "work"].value`, the enterprise URN as a key or a path prefix), checks every path against the
 * advertised schema (unknown → `invalidPath`, readOnly/immutable → `mutability`, a filter matching nothing on remove →
 * `noTarget`, a value of the wrong type → `invalidValue`) and then applies them with `scim-patch`, which handles
 * the path grammar, value filters and multi-valued merges. Decision: scim-patch alone accepts unknown paths (it adds
 * them), string booleans, and a remove or replace whose filter matches nothing, so these checks are ours, before it
 * runs. One exception, for Entra: a no-path replace whose value has a value-filter key (`emails[type eq "work"].value`,
 * a form the RFC does not define) adds the value when nothing matches, as a no-path replace "adds where an attribute
 * did not previously exist" (RFC 7644 §3.5.2.3); a replace with that path (the RFC's form) is `noTarget`.
 *
 * `primary` (Primary.ts) is true on one value at most: a resource sent with more is `invalidValue` (which of them is
 * primary decides the person's account, so the server does not guess), and an add or replace that makes a value
 * primary makes the others not (RFC 7644 §3.5.2).
 */
import * as Data from "effect/Data"
import * as Result from "effect/Result"
import { scimPatch, type ScimPatchOperation } from "scim-patch"
import { filter as matches, parse as parseFilter } from "scim2-parse-filter"
import {
  type Attribute,
  extensionOf,
  MaxOperations,
  MaxStringLength,
  MaxValues,
  resolvePath,
  type ResourceTypeDefinition
} from "./Attributes.js"
import { settlePrimary, tooManyPrimaries } from "./Primary.js"

export type PatchScimType = "invalidSyntax" | "invalidPath" | "invalidValue" | "mutability" | "noTarget"

/** A request the schema refuses: SCIM 400 with the given `scimType`. */
export class PatchError extends Data.TaggedError("PatchError")<{
  readonly scimType: PatchScimType
  readonly detail: string
}> {}

type Resource = Record<string, unknown>
const fail = (scimType: PatchScimType, detail: string) => Result.fail(new PatchError({ scimType, detail }))

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Attributes a client may send that the server accepts and never stores (Okta's PUT carries `password`). */
const ignoredWrites = new Set(["password"])

/** One value of an attribute, in its canonical form; sub-attributes the server does not keep are dropped. */
const readValue = (attribute: Attribute, value: unknown, path: string): Result.Result<unknown, PatchError> => {
  if (value === null) return Result.succeed(null)
  switch (attribute.type) {
    case "boolean": {
      if (typeof value === "boolean") return Result.succeed(value)
      // Entra sends "True"/"False" strings.
      if (typeof value === "string" && /^(true|false)$/i.test(value)) return Result.succeed(value.toLowerCase() === "true")
      return fail("invalidValue", `${path} must be a boolean.`)
    }
    case "string":
    case "reference":
    case "dateTime": {
      if (typeof value !== "string") return fail("invalidValue", `${path} must be a string.`)
      if (value.includes("\u0000")) return fail("invalidValue", `${path} must not contain a NUL character.`)
      if (value.length > MaxStringLength) return fail("invalidValue", `${path} is longer than ${MaxStringLength} characters.`)
      return Result.succeed(value)
    }
    case "integer":
    case "decimal":
      return typeof value === "number" && Number.isFinite(value)
        ? Result.succeed(value)
        : fail("invalidValue", `${path} must be a number.`)
    case "complex": {
      // Entra sets the enterprise manager with the id alone: `"value": "<id>"` for `manager`.
      if (typeof value === "string" && !attribute.multiValued && attribute.subAttributes?.some(({ name }) => name === "value")) {
        return readValue(attribute, { value }, path)
      }
      if (!isObject(value)) return fail("invalidValue", `${path} must be an object.`)
      const result: Record<string, unknown> = {}
      for (const [key, item] of Object.entries(value)) {
        const sub = attribute.subAttributes?.find((candidate) => candidate.name.toLowerCase() === key.toLowerCase())
        if (sub === undefined || sub.mutability === "readOnly") continue
        const read = readValue(sub, item, `${path}.${sub.name}`)
        if (Result.isFailure(read)) return Result.fail(read.failure)
        if (read.success !== null) result[sub.name] = read.success
      }
      return Result.succeed(result)
    }
  }
}

/** A whole attribute's value: a multi-valued one is an array (a single element is taken as one, as Entra sends it). */
const readAttribute = (attribute: Attribute, value: unknown, path: string): Result.Result<unknown, PatchError> => {
  if (!attribute.multiValued || value === null) return readValue(attribute, value, path)
  const items = Array.isArray(value) ? value : [value]
  if (items.length > MaxValues) return fail("invalidValue", `${path} has more than ${MaxValues} values.`)
  const read: Array<unknown> = []
  for (const item of items) {
    const one = readValue(attribute, item, path)
    if (Result.isFailure(one)) return Result.fail(one.failure)
    if (one.success !== null) read.push(one.success)
  }
  return Result.succeed(read)
}

const readAttributes = (
  attributes: ReadonlyArray<Attribute>,
  input: Record<string, unknown>,
  prefix: string
): Result.Result<Resource, PatchError> => {
  const result: Resource = {}
  for (const [key, value] of Object.entries(input)) {
    const attribute = attributes.find((candidate) => candidate.name.toLowerCase() === key.toLowerCase())
    if (attribute === undefined || attribute.mutability === "readOnly") continue
    const read = readAttribute(attribute, value, `${prefix}${attribute.name}`)
    if (Result.isFailure(read)) return Result.fail(read.failure)
    const empty = read.success === null || (Array.isArray(read.success) && read.success.length === 0) ||
      (isObject(read.success) && Object.keys(read.success).length === 0)
    if (!empty) result[attribute.name] = read.success
  }
  return Result.succeed(result)
}

/**
 * What a client sent as a resource (POST, PUT, a patched document), canonical: advertised attributes only (unknown
 * ones and readOnly ones such as `id` and `meta` are ignored, as RFC 7644 §3.3 lets a server do), enterprise
 * attributes under their URN, `externalId` kept, required attributes checked.
 */
export const readResource = (
  resourceType: ResourceTypeDefinition,
  input: unknown
): Result.Result<Resource, PatchError> => {
  if (!isObject(input)) return fail("invalidSyntax", "The resource must be a JSON object.")
  const core: Record<string, unknown> = {}
  const extensions: Record<string, Record<string, unknown>> = {}
  for (const [key, value] of Object.entries(input)) {
    const extension = extensionOf(resourceType, key)
    if (extension !== undefined) {
      if (value === null) continue
      if (!isObject(value)) return fail("invalidValue", `${extension.id} must be an object.`)
      extensions[extension.id] = value
    } else if (key.toLowerCase() === "externalid") {
      if (value !== null && typeof value !== "string") return fail("invalidValue", "externalId must be a string.")
      if (typeof value === "string" && value.includes("\u0000")) {
        return fail("invalidValue", "externalId must not contain a NUL character.")
      }
      // As every string attribute, and as a PATCH of externalId reads it.
      if (typeof value === "string" && value.length > MaxStringLength) {
        return fail("invalidValue", `externalId is longer than ${MaxStringLength} characters.`)
      }
      if (typeof value === "string" && value !== "") core.externalId = value
    } else if (!ignoredWrites.has(key.toLowerCase())) {
      core[key] = value
    }
  }
  const read = readAttributes(resourceType.schema.attributes, core, "")
  if (Result.isFailure(read)) return Result.fail(read.failure)
  const result: Resource = { ...(core.externalId === undefined ? {} : { externalId: core.externalId }), ...read.success }
  for (const extension of resourceType.extensions) {
    const value = extensions[extension.id]
    if (value === undefined) continue
    const attributes = readAttributes(extension.attributes, value, `${extension.id}:`)
    if (Result.isFailure(attributes)) return Result.fail(attributes.failure)
    if (Object.keys(attributes.success).length > 0) result[extension.id] = attributes.success
  }
  for (const attribute of resourceType.schema.attributes) {
    if (attribute.required && (typeof result[attribute.name] !== "string" || (result[attribute.name] as string).trim() === "")) {
      return fail("invalidValue", `${attribute.name} is required.`)
    }
  }
  const primaries = tooManyPrimaries(resourceType, result)
  if (primaries !== undefined) return fail("invalidValue", primaries)
  return Result.succeed(result)
}


interface NormalisedOperation {
  readonly op: "add" | "remove" | "replace"
  readonly path: string | undefined
  readonly value: unknown
  /** Split from a no-path add or replace (see the module comment: a filter matching nothing then adds). */
  readonly fromNoPath?: true
}

interface ParsedPath {
  readonly attribute: Attribute
  readonly schema: string
  readonly filter: string | undefined
  readonly subAttribute: Attribute | undefined
  /** The path rewritten with canonical names, as scim-patch reads it. */
  readonly canonical: string
}

/** `attr`, `attr.sub`, `attr[filter]`, `attr[filter].sub`, each optionally behind a schema URN. */
const parsePath = (resourceType: ResourceTypeDefinition, path: string): Result.Result<ParsedPath, PatchError> => {
  const open = path.indexOf("[")
  const close = path.lastIndexOf("]")
  const head = open === -1 ? path : path.slice(0, open)
  const filter = open === -1 ? undefined : path.slice(open + 1, close)
  const tail = open === -1 ? "" : path.slice(close + 1)
  if (open !== -1 && (close < open || (tail !== "" && !/^\.[A-Za-z$][\w$-]*$/.test(tail)))) {
    return fail("invalidPath", `"${path}" is not a valid attribute path.`)
  }
  const resolved = resolvePath(resourceType, head)
  if (resolved === undefined) return fail("invalidPath", `"${path}" is not an attribute of a ${resourceType.name}.`)
  if (filter !== undefined && (resolved.subAttribute !== undefined || !resolved.attribute.multiValued)) {
    return fail("invalidPath", `"${path}": only a multi-valued attribute takes a value filter.`)
  }
  let subAttribute = resolved.subAttribute
  if (tail !== "") {
    subAttribute = resolved.attribute.subAttributes?.find((sub) => sub.name.toLowerCase() === tail.slice(1).toLowerCase())
    if (subAttribute === undefined) return fail("invalidPath", `"${path}" is not an attribute of a ${resourceType.name}.`)
  }
  if (filter !== undefined) {
    try {
      parseFilter(filter)
    } catch {
      return fail("invalidPath", `"${path}" has a value filter that is not valid.`)
    }
  }
  const prefix = resolved.schema === resourceType.schema.id ? "" : `${resolved.schema}:`
  const canonical = `${prefix}${resolved.attribute.name}${filter === undefined ? "" : `[${filter}]`}${
    subAttribute === undefined ? "" : `.${subAttribute.name}`
  }`
  return Result.succeed({ attribute: resolved.attribute, schema: resolved.schema, filter, subAttribute, canonical })
}

/** Splits a no-path add/replace into one operation per key (dotted keys and URN keys become paths). */
const expand = (resourceType: ResourceTypeDefinition, op: "add" | "replace", value: unknown) => {
  if (!isObject(value)) return fail("invalidValue", `A "${op}" without a path needs an object value.`)
  const operations: Array<NormalisedOperation> = []
  for (const [key, item] of Object.entries(value)) {
    const extension = extensionOf(resourceType, key)
    if (extension !== undefined && isObject(item)) {
      for (const [sub, subValue] of Object.entries(item)) {
        operations.push({ op, path: `${extension.id}:${sub}`, value: subValue, fromNoPath: true })
      }
    } else if (key.toLowerCase() !== "schemas") {
      operations.push({ op, path: key, value: item, fromNoPath: true })
    }
  }
  return Result.succeed(operations)
}

const normaliseOne = (
  resourceType: ResourceTypeDefinition,
  input: unknown
): Result.Result<ReadonlyArray<NormalisedOperation>, PatchError> => {
  if (!isObject(input)) return fail("invalidSyntax", "Each operation must be an object.")
  const op = typeof input.op === "string" ? input.op.toLowerCase() : undefined
  if (op !== "add" && op !== "remove" && op !== "replace") {
    return fail("invalidSyntax", `"op" must be add, remove or replace, not ${JSON.stringify(input.op)}.`)
  }
  const path = input.path
  if (path !== undefined && path !== null && (typeof path !== "string" || path.includes("\u0000"))) {
    return fail("invalidPath", "\"path\" must be a string.")
  }
  if (typeof path === "string" && path.length > MaxStringLength) {
    return fail("invalidPath", `"path" is longer than ${MaxStringLength} characters.`)
  }
  if (path === undefined || path === null || path.trim() === "") {
    if (op === "remove") return fail("noTarget", "A remove operation needs a path.")
    return expand(resourceType, op, input.value)
  }
  return Result.succeed([{ op, path: path.trim(), value: input.value }])
}

/** An operation checked against the schema, ready for scim-patch (undefined: accepted and ignored, e.g. password). */
const check = (
  resourceType: ResourceTypeDefinition,
  resource: Resource,
  operation: NormalisedOperation
): Result.Result<ScimPatchOperation | undefined, PatchError> => {
  const path = operation.path!
  if (ignoredWrites.has(path.toLowerCase())) return Result.succeed(undefined)
  const parsed = parsePath(resourceType, path)
  if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
  const { attribute, canonical, filter, subAttribute } = parsed.success
  const target = subAttribute ?? attribute
  if (attribute.mutability === "readOnly" || target.mutability === "readOnly") {
    return fail("mutability", `${canonical} is read-only.`)
  }
  if (target.mutability === "immutable" && subAttribute !== undefined && operation.op !== "add") {
    return fail("mutability", `${canonical} is immutable.`)
  }
  // RFC 7644 §3.5.2.2 and §3.5.2.3: a value filter that matches no value is noTarget.
  if (filter !== undefined && (operation.op === "remove" || (operation.op === "replace" && operation.fromNoPath !== true))) {
    const elements = valueAt(resource, parsed.success)
    const test = matches(parseFilter(filter))
    if (!Array.isArray(elements) || !elements.some((element) => isObject(element) && test(element))) {
      return fail("noTarget", `No value of ${attribute.name} matches [${filter}].`)
    }
  }
  if (operation.op === "remove") {
    if (attribute.required && subAttribute === undefined) return fail("mutability", `${attribute.name} is required.`)
    const value = operation.value === undefined || operation.value === null
      ? undefined
      : readAttribute(attribute, operation.value, canonical)
    if (value !== undefined && Result.isFailure(value)) return Result.fail(value.failure)
    return Result.succeed({ op: "remove", path: canonical, ...(value === undefined ? {} : { value: value.success }) })
  }
  if (operation.value === undefined) return fail("invalidValue", `"${operation.op}" of ${canonical} needs a value.`)
  const value = subAttribute !== undefined
    ? readValue(subAttribute, operation.value, canonical)
    : filter !== undefined
    ? readValue(attribute, operation.value, canonical)
    : readAttribute(attribute, operation.value, canonical)
  if (Result.isFailure(value)) return Result.fail(value.failure)
  if (value.success === null) {
    // A replace with null unassigns (RFC 7644 §3.5.2.3 via §3.5.2.2), as Entra sends it for a cleared field.
    if (attribute.required && subAttribute === undefined) return fail("invalidValue", `${attribute.name} is required.`)
    return Result.succeed({ op: "remove", path: canonical })
  }
  return Result.succeed({ op: operation.op, path: canonical, value: value.success })
}

const valueAt = (resource: Resource, path: ParsedPath) => {
  const holder = path.schema === undefined || !path.canonical.startsWith(`${path.schema}:`)
    ? resource
    : resource[path.schema]
  return isObject(holder) ? holder[path.attribute.name] : undefined
}


/**
 * Applies a PatchOp's `Operations` to a canonical resource and answers the canonical result (checked again as a whole
 * by `readResource`, so a patch cannot leave a required attribute empty or a value of the wrong type).
 */
export const applyPatch = (
  resourceType: ResourceTypeDefinition,
  resource: Resource,
  operations: ReadonlyArray<unknown>
): Result.Result<Resource, PatchError> => {
  if (operations.length === 0) return fail("invalidValue", "Operations is empty.")
  if (operations.length > MaxOperations) return fail("invalidValue", `More than ${MaxOperations} operations.`)
  let current = resource
  for (const input of operations) {
    const normalised = normaliseOne(resourceType, input)
    if (Result.isFailure(normalised)) return Result.fail(normalised.failure)
    for (const operation of normalised.success) {
      const one = check(resourceType, current, operation)
      if (Result.isFailure(one)) return Result.fail(one.failure)
      if (one.success === undefined) continue
      // Each operation sees the result of the ones before it (a remove's noTarget check included).
      const applied = applyChecked(current, [one.success])
      if (Result.isFailure(applied)) return Result.fail(applied.failure)
      const settled = one.success.op === "remove" ? applied.success : settlePrimary(resourceType, current, applied.success, one.success)
      if (typeof settled === "string") return fail("invalidValue", settled)
      current = settled
    }
  }
  return readResource(resourceType, current)
}

const applyChecked = (resource: Resource, operations: Array<ScimPatchOperation>): Result.Result<Resource, PatchError> => {
  try {
    const document = { ...structuredClone(resource), meta: { created: new Date(0), lastModified: new Date(0) }, schemas: [] }
    const { meta: _meta, schemas: _schemas, ...patched } = scimPatch(document, operations, {
      mutateDocument: true,
      treatMissingAsAdd: true
    }) as Resource
    return Result.succeed(patched)
  } catch (error) {
    const name = error instanceof Error ? error.constructor.name : ""
    const detail = error instanceof Error ? error.message : String(error)
    return fail(name === "NoTarget" ? "noTarget" : "invalidValue", detail)
  }
}

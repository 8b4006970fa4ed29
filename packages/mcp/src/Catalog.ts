/**
 * The operations the MCP server serves, the ones it leaves out with the reason, and each served operation's input and
 * output as JSON Schemas taken from the published OpenAPI document: one reading of the API (`operationsOf(Api)`),
 * nothing about an operation written twice.
 */
import { Api, type Operation, type OperationCredential, openApiDocument, operationsOf } from "@orgplane/schema"

/** Operations a person's credential may call that the MCP server still leaves out, each with why. */
export const excludedOperations: Readonly<Record<string, string>> = {
  "audit.exportEvents": "A stream of unbounded size: page `audit.listEvents` instead.",
  "configObjects.getVersionFile": "Answers the file's raw bytes, of any type, not JSON: read the version's metadata instead."
}

/** Why operations that take no person's credential are left out, by the credential they take. */
export const excludedCredentials: Readonly<Record<Exclude<OperationCredential, "member">, string>> = {
  none: "Open to anyone (sign-up, sign-in, health, an invitation's preview): there is no caller to act for.",
  scim: "Takes an identity provider's SCIM token, not a person's credential.",
  worker: "The worker runtime's own calls, with a worker's own token."
}

/** What the catalog does with one operation: serves it, or leaves it out and says why. */
export type Coverage =
  | { readonly id: string; readonly served: true }
  | { readonly id: string; readonly served: false; readonly reason: string }

const reasonExcluded = (operation: Operation): string | undefined =>
  operation.credential === "member" ? excludedOperations[operation.id] : excludedCredentials[operation.credential]

/** Every operation of the API, served or excluded with the reason, in the API's order. */
export const coverage = (): ReadonlyArray<Coverage> =>
  operationsOf(Api).map((operation) => {
    const reason = reasonExcluded(operation)
    return reason === undefined ? { id: operation.id, served: true } : { id: operation.id, served: false, reason }
  })

let servedCache: ReadonlyArray<Operation> | undefined

/** The operations the MCP server serves, in the API's order. */
export const served = (): ReadonlyArray<Operation> =>
  servedCache ??= operationsOf(Api).filter((operation) => reasonExcluded(operation) === undefined)

/** A served operation by its id (`teams.create`), or undefined. */
export const find = (name: string): Operation | undefined => served().find((operation) => operation.id === name)

/** The groups of the served operations, in the API's order. */
export const groups = (): ReadonlyArray<string> => [...new Set(served().map((operation) => operation.group))]

/** The tool name of an operation in a toolset: `<group>_<endpoint>` with `[A-Za-z0-9_-]` only. */
export const toolNameOf = (operation: Operation): string => {
  const endpoint = operation.id.startsWith(`${operation.group}.`) ? operation.id.slice(operation.group.length + 1) : operation.id
  return `${operation.group}_${endpoint}`.replace(/[^A-Za-z0-9_-]/g, "_")
}

/**
 * How an operation's arguments split into the request: path parameters, query members, and the body, either as its
 * members (`bodyMembers`) or whole under `body` (a body that is not an object of known members, or whose members
 * share a name with a parameter).
 */
export interface Layout {
  readonly path: ReadonlyArray<string>
  readonly query: ReadonlyArray<string>
  readonly bodyMembers: ReadonlyArray<string>
  readonly wholeBody: boolean
  /** Every argument name the operation takes. */
  readonly names: ReadonlyArray<string>
}

export const layoutOf = (operation: Operation): Layout => {
  const parameters = new Set([...operation.pathParameters, ...operation.queryParameters])
  const members = operation.bodyMembers
  const spread = operation.takesBody && members !== undefined && !members.some((member) => parameters.has(member) || member === "body")
  const bodyMembers = spread ? members : []
  const wholeBody = operation.takesBody && !spread
  return {
    path: operation.pathParameters,
    query: operation.queryParameters,
    bodyMembers,
    wholeBody,
    names: [...operation.pathParameters, ...operation.queryParameters, ...bodyMembers, ...(wholeBody ? ["body"] : [])]
  }
}

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type JsonObject = { readonly [key: string]: Json }

const isObject = (value: Json | undefined): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

interface Document {
  readonly operations: ReadonlyMap<string, JsonObject>
  readonly schemas: JsonObject
}

let documentCache: Document | undefined

const theDocument = (): Document => {
  if (documentCache !== undefined) return documentCache
  const spec = JSON.parse(JSON.stringify(openApiDocument())) as JsonObject
  const operations = new Map<string, JsonObject>()
  const paths = isObject(spec.paths) ? spec.paths : {}
  for (const item of Object.values(paths)) {
    if (!isObject(item)) continue
    for (const operation of Object.values(item)) {
      if (isObject(operation) && typeof operation.operationId === "string") operations.set(operation.operationId, operation)
    }
  }
  const components = isObject(spec.components) ? spec.components : {}
  documentCache = { operations, schemas: isObject(components.schemas) ? components.schemas : {} }
  return documentCache
}

const componentPrefix = "#/components/schemas/"

/** `schema` with its component references pointing under `$defs`, and those components (and theirs) collected. */
const withDefinitions = (root: Json): JsonObject => {
  const { schemas } = theDocument()
  const definitions: Record<string, Json> = {}
  // A reference is a `$ref`, or a discriminator's mapping value: any string naming a component.
  const rewrite = (value: Json): Json => {
    if (typeof value === "string" && value.startsWith(componentPrefix)) {
      const name = value.slice(componentPrefix.length)
      if (!(name in definitions)) {
        definitions[name] = true
        definitions[name] = rewrite(schemas[name] ?? {})
      }
      return `#/$defs/${name}`
    }
    if (Array.isArray(value)) return value.map(rewrite)
    if (!isObject(value)) return value
    return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, rewrite(member)]))
  }
  const schema = rewrite(root)
  const base = isObject(schema) ? schema : {}
  return Object.keys(definitions).length === 0 ? base : { ...base, $defs: definitions }
}

const resolveComponent = (schema: Json | undefined): JsonObject | undefined => {
  if (!isObject(schema)) return undefined
  const ref = schema.$ref
  if (typeof ref === "string" && ref.startsWith(componentPrefix)) return resolveComponent(theDocument().schemas[ref.slice(componentPrefix.length)])
  return schema
}

const jsonSchemaOfContent = (content: Json | undefined): Json | undefined => {
  if (!isObject(content)) return undefined
  const json = content["application/json"]
  return isObject(json) ? json.schema : undefined
}

/**
 * The operation's input as one JSON Schema object: its path parameters, query members and body members (or `body`),
 * each with the document's schema and description; referenced components under `$defs`.
 */
export const inputSchemaOf = (operation: Operation): JsonObject => {
  const described = theDocument().operations.get(operation.id) ?? {}
  const layout = layoutOf(operation)
  const properties: Record<string, Json> = {}
  const required: Array<string> = []
  const parameters = Array.isArray(described.parameters) ? described.parameters : []
  for (const parameter of parameters) {
    if (!isObject(parameter) || (parameter.in !== "path" && parameter.in !== "query") || typeof parameter.name !== "string") continue
    const schema = isObject(parameter.schema) ? parameter.schema : {}
    properties[parameter.name] = typeof parameter.description === "string" && schema.description === undefined
      ? { ...schema, description: parameter.description }
      : schema
    if (parameter.required === true) required.push(parameter.name)
  }
  const requestBody = isObject(described.requestBody) ? described.requestBody : {}
  const bodySchema = jsonSchemaOfContent(requestBody.content)
  if (layout.wholeBody) {
    properties.body = bodySchema ?? {}
    if (requestBody.required === true) required.push("body")
  } else if (layout.bodyMembers.length > 0) {
    const object = resolveComponent(bodySchema) ?? {}
    const members = isObject(object.properties) ? object.properties : {}
    const requiredMembers = Array.isArray(object.required) ? object.required : []
    for (const member of layout.bodyMembers) {
      properties[member] = members[member] ?? {}
      if (requiredMembers.includes(member)) required.push(member)
    }
  }
  return withDefinitions({
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false
  })
}

const argumentsCache = new WeakMap<Operation, ReadonlyArray<string>>()

/**
 * The operation's arguments by name, an optional one ending in `?` (`["teamId", "name?"]`): what `find_operations`
 * shows of its input, enough to call an operation whose arguments say what they are; `describe_operation` gives
 * their schemas.
 */
export const argumentsOf = (operation: Operation): ReadonlyArray<string> => {
  let names = argumentsCache.get(operation)
  if (names === undefined) {
    const input = inputSchemaOf(operation)
    const required = Array.isArray(input.required) ? input.required : []
    names = layoutOf(operation).names.map((name) => (required.includes(name) ? name : `${name}?`))
    argumentsCache.set(operation, names)
  }
  return names
}

/** A schema in a few words: a component's name, `array of …`, a union's members, a literal's value, or its type. */
const typeWords = (schema: Json | undefined, depth = 0): string => {
  if (!isObject(schema)) return "any"
  const ref = schema.$ref
  if (typeof ref === "string" && ref.startsWith(componentPrefix)) return ref.slice(componentPrefix.length)
  const union = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined
  if (union !== undefined && depth < 3) return union.map((member) => typeWords(member, depth + 1)).join(" | ")
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1 && depth < 3) return typeWords(schema.allOf[0], depth + 1)
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(" | ")
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  if (schema.type === "array") return `array of ${depth < 3 ? typeWords(schema.items, depth + 1) : "any"}`
  if (typeof schema.type === "string") return typeof schema.format === "string" ? `${schema.type} (${schema.format})` : schema.type
  if (Array.isArray(schema.type)) return schema.type.join(" | ")
  return isObject(schema.properties) ? "object" : "any"
}

/** The schema of an operation's success body as the document has it, or undefined without one. */
const successSchemaOf = (operation: Operation): Json | undefined => {
  const described = theDocument().operations.get(operation.id) ?? {}
  const responses = isObject(described.responses) ? described.responses : {}
  for (const [status, response] of Object.entries(responses)) {
    if (!status.startsWith("2") || !isObject(response)) continue
    const schema = jsonSchemaOfContent(response.content)
    if (schema !== undefined) return schema
  }
  return undefined
}

/**
 * The operation's description without its closing "Errors:" paragraph (a third of the catalog's words): a failed call
 * answers its error's status, code and message, so an agent reads the one it meets, not every one it might.
 */
export const descriptionWithoutErrors = (operation: Operation): string => {
  const paragraphs = operation.description.split("\n\n")
  return paragraphs.filter((paragraph, index) => index === 0 || !paragraph.startsWith("Errors:")).join("\n\n")
}

/**
 * The operation's answer in a few words: each member of its success body with its type (`{ team: "Team" }`,
 * `{ items: "array of Team", nextCursor: "string | null" }`), or the body's type when it is no object; null without
 * a body. What `describe_operation` answers unless asked for the whole schema (`outputSchemaOf`), which is most of
 * its size.
 */
export const outputSummaryOf = (operation: Operation): Readonly<Record<string, string>> | null => {
  const schema = successSchemaOf(operation)
  if (schema === undefined) return null
  const resolved = resolveComponent(schema)
  const properties = resolved !== undefined && isObject(resolved.properties) ? resolved.properties : undefined
  if (properties === undefined) return { body: typeWords(schema) }
  return Object.fromEntries(Object.entries(properties).map(([name, member]) => [name, typeWords(member)]))
}

/** The JSON Schema of the operation's success answer (its 2xx JSON body), or null when it answers none. */
export const outputSchemaOf = (operation: Operation): JsonObject | null => {
  const schema = successSchemaOf(operation)
  return schema === undefined ? null : withDefinitions(schema)
}

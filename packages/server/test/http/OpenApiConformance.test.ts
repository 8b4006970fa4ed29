/**
 * The served OpenAPI document against the server behind it: every request member is bounded in the document, every
 * documented bound is enforced (400 `invalid_request` naming the member), and what the document calls valid is not
 * refused by decoding. A request union (`oneOf`, one member per `authType` or `kind`) is checked member by member.
 * The SCIM protocol's operations are sent as a directory (its token, its connection) and may refuse with a SCIM
 * error body instead (`scimSemanticChecks`). Generic over the document: a new operation is checked without touching
 * this file.
 */
import { type CreatedApiKey, type CreatedScimToken, InvalidRequestResponse, type RegisteredWorker, type ScimConnectionResponse } from "@orgplane/schema"
import * as Schema from "effect/Schema"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as Json from "../../../../packages/testkit/src/Json.js"
import type * as OpenApi from "../../../../packages/testkit/src/OpenApiDocument.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

type JsonSchema = OpenApi.JsonSchema
type Path = ReadonlyArray<string | number>

interface Operation {
  readonly id: string
  readonly method: string
  readonly path: string
  readonly security: ReadonlyArray<Record<string, unknown>>
  readonly body: JsonSchema | undefined
  readonly query: ReadonlyArray<{ readonly name: string; readonly required: boolean; readonly schema: JsonSchema }>
  readonly pathParameters: ReadonlyArray<{ readonly name: string; readonly schema: JsonSchema }>
}

/** One request: a JSON body (absent for operations without one) and query parameters. */
interface Request {
  readonly body: unknown
  readonly query: Record<string, string>
}

/**
 * Values the document rightly calls valid but the server refuses after decoding, with a 400 on that member, because
 * only values it issued or knows are right. A generic value cannot be one of them.
 */
const semanticChecks: ReadonlyArray<{ readonly operation?: string; readonly path: Path; readonly message: string }> = [
  // Cursors are opaque: only a `nextCursor` the list returned is one.
  { path: ["cursor"], message: "is not a cursor returned by this list with these filters" },
  // A heartbeat's sentAt may be at most 5 minutes ahead of the server's clock (the document's dates are a month ahead).
  { operation: "workerRuntime.heartbeat", path: ["sentAt"], message: "is more than 5 minutes ahead of the server's clock: check the runtime's clock" },
  // Must be the caller's actual password.
  { operation: "users.changePassword", path: ["currentPassword"], message: "is not the account's current password" },
  { operation: "users.changeEmail", path: ["password"], message: "is not the account's current password" },
  { operation: "account.delete", path: ["password"], message: "is not the account's current password" },
  // MCP connections: the URL's host must resolve (to public addresses) before anything is stored.
  { operation: "mcpConnections.create", path: ["url"], message: "The outbound URL is not allowed: x.example could not be resolved" },
  // LLM providers: a catalog provider must be one the catalog has; a base URL must resolve (to public addresses); a
  // generated allow-list repeats its one model.
  { operation: "llmProviders.create", path: ["catalogProviderId"], message: "is not a provider of the LLM catalog (GET /v1/llm-provider-catalog lists them)" },
  ...(["llmProviders.create", "llmProviders.update"] as const).flatMap((operation) => [
    { operation, path: ["baseUrl"], message: "The outbound URL is not allowed: x.example could not be resolved" },
    { operation, path: ["models"], message: "must name each model once" }
  ]),
  // Suite clients: the features of the path's suite (which a body schema cannot name), and endpoints that resolve to
  // public addresses.
  { operation: "suiteClients.put", path: ["features", 2], message: "`calendarWrite` is not a feature of suite-a (mailDraft, mailRead)" },
  ...(["authorizationEndpoint", "tokenEndpoint", "apiBaseUrl"] as const).map((member) => ({
    operation: "suiteClients.put",
    path: [member],
    message: "The outbound URL is not allowed: x.example could not be resolved"
  })),
  // A worker runtime's instance URL, checked at registration.
  { operation: "workerRuntime.registerInstance", path: ["url"], message: "The outbound URL is not allowed: x.example could not be resolved" },
  // Audit streams: an endpoint that resolves to public addresses.
  ...(["auditStreams.create", "auditStreams.update"] as const).map((operation) => ({
    operation,
    path: ["url"],
    message: "The outbound URL is not allowed: x.example could not be resolved"
  })),
  // Only the organization's own name confirms its deletion: a generic one never does (and nothing is deleted).
  { operation: "organizations.delete", path: ["confirmName"], message: "is not this organization's name: repeat it exactly as GET /v1/organization shows it" }
]

/**
 * The SCIM protocol (`/scim/v2/…`, a directory's token) reads its bodies and lists leniently after decoding (RFC 7644
 * §3.3; ScimProtocol.ts), and what that reading refuses is a SCIM error body, `{schemas: [ScimErrorSchema], status:
 * "400", scimType, detail}`, not `invalid_request`: it has no member paths, its `detail` names the member. These are
 * its refusals of what no schema can state, each with why a generic value is one.
 */
const scimSemanticChecks: ReadonlyArray<{ readonly operation: RegExp; readonly scimType: string; readonly detail: RegExp }> = [
  // A filter is a grammar (RFC 7644 §3.4.2.2) over the advertised attributes: a generic string is not one.
  { operation: /^scim(Users|Groups)\.(list|search)$/, scimType: "invalidFilter", detail: /^The filter is not valid: / },
  // A person needs an email (the primary of `emails`, else the first, else `userName`): generic values are not emails.
  { operation: /^scimUsers\.create$/, scimType: "invalidValue", detail: /^A User needs an email/ },
  // A Group's members are the ids of Users the directory provisioned.
  { operation: /^scimGroups\.create$/, scimType: "invalidValue", detail: /is not a User of this SCIM connection/ }
]

const ScimErrorSchema = "urn:ietf:params:scim:api:messages:2.0:Error"

/** A SCIM operation's 400 from its reader (see `scimSemanticChecks`): the SCIM error body, else undefined. */
const scimRefusal = (operation: Operation, response: Http.RawResponse): { scimType?: string; detail: string } | undefined => {
  if (!isScim(operation) || response.status !== 400 || !response.headers.get("content-type")?.startsWith("application/scim+json")) return undefined
  const { body } = response
  if (!Json.isObject(body) || Json.at(body, "schemas", 0) !== ScimErrorSchema || typeof body.detail !== "string") return undefined
  return typeof body.scimType === "string" ? { scimType: body.scimType, detail: body.detail } : { detail: body.detail }
}

/** An `invalid_request` body, each refused member in `details`. */
const isInvalidRequest = Schema.is(Schema.toEncoded(InvalidRequestResponse))

/** The refused members of an `invalid_request` body, undefined for any other body. */
const detailsOf = (body: unknown) => (isInvalidRequest(body) ? body.details : undefined)

let server: TestServer.RunningServer
let owner: Awaited<ReturnType<typeof Http.owner>>
let document: OpenApi.Document
let operations: ReadonlyArray<Operation>

beforeAll(async () => {
  server = await TestServer.start()
  owner = await Http.operator(server.url, "Acme")
  const response = await Http.request(server.url, "GET", "/openapi.json")
  expect(response.status).toBe(200)
  document = Http.expectStatus<OpenApi.Document>("the document", response, 200)
  operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]): Operation => {
      const parameters = operation.parameters ?? []
      return {
        id: operation.operationId,
        method: method.toUpperCase(),
        path,
        security: operation.security ?? [],
        body: operation.requestBody?.content?.["application/json"]?.schema,
        query: parameters.filter((p) => p.in === "query").map((p) => ({ name: p.name, required: p.required === true, schema: p.schema })),
        pathParameters: parameters.filter((p) => p.in === "path").map((p) => ({ name: p.name, schema: p.schema }))
      }
    })
  )
})
afterAll(() => server.close())

// --- Reading the document ---------------------------------------------------------------------------------------

/** A schema with `$ref`s and single-member `allOf` wrappers (how annotated references come out) resolved. */
const resolve = (schema: JsonSchema): JsonSchema => {
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.replace("#/components/schemas/", "")
    const target = document.components?.schemas?.[name]
    if (target === undefined) throw new Error(`unresolved ${schema.$ref}`)
    const { $ref: _, ...rest } = schema
    return { ...resolve(target), ...rest }
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) {
    const { allOf, ...rest } = schema
    return { ...resolve(allOf[0]), ...rest }
  }
  return schema
}

const isEnum = (schema: JsonSchema) => Array.isArray(schema.enum) || "const" in schema

/**
 * An object open to any members on purpose (free-form JSON such as a config object's payload): bounded by the body
 * size and nesting limits of the request guard, not by its schema, so not probed member by member.
 */
const isOpen = (schema: JsonSchema) => schema.type === "object" && schema.additionalProperties === true

/** `oneOf` alternatives that only require members: "exactly one of these members". */
const exclusiveMembers = (schema: JsonSchema): ReadonlyArray<ReadonlyArray<string>> | undefined => {
  const alternatives: ReadonlyArray<JsonSchema> | undefined = schema.oneOf
  if (!Array.isArray(alternatives) || alternatives.length === 0) return undefined
  const onlyRequired = alternatives.every((alternative) =>
    Object.keys(alternative).every((key) => key === "required") && Array.isArray(alternative.required)
  )
  return onlyRequired ? alternatives.map((alternative) => alternative.required ?? []) : undefined
}

/** The members a valid value leaves out: those only the other alternatives of an exclusive choice require. */
const leftOut = (schema: JsonSchema): ReadonlySet<string> => {
  const exclusive = exclusiveMembers(schema)
  if (exclusive === undefined) return new Set()
  const chosen = new Set(exclusive[0])
  return new Set(exclusive.slice(1).flat().filter((member) => !chosen.has(member)))
}
const kindOf = (schema: JsonSchema): string => (isEnum(schema) ? "enum" : String(schema.type))

/** The members of a request union (`oneOf` of objects, told apart by a `discriminator`): each is a body of its own. */
const variantsOf = (body: JsonSchema | undefined): ReadonlyArray<JsonSchema | undefined> => {
  if (body === undefined) return [undefined]
  const resolved = resolve(body)
  return resolved.discriminator !== undefined && Array.isArray(resolved.oneOf) ? resolved.oneOf : [body]
}
const show = (path: Path) => (path.length === 0 ? "(body)" : path.join("."))

/** Every member under `schema` (itself included), depth first, with array items at index 0. */
const walk = function*(schema: JsonSchema, path: Path = []): Generator<{ path: Path; schema: JsonSchema }> {
  const resolved = resolve(schema)
  yield { path, schema: resolved }
  if (resolved.type === "object") {
    const out = leftOut(resolved)
    for (const [key, member] of Object.entries<JsonSchema>(resolved.properties ?? {})) {
      if (!out.has(key)) yield* walk(member, [...path, key])
    }
  }
  if (resolved.type === "array" && typeof resolved.items === "object") yield* walk(resolved.items, [...path, 0])
  const alternatives = exclusiveMembers(resolved) === undefined ? [...(resolved.anyOf ?? []), ...(resolved.oneOf ?? [])] : resolved.anyOf ?? []
  for (const alternative of alternatives) yield* walk(alternative, path)
}

// --- Producing values -------------------------------------------------------------------------------------------

const TYPE_ID = /^\^([a-z]+)_\[0-7\]\[0-9a-hjkmnp-tv-z\]\{25\}\$$/
const DAY = 24 * 60 * 60 * 1000

/** A future instant whose text is `length` characters: fractional digits (and an offset) make it longer. */
const dateTime = (length: number): string | undefined => {
  const seconds = new Date(Date.now() + 30 * DAY).toISOString().slice(0, 19)
  if (length === 20) return `${seconds}Z`
  if (length >= 22 && length <= 30) return `${seconds}.${"0".repeat(length - 21)}Z`
  if (length >= 28) return `${seconds}.${"0".repeat(length - 26)}+00:00`
  return undefined
}

/** A domain name `length` characters long: labels of at most 63 letters, ending in `.example`. */
const hostname = (length: number): string | undefined => {
  if (length < 10) return undefined
  const labels: Array<string> = []
  let left = length - ".example".length
  while (left > 63) {
    const size = Math.min(63, left - 2)
    labels.push("a".repeat(size))
    left -= size + 1
  }
  labels.push("a".repeat(left))
  const name = `${labels.join(".")}.example`
  return name.length === length ? name : undefined
}

/** A string `length` characters long that satisfies the schema's format and pattern; undefined when none can be. */
const stringOfLength = (schema: JsonSchema, length: number): string | undefined => {
  if (schema.format === "date-time") return dateTime(length)
  if (schema.format === "email") return length >= 11 ? `${"a".repeat(length - 10)}@x.example` : undefined
  if (schema.format === "hostname") return hostname(length)
  if (schema.format === "uri") return length >= 19 ? `https://x.example/${"a".repeat(length - 18)}` : undefined
  if (typeof schema.pattern === "string" && schema.pattern.includes("BEGIN CERTIFICATE")) {
    const [begin, end] = ["-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----"]
    return length > begin.length + end.length ? `${begin}${"A".repeat(length - begin.length - end.length)}${end}` : undefined
  }
  const prefix = typeof schema.pattern === "string" ? TYPE_ID.exec(schema.pattern)?.[1] : undefined
  if (prefix !== undefined) return length > prefix.length + 1 ? `${prefix}_${"0".repeat(length - prefix.length - 1)}` : undefined
  const letters = "a".repeat(length)
  if (typeof schema.pattern !== "string") return letters
  // Letters, a path of them (say, a logo on the same host), two names around a slash (a repository), or one of the
  // schema's own examples cut or padded with letters to the length (a prefixed form: `env:NAME`, `file:PATH`).
  const half = Math.floor((length - 1) / 2)
  const examples = (Array.isArray(schema.examples) ? schema.examples : []).filter((example: unknown): example is string => typeof example === "string")
  const candidates = length === 0 ? [letters] : [
    letters,
    `/${letters.slice(1)}`,
    `${letters.slice(0, half)}/${letters.slice(half + 1)}`,
    ...examples.flatMap((example) => [example.slice(0, length), example.padEnd(length, "a")]).filter((candidate) => candidate.length === length)
  ]
  const pattern = new RegExp(schema.pattern, "u")
  return candidates.find((candidate) => pattern.test(candidate))
}

/** A value of the right length that the schema's pattern refuses, found by spoiling a valid one. */
const notMatching = (schema: JsonSchema): string | undefined => {
  const valid = stringOfLength(schema, defaultLength(schema))
  if (typeof schema.pattern !== "string" || valid === undefined) return undefined
  const pattern = new RegExp(schema.pattern, "u")
  return ["\u0000", "!", "A", "-"].map((c) => `${valid.slice(0, -1)}${c}`).find((value) => !pattern.test(value))
}

const defaultLength = (schema: JsonSchema): number => {
  if (typeof schema.pattern === "string" && schema.pattern.includes("BEGIN CERTIFICATE")) return 64
  if (schema.format === "date-time") return 20
  if (schema.format === "email") return 20
  if (schema.format === "hostname") return 20
  if (schema.format === "uri") return 30
  return Math.max(schema.minLength ?? 1, 1)
}

class CannotProduce extends Error {}

/** One of the schema's own examples that its pattern and lengths take (a prefixed form: `env:NAME`, `file:PATH`). */
const ownExample = (schema: JsonSchema): string | undefined =>
  (Array.isArray(schema.examples) ? schema.examples : []).find((example: unknown): example is string =>
    typeof example === "string" && example.length >= (schema.minLength ?? 0) && example.length <= (schema.maxLength ?? Infinity) &&
    (typeof schema.pattern !== "string" || new RegExp(schema.pattern, "u").test(example))
  )

/** A value the schema calls valid, every optional member included so that each can be checked. */
const validValue = (schema: JsonSchema, path: Path = []): unknown => {
  const resolved = resolve(schema)
  if (Array.isArray(resolved.enum)) return resolved.enum[0]
  // Any JSON value (a template's document): bounded by the body size and nesting limits, like an open object.
  if (Array.isArray(resolved.type) && resolved.type.includes("object")) return {}
  if ("const" in resolved) return resolved.const
  switch (resolved.type) {
    case "boolean":
      return true
    case "integer":
    case "number":
      return resolved.minimum ?? 0
    case "string": {
      const value = stringOfLength(resolved, defaultLength(resolved)) ?? ownExample(resolved)
      if (value === undefined) throw new CannotProduce(`${show(path)}: no generic value for ${JSON.stringify(resolved)}`)
      return value
    }
    case "array":
      return arrayOf(resolved, resolved.minItems ?? 0, path)
    case "object": {
      const out = leftOut(resolved)
      return Object.fromEntries(
        Object.entries<JsonSchema>(resolved.properties ?? {}).filter(([key]) => !out.has(key)).map((
          [key, member]
        ) => [key, validValue(member, [...path, key])])
      )
    }
  }
  // A nullable member, or a union: its first alternative that is not null.
  const alternative = (resolved.anyOf ?? resolved.oneOf ?? []).find((schema: JsonSchema) => resolve(schema).type !== "null")
  if (alternative !== undefined) return validValue(alternative, path)
  throw new CannotProduce(`${show(path)}: no generic value for ${JSON.stringify(resolved)}`)
}

/**
 * `count` valid items, distinct when the array says `uniqueItems` (enum values in their documented order); past a
 * `maxContains` (one primary email), items go without the members its `contains` requires.
 */
const arrayOf = (schema: JsonSchema, count: number, path: Path): Array<unknown> => {
  const items = resolve(typeof schema.items === "object" ? schema.items : {})
  if (schema.uniqueItems === true && Array.isArray(items.enum)) return items.enum.slice(0, count)
  const bounded: ReadonlyArray<string> = typeof schema.maxContains === "number" ? resolve(schema.contains ?? {}).required ?? [] : []
  return Array.from({ length: count }, (_, index) => {
    const value = validValue(items, [...path, 0])
    return bounded.length > 0 && index >= (schema.maxContains ?? Infinity) && typeof value === "object" && value !== null
      ? Object.fromEntries(Object.entries(value).filter(([key]) => !bounded.includes(key)))
      : value
  })
}

const base = (operation: Operation, body = operation.body): Request => ({
  body: body === undefined ? undefined : validValue(body),
  query: Object.fromEntries(operation.query.map((parameter) => [parameter.name, String(validValue(parameter.schema, [parameter.name]))]))
})

const REMOVE = Symbol("remove")

/** A deep copy of `value` with `replacement` at `path` (or the member removed). */
const setAt = (value: unknown, path: Path, replacement: unknown): unknown => {
  if (path.length === 0) return replacement
  const [head, ...rest] = path
  const copy: object = Array.isArray(value) ? [...value] : { ...(value as object) }
  const next = setAt(Reflect.get(copy, head!), rest, replacement)
  if (next === REMOVE) Reflect.deleteProperty(copy, head!)
  else Reflect.set(copy, head!, next)
  return copy
}

// --- Sending ----------------------------------------------------------------------------------------------------

let apiKey: string | undefined
let workerToken: string | undefined
let directory: { readonly connectionId: string; readonly token: string } | undefined

/**
 * The directory the SCIM protocol's operations act as: a connection and a token of an organization of its own, which
 * the owner (the instance's operator: their organization redeemed the setup token) puts on the enterprise plan that directory
 * provisioning needs; the owner's stays on the default plan, as every other operation is checked on it.
 */
const scimDirectory = async () => {
  if (directory === undefined) {
    const admin = await Http.owner(server.url, "Directory")
    const plan = await Http.request(server.url, "PATCH", `/v1/admin/organizations/${admin.organization.id}/plan`, {
      token: owner.token,
      body: { plan: "enterprise" }
    })
    Http.expectStatus("put the directory's organization on the enterprise plan", plan, 200)
    const created = await Http.request(server.url, "POST", "/v1/scim/connections", { token: admin.token, body: { name: "conformance" } })
    const connectionId = Http.expectStatus<typeof ScimConnectionResponse.Encoded>("create a SCIM connection", created, 201).connection.id
    const issued = await Http.request(server.url, "POST", `/v1/scim/connections/${connectionId}/tokens`, {
      token: admin.token,
      body: { name: "conformance" }
    })
    directory = { connectionId, token: Http.expectStatus<typeof CreatedScimToken.Encoded>("create a SCIM token", issued, 201).token }
  }
  return directory
}

/** A SCIM operation (its token is a connection's): its path's `connectionId` must be the token's connection. */
const isScim = (operation: Operation) => operation.security.some((requirement) => "scimToken" in requirement)

/** Credentials the operation needs: none when anonymous callers are allowed, else the owner's session or a key. */
const credentials = async (operation: Operation): Promise<Http.Options> => {
  const schemes = operation.security
  if (schemes.length === 0 || schemes.some((requirement) => Object.keys(requirement).length === 0)) return {}
  if (schemes.some((requirement) => "bearer" in requirement)) return { token: owner.token }
  if (schemes.some((requirement) => "apiKey" in requirement)) {
    // No operation accepts only API keys yet; one that does gets a key of the owner.
    if (apiKey === undefined) {
      const created = await Http.request(server.url, "POST", "/v1/api-keys", { token: owner.token, body: { name: "conformance" } })
      apiKey = Http.expectStatus<typeof CreatedApiKey.Encoded>("create an API key", created, 201).key
    }
    return { apiKey: apiKey! }
  }
  if (schemes.some((requirement) => "workerToken" in requirement)) {
    // The runtime's operations: a worker token of a worker the owner registers.
    if (workerToken === undefined) {
      const registered = await Http.request(server.url, "POST", "/v1/workers", {
        token: owner.token,
        body: { name: "conformance", destination: "local" }
      })
      workerToken = Http.expectStatus<typeof RegisteredWorker.Encoded>("register a worker", registered, 201).token
    }
    return { token: workerToken! }
  }
  if (isScim(operation)) return { token: (await scimDirectory()).token }
  throw new Error(`${operation.id}: unknown security ${JSON.stringify(schemes)}`)
}

const send = async (operation: Operation, request: Request) => {
  const connectionId = isScim(operation) ? (await scimDirectory()).connectionId : undefined
  const path = operation.pathParameters.reduce(
    (url, parameter) =>
      url.replace(
        `{${parameter.name}}`,
        parameter.name === "connectionId" && connectionId !== undefined ? connectionId : String(validValue(parameter.schema, [parameter.name]))
      ),
    operation.path
  )
  const query = new URLSearchParams(request.query).toString()
  return Http.request(server.url, operation.method, query === "" ? path : `${path}?${query}`, {
    ...(await credentials(operation)),
    ...(request.body === undefined ? {} : { body: request.body })
  })
}

const samePath = (a: Path, b: Path) => JSON.stringify(a) === JSON.stringify(b)

/** The 400 details of a response that decoding should not have produced (semantic checks aside). */
const refusals = (operation: Operation, response: Http.RawResponse): Array<{ message: string; path: Path }> => {
  if (response.status !== 400) return []
  const scim = scimRefusal(operation, response)
  if (scim !== undefined) {
    const semantic = scimSemanticChecks.some((check) =>
      check.operation.test(operation.id) && check.scimType === scim.scimType && check.detail.test(scim.detail)
    )
    return semantic ? [] : [{ message: `${scim.scimType ?? "(no scimType)"}: ${scim.detail}`, path: [] }]
  }
  const details = detailsOf(response.body) ?? [{ message: response.text, path: [] }]
  return details.filter((detail) =>
    // A detail with a `code` is a check of content only the server makes (a config object's source its parser refuses).
    !("code" in detail) &&
    !semanticChecks.some((check) =>
      (check.operation === undefined || check.operation === operation.id) && samePath(check.path, detail.path) &&
      check.message === detail.message
    )
  )
}

// --- Mutations --------------------------------------------------------------------------------------------------

interface Mutation {
  readonly what: string
  /** Where the 400 must point: at the path, or (`under`) at it or below it. */
  readonly path: Path
  readonly under?: boolean
  readonly apply: (request: Request) => Request
}

const inBody = (what: string, path: Path, value: unknown): Mutation => ({
  what,
  path,
  apply: (request) => ({ ...request, body: setAt(request.body, path, value) })
})

/** Values the body member must refuse, each one at a time. */
const bodyMutations = function*(schema: JsonSchema, path: Path, required: boolean): Generator<Mutation> {
  if (required && path.length > 0) yield inBody("missing", path, REMOVE)
  if (isEnum(schema)) {
    yield inBody("not one of the values", path, "not-one-of-the-values")
    yield inBody("wrong type", path, 12345)
    return
  }
  switch (schema.type) {
    case "string":
      yield* stringMutations(schema, (what, value) => inBody(what, path, value))
      yield inBody("wrong type", path, 12345)
      return
    case "boolean":
      yield inBody("wrong type", path, "yes")
      return
    case "integer":
    case "number":
      yield* numberMutations(schema, (what, value) => inBody(what, path, value))
      yield inBody("wrong type", path, "1")
      return
    case "array": {
      const items = resolve(typeof schema.items === "object" ? schema.items : {})
      if (schema.uniqueItems === true && (schema.maxItems ?? 2) >= 2) {
        const one = arrayOf({ ...schema, uniqueItems: false }, 1, path)[0]
        yield { ...inBody("a repeated item", path, [one, one]), under: true }
      }
      if (schema.contains !== undefined && "const" in schema.contains && Array.isArray(items.enum)) {
        const others = items.enum.filter((value: unknown) => value !== schema.contains?.const).slice(0, Math.max(schema.minItems ?? 1, 1))
        yield { ...inBody(`no ${JSON.stringify(schema.contains.const)}`, path, others), under: true }
      }
      if (typeof schema.maxItems === "number") {
        yield inBody(`${schema.maxItems + 1} items`, path, arrayOf({ ...schema, uniqueItems: false }, schema.maxItems + 1, path))
      }
      const minItems = schema.minItems ?? 0
      if (minItems > 0) yield inBody(`${minItems - 1} items`, path, arrayOf(schema, minItems - 1, path))
      yield inBody("wrong type", path, "not-an-array")
      // Each item's own limits, in an array that is otherwise valid.
      const valid = arrayOf(schema, Math.max(schema.minItems ?? 0, 1), path)
      for (const mutation of bodyMutations(items, [...path, 0], false)) {
        yield {
          ...mutation,
          apply: (request) => mutation.apply({ ...request, body: setAt(request.body, path, valid) })
        }
      }
      return
    }
    case "object": {
      if (path.length > 0) yield inBody("wrong type", path, "not-an-object")
      if (isOpen(schema)) return
      yield inBody("an unknown member", [...path, "unknownMember"], "x")
      const requiredMembers = new Set<string>(schema.required ?? [])
      const out = leftOut(schema)
      const exclusive = exclusiveMembers(schema)
      // Leaving out the chosen one of "exactly one of" members is refused on the object itself.
      if (exclusive !== undefined) yield { ...inBody("none of its exclusive members", [...path, exclusive[0]![0]!], REMOVE), path }
      // Fewer members than `minProperties` (an empty PATCH), and a member without those it depends on.
      if ((schema.minProperties ?? 0) > 0) yield { ...inBody(`fewer than ${schema.minProperties} members`, path, {}), under: true }
      for (const [member, needs] of Object.entries(schema.dependentRequired ?? {})) {
        for (const needed of needs) yield { ...inBody(`${member} without ${needed}`, [...path, needed], REMOVE), path, under: true }
      }
      for (const [key, member] of Object.entries<JsonSchema>(schema.properties ?? {})) {
        if (!out.has(key)) yield* bodyMutations(resolve(member), [...path, key], requiredMembers.has(key))
      }
      return
    }
  }
}

const stringMutations = function*(schema: JsonSchema, mutation: (what: string, value: string) => Mutation): Generator<Mutation> {
  if (typeof schema.maxLength === "number") {
    const value = stringOfLength(schema, schema.maxLength + 1)
    if (value !== undefined) yield mutation(`${schema.maxLength + 1} characters`, value)
  }
  const minLength = schema.minLength ?? 0
  if (minLength > 0) {
    const value = stringOfLength(schema, minLength - 1) ?? "a".repeat(minLength - 1)
    yield mutation(`${minLength - 1} characters`, value)
  }
  if (schema.format === "date-time") {
    for (
      const value of [
        "2030-02-31T00:00:00Z",
        "2030-13-01T00:00:00Z",
        "2030-01-01T25:00:00Z",
        "2030-01-01T00:00:00",
        "2030-01-01",
        "3000",
        "2030-01-01T00:00:00+25:00"
      ]
    ) yield mutation(value, value)
  }
  if (schema.format === "email") yield mutation("not an email", "not-an-email")
  const spoiled = notMatching(schema)
  if (spoiled !== undefined) yield mutation(`not matching ${schema.pattern}: ${JSON.stringify(spoiled)}`, spoiled)
}

/** Integers out of range, and in-range values written other than in plain decimal digits. */
const numberMutations = function*(schema: JsonSchema, mutation: (what: string, value: string | number) => Mutation, asText = false) {
  const text = (n: number) => (asText ? String(n) : n)
  if (typeof schema.minimum === "number") yield mutation(`${schema.minimum - 1}`, text(schema.minimum - 1))
  if (typeof schema.maximum === "number") yield mutation(`${schema.maximum + 1}`, text(schema.maximum + 1))
  if (schema.type === "integer") yield mutation("a fraction", asText ? `${schema.minimum ?? 0}.5` : (schema.minimum ?? 0) + 0.5)
  if (asText) {
    const n = Math.min(Math.max(16, schema.minimum ?? 16), schema.maximum ?? 16)
    for (const value of [`0x${n.toString(16)}`, `${n}e0`, ` ${n}`, `${n}.0`, `+${n}`, "abc"]) yield mutation(JSON.stringify(value), value)
  }
}

const queryMutations = function*(parameter: Operation["query"][number]): Generator<Mutation> {
  const schema = resolve(parameter.schema)
  const inQuery = (what: string, value: string | number): Mutation => ({
    what,
    path: [parameter.name],
    apply: (request) => ({ ...request, query: { ...request.query, [parameter.name]: String(value) } })
  })
  if (parameter.required) {
    yield {
      what: "missing",
      path: [parameter.name],
      apply: (request) => ({ ...request, query: Object.fromEntries(Object.entries(request.query).filter(([name]) => name !== parameter.name)) })
    }
  }
  if (isEnum(schema)) yield inQuery("not one of the values", "not-one-of-the-values")
  else if (schema.type === "string") yield* stringMutations(schema, inQuery)
  else if (schema.type === "integer" || schema.type === "number") yield* numberMutations(schema, inQuery, true)
}

const mutationsOf = (operation: Operation, body = operation.body): Array<Mutation> => [
  ...(body === undefined ? [] : bodyMutations(resolve(body), [], true)),
  ...operation.query.flatMap((parameter) => [...queryMutations(parameter)])
]

/**
 * Every string member set to its documented `maxLength`, and every array to its `maxItems`, one at a time; and a body
 * whose members are all optional, without `minProperties`, sent empty.
 */
const atTheLimits = function*(operation: Operation, body = operation.body): Generator<Mutation> {
  const limits = function*(schema: JsonSchema, path: Path, mutation: (value: unknown) => Mutation): Generator<Mutation> {
    if (isEnum(schema)) return
    if (schema.type === "string" && typeof schema.maxLength === "number" && schema.maxLength !== schema.minLength) {
      const value = stringOfLength(schema, schema.maxLength)
      if (value === undefined) throw new CannotProduce(`${show(path)}: no value of ${schema.maxLength} characters`)
      yield mutation(value)
    }
    if (schema.type === "array" && typeof schema.maxItems === "number") yield mutation(arrayOf(schema, schema.maxItems, path))
  }
  if (body !== undefined) {
    for (const { path, schema } of walk(body)) {
      if (path.includes(0)) continue
      yield* limits(schema, path, (value) => inBody("at the limit", path, value))
    }
    const root = resolve(body)
    if (root.type === "object" && (root.required ?? []).length === 0 && (root.minProperties ?? 0) === 0 && !isOpen(root)) {
      yield inBody("an empty body", [], {})
    }
  }
  for (const parameter of operation.query) {
    yield* limits(resolve(parameter.schema), [parameter.name], (value) => ({
      what: "at the limit",
      path: [parameter.name],
      apply: (request) => ({ ...request, query: { ...request.query, [parameter.name]: String(value) } })
    }))
  }
}

/**
 * The valid request and the mutations of each member of an operation's body (one for a body that is no union); a
 * value the walk cannot produce is itself an offence.
 */
const prepare = (
  operation: Operation,
  mutations: (operation: Operation, body: JsonSchema | undefined) => Array<Mutation>,
  offenders: Array<string>
) =>
  variantsOf(operation.body).flatMap((body) => {
    try {
      return [{ request: base(operation, body), mutations: mutations(operation, body) }]
    } catch (error) {
      if (!(error instanceof CannotProduce)) throw error
      offenders.push(`${operation.id}: ${error.message}`)
      return []
    }
  })

// --- The checks -------------------------------------------------------------------------------------------------

describe("the OpenAPI document and the server agree", () => {
  it("bounds every request member: strings, arrays, objects and query integers", () => {
    const offenders: Array<string> = []
    for (const operation of operations) {
      const members = [
        ...(operation.body === undefined ? [] : [...walk(operation.body)].map((member) => ({ ...member, where: "body" }))),
        ...operation.query.map((parameter) => ({ path: [parameter.name], schema: resolve(parameter.schema), where: "query" }))
      ]
      for (const { path, schema, where } of members) {
        const at = `${operation.id} ${where} ${show(path)}`
        if (schema.type === "string" && !isEnum(schema) && typeof schema.maxLength !== "number") offenders.push(`${at}: string without maxLength`)
        if (schema.type === "array" && typeof schema.maxItems !== "number") offenders.push(`${at}: array without maxItems`)
        if (schema.type === "object" && schema.additionalProperties !== false && !isOpen(schema)) {
          offenders.push(`${at}: object without additionalProperties: false (or true, for free-form JSON)`)
        }
        if (where === "query" && schema.type === "integer" && (typeof schema.minimum !== "number" || typeof schema.maximum !== "number")) {
          offenders.push(`${at}: integer without minimum and maximum`)
        }
        if (schema.type === undefined && !isEnum(schema) && !Array.isArray(schema.anyOf) && !Array.isArray(schema.oneOf)) {
          offenders.push(`${at}: no type`)
        }
      }
    }
    expect(offenders).toEqual([])
  })

  it("reaches every kind of member the checks are about", () => {
    // Guards the walk itself: if it stopped finding members, the checks below would pass on nothing.
    const kinds = new Set<string>()
    for (const operation of operations) {
      for (const { path, schema } of operation.body === undefined ? [] : walk(operation.body)) {
        kinds.add(path.length > 0 && schema.type === "object" ? "nested object" : schema.format ?? kindOf(schema))
      }
      for (const parameter of operation.query) kinds.add(`query ${kindOf(resolve(parameter.schema))}`)
    }
    expect([...kinds].sort()).toEqual(
      expect.arrayContaining(["array", "date-time", "email", "enum", "nested object", "object", "query integer", "query string", "string"])
    )
    expect(operations.filter((operation) => operation.body !== undefined).length).toBeGreaterThanOrEqual(10)
    // Request unions are checked member by member: MCP connections by `authType`, connector accounts by `kind`, SSO
    // connections by `kind`.
    const unions = operations.filter((operation) => variantsOf(operation.body).length > 1).map((operation) => operation.id)
    expect(unions).toEqual(expect.arrayContaining(["mcpConnections.create", "connectorAccounts.create", "sso.createConnection"]))
  })

  it("names an unknown body member, nested ones included, with the members it may have", async () => {
    const response = await Http.request(server.url, "POST", "/v1/invitations/accept", {
      body: { token: "t", tokn: "t", signUp: { name: "Ada", password: "correct horse battery", admin: true } }
    })
    expect(response.status).toBe(400)
    expect(response.body).toEqual({
      error: "invalid_request",
      details: [
        { message: "is unexpected, expected: \"token\" | \"signUp\"", path: ["tokn"] },
        { message: "is unexpected, expected: \"name\" | \"password\"", path: ["signUp", "admin"] }
      ]
    })
  })

  it("refuses every value beyond a documented limit with 400 invalid_request on that member", async () => {
    const offenders: Array<string> = []
    let sent = 0
    const requests = operations.flatMap((operation) => prepare(operation, mutationsOf, offenders).map((prepared) => ({ operation, ...prepared })))
    for (const { mutations, operation, request } of requests) {
      for (const mutation of mutations) {
        const response = await send(operation, mutation.apply(request))
        sent++
        const details = detailsOf(response.body) ?? []
        const pointsAt = (path: Path) => samePath(mutation.under ? path.slice(0, mutation.path.length) : path, mutation.path)
        // A SCIM refusal names the member in its detail (`startIndex must be an integer.`): its last name in the path.
        const scim = scimRefusal(operation, response)
        const member = mutation.path.filter((part): part is string => typeof part === "string").at(-1)
        if (scim !== undefined && member !== undefined && scim.detail.includes(member)) continue
        if (response.status !== 400 || Json.at(response.body, "error") !== "invalid_request" || !details.some((detail) => pointsAt(detail.path))) {
          offenders.push(`${operation.id} ${show(mutation.path)} ${mutation.what}: ${response.status} ${response.text.slice(0, 300)}`)
        }
      }
    }
    expect(offenders).toEqual([])
    expect(sent).toBeGreaterThan(1000)
  }, 180_000)

  it("does not refuse in decoding what the document calls valid, up to each member's maxLength and maxItems", async () => {
    const offenders: Array<string> = []
    const requests = operations.filter((operation) => operation.body !== undefined || operation.query.length > 0).flatMap((operation) =>
      prepare(operation, (operation, body) => [...atTheLimits(operation, body)], offenders).map((prepared) => ({ operation, ...prepared }))
    )
    const unchanged: Mutation = { what: "valid request", path: [], apply: (request) => request }
    for (const { mutations, operation, request } of requests) {
      for (const { apply, path, what } of [unchanged, ...mutations]) {
        const response = await send(operation, apply(request))
        const refused = refusals(operation, response)
        if (response.status >= 500 || refused.length > 0) {
          offenders.push(
            `${operation.id} ${show(path)} ${what}: ${response.status} ${
              refused.length > 0 ? JSON.stringify(refused) : response.text.slice(0, 300)
            }`
          )
        }
      }
    }
    expect(offenders).toEqual([])
  }, 180_000)
})

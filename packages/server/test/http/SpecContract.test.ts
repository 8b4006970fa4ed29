/**
 * The seed spec (`docs/spec/control-plane-api.md`, a verbatim copy) against the served `/openapi.json`: each of the
 * 30 operations its "Endpoints" part describes is in the document, every enumeration it lists for them is offered,
 * every error it lists for them is declared, and none declares an error body outside its list, beyond the API-wide
 * answers named in `apiWide` with their reasons. The spec is read by a small reader of its own conventions
 * (`readSpec`), which throws on text it does not understand rather than finding less, and whose findings are
 * counted, so a reader that breaks cannot pass.
 */
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as Json from "../../../../packages/testkit/src/Json.js"
import * as TestServer from "../support/HttpServer.js"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const specText = readFileSync(new URL("../../../../docs/spec/control-plane-api.md", import.meta.url), "utf8")

/** The seed spec as it was given: the copy is the contract, not a description to keep up to date. */
const SPEC_SHA256 = "19857021c8906fccaaa7145c0db5348a7a5d451023a9498d3927f85bcf5dcf93"

// --- Reading the spec -------------------------------------------------------------------------------------------

/** What an operation's error list names: a code of the spec's Errors table, or one of its unnamed body shapes. */
type Listed =
  | { readonly kind: "code"; readonly code: string; readonly status: number | undefined }
  /** `{ reason, message }`, the spec's "forbidden-style" body. */
  | { readonly kind: "reason" }
  /** `{ error, message }` with any code: the spec's "generic" and "not found" bodies. */
  | { readonly kind: "generic"; readonly status: number | undefined }
  /** `{ ok: false, error }`, the webhook's failed signature check. */
  | { readonly kind: "webhook" }

interface Enumeration {
  /** The member or parameter it is the value of, when the spec names it. */
  readonly name: string | undefined
  readonly values: ReadonlyArray<string>
}

interface SpecOperation {
  readonly method: string
  readonly path: string
  readonly errors: ReadonlyArray<Listed>
  readonly enumerations: ReadonlyArray<Enumeration>
}

/** The lines of the `## title` part of a Markdown text, up to the next `## ` heading; throws when there is none. */
const part = (markdown: string, title: string): ReadonlyArray<string> => {
  const lines = markdown.split("\n")
  const start = lines.findIndex((line) => line.trim() === `## ${title}`)
  if (start < 0) throw new Error(`the spec has no "## ${title}" part`)
  const end = lines.findIndex((line, index) => index > start && line.startsWith("## "))
  return lines.slice(start + 1, end < 0 ? undefined : end)
}

/** The error codes the spec's Errors table gives: the backquoted values after `error =` in its members column. */
const codesOf = (errors: ReadonlyArray<string>): ReadonlySet<string> =>
  new Set(
    errors
      .filter((line) => line.startsWith("|"))
      .flatMap((line) => {
        const members = line.split("|")[2] ?? ""
        const values = /error = (.*)$/.exec(members)?.[1] ?? ""
        return [...values.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!)
      })
  )

/** `a, b { c, d }, e` → `a`, `b { c, d }`, `e`: commas inside braces or parentheses do not split. */
const splitTopLevel = (text: string): ReadonlyArray<string> => {
  const items: Array<string> = []
  let depth = 0
  let current = ""
  for (const character of text) {
    if (character === "{" || character === "(") depth++
    if (character === "}" || character === ")") depth--
    if (character === "," && depth === 0) {
      items.push(current.trim())
      current = ""
    } else {
      current += character
    }
  }
  if (current.trim() !== "") items.push(current.trim())
  return items
}

/** One item of an error list: `401 unauthorized`, `enterprise_plan_required { error, feature, message }`, `{ reason, message }`. */
const listedOf = (item: string, codes: ReadonlySet<string>): Listed => {
  // A closing remark in parentheses, `(bad query)` or `(see Errors)`, says nothing of the body.
  const [, statusText, rest] = /^(?:(\d{3}) )?(.*)$/.exec(item.replace(/\s*\([^()]*\)$/, ""))!
  const status = statusText === undefined ? undefined : Number(statusText)
  const code = /^([a-z_]+)\b/.exec(rest!)?.[1]
  if (code !== undefined && codes.has(code)) return { kind: "code", code, status }
  const members = /\{([^}]*)\}/.exec(rest!)?.[1]?.split(",").map((member) => member.trim()).sort().join(",")
  if (members === "message,reason") return { kind: "reason" }
  if (members === "error,message" || rest === "not-found body") return { kind: "generic", status }
  throw new Error(`the spec lists an error the reader does not know: "${item}"`)
}

/**
 * Where an operation's text refers to another's errors instead of listing them, the operation it means. Each is read
 * from the spec's own words; any other reference fails the reader.
 */
const references: ReadonlyArray<{ readonly words: RegExp; readonly to: (previous: SpecOperation | undefined, all: ReadonlyArray<SpecOperation>) => SpecOperation | undefined }> = [
  { words: /\bErrors as above\b/, to: (previous) => previous },
  { words: /\bErrors as for discovery\b/, to: (_, all) => all.find((operation) => operation.path.endsWith("/discovery")) },
  // "Response { items, nextCursor } as for connector instance grants": the same list of grants, so its errors too.
  {
    words: /\bas for connector instance grants\b/,
    to: (_, all) => all.find((operation) => operation.path.startsWith("/v1/connector-instances/") && operation.path.endsWith("/access"))
  }
]

/** The enumerations an operation's text lists: `name (`a`|`b`)` (or `(enum `a`|`b`)`), and unnamed ones (`enumerations with values `a`, `b` and `c`, `d``). */
const enumerationsOf = (text: string): ReadonlyArray<Enumeration> => {
  const values = (list: string) => [...list.matchAll(/`([^`]+)`/g)].map((match) => match[1]!)
  const named = [...text.matchAll(/(\w+) \((?:enum )?(`[^`]+`(?:\|`[^`]+`)+)\)/g)].map((match) => ({ name: match[1], values: values(match[2]!) }))
  const unnamed = /enumerations with values (.*?); their member names: not shown/.exec(text)?.[1]
  return [...named, ...(unnamed === undefined ? [] : unnamed.split(" and ").map((group) => ({ name: undefined, values: values(group) })))]
}

/** The spec's operations (the `**METHOD /path**` blocks of "Endpoints") with their errors and enumerations. */
const readSpec = (markdown: string): { readonly operations: ReadonlyArray<SpecOperation>; readonly codes: ReadonlySet<string> } => {
  const codes = codesOf(part(markdown, "Errors"))
  const blocks: Array<{ readonly method: string; readonly path: string; readonly lines: Array<string> }> = []
  let current: (typeof blocks)[number] | undefined
  for (const line of part(markdown, "Endpoints")) {
    const start = /^\*\*(GET|POST|PUT|PATCH|DELETE) (\/\S+)\*\*/.exec(line)
    if (start !== null) blocks.push(current = { method: start[1]!, path: start[2]!, lines: [line] })
    // A group's heading ends its last operation: what follows it, up to the next operation, is the group's.
    else if (line.startsWith("### ")) current = undefined
    else current?.lines.push(line)
  }
  const texts = blocks.map((block) => block.lines.join("\n"))
  const listOf = (text: string) => /\bErrors?(?: bodies listed)?(?: for both)?: (.*?)\.(?: [A-Z]|\s*$)/m.exec(text)?.[1]
  const operations: Array<SpecOperation> = []
  for (const [index, block] of blocks.entries()) {
    const text = texts[index]!
    // "Errors for both", after the second of two operations, is the first's list too.
    const next = texts[index + 1]
    const listed = listOf(text) ?? (next !== undefined && /\bErrors for both:/.test(next) ? listOf(next) : undefined)
    const reference = references.find(({ words }) => words.test(text))
    let errors: ReadonlyArray<Listed>
    if (listed !== undefined) errors = splitTopLevel(listed).map((item) => listedOf(item, codes))
    else if (reference !== undefined) {
      const target = reference.to(operations.at(-1), operations)
      if (target === undefined) throw new Error(`${block.method} ${block.path}: "${reference.words.source}" names no operation read before it`)
      errors = target.errors
    } else if (/\{ ok: false, error: string \}/.test(text)) errors = [{ kind: "webhook" }]
    else throw new Error(`${block.method} ${block.path}: the reader finds no error list`)
    operations.push({ method: block.method, path: block.path, errors, enumerations: enumerationsOf(text) })
  }
  return { operations, codes }
}

// --- Reading the document ---------------------------------------------------------------------------------------

type Json = { readonly [key: string]: unknown }

const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const member = (value: unknown, key: string): Json => {
  const found = isJson(value) ? value[key] : undefined
  return isJson(found) ? found : {}
}
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

let server: TestServer.RunningServer
let document: Json

/** A schema with its `$ref` (and a lone `allOf` wrapper) followed. */
const resolve = (schema: unknown): Json => {
  if (!isJson(schema)) return {}
  if (typeof schema.$ref === "string") return resolve(member(member(document, "components"), "schemas")[schema.$ref.split("/").pop()!])
  const allOf = list(schema.allOf)
  if (allOf.length === 1 && schema.type === undefined && schema.properties === undefined) return { ...resolve(allOf[0]), ...schema, allOf: undefined }
  return schema
}

/** The alternatives of a body schema (`anyOf`/`oneOf` flattened), each resolved. */
const alternatives = (schema: unknown): ReadonlyArray<Json> => {
  const own = resolve(schema)
  const choices = [...list(own.anyOf), ...list(own.oneOf)]
  return choices.length === 0 ? [own] : choices.flatMap(alternatives)
}

/** The literal values a schema allows (`enum`, `const`, or alternatives of those), or undefined for any value. */
const literals = (schema: unknown): ReadonlyArray<unknown> | undefined => {
  const own = resolve(schema)
  if (Array.isArray(own.enum)) return own.enum
  if ("const" in own) return [own.const]
  const choices = [...list(own.anyOf), ...list(own.oneOf)]
  if (choices.length === 0) return undefined
  const each = choices.map(literals)
  return each.every((values) => values !== undefined) ? each.flat() : undefined
}

/** An error body as the document declares it, by what tells it apart. */
type Declared =
  | { readonly status: number; readonly kind: "code"; readonly codes: ReadonlyArray<string>; readonly hasMessage: boolean }
  | { readonly status: number; readonly kind: "reason"; readonly reasons: ReadonlyArray<string> }
  | { readonly status: number; readonly kind: "webhook" }
  | { readonly status: number; readonly kind: "open" }

const declaredOf = (status: number, body: Json): Declared => {
  const properties = member(body, "properties")
  if (literals(properties.ok)?.[0] === false) return { status, kind: "webhook" }
  const codes = literals(properties.error)
  if ("error" in properties) {
    return codes === undefined
      ? { status, kind: "open" }
      : { status, kind: "code", codes: codes.map(String), hasMessage: "message" in properties }
  }
  if ("reason" in properties) return { status, kind: "reason", reasons: (literals(properties.reason) ?? []).map(String) }
  throw new Error(`an error body the test cannot classify: ${JSON.stringify(body)}`)
}

interface DocumentOperation {
  readonly id: string
  readonly parameters: ReadonlyArray<Json>
  readonly body: Json | undefined
  readonly authenticated: boolean
  readonly errors: ReadonlyArray<Declared>
}

const withoutNames = (path: string) => path.replace(/\{[^}]+\}/g, "{}")

const documentOperation = (method: string, path: string): DocumentOperation | undefined => {
  const entry = Object.entries(member(document, "paths")).find(([candidate]) => withoutNames(candidate) === withoutNames(path))
  const operation = entry === undefined ? undefined : member(entry[1], method.toLowerCase())
  if (operation === undefined || operation.operationId === undefined) return undefined
  const errors = Object.entries(member(operation, "responses"))
    .filter(([status]) => Number(status) >= 400)
    .flatMap(([status, response]) =>
      Object.values(member(response, "content")).flatMap((media) => alternatives(member(media, "schema")).map((body) => declaredOf(Number(status), body)))
    )
  const body = member(member(member(operation, "requestBody"), "content"), "application/json").schema
  return {
    id: String(operation.operationId),
    parameters: list(operation.parameters).filter(isJson),
    body: isJson(body) ? body : undefined,
    authenticated: list(operation.security).length > 0,
    errors
  }
}

/** The component a schema refers to, directly or as its lone `allOf` member. */
const referenceOf = (schema: unknown): string | undefined => {
  if (!isJson(schema)) return undefined
  if (typeof schema.$ref === "string") return schema.$ref
  const allOf = list(schema.allOf)
  return allOf.length === 1 ? referenceOf(allOf[0]) : undefined
}

/** Every `[name, schema]` of a request body, at any depth (members of objects, items of arrays, alternatives); each component once. */
const bodyMembers = (schema: unknown, seen = new Set<string>()): ReadonlyArray<readonly [string, unknown]> => {
  const reference = referenceOf(schema)
  if (reference !== undefined) {
    if (seen.has(reference)) return []
    seen.add(reference)
  }
  const own = resolve(schema)
  const properties = Object.entries(member(own, "properties"))
  return [
    ...properties,
    ...properties.flatMap(([, inner]) => bodyMembers(inner, seen)),
    ...[own.items, ...list(own.allOf), ...list(own.anyOf), ...list(own.oneOf)].filter(isJson).flatMap((inner) => bodyMembers(inner, seen))
  ]
}

// --- What every operation may answer ------------------------------------------------------------------------------

/**
 * Answers the spec's lists leave out because they are not any one operation's: they come from what runs around
 * every operation. The spec's Errors part gives body shapes and, for all statuses but the mappings list's, "not
 * shown"; its Limits part bounds inputs without saying how a request past them is refused; it says rate limits are
 * "not shown", not absent. Each entry: the code, the status it comes with, to which operations it applies, and why.
 */
const apiWide: ReadonlyArray<{
  readonly code: string
  readonly status: number
  readonly applies: (operation: DocumentOperation) => boolean
  readonly why: string
}> = [
  {
    code: "invalid_request",
    status: 400,
    applies: (operation) => operation.parameters.length > 0 || operation.body !== undefined,
    why: "the spec bounds inputs (Limits) and gives one body for a request past them; the capability passthroughs list none but bound their bodies"
  },
  { code: "unauthorized", status: 401, applies: (operation) => operation.authenticated, why: "a credential that is missing, expired or revoked" },
  {
    code: "organization_not_found",
    status: 404,
    applies: (operation) => operation.authenticated,
    why: "the authentication names the organization an operation acts in (Authentication); a credential whose member has none left"
  },
  { code: "payload_too_large", status: 413, applies: () => true, why: "the request guard's body limit, before any operation reads the body" },
  { code: "uri_too_long", status: 414, applies: () => true, why: "the request guard's URL limit, before routing" },
  { code: "unsupported_media_type", status: 415, applies: (operation) => operation.body !== undefined, why: "a body that is not JSON, before decoding" },
  { code: "request_header_fields_too_large", status: 431, applies: () => true, why: "Node's header limit, before routing" },
  { code: "rate_limited", status: 429, applies: () => true, why: "rate limits are \"not shown\" in the spec (Limits), not absent" },
  ...(["idempotency_key_in_use", "idempotency_response_lost"] as const).map((code) => ({
    code,
    status: 409,
    applies: (operation: DocumentOperation) => operation.parameters.some((parameter) => parameter.name === "Idempotency-Key"),
    why: "answered only to a client that sends an `Idempotency-Key`, a header the spec does not have"
  })),
  {
    code: "idempotency_key_reused",
    status: 422,
    applies: (operation) => operation.parameters.some((parameter) => parameter.name === "Idempotency-Key"),
    why: "answered only to a client that sends an `Idempotency-Key`, a header the spec does not have"
  },
  { code: "service_unavailable", status: 503, applies: () => true, why: "the database is down: no operation can answer, whatever its list" },
  {
    code: "stored_credential_unreadable",
    status: 500,
    applies: () => true,
    why: "a 500: the server failing to answer (a stored secret its keys cannot decrypt), not an answer of the operation"
  }
]

/** 403 `{reason, message}` on any operation that authenticates: "which role each endpoint requires: not shown" (Authentication). */
const authorizationIsApiWide = (operation: DocumentOperation, declared: Declared) => declared.status === 403 && operation.authenticated

/** The declared error bodies of `operation` that its spec list does not allow, as readable lines. */
const outsideList = (spec: SpecOperation, operation: DocumentOperation): ReadonlyArray<string> => {
  // A status the spec gives with an item (the mappings list's `404 not-found body`) holds it to that status.
  const atStatus = (listed: { readonly status: number | undefined }, status: number) => listed.status === undefined || listed.status === status
  const listedCode = (code: string, status: number) =>
    spec.errors.some((listed) => listed.kind === "code" && listed.code === code && atStatus(listed, status))
  const genericAt = (status: number) => spec.errors.some((listed) => listed.kind === "generic" && atStatus(listed, status))
  const reason = spec.errors.some((listed) => listed.kind === "reason")
  const webhook = spec.errors.some((listed) => listed.kind === "webhook")
  const wide = (code: string, status: number) => apiWide.some((entry) => entry.code === code && entry.status === status && entry.applies(operation))
  return operation.errors.flatMap((declared): ReadonlyArray<string> => {
    switch (declared.kind) {
      case "code": {
        if (genericAt(declared.status) && declared.hasMessage) return []
        const outside = declared.codes.filter((code) => !listedCode(code, declared.status) && !wide(code, declared.status))
        return outside.length === 0 ? [] : [`${declared.status} ${outside.join(", ")}`]
      }
      case "reason":
        return reason || authorizationIsApiWide(operation, declared) ? [] : [`${declared.status} {reason: ${declared.reasons.join(" | ")}, message}`]
      case "webhook":
        return webhook ? [] : [`${declared.status} {ok: false, error}`]
      case "open":
        return genericAt(declared.status) ? [] : [`${declared.status} {error: string, message}`]
    }
  })
}

/** The spec's listed errors that the document does not declare for `operation`, as readable lines. */
const undeclared = (spec: SpecOperation, operation: DocumentOperation): ReadonlyArray<string> =>
  spec.errors.flatMap((listed): ReadonlyArray<string> => {
    const at = (status: number | undefined) => operation.errors.filter((declared) => status === undefined || declared.status === status)
    switch (listed.kind) {
      case "code":
        return at(listed.status).some((declared) => declared.kind === "code" && declared.codes.includes(listed.code))
          ? []
          : [`${listed.status ?? ""} ${listed.code}`.trim()]
      case "reason":
        return operation.errors.some((declared) => declared.kind === "reason") ? [] : ["{reason, message}"]
      case "generic":
        return at(listed.status).some((declared) => declared.kind === "open" || (declared.kind === "code" && declared.hasMessage))
          ? []
          : [`${listed.status ?? ""} {error, message}`.trim()]
      case "webhook":
        return operation.errors.some((declared) => declared.kind === "webhook") ? [] : ["{ok: false, error}"]
    }
  })

/** The spec's enumerations that `operation` does not offer: a parameter or body member whose values include the spec's. */
const notOffered = (spec: SpecOperation, operation: DocumentOperation): ReadonlyArray<string> => {
  const candidates: ReadonlyArray<readonly [string, unknown]> = [
    ...operation.parameters.map((parameter) => [String(parameter.name), parameter.schema] as const),
    ...(operation.body === undefined ? [] : bodyMembers(operation.body))
  ]
  return spec.enumerations.flatMap((enumeration) => {
    const offered = candidates.some(([name, schema]) => {
      if (enumeration.name !== undefined && name !== enumeration.name) return false
      const values = literals(schema) ?? literals(member(resolve(schema), "items"))
      return values !== undefined && enumeration.values.every((value) => values.includes(value))
    })
    return offered ? [] : [`${enumeration.name ?? "(unnamed)"}: ${enumeration.values.join(" | ")}`]
  })
}

// --- The checks ---------------------------------------------------------------------------------------------------

const spec = readSpec(specText)

beforeAll(async () => {
  server = await TestServer.start()
  const response = await Http.request(server.url, "GET", "/openapi.json")
  expect(response.status).toBe(200)
  document = Json.object(response.body, "the OpenAPI document")
})
afterAll(() => server.close())

/** Each spec operation with the document's, failing on the first that the document lacks. */
const pairs = () =>
  spec.operations.map((operation) => {
    const found = documentOperation(operation.method, operation.path)
    if (found === undefined) throw new Error(`the document has no ${operation.method} ${operation.path}`)
    return { spec: operation, document: found, name: `${found.id} (${operation.method} ${operation.path})` }
  })

describe("the seed spec", () => {
  it("is the verbatim copy", () => {
    expect(createHash("sha256").update(specText).digest("hex")).toBe(SPEC_SHA256)
  })

  it("is read whole: 30 operations, each with its errors; the codes of its Errors table; its 5 enumerations", () => {
    expect(spec.operations.length).toBe(30)
    expect(new Set(spec.operations.map(({ method, path }) => `${method} ${path}`)).size).toBe(30)
    expect(spec.operations.filter((operation) => operation.errors.length === 0).map(({ method, path }) => `${method} ${path}`)).toEqual([])
    expect([...spec.codes].sort()).toEqual([
      "connection_not_found",
      "connection_not_ready",
      "enterprise_plan_required",
      "invalid_request",
      "needs_connection",
      "organization_not_found",
      "payload_too_large",
      "suite_a_api_error",
      "suite_b_api_error",
      "tool_execution_failed",
      "unauthorized"
    ])
    const enumerations = spec.operations.flatMap(({ enumerations, method, path }) =>
      enumerations.map(({ name, values }) => `${method} ${path} ${name ?? "(unnamed)"}: ${values.join("|")}`)
    )
    expect(enumerations).toEqual([
      "GET /v1/connector-targets/{connectorTargetId}/mappings mappingKind: path|api|custom",
      "GET /v1/connector-targets/{connectorTargetId}/mappings objectType: skill|agent|command|tool|mcp|hook|context|custom",
      "POST /v1/config-objects (unnamed): skill|agent|command|tool|mcp|hook|context|custom",
      "POST /v1/config-objects (unnamed): cloud|import|connector",
      "POST /v1/memory origin: active_conversation|searched_conversation"
    ])
    // The lists the issue is about, as read.
    const errorsOf = (method: string, path: string) => spec.operations.find((operation) => operation.method === method && operation.path === path)?.errors
    expect(errorsOf("POST", "/v1/sso/verify-domain")).toEqual([
      { kind: "code", code: "invalid_request", status: undefined },
      { kind: "code", code: "unauthorized", status: undefined },
      { kind: "code", code: "enterprise_plan_required", status: undefined },
      { kind: "reason" },
      { kind: "code", code: "organization_not_found", status: undefined }
    ])
    expect(errorsOf("GET", "/v1/connector-targets/{connectorTargetId}/mappings")).toEqual([
      { kind: "code", code: "invalid_request", status: 400 },
      { kind: "code", code: "unauthorized", status: 401 },
      { kind: "generic", status: 404 }
    ])
    expect(errorsOf("POST", "/v1/desktop-policies")).toEqual(errorsOf("PATCH", "/v1/desktop-policies/{desktopPolicyId}"))
    expect(errorsOf("GET", "/v1/config-objects/{configObjectId}/access")).toEqual(errorsOf("GET", "/v1/connector-instances/{connectorInstanceId}/access"))
    expect(errorsOf("POST", "/v1/webhooks/connectors/codehost")).toEqual([{ kind: "webhook" }])
  })

  it("refuses text it does not understand, rather than finding less", () => {
    expect(() => readSpec(specText.replace("- Errors: unauthorized, needs_connection", "- Errors: unauthorized, a_new_code"))).toThrow(/a_new_code/)
    expect(() => readSpec(specText.replace("## Endpoints", "## The endpoints"))).toThrow(/Endpoints/)
    expect(() => readSpec(specText.replace("Errors: unauthorized, { reason, message }.", "Failures: unauthorized."))).toThrow(/no error list/)
  })
})

describe("the served document against the seed spec", () => {
  it("has each of its 30 operations", () => {
    expect(pairs().length).toBe(30)
  })

  it("offers every enumeration the spec lists", () => {
    const missing = pairs().flatMap(({ document, name, spec }) => notOffered(spec, document).map((problem) => `${name}: ${problem}`))
    expect(missing).toEqual([])
  })

  it("declares every error the spec lists for an operation", () => {
    const missing = pairs().flatMap(({ document, name, spec }) => undeclared(spec, document).map((problem) => `${name}: ${problem}`))
    expect(missing).toEqual([])
  })

  it("declares no error body outside an operation's list, beyond the API-wide answers", () => {
    const outside = pairs().flatMap(({ document, name, spec }) => outsideList(spec, document).map((problem) => `${name}: ${problem}`))
    expect(outside).toEqual([])
    // The check bites: every operation declares API-wide answers, and some list a generic body, some do not.
    expect(pairs().every(({ document }) => document.errors.some((declared) => declared.status === 503))).toBe(true)
    expect(pairs().filter(({ spec }) => !spec.errors.some((listed) => listed.kind === "generic")).length).toBeGreaterThan(8)
  })

  it("finds the drift it is for: a code outside a list, a listed error undeclared, a value not offered", () => {
    const find = (id: string) => pairs().find(({ document }) => document.id === id)!
    const verify = find("sso.verifyDomain")
    const conflict: Declared = { status: 409, kind: "code", codes: ["sso_domain_required"], hasMessage: true }
    expect(outsideList(verify.spec, { ...verify.document, errors: [...verify.document.errors, conflict] })).toEqual(["409 sso_domain_required"])
    const needs: Listed = { kind: "code", code: "needs_connection", status: undefined }
    expect(undeclared({ ...verify.spec, errors: [...verify.spec.errors, needs] }, verify.document)).toEqual(["needs_connection"])
    const create = find("configObjects.create")
    const teleport: Enumeration = { name: undefined, values: ["cloud", "import", "teleport"] }
    expect(notOffered({ ...create.spec, enumerations: [teleport] }, create.document)).toEqual(["(unnamed): cloud | import | teleport"])
  })
})

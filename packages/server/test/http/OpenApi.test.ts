/**
 * The served OpenAPI document as a reader (the reference UI, a client generator, a linter, a fuzzer) sees it: every
 * operation has a unique summary, a description and its errors; 400 only where there is input to refuse; every tag is
 * described; servers, contact and licence are named; no generated noise; every request string states the NUL rule;
 * Redocly's recommended rules pass. Then the values the tools found documented-valid but refused, sent to the server.
 * Generic over the document: a new operation is checked without touching this file.
 */
import { type AuthResult, excludesNul, NO_NUL_PATTERN, openApiDocument } from "@orgplane/schema"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import type * as OpenApi from "../../../../packages/testkit/src/OpenApiDocument.js"
import * as TestServer from "../support/HttpServer.js"
import { createConfig, lintFromString } from "@redocly/openapi-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

interface Operation {
  readonly id: string
  /** The id with the method and path, for failure messages. */
  readonly name: string
  readonly summary: unknown
  readonly description: unknown
  readonly tags: ReadonlyArray<string>
  readonly statuses: ReadonlyArray<string>
  readonly takesInput: boolean
  readonly hasRequestBody: boolean
  /** The policy actions the operation checks (`x-orgplane-actions`), if any. */
  readonly actions: unknown
}

/**
 * Operations that answer no error at all: /health reads nothing, not even the database, and takes no input; the MCP
 * OAuth client metadata document is built from the configuration alone.
 */
const cannotFail = new Set(["system.health", "mcpAuthorization.clientMetadata"])

let server: TestServer.RunningServer
let document: OpenApi.Document
let operations: ReadonlyArray<Operation>

beforeAll(async () => {
  server = await TestServer.start()
  const response = await Http.request(server.url, "GET", "/openapi.json")
  expect(response.status).toBe(200)
  document = Http.expectStatus<OpenApi.Document>("the document", response, 200)
  operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]): Operation => ({
      id: operation.operationId,
      name: `${operation.operationId} (${method.toUpperCase()} ${path})`,
      summary: operation.summary,
      description: operation.description,
      tags: operation.tags ?? [],
      statuses: Object.keys(operation.responses ?? {}),
      takesInput: (operation.parameters ?? []).length > 0 || operation.requestBody !== undefined,
      hasRequestBody: operation.requestBody !== undefined,
      actions: operation["x-orgplane-actions"]
    }))
  )
})
afterAll(() => server.close())

const isText = (value: unknown) => typeof value === "string" && value.trim() !== ""

describe("the served OpenAPI document", () => {
  it("has operations to check", () => {
    expect(operations.length).toBeGreaterThan(20)
  })

  it("gives every operation a summary and a description", () => {
    const lacking = operations.flatMap((operation) => [
      ...(isText(operation.summary) ? [] : [`${operation.name}: no summary`]),
      ...(isText(operation.description) ? [] : [`${operation.name}: no description`])
    ])
    expect(lacking).toEqual([])
  })

  it("keeps summaries short titles, unique across the document", () => {
    const bySummary = new Map<unknown, Array<string>>()
    for (const { name, summary } of operations) {
      if (isText(summary)) bySummary.set(summary, [...(bySummary.get(summary) ?? []), name])
    }
    const shared = [...bySummary].filter(([, names]) => names.length > 1).map(([summary, names]) => `${summary}: ${names.join(", ")}`)
    expect(shared).toEqual([])
    const untitled = operations.filter(({ summary }) =>
      typeof summary === "string" && (summary.length > 60 || summary.endsWith(".") || summary[0] !== summary[0]?.toUpperCase())
    )
    expect(untitled.map((operation) => `${operation.name}: ${operation.summary}`)).toEqual([])
  })

  it("documents the errors of every operation", () => {
    const silent = operations.filter((operation) =>
      !cannotFail.has(operation.id) && !operation.statuses.some((status) => !status.startsWith("2"))
    )
    expect(silent.map((operation) => operation.name)).toEqual([])
  })

  it("documents 403 for every operation that checks a policy action, even one every member may take", () => {
    // The policy table may change; the check then refuses with 403 `insufficient_role`, never a 500.
    const checked = operations.filter((operation) => operation.actions !== undefined)
    expect(checked.length).toBeGreaterThan(20)
    expect(checked.filter((operation) => !operation.statuses.includes("403")).map((operation) => operation.name)).toEqual([])
  })

  it("documents 400 only for operations that take input", () => {
    const without = operations.filter((operation) => !operation.takesInput && operation.statuses.includes("400"))
    expect(without.map((operation) => operation.name)).toEqual([])
    // The rule has something to bite on: the probes take no input.
    expect(operations.filter((operation) => !operation.takesInput).length).toBeGreaterThan(1)
  })

  it("documents 414 and 431 for every operation, 415 exactly for those with a request body, 405 in the API's description", () => {
    const lacking = operations.filter((operation) =>
      !operation.statuses.includes("414") || !operation.statuses.includes("431") || operation.statuses.includes("415") !== operation.hasRequestBody
    )
    expect(lacking.map((operation) => `${operation.name}: ${operation.statuses.join(" ")}`)).toEqual([])
    expect(operations.some((operation) => operation.hasRequestBody)).toBe(true)
    expect(operations.filter((operation) => operation.statuses.includes("405")).map((operation) => operation.name)).toEqual([])
    expect(document.info.description).toContain("405 `method_not_allowed`")
  })

  it("describes every tag an operation uses", () => {
    const described = new Set(
      (document.tags ?? []).filter((tag) => isText(tag.description)).map((tag) => tag.name)
    )
    const used = new Set(operations.flatMap((operation) => operation.tags))
    expect([...used].filter((tag) => !described.has(tag))).toEqual([])
  })
})

// --- Hygiene ------------------------------------------------------------------------------------------------------

type JsonSchema = OpenApi.JsonSchema

const isObject = (value: unknown): value is JsonSchema => typeof value === "object" && value !== null && !Array.isArray(value)
const REF = "#/components/schemas/"

/** The schemas directly under a schema (not under `examples`, `default`, `const` or `enum`, which are values). */
const subschemas = (schema: JsonSchema): Array<JsonSchema> => [
  ...[schema.properties, schema.patternProperties, schema.dependentSchemas].flatMap((members) => Object.values(members ?? {})),
  ...[schema.items, schema.additionalProperties, schema.propertyNames, schema.contains, schema.not].filter(isObject),
  ...[schema.allOf, schema.anyOf, schema.oneOf, schema.prefixItems].flatMap((members) => members ?? [])
]

/** Every schema of the document: components, parameters, request and response bodies, and everything under them. */
const everySchema = function*(): Generator<{ at: string; schema: JsonSchema }> {
  const visit = function*(schema: JsonSchema, at: string): Generator<{ at: string; schema: JsonSchema }> {
    yield { at, schema }
    for (const member of subschemas(schema)) yield* visit(member, at)
  }
  for (const [name, schema] of Object.entries(document.components.schemas)) yield* visit(schema, name)
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const at = `${method.toUpperCase()} ${path}`
      for (const parameter of operation.parameters ?? []) yield* visit(parameter.schema, `${at} ${parameter.name}`)
      for (const media of Object.values(operation.requestBody?.content ?? {})) yield* visit(media.schema, `${at} body`)
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        for (const media of Object.values(response.content ?? {})) yield* visit(media.schema, `${at} ${status}`)
      }
    }
  }
}

/** A schema with its reference (or single `allOf` wrapper without a type of its own) resolved, its own members winning. */
const resolved = (schema: JsonSchema): JsonSchema => {
  const { $ref, allOf, ...rest } = schema
  if ($ref !== undefined) return { ...resolved(document.components.schemas[$ref.slice(REF.length)]), ...rest, ...(allOf === undefined ? {} : { allOf }) }
  const [only] = allOf ?? []
  if (allOf?.length === 1 && only !== undefined && schema.type === undefined) return { ...resolved(only), ...rest }
  return schema
}

/** Every string of every request (parameters and JSON bodies), with where it is. */
const requestStrings = function*(): Generator<{ at: string; schema: JsonSchema }> {
  const visit = function*(schema: JsonSchema, at: string): Generator<{ at: string; schema: JsonSchema }> {
    const own = resolved(schema)
    if (own.type === "string" && !("enum" in own) && !("const" in own)) yield { at, schema: own }
    for (const [key, member] of Object.entries(own.properties ?? {})) yield* visit(member, `${at}.${key}`)
    for (const member of [own.items, own.additionalProperties].filter(isObject)) yield* visit(member, `${at}[]`)
    for (const member of [...(own.anyOf ?? []), ...(own.oneOf ?? [])]) yield* visit(member, at)
  }
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const at = `${operation.operationId} (${method.toUpperCase()} ${path})`
      for (const parameter of operation.parameters ?? []) yield* visit(parameter.schema, `${at} ${parameter.in} ${parameter.name}`)
      const body = operation.requestBody?.content?.["application/json"]?.schema
      if (body !== undefined) yield* visit(body, `${at} body`)
    }
  }
}

/** Formats whose grammar has no NUL. */
const formatsWithoutNul = new Set(["date-time", "email", "hostname", "uri"])

const operation = (operationId: string): OpenApi.Operation => {
  for (const item of Object.values(document.paths)) {
    for (const candidate of Object.values(item)) if (candidate.operationId === operationId) return candidate
  }
  throw new Error(`no operation ${operationId}`)
}

/** The schema of an operation's JSON body. */
const jsonBody = (operationId: string): JsonSchema => {
  const schema = operation(operationId).requestBody?.content?.["application/json"]?.schema
  if (schema === undefined) throw new Error(`${operationId} takes no JSON body`)
  return schema
}

/** A member of an object schema. */
const member = (schema: JsonSchema, name: string): JsonSchema => {
  const found = schema.properties?.[name]
  if (found === undefined) throw new Error(`no member ${name} in ${JSON.stringify(schema).slice(0, 200)}`)
  return found
}

describe("the document's hygiene", () => {
  it("names its servers, its contact and its licence", () => {
    expect(document.servers).toEqual([expect.objectContaining({ url: "/" })])
    // A server that knows its public URL names it.
    expect(openApiDocument("1.0.0", "https://cp.example/base/").servers).toEqual([expect.objectContaining({ url: "https://cp.example/base" })])
    expect(document.info.contact).toEqual(expect.objectContaining({ name: expect.any(String) }))
    expect(document.info.license).toEqual({ name: "Apache-2.0", url: expect.stringMatching(/^https:/) })
  })

  it("carries no generated titles (`maxLength(4096)`, `int`, `Trim`) and no keyword ids (`/schemas/unknown`)", () => {
    const schemas = [...everySchema()]
    expect(schemas.length).toBeGreaterThan(1000)
    expect(schemas.filter(({ schema }) => typeof schema.title === "string").map(({ at, schema }) => `${at}: ${schema.title}`)).toEqual([])
    expect(schemas.filter(({ schema }) => typeof schema.$id === "string").map(({ at, schema }) => `${at}: ${schema.$id}`)).toEqual([])
    // Members named `title` are not titles: they stay.
    expect(document.components.schemas.ConfigObject.properties).toHaveProperty("title")
  })

  it("gives every array its items, and every object an object schema (no `{}` that means any value)", () => {
    const schemas = [...everySchema()]
    expect(schemas.filter(({ schema }) => schema.type === "array" && !isObject(schema.items)).map(({ at }) => at)).toEqual([])
    expect(member(resolved(document.components.schemas.PluginManifest), "setup")).toEqual({
      type: "object",
      properties: {},
      additionalProperties: false,
      description: expect.any(String)
    })
  })

  it("writes every pattern as an ECMA-262 regular expression with the `u` flag", () => {
    const invalid = [...everySchema()].flatMap(({ at, schema }) => {
      if (typeof schema.pattern !== "string") return []
      try {
        new RegExp(schema.pattern, "u")
        return []
      } catch (error) {
        return [`${at}: ${schema.pattern}: ${String(error)}`]
      }
    })
    expect(invalid).toEqual([])
  })

  it("states the NUL rule on every string of every request, and on no response", () => {
    const strings = [...requestStrings()]
    expect(strings.length).toBeGreaterThan(200)
    const silent = strings.filter(({ schema }) => {
      const patterns = [schema.pattern, ...(schema.allOf ?? []).map((each) => each.pattern)]
      return !formatsWithoutNul.has(schema.format ?? "") && !patterns.some((pattern) => typeof pattern === "string" && excludesNul(pattern))
    })
    expect(silent.map(({ at }) => at)).toEqual([])
    // The cursor, a component lists answer too, gets the rule where requests refer to it, not in the component.
    expect(document.components.schemas.Cursor.pattern).toBeUndefined()
    expect((operation("teams.list").parameters ?? []).find((parameter) => parameter.name === "cursor")?.schema.pattern).toBe(NO_NUL_PATTERN)
    // A pattern of its own that excludes NUL (the URL rule's) stands alone: no second pattern beside it.
    const logoUrl = member(resolved(jsonBody("marketplaces.create")), "logoUrl")
    expect(logoUrl.pattern).toContain("https://")
    expect(excludesNul(logoUrl.pattern ?? "")).toBe(true)
    expect(logoUrl.allOf).toBeUndefined()
  })

  it("tells which patterns exclude NUL", () => {
    for (const pattern of [NO_NUL_PATTERN, "^[a-z][a-z0-9_-]{0,31}$", "^[\\x21-\\x7e]+$", "^(?![-/])(?!.*\\.\\.)[^\\u0000-\\u001f]+$", "^om_[0-7]{25}$"]) {
      expect([pattern, excludesNul(pattern)]).toEqual([pattern, true])
    }
    for (const pattern of ["^(https://[^\\s/?#]+\\S*|/(?!/)\\S*)$", "^.*$", "^[^/]+$", "^a\\u0000b$", "^[\\s\\S]*$", "^(a)\\1$", "^[a"]) {
      expect([pattern, excludesNul(pattern)]).toEqual([pattern, false])
    }
  })

  it("says which PATCH bodies need a member (`minProperties`)", () => {
    for (const id of ["plugins.update", "marketplaces.update", "workers.update", "teams.update", "mcpConnections.update"]) {
      const body = resolved(jsonBody(id))
      expect([id, body.minProperties]).toEqual([id, 1])
    }
  })

  it("tells request unions apart by their discriminator", () => {
    const unions = Object.fromEntries(
      ["mcpConnections.create", "connectorAccounts.create", "sso.createConnection"].map((id) => {
        const body = jsonBody(id)
        return [id, { propertyName: body.discriminator?.propertyName, values: Object.keys(body.discriminator?.mapping ?? {}).sort() }]
      })
    )
    expect(unions).toEqual({
      "mcpConnections.create": { propertyName: "authType", values: ["apikey", "none", "oauth"] },
      "connectorAccounts.create": { propertyName: "kind", values: ["app_installation", "token"] },
      "sso.createConnection": { propertyName: "kind", values: ["oidc", "saml"] }
    })
  })

  it("requires the OAuth callbacks' `state`, as the server does", () => {
    for (const id of ["mcpAuthorization.callback", "suiteConnections.callback"]) {
      const parameters = Object.fromEntries((operation(id).parameters ?? []).map((parameter) => [parameter.name, parameter.required === true]))
      expect([id, parameters]).toEqual([id, { code: false, state: true, error: false, error_description: false, iss: false }])
    }
  })

  it("passes Redocly's recommended rules: no errors, and no warnings but 4XX responses of operations without input", async () => {
    const config = await createConfig({ extends: ["recommended"] })
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: "openapi.json", config })
    const reported = problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`)
    expect(reported.filter((problem) => !problem.startsWith("warn operation-4xx-response"))).toEqual([])
    const withoutInput = operations.filter((operation) => !operation.takesInput).length
    expect(reported.length).toBeLessThanOrEqual(withoutInput)
  })
})

// --- What the tools found refused -------------------------------------------------------------------------------

describe("values the document calls valid, which the server once refused", () => {
  const matches = (schemaName: string, value: string) => new RegExp(document.components.schemas[schemaName].pattern ?? "", "u").test(value)

  it("signs up `admin@localhost`: an account's host may be one label", async () => {
    expect(matches("Email", "admin@localhost")).toBe(true)
    const response = await Http.request(server.url, "POST", "/v1/auth/sign-up", {
      body: { email: "admin@localhost", password: "correct horse battery", name: "Admin" }
    })
    expect(response.status).toBe(201)
    expect(Http.expectStatus<typeof AuthResult.Encoded>("sign-up", response, 201).user.email).toBe("admin@localhost")
    // IP literals are not hosts of an account, in the document and on the server alike.
    expect(matches("Email", "admin@127.0.0.1")).toBe(false)
    const literal = await Http.request(server.url, "POST", "/v1/auth/sign-up", {
      body: { email: "admin@127.0.0.1", password: "correct horse battery", name: "Admin" }
    })
    expect([literal.status, invalid(literal).details]).toEqual([400, [{ path: ["email"], message: "must be an email address" }]])
    // Mail recipients keep the spec's rule (a final label of 2 or more letters), which the document states too.
    expect(matches("MailAddress", "admin@localhost")).toBe(false)
    expect(matches("MailAddress", "ada@example.com")).toBe(true)
  })

  it("takes a two-label SSO domain and refuses a top-level domain alone, as the document says", async () => {
    expect(matches("SsoDomain", "com")).toBe(false)
    expect(matches("SsoDomain", "example.com")).toBe(true)
    const owner = await Http.owner(server.url, "Domains")
    const put = (domain: string) =>
      Http.request(server.url, "POST", "/v1/sso/connections", {
        token: owner.token,
        body: { kind: "oidc", name: "IdP", domains: [domain], oidc: { issuer: "https://idp.example", clientId: "orgplane", clientSecret: "secret" } }
      })
    const tld = await put("com")
    expect([tld.status, invalid(tld).details.map((detail) => detail.path)]).toEqual([400, [["domains", 0]]])
    // Decoded: what follows is the plan's check (SSO is an enterprise feature), not a refusal of the domain.
    const domain = await put("example.com")
    expect(domain.status).not.toBe(400)
  })

  it("refuses `{}` on PATCH of plugins, marketplaces and workers, and takes one member", async () => {
    const owner = await Http.owner(server.url, "Patches")
    const { marketplaces, plugins, workers } = calls(server.url)
    const plugin = ok(await plugins.create({ token: owner.token, payload: { name: "Tools" } }), 201).item
    const marketplace = ok(await marketplaces.create({ token: owner.token, payload: { name: "Shelf" } }), 201).item
    const worker = ok(await workers.register({ token: owner.token, payload: { name: "Builder", destination: "local" } }), 201).worker
    for (const path of [`/v1/plugins/${plugin.id}`, `/v1/marketplaces/${marketplace.id}`, `/v1/workers/${worker.id}`]) {
      const empty = await Http.request(server.url, "PATCH", path, { token: owner.token, body: {} })
      expect([path, empty.status, empty.body]).toEqual([path, 400, expect.objectContaining({ error: "invalid_request" })])
      const named = await Http.request(server.url, "PATCH", path, { token: owner.token, body: { name: "Renamed" } })
      expect([path, named.status]).toEqual([path, 200])
    }
  })

  it("answers a callback without `state` with 400 on `state`, and an error redirect with its own code", async () => {
    for (const path of ["/v1/mcp-connections/oauth/callback", "/v1/capabilities/oauth/callback"]) {
      const missing = await Http.request(server.url, "GET", `${path}?code=abc`)
      expect([path, missing.status, invalid(missing).details]).toEqual([
        path,
        400,
        [{ path: ["state"], message: "The callback carries no `state`: start again with connect." }]
      ])
      // An error redirect carries the state back (RFC 6749 §4.1.2.1): it reaches the state's own checks.
      const refused = await Http.request(server.url, "GET", `${path}?state=unknown&error=access_denied&error_description=No`)
      expect([path, refused.status, invalid(refused).details[0]?.code]).toEqual([path, 400, "oauth_state_invalid"])
    }
  })
})


/**
 * OpenApiLinks.ts: the OpenAPI links from create operations to the operations that take the id they create, as the
 * saved document shows them, and checked on the generated document.
 */
import { describe, expect, it } from "@effect/vitest"
import { openApiDocument } from "../src/index.js"
import * as OpenApiLinks from "../src/OpenApiLinks.js"
import { savedDocument } from "./support/SavedDocument.js"

/** The document as it is before `addLinks`: every response's `links` removed. */
const withoutLinks = (): Record<string, unknown> =>
  JSON.parse(JSON.stringify(savedDocument), (key, value: unknown) => key === "links" ? undefined : value)

describe("OpenApiLinks", () => {
  it("links the saved document's operations as it shows them", () => {
    const document = withoutLinks()
    expect(JSON.stringify(document)).not.toContain("\"links\"")
    expect(JSON.stringify(savedDocument)).toContain("\"links\"")
    expect(OpenApiLinks.addLinks(document)).toEqual(savedDocument)
  })

  it("reads the operations, their path's ids and the ids an answer creates", () => {
    const operations = OpenApiLinks.operationsOf(savedDocument)
    expect(operations.length).toBeGreaterThan(200)
    expect(operations.find(({ id }) => id === "teams.get")).toMatchObject({ path: "/v1/teams/{teamId}", operation: { operationId: "teams.get" } })
    const team = { $ref: "#/components/schemas/TeamResponse" }
    expect(OpenApiLinks.createdIds(savedDocument, team)).toEqual([{ pointer: "/team/id", prefix: "tem" }])
  })
})

// The links of the generated document: each names an operation that exists, gives every path parameter it takes,
// and takes each from where the created id (or the create's own path parameter) really is, with the right TypeID
// prefix; every create operation whose answer carries an id that other operations take links to them. (The
// document's JSON read through `get`.)

/** The member of `value` at `keys`, if any. */
const get = (value: unknown, ...keys: ReadonlyArray<string>): unknown =>
  keys.reduce<unknown>((node, key) => (typeof node === "object" && node !== null ? Reflect.get(node, key) : undefined), value)
const entries = (value: unknown): Array<[string, unknown]> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? Object.entries(value) : []
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

const document: unknown = JSON.parse(JSON.stringify(openApiDocument()))

const resolve = (schema: unknown): unknown => {
  if (schema === undefined) return undefined
  const ref = get(schema, "$ref")
  if (typeof ref === "string") return resolve(get(document, "components", "schemas", ref.replace("#/components/schemas/", "")))
  const allOf = get(schema, "allOf")
  if (Array.isArray(allOf) && allOf.length === 1) return resolve(allOf[0])
  return schema
}

const operations = entries(get(document, "paths")).flatMap(([path, item]) =>
  entries(item).map(([method, operation]) => ({ path, method, operation, id: String(get(operation, "operationId")) }))
)
const byId = new Map(operations.map((entry) => [entry.id, entry]))

/**
 * The TypeID prefix a parameter takes: from its schema's pattern, else from its documented example (the worker ids
 * of the spec are plain strings, but their example is a worker id).
 */
const prefixOf = (parameter: unknown): string | undefined => {
  const pattern = get(resolve(get(parameter, "schema")), "pattern")
  const fromPattern = typeof pattern === "string" ? /^\^([a-z]+)_\[0-7\]/.exec(pattern)?.[1] : undefined
  const example = get(entries(get(parameter, "examples"))[0]?.[1], "value")
  return fromPattern ?? (typeof example === "string" ? /^([a-z]+)_[0-7][0-9a-hjkmnp-tv-z]{25}$/.exec(example)?.[1] : undefined)
}

const pathParameters = (operation: unknown): Array<unknown> => list(get(operation, "parameters")).filter((p) => get(p, "in") === "path")
const nameOf = (parameter: unknown) => String(get(parameter, "name"))

/** The schema a JSON pointer (`/team/id`) names inside a response body schema. */
const at = (schema: unknown, pointer: string): unknown =>
  pointer.split("/").slice(1).map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce<unknown>((node, token) => resolve(get(resolve(node), "properties", token)), schema)

const creates = operations.filter(({ operation }) => get(operation, "responses", "201", "content", "application/json") !== undefined)

describe("the OpenAPI links", () => {
  it("name existing operations, give each of their path parameters, from where the id is", () => {
    const offenders: Array<string> = []
    let links = 0
    for (const create of creates) {
      const response = get(create.operation, "responses", "201")
      const body = get(response, "content", "application/json", "schema")
      for (const [name, link] of entries(get(response, "links"))) {
        links++
        const where = `${create.id} → ${name}`
        const target = byId.get(String(get(link, "operationId")))
        if (target === undefined) {
          offenders.push(`${where}: no operation ${String(get(link, "operationId"))}`)
          continue
        }
        const takes = pathParameters(target.operation)
        const given = Object.keys(get(link, "parameters") ?? {})
        if (JSON.stringify(given.sort()) !== JSON.stringify(takes.map(nameOf).sort())) {
          offenders.push(`${where}: gives ${given.join(", ")}; the operation takes ${takes.map(nameOf).join(", ")}`)
          continue
        }
        for (const parameter of takes) {
          const value = String(get(link, "parameters", nameOf(parameter)))
          const expected = prefixOf(parameter)
          const fromBody = /^\$response\.body#(\/.*)$/.exec(value)?.[1]
          const fromPath = /^\$request\.path\.(\w+)$/.exec(value)?.[1]
          const source = fromBody !== undefined
            ? at(body, fromBody)
            : fromPath !== undefined
            ? pathParameters(create.operation).find((p) => nameOf(p) === fromPath)
            : undefined
          const actual = source === undefined ? undefined : fromBody !== undefined ? prefixOf({ schema: source }) : prefixOf(source)
          if (expected === undefined || actual !== expected) {
            offenders.push(`${where}: ${nameOf(parameter)} = ${value} is ${actual ?? "nothing"}, the parameter takes ${expected ?? "no id"}`)
          }
        }
      }
    }
    expect(offenders).toEqual([])
    expect(links).toBeGreaterThan(50)
  })

  it("lead from every create operation whose answer carries an id to the operations that take it", () => {
    const takenPrefixes = new Set(operations.flatMap(({ operation }) => pathParameters(operation).map(prefixOf)))
    const unlinked = creates.filter(({ operation }) => {
      const body = resolve(get(operation, "responses", "201", "content", "application/json", "schema"))
      // The resource's own `id`, or its members' (`{team: {id}}`, `{ok, item: {id}}`).
      const ids = [body, ...entries(get(body, "properties")).map(([, member]) => resolve(member))]
        .map((object) => prefixOf({ schema: get(object, "properties", "id") ?? {} }))
        .filter((prefix) => prefix !== undefined && takenPrefixes.has(prefix))
      return ids.length > 0 && Object.keys(get(operation, "responses", "201", "links") ?? {}).length === 0
    })
    expect(unlinked.map(({ id }) => id)).toEqual([])
    // What the others create no operation takes by id: a plugin's or marketplace's entry, a runtime instance,
    // an SSO sign-in's intent (it comes back through the IdP's redirect, in `state`), a password reset link (a token
    // that goes into a request body, never a path).
    expect(creates.filter(({ operation }) => get(operation, "responses", "201", "links") === undefined).map(({ id }) => id).sort()).toEqual([
      "admin.issuePasswordReset",
      "marketplaces.addPlugin",
      "plugins.addConfigObject",
      "recovery.issueMemberPasswordReset",
      "ssoSignIn.start",
      "workerRuntime.registerInstance"
    ])
  })

  it("chain a team from its creation to the operations on it", () => {
    const links = get(byId.get("teams.create")?.operation, "responses", "201", "links")
    expect(Object.fromEntries(entries(links).map(([name, link]) => [name, get(link, "parameters")]))).toEqual({
      "teams.get": { teamId: "$response.body#/team/id" },
      "teams.update": { teamId: "$response.body#/team/id" },
      "teams.delete": { teamId: "$response.body#/team/id" },
      "teams.addMembers": { teamId: "$response.body#/team/id" }
    })
    const grant = get(byId.get("plugins.pluginGrant")?.operation, "responses", "201", "links")
    expect(get(grant, "plugins.pluginRevoke", "parameters")).toEqual({ pluginId: "$request.path.pluginId", grantId: "$response.body#/item/id" })
  })
})

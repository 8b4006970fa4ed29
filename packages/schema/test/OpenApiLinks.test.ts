/**
 * The OpenAPI links from create operations: each names an operation that exists, gives every path parameter it takes,
 * and takes each from where the created id (or the create's own path parameter) really is, with the right TypeID
 * prefix; every create operation whose answer carries an id that other operations take links to them.
 */
import { openApiDocument } from "@orgplane/schema"
import { describe, expect, it } from "vitest"

type Json = Record<string, any>

const document: Json = openApiDocument()

const resolve = (schema: Json | undefined): Json | undefined => {
  if (schema === undefined) return undefined
  if (typeof schema.$ref === "string") return resolve(document.components.schemas[schema.$ref.replace("#/components/schemas/", "")])
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return resolve(schema.allOf[0])
  return schema
}

const operations = Object.entries<Json>(document.paths).flatMap(([path, item]) =>
  Object.entries<Json>(item).map(([method, operation]) => ({ path, method, operation, id: operation.operationId as string }))
)
const byId = new Map(operations.map((entry) => [entry.id, entry]))

/**
 * The TypeID prefix a parameter takes: from its schema's pattern, else from its documented example (the worker ids
 * of the spec are plain strings, but their example is a worker id).
 */
const prefixOf = (parameter: Json): string | undefined => {
  const pattern = resolve(parameter.schema)?.pattern
  const fromPattern = typeof pattern === "string" ? /^\^([a-z]+)_\[0-7\]/.exec(pattern)?.[1] : undefined
  const example = Object.values<Json>(parameter.examples ?? {})[0]?.value
  return fromPattern ?? (typeof example === "string" ? /^([a-z]+)_[0-7][0-9a-hjkmnp-tv-z]{25}$/.exec(example)?.[1] : undefined)
}

const pathParameters = (operation: Json): Array<Json> => (operation.parameters ?? []).filter((p: Json) => p.in === "path")

/** The schema a JSON pointer (`/team/id`) names inside a response body schema. */
const at = (schema: Json | undefined, pointer: string): Json | undefined =>
  pointer.split("/").slice(1).map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce<Json | undefined>((node, token) => resolve(resolve(node)?.properties?.[token]), schema)

const creates = operations.filter(({ operation }) => operation.responses?.["201"]?.content?.["application/json"] !== undefined)

describe("the OpenAPI links", () => {
  it("name existing operations, give each of their path parameters, from where the id is", () => {
    const offenders: Array<string> = []
    let links = 0
    for (const create of creates) {
      const response = create.operation.responses["201"]
      const body = response.content["application/json"].schema
      for (const [name, link] of Object.entries<Json>(response.links ?? {})) {
        links++
        const where = `${create.id} → ${name}`
        const target = byId.get(link.operationId)
        if (target === undefined) {
          offenders.push(`${where}: no operation ${link.operationId}`)
          continue
        }
        const takes = pathParameters(target.operation)
        const given = Object.keys(link.parameters ?? {})
        if (JSON.stringify(given.sort()) !== JSON.stringify(takes.map((p) => p.name).sort())) {
          offenders.push(`${where}: gives ${given.join(", ")}; the operation takes ${takes.map((p) => p.name).join(", ")}`)
          continue
        }
        for (const parameter of takes) {
          const value: string = link.parameters[parameter.name]
          const expected = prefixOf(parameter)
          const fromBody = /^\$response\.body#(\/.*)$/.exec(value)?.[1]
          const fromPath = /^\$request\.path\.(\w+)$/.exec(value)?.[1]
          const source = fromBody !== undefined
            ? at(body, fromBody)
            : fromPath !== undefined
            ? pathParameters(create.operation).find((p) => p.name === fromPath)
            : undefined
          const actual = source === undefined ? undefined : fromBody !== undefined ? prefixOf({ schema: source }) : prefixOf(source)
          if (expected === undefined || actual !== expected) {
            offenders.push(`${where}: ${parameter.name} = ${value} is ${actual ?? "nothing"}, the parameter takes ${expected ?? "no id"}`)
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
      const body = resolve(operation.responses["201"].content["application/json"].schema)
      // The resource's own `id`, or its members' (`{team: {id}}`, `{ok, item: {id}}`).
      const ids = [body, ...Object.values<Json>(body?.properties ?? {}).map(resolve)]
        .map((object) => prefixOf({ schema: object?.properties?.id ?? {} }))
        .filter((prefix) => prefix !== undefined && takenPrefixes.has(prefix))
      return ids.length > 0 && Object.keys(operation.responses["201"].links ?? {}).length === 0
    })
    expect(unlinked.map(({ id }) => id)).toEqual([])
    // What the others create no operation takes by id: a plugin's or marketplace's entry, a runtime instance,
    // an SSO sign-in's intent (it comes back through the IdP's redirect, in `state`), a password reset link (a token
    // that goes into a request body, never a path).
    expect(creates.filter(({ operation }) => operation.responses["201"].links === undefined).map(({ id }) => id).sort()).toEqual([
      "admin.issuePasswordReset",
      "marketplaces.addPlugin",
      "plugins.addConfigObject",
      "recovery.issueMemberPasswordReset",
      "ssoSignIn.start",
      "workerRuntime.registerInstance"
    ])
  })

  it("chain a team from its creation to the operations on it", () => {
    const links = byId.get("teams.create")!.operation.responses["201"].links
    expect(Object.fromEntries(Object.entries<Json>(links).map(([name, link]) => [name, link.parameters]))).toEqual({
      "teams.get": { teamId: "$response.body#/team/id" },
      "teams.update": { teamId: "$response.body#/team/id" },
      "teams.delete": { teamId: "$response.body#/team/id" },
      "teams.addMembers": { teamId: "$response.body#/team/id" }
    })
    const grant = byId.get("plugins.pluginGrant")!.operation.responses["201"].links
    expect(grant["plugins.pluginRevoke"].parameters).toEqual({ pluginId: "$request.path.pluginId", grantId: "$response.body#/item/id" })
  })
})

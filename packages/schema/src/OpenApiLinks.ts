/**
 * OpenAPI links (Link Objects) from each create operation to the operations that take what it created, read off the
 * document itself, so that stateful tools (Schemathesis, clients that follow links) can chain them: a `201` response
 * whose body carries a resource id links to every operation with a path parameter of that id's TypeID prefix.
 */

/** A JSON object of the document, read member by member (the document is JSON: nothing here is typed further). */
type Document = Record<string, unknown>

const isDocument = (value: unknown): value is Document => typeof value === "object" && value !== null && !Array.isArray(value)

/** Member `key` of `value` when it is an object. */
const objectAt = (value: unknown, key: string): Document | undefined => {
  const member = isDocument(value) ? value[key] : undefined
  return isDocument(member) ? member : undefined
}

/** Member `key` of `value` when it is a string. */
const stringAt = (value: unknown, key: string): string | undefined => {
  const member = isDocument(value) ? value[key] : undefined
  return typeof member === "string" ? member : undefined
}

/** Member `key` of `value` when it is an array. */
const arrayAt = (value: unknown, key: string): ReadonlyArray<unknown> => {
  const member = isDocument(value) ? value[key] : undefined
  return Array.isArray(member) ? member : []
}

interface Operation {
  readonly id: string | undefined
  readonly path: string
  readonly operation: Document
  /** Path parameter name → the TypeID prefix it takes (undefined: not an id). */
  readonly pathIds: ReadonlyMap<string, string | undefined>
}

/**
 * Path parameters that take ids without saying so in their schema: the spec's worker ids are plain strings (any
 * string is accepted and a non-worker id answers 404), so the document cannot show their prefix.
 */
const untypedIds: ReadonlyArray<{ readonly path: RegExp; readonly parameter: string; readonly prefix: string }> = [
  { path: /^\/v1\/workers\/\{id\}/, parameter: "id", prefix: "wrk" }
]

const TYPE_ID = /^\^([a-z]+)_\[0-7\]/

/** A schema with its `$ref`s and single-member `allOf` wrappers resolved. */
const resolver = (spec: Document) => {
  const resolve = (schema: unknown): Document | undefined => {
    if (!isDocument(schema)) return undefined
    const ref = stringAt(schema, "$ref")
    if (ref !== undefined) return resolve(objectAt(objectAt(spec, "components"), "schemas")?.[ref.replace("#/components/schemas/", "")])
    const allOf = arrayAt(schema, "allOf")
    if (allOf.length === 1) return resolve(allOf[0])
    return schema
  }
  return resolve
}

/** The TypeID prefix a string schema takes, from its pattern (`^tem_[0-7]…`). */
const prefixOf = (schema: Document | undefined): string | undefined => {
  const pattern = stringAt(schema, "pattern")
  return pattern === undefined ? undefined : TYPE_ID.exec(pattern)?.[1]
}

/** Every operation of the document with its path parameters' id prefixes. */
export const operationsOf = (spec: Document): Array<Operation> => {
  const resolve = resolver(spec)
  return Object.entries(objectAt(spec, "paths") ?? {}).flatMap(([path, item]) =>
    Object.values(isDocument(item) ? item : {}).filter(isDocument).map((operation) => ({
      id: stringAt(operation, "operationId"),
      path,
      operation,
      pathIds: new Map(
        arrayAt(operation, "parameters").filter((p) => stringAt(p, "in") === "path").flatMap((p) => {
          const name = stringAt(p, "name")
          if (name === undefined) return []
          const prefix = prefixOf(resolve(objectAt(p, "schema"))) ??
            untypedIds.find((entry) => entry.path.test(path) && entry.parameter === name)?.prefix
          return [[name, prefix] as const]
        })
      )
    }))
  )
}

/**
 * The resource ids a response body carries, as JSON pointers with their prefix: the `id` of the body itself or of one
 * of its members (`/id`, `/team/id`, `/item/id`), not of lists or deeper records (those are references, not what was
 * created).
 */
export const createdIds = (spec: Document, schema: Document | undefined): Array<{ readonly pointer: string; readonly prefix: string }> => {
  const resolve = resolver(spec)
  const own = (object: Document | undefined, at: string) => {
    const prefix = prefixOf(resolve(objectAt(objectAt(object, "properties"), "id")))
    return prefix === undefined ? [] : [{ pointer: `${at}/id`, prefix }]
  }
  const body = resolve(schema)
  if (stringAt(body, "type") !== "object") return []
  return [
    ...own(body, ""),
    ...Object.entries(objectAt(body, "properties") ?? {}).flatMap(([name, member]) => {
      const resolved = resolve(member)
      return stringAt(resolved, "type") === "object" ? own(resolved, `/${name.replace(/~/g, "~0").replace(/\//g, "~1")}`) : []
    })
  ]
}

/** An operation that takes no credentials (`security: []`). */
const isPublic = (operation: Operation) => {
  const security = operation.operation["security"]
  return Array.isArray(security) && security.length === 0
}

/**
 * Adds `links` to the `201` response of every operation that creates something: for each id it carries, a link to
 * every other operation whose path takes an id of that prefix, with that parameter from the response body and the
 * target's other path parameters from the create's own path (same name) or the body (same prefix). An operation
 * whose parameters cannot all be given that way is not linked, nor is a public operation from one that needs
 * credentials: a third party calls it (an IdP posting to a SAML connection's ACS), not the client that created.
 */
export const addLinks = (spec: Document): Document => {
  const operations = operationsOf(spec)
  for (const create of operations) {
    const response = objectAt(objectAt(create.operation, "responses"), "201")
    const created = createdIds(spec, objectAt(objectAt(objectAt(response, "content"), "application/json"), "schema"))
    if (response === undefined || created.length === 0) continue
    const links: Record<string, Document> = {}
    for (const target of operations) {
      if (target === create || target.id === undefined || (isPublic(target) && !isPublic(create))) continue
      for (const { pointer, prefix } of created) {
        if (![...target.pathIds.values()].includes(prefix)) continue
        const parameters: Record<string, string> = {}
        for (const [name, takes] of target.pathIds) {
          if (takes === prefix) parameters[name] = `$response.body#${pointer}`
          else if (create.pathIds.has(name) && create.pathIds.get(name) === takes) parameters[name] = `$request.path.${name}`
          else {
            const other = created.find((id) => id.prefix === takes && takes !== undefined)
            if (other !== undefined) parameters[name] = `$response.body#${other.pointer}`
          }
        }
        if (Object.keys(parameters).length < target.pathIds.size || links[target.id] !== undefined) continue
        const summary = stringAt(target.operation, "summary")
        links[target.id] = { operationId: target.id, parameters, ...(summary === undefined ? {} : { description: summary }) }
      }
    }
    if (Object.keys(links).length > 0) response["links"] = links
  }
  return spec
}

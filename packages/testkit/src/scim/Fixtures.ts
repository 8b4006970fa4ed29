/**
 * Resources a tag module creates to test against, and their removal when it is done (best effort: a failed cleanup
 * never hides the check's own answer). A `User` to reference (a group's member, a manager) is made on demand.
 */
import { type Context, expectStatus, fail, isObject, type ScimObject } from "./Check.js"
import type { ScimResponse } from "./Client.js"
import { payload, type References, type ResourceTypeDoc } from "./Schema.js"

export interface Created {
  readonly type: ResourceTypeDoc
  readonly sent: ScimObject
  /** The resource as answered: a JSON object with a non-empty string id. */
  readonly resource: ScimObject & { readonly id: string }
  readonly response: ScimResponse
}

export interface Fixtures {
  /** POSTs a generated payload (with `overrides` laid over it); fails the check unless 201 with an id. */
  readonly create: (type: ResourceTypeDoc, overrides?: Record<string, unknown>) => Promise<Created>
  /** Ids of resources the generator may reference, creating a `User` once when the server has that type. */
  readonly references: () => Promise<References>
  /** Like `references`, with a new `User` each call: for a value that must differ from the one already set. */
  readonly freshReferences: () => Promise<References>
  readonly cleanup: () => Promise<void>
}

export const typeNamed = (context: Context, name: string) => context.discovery.resourceTypes.find((t) => t.name === name)

export const make = (context: Context): Fixtures => {
  const created: Array<{ endpoint: string; id: string }> = []
  let references: References | undefined
  const create = async (type: ResourceTypeDoc, overrides: Record<string, unknown> = {}, refs?: References): Promise<Created> => {
    const sent = { ...payload(type, context.discovery.schemas, refs ?? (await fixtures.references())), ...overrides }
    const response = await context.client.post(type.endpoint, sent)
    const body = expectStatus(response, 201)
    if (!isObject(body) || typeof body.id !== "string" || body.id === "") return fail(`POST ${type.endpoint} must answer the resource with a string id`, response)
    const resource = { ...body, id: body.id }
    created.push({ endpoint: type.endpoint, id: resource.id })
    return { type, sent, resource, response }
  }
  const fixtures: Fixtures = {
    create: (type, overrides) => create(type, overrides),
    references: async () => {
      if (references !== undefined) return references
      const user = typeNamed(context, "User")
      references = user === undefined ? {} : { User: (await create(user, {}, {})).resource.id }
      return references
    },
    freshReferences: async () => {
      const user = typeNamed(context, "User")
      return user === undefined ? {} : { User: (await create(user, {}, {})).resource.id }
    },
    cleanup: async () => {
      while (created.length > 0) {
        const { endpoint, id } = created.pop()!
        await context.client.del(`${endpoint}/${encodeURIComponent(id)}`).catch(() => undefined)
      }
    }
  }
  return fixtures
}

/** Runs `body` with fresh fixtures and removes them afterwards, whatever `body` answers. */
export const using = async <A>(context: Context, body: (fixtures: Fixtures) => Promise<A>): Promise<A> => {
  const fixtures = make(context)
  try {
    return await body(fixtures)
  } finally {
    await fixtures.cleanup()
  }
}

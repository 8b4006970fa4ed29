/**
 * Tag `projection` (RFC 7644 §3.4.2.5): `attributes` returns only the named attributes plus those returned
 * "always"; `excludedAttributes` drops the named ones but never an "always" one (id); on GET by id and on lists.
 */
import { type Check, check, type Context, expectListResponse, expectObject, type ScimObject, skip } from "./Check.js"
import { type Created, using } from "./Fixtures.js"
import { attributesOf, type Located, readable, returned, type ResourceTypeDoc, valueAt } from "./Schema.js"

/** Core attributes returned by default and set on `resource`: candidates to project on. */
const projectable = (context: Context, type: ResourceTypeDoc, resource: ScimObject): ReadonlyArray<Located> =>
  attributesOf(type, context.discovery.schemas).filter(
    (l) => l.urn === undefined && readable(l.attribute) && returned(l.attribute) === "default" && valueAt(resource, l) !== undefined
  )

const present = (resource: ScimObject, located: Located) => valueAt(resource, located) !== undefined

/** Only `kept` and the attributes returned always: every other default attribute must be absent. */
const expectOnly = (context: Context, type: ResourceTypeDoc, resource: ScimObject, kept: Located, what: string) => {
  check(typeof resource.id === "string", `${what}: id is returned always`)
  check(present(resource, kept), `${what}: ${kept.attribute.name} was asked for and is missing`)
  for (const other of attributesOf(type, context.discovery.schemas)) {
    if (other.attribute.name === kept.attribute.name || returned(other.attribute) === "always") continue
    check(!present(resource, other), `${what}: ${other.attribute.name} was not asked for but came back`)
  }
}

const expectExcluded = (resource: ScimObject, excluded: Located, kept: Located, what: string) => {
  check(typeof resource.id === "string", `${what}: id is returned always, even when excluded`)
  check(!present(resource, excluded), `${what}: ${excluded.attribute.name} was excluded but came back`)
  check(present(resource, kept), `${what}: ${kept.attribute.name} was not excluded but is missing`)
}

export const checks = (context: Context): ReadonlyArray<Check> =>
  context.discovery.resourceTypes.flatMap((type): ReadonlyArray<Check> => {
    const withTwo = (body: (resource: Created["resource"], first: Located, second: Located) => Promise<void>) => () =>
      using(context, async (fixtures) => {
        const { resource } = await fixtures.create(type)
        const candidates = projectable(context, type, resource)
        if (candidates.length < 2) return skip(`${type.name} has fewer than two default attributes set`)
        await body(resource, candidates[candidates.length - 1], candidates[0])
      })
    const one = (id: string) => `${type.endpoint}/${encodeURIComponent(id)}`
    return [
      {
        id: `projection.${type.name}.get.attributes`,
        description: `GET ${type.endpoint}/{id}?attributes=a: a, id, schemas and nothing else returned by default`,
        run: withTwo(async (resource, first) => {
          const read = expectObject(await context.client.get(`${one(resource.id)}?attributes=${first.attribute.name}`), 200)
          expectOnly(context, type, read, first, "get")
        })
      },
      {
        id: `projection.${type.name}.get.excludedAttributes`,
        description: `GET ${type.endpoint}/{id}?excludedAttributes=a,id: a dropped, id kept (returned always), the rest kept`,
        run: withTwo(async (resource, first, second) => {
          const read = expectObject(await context.client.get(`${one(resource.id)}?excludedAttributes=${first.attribute.name},id`), 200)
          expectExcluded(read, first, second, "get")
        })
      },
      {
        id: `projection.${type.name}.list.attributes`,
        description: `GET ${type.endpoint}?attributes=a: every listed resource has a, id and nothing else returned by default`,
        run: withTwo(async (resource, first) => {
          const { Resources } = expectListResponse(await context.client.get(`${type.endpoint}?attributes=${first.attribute.name}&count=50`))
          check(Resources.some((r) => r.id === resource.id), "list: the fixture must be on the first page of 50 (or the list is not a list)")
          for (const listed of Resources) {
            if (listed.id === resource.id) expectOnly(context, type, listed, first, "list")
            else check(typeof listed.id === "string", "list: id is returned always")
          }
        })
      },
      {
        id: `projection.${type.name}.list.excludedAttributes`,
        description: `GET ${type.endpoint}?excludedAttributes=a: no listed resource has a; each keeps its id`,
        run: withTwo(async (_resource, first) => {
          const { Resources } = expectListResponse(await context.client.get(`${type.endpoint}?excludedAttributes=${first.attribute.name}&count=50`))
          check(Resources.length > 0, "list: expected resources")
          for (const listed of Resources) {
            check(typeof listed.id === "string", "list: id is returned always")
            check(!present(listed, first), `list: ${first.attribute.name} was excluded but came back`)
          }
        })
      },
      {
        id: `projection.${type.name}.returnedRequest`,
        description: `attributes the schema returns only on request are absent from a plain GET and present when asked for`,
        run: () =>
          using(context, async (fixtures) => {
            const onRequest = attributesOf(type, context.discovery.schemas).filter((l) => l.urn === undefined && returned(l.attribute) === "request" && readable(l.attribute))
            if (onRequest.length === 0) return skip(`${type.name} has no attribute returned on request`)
            const { resource } = await fixtures.create(type)
            const plain = expectObject(await context.client.get(one(resource.id)), 200)
            for (const l of onRequest) check(!present(plain, l), `${l.attribute.name} is returned "request" but came back unasked`)
          })
      }
    ]
  })

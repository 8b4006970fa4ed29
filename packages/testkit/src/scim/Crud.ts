/**
 * Tag `crud`: for every advertised resource type, scim2-tester's object creation, query by id, query without id,
 * replacement and deletion (RFC 7644 §3.3–3.6), with payloads generated from the advertised schemas, so every
 * writable attribute must come back as sent; and a create with two `primary` values of a multi-valued attribute,
 * which is refused or stored with one at most (RFC 7643 §2.4).
 */
import { asArray, asObject, type Check, check, type Context, expectError, expectListResponse, expectObject, expectScimJson, expectStatus, fail, idOf, isObject, type ScimObject } from "./Check.js"
import { using } from "./Fixtures.js"
import { differences, generate, type Located, payload, pick, primaryAttributes, primaryValues, type ResourceTypeDoc, valueAt } from "./Schema.js"

const path = (type: ResourceTypeDoc, id: string) => `${type.endpoint}/${encodeURIComponent(id)}`

/** A resource's common attributes (RFC 7643 §3.1): id, schemas, meta with resourceType, created, lastModified, location. */
export const expectCommon = (type: ResourceTypeDoc, resource: unknown, what: string) => {
  check(isObject(resource) && typeof resource.id === "string" && resource.id !== "", `${what}: id must be a non-empty string`)
  const { id, schemas, meta: metaValue } = asObject(resource)
  check(Array.isArray(schemas) && schemas.includes(type.schema), `${what}: schemas must include ${type.schema}`)
  const meta = asObject(metaValue)
  check(isObject(metaValue) && meta.resourceType === type.name, `${what}: meta.resourceType must be ${type.name}, got ${String(meta.resourceType)}`)
  check(!Number.isNaN(Date.parse(String(meta.created))) && !Number.isNaN(Date.parse(String(meta.lastModified))), `${what}: meta.created and meta.lastModified must be dateTimes`)
  check(typeof meta.location === "string" && meta.location.endsWith(`${type.endpoint}/${String(id)}`), `${what}: meta.location must end with ${type.endpoint}/${String(id)}, got ${String(meta.location)}`)
}

const expectSame = (context: Context, type: ResourceTypeDoc, sent: ScimObject, resource: ScimObject, what: string) => {
  const found = differences(type, context.discovery.schemas, sent, resource)
  if (found.length > 0) fail(`${what}: ${found.join("; ")}`)
}

/** Attributes the schema says are never returned (say `password`) must not be. */
const expectNothingNeverReturned = (context: Context, type: ResourceTypeDoc, resource: ScimObject, what: string) => {
  for (const attribute of context.discovery.schemas.get(type.schema)?.attributes ?? []) {
    if (attribute.returned === "never") check(resource[attribute.name] === undefined, `${what}: ${attribute.name} is returned "never" but came back`)
  }
}

/** `body` with `value` as the located attribute's value (under its extension's URN when it has one). */
export const withValue = (body: ScimObject, located: Located, value: unknown): ScimObject =>
  located.urn === undefined
    ? { ...body, [located.attribute.name]: value }
    : { ...body, [located.urn]: { ...asObject(pick(body, located.urn)), [located.attribute.name]: value } }

/** POST with two values of `located` marked primary: refused with a SCIM 400, or stored with one primary at most. */
const twoPrimaries = (context: Context, type: ResourceTypeDoc, located: Located): Check => ({
  id: `crud.${type.name}.${located.attribute.name}.onePrimary`,
  description: `POST ${type.endpoint} with two ${located.attribute.name} marked primary → 400, or stored with one primary at most (RFC 7643 §2.4)`,
  run: () =>
    using(context, async (fixtures) => {
      const references = await fixtures.references()
      const values = [...asArray(generate(located.attribute, references)), ...asArray(generate(located.attribute, references))]
      const sent = withValue(payload(type, context.discovery.schemas, references), located, values.map((value) => ({ ...asObject(value), primary: true })))
      const response = await context.client.post(type.endpoint, sent)
      if (response.status === 400) return expectError(response, 400)
      const created = expectObject(response, 201)
      await context.client.del(path(type, idOf(created)))
      const primaries = primaryValues(valueAt(created, located))
      check(primaries.length <= 1, `created with ${primaries.length} ${located.attribute.name} marked primary`, response)
      return `stored, with ${primaries.length} primary`
    })
})

export const checks = (context: Context): ReadonlyArray<Check> =>
  context.discovery.resourceTypes.flatMap((type) => [
    {
      id: `crud.${type.name}.create`,
      description: `POST ${type.endpoint} with every writable attribute → 201, application/scim+json, Location, the attributes as sent`,
      run: () =>
        using(context, async (fixtures) => {
          const { sent, resource, response } = await fixtures.create(type)
          expectScimJson(response)
          expectCommon(type, resource, "created")
          check(response.headers.get("location") === asObject(resource.meta).location, "the Location header must be meta.location", response)
          expectSame(context, type, sent, resource, "created")
          expectNothingNeverReturned(context, type, resource, "created")
        })
    },
    {
      id: `crud.${type.name}.read`,
      description: `GET ${type.endpoint}/{id} answers the created resource with every attribute stored`,
      run: () =>
        using(context, async (fixtures) => {
          const { sent, resource } = await fixtures.create(type)
          const response = await context.client.get(path(type, resource.id))
          const read = expectObject(response, 200)
          expectScimJson(response)
          expectCommon(type, read, "read")
          check(read.id === resource.id, "read must answer the same id", response)
          expectSame(context, type, sent, read, "read")
          expectNothingNeverReturned(context, type, read, "read")
        })
    },
    {
      id: `crud.${type.name}.list`,
      description: `GET ${type.endpoint} (no id) answers a ListResponse holding the created resource`,
      run: () =>
        using(context, async (fixtures) => {
          const { resource } = await fixtures.create(type)
          for (let startIndex = 1; ; ) {
            const response = await context.client.get(`${type.endpoint}?startIndex=${startIndex}&count=100`)
            const page = expectListResponse(response)
            if (page.Resources.some((r) => r.id === resource.id)) return
            if (page.Resources.length === 0 || startIndex + page.Resources.length > page.totalResults) fail(`${resource.id} is not listed`, response)
            startIndex += page.Resources.length
          }
        })
    },
    {
      id: `crud.${type.name}.replace`,
      description: `PUT ${type.endpoint}/{id} with new values for every mutable attribute → 200 and the new values stored`,
      run: () =>
        using(context, async (fixtures) => {
          const { resource } = await fixtures.create(type)
          const replacement = payload(type, context.discovery.schemas, await fixtures.references(), resource)
          const response = await context.client.put(path(type, resource.id), { ...replacement, id: resource.id })
          const replaced = expectObject(response, 200)
          expectScimJson(response)
          expectCommon(type, replaced, "replaced")
          expectSame(context, type, replacement, replaced, "replaced")
          const read = expectObject(await context.client.get(path(type, resource.id)), 200)
          expectSame(context, type, replacement, read, "read after replace")
        })
    },
    {
      id: `crud.${type.name}.delete`,
      description: `DELETE ${type.endpoint}/{id} → 204; then GET → 404 SCIM error`,
      run: () =>
        using(context, async (fixtures) => {
          const { resource } = await fixtures.create(type)
          const response = await context.client.del(path(type, resource.id))
          expectStatus(response, 204)
          check(response.text === "", "204 must have no body", response)
          expectError(await context.client.get(path(type, resource.id)), 404)
        })
    },
    ...primaryAttributes(type, context.discovery.schemas).map((located) => twoPrimaries(context, type, located))
  ])

/**
 * Tag `errors` (RFC 7644 §3.12): SCIM error bodies (schemas, status as a string, detail, scimType) as
 * `application/scim+json` for an unknown URL, an unknown id, a malformed filter and a uniqueness conflict.
 */
import { type Check, type Context, expectError, random, skip } from "./Check.js"
import { supported } from "./Discovery.js"
import * as Fixtures from "./Fixtures.js"
import { payload, pick } from "./Schema.js"

export const checks = (context: Context): ReadonlyArray<Check> => [
  {
    id: "errors.unknownUrl",
    description: "GET a random URL under the base → 404 SCIM error",
    run: async () => expectError(await context.client.get(`/Unknown${random()}/${random()}`), 404)
  },
  ...context.discovery.resourceTypes.map((type): Check => ({
    id: `errors.${type.name}.unknownId`,
    description: `GET, PATCH and DELETE ${type.endpoint}/<unknown id> → 404 SCIM error`,
    run: async () => {
      const url = `${type.endpoint}/${crypto.randomUUID()}`
      expectError(await context.client.get(url), 404)
      expectError(await context.client.del(url), 404)
      expectError(await context.client.patch(url, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "replace", path: "externalId", value: "x" }] }), 404)
    }
  })),
  {
    id: "errors.invalidFilter",
    description: "a malformed filter → 400 SCIM error with scimType invalidFilter",
    run: async () => {
      if (!supported(context.discovery, "filter")) return skip("ServiceProviderConfig: filter.supported is false")
      const type = context.discovery.resourceTypes[0]
      for (const filter of ['userName zz "x"', '(userName eq "x"', 'emails[type eq "work"']) {
        expectError(await context.client.get(`${type.endpoint}?filter=${encodeURIComponent(filter)}`), 400, "invalidFilter")
      }
    }
  },
  ...context.discovery.resourceTypes.map((type): Check => ({
    id: `errors.${type.name}.uniqueness`,
    description: `creating a second ${type.name} with the value of a unique attribute → 409 scimType uniqueness`,
    run: () =>
      Fixtures.using(context, async (fixtures) => {
        const unique = (context.discovery.schemas.get(type.schema)?.attributes ?? []).find((a) => (a.uniqueness ?? "none") !== "none" && a.type === "string" && a.mutability !== "readOnly" && !a.multiValued)
        if (unique === undefined) return skip(`${type.name} advertises no unique attribute`)
        const { resource } = await fixtures.create(type)
        const body = payload(type, context.discovery.schemas, await fixtures.references())
        body[unique.name] = pick(resource, unique.name)
        const response = await context.client.post(type.endpoint, body)
        if (response.status === 201) await context.client.del(`${type.endpoint}/${encodeURIComponent(response.body.id)}`)
        expectError(response, 409, "uniqueness")
        return unique.name
      })
  }))
]

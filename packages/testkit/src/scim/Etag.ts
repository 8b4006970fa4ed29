/**
 * Tag `etag` (RFC 7644 §3.14), when ServiceProviderConfig says etag.supported: every resource has `meta.version`,
 * the ETag header carries it, a write changes it, PUT, PATCH or DELETE with a stale `If-Match` → 412 and no change,
 * and GET with `If-None-Match` of the current version → 304 without a body.
 */
import { asObject, type Check, check, type Context, expectError, expectStatus, skip } from "./Check.js"
import { URN } from "./Client.js"
import { supported } from "./Discovery.js"
import { using } from "./Fixtures.js"
import { payload, type ResourceTypeDoc } from "./Schema.js"

const STALE = 'W/"stale-version-0"'

/** A resource's `meta.version` (undefined when it has none). */
const versionOf = (resource: unknown): unknown => asObject(asObject(resource).meta).version

export const checks = (context: Context): ReadonlyArray<Check> => {
  if (!supported(context.discovery, "etag")) {
    return [{ id: "etag", description: "ETags and If-Match", run: async () => skip("ServiceProviderConfig: etag.supported is false") }]
  }
  return context.discovery.resourceTypes.flatMap((type: ResourceTypeDoc): ReadonlyArray<Check> => {
    const url = (id: string) => `${type.endpoint}/${encodeURIComponent(id)}`
    return [
      {
        id: `etag.${type.name}.version`,
        description: `meta.version on create and read, the same in the ETag header, changed by a write`,
        run: () =>
          using(context, async (fixtures) => {
            const { resource } = await fixtures.create(type)
            const version = versionOf(resource)
            check(typeof version === "string" && version !== "", "created: meta.version must be set")
            const response = await context.client.get(url(resource.id))
            const read = expectStatus(response, 200)
            check(versionOf(read) === version, `read: meta.version ${String(versionOf(read))} must equal the created ${String(version)}`, response)
            check(response.headers.get("etag") === versionOf(read), "read: the ETag header must be meta.version", response)
            const replaced = expectStatus(await context.client.put(url(resource.id), { ...payload(type, context.discovery.schemas, await fixtures.references(), resource), id: resource.id }), 200)
            check(versionOf(replaced) !== version, "a replace must change meta.version")
          })
      },
      {
        id: `etag.${type.name}.ifNoneMatch`,
        description: `GET ${type.endpoint}/{id} with If-None-Match: the current version → 304, no body, the ETag; another → 200 with the resource`,
        run: () =>
          using(context, async (fixtures) => {
            const { resource } = await fixtures.create(type)
            const version = String(versionOf(resource))
            const same = await context.client.get(url(resource.id), { headers: { "if-none-match": version } })
            expectStatus(same, 304)
            check(same.text === "", "a 304 has no body", same)
            // RFC 9110 §15.4.5: a 304 carries the ETag a 200 would have.
            check(same.headers.get("etag") === version, "a 304 must carry the ETag header", same)
            const other = await context.client.get(url(resource.id), { headers: { "if-none-match": STALE } })
            check(asObject(expectStatus(other, 200)).id === resource.id, "another version must answer the resource", other)
          })
      },
      ...(["PUT", "PATCH", "DELETE"] as const).map((method): Check => ({
        id: `etag.${type.name}.ifMatch.${method.toLowerCase()}`,
        description: `${method} ${type.endpoint}/{id} with a stale If-Match → 412 and nothing changed; with the current version → done`,
        run: () =>
          using(context, async (fixtures) => {
            const { resource } = await fixtures.create(type)
            const body =
              method === "PUT"
                ? { ...payload(type, context.discovery.schemas, await fixtures.references(), resource), id: resource.id }
                : method === "PATCH"
                  ? { schemas: [URN.patchOp], Operations: [{ op: "replace", path: "externalId", value: `etag-${context.run}` }] }
                  : undefined
            const send = (ifMatch: string) => context.client.request(method, url(resource.id), { body, headers: { "if-match": ifMatch } })
            expectError(await send(STALE), 412)
            const after = expectStatus(await context.client.get(url(resource.id)), 200)
            check(versionOf(after) === versionOf(resource), `a refused ${method} must change nothing (meta.version moved)`)
            expectStatus(await send(String(versionOf(resource))), method === "DELETE" ? 204 : 200, ...(method === "PATCH" ? [204] : []))
          })
      }))
    ]
  })
}

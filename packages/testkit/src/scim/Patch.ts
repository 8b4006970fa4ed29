/**
 * Tag `patch` (RFC 7644 §3.5.2): `add`, `replace` and `remove` on every mutable attribute the schemas advertise —
 * simple, complex, sub-attributes of single-valued complex ones, multi-valued and extension attributes — each
 * verified by reading the resource back. Skipped when ServiceProviderConfig says patch is not supported.
 */
import { type Check, check, type Context, expectStatus, fail, skip } from "./Check.js"
import { URN } from "./Client.js"
import { supported } from "./Discovery.js"
import { using } from "./Fixtures.js"
import { type Attribute, attributesOf, difference, generate, type Located, mutability, pathOf, pick, readable, valueAt } from "./Schema.js"

type Op = "add" | "replace" | "remove"

const patchBody = (op: Op, path: string, value?: unknown) => ({
  schemas: [URN.patchOp],
  Operations: [value === undefined ? { op, path } : { op, path, value }]
})

const mutable = (attribute: Attribute) => mutability(attribute) === "readWrite" && readable(attribute)

/** The targets of the tag: each mutable attribute, and each mutable sub-attribute of a single-valued complex one. */
const targets = (located: Located): ReadonlyArray<{ path: string; attribute: Attribute; sub?: Attribute }> => {
  const { attribute } = located
  if (!mutable(attribute)) return []
  const subs =
    attribute.type === "complex" && !attribute.multiValued
      ? (attribute.subAttributes ?? []).filter((sub) => mutable(sub) && sub.name !== "$ref").map((sub) => ({ path: pathOf(located, sub), attribute, sub }))
      : []
  return [{ path: pathOf(located), attribute }, ...subs]
}

export const checks = (context: Context): ReadonlyArray<Check> => {
  if (!supported(context.discovery, "patch")) {
    return [{ id: "patch", description: "PATCH operations", run: async () => skip("ServiceProviderConfig: patch.supported is false") }]
  }
  return context.discovery.resourceTypes.flatMap((type) =>
    attributesOf(type, context.discovery.schemas).flatMap((located) =>
      targets(located).flatMap(({ path, attribute, sub }) =>
        (["add", "replace", "remove"] as const).map((op): Check => ({
          id: `patch.${type.name}.${path.replace(/^urn:.*:/, "")}.${op}`,
          description: `PATCH ${type.endpoint}/{id} ${op} ${path}, verified by reading back`,
          run: () =>
            using(context, async (fixtures) => {
              const target = sub ?? attribute
              if (op === "remove" && target.required) return skip(`${path} is required`)
              const { resource } = await fixtures.create(type)
              const current = sub === undefined ? valueAt(resource, located) : pick(valueAt(resource, located), sub.name)
              // A boolean is flipped, so that an operation the server ignores cannot pass by luck.
              const value =
                op === "remove" ? undefined
                : target.type === "boolean" && !target.multiValued ? current !== true
                : generate(target, await fixtures.freshReferences(), sub === undefined ? undefined : attribute)
              if (op !== "remove" && value === undefined) return skip(`no value can be generated for ${path}`)
              const url = `${type.endpoint}/${encodeURIComponent(resource.id)}`
              const response = await context.client.patch(url, patchBody(op, path, value))
              expectStatus(response, 200, 204)
              const read = expectStatus(await context.client.get(url), 200)
              const holder = valueAt(read, located)
              const actual = sub === undefined ? holder : pick(holder, sub.name)
              if (op === "remove") {
                check(actual === undefined || actual === null || (Array.isArray(actual) && actual.length === 0), `${path} was removed but reads ${JSON.stringify(actual)}`)
                return
              }
              const found = difference(target, value, actual, path)
              if (found !== undefined) fail(`after ${op}: ${found}`)
              if (op === "replace" && target.multiValued) {
                check(Array.isArray(actual) && actual.length === (value as Array<unknown>).length, `replace of ${path} must leave exactly the new values: ${JSON.stringify(actual)}`)
              }
            })
        }))
      )
    )
  )
}

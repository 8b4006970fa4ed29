/**
 * Tag `patch` (RFC 7644 §3.5.2): `add`, `replace` and `remove` on every mutable attribute the schemas advertise —
 * simple, complex, sub-attributes of single-valued complex ones, multi-valued and extension attributes — each
 * verified by reading the resource back; and, for a multi-valued attribute with `primary`, that making a value
 * primary makes the others not. Skipped when ServiceProviderConfig says patch is not supported.
 */
import { type Check, check, type Context, expectStatus, fail, skip } from "./Check.js"
import { URN } from "./Client.js"
import { supported } from "./Discovery.js"
import { using } from "./Fixtures.js"
import {
  type Attribute,
  attributesOf,
  difference,
  generate,
  type Located,
  mutability,
  pathOf,
  pick,
  primaryAttributes,
  primaryValues,
  readable,
  type ResourceTypeDoc,
  valueAt
} from "./Schema.js"

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

/** The sub-attribute that tells a value apart (`value`, else a string one such as an address's `formatted`). */
const keyOf = (attribute: Attribute, value: unknown) =>
  ["value", ...(attribute.subAttributes ?? []).filter((sub) => sub.type === "string" && !["value", "type", "display"].includes(sub.name)).map((sub) => sub.name)]
    .find((name) => typeof pick(value, name) === "string")

/**
 * RFC 7644 §3.5.2: a PATCH that sets a value's `primary` to true "SHALL cause the server to automatically set primary
 * to false for any other values": by an `add` of a new primary value, then by a `replace` of `attr[key eq …].primary`.
 */
const primaryMoves = (context: Context, type: ResourceTypeDoc, located: Located): Check => ({
  id: `patch.${type.name}.${located.attribute.name}.primary`,
  description: `PATCH making a ${located.attribute.name} value primary (add, then replace by a value filter) leaves it the only primary one`,
  run: () =>
    using(context, async (fixtures) => {
      const { resource } = await fixtures.create(type)
      const [first] = primaryValues(valueAt(resource, located))
      const key = keyOf(located.attribute, first)
      if (first === undefined || key === undefined) return skip(`the created ${type.name} has no primary ${located.attribute.name} with a string to find it by`)
      const url = `${type.endpoint}/${encodeURIComponent(resource.id)}`
      const primaryOf = async (what: string) => {
        const primaries = primaryValues(valueAt(expectStatus(await context.client.get(url), 200), located))
        check(primaries.length === 1, `after ${what}: ${primaries.length} values marked primary: ${JSON.stringify(primaries)}`)
        return String(pick(primaries[0], key)).toLowerCase()
      }
      const [added] = generate(located.attribute, await fixtures.references()) as Array<Record<string, unknown>>
      expectStatus(await context.client.patch(url, patchBody("add", pathOf(located), [{ ...added, primary: true }])), 200, 204)
      check(await primaryOf("an add") === String(pick(added, key)).toLowerCase(), "after an add of a primary value, it must be the primary one")
      const again = `${pathOf(located)}[${key} eq ${JSON.stringify(pick(first, key))}].primary`
      expectStatus(await context.client.patch(url, patchBody("replace", again, true)), 200, 204)
      check(await primaryOf(`replace ${again}`) === String(pick(first, key)).toLowerCase(), `after replace ${again}, it must be the primary one`)
    })
})

export const checks = (context: Context): ReadonlyArray<Check> => {
  if (!supported(context.discovery, "patch")) {
    return [{ id: "patch", description: "PATCH operations", run: async () => skip("ServiceProviderConfig: patch.supported is false") }]
  }
  const primaries = context.discovery.resourceTypes.flatMap((type) =>
    primaryAttributes(type, context.discovery.schemas).map((located) => primaryMoves(context, type, located))
  )
  return [...context.discovery.resourceTypes.flatMap((type) =>
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
  ), ...primaries]
}

/**
 * `primary` on one value of a multi-valued attribute at most (RFC 7643 §2.4: "The primary attribute value true MUST
 * appear no more than once"), for every such attribute the advertised table has (a User's `emails`): what a resource
 * sent with more is told, what a PATCH that makes a value primary does to the others, and how a resource stored with
 * more (before this was checked) reads.
 */
import { filter as matches, parse as parseFilter } from "scim2-parse-filter"
import type { ScimPatchOperation } from "scim-patch"
import type { Attribute, ResourceTypeDefinition } from "./Attributes.js"

type Resource = Record<string, unknown>

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A multi-valued attribute whose values may be `primary`, and the extension URN that holds it (none: the core). */
interface PrimaryPlace {
  readonly schema: string | undefined
  readonly attribute: Attribute
}

const takesPrimary = (attribute: Attribute) =>
  attribute.multiValued && attribute.type === "complex" && attribute.subAttributes?.some(({ name }) => name === "primary") === true

/** Every attribute of the resource type with `primary` values, from the advertised table. */
const primaryPlaces = (resourceType: ResourceTypeDefinition): ReadonlyArray<PrimaryPlace> => [
  ...resourceType.schema.attributes.filter(takesPrimary).map((attribute) => ({ schema: undefined, attribute })),
  ...resourceType.extensions.flatMap((extension) =>
    extension.attributes.filter(takesPrimary).map((attribute) => ({ schema: extension.id, attribute }))
  )
]

/** The attribute's path as a checked PATCH operation names it (canonical names, the extension's URN first). */
const pathOfPlace = (place: PrimaryPlace) => `${place.schema === undefined ? "" : `${place.schema}:`}${place.attribute.name}`

const valuesIn = (resource: Resource, place: PrimaryPlace): ReadonlyArray<unknown> => {
  const holder = place.schema === undefined ? resource : resource[place.schema]
  const values = isObject(holder) ? holder[place.attribute.name] : undefined
  return Array.isArray(values) ? values : []
}

const primaryIndexes = (values: ReadonlyArray<unknown>) =>
  values.flatMap((value, index) => (isObject(value) && value.primary === true ? [index] : []))

/** The resource with `values` as the place's values. */
const withValues = (resource: Resource, place: PrimaryPlace, values: ReadonlyArray<unknown>): Resource => {
  if (place.schema === undefined) return { ...resource, [place.attribute.name]: values }
  const holder = resource[place.schema]
  return { ...resource, [place.schema]: { ...(isObject(holder) ? holder : {}), [place.attribute.name]: values } }
}

/** Only the value at `keep` stays primary; the others' `primary` becomes false. */
const onlyPrimary = (values: ReadonlyArray<unknown>, keep: number) =>
  values.map((value, index) => (index !== keep && isObject(value) && value.primary === true ? { ...value, primary: false } : value))

/** What is wrong with a resource that has more than one primary value of an attribute (undefined: nothing). */
export const tooManyPrimaries = (resourceType: ResourceTypeDefinition, resource: Resource): string | undefined => {
  for (const place of primaryPlaces(resourceType)) {
    const count = primaryIndexes(valuesIn(resource, place)).length
    if (count > 1) return `${pathOfPlace(place)} has ${count} values with primary true; at most one may be primary (RFC 7643 §2.4).`
  }
  return undefined
}

/**
 * A stored resource with one primary value at most per attribute: the first stays primary (the one the server found
 * the person by). A resource stored before `primary` was checked may have more.
 */
export const withOnePrimary = (resourceType: ResourceTypeDefinition, resource: Resource): Resource =>
  primaryPlaces(resourceType).reduce((current, place) => {
    const values = valuesIn(current, place)
    const primaries = primaryIndexes(values)
    return primaries.length > 1 ? withValues(current, place, onlyPrimary(values, primaries[0]!)) : current
  }, resource)

/** The indexes of the place's values an operation's value filter selects (`emails[type eq "work"].primary`). */
const selected = (place: PrimaryPlace, resource: Resource, operation: ScimPatchOperation): ReadonlySet<number> => {
  const prefix = `${pathOfPlace(place)}[`
  if (operation.path === undefined || !operation.path.startsWith(prefix)) return new Set()
  const test = matches(parseFilter(operation.path.slice(prefix.length, operation.path.lastIndexOf("]"))))
  return new Set(valuesIn(resource, place).flatMap((value, index) => (isObject(value) && test(value) ? [index] : [])))
}

/**
 * After a checked add or replace (`before` → `after`): the value it made primary is the only one (RFC 7644 §3.5.2:
 * setting `primary` to true "SHALL cause the server to automatically set primary to false for any other values"). An
 * operation made primary the values that were not, and those its value filter selects; a replace of the whole
 * attribute, every value of it. One that made several values primary at once answers why it is refused.
 */
export const settlePrimary = (
  resourceType: ResourceTypeDefinition,
  before: Resource,
  after: Resource,
  operation: ScimPatchOperation
): Resource | string => {
  let result = after
  for (const place of primaryPlaces(resourceType)) {
    const values = valuesIn(result, place)
    const primaries = primaryIndexes(values)
    if (primaries.length <= 1) continue
    const replacedWhole = operation.op === "replace" && operation.path === pathOfPlace(place)
    const wasPrimary = new Set(replacedWhole ? [] : primaryIndexes(valuesIn(before, place)))
    const targets = selected(place, before, operation)
    const made = primaries.filter((index) => !wasPrimary.has(index) || targets.has(index))
    if (made.length > 1) return `${pathOfPlace(place)}: the operation makes ${made.length} values primary; at most one may be (RFC 7643 §2.4).`
    result = withValues(result, place, onlyPrimary(values, made[0] ?? primaries[0]!))
  }
  return result
}

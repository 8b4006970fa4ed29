/**
 * Reading a JSON document no schema of the API types (the OpenAPI document, JSON Schemas inside it) without `any`:
 * each reader checks the kind of the value it is given and throws, naming what it read, when it is another.
 */

/** A JSON object, its members not yet read. */
export type JsonObject = { readonly [key: string]: unknown }

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const shown = (value: unknown) => JSON.stringify(value)?.slice(0, 200) ?? String(value)

/** `value` as an object; throws naming `what` otherwise. */
export const object = (value: unknown, what = "the value"): JsonObject => {
  if (!isObject(value)) throw new Error(`${what} is not an object: ${shown(value)}`)
  return value
}

/** `value` as an array; throws naming `what` otherwise. */
export const array = (value: unknown, what = "the value"): ReadonlyArray<unknown> => {
  if (!Array.isArray(value)) throw new Error(`${what} is not an array: ${shown(value)}`)
  return value
}

/** `value` as a string; throws naming `what` otherwise. */
export const string = (value: unknown, what = "the value"): string => {
  if (typeof value !== "string") throw new Error(`${what} is not a string: ${shown(value)}`)
  return value
}

/** What `path` (object members and array indexes) leads to in `value`, or undefined where it leads nowhere. */
export const at = (value: unknown, ...path: ReadonlyArray<string | number>): unknown => {
  let here = value
  for (const step of path) {
    if (typeof step === "number" ? !Array.isArray(here) : !isObject(here)) return undefined
    here = Reflect.get(here as object, step)
  }
  return here
}

/** An object whose members are objects (as `paths` or `components.schemas`), as entries; throws naming `what` otherwise. */
export const objects = (value: unknown, what = "the value"): ReadonlyArray<readonly [string, JsonObject]> =>
  Object.entries(object(value, what)).map(([key, member]) => [key, object(member, `${what}.${key}`)] as const)

/** An array whose items are objects; throws naming `what` otherwise. */
export const objectItems = (value: unknown, what = "the value"): ReadonlyArray<JsonObject> =>
  array(value, what).map((item, i) => object(item, `${what}[${i}]`))

/** Reading JSON the bench receives (answers of the API, bodies of requests) without an untyped value. */

/** The member of `value` at `keys`, or undefined where there is none. */
export const memberAt = (value: unknown, ...keys: ReadonlyArray<string>): unknown =>
  keys.reduce<unknown>((node, key) => (typeof node === "object" && node !== null ? Reflect.get(node, key) : undefined), value)

/** The text member of `value` at `keys`; throws naming the path when it is not text. */
export const textAt = (value: unknown, ...keys: ReadonlyArray<string>): string => {
  const found = memberAt(value, ...keys)
  if (typeof found !== "string") throw new TypeError(`expected text at ${keys.join(".")}, got ${JSON.stringify(found)}`)
  return found
}

/** `value` when it is a JSON object, else undefined. */
export const objectOrUndefined = (value: unknown): Readonly<Record<string, unknown>> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : undefined

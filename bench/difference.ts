/** Where two answers differ, for the harness's check that the baseline answers what orgplane answers. */

/** The first path at which `a` and `b` differ (object keys in any order), or undefined when they are the same. */
export const firstDifference = (a: unknown, b: unknown, path = ""): string | undefined => {
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    return a === b ? undefined : `${path || "/"}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`
  }
  if (Array.isArray(a) !== Array.isArray(b)) return `${path || "/"}: array vs object`
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  for (const key of keys) {
    const found = firstDifference(Reflect.get(a, key), Reflect.get(b, key), `${path}/${key}`)
    if (found !== undefined) return found
  }
  return undefined
}

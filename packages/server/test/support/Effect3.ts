/**
 * What the server's differential tests hold the Effect 4 code to: the answers of its Effect 3 originals (0.1.0's
 * server, packages/server before issue 46 moved it to Effect 4), recorded while both trees existed into committed
 * fixtures, `test/fixtures/effect3/<file>.json`, one per test file, each value under a key naming the function and
 * its inputs (`call`). A test reads `original(key)`; a key never recorded fails the test, naming it. The Effect 3 tree
 * is gone, so nothing is recorded again: a new case is an assertion on the port of its own, not a new key here (the
 * recorder is in the history, at the commit before the swap).
 *
 * A recorded value is JSON, read as `toEqual` and `toBe` compare (an object's own enumerable members), with
 * `undefined` spelled `{ "$effect3": "undefined" }` where JSON has no place for it.
 */
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"

const folder = new URL("../fixtures/effect3/", import.meta.url)

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

const isUndefinedMark = (value: Json) =>
  value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 1 && Reflect.get(value, "$effect3") === "undefined"

const decode = (value: Json): unknown => {
  if (value === null || typeof value !== "object") return value
  if (isUndefinedMark(value)) return undefined
  if (Array.isArray(value)) return value.map(decode)
  return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, decode(member)]))
}

/** The recorded values of one test file's originals: `original(key)`, and `original.await` where the test awaits one. */
export interface Originals {
  <A = unknown>(key: string): A
  /** The value the original's promise (an Effect 3 effect run, say) gave, recorded under `key`. */
  readonly await: <A = unknown>(key: string) => Promise<A>
}

/** The recorded values of `name`'s originals (`test/fixtures/effect3/<name>.json`). */
export const originals = (name: string): Originals => {
  const file = Path.join(folder.pathname, `${name}.json`)
  const stored: Record<string, Json> = JSON.parse(Fs.readFileSync(file, "utf8"))
  const replay = <A = unknown>(key: string): A => {
    const value = stored[key]
    if (value === undefined) throw new Error(`Effect3: ${file} has no value under ${JSON.stringify(key)}`)
    // The value the original gave, as its JSON form reads back: the test says what it expects it to be.
    return decode(value) as A
  }
  return Object.assign(replay, { await: <A = unknown>(key: string) => Promise.resolve(replay<A>(key)) })
}

/**
 * A key naming a call: `name(input, ...)`, each input as JSON (`undefined` spelled out); inputs longer than a line are
 * named by their SHA-256 instead (`name(#<hex>)`).
 */
export const call = (name: string, ...inputs: ReadonlyArray<unknown>) => {
  const text = inputs.map((input) => JSON.stringify(input) ?? "undefined").join(", ")
  return text.length <= 200 ? `${name}(${text})` : `${name}(#${Crypto.createHash("sha256").update(text).digest("hex").slice(0, 32)})`
}

/**
 * What next/server's differential tests read from their Effect 3 originals (packages/server), recorded into committed
 * fixtures, so that the tests run without the Effect 3 tree: `test/fixtures/effect3/<file>.json`, one per test file,
 * each value under a key the test names (the function and its inputs).
 *
 * A test asks `original(key, (Module) => value)`: on a replay (the default) the value is the recorded one, and a key
 * never recorded fails the test, naming the key; with `ORGPLANE_RECORD_EFFECT3=1` (while packages/server exists:
 * `ORGPLANE_RECORD_EFFECT3=1 node_modules/.bin/vitest run test/X.test.ts`) the original module is imported, the value
 * computed, and the file written anew with every key the run asked for. A recorded value is JSON: the test reads it as
 * `toEqual` and `toBe` compare (an object's own enumerable members, whatever its class), and a value JSON cannot keep
 * faithfully (a function, a Date, a Map, an Error, a bigint) is refused as it is recorded. A record run hands the test
 * the value as the replay will read it, so what passes recording passes the replay: the value is typed as the
 * original's, and a test that reads what its JSON form lacks (a member of its prototype, say) fails as it records. Two
 * different values under one key (an input that is not the same on every run) fail the record run.
 */
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"

export const recording = process.env["ORGPLANE_RECORD_EFFECT3"] === "1"

const folder = new URL("../fixtures/effect3/", import.meta.url)

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** `undefined` where JSON has no place for it (an array's item, the value itself). */
const undefinedMark = { "$effect3": "undefined" } as const

const encode = (value: unknown, at: string): Json => {
  if (value === undefined) return undefinedMark
  if (value === null || typeof value === "boolean" || typeof value === "string") return value
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`Effect3: ${at} is ${value}, which JSON does not keep`)
    return value
  }
  if (Array.isArray(value)) return value.map((item, index) => encode(item, `${at}[${index}]`))
  if (typeof value === "object") {
    if (value instanceof Date || value instanceof Map || value instanceof Set || value instanceof Error || ArrayBuffer.isView(value)) {
      throw new Error(`Effect3: ${at} is a ${value.constructor.name}, which a recorded value cannot keep: record a plain form of it`)
    }
    const members: Record<string, Json> = {}
    for (const [key, member] of Object.entries(value)) if (member !== undefined) members[key] = encode(member, `${at}.${key}`)
    return members
  }
  throw new Error(`Effect3: ${at} is a ${typeof value}, which a recorded value cannot keep`)
}

const isUndefinedMark = (value: Json) =>
  value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 1 && Reflect.get(value, "$effect3") === "undefined"

const decode = (value: Json): unknown => {
  if (value === null || typeof value !== "object") return value
  if (isUndefinedMark(value)) return undefined
  if (Array.isArray(value)) return value.map(decode)
  return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, decode(member)]))
}

/** Reads a fixture file: its keys and their values as JSON. */
const read = (file: string): Record<string, Json> => {
  let text: string
  try {
    text = Fs.readFileSync(file, "utf8")
  } catch {
    throw new Error(
      `Effect3: no recorded values at ${file}: record them while packages/server exists (ORGPLANE_RECORD_EFFECT3=1, see test/support/Effect3.ts)`
    )
  }
  return JSON.parse(text)
}

/** The recorded values of one test file's originals: `original(key, compute)`, and `original.await` for a promise. */
export interface Originals<Module> {
  <A>(key: string, compute: (module: Module) => A): A
  /** The value of the promise `compute` gives (an Effect 3 effect run, say), recorded under `key`. */
  readonly await: <A>(key: string, compute: (module: Module) => Promise<A>) => Promise<A>
}

/**
 * The recorded values of `name`'s originals (`load` imports the Effect 3 modules, on a record run only): `original(key,
 * compute)` is the value `compute` gives on them, recorded under `key`.
 */
export const originals = async <Module>(name: string, load: () => Promise<Module>): Promise<Originals<Module>> => {
  const file = Path.join(folder.pathname, `${name}.json`)
  if (!recording) {
    const stored = read(file)
    const replay = <A>(key: string): A => {
      const value = stored[key]
      if (value === undefined) {
        throw new Error(
          `Effect3: ${file} has no value under ${JSON.stringify(key)}: record it while packages/server exists (ORGPLANE_RECORD_EFFECT3=1, see test/support/Effect3.ts)`
        )
      }
      return decode(value) as A
    }
    return Object.assign(replay, { await: <A>(key: string) => Promise.resolve(replay<A>(key)) })
  }
  const module = await load()
  const recorded: Record<string, Json> = {}
  const keep = <A>(key: string, computed: A): A => {
    const value = encode(computed, key)
    const earlier = recorded[key]
    if (earlier !== undefined && JSON.stringify(earlier) !== JSON.stringify(value)) {
      throw new Error(`Effect3: ${JSON.stringify(key)} recorded twice with different values: its inputs differ between runs`)
    }
    recorded[key] = value
    Fs.mkdirSync(folder, { recursive: true })
    const sorted = Object.fromEntries(Object.keys(recorded).sort().map((name) => [name, recorded[name]]))
    Fs.writeFileSync(file, `${JSON.stringify(sorted, null, 2)}\n`)
    return decode(value) as A
  }
  return Object.assign(<A>(key: string, compute: (module: Module) => A): A => keep(key, compute(module)), {
    await: async <A>(key: string, compute: (module: Module) => Promise<A>): Promise<A> => keep(key, await compute(module))
  })
}

/**
 * A key naming a call: `name(input, ...)`, each input as JSON (`undefined` spelled out); inputs longer than a line are
 * named by their SHA-256 instead (`name(#<hex>)`).
 */
export const call = (name: string, ...inputs: ReadonlyArray<unknown>) => {
  const text = inputs.map((input) => JSON.stringify(input) ?? "undefined").join(", ")
  return text.length <= 200 ? `${name}(${text})` : `${name}(#${Crypto.createHash("sha256").update(text).digest("hex").slice(0, 32)})`
}

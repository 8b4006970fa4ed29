/**
 * The Effect 3 side of the differential tests, recorded once and replayed: every value a test takes from the Effect 3
 * tree (packages/schema's modules, the `effect-3` package) comes through a handle of this module, `effect3("Access")`
 * for `packages/schema/src/Access.ts`, `effect3("effect/Schema")` for `effect-3`'s `Schema`. A handle's members,
 * calls and constructions are keys (`Access.includesRole("owner","admin")`); what a key stands for is written to
 * `fixtures/effect3/<TestFile>.json`, recorded while the Effect 3 tree existed (up to issue 46's swap) and read
 * from there. A value that is
 * data (JSON, with dates, maps, `undefined`) is returned as data; anything else (a schema, a function, a class
 * instance) as another handle, whose own members are keys again. `recordStep` records a whole computation as one key
 * (differential.ts's `decode3`, `encode3`, `jsonSchema3Of`; apiDifferential.ts's `groupDocument`), its result as
 * data. Record mode returns what the fixture reads back too, so both modes run the tests on the same values. A key
 * the fixture lacks fails the test.
 */
import { expect } from "@effect/vitest"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/** A value of the Effect 3 tree: data (as recorded), or a handle whose members, calls and constructions are recorded. */
export interface Effect3 {
  readonly [member: string]: Effect3
  /** An array's members (a handle of anything else has none). */
  [Symbol.iterator](): Iterator<Effect3>
  (...args: ReadonlyArray<unknown>): Effect3
  new(...args: ReadonlyArray<unknown>): Effect3
}

/** An Effect 3 HttpApiGroup, as the group tests pass one. */
export type AnyGroup = Effect3

/**
 * Recording read the Effect 3 tree (packages/schema's modules and `effect-3`), which issue 46's swap removed: the
 * fixtures are what 0.1.0's schema did, only replayed now, and a new case is an assertion on the port of its own.
 * The record mode's code stays below for reading the fixtures' format; the recorder that fed it is in the history
 * (the commit before the swap).
 */
export const recording: boolean = false
if (process.env["ORGPLANE_RECORD_EFFECT3"] === "1") {
  throw new Error("ORGPLANE_RECORD_EFFECT3: the Effect 3 tree is gone since issue 46's swap, so nothing can be recorded again")
}

const here = Path.dirname(fileURLToPath(import.meta.url))
const fixtures = Path.join(here, "fixtures", "effect3")

type FixtureJson = null | boolean | number | string | Array<FixtureJson> | { [key: string]: FixtureJson }
type Entry = { readonly ref: true } | { readonly value: FixtureJson }

/** The real modules, by handle name: there were some in record mode only. */
const modules: ReadonlyMap<string, unknown> = new Map()

// ---------------------------------------------------------------------------------------------------------------
// The fixtures: one file per test file, its keys sorted.

const recorded = new Map<string, Map<string, Entry>>()
const loaded = new Map<string, Readonly<Record<string, Entry>>>()

/** The test file running (its name without `.test.ts`): its fixture holds the keys. */
const currentFile = (): string => {
  const path = expect.getState().testPath
  if (path === undefined) throw new Error("effect3: no test file is running")
  return Path.basename(path).replace(/\.test\.ts$/, "")
}

const fixturePath = (file: string) => Path.join(fixtures, `${file}.json`)

const missing = (file: string, key: string) =>
  new Error(
    `effect3: no record of ${key} in test/fixtures/effect3/${file}.json. Record the Effect 3 side again with ` +
      "ORGPLANE_RECORD_EFFECT3=1 (only while packages/schema exists), or the test's Effect 3 value is no longer the one recorded."
  )

const isEntry = (value: unknown): value is Entry =>
  typeof value === "object" && value !== null && ("ref" in value || "value" in value)

const lookup = (key: string): Entry => {
  const file = currentFile()
  let fixture = loaded.get(file)
  if (fixture === undefined) {
    const path = fixturePath(file)
    const parsed: unknown = Fs.existsSync(path) ? JSON.parse(Fs.readFileSync(path, "utf8")) : {}
    const entries: Record<string, Entry> = {}
    if (typeof parsed === "object" && parsed !== null) {
      for (const [name, entry] of Object.entries(parsed)) if (isEntry(entry)) entries[name] = entry
    }
    fixture = entries
    loaded.set(file, fixture)
  }
  const entry = fixture[key]
  if (entry === undefined) throw missing(file, key)
  return entry
}

/** Inside a recorded step (`recordStep`): the handles it uses compute without recording. */
let silent = 0

const store = (key: string, entry: Entry): void => {
  if (silent > 0) return
  const file = currentFile()
  let entries = recorded.get(file)
  if (entries === undefined) {
    entries = new Map()
    recorded.set(file, entries)
  }
  const before = entries.get(key)
  if (before !== undefined && JSON.stringify(before) !== JSON.stringify(entry)) {
    throw new Error(`effect3: ${key} was recorded twice with different values (a key that does not say all its inputs)`)
  }
  entries.set(key, entry)
}

/** Writes the running test file's fixture (record mode; `effect3Setup.ts` calls it after each file). */
export const writeFixture = (): void => {
  if (!recording) return
  const file = currentFile()
  const entries = recorded.get(file)
  if (entries === undefined || entries.size === 0) return
  const sorted: Record<string, Entry> = {}
  for (const key of [...entries.keys()].sort()) {
    const entry = entries.get(key)
    if (entry !== undefined) sorted[key] = entry
  }
  Fs.mkdirSync(fixtures, { recursive: true })
  Fs.writeFileSync(fixturePath(file), `${JSON.stringify(sorted, null, 2)}\n`)
  recorded.delete(file)
}

// ---------------------------------------------------------------------------------------------------------------
// Values as fixtures: JSON, with what JSON lacks tagged by a `%` member.

/** What a function passed to Effect 3 closes over (`closure`): part of the keys it is in, beside its source. */
const closures = new WeakMap<object, ReadonlyArray<unknown>>()

/**
 * `fn`, passed to Effect 3, keyed by its source and the values it closes over (`closure((action) => allows(role,
 * action), role)`): a function is otherwise keyed by its source alone, which does not tell two closures apart.
 */
export const closure = <F extends (...args: never) => unknown>(fn: F, ...captured: ReadonlyArray<unknown>): F => {
  closures.set(fn, captured)
  return fn
}

/** The real Effect 3 object a replayed copy (or handle) stands for, in record mode. */
const realOf = new WeakMap<object, unknown>()

interface HandleState {
  readonly key: string
  readonly real: unknown
}
const handles = new WeakMap<object, HandleState>()

const isPlainObject = (value: object): boolean => {
  const proto: unknown = Object.getPrototypeOf(value)
  return (proto === Object.prototype || proto === null) && Object.prototype.toString.call(value) !== "[object Module]"
}

/** Whether `value` is data (returned as such), not something to hold a handle to. */
const isData = (value: unknown, seen: Set<object> = new Set()): boolean => {
  if (typeof value === "function") return false
  if (typeof value !== "object" || value === null) return true
  if (value instanceof Date) return true
  if (seen.has(value)) return false
  seen.add(value)
  if (Array.isArray(value)) return value.every((item) => isData(item, seen))
  if (value instanceof Map) return [...value].every(([key, item]) => isData(key, seen) && isData(item, seen))
  if (value instanceof Set) return [...value].every((item) => isData(item, seen))
  if (!isPlainObject(value) || Object.getOwnPropertySymbols(value).length > 0) return false
  return Object.values(value).every((item) => isData(item, seen))
}

const hash = (text: string) => Crypto.createHash("sha256").update(text).digest("hex").slice(0, 16)

/** A handle's key as part of another key: long ones by their hash. */
const keyRef = (key: string) => (key.length <= 200 ? `<${key}>` : `<#${hash(key)}>`)

/** `value` as a fixture: data as JSON, dates, `undefined`, odd numbers and class instances tagged. */
const toFixture = (value: unknown, seen: Set<object> = new Set()): FixtureJson => {
  switch (typeof value) {
    case "undefined":
      return { "%": "undefined" }
    case "number":
      return Number.isFinite(value) && !Object.is(value, -0) ? value : { "%": "number", value: String(value) }
    case "bigint":
      return { "%": "bigint", value: String(value) }
    case "string":
    case "boolean":
      return value
    case "symbol":
      return { "%": "symbol", value: Symbol.keyFor(value) ?? value.description ?? "" }
    case "function": {
      const handle = handles.get(value)
      if (handle !== undefined) return { "%": "ref", key: keyRef(handle.key) }
      const captured = closures.get(value)
      return captured === undefined
        ? { "%": "function", source: value.toString() }
        : { "%": "function", source: value.toString(), captured: captured.map((item) => toFixture(item, seen)) }
    }
  }
  if (value === null) return null
  if (typeof value !== "object") throw new Error(`effect3: a ${typeof value} cannot be recorded`)
  const handle = handles.get(value)
  if (handle !== undefined) return { "%": "ref", key: keyRef(handle.key) }
  if (value instanceof Date) return { "%": "date", value: Number.isNaN(value.getTime()) ? null : value.toISOString() }
  if (seen.has(value)) throw new Error("effect3: a cyclic value cannot be recorded")
  seen.add(value)
  try {
    if (Array.isArray(value)) return value.map((item) => toFixture(item, seen))
    if (Object.getOwnPropertySymbols(value).some((symbol) => Object.prototype.propertyIsEnumerable.call(value, symbol))) {
      throw new Error("effect3: a value with symbol members cannot be recorded")
    }
    if (value instanceof Map) return { "%": "map", entries: [...value].map(([key, item]) => [toFixture(key, seen), toFixture(item, seen)]) }
    if (value instanceof Set) return { "%": "set", items: [...value].map((item) => toFixture(item, seen)) }
    if (ArrayBuffer.isView(value)) {
      throw new Error(`effect3: a ${Object.prototype.toString.call(value)} cannot be recorded`)
    }
    const fields: Record<string, FixtureJson> = {}
    for (const [key, member] of Object.entries(value)) fields[key] = toFixture(member, seen)
    if ("%" in fields) throw new Error("effect3: a value with a `%` member cannot be recorded")
    if (isPlainObject(value)) return fields
    const constructor: unknown = Reflect.get(value, "constructor")
    return { "%": "instance", class: typeof constructor === "function" ? constructor.name : "", fields }
  } finally {
    seen.delete(value)
  }
}

const isFixtureObject = (value: FixtureJson): value is { [key: string]: FixtureJson } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A fixture as a value (class instances as plain objects), each object linked to the real one it copies, if any. */
const fromFixture = (fixture: FixtureJson, real?: unknown): unknown => {
  const member = (key: string | number) =>
    typeof real === "object" && real !== null ? Reflect.get(real, key) : undefined
  if (Array.isArray(fixture)) {
    const out = fixture.map((item, index) => fromFixture(item, member(index)))
    if (real !== undefined) realOf.set(out, real)
    return out
  }
  if (!isFixtureObject(fixture)) return fixture
  const tag = fixture["%"]
  switch (tag) {
    case "undefined":
      return undefined
    case "number":
      return Number(fixture["value"])
    case "bigint":
      return BigInt(String(fixture["value"]))
    case "symbol":
      return Symbol.for(String(fixture["value"]))
    case "date": {
      const date = new Date(fixture["value"] === null ? Number.NaN : String(fixture["value"]))
      if (real !== undefined) realOf.set(date, real)
      return date
    }
    case "map": {
      const entries = fixture["entries"]
      return new Map(Array.isArray(entries) ? entries.map((entry) => Array.isArray(entry) ? [fromFixture(entry[0] ?? null), fromFixture(entry[1] ?? null)] : [undefined, undefined]) : [])
    }
    case "set": {
      const items = fixture["items"]
      return new Set(Array.isArray(items) ? items.map((item) => fromFixture(item)) : [])
    }
    case "function":
    case "ref":
      throw new Error(`effect3: a recorded ${tag} is no value`)
  }
  const fields = tag === "instance" ? fixture["fields"] ?? {} : fixture
  const out: Record<string, unknown> = {}
  if (isFixtureObject(fields)) for (const [key, value] of Object.entries(fields)) out[key] = fromFixture(value, member(key))
  if (real !== undefined) realOf.set(out, real)
  return out
}

/**
 * Arguments as part of a key, and as what a result may point into (the data ones as fixtures, handles none; `base`
 * last), read before Effect 3 runs (it may change them).
 */
const argumentsOf = (args: ReadonlyArray<unknown>, base?: unknown): { readonly text: string; readonly sources: ReadonlyArray<FixtureJson | undefined> } => {
  const texts: Array<string> = []
  const sources: Array<FixtureJson | undefined> = []
  for (const value of args) {
    const handle = (typeof value === "object" && value !== null) || typeof value === "function" ? handles.get(value) : undefined
    if (handle !== undefined) {
      texts.push(keyRef(handle.key))
      sources.push(undefined)
      continue
    }
    const fixture = toFixture(value)
    const text = JSON.stringify(fixture)
    texts.push(text.length <= 200 ? text : `${text.slice(0, 60)}…#${hash(text)}`)
    sources.push(fixture)
  }
  if (base !== undefined) {
    const at = args.indexOf(base)
    sources.push(at === -1 ? toFixture(base) : sources[at])
  }
  return { text: texts.join(", "), sources }
}

/** What a value passed to Effect 3 is in record mode: handles and replayed copies as the real objects, deeply. */
const real = (value: unknown): unknown => {
  if ((typeof value !== "object" || value === null) && typeof value !== "function") return value
  const handle = handles.get(value)
  if (handle !== undefined) return handle.real
  if (realOf.has(value)) return realOf.get(value)
  // A plain object or array is passed itself (Effect 3 may change it) unless it holds a handle or a copy.
  if (Array.isArray(value)) {
    const members = value.map(real)
    return members.every((member, index) => member === value[index]) ? value : members
  }
  if (typeof value === "object" && isPlainObject(value)) {
    const entries = Object.entries(value).map(([key, member]): [string, unknown] => [key, real(member)])
    return entries.every(([key, member]) => member === Reflect.get(value, key)) ? value : Object.fromEntries(entries)
  }
  return value
}

// ---------------------------------------------------------------------------------------------------------------
// Handles.

/** Members a test runner or a formatter probes any object for: a handle has none of them. */
const probes = new Set(["then", "toJSON", "asymmetricMatch", "$$typeof", "nodeType", "tagName", "_isMockFunction", "@@__IMMUTABLE_ITERABLE__@@", "@@__IMMUTABLE_RECORD__@@"])

const memberKey = (key: string, name: string) => /^[A-Za-z_$][\w$]*$/.test(name) ? `${key}.${name}` : `${key}[${JSON.stringify(name)}]`

/**
 * The value `key` stands for: computed and recorded in record mode, read from the fixture otherwise. What `args` (a
 * call's) hold is kept as pointers into them.
 */
const valueOf = (key: string, compute: () => unknown, argumentSources: ReadonlyArray<FixtureJson | undefined> = []): unknown => {
  const sources = () => argumentSources
  if (recording) {
    const value = compute()
    if (!isData(value)) {
      store(key, { ref: true })
      return handle(key, value)
    }
    if (silent > 0) return fromFixture(toFixture(value), value)
    const stored = withPointers(toFixture(value), sources)
    store(key, { value: stored })
    return fromFixture(withoutPointers(stored, sources), value)
  }
  const entry = lookup(key)
  return "ref" in entry ? handle(key, undefined) : fromFixture(withoutPointers(entry.value, sources))
}

const handle = (key: string, value: unknown): Effect3 => {
  const target = function() {}
  const state: HandleState = { key, real: value }
  const proxy: object = new Proxy(target, {
    get(_, name): unknown {
      // An array held as a handle (of schemas, say) iterates over its members.
      if (name === Symbol.iterator) {
        if (valueOf(`Array.isArray(${key})`, () => Array.isArray(state.real)) !== true) return undefined
        return function*() {
          const length = Number(Reflect.get(proxy, "length"))
          for (let index = 0; index < length; index++) yield Reflect.get(proxy, String(index))
        }
      }
      if (typeof name === "symbol" || probes.has(name)) return undefined
      return valueOf(memberKey(key, name), () => Reflect.get(Object(state.real), name))
    },
    has(_, name) {
      if (typeof name === "symbol") return false
      return valueOf(`${JSON.stringify(name)} in ${key}`, () => name in Object(state.real)) === true
    },
    apply(_, self, args) {
      const { sources, text } = argumentsOf(args)
      return valueOf(`${key}(${text})`, () => {
        if (typeof state.real !== "function") throw new Error(`effect3: ${key} is not a function`)
        return Reflect.apply(state.real, real(self), args.map(real))
      }, sources)
    },
    construct(_, args) {
      const { sources, text } = argumentsOf(args)
      const made = valueOf(`new ${key}(${text})`, () => {
        if (typeof state.real !== "function") throw new Error(`effect3: ${key} is not a constructor`)
        return Reflect.construct(state.real, args.map(real))
      }, sources)
      if (isHandle(made)) return made
      if (typeof made !== "object" || made === null) throw new Error(`effect3: new ${key} made no object`)
      return made
    },
    ownKeys() {
      const names = valueOf(`Object.keys(${key})`, () => Object.keys(Object(state.real)))
      if (!Array.isArray(names)) throw new Error(`effect3: no keys of ${key}`)
      return [...names.filter((name): name is string => typeof name === "string" && name !== "prototype"), "prototype"]
    },
    getOwnPropertyDescriptor(_, name): PropertyDescriptor | undefined {
      if (name === "prototype") return Reflect.getOwnPropertyDescriptor(target, name)
      if (typeof name === "symbol") return undefined
      const names = valueOf(`Object.keys(${key})`, () => Object.keys(Object(state.real)))
      if (!Array.isArray(names) || !names.includes(name)) return undefined
      return { value: Reflect.get(proxy, name), writable: true, enumerable: true, configurable: true }
    }
  })
  handles.set(proxy, state)
  if (!isHandle(proxy)) throw new Error("effect3: not a handle")
  return proxy
}

/** Whether `value` is a handle (a Proxy of a function, callable and constructible, whose members are recorded). */
export const isHandle = (value: unknown): value is Effect3 =>
  (typeof value === "function" || (typeof value === "object" && value !== null)) && handles.has(value)

/** The handle of an Effect 3 module: `effect3("Access")` (packages/schema/src/Access.ts), `effect3("effect/Schema")`. */
export const effect3 = (module: string): Effect3 => {
  if (recording && !modules.has(module)) throw new Error(`effect3: no Effect 3 module ${module}`)
  return handle(module, modules.get(module))
}

// A result that holds parts of its arguments (a decoded input, a document after a step) keeps them as pointers into
// them, `{ "%": "at", source, path }`: the arguments are there when the fixture is read back.

interface Node {
  readonly hash: string
  readonly size: number
}

/** A Merkle hash and the JSON size of every object, array and long string of `root`, bottom-up. */
const measure = (root: FixtureJson, nodes: Map<object, Node>): Node => {
  if (typeof root === "string") return { hash: root.length >= 256 ? hash(`s${root}`) : "", size: root.length + 2 }
  if (typeof root !== "object" || root === null) return { hash: "", size: String(root).length }
  const known = nodes.get(root)
  if (known !== undefined) return known
  const parts: Array<string> = []
  let size = 2
  const children = Array.isArray(root) ? root.map((item, index): [string, FixtureJson] => [String(index), item]) : Object.entries(root)
  for (const [key, child] of children) {
    const node = measure(child, nodes)
    parts.push(`${key}:${node.hash === "" ? JSON.stringify(child) : node.hash}`)
    size += node.size + key.length + 4
  }
  const node = { hash: hash(`${Array.isArray(root) ? "a" : "o"}${parts.join(",")}`), size }
  nodes.set(root, node)
  return node
}

/** Where each large part of the sources is: by hash, its source and path. */
const partsOf = (sources: ReadonlyArray<FixtureJson | undefined>): Map<string, { readonly source: number; readonly path: ReadonlyArray<string | number> }> => {
  const out = new Map<string, { readonly source: number; readonly path: ReadonlyArray<string | number> }>()
  sources.forEach((source, index) => {
    if (source === undefined) return
    const nodes = new Map<object, Node>()
    const walk = (value: FixtureJson, path: Array<string | number>) => {
      const node = measure(value, nodes)
      if (node.size >= 256 && node.hash !== "" && !out.has(node.hash)) out.set(node.hash, { source: index, path: [...path] })
      if (typeof value !== "object" || value === null) return
      if (Array.isArray(value)) value.forEach((item, at) => walk(item, [...path, at]))
      else for (const [key, item] of Object.entries(value)) walk(item, [...path, key])
    }
    walk(source, [])
  })
  return out
}

/** `value` with each large part the sources hold as a pointer into them. */
const withPointers = (value: FixtureJson, allSources: () => ReadonlyArray<FixtureJson | undefined>): FixtureJson => {
  const nodes = new Map<object, Node>()
  if (measure(value, nodes).size < 256) return value
  const sources = allSources()
  if (sources.every((source) => source === undefined)) return value
  const parts = partsOf(sources)
  if (parts.size === 0) return value
  const walk = (node: FixtureJson): FixtureJson => {
    const measured = measure(node, nodes)
    const part = measured.size >= 256 && measured.hash !== "" ? parts.get(measured.hash) : undefined
    if (part !== undefined) return { "%": "at", source: part.source, path: [...part.path] }
    if (typeof node !== "object" || node === null) return node
    if (Array.isArray(node)) return node.map(walk)
    if ("%" in node && node["%"] !== "instance") return node
    return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, walk(item)]))
  }
  return walk(value)
}

/** `value` with its pointers (`withPointers`) read from the sources. */
const withoutPointers = (value: FixtureJson, sources: () => ReadonlyArray<FixtureJson | undefined>): FixtureJson => {
  if (typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) return value.map((item) => withoutPointers(item, sources))
  if (value["%"] === "at") {
    const source = sources()[Number(value["source"])]
    const path = value["path"]
    if (source === undefined || !Array.isArray(path)) throw new Error("effect3: a pointer to no argument")
    return path.reduce<FixtureJson>((node, step) => {
      const next = Array.isArray(node) ? node[Number(step)] : isFixtureObject(node) ? node[String(step)] : undefined
      if (next === undefined) throw new Error(`effect3: a pointer to nothing (${JSON.stringify(path)})`)
      return next
    }, source)
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withoutPointers(item, sources)]))
}

/**
 * One step of Effect 3 recorded as data under `name(args)`: `compute` runs in record mode only, with the handles it
 * uses computing without recording. The result (handles and copies in it read as the real values) is returned as
 * the fixture reads back, in both modes (objects linked to the real ones while recording). The parts of the result
 * that its arguments (or `base`, a value the test has that the result is close to) hold are kept as pointers into them.
 */
export const recordStep = (name: string, args: ReadonlyArray<unknown>, compute: () => unknown, base?: unknown): unknown => {
  const { sources: argumentSources, text } = argumentsOf(args, base)
  const key = `${name}(${text})`
  const sources = () => argumentSources
  if (recording) {
    silent++
    let value: unknown
    try {
      value = real(compute())
    } finally {
      silent--
    }
    if (silent > 0) return fromFixture(toFixture(value), value)
    const stored = withPointers(toFixture(value), sources)
    store(key, { value: stored })
    return fromFixture(withoutPointers(stored, sources), value)
  }
  const entry = lookup(key)
  if ("ref" in entry) throw new Error(`effect3: ${key} was recorded as no data`)
  return fromFixture(withoutPointers(entry.value, sources))
}

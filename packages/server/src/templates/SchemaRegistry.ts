/**
 * The JSON Schemas template documents are validated against, one per `schemaVersion`: the `<schemaVersion>.json` files
 * of the operator's folder (`ORGPLANE_TEMPLATE_SCHEMAS_DIR`), compiled with Ajv at start-up (SchemaCompiler.ts, loaded only then). A file that cannot be
 * read, parsed or compiled stops start-up with a message naming it, rather than serving templates it would not check.
 * Without the setting nothing is registered and every document is stored unvalidated.
 */
import { InvalidRequest } from "@orgplane/schema"
import type { ErrorObject } from "ajv"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { lazily } from "../platform/Lazy.js"
import type { Compiled } from "./SchemaCompiler.js"
import { invalidSetting } from "../platform/Config.js"

const compiler = lazily(() => import("./SchemaCompiler.js"))

/** The documented environment variables, in the style of platform/Config.ts's (for `serve --help` and the README). */
export const environment = [
  [
    "ORGPLANE_TEMPLATE_SCHEMAS_DIR",
    "(none)",
    "A folder of JSON Schema files, `<schemaVersion>.json` (draft-07, 2019-09 or 2020-12 by their `$schema`), that template documents declaring that `schemaVersion` are validated against; a file that does not compile stops start-up. Unset: documents are stored unvalidated."
  ]
] as const

/** Settings given in code (tests, an embedding host); `undefined` keeps the environment's. */
export interface Options {
  readonly templateSchemasDir?: string | undefined
}

/** One violation of a registered schema: where in the document, which keyword, and Ajv's message. */
export interface Violation {
  readonly path: ReadonlyArray<string | number>
  readonly keyword: string
  readonly message: string
}

export interface Registry {
  /** Whether a schema is registered for `schemaVersion`. */
  readonly has: (schemaVersion: string) => boolean
  /** The violations of the schema registered for `schemaVersion` (none when valid); undefined when none is registered. */
  readonly check: (schemaVersion: string, document: unknown) => ReadonlyArray<Violation> | undefined
  /** A copy of the document with the registered schema's defaults filled in; undefined when none is registered. */
  readonly resolve: (schemaVersion: string, document: Schema.Json) => Schema.Json | undefined
  readonly versions: ReadonlyArray<string>
}

export class TemplateSchemas extends Context.Service<TemplateSchemas, Registry>()("@orgplane/server/templates/SchemaRegistry") {}

/** The most violations a 400 lists: a large document against a strict schema could otherwise give thousands. */
export const MAX_VIOLATIONS = 100

const SCHEMA_VERSION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** A JSON Pointer's tokens as a path: array indexes as numbers (read off the document), names unescaped. */
const pathOf = (document: unknown, pointer: string): Array<string | number> => {
  if (pointer === "") return []
  const path: Array<string | number> = []
  let at: unknown = document
  for (const raw of pointer.slice(1).split("/")) {
    const token = raw.replace(/~1/g, "/").replace(/~0/g, "~")
    if (Array.isArray(at) && /^(0|[1-9][0-9]*)$/.test(token)) {
      path.push(Number(token))
      at = at[Number(token)]
    } else {
      path.push(token)
      at = typeof at === "object" && at !== null ? (at as Record<string, unknown>)[token] : undefined
    }
  }
  return path
}

/** An Ajv error as a violation: `required` and `additionalProperties` point at the member they are about. */
const violation = (document: unknown, error: ErrorObject): Violation => {
  const path = pathOf(document, error.instancePath)
  const member = error.keyword === "required"
    ? error.params.missingProperty
    : error.keyword === "additionalProperties"
    ? error.params.additionalProperty
    : undefined
  return {
    path: typeof member === "string" ? [...path, member] : path,
    keyword: error.keyword,
    message: error.message ?? `fails \`${error.keyword}\``
  }
}

export const registryOf = (schemas: ReadonlyMap<string, Compiled>): Registry => ({
  versions: [...schemas.keys()].sort(),
  has: (schemaVersion) => schemas.has(schemaVersion),
  check: (schemaVersion, document) => {
    const compiled = schemas.get(schemaVersion)
    if (compiled === undefined) return undefined
    if (compiled.validate(document)) return []
    return (compiled.validate.errors ?? []).map((error) => violation(document, error))
  },
  resolve: (schemaVersion, document) => {
    const compiled = schemas.get(schemaVersion)
    if (compiled === undefined) return undefined
    const copy = structuredClone(document)
    // A document stored valid may no longer be so under a changed schema file: its defaults are filled in anyway.
    compiled.withDefaults(copy)
    return copy
  }
})

/** The 400 of a document that fails its registered schema: every violation (up to `MAX_VIOLATIONS`) under `document`. */
export const invalidDocument = (schemaVersion: string, violations: ReadonlyArray<Violation>) =>
  new InvalidRequest({
    details: [
      ...violations.slice(0, MAX_VIOLATIONS).map((v) => ({
        message: `${v.message} (schema ${schemaVersion}, keyword \`${v.keyword}\`)`,
        path: ["document", ...v.path],
        code: "schema_violation",
        keyword: v.keyword
      })),
      ...(violations.length > MAX_VIOLATIONS
        ? [{ message: `and ${violations.length - MAX_VIOLATIONS} more violations`, path: ["document"], code: "schema_violation" }]
        : [])
    ]
  })

/** A refused setting, named in its message (`ORGPLANE_X: …`). */
const invalidDir = (message: string) => invalidSetting("ORGPLANE_TEMPLATE_SCHEMAS_DIR", message)

/** A file system error's code (`ENOENT`), else the error as text. */
const errorCode = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : String(error)

/** Reads and compiles every `*.json` file of `dir`; other files are left alone. */
export const load = Effect.fn("SchemaRegistry.load")(function*(dir: string): Effect.fn.Return<Registry, Config.ConfigError> {
  const names = yield* Effect.tryPromise({
    try: () => Fs.readdir(dir),
    catch: (error) => invalidDir(`${dir} cannot be read (${errorCode(error)})`)
  })
  const schemas = new Map<string, Compiled>()
  const { compile } = yield* compiler
  for (const name of names.filter((name) => name.endsWith(".json")).sort()) {
    const file = Path.join(dir, name)
    const version = name.slice(0, -".json".length)
    if (!SCHEMA_VERSION.test(version)) {
      return yield* Effect.fail(invalidDir(`${file}: "${version}" is not a schemaVersion (1 to 64 letters, digits, '.', '-' or '_')`))
    }
    const text = yield* Effect.tryPromise({
      try: () => Fs.readFile(file, "utf8"),
      catch: (error) => invalidDir(`${file} cannot be read (${errorCode(error)})`)
    })
    const compiled = yield* Effect.try({
      try: () => compile(JSON.parse(text)),
      catch: (error) => invalidDir(`${file} is not a JSON Schema Ajv compiles: ${error instanceof Error ? error.message : String(error)}`)
    })
    schemas.set(version, compiled)
  }
  return registryOf(schemas)
})

const dirFromEnvironment = Config.option(Config.String("ORGPLANE_TEMPLATE_SCHEMAS_DIR")).pipe(
  Config.map((value) => Option.getOrUndefined(Option.filter(value, (text) => text.trim() !== "")))
)

export const layer = (options: Options = {}) =>
  Layer.effect(
    TemplateSchemas,
    Effect.gen(function*() {
      const dir = options.templateSchemasDir === undefined ? yield* dirFromEnvironment : options.templateSchemasDir
      return dir === undefined ? registryOf(new Map()) : yield* load(dir)
    })
  )

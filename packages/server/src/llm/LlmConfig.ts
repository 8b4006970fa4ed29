/**
 * What the LLM providers group works with: the provider catalog (the models.dev snapshot shipped in
 * `CatalogSnapshot.ts`, or the operator's JSON file named by `ORGPLANE_LLM_CATALOG`, which replaces it) and how many
 * connect reads one member may make per minute (`ORGPLANE_LLM_CONNECT_PER_MINUTE`). A catalog file that cannot be
 * read or decoded stops start-up with a message naming the file and what is wrong.
 */
import { LlmCatalog } from "@orgplane/schema"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Fs from "node:fs/promises"
import { CATALOG_SNAPSHOT_JSON } from "./CatalogSnapshot.js"
import { invalidSetting } from "../platform/Config.js"

export interface LlmSettings {
  readonly catalog: LlmCatalog
  /** Connect reads one member may make per minute, over all providers. */
  readonly connectPerMinute: number
}

export class LlmConfig extends Context.Service<LlmConfig, LlmSettings>()("@orgplane/server/llm/LlmConfig") {}

export const defaultConnectPerMinute = 60

/** The documented environment variables, in the style of platform/Config.ts's (for `serve --help` and the README). */
export const environment = [
  [
    "ORGPLANE_LLM_CATALOG",
    "(the shipped models.dev snapshot)",
    "A JSON file holding an LLM provider catalog ({source, revision, providers: [{id, name, apiStyle, baseUrl, docUrl, models: [...]}]}, the shape scripts/refresh-llm-catalog.ts writes) that replaces the shipped one; a bad file stops start-up."
  ],
  ["ORGPLANE_LLM_CONNECT_PER_MINUTE", String(defaultConnectPerMinute), "Connect reads (which give out an LLM provider's credential) one member may make per minute."]
] as const

/** Settings given in code (tests, an embedding host); `undefined` keeps the environment's. */
export interface Options {
  readonly llmCatalogFile?: string | undefined
  readonly llmConnectPerMinute?: number | undefined
}

/** A refused setting, named in its message (`ORGPLANE_X: …`). */
const invalid = invalidSetting

const decodeCatalog = Schema.decodeUnknownResult(LlmCatalog)

/**
 * A catalog's JSON text, decoded and checked: each provider id once. (A file that is not a catalog is described by
 * the schema decoder, every issue of it, after the line `not an LLM provider catalog:`.)
 */
export const parseCatalog = (text: string): Result.Result<LlmCatalog, string> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return Result.fail(`not JSON (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`)
  }
  const decoded = decodeCatalog(parsed, { errors: "all" })
  if (Result.isFailure(decoded)) return Result.fail(`not an LLM provider catalog:\n${decoded.failure.message}`)
  const seen = new Set<string>()
  for (const [index, provider] of decoded.success.providers.entries()) {
    if (seen.has(provider.id)) return Result.fail(`providers[${index}].id "${provider.id}" appears twice`)
    seen.add(provider.id)
  }
  return Result.succeed(decoded.success)
}

/** The shipped snapshot, decoded once: a broken snapshot is a bug of the package, not of the configuration. */
const shipped = Effect.suspend(() =>
  Result.match(parseCatalog(CATALOG_SNAPSHOT_JSON), {
    onFailure: (message) => Effect.die(new Error(`The shipped LLM catalog is broken: ${message}`)),
    onSuccess: Effect.succeed
  })
)

const readCatalog = (file: string): Effect.Effect<LlmCatalog, Config.ConfigError> =>
  Effect.tryPromise({
    try: () => Fs.readFile(file, "utf8"),
    catch: (error) => invalid("ORGPLANE_LLM_CATALOG", `${file}: cannot be read (${errorCode(error)})`)
  }).pipe(
    Effect.flatMap((text) => Effect.fromResult(Result.mapError(parseCatalog(text), (message) => invalid("ORGPLANE_LLM_CATALOG", `${file}: ${message}`))))
  )

/** A file system error's code (`ENOENT`), else the error as text. */
const errorCode = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : String(error)

const fileFromEnvironment = Config.option(Config.String("ORGPLANE_LLM_CATALOG")).pipe(
  Config.map((value) => Option.getOrUndefined(Option.filter(value, (text) => text.trim() !== "")))
)
const perMinuteFromEnvironment = Config.Int("ORGPLANE_LLM_CONNECT_PER_MINUTE").pipe(Config.withDefault(defaultConnectPerMinute))

export const settings = Effect.fn("LlmConfig.settings")(function*(options: Options = {}) {
  const file = options.llmCatalogFile ?? (yield* fileFromEnvironment)
  const catalog = file === undefined ? yield* shipped : yield* readCatalog(file)
  const connectPerMinute = options.llmConnectPerMinute ?? (yield* perMinuteFromEnvironment)
  if (!Number.isInteger(connectPerMinute) || connectPerMinute < 1) {
    return yield* Effect.fail(invalid("ORGPLANE_LLM_CONNECT_PER_MINUTE", "must be a whole number of at least 1"))
  }
  return { catalog, connectPerMinute } satisfies LlmSettings
})

export const layer = (options: Options = {}) => Layer.effect(LlmConfig, settings(options))

/**
 * What the LLM providers group works with: the provider catalog (the models.dev snapshot shipped in
 * `CatalogSnapshot.ts`, or the operator's JSON file named by `ORGPLANE_LLM_CATALOG`, which replaces it) and how many
 * connect reads one member may make per minute (`ORGPLANE_LLM_CONNECT_PER_MINUTE`). A catalog file that cannot be
 * read or decoded stops start-up with a message naming the file and what is wrong.
 */
import { LlmCatalog } from "@orgplane/schema"
import { Config, ConfigError, Context, Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import * as Fs from "node:fs/promises"
import { CATALOG_SNAPSHOT_JSON } from "./CatalogSnapshot.js"

export interface LlmSettings {
  readonly catalog: LlmCatalog
  /** Connect reads one member may make per minute, over all providers. */
  readonly connectPerMinute: number
}

export class LlmConfig extends Context.Tag("@orgplane/server/llm/LlmConfig")<LlmConfig, LlmSettings>() {}

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

const invalid = (name: string, message: string) => ConfigError.InvalidData([name], message)

/** A catalog's JSON text, decoded and checked: each provider id once. */
export const parseCatalog = (text: string): Either.Either<LlmCatalog, string> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return Either.left(`not JSON (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`)
  }
  const decoded = Schema.decodeUnknownEither(LlmCatalog, { errors: "all" })(parsed)
  if (Either.isLeft(decoded)) return Either.left(`not an LLM provider catalog:\n${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`)
  const seen = new Set<string>()
  for (const [index, provider] of decoded.right.providers.entries()) {
    if (seen.has(provider.id)) return Either.left(`providers[${index}].id "${provider.id}" appears twice`)
    seen.add(provider.id)
  }
  return Either.right(decoded.right)
}

/** The shipped snapshot, decoded once: a broken snapshot is a bug of the package, not of the configuration. */
const shipped = Effect.suspend(() =>
  Either.match(parseCatalog(CATALOG_SNAPSHOT_JSON), {
    onLeft: (message) => Effect.dieMessage(`The shipped LLM catalog is broken: ${message}`),
    onRight: Effect.succeed
  })
)

const readCatalog = (file: string): Effect.Effect<LlmCatalog, ConfigError.ConfigError> =>
  Effect.tryPromise({
    try: () => Fs.readFile(file, "utf8"),
    catch: (error) => invalid("ORGPLANE_LLM_CATALOG", `${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`)
  }).pipe(
    Effect.flatMap((text) => Either.mapLeft(parseCatalog(text), (message) => invalid("ORGPLANE_LLM_CATALOG", `${file}: ${message}`)))
  )

const fileFromEnvironment = Config.option(Config.string("ORGPLANE_LLM_CATALOG")).pipe(
  Config.map((value) => Option.getOrUndefined(Option.filter(value, (text) => text.trim() !== "")))
)
const perMinuteFromEnvironment = Config.integer("ORGPLANE_LLM_CONNECT_PER_MINUTE").pipe(Config.withDefault(defaultConnectPerMinute))

export const settings = (options: Options = {}): Effect.Effect<LlmSettings, ConfigError.ConfigError> =>
  Effect.gen(function*() {
    const file = options.llmCatalogFile ?? (yield* fileFromEnvironment)
    const catalog = file === undefined ? yield* shipped : yield* readCatalog(file)
    const connectPerMinute = options.llmConnectPerMinute ?? (yield* perMinuteFromEnvironment)
    if (!Number.isInteger(connectPerMinute) || connectPerMinute < 1) {
      return yield* Effect.fail(invalid("ORGPLANE_LLM_CONNECT_PER_MINUTE", "must be a whole number of at least 1"))
    }
    return { catalog, connectPerMinute }
  })

export const layer = (options: Options = {}) => Layer.effect(LlmConfig, settings(options))

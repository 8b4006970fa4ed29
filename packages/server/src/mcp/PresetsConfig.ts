/**
 * What `resolve` works with: the curated presets (`McpPresets`: the built-in list, or the operator's file named by
 * `ORGPLANE_MCP_PRESETS_FILE`, JSON or YAML, which replaces it) and how long one probe may take
 * (`McpProbeSettings`, `ORGPLANE_MCP_PROBE_TIMEOUT`). A presets file that cannot be read or decoded stops start-up
 * with a message naming the file and what is wrong, rather than serving a list the operator did not write.
 */
import { McpPreset, McpServerUrl } from "@orgplane/schema"
import { Config, ConfigError, Context, Duration, Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import * as Fs from "node:fs/promises"
import * as Yaml from "yaml"
import { BUILT_IN } from "./Presets.js"

export class McpPresets extends Context.Tag("@orgplane/server/mcp/PresetsConfig/McpPresets")<McpPresets, ReadonlyArray<McpPreset>>() {}

export interface ProbeSettings {
  /** Longest one candidate's discovery may take, every request of it included; then it counts as no answer. */
  readonly timeout: Duration.Duration
}

export class McpProbeSettings extends Context.Tag("@orgplane/server/mcp/PresetsConfig/McpProbeSettings")<McpProbeSettings, ProbeSettings>() {}

/** 8 seconds, as the reference's resolve: candidates are probed at once, so this bounds the whole request. */
export const defaultProbeTimeout = Duration.seconds(8)

/** The documented environment variables, in the style of platform/Config.ts's (for `serve --help` and the README). */
export const environment = [
  [
    "ORGPLANE_MCP_PRESETS_FILE",
    "(the built-in presets)",
    "A JSON or YAML file holding an array of MCP presets (presetId, displayName, description, url, authType, requiresOAuthClient, optional authorizationServerIssuer and defaultOAuthScopes) that replaces the built-in list; a bad file stops start-up."
  ],
  ["ORGPLANE_MCP_PROBE_TIMEOUT", "8 seconds", "Longest one candidate endpoint's discovery may take when resolving an MCP server; then it counts as no answer."]
] as const

/** Settings given in code (tests, an embedding host); `undefined` keeps the environment's. */
export interface Options {
  readonly mcpPresetsFile?: string | undefined
  readonly mcpProbeTimeout?: Duration.DurationInput | undefined
}

const FileContent = Schema.Array(McpPreset)
const validUrl = Schema.is(McpServerUrl)

const invalidFile = (file: string, message: string) =>
  ConfigError.InvalidData(["ORGPLANE_MCP_PRESETS_FILE"], `${file}: ${message}`)

/**
 * The presets a file's text holds (YAML, of which JSON is a subset): an array of presets as `GET
 * /v1/mcp-connections/presets` shows them, each `url` an MCP server URL, each `presetId` once.
 */
export const parsePresets = (text: string): Either.Either<ReadonlyArray<McpPreset>, string> => {
  let parsed: unknown
  try {
    parsed = Yaml.parse(text)
  } catch (error) {
    return Either.left(`not JSON or YAML (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`)
  }
  const decoded = Schema.decodeUnknownEither(FileContent, { errors: "all", onExcessProperty: "error" })(parsed)
  if (Either.isLeft(decoded)) return Either.left(`not an array of MCP presets:\n${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`)
  const seen = new Set<string>()
  for (const [index, preset] of decoded.right.entries()) {
    if (!validUrl(preset.url)) return Either.left(`[${index}].url is not an http(s) MCP server URL without credentials, fragment or secret`)
    if (seen.has(preset.presetId)) return Either.left(`[${index}].presetId "${preset.presetId.slice(0, 100)}" appears twice`)
    seen.add(preset.presetId)
  }
  return Either.right(decoded.right)
}

const readPresets = (file: string): Effect.Effect<ReadonlyArray<McpPreset>, ConfigError.ConfigError> =>
  Effect.tryPromise({
    try: () => Fs.readFile(file, "utf8"),
    catch: (error) => invalidFile(file, `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`)
  }).pipe(Effect.flatMap((text) => Either.mapLeft(parsePresets(text), (message) => invalidFile(file, message))))

const fileFromEnvironment = Config.option(Config.string("ORGPLANE_MCP_PRESETS_FILE")).pipe(
  Config.map((value) => Option.getOrUndefined(Option.filter(value, (text) => text.trim() !== "")))
)
const timeoutFromEnvironment = Config.duration("ORGPLANE_MCP_PROBE_TIMEOUT").pipe(Config.withDefault(defaultProbeTimeout))

/** The presets: the file's when one is named (in code or in the environment), otherwise the built-in list. */
export const presets = (options: Options = {}): Effect.Effect<ReadonlyArray<McpPreset>, ConfigError.ConfigError> =>
  Effect.flatMap(options.mcpPresetsFile === undefined ? fileFromEnvironment : Effect.succeed(options.mcpPresetsFile), (file) =>
    file === undefined ? Effect.succeed(BUILT_IN) : readPresets(file))

export const probeSettings = (options: Options = {}): Effect.Effect<ProbeSettings, ConfigError.ConfigError> =>
  Effect.gen(function*() {
    const timeout = options.mcpProbeTimeout === undefined ? yield* timeoutFromEnvironment : Duration.decode(options.mcpProbeTimeout)
    if (Duration.toMillis(timeout) <= 0) {
      return yield* Effect.fail(ConfigError.InvalidData(["ORGPLANE_MCP_PROBE_TIMEOUT"], "must be a positive duration, for example `8 seconds`"))
    }
    return { timeout }
  })

export const layer = (options: Options = {}) =>
  Layer.merge(Layer.effect(McpPresets, presets(options)), Layer.effect(McpProbeSettings, probeSettings(options)))

/**
 * What `resolve` works with: the curated presets (`McpPresets`: the built-in list, or the operator's file named by
 * `ORGPLANE_MCP_PRESETS_FILE`, JSON or YAML, which replaces it) and how long one probe may take
 * (`McpProbeSettings`, `ORGPLANE_MCP_PROBE_TIMEOUT`). A presets file that cannot be read or decoded stops start-up
 * with a message naming the file and what is wrong, rather than serving a list the operator did not write.
 */
import { McpPreset, McpServerUrl } from "@orgplane/schema"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Fs from "node:fs/promises"
import * as Yaml from "yaml"
import { BUILT_IN } from "./Presets.js"
import { invalidSetting } from "../platform/Config.js"

export class McpPresets extends Context.Service<McpPresets, ReadonlyArray<McpPreset>>()("@orgplane/server/mcp/PresetsConfig/McpPresets") {}

export interface ProbeSettings {
  /** Longest one candidate's discovery may take, every request of it included; then it counts as no answer. */
  readonly timeout: Duration.Duration
}

export class McpProbeSettings extends Context.Service<McpProbeSettings, ProbeSettings>()("@orgplane/server/mcp/PresetsConfig/McpProbeSettings") {}

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
  readonly mcpProbeTimeout?: Duration.Input | undefined
}

const decodeFileContent = Schema.decodeUnknownResult(Schema.Array(McpPreset))
const validUrl = Schema.is(McpServerUrl)

/** A refused setting, named, so the start-up error says which one (`ORGPLANE_X: message`). */
const invalid = invalidSetting

const invalidFile = (file: string, message: string) => invalid("ORGPLANE_MCP_PRESETS_FILE", `${file}: ${message}`)

/** A file system error's code (`ENOENT`), else the error as text. */
const errorCode = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : String(error)

/**
 * The presets a file's text holds (YAML, of which JSON is a subset): an array of presets as `GET
 * /v1/mcp-connections/presets` shows them, each `url` an MCP server URL, each `presetId` once. A text that is not
 * such an array is refused with the schema's description of every issue, after the line `not an array of MCP presets:`.
 */
export const parsePresets = (text: string): Result.Result<ReadonlyArray<McpPreset>, string> => {
  let parsed: unknown
  try {
    parsed = Yaml.parse(text)
  } catch (error) {
    return Result.fail(`not JSON or YAML (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`)
  }
  const decoded = decodeFileContent(parsed, { errors: "all", onExcessProperty: "error" })
  if (Result.isFailure(decoded)) return Result.fail(`not an array of MCP presets:\n${decoded.failure.message}`)
  const seen = new Set<string>()
  for (const [index, preset] of decoded.success.entries()) {
    if (!validUrl(preset.url)) return Result.fail(`[${index}].url is not an http(s) MCP server URL without credentials, fragment or secret`)
    if (seen.has(preset.presetId)) return Result.fail(`[${index}].presetId "${preset.presetId.slice(0, 100)}" appears twice`)
    seen.add(preset.presetId)
  }
  return Result.succeed(decoded.success)
}

const readPresets = (file: string): Effect.Effect<ReadonlyArray<McpPreset>, Config.ConfigError> =>
  Effect.tryPromise({
    try: () => Fs.readFile(file, "utf8"),
    catch: (error) => invalidFile(file, `cannot be read (${errorCode(error)})`)
  }).pipe(Effect.flatMap((text) => Effect.fromResult(Result.mapError(parsePresets(text), (message) => invalidFile(file, message)))))

const fileFromEnvironment = Config.option(Config.String("ORGPLANE_MCP_PRESETS_FILE")).pipe(
  Config.map((value) => Option.getOrUndefined(Option.filter(value, (text) => text.trim() !== "")))
)
const timeoutFromEnvironment = Config.Duration("ORGPLANE_MCP_PROBE_TIMEOUT").pipe(Config.withDefault(defaultProbeTimeout))

/** The presets: the file's when one is named (in code or in the environment), otherwise the built-in list. */
export const presets = Effect.fn("PresetsConfig.presets")(function*(options: Options = {}) {
  const file = options.mcpPresetsFile === undefined ? yield* fileFromEnvironment : options.mcpPresetsFile
  return file === undefined ? BUILT_IN : yield* readPresets(file)
})

export const probeSettings = Effect.fn("PresetsConfig.probeSettings")(function*(options: Options = {}) {
  const timeout = options.mcpProbeTimeout === undefined ? yield* timeoutFromEnvironment : Duration.fromInputUnsafe(options.mcpProbeTimeout)
  if (Duration.toMillis(timeout) <= 0) {
    return yield* Effect.fail(invalid("ORGPLANE_MCP_PROBE_TIMEOUT", "must be a positive duration, for example `8 seconds`"))
  }
  return { timeout } satisfies ProbeSettings
})

export const layer = (options: Options = {}) =>
  Layer.merge(Layer.effect(McpPresets, presets(options)), Layer.effect(McpProbeSettings, probeSettings(options)))

/** The tool runner's settings: how long a tool call may take (other MCP requests get at most 30 seconds). */
import { Config, ConfigError, Context, Duration, Effect, Layer } from "effect"

export interface ToolSettings {
  /** Longest a `tools/call` request may take: connecting, sending, and its whole answer. */
  readonly toolTimeout: Duration.Duration
}

export class ToolConfig extends Context.Tag("@orgplane/server/mcp/ToolConfig")<ToolConfig, ToolSettings>() {}

/** 120 seconds, as the reference allows a tool call. */
export const defaultToolTimeout = Duration.seconds(120)

/** The documented environment variables, in the style of platform/Config.ts's (for `serve --help` and the README). */
export const environment = [
  [
    "ORGPLANE_MCP_TOOL_TIMEOUT",
    "120 seconds",
    "Longest an MCP tool call (POST /v1/mcp-connections/{id}/tools/call) may take; the session's other requests get at most 30 seconds (or this, if shorter). Then the call answers 502 tool_execution_failed (MCP_REQUEST_TIMEOUT)."
  ]
] as const

/** Settings given in code (tests, an embedding host); `undefined` keeps the environment's. */
export interface Options {
  readonly mcpToolTimeout?: Duration.DurationInput | undefined
}

const fromEnvironment = Config.duration("ORGPLANE_MCP_TOOL_TIMEOUT").pipe(Config.withDefault(defaultToolTimeout))

/** The settings from the environment, with `options` on top. */
export const settings = (options: Options = {}): Effect.Effect<ToolSettings, ConfigError.ConfigError> =>
  Effect.gen(function*() {
    const toolTimeout = options.mcpToolTimeout === undefined ? yield* fromEnvironment : Duration.decode(options.mcpToolTimeout)
    if (Duration.toMillis(toolTimeout) <= 0) {
      return yield* Effect.fail(ConfigError.InvalidData(["ORGPLANE_MCP_TOOL_TIMEOUT"], "must be a positive duration, for example `120 seconds`"))
    }
    return { toolTimeout }
  })

export const layer = (options: Options = {}) => Layer.effect(ToolConfig, settings(options))

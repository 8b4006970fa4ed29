/** The tool runner's settings: how long a tool call may take (other MCP requests get at most 30 seconds). */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { invalidSetting } from "../platform/Config.js"

export interface ToolSettings {
  /** Longest a `tools/call` request may take: connecting, sending, and its whole answer. */
  readonly toolTimeout: Duration.Duration
}

export class ToolConfig extends Context.Service<ToolConfig, ToolSettings>()("@orgplane/server/mcp/ToolConfig") {}

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
  readonly mcpToolTimeout?: Duration.Input | undefined
}

/** A refused setting, named, so the start-up error says which one (`ORGPLANE_X: message`). */
const invalid = invalidSetting

const fromEnvironment = Config.Duration("ORGPLANE_MCP_TOOL_TIMEOUT").pipe(Config.withDefault(defaultToolTimeout))

/** The settings from the environment, with `options` on top. */
export const settings = Effect.fn("ToolConfig.settings")(function*(options: Options = {}) {
  const toolTimeout = options.mcpToolTimeout === undefined ? yield* fromEnvironment : Duration.fromInputUnsafe(options.mcpToolTimeout)
  if (Duration.toMillis(toolTimeout) <= 0) {
    return yield* Effect.fail(invalid("ORGPLANE_MCP_TOOL_TIMEOUT", "must be a positive duration, for example `120 seconds`"))
  }
  return { toolTimeout } satisfies ToolSettings
})

export const layer = (options: Options = {}) => Layer.effect(ToolConfig, settings(options))

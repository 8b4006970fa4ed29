/** The settings of the server's MCP endpoint (`/mcp`): whether it is served, and which browser origins may call it. */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { invalidSetting } from "../platform/Config.js"

export interface AgentsSettings {
  /** Serve `/mcp` and its protected resource metadata; off, both are unknown routes. */
  readonly mcp: boolean
  /** The `Origin`s a request to `/mcp` may carry (exactly, `scheme://host[:port]`); a request without one passes. */
  readonly allowedOrigins: ReadonlyArray<string>
}

export class AgentsConfig extends Context.Service<AgentsConfig, AgentsSettings>()("@orgplane/server/agents/AgentsConfig") {}

/** The documented environment variables, in the style of platform/Config.ts's (for `serve --help` and the README). */
export const environment = [
  ["ORGPLANE_MCP", "false", "true: serve the API to AI agents as an MCP server at /mcp on this port (Streamable HTTP), with the caller's own session token or API key as `Authorization: Bearer <token>`."],
  ["ORGPLANE_MCP_ALLOWED_ORIGINS", "(none)", "Browser origins allowed to call /mcp besides the server's own (its ORGPLANE_PUBLIC_URL's, else the loopback address a request reached), comma-separated (say https://agent.example.com); a request carrying another Origin answers 403, one without Origin (any non-browser client) passes."]
] as const

/** Settings given in code (tests, an embedding host); `undefined` keeps the environment's. */
export interface Options {
  readonly mcp?: boolean | undefined
  readonly mcpAllowedOrigins?: ReadonlyArray<string> | undefined
}

/** `https://agent.example.com` as a browser sends it in `Origin`: a scheme, a host and a port only when not the default. */
const isOrigin = (value: string) => {
  try {
    const url = new URL(value)
    return (url.protocol === "https:" || url.protocol === "http:") && url.origin === value
  } catch {
    return false
  }
}

const fromEnvironment = Config.all({
  mcp: Config.Boolean("ORGPLANE_MCP").pipe(Config.withDefault(false)),
  allowedOrigins: Config.String("ORGPLANE_MCP_ALLOWED_ORIGINS").pipe(Config.withDefault(""))
})

/** The settings from the environment, with `options` on top; an allowed origin that is not one stops the start. */
export const settings = Effect.fn("AgentsConfig.settings")(function*(options: Options = {}) {
  const environment = yield* fromEnvironment
  const allowedOrigins = options.mcpAllowedOrigins ??
    environment.allowedOrigins.split(",").map((origin) => origin.trim()).filter((origin) => origin !== "")
  const wrong = allowedOrigins.find((origin) => !isOrigin(origin))
  if (wrong !== undefined) {
    return yield* Effect.fail(invalidSetting(
      "ORGPLANE_MCP_ALLOWED_ORIGINS",
      `${JSON.stringify(wrong)} is not an origin: write it as a browser sends it, scheme://host[:port] with no path or trailing slash`
    ))
  }
  return { mcp: options.mcp ?? environment.mcp, allowedOrigins } satisfies AgentsSettings
})

export const layer = (options: Options = {}) => Layer.effect(AgentsConfig, settings(options))

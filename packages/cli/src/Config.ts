/**
 * The CLI's environment variables, read through Effect `Config` (the only place the environment is consulted).
 * Server settings are not here: `orgplane serve` reads them with the server's own `settingsConfig`.
 */
import * as Config from "effect/Config"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Os from "node:os"
import * as Path from "node:path"

/** Treats an empty variable like an unset one, as shells make `VAR= cmd` easy to type by accident. */
const optionalString = (name: string) =>
  Config.option(Config.String(name)).pipe(Config.map(Option.filter((value: string) => value.trim() !== "")))

/** A secret variable, none when unset or blank. */
export const optionalSecret = (name: string) =>
  Config.option(Config.Redacted(name)).pipe(
    Config.map(Option.filter((value: Redacted.Redacted<string>) => Redacted.value(value).trim() !== ""))
  )

/** Credentials and target from the environment: they beat the profile file, flags beat them. */
export const environment = Config.all({
  url: optionalString("ORGPLANE_URL"),
  token: optionalSecret("ORGPLANE_TOKEN"),
  apiKey: optionalSecret("ORGPLANE_API_KEY"),
  profile: optionalString("ORGPLANE_PROFILE")
})

/** A password for `auth signup` / `auth login` in scripts, so it never appears in the process list. */
export const password = optionalSecret("ORGPLANE_PASSWORD")

/** A code-host access token for `connectors accounts connect` (else --token-stdin), likewise kept off the command line. */
export const CODEHOST_TOKEN_VARIABLE = "ORGPLANE_CODEHOST_TOKEN"
export const codehostToken = optionalSecret(CODEHOST_TOKEN_VARIABLE)

/** An OIDC client secret for `sso set` (else --client-secret-stdin), likewise kept off the command line. */
export const SSO_CLIENT_SECRET_VARIABLE = "ORGPLANE_SSO_CLIENT_SECRET"
export const ssoClientSecret = optionalSecret(SSO_CLIENT_SECRET_VARIABLE)

/** An MCP server's API key for `mcp connections create` (else --api-key-stdin), likewise kept off the command line. */
export const MCP_API_KEY_VARIABLE = "ORGPLANE_MCP_API_KEY"
export const mcpApiKey = optionalSecret(MCP_API_KEY_VARIABLE)

/** An MCP connection's OAuth client secret for `mcp connections create` (else --client-secret-stdin). */
export const MCP_CLIENT_SECRET_VARIABLE = "ORGPLANE_MCP_CLIENT_SECRET"
export const mcpClientSecret = optionalSecret(MCP_CLIENT_SECRET_VARIABLE)

/** An LLM provider's API key for `llm-providers create | set-credential` (else --api-key-stdin or --credential-file). */
export const LLM_API_KEY_VARIABLE = "ORGPLANE_LLM_API_KEY"
export const llmApiKey = optionalSecret(LLM_API_KEY_VARIABLE)

/** A suite's OAuth client secret for `connections suite-a|suite-b client set` (else --client-secret-stdin). */
export const SUITE_CLIENT_SECRET_VARIABLE = "ORGPLANE_SUITE_CLIENT_SECRET"
export const suiteClientSecret = optionalSecret(SUITE_CLIENT_SECRET_VARIABLE)

/** Whether a graphical session is there to open a browser in (Linux and other Unixes; macOS and Windows always have one). */
export const display = Config.all({ x11: optionalString("DISPLAY"), wayland: optionalString("WAYLAND_DISPLAY") })

/** `$ORGPLANE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/orgplane`, else `~/.config/orgplane`. */
export const configDirectory = Config.all({
  explicit: optionalString("ORGPLANE_CONFIG_DIR"),
  xdg: optionalString("XDG_CONFIG_HOME")
}).pipe(
  Config.map(({ explicit, xdg }) =>
    Option.getOrElse(explicit, () =>
      Path.join(Option.getOrElse(xdg, () => Path.join(Os.homedir(), ".config")), "orgplane")))
)

export const DEFAULT_URL = "http://127.0.0.1:8787"

/**
 * Options every command accepts (after its name, like `gh`): where to connect, with which credential, and how to
 * print. Each leaf command puts `global` in its config.
 */
import { Options } from "@effect/cli"
import type { Option, Redacted } from "effect"

export const global = {
  url: Options.text("url").pipe(
    Options.withDescription("Server URL (default: ORGPLANE_URL, else the profile's, else http://127.0.0.1:8787)."),
    Options.optional
  ),
  token: Options.redacted("token").pipe(
    Options.withDescription("Session token (default: ORGPLANE_TOKEN, else the profile's)."),
    Options.optional
  ),
  apiKey: Options.redacted("api-key").pipe(
    Options.withDescription("Organization API key (default: ORGPLANE_API_KEY, else the profile's)."),
    Options.optional
  ),
  profile: Options.text("profile").pipe(
    Options.withDescription("Profile to use (default: ORGPLANE_PROFILE, else 'default')."),
    Options.optional
  ),
  json: Options.boolean("json").pipe(
    Options.withDescription("Print the result as JSON on stdout (and errors as the API's JSON body on stderr).")
  )
}

export interface GlobalOptions {
  readonly url: Option.Option<string>
  readonly token: Option.Option<Redacted.Redacted>
  readonly apiKey: Option.Option<Redacted.Redacted>
  readonly profile: Option.Option<string>
  readonly json: boolean
}

/**
 * Flags every command but `serve` accepts (after its name, like `gh`): where to connect, with which credential, and
 * how to print. `Commands.leaf` adds them to each command.
 */
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Inputs from "./Inputs.js"

export const flags = {
  url: Inputs.optional(Inputs.text("url", {
    placeholder: "<url>",
    description: "Server URL. Default: ORGPLANE_URL, else the profile's, else http://127.0.0.1:8787."
  })),
  token: Inputs.optional(Inputs.secret("token", {
    placeholder: "<token>",
    description: "Session token. Default: ORGPLANE_TOKEN, else the profile's."
  })),
  apiKey: Inputs.optional(Inputs.secret("api-key", {
    placeholder: "<key>",
    description: "Organization API key. Default: ORGPLANE_API_KEY, else the profile's."
  })),
  profile: Inputs.optional(Inputs.text("profile", {
    placeholder: "<name>",
    description: "Profile of the config file to use. Default: ORGPLANE_PROFILE, else 'default'."
  })),
  json: Inputs.boolean("json", {
    description: "Print the result as JSON on stdout, and errors as JSON ({\"error\", \"message\"}) on stderr."
  })
}

export interface GlobalOptions {
  readonly url: Option.Option<string>
  readonly token: Option.Option<Redacted.Redacted<string>>
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly profile: Option.Option<string>
  readonly json: boolean
}

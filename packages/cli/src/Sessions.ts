/**
 * Commands that create a session (`auth signup`, `auth login`, `invitations accept --sign-up`): where the password
 * comes from, and how the new session is saved in the selected profile.
 */
import { Password, type Session, type User } from "@orgplane/schema"
import * as Prompt from "effect/cli/Prompt"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as CliConfig from "./Config.js"
import { UsageError } from "./Errors.js"
import * as Inputs from "./Inputs.js"
import * as Output from "./Output.js"
import * as Profiles from "./Profiles.js"
import type * as Target from "./Target.js"

export const password = Inputs.optional(Inputs.secret("password", {
  description: "Account password. Prefer the prompt or ORGPLANE_PASSWORD: command-line arguments are visible to other local users."
}))

export const force = Inputs.boolean("force", {
  description: "Replace the session of another account that the profile holds."
})

/**
 * A new session never silently replaces another account's: when the profile holds a credential that is not known to
 * be `email`'s, the command stops before sending anything unless `--force`.
 */
export const guard = (target: Target.Target, options: { readonly force: boolean; readonly email?: string }) =>
  Effect.gen(function*() {
    if (options.force || Option.isNone(target.profile)) return
    const stored = target.profile.value
    if (stored.token === undefined && stored.apiKey === undefined) return
    const sameAccount = options.email !== undefined && stored.email?.toLowerCase() === options.email.toLowerCase()
    if (sameAccount && Profiles.isFor(stored, target.url)) return
    const holder = stored.email !== undefined
      ? `the session of ${stored.email}`
      : stored.apiKey !== undefined
      ? "an API key"
      : "another session"
    return yield* new UsageError({
      message: `profile '${target.profileName}' already holds ${holder} (${stored.url}): pass --force to replace it, or --profile <name> to save this one under another name`
    })
  })

/** Where a password is read from: its flag, else its environment variable, else a prompt. */
export interface PasswordSource {
  readonly flag: string
  readonly variable: string
}

/** The account's password: `--password`, else ORGPLANE_PASSWORD. */
export const accountPassword: PasswordSource = { flag: "password", variable: "ORGPLANE_PASSWORD" }

/** The password that replaces it (`auth password`, `auth reset-password`): `--new-password`, else ORGPLANE_NEW_PASSWORD. */
export const replacementPassword: PasswordSource = { flag: "new-password", variable: "ORGPLANE_NEW_PASSWORD" }

/** The flag's value, else the source's variable, else a prompt when a person is at the keyboard. */
export const readPassword = (
  flag: Option.Option<Redacted.Redacted<string>>,
  options: { readonly confirm: boolean; readonly source?: PasswordSource }
) =>
  Effect.gen(function*() {
    const source = options.source ?? accountPassword
    if (Option.isSome(flag)) return flag.value
    const fromEnvironment = yield* Effect.orDie(CliConfig.optionalSecret(source.variable))
    if (Option.isSome(fromEnvironment)) return fromEnvironment.value
    if (!process.stdin.isTTY) {
      return yield* new UsageError({
        message: `no password: pass --${source.flag}, set ${source.variable}, or run in a terminal to be prompted`
      })
    }
    const first = yield* Prompt.run(Prompt.Password({ message: "Password" }))
    if (options.confirm) {
      const again = yield* Prompt.run(Prompt.Password({ message: "Repeat the password" }))
      if (Redacted.value(first) !== Redacted.value(again)) return yield* new UsageError({ message: "the passwords do not match" })
    }
    return first
  }).pipe(Effect.catchTag("QuitError", () => Effect.fail(new UsageError({ message: "cancelled" }))))

/** A password for a new account (or a new password): read (and confirmed) like `readPassword`, then checked with the API's rules. */
export const readNewPassword = (flag: Option.Option<Redacted.Redacted<string>>, source: PasswordSource = accountPassword) =>
  Effect.flatMap(readPassword(flag, { confirm: true, source }), (secret) =>
    Schema.decodeEffect(Password)(Redacted.value(secret)).pipe(
      Effect.mapError(() => new UsageError({ message: "password: must be 10 to 256 characters" }))
    ))

/** Stores the new session as the profile's credential, for the server it came from; returns the file's path. */
export const save = (target: Target.Target, result: { readonly user: User; readonly session: Session }) =>
  Profiles.update(target.profileName, (current) => ({
    ...(current !== undefined && Profiles.isFor(current, target.url) ? current : {}),
    url: target.url,
    token: result.session.token,
    email: result.user.email
  }))

/** After saving a session: a reminder when a flag or variable will keep being used instead of it. */
export const noteOverride = (options: { readonly json: boolean }, target: Target.Target) =>
  Option.isSome(target.credential) && target.credential.value.source !== "profile" && !options.json
    ? Output.note(
      `note: a ${target.credential.value.source === "flag" ? "--token/--api-key flag" : "ORGPLANE_TOKEN/ORGPLANE_API_KEY variable"} takes precedence over the saved session.`
    )
    : Effect.void

/**
 * Forgets the profile's saved session (and its email) when it is still `token`: signed out, or its account deleted.
 * A profile holding another credential by now is left alone.
 */
export const forget = (target: Target.Target, token: string) =>
  Profiles.update(target.profileName, (current) => {
    if (current?.token !== token) return current
    const { email: _email, token: _token, ...rest } = current
    return rest
  })

/** Keeps the profile's saved email that of its session's account (`token`'s), after the account's email changed. */
export const followEmail = (target: Target.Target, token: string, email: string) =>
  Profiles.update(target.profileName, (current) => (current?.token === token ? { ...current, email } : current))

/** `orgplane auth signup | login | logout`: sessions, saved in the selected profile. */
import { Command, Options } from "@effect/cli"
import { AuthResult, Email, PersonName } from "@orgplane/schema"
import { Effect, Option, Redacted, Schema } from "effect"
import { NotAuthenticated, UsageError, WrongPassword } from "../Errors.js"
import { global } from "../GlobalOptions.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as Profiles from "../Profiles.js"
import * as Sessions from "../Sessions.js"
import * as Target from "../Target.js"
import { group } from "./group.js"

const email = Inputs.option(Options.text("email").pipe(Options.withDescription("Account email.")), "--email", Email)

/** Saves the session, then prints the result (the token only with `--json`, for scripts). */
const report = (
  options: { readonly json: boolean },
  target: Target.Target,
  result: typeof AuthResult.Type,
  verb: string
) =>
  Effect.gen(function*() {
    const file = yield* Sessions.save(target, result)
    yield* Output.emit(options, AuthResult, result, () =>
      [
        `${verb} ${result.user.name} <${result.user.email}> (${result.user.id}) at ${target.url}.`,
        `Session saved to profile '${target.profileName}' in ${file} (expires ${Output.date(result.session.expiresAt)}).`
      ].join("\n"))
    yield* Sessions.noteOverride(options, target)
  })

export const signup = Command.make(
  "signup",
  {
    email,
    name: Inputs.option(Options.text("name").pipe(Options.withDescription("Your name.")), "--name", PersonName),
    password: Sessions.password,
    global
  },
  ({ email, global, name, password }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const checked = yield* Sessions.readNewPassword(password)
        const client = yield* Target.connect(target, { authenticated: false })
        const result = yield* client.users.signUp({ payload: { email, name, password: checked } })
        yield* report(global, target, result, "Signed up as")
        if (!global.json) yield* Output.note("Next: create an organization with 'orgplane orgs create <name>'.")
      }))
).pipe(Command.withDescription("Create an account and save its session in the profile."))

export const login = Command.make(
  "login",
  { email, password: Sessions.password, global },
  ({ email, global, password }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const secret = yield* Sessions.readPassword(password, { confirm: false })
        const client = yield* Target.connect(target, { authenticated: false })
        const result = yield* client.users.signIn({ payload: { email, password: Redacted.value(secret) } }).pipe(
          Effect.catchTag("Unauthorized", () => new WrongPassword())
        )
        yield* report(global, target, result, "Logged in as")
      }))
).pipe(Command.withDescription("Sign in with email and password and save the session in the profile."))

const LogoutResult = Schema.Struct({
  ok: Schema.Literal(true),
  url: Schema.String,
  profile: Schema.String,
  revoked: Schema.Boolean
})

export const logout = Command.make("logout", { global }, ({ global }) =>
  Target.run(global, (target) =>
    Effect.gen(function*() {
      if (Option.isNone(target.credential)) {
        return yield* new NotAuthenticated({ url: target.url, profile: target.profileName })
      }
      const credential = target.credential.value
      if (credential.kind === "apiKey") {
        return yield* new UsageError({
          message: "logout ends a session, but the credential is an API key: revoke keys with 'orgplane api-keys revoke <id>'"
        })
      }
      const client = yield* Target.connect(target, { authenticated: true })
      // An expired or revoked session is as logged out as it gets: still forget it locally.
      const revoked = yield* client.users.signOut().pipe(
        Effect.as(true),
        Effect.catchTag("Unauthorized", () => Effect.succeed(false))
      )
      const token = Redacted.value(credential.value)
      const stored = Option.getOrUndefined(target.profile)
      if (stored?.token === token) {
        yield* Profiles.update(target.profileName, (current) => {
          if (current?.token !== token) return current
          const { email: _email, token: _token, ...rest } = current
          return rest
        })
      }
      yield* Output.emit(
        global,
        LogoutResult,
        { ok: true, url: target.url, profile: target.profileName, revoked },
        () => `Logged out of ${target.url} (profile '${target.profileName}')${revoked ? "." : "; the session had already ended."}`
      )
    }))).pipe(Command.withDescription("Revoke the session on the server and remove it from the profile."))

export const auth = group("auth", "Sign up, log in and log out.", [signup, login, logout])

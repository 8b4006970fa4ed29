/**
 * `orgplane auth signup | login | logout | sessions | end-session | end-other-sessions | password | reset-password |
 * forgot-password | verify-email`: sessions, saved in the selected profile, the account's other sessions and
 * password, and getting back in without the password (a reset link) or proving the account's email.
 */
import {
  AuthResult,
  ChangePasswordResult,
  Email,
  EndedSessions,
  Forbidden,
  type HeldApiKey,
  MySessionPage,
  Password,
  PasswordResetResult,
  PersonName,
  RecoveryApi,
  ResetPasswordRequest,
  SessionId,
  SsoSignInApi,
  UsersApi,
  VerifiedEmail,
  VerifyEmailRequest
} from "@orgplane/schema"
import * as Prompt from "effect/cli/Prompt"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Commands from "../Commands.js"
import * as CliConfig from "../Config.js"
import { NotAuthenticated, UsageError, WrongPassword } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as Sessions from "../Sessions.js"
import * as SsoBrowser from "../SsoBrowser.js"
import * as Target from "../Target.js"

const email = Inputs.text("email", { placeholder: "<email>", description: "Account email.", schema: Email })

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

export const signup = Commands.leaf("signup", {
  examples: [
    ["Create your account (the password is asked for).", ["auth", "signup", "--email", "ada@example.com", "--name", "Ada Lovelace"]],
  ],
  summary: "Create an account and save its session in the profile.",
  details: ["The password comes from --password, ORGPLANE_PASSWORD or a prompt; it must be 10 to 256 characters."],
  inputs: {
    email,
    name: Inputs.text("name", { description: "Your name.", schema: PersonName }),
    password: Sessions.password,
    force: Sessions.force
  },
  run: ({ email, force, global, name, password }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        yield* Sessions.guard(target, { force })
        const checked = yield* Sessions.readNewPassword(password)
        const client = yield* Target.connect(target, { authenticated: false })
        const result = yield* client.users.signUp({ payload: { email, name, password: checked } })
        yield* report(global, target, result, "Signed up as")
        if (!global.json) yield* Output.note("Next: create an organization with 'orgplane orgs create <name>'.")
      }))
})

/**
 * The person's own password in place of a temporary one: --new-password, ORGPLANE_NEW_PASSWORD, or a prompt (twice)
 * under the server's message; without a terminal, the server's refusal as it is.
 */
const readReplacement = (flag: Option.Option<Redacted.Redacted<string>>, refusal: Forbidden) =>
  Effect.gen(function*() {
    const fromEnvironment = yield* Effect.orDie(Config.option(Config.Redacted("ORGPLANE_NEW_PASSWORD")))
    const given = Option.orElse(flag, () => fromEnvironment)
    if (Option.isNone(given) && !process.stdin.isTTY) return yield* refusal
    const chosen = Option.isSome(given)
      ? given.value
      : yield* Effect.gen(function*() {
        yield* Output.note(refusal.message)
        const first = yield* Prompt.run(Prompt.Password({ message: "Your new password" }))
        const again = yield* Prompt.run(Prompt.Password({ message: "Repeat it" }))
        if (Redacted.value(first) !== Redacted.value(again)) return yield* new UsageError({ message: "the passwords differ" })
        return first
      })
    return yield* Schema.decodeEffect(Password)(Redacted.value(chosen)).pipe(
      Effect.mapError(() => new UsageError({ message: "new password: must be 10 to 256 characters" }))
    )
  })

export const login = Commands.leaf("login", {
  examples: [
    ["Sign in with a password (asked for).", ["auth", "login", "--email", "ada@example.com"]],
    ["Sign in through your domain's SSO, in a browser.", ["auth", "login", "--email", "ada@example.com", "--sso"]],
  ],
  summary: "Sign in (with a password, or through SSO in a browser with --sso) and save the session in the profile.",
  details: [
    "The password comes from --password, ORGPLANE_PASSWORD or a prompt. A temporary one (set through an administrator's reset link) is replaced at this sign-in by yours, from --new-password, ORGPLANE_NEW_PASSWORD or a prompt (twice).",
    "With --sso: signs in through the active SSO connection of the email's domain, the way `gh auth login --web` does. The CLI listens on 127.0.0.1 (a port and path of its own), opens the provider's sign-in page in your browser (or, with --no-browser or without a display, prints its URL on stderr), and receives the result when the browser is sent back to it. It waits up to 5 minutes (Ctrl-C cancels). A refusal exits 3 with its code (`sso_sign_in_failed`, `code` as in docs/sso.md)."
  ],
  inputs: {
    email,
    password: Sessions.password,
    force: Sessions.force,
    newPassword: Inputs.optional(Inputs.secret("new-password", {
      description: "Your own password, when the one you sign in with is temporary (an administrator's reset link set it). Prefer the prompt or ORGPLANE_NEW_PASSWORD."
    })),
    sso: Inputs.boolean("sso", { description: "Sign in through your organization's SSO connection in a browser instead of a password." }),
    noBrowser: Inputs.boolean("no-browser", { description: "With --sso: print the sign-in URL instead of opening a browser." })
  },
  run: ({ email, force, global, newPassword, noBrowser, password, sso }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        if (!sso && noBrowser) return yield* new UsageError({ message: "--no-browser is for --sso" })
        if (sso && Option.isSome(password)) return yield* new UsageError({ message: "--sso signs in without a password: leave --password out" })
        yield* Sessions.guard(target, { force, email })
        if (sso) {
          const client = yield* Target.connect(target, { authenticated: false })
          const result = yield* SsoBrowser.signIn(client, email, { noBrowser })
          return yield* report(global, target, result, "Logged in through SSO as")
        }
        const secret = yield* Sessions.readPassword(password, { confirm: false })
        const client = yield* Target.connect(target, { authenticated: false })
        const signIn = (replacement?: string) =>
          client.users.signIn({ payload: { email, password: Redacted.value(secret), ...(replacement === undefined ? {} : { newPassword: replacement }) } }).pipe(
            Effect.catchTag("Unauthorized", (refusal) => Effect.fail(new WrongPassword({ refusal })))
          )
        // A temporary password (from an administrator's reset link) signs in once more with the person's own beside it.
        const result = yield* signIn().pipe(
          Effect.catchIf(
            (error): error is Forbidden => error instanceof Forbidden && error.reason === "password_change_required",
            (refusal) => Effect.flatMap(readReplacement(newPassword, refusal), signIn)
          )
        )
        yield* report(global, target, result, "Logged in as")
      }))
})

const LogoutResult = Schema.Struct({
  ok: Schema.Literal(true),
  url: Schema.String,
  profile: Schema.String,
  revoked: Schema.Boolean
})

export const logout = Commands.leaf("logout", {
  summary: "Revoke the session on the server and remove it from the profile.",
  inputs: {},
  run: ({ global }) =>
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
        if (Option.getOrUndefined(target.profile)?.token === token) yield* Sessions.forget(target, token)
        yield* Output.emit(
          global,
          LogoutResult,
          { ok: true, url: target.url, profile: target.profileName, revoked },
          () => `Logged out of ${target.url} (profile '${target.profileName}')${revoked ? "." : "; the session had already ended."}`
        )
      }))
})

export const sessions = Commands.list("sessions", {
  summary: "List your live sessions, newest first: how and where each signed in, when it was last used (needs a session).",
  noun: "sessions",
  inputs: {},
  call: (client, _, page) => client.users.listSessions({ query: page }),
  output: MySessionPage,
  columns: [
    ["id", (session) => session.current ? `${session.id} (this one)` : session.id],
    ["method", (session) => session.method],
    ["address", (session) => session.ipAddress ?? "-"],
    ["user agent", (session) => session.userAgent ?? "-"],
    ["created", (session) => Output.date(session.createdAt)],
    ["last used", (session) => Output.date(session.lastUsedAt)],
    ["expires", (session) => Output.date(session.expiresAt)]
  ]
})

const Ended = Schema.Struct({ ok: Schema.Literal(true), ended: SessionId })

export const endSession = Commands.endpoint("end-session", {
  summary: "Sign out one of your sessions, wherever it is (from 'auth sessions').",
  inputs: { sessionId: Inputs.argument("sessionId", { schema: SessionId, description: "The session (ses_…), from 'auth sessions'." }) },
  call: (client, { sessionId }) => client.users.endSession({ params: { sessionId } }).pipe(Effect.as({ ok: true as const, ended: sessionId })),
  output: Ended,
  human: ({ ended }) => `Ended session ${ended}.`
})

export const endOtherSessions = Commands.endpoint("end-other-sessions", {
  summary: "Sign out every session of your account but this one (API keys are not sessions: see 'api-keys').",
  inputs: {},
  call: (client) => client.users.endOtherSessions(),
  output: EndedSessions,
  human: ({ ended }) => `Ended ${ended} other session${ended === 1 ? "" : "s"}.`
})

/** The new password: `--new-password`, else ORGPLANE_NEW_PASSWORD, else a prompt (twice). */
const readChangedPassword = (flag: Option.Option<Redacted.Redacted<string>>) => Sessions.readNewPassword(flag, Sessions.replacementPassword)

export const password = Commands.leaf("password", {
  summary: "Change your password: your other sessions end; your API keys are listed, and revoked with --revoke-api-keys.",
  details: [
    "The current password comes from --password, ORGPLANE_PASSWORD or a prompt; the new one from --new-password, ORGPLANE_NEW_PASSWORD or a prompt (twice)."
  ],
  inputs: {
    password: Sessions.password,
    newPassword: Inputs.optional(Inputs.secret("new-password", {
      description: "The new password (10 to 256 characters). Prefer the prompt or ORGPLANE_NEW_PASSWORD."
    })),
    revokeApiKeys: Inputs.boolean("revoke-api-keys", {
      description: "Also revoke every API key your memberships made, in every organization (and the keys made with them)."
    })
  },
  run: ({ global, newPassword, password, revokeApiKeys }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const current = yield* Sessions.readPassword(password, { confirm: false })
        const next = yield* readChangedPassword(newPassword)
        const client = yield* Target.connect(target, { authenticated: true })
        const result = yield* client.users.changePassword({
          payload: { currentPassword: Redacted.value(current), newPassword: next, ...(revokeApiKeys ? { revokeApiKeys } : {}) }
        })
        yield* Output.emit(global, ChangePasswordResult, result, ({ apiKeys, apiKeysRevoked, otherSessionsEnded }) =>
          [`Password changed; ${otherSessionsEnded} other session${otherSessionsEnded === 1 ? "" : "s"} ended.`, keysNote(apiKeys, apiKeysRevoked)].join("\n"))
      }))
})

/** What a password change or reset says of the API keys the person holds: a password does not end them. */
const keysNote = (apiKeys: ReadonlyArray<HeldApiKey>, revoked: boolean) =>
  apiKeys.length === 0
    ? "You hold no API keys."
    : revoked
    ? `Revoked your ${apiKeys.length} API key${apiKeys.length === 1 ? "" : "s"}: ${apiKeys.map((key) => `${key.name} (${key.id})`).join(", ")}.`
    : [
      `Your ${apiKeys.length} API key${apiKeys.length === 1 ? " still works" : "s still work"} (a password change does not end them):`,
      ...apiKeys.map((key) => `  ${key.id}  ${key.name}  ${key.prefix}…  organization ${key.organizationId}`),
      "Revoke them with 'orgplane api-keys revoke <id>', or change the password again with --revoke-api-keys."
    ].join("\n")

const newPassword = Inputs.optional(Inputs.secret("new-password", {
  description: "The new password (10 to 256 characters). Prefer the prompt or ORGPLANE_NEW_PASSWORD."
}))

export const resetPassword = Commands.leaf("reset-password", {
  summary: "Choose a new password with a one-time reset link, without signing in: every session and API key of the account ends.",
  details: [
    "The token (opr_…) comes from an owner or admin of your organization ('orgplane members reset-password'), the instance's operator, 'orgplane admin reset-password' run on the server, or a mail ('orgplane auth forgot-password'). It works once, for an hour by default. The new password comes from --new-password, ORGPLANE_NEW_PASSWORD or a prompt (twice). Then sign in with it ('orgplane auth login'); a member of an organization that requires SSO signs in through it as before."
  ],
  inputs: {
    token: Inputs.argument("token", { schema: ResetPasswordRequest.fields.token, description: "The reset link's one-time token (opr_…)." }),
    newPassword,
    revokeApiKeys: Inputs.boolean("revoke-api-keys", {
      description: "Kept for scripts that pass it: a reset revokes every API key your memberships made anyway, in every organization."
    })
  },
  run: ({ global, newPassword, revokeApiKeys, token }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const next = yield* readChangedPassword(newPassword)
        const client = yield* Target.connect(target, { authenticated: false })
        const result = yield* client.recovery.resetPassword({ payload: { token, newPassword: next, ...(revokeApiKeys ? { revokeApiKeys } : {}) } })
        yield* Output.emit(global, PasswordResetResult, result, ({ apiKeys, apiKeysRevoked, sessionsEnded, user }) =>
          [
            `Password set for ${user.email}; ${sessionsEnded} session${sessionsEnded === 1 ? "" : "s"} ended.`,
            keysNote(apiKeys, apiKeysRevoked),
            `Sign in with it: orgplane auth login --email ${user.email}${target.url === CliConfig.DEFAULT_URL ? "" : ` --url ${target.url}`}`
          ].join("\n"))
      }))
})

const Requested = Schema.Struct({ ok: Schema.Literal(true), email: Schema.String })

export const forgotPassword = Commands.endpoint("forgot-password", {
  summary: "Ask for a password reset link by mail (servers with SMTP settings; the answer is the same for any email).",
  details: [
    "If an account has the email, the server mails it a one-time link, valid an hour; run 'orgplane auth reset-password <token>' with the token it gives. A server without mail says so (mail_not_configured): ask an owner or admin of your organization for a link, or whoever runs the server ('orgplane admin reset-password <email>' on it)."
  ],
  anonymous: true,
  inputs: { email },
  call: (client, { email }) => client.recovery.forgotPassword({ payload: { email } }).pipe(Effect.as({ ok: true as const, email })),
  output: Requested,
  human: ({ email }) => `If an account has ${email}, a reset link is on its way to it (valid an hour). Then run: orgplane auth reset-password <token>`
})

const Mailed = Schema.Struct({ ok: Schema.Literal(true), sent: Schema.Literal(true) })

export const verifyEmail = Commands.leaf("verify-email", {
  summary: "Prove your account's email: without a token, mail yourself a link; with the link's token, use it (both signed in).",
  details: [
    "A proven email lets your organization's SSO link its first sign-in to your account rather than take the account back (docs/security.md). Needs a server with SMTP settings to send the link; using the token needs the session of the account that asked for it."
  ],
  inputs: {
    token: Inputs.optionalArgument("token", { schema: VerifyEmailRequest.fields.token, description: "The verification link's one-time token (opv_…), from the mail." })
  },
  run: ({ global, token }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const client = yield* Target.connect(target, { authenticated: true })
        if (Option.isSome(token)) {
          const result = yield* client.recovery.verifyEmail({ payload: { token: token.value } })
          return yield* Output.emit(global, VerifiedEmail, result, ({ emailVerifiedAt, user }) =>
            `${user.email} is proven (since ${Output.date(emailVerifiedAt)}).`)
        }
        yield* client.recovery.requestEmailVerification()
        yield* Output.emit(global, Mailed, { ok: true, sent: true }, () =>
          "A verification link is on its way to your address (valid 24 hours). Then run: orgplane auth verify-email <token>")
      }))
})

export const auth = Commands.group(
  "auth",
  "Sign up, log in and log out; list and end your sessions; change or reset your password; prove your email.",
  [signup, login, logout, sessions, endSession, endOtherSessions, password, resetPassword, forgotPassword, verifyEmail],
  [SsoSignInApi, UsersApi, RecoveryApi]
)

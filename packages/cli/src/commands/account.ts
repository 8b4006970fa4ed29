/**
 * `orgplane account export | email | delete`: your account as a whole, beside `auth` (sessions, password) and
 * `whoami`: everything the instance keeps of you as one JSON document, a new email, and the account's deletion.
 */
import { AccountApi, AccountDeletion, AccountExport, ChangeEmailResult, Email, UsersApi } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Commands from "../Commands.js"
import { UsageError } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as Sessions from "../Sessions.js"
import * as Target from "../Target.js"

export const exportData = Commands.endpoint("export", {
  summary: "Print everything the instance keeps of you as one JSON document: 'orgplane account export > me.json' (needs a session).",
  details: [
    "The document (`AccountExport`, format orgplane.account-export.v1): your profile; every membership, current and ended, with the organization's name and your role; your memories in every organization, with their snippets; your live sessions; your API keys' metadata (never a secret). It is JSON with or without --json."
  ],
  inputs: {},
  call: (client) => client.account.export(),
  output: AccountExport,
  human: (document) => JSON.stringify(Schema.encodeSync(AccountExport)(document), null, 2)
})

/** The profile's saved session token, when that is the credential the command used. */
const profileToken = (target: Target.Target) => {
  const credential = Option.getOrUndefined(target.credential)
  return credential?.kind === "token" && credential.source === "profile" ? Redacted.value(credential.value) : undefined
}

export const email = Commands.leaf("email", {
  summary: "Change your account's email after your password; the new address is unverified until proven (needs a session).",
  details: [
    "The password comes from --password, ORGPLANE_PASSWORD or a prompt. Your sessions and API keys stay; the profile's saved email follows. An SSO sign-in does not link to the new address until it is proven (docs/security.md, 'Pre-account hijacking through SSO')."
  ],
  inputs: {
    email: Inputs.argument("new-email", { schema: Email, description: "The new address." }),
    password: Sessions.password
  },
  run: ({ email, global, password }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const secret = yield* Sessions.readPassword(password, { confirm: false })
        const client = yield* Target.connect(target, { authenticated: true })
        const result = yield* client.users.changeEmail({ payload: { email, password: Redacted.value(secret) } })
        const token = profileToken(target)
        if (token !== undefined) yield* Sessions.followEmail(target, token, result.user.email)
        yield* Output.emit(global, ChangeEmailResult, result, ({ emailVerified, user }) =>
          emailVerified
            ? `Your email is ${user.email}.`
            : `Your email is now ${user.email}, unverified until proven: an SSO sign-in through a verified domain proves it.`)
      }))
})

export const remove = Commands.leaf("delete", {
  examples: [
    ["Delete your account for good, after exporting your data.", ["account", "delete", "--yes"]],
  ],
  summary: "Delete your account for good: sessions, API keys, memberships, memories and connections go (needs a session and --yes).",
  details: [
    "Confirmed by your password (--password, ORGPLANE_PASSWORD or a prompt); --without-password relies on a sign-in within the last 2 hours instead (an account made by SSO has no password: sign in through SSO again first). Refused while you are the last owner of an organization that has other members: make someone else an owner ('orgplane members transfer-ownership') or delete it first. Organizations' audit logs keep their events, naming you by a pseudonym. Export your data first with 'orgplane account export'. The profile's session is forgotten."
  ],
  inputs: {
    yes: Inputs.boolean("yes", { description: "Confirm that the account is to be deleted: nothing brings it back." }),
    password: Sessions.password,
    withoutPassword: Inputs.boolean("without-password", {
      description: "Send no password: rely on a sign-in within the server's recent-sign-in time (2 hours by default)."
    })
  },
  run: ({ global, password, withoutPassword, yes }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        if (!yes) return yield* new UsageError({ message: "this deletes your account for good: pass --yes (and 'orgplane account export' first, to keep your data)" })
        if (withoutPassword && Option.isSome(password)) return yield* new UsageError({ message: "--without-password sends no password: leave --password out" })
        const secret = withoutPassword ? undefined : yield* Sessions.readPassword(password, { confirm: false })
        const client = yield* Target.connect(target, { authenticated: true })
        const result = yield* client.account.delete({ payload: secret === undefined ? {} : { password: Redacted.value(secret) } })
        const token = profileToken(target)
        if (token !== undefined) yield* Sessions.forget(target, token)
        yield* Output.emit(global, AccountDeletion, result, ({ organizationsLeft, organizationsWithoutMembers, pseudonym, removed, userId }) =>
          [
            `Deleted account ${userId}: organizations' audit logs name it ${pseudonym}.`,
            organizationsLeft.length === 0 ? "You were in no organization." : `Left ${organizationsLeft.length} organization${organizationsLeft.length === 1 ? "" : "s"}: ${organizationsLeft.join(", ")}.`,
            ...(organizationsWithoutMembers.length === 0 ? [] : [`Left without members: ${organizationsWithoutMembers.join(", ")}.`]),
            `Removed: ${removed.sessions} sessions, ${removed.apiKeys} API keys, ${removed.memories} memories, ${removed.mcpCredentials} MCP credentials, ${removed.suiteConnections} mail and calendar connections, ${removed.ssoLinks} SSO links.`
          ].join("\n"))
      }))
})

export const account = Commands.group(
  "account",
  "Your account as a whole: export your data, change your email, delete the account.",
  [exportData, email, remove],
  [AccountApi, UsersApi]
)

/**
 * `orgplane invitations create | list | cancel`: bringing people into the active organization by email (owners and
 * admins), and `orgplane invitations accept <token>`: joining with an invite token, as the signed-in user or as a
 * new account (`--sign-up`), whose session is then saved in the profile like `auth signup` does.
 */
import { Args, Command, Options } from "@effect/cli"
import {
  AcceptedInvitation,
  AcceptInvitationRequest,
  InvitationCreated,
  Email,
  InvitableRole,
  type Invitation,
  InvitationId,
  InvitationPage,
  InvitationResponse,
  InvitationStatus,
  PersonName
} from "@orgplane/schema"
import { Effect, Option } from "effect"
import { UsageError } from "../Errors.js"
import { global } from "../GlobalOptions.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as Paging from "../Paging.js"
import * as Sessions from "../Sessions.js"
import * as Target from "../Target.js"
import { group } from "./group.js"

/** 201 with a new invitation, or 200 when the email's pending invitation was refreshed. */
const CreateResult = InvitationCreated

export const create = Command.make(
  "create",
  {
    email: Inputs.arg(Args.text({ name: "email" }), "email", Email),
    role: Options.choice("role", InvitableRole.literals).pipe(
      Options.withDescription("The role the invitee joins with (owners are made with 'members role' or 'members transfer-ownership')."),
      Options.withDefault("member")
    ),
    global
  },
  ({ email, global, role }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const client = yield* Target.connect(target, { authenticated: true })
        const result = yield* client.invitations.create({ payload: { email, role } })
        yield* Output.emit(global, CreateResult, result, ({ invitation, inviteToken, refreshed }) =>
          [
            refreshed
              ? `Refreshed the pending invitation of ${invitation.email} (${invitation.id}) as ${invitation.role}, expires ${Output.date(invitation.expiresAt)}; its earlier token no longer works.`
              : `Invited ${invitation.email} as ${invitation.role} (${invitation.id}), expires ${Output.date(invitation.expiresAt)}.`,
            "The invite token is shown only this once; send it to the invitee, who joins with 'orgplane invitations accept <token>':",
            "",
            `  ${inviteToken}`
          ].join("\n"))
      }))
).pipe(
  Command.withDescription(
    "Invite an email address as a member or admin and print the invite token (only this once). A pending invitation of the same email is refreshed: new token, role and expiry."
  )
)

const rows = (items: ReadonlyArray<Invitation>) =>
  Output.table(
    ["id", "email", "role", "status", "created", "expires"],
    items.map((invitation) => [
      invitation.id,
      invitation.email,
      invitation.role,
      invitation.status,
      Output.date(invitation.createdAt),
      Output.date(invitation.expiresAt)
    ])
  )

export const list = Command.make(
  "list",
  {
    status: Options.choice("status", InvitationStatus.literals).pipe(
      Options.withDescription("Only invitations in this status (default: all; expired means pending past its expiry)."),
      Options.optional
    ),
    ...Paging.options,
    global
  },
  ({ global, status, ...paging }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        yield* Paging.check(paging)
        const client = yield* Target.connect(target, { authenticated: true })
        const filters = Inputs.ifSome("status", status)
        const result = yield* Paging.fetch(paging, (page) => client.invitations.list({ urlParams: { ...filters, ...page } }))
        yield* Output.emit(global, InvitationPage, result, ({ items }) => items.length === 0 ? "No invitations." : rows(items))
        const command = ["invitations list", ...Option.toArray(Option.map(status, (value) => `--status ${value}`))].join(" ")
        yield* Paging.hint(global, "invitations", command, result)
      }))
).pipe(Command.withDescription("List the active organization's invitations, newest first (owners and admins)."))

export const cancel = Command.make(
  "cancel",
  { invitationId: Inputs.arg(Args.text({ name: "invitationId" }), "invitationId", InvitationId), global },
  ({ global, invitationId }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const client = yield* Target.connect(target, { authenticated: true })
        const result = yield* client.invitations.cancel({ path: { invitationId } })
        yield* Output.emit(global, InvitationResponse, result, ({ invitation }) =>
          `Canceled the invitation of ${invitation.email} (${invitation.id}); its token no longer works.`)
      }))
).pipe(Command.withDescription("Cancel a pending invitation; its token stops working."))

export const accept = Command.make(
  "accept",
  {
    token: Inputs.arg(Args.text({ name: "token" }), "token", AcceptInvitationRequest.fields.token),
    signUp: Options.boolean("sign-up").pipe(
      Options.withDescription(
        "Create an account for the invited email instead of accepting as the signed-in user; its session is saved in the profile."
      )
    ),
    name: Inputs.option(
      Options.text("name").pipe(Options.withDescription("Your name, for the new account (with --sign-up).")),
      "--name",
      PersonName
    ).pipe(Options.optional),
    password: Sessions.password,
    global
  },
  ({ global, name, password, signUp, token }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        if (!signUp) {
          if (Option.isSome(name) || Option.isSome(password)) {
            return yield* new UsageError({ message: "--name and --password are only for --sign-up" })
          }
          const client = yield* Target.connect(target, { authenticated: true })
          const result = yield* client.invitations.accept({ payload: { token } })
          yield* Output.emit(global, AcceptedInvitation, result, ({ membership, organization }) =>
            `Joined ${organization.name} (${organization.id}) as ${membership.role}; it is now your active organization.`)
          return
        }
        if (Option.isNone(name)) return yield* new UsageError({ message: "--sign-up needs --name" })
        const checked = yield* Sessions.readNewPassword(password)
        // A new account: whatever credential the profile or environment holds belongs to someone else.
        const client = yield* Target.connect({ ...target, credential: Option.none() }, { authenticated: false })
        const result = yield* client.invitations.accept({ payload: { token, signUp: { name: name.value, password: checked } } })
        const session = result.session
        if (session === null) {
          // The API promises a session with `signUp`; the account exists either way.
          return yield* Effect.fail(new Error("the server returned no session for the new account: sign in with 'orgplane auth login'"))
        }
        const file = yield* Sessions.save(target, { user: result.user, session })
        yield* Output.emit(global, AcceptedInvitation, result, ({ membership, organization, user }) =>
          [
            `Signed up as ${user.name} <${user.email}> (${user.id}) at ${target.url} and joined ${organization.name} (${organization.id}) as ${membership.role}.`,
            `Session saved to profile '${target.profileName}' in ${file} (expires ${Output.date(session.expiresAt)}).`
          ].join("\n"))
        yield* Sessions.noteOverride(global, target)
      }))
).pipe(
  Command.withDescription(
    "Join an organization with an invite token, as the signed-in user (whose email the invitation was sent to), or with --sign-up --name N as a new account (password from --password, ORGPLANE_PASSWORD or a prompt)."
  )
)

export const invitations = group("invitations", "Invite people to the active organization, and accept invitations.", [
  create,
  list,
  cancel,
  accept
])

/**
 * `orgplane invitations create | list | get | cancel`: bringing people into the active organization by email (owners
 * and admins), `orgplane invitations preview <token>`: what an invite token is for, and `orgplane invitations accept
 * <token>`: joining with it, as the signed-in user or as a new account (`--sign-up`), whose session is then saved in
 * the profile like `auth signup` does.
 */
import {
  AcceptedInvitation,
  AcceptInvitationRequest,
  Email,
  InvitableRole,
  InvitationCreated,
  InvitationDelivery,
  InvitationId,
  InvitationPage,
  InvitationPreview,
  InvitationResponse,
  InvitationsApi,
  InvitationStatus,
  PersonName
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Commands from "../Commands.js"
import { UsageError } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as Sessions from "../Sessions.js"
import * as Target from "../Target.js"

export const create = Commands.endpoint("create", {
  examples: [
    ["Invite an admin; prints their invite token, once (or mails it, on a server with mail settings).", ["invitations", "create", "grace@example.com", "--role", "admin"]],
    ["Print the token to send on yourself, even where the server mails invitations.", ["invitations", "create", "grace@example.com", "--delivery", "shown"]]
  ],
  summary: "Invite an email address: the server mails the invite token to it, or it is printed (only this once).",
  details: [
    "A server with mail settings mails the token to the address by default (--delivery mailed), and nobody else sees it: accepting it proves the address.",
    "Without them, or with --delivery shown, the token is printed for you to send on; accepting it proves nothing of the address, so an account that joins with it is taken back by the address's first sign-in through your organization's SSO.",
    "A pending invitation of the same email is refreshed: new token, role, delivery and expiry."
  ],
  inputs: {
    email: Inputs.argument("email", { schema: Email, description: "The invitee's email address." }),
    role: Inputs.withDefault(
      Inputs.choice("role", InvitableRole.literals, {
        description: "The role the invitee joins with (owners are made with 'members role' or 'members transfer-ownership')."
      }),
      "member"
    ),
    delivery: Inputs.optional(Inputs.choice("delivery", InvitationDelivery.literals, {
      description: "mailed: the server mails the token to the address (its default with mail settings); shown: it is printed, for you to send on (the default without)."
    }))
  },
  call: (client, { delivery, email, role }) => client.invitations.create({ payload: { email, role, ...Inputs.ifSome("delivery", delivery) } }),
  output: InvitationCreated,
  human: ({ invitation, inviteToken, refreshed }) =>
    [
      refreshed
        ? `Refreshed the pending invitation of ${invitation.email} (${invitation.id}) as ${invitation.role}, expires ${Output.date(invitation.expiresAt)}; its earlier token no longer works.`
        : `Invited ${invitation.email} as ${invitation.role} (${invitation.id}), expires ${Output.date(invitation.expiresAt)}.`,
      ...inviteToken === null
        ? [`The invite token was mailed to ${invitation.email}; nobody else sees it.`]
        : ["The invite token is shown only this once; send it to the invitee, who joins with 'orgplane invitations accept <token>':", "", `  ${inviteToken}`]
    ].join("\n")
})

export const list = Commands.list("list", {
  summary: "List the active organization's invitations, newest first (owners and admins).",
  noun: "invitations",
  inputs: {
    status: Inputs.optional(Inputs.choice("status", InvitationStatus.literals, {
      description: "Only invitations in this status (default: all; expired means pending past its expiry)."
    }))
  },
  call: (client, { status }, page) => client.invitations.list({ query: { ...Inputs.ifSome("status", status), ...page } }),
  output: InvitationPage,
  columns: [
    ["id", (invitation) => invitation.id],
    ["email", (invitation) => invitation.email],
    ["role", (invitation) => invitation.role],
    ["status", (invitation) => invitation.status],
    ["created", (invitation) => Output.date(invitation.createdAt)],
    ["expires", (invitation) => Output.date(invitation.expiresAt)]
  ]
})

export const get = Commands.endpoint("get", {
  summary: "Show one of the active organization's invitations, in whatever status (owners and admins).",
  inputs: { invitationId: Inputs.argument("invitationId", { schema: InvitationId, description: "The invitation (inv_…)." }) },
  call: (client, { invitationId }) => client.invitations.get({ params: { invitationId } }),
  output: InvitationResponse,
  human: ({ invitation }) =>
    Output.fields([
      ["ID", invitation.id],
      ["Email", invitation.email],
      ["Role", invitation.role],
      ["Status", invitation.status],
      ["Created", Output.date(invitation.createdAt)],
      ["Expires", Output.date(invitation.expiresAt)],
      ["Accepted by", invitation.acceptedByOrgMembershipId ?? "-"]
    ])
})

export const preview = Commands.endpoint("preview", {
  summary: "Show what an invite token is for before accepting it: the organization, the role, who sent it, the expiry.",
  anonymous: true,
  inputs: { token: Inputs.argument("token", { schema: AcceptInvitationRequest.fields.token, description: "The invite token." }) },
  call: (client, { token }) => client.invitations.preview({ payload: { token } }),
  output: InvitationPreview,
  human: ({ expiresAt, invitedBy, organization, role }) =>
    [
      `${invitedBy === null ? "An invitation" : `${invitedBy.name} invites you`} to join ${organization.name} as ${role}; it expires ${Output.date(expiresAt)}.`,
      "Accept it with 'orgplane invitations accept <token>' (add --sign-up --name N for a new account)."
    ].join("\n")
})

export const cancel = Commands.endpoint("cancel", {
  summary: "Cancel a pending invitation; its token stops working.",
  inputs: { invitationId: Inputs.argument("invitationId", { schema: InvitationId, description: "The invitation (inv_…)." }) },
  call: (client, { invitationId }) => client.invitations.cancel({ params: { invitationId } }),
  output: InvitationResponse,
  human: ({ invitation }) => `Canceled the invitation of ${invitation.email} (${invitation.id}); its token no longer works.`
})

export const accept = Commands.leaf("accept", {
  examples: [
    ["Join as a new account, kept beside your own session in another profile.", ["invitations", "accept", "opi_yvlsYSkd_Fx2YtoH8rs5Aj0XNQkiHh4d-ovAehSprV4", "--sign-up", "--name", "Grace Hopper", "--profile", "grace"]],
  ],
  summary: "Join an organization with an invite token, as the signed-in user or as a new account.",
  details: [
    "Without --sign-up, the signed-in user (whose email the invitation was sent to) joins. With --sign-up --name N, a new account is created for the invited email and its session is saved in the profile; the password comes from --password, ORGPLANE_PASSWORD or a prompt. A profile holding another account is only replaced with --force."
  ],
  inputs: {
    token: Inputs.argument("token", { schema: AcceptInvitationRequest.fields.token, description: "The invite token." }),
    signUp: Inputs.boolean("sign-up", {
      description: "Create an account for the invited email instead of accepting as the signed-in user."
    }),
    name: Inputs.optional(Inputs.text("name", { description: "Your name, for the new account (with --sign-up).", schema: PersonName })),
    password: Sessions.password,
    force: Sessions.force
  },
  run: ({ force, global, name, password, signUp, token }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        if (!signUp) {
          if (Option.isSome(name) || Option.isSome(password) || force) {
            return yield* new UsageError({ message: "--name, --password and --force are only for --sign-up" })
          }
          const client = yield* Target.connect(target, { authenticated: true })
          const result = yield* client.invitations.accept({ payload: { token } })
          yield* Output.emit(global, AcceptedInvitation, result, ({ membership, organization }) =>
            `Joined ${organization.name} (${organization.id}) as ${membership.role}; it is now your active organization.`)
          return
        }
        if (Option.isNone(name)) return yield* new UsageError({ message: "--sign-up needs --name" })
        yield* Sessions.guard(target, { force })
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
})

export const invitations = Commands.group("invitations", "Invite people to the active organization, and accept invitations.", [
  create,
  list,
  get,
  cancel,
  preview,
  accept
], [InvitationsApi])

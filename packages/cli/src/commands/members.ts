/**
 * `orgplane members list | role | remove | transfer-ownership | directory | set-directory | reset-password`: the active
 * organization's members and their roles, and password reset links for them. Any member may list (a plain member sees names and roles, emails where the organization
 * allows it: absent columns print `-`); changing roles and removing take an admin or owner (see the API's role model).
 */
import {
  type Member,
  MemberDirectorySettingsResponse,
  MemberPage,
  MemberResponse,
  MembersApi,
  MembershipId,
  OwnershipTransfer,
  PasswordResetLinkResponse,
  RecoveryApi,
  Role,
  SearchText
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Commands from "../Commands.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as ResetLinks from "../ResetLinks.js"

const memberId = Inputs.argument("memberId", { schema: MembershipId, description: "The member (om_…)." })

/** `Ada Lovelace (om_…)`, or the id alone for the unclaimed owner of a bootstrapped workspace. */
const who = (member: Member) => member.name === null ? member.id : `${member.name} (${member.id})`

export const list = Commands.list("list", {
  summary: "List the active organization's members, oldest first (any member may).",
  noun: "members",
  inputs: {
    role: Inputs.optional(Inputs.choice("role", Role.literals, { description: "Only members with this role." })),
    query: Inputs.optional(Inputs.text("query", {
      description: "Only members whose name or email contains this text (case-insensitive; plain members: names, and emails where shown).",
      schema: SearchText
    })),
    includeRemoved: Inputs.boolean("include-removed", { description: "Also list removed members (owners and admins)." })
  },
  call: (client, { includeRemoved, query, role }, page) =>
    client.members.list({
      query: {
        ...Inputs.ifSome("role", role),
        ...Inputs.ifSome("q", query),
        ...(includeRemoved ? { includeRemoved: true } : {}),
        ...page
      }
    }),
  output: MemberPage,
  columns: [
    ["id", (member) => member.id],
    ["name", (member) => member.name ?? "-"],
    ["email", (member) => member.email ?? "-"],
    ["role", (member) => member.role],
    ["removed", (member) => Output.date(member.removedAt)],
    ["suspended", (member) => Output.date(member.suspendedAt)]
  ]
})

export const role = Commands.endpoint("role", {
  summary: "Change a member's role (admins: member ↔ admin; anything about owners: owners).",
  inputs: { memberId, role: Inputs.argumentChoice("role", Role.literals, { description: "The new role." }) },
  call: (client, { memberId, role }) => client.members.changeRole({ params: { memberId }, payload: { role } }),
  output: MemberResponse,
  human: ({ member }) => `${who(member)} is now ${member.role}.`
})

const Removed = Schema.Struct({ ok: Schema.Literal(true), removed: MembershipId })

export const remove = Commands.endpoint("remove", {
  summary: "Remove a member (your own id: leave the organization); the last owner stays.",
  inputs: { memberId },
  call: (client, { memberId }) => client.members.remove({ params: { memberId } }).pipe(Effect.as({ ok: true as const, removed: memberId })),
  output: Removed,
  human: ({ removed }) =>
    `Removed member ${removed}: they left every team, their API keys are revoked and their sessions no longer reach the organization.`
})

export const transferOwnership = Commands.endpoint("transfer-ownership", {
  summary: "Make an admin an owner and yourself an admin, in one step (owners only).",
  inputs: { memberId },
  call: (client, { memberId }) => client.members.transferOwnership({ params: { memberId } }),
  output: OwnershipTransfer,
  human: ({ owner, previousOwner }) =>
    `${who(owner)} is now an owner; you (${previousOwner.id}) are now ${previousOwner.role === "admin" ? "an admin" : previousOwner.role}.`
})

const shownTo = (visible: boolean) => visible ? "see each other's emails" : "see names and roles, not emails"

export const directory = Commands.endpoint("directory", {
  summary: "Show what plain members see of each other (owners and admins see everything).",
  inputs: {},
  call: (client) => client.members.getDirectorySettings(),
  output: MemberDirectorySettingsResponse,
  human: ({ settings }) => `Members ${shownTo(settings.emailsVisibleToMembers)}.`
})

export const setDirectory = Commands.endpoint("set-directory", {
  summary: "Choose whether plain members see each other's emails (owners and admins).",
  inputs: {
    emails: Inputs.argumentChoice("emails", ["visible", "hidden"], { description: "`visible` or `hidden` (the default)." })
  },
  call: (client, { emails }) => client.members.setDirectorySettings({ payload: { emailsVisibleToMembers: emails === "visible" } }),
  output: MemberDirectorySettingsResponse,
  human: ({ settings }) => `Members now ${shownTo(settings.emailsVisibleToMembers)}.`
})

export const resetPassword = Commands.endpoint("reset-password", {
  summary: "Issue a one-time password reset link for a member, shown once (owners: admins and members; admins: members).",
  details: [
    "For a member who forgot their password: the link sets a new one without the old (valid 1 hour by default, ORGPLANE_PASSWORD_RESET_TTL), and using it signs their account out everywhere. Only accounts this organization alone holds: an account that also belongs to another organization, and another owner, are reset by the instance's operator ('orgplane admin users reset-password <userId>'). Asks for a recent sign-in."
  ],
  inputs: { memberId },
  call: (client, { memberId }) => client.recovery.issueMemberPasswordReset({ params: { memberId } }),
  output: PasswordResetLinkResponse,
  human: ({ passwordReset }, _, target) => ResetLinks.describe(passwordReset, target.url)
})

export const members = Commands.group("members", "List the active organization's members, manage their roles, and reset their passwords.", [
  list,
  role,
  remove,
  transferOwnership,
  directory,
  setDirectory,
  resetPassword
], [MembersApi, RecoveryApi])

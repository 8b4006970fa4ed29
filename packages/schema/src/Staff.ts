/** Staffing an organization: members and their roles, teams, and invitations. */
import { Schema } from "effect"
import { allErrors, Email, Timestamp } from "./Common.js"
import { InvitationId, MembershipId, OrganizationId, TeamId, UserId } from "./Ids.js"
import { Membership, Organization, OrganizationWithMembership, Password, PersonName, Role, Session, User } from "./Identity.js"
import { Page, PageQueryFields } from "./Pagination.js"

/** What each role may do: served by `GET /v1/roles` and quoted in the OpenAPI descriptions. */
export const RoleCapabilities: ReadonlyArray<{
  readonly role: Role
  readonly description: string
  readonly capabilities: ReadonlyArray<string>
}> = [
  {
    role: "member",
    description: "Works in the organization.",
    capabilities: [
      "read the organization's members, teams and roles",
      "update their own profile and password",
      "leave the organization"
    ]
  },
  {
    role: "admin",
    description: "Runs the organization day to day. Everything a member may do, and:",
    capabilities: [
      "change members' and admins' roles between member and admin",
      "remove members and admins",
      "create, change and delete teams",
      "invite members and admins, list and cancel invitations",
      "create, list and revoke API keys"
    ]
  },
  {
    role: "owner",
    description: "Answers for the organization. Everything an admin may do, and:",
    capabilities: [
      "make a member an owner, demote or remove another owner",
      "transfer ownership to an admin",
      "an organization always keeps at least one owner: the last one can be neither demoted nor removed"
    ]
  }
]

const markdownRoles = RoleCapabilities.map(
  (entry) => `- \`${entry.role}\`: ${entry.description} ${entry.capabilities.join("; ")}.`
).join("\n")

/** The role model in prose, for OpenAPI descriptions. */
export const RolesDescription =
  `Roles are ordered \`owner\` > \`admin\` > \`member\`; a role may do everything the roles below it may.\n\n${markdownRoles}`

export class RoleInfo extends Schema.Class<RoleInfo>("RoleInfo")({
  role: Role,
  description: Schema.String,
  capabilities: Schema.Array(Schema.String)
}) {}

export const RoleList = Schema.Struct({ items: Schema.Array(RoleInfo) }).annotations({ identifier: "RoleList" })

// Members --------------------------------------------------------------------------------------------------------

export class Member extends Schema.Class<Member>("Member")({
  id: MembershipId,
  organizationId: OrganizationId,
  userId: Schema.NullOr(UserId).annotations({
    description: "Null for the placeholder owner of a workspace created by bootstrap and not yet claimed."
  }),
  name: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  role: Role,
  createdAt: Timestamp,
  removedAt: Schema.NullOr(Timestamp).annotations({
    description: "When the member was removed or left. A removed member keeps its id, so records that name it still resolve."
  })
}) {}

export const MemberPage = Page(Member).annotations({ identifier: "MemberPage" })

/** Free text for the `q` filters of lists: trimmed, 1 to 255 characters. */
export const SearchText = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(255))

export const MemberListQuery = Schema.Struct({
  ...PageQueryFields,
  role: Schema.optionalWith(Role, { exact: true }).annotations({ description: "Only members with this role." }),
  q: Schema.optionalWith(SearchText, { exact: true }).annotations({
    description: "Only members whose name or email contains this text (case-insensitive)."
  }),
  includeRemoved: Schema.optionalWith(Schema.BooleanFromString, { exact: true }).annotations({
    description: "Also list removed members (default false)."
  })
}).annotations(allErrors)
export type MemberListQuery = typeof MemberListQuery.Type

export const MemberPath = Schema.Struct({ memberId: MembershipId })

export const MemberResponse = Schema.Struct({ member: Member }).annotations({ identifier: "MemberResponse" })

export const ChangeRoleRequest = Schema.Struct({ role: Role }).annotations(allErrors)

export const OwnershipTransfer = Schema.Struct({
  previousOwner: Member.annotations({ description: "The caller, now an admin." }),
  owner: Member
}).annotations({ identifier: "OwnershipTransfer" })

// Teams ----------------------------------------------------------------------------------------------------------

export const TeamName = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(255))

export const MemberIds = Schema.Array(MembershipId).pipe(Schema.maxItems(500)).annotations({
  description: "Ids (`om_`) of active members of the organization; at most 500 entries. A repeated id is taken once."
})

export class Team extends Schema.Class<Team>("Team")({
  id: TeamId,
  organizationId: OrganizationId,
  name: Schema.String,
  memberIds: Schema.Array(MembershipId).annotations({ description: "The team's members, oldest membership first." }),
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  updatedAt: Timestamp
}) {}

export const TeamPage = Page(Team).annotations({ identifier: "TeamPage" })

export const TeamListQuery = Schema.Struct({
  ...PageQueryFields,
  q: Schema.optionalWith(SearchText, { exact: true }).annotations({
    description: "Only teams whose name contains this text (case-insensitive)."
  }),
  memberId: Schema.optionalWith(MembershipId, { exact: true }).annotations({
    description: "Only teams this member belongs to."
  })
}).annotations(allErrors)
export type TeamListQuery = typeof TeamListQuery.Type

export const TeamPath = Schema.Struct({ teamId: TeamId })
export const TeamMemberPath = Schema.Struct({ teamId: TeamId, memberId: MembershipId })

export const TeamResponse = Schema.Struct({ team: Team }).annotations({ identifier: "TeamResponse" })

export const CreateTeamRequest = Schema.Struct({
  name: TeamName,
  memberIds: Schema.optionalWith(MemberIds, { exact: true })
}).annotations(allErrors)

export const UpdateTeamRequest = Schema.Struct({
  name: Schema.optionalWith(TeamName, { exact: true }),
  memberIds: Schema.optionalWith(MemberIds, { exact: true }).annotations({
    description: "The team's whole membership: replaces the current one."
  })
}).pipe(
  Schema.filter((body) => body.name !== undefined || body.memberIds !== undefined || "give name, memberIds or both")
).annotations(allErrors)

export const AddTeamMembersRequest = Schema.Struct({
  memberIds: MemberIds.pipe(Schema.minItems(1))
}).annotations(allErrors)

// Invitations ----------------------------------------------------------------------------------------------------

export const InvitationStatus = Schema.Literal("pending", "accepted", "canceled", "expired").annotations({
  identifier: "InvitationStatus",
  description: "`expired` is a pending invitation past its `expiresAt`."
})
export type InvitationStatus = typeof InvitationStatus.Type

export const InvitableRole = Schema.Literal("admin", "member").annotations({
  description: "Invitations make members or admins; owners are made by an owner (role change or ownership transfer)."
})

export class Invitation extends Schema.Class<Invitation>("Invitation")({
  id: InvitationId,
  organizationId: OrganizationId,
  email: Schema.String,
  role: InvitableRole,
  status: InvitationStatus,
  createdByOrgMembershipId: MembershipId,
  acceptedByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  expiresAt: Timestamp
}) {}

export const InvitationPage = Page(Invitation).annotations({ identifier: "InvitationPage" })

export const InvitationListQuery = Schema.Struct({
  ...PageQueryFields,
  status: Schema.optionalWith(InvitationStatus, { exact: true }).annotations({
    description: "Only invitations in this status (default: all)."
  })
}).annotations(allErrors)
export type InvitationListQuery = typeof InvitationListQuery.Type

export const InvitationPath = Schema.Struct({ invitationId: InvitationId })

export const CreateInvitationRequest = Schema.Struct({
  email: Email,
  role: InvitableRole
}).annotations(allErrors)

const inviteToken = Schema.String.annotations({
  description: "The invitation's secret, for `POST /v1/invitations/accept`. Shown only here; send it to the invitee."
})

/** 201: a new invitation. */
export const CreatedInvitation = Schema.Struct({
  invitation: Invitation,
  inviteToken,
  refreshed: Schema.Literal(false)
}).annotations({ identifier: "CreatedInvitation" })

/** 200: the email already had a pending invitation; it now has a new token, role and expiry. */
export const RefreshedInvitation = Schema.Struct({
  invitation: Invitation,
  inviteToken,
  refreshed: Schema.Literal(true).annotations({ description: "The earlier token no longer works." })
}).annotations({ identifier: "RefreshedInvitation" })

/** What creating an invitation answers: 201 with a new one, or 200 with a refreshed one. */
export const InvitationCreated = Schema.Union(CreatedInvitation, RefreshedInvitation)

export const InvitationResponse = Schema.Struct({ invitation: Invitation }).annotations({
  identifier: "InvitationResponse"
})

export const AcceptInvitationRequest = Schema.Struct({
  token: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)),
  signUp: Schema.optionalWith(
    Schema.Struct({ name: PersonName, password: Password }).annotations({
      description: "Creates an account for the invitation's email and signs it in, in the same call. Omit to accept as the signed-in caller."
    }),
    { exact: true }
  )
}).annotations(allErrors)

export const AcceptedInvitation = Schema.Struct({
  organization: Organization,
  membership: Membership,
  user: User,
  session: Schema.NullOr(Session).annotations({
    description: "The new account's session when `signUp` was given (always then); null when accepted while signed in."
  })
}).annotations({ identifier: "AcceptedInvitation" })

// The caller's own account ---------------------------------------------------------------------------------------

export const UpdateMeRequest = Schema.Struct({ name: PersonName }).annotations(allErrors)

export const ChangePasswordRequest = Schema.Struct({
  currentPassword: Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(256, { message: () => "must be at most 256 characters" })
  ),
  newPassword: Password
}).annotations(allErrors)

export const MyOrganizationPage = Page(OrganizationWithMembership).annotations({ identifier: "MyOrganizationPage" })

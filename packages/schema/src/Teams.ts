/** Teams: named groups of members, used to grant access and assign policies to many members at once. */
import * as Schema from "effect/Schema"
import { searchText, Timestamp, TrimmedText } from "./Common.js"
import { exampleId, MembershipId, OrganizationId, ScimConnectionId, TeamId } from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { acme, ada, alan, exampleTime, grace } from "./Examples.js"

export const TeamName = TrimmedText(1, 255, "Team name")

export const TeamExternalKey = TrimmedText(1, 255, "Team external key").annotate({
  description:
    "The organization's own key for the team (unique in the organization), for example the id of its group in a directory: a SCIM connection in `link_by_external_key` mode links the group whose externalId is this key."
})

export const MemberIds = Schema.Array(MembershipId).check(Schema.isMaxLength(500)).annotate({
  description: "Ids (`om_`) of active members of the organization; at most 500 entries. A repeated id is taken once."
})

export class Team extends Schema.Class<Team>("Team")(Schema.Struct({
  id: TeamId,
  organizationId: OrganizationId,
  name: Schema.String,
  memberIds: Schema.Array(MembershipId).annotate({ description: "The team's members, oldest membership first." }),
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  externalKey: Schema.NullOr(Schema.String).annotate({ description: "The organization's own key for the team; null when it has none." }),
  scimConnectionId: Schema.NullOr(ScimConnectionId).annotate({
    description:
      "The SCIM connection whose directory manages the team: while set, renaming it, changing its members and deleting it answer 409 `team_managed_by_directory`. Null for a team managed here."
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({
  examples: [{
    id: exampleId("tem"),
    organizationId: acme.id,
    name: "Platform",
    memberIds: [grace.membershipId, alan.membershipId],
    createdByOrgMembershipId: ada.membershipId,
    externalKey: "grp-platform",
    scimConnectionId: null,
    createdAt: exampleTime(20),
    updatedAt: exampleTime(25)
  }]
})) {}

export const TeamPage = Page(Team).annotate({ identifier: "TeamPage" })

export const TeamListQuery = Schema.Struct({
  ...PageQueryFields,
  q: Schema.optionalKey(searchText("Only teams whose name contains this text (case-insensitive).")),
  memberId: Schema.optionalKey(MembershipId).annotateKey({
    description: "Only teams this member belongs to."
  })
}).annotate({ examples: [{ q: "plat", memberId: alan.membershipId }] })
export type TeamListQuery = typeof TeamListQuery.Type

export const TeamPath = Schema.Struct({ teamId: TeamId })
export const TeamMemberPath = Schema.Struct({ teamId: TeamId, memberId: MembershipId })

export const TeamResponse = Schema.Struct({ team: Team }).annotate({ identifier: "TeamResponse" })

export const CreateTeamRequest = Schema.Struct({
  name: TeamName,
  memberIds: Schema.optionalKey(MemberIds),
  externalKey: Schema.optionalKey(TeamExternalKey)
}).annotate({
  examples: [{ name: "Platform", memberIds: [grace.membershipId, alan.membershipId], externalKey: "grp-platform" }]
})

export const UpdateTeamRequest = Schema.Struct({
  name: Schema.optionalKey(TeamName),
  // Its own description in place of MemberIds' (a key's description would sit beside the schema's, in `allOf`).
  memberIds: Schema.optionalKey(MemberIds.annotate({
    description: "The team's whole membership: replaces the current one."
  })),
  externalKey: Schema.optionalKey(Schema.NullOr(TeamExternalKey)).annotateKey({
    description: "The team's new external key; null removes it."
  })
}).check(
  Schema.makeFilter((body) =>
    body.name !== undefined || body.memberIds !== undefined || body.externalKey !== undefined ||
    "give name, memberIds, externalKey or several", { toJsonSchema: () => ({ minProperties: 1 }) })
).annotate({ examples: [{ name: "Platform engineering" }] })

export const AddTeamMembersRequest = Schema.Struct({
  memberIds: MemberIds.check(Schema.isMinLength(1))
}).annotate({ examples: [{ memberIds: [alan.membershipId] }] })

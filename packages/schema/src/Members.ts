/**
 * Members: memberships of an organization seen with the person's name and email. Owners and admins see the whole
 * directory; plain members see names, roles and dates, and emails only where the organization allows it.
 */
import * as Schema from "effect/Schema"
import { BooleanFromString, searchText, Timestamp } from "./Common.js"
import { MembershipId, OrganizationId, UserId } from "./Ids.js"
import { Role } from "./Organizations.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { acme, ada, exampleTime, grace } from "./Examples.js"

export class Member extends Schema.Class<Member>("Member")(Schema.Struct({
  id: MembershipId,
  organizationId: OrganizationId,
  userId: Schema.optionalKey(Schema.NullOr(UserId)).annotateKey({
    description:
      "Null for the placeholder owner of a workspace created by bootstrap and not yet claimed. Absent when a plain member reads the directory: only owners and admins see it."
  }),
  name: Schema.NullOr(Schema.String),
  email: Schema.optionalKey(Schema.NullOr(Schema.String)).annotateKey({
    description:
      "Absent when a plain member reads the directory, unless the organization lets members see each other's emails (`PUT /v1/member-directory`, off by default)."
  }),
  role: Role,
  createdAt: Timestamp,
  removedAt: Schema.NullOr(Timestamp).annotate({
    description: "When the member was removed or left. A removed member keeps its id, so records that name it still resolve."
  }),
  suspendedAt: Schema.optionalKey(Schema.NullOr(Timestamp)).annotateKey({
    description:
      "When the organization's directory (SCIM) deactivated the member: a suspended member stays listed, is not admitted (their sessions and API keys no longer reach the organization) and is no seat. Also set when the directory deleted them (with `removedAt`), so neither SSO sign-in nor an invitation brings them back until the directory reactivates them. Null otherwise. Absent when a plain member reads the directory: only owners and admins see it."
  })
}).annotate({
  examples: [{
    id: grace.membershipId,
    organizationId: acme.id,
    userId: grace.userId,
    name: grace.name,
    email: grace.email,
    role: "admin",
    createdAt: exampleTime(5),
    removedAt: null,
    suspendedAt: null
  }]
})) {}

export const MemberPage = Page(Member).annotate({ identifier: "MemberPage" })

export const MemberListQuery = Schema.Struct({
  ...PageQueryFields,
  role: Schema.optionalKey(Role).annotateKey({ description: "Only members with this role." }),
  // The description goes with the text schema: one on the member would replace what it says about trimming.
  q: Schema.optionalKey(searchText("Only members whose name or email contains this text (case-insensitive); for a plain member, whose name does (and email, where the organization lets members see emails).")),
  includeRemoved: Schema.optionalKey(BooleanFromString).annotateKey({
    description: "Also list removed members (default false). Owners and admins only: a plain member asking is refused (403 `insufficient_role`)."
  })
}).annotate({ examples: [{ role: "admin", q: "grace", includeRemoved: false }] })
export type MemberListQuery = typeof MemberListQuery.Type

export const MemberPath = Schema.Struct({ memberId: MembershipId })

export const MemberResponse = Schema.Struct({ member: Member }).annotate({ identifier: "MemberResponse" })

export const ChangeRoleRequest = Schema.Struct({ role: Role }).annotate({ examples: [{ role: "admin" }] })

export const OwnershipTransfer = Schema.Struct({
  previousOwner: Member.annotateKey({ description: "The caller, now an admin." }),
  owner: Member
}).annotate({
  identifier: "OwnershipTransfer",
  // Instances: Effect 4 encodes no plain object as a class, and an example it cannot encode is left out.
  examples: [{
    previousOwner: new Member({
      id: ada.membershipId,
      organizationId: acme.id,
      userId: ada.userId,
      name: ada.name,
      email: ada.email,
      role: "admin",
      createdAt: exampleTime(),
      removedAt: null,
      suspendedAt: null
    }),
    owner: new Member({
      id: grace.membershipId,
      organizationId: acme.id,
      userId: grace.userId,
      name: grace.name,
      email: grace.email,
      role: "owner",
      createdAt: exampleTime(5),
      removedAt: null,
      suspendedAt: null
    })
  }]
})

/** What plain members see of each other (owners and admins always see everything). */
export class MemberDirectorySettings extends Schema.Class<MemberDirectorySettings>("MemberDirectorySettings")(Schema.Struct({
  emailsVisibleToMembers: Schema.Boolean.annotate({
    description: "Whether plain members see each other's emails in `GET /v1/members` (false by default: names, roles and dates only)."
  })
}).annotate({ examples: [{ emailsVisibleToMembers: false }] })) {}

export const MemberDirectorySettingsResponse = Schema.Struct({ settings: MemberDirectorySettings }).annotate({
  identifier: "MemberDirectorySettingsResponse"
})

export const UpdateMemberDirectorySettingsRequest = Schema.Struct({
  emailsVisibleToMembers: Schema.Boolean
}).annotate({ examples: [{ emailsVisibleToMembers: true }] })

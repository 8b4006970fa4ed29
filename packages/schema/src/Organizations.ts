/** Organizations, their plans, and memberships with their roles. */
import * as Schema from "effect/Schema"
import { requestBody, Timestamp, TrimmedText } from "./Common.js"
import { MembershipId, OrganizationId, UserId } from "./Ids.js"
import { acme, ada, exampleTime, exampleToken } from "./Examples.js"

export const Role = Schema.Literal("owner", "admin", "member").annotations({
  identifier: "Role",
  description: "Organization role. `owner` > `admin` > `member`: a role may do everything the roles below it may."
})
export type Role = typeof Role.Type

export const Plan = Schema.Literal("free", "team", "enterprise").annotations({
  identifier: "Plan",
  description: "Organization plan. Enterprise-only features answer 402 `enterprise_plan_required` on other plans."
})
export type Plan = typeof Plan.Type

export const OrganizationName = TrimmedText(2, 120, "Organization name")

export class Organization extends Schema.Class<Organization>("Organization")(Schema.Struct({
  id: OrganizationId,
  name: Schema.String,
  plan: Plan,
  provisional: Schema.Boolean.annotations({
    description: "True for a workspace created by bootstrap whose owner claim has not been redeemed yet."
  }),
  createdAt: Timestamp
}).annotations({ examples: [{ id: acme.id, name: acme.name, plan: "team", provisional: false, createdAt: exampleTime() }] })) {}

export class Membership extends Schema.Class<Membership>("Membership")(Schema.Struct({
  id: MembershipId,
  organizationId: OrganizationId,
  userId: Schema.NullOr(UserId),
  role: Role,
  createdAt: Timestamp
}).annotations({
  examples: [{ id: ada.membershipId, organizationId: acme.id, userId: ada.userId, role: "owner", createdAt: exampleTime() }]
})) {}

export const CreateOrganizationRequest = Schema.Struct({ name: OrganizationName }).annotations({
  ...requestBody,
  examples: [{ name: acme.name }]
})

export const OrganizationWithMembership = Schema.Struct({
  organization: Organization,
  membership: Membership
}).annotations({ identifier: "OrganizationWithMembership" })

export const ChangePlanRequest = Schema.Struct({ plan: Plan }).annotations({ ...requestBody, examples: [{ plan: "enterprise" }] })

export const ClaimOperatorRequest = Schema.Struct({
  setupToken: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(512)).annotations({
    description:
      "The instance's one-time setup token: `ORGPLANE_SETUP_TOKEN`, or the one the server logs at its start while nothing names the operator."
  })
}).annotations({ ...requestBody, examples: [{ setupToken: exampleToken("opsetup") }] })

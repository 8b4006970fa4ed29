/** Agent-first workspace setup: a provisional organization and one-time claim links for the humans who take it over. */
import { Schema } from "effect"
import { Email, requestBody, Timestamp } from "./Common.js"
import { Membership, Organization, OrganizationName, Role } from "./Organizations.js"
import { BootstrapId, WorkspaceClaimId } from "./Ids.js"

/** The roles of a bootstrap's claim links: each once, owner among them. */
export const ClaimRoles = Schema.Array(Role).pipe(
  Schema.minItems(1),
  Schema.maxItems(3),
  Schema.filter((roles) => new Set(roles).size === roles.length || "roles must not repeat", {
    jsonSchema: { uniqueItems: true }
  }),
  Schema.filter((roles) => roles.includes("owner") || "must include owner: a workspace always has an owner")
)

export const BootstrapWorkspaceRequest = Schema.Struct({
  workspaceName: OrganizationName,
  claimRoles: Schema.optionalWith(ClaimRoles, { exact: true }).annotations({
    description:
      "One claim link per role; must include `owner`. Default: `[\"owner\"]`. The placeholder owner stays until the owner claim is redeemed."
  }),
  ownerEmail: Schema.optionalWith(Email, { exact: true }).annotations({
    description: "Only used to prefill the owner claim link; not stored."
  })
}).annotations(requestBody)

export class ClaimLink extends Schema.Class<ClaimLink>("ClaimLink")({
  id: WorkspaceClaimId,
  role: Role,
  token: Schema.String.annotations({ description: "One-time token; shown only here." }),
  url: Schema.String,
  expiresAt: Timestamp
}) {}

export const BootstrapWorkspaceResult = Schema.Struct({
  ok: Schema.Literal(true),
  organization: Organization,
  setup: Schema.Struct({ id: BootstrapId, expiresAt: Timestamp }),
  claimLinks: Schema.Array(ClaimLink)
}).annotations({ identifier: "BootstrapWorkspaceResult" })

export const AcceptClaimRequest = Schema.Struct({
  token: Schema.String.pipe(Schema.minLength(24), Schema.maxLength(255))
}).annotations(requestBody)

export const AcceptClaimResult = Schema.Struct({
  ok: Schema.Literal(true),
  organization: Organization,
  membership: Membership
}).annotations({ identifier: "AcceptClaimResult" })

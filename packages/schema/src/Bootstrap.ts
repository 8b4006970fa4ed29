/** Agent-first workspace setup: a provisional organization and one-time claim links for the humans who take it over. */
import * as Schema from "effect/Schema"
import { Email, requestBody, Timestamp } from "./Common.js"
import { Membership, Organization, OrganizationName, Role } from "./Organizations.js"
import { BootstrapId, exampleId, WorkspaceClaimId } from "./Ids.js"
import { acme, ada, exampleTime, exampleToken } from "./Examples.js"

/** Claim link number `n` of the example bootstrap. */
const claimLink = (n: number, role: Role) => {
  const token = exampleToken("opc", n)
  const url = new URL("https://orgplane.acme.example/workspace-claim")
  url.searchParams.set("token", token)
  if (role === "owner") url.searchParams.set("email", ada.email)
  return { id: exampleId("wcl", n), role, token, url: url.toString(), expiresAt: exampleTime(7 * 24 * 60) }
}

/** The roles of a bootstrap's claim links: each once, owner among them. */
export const ClaimRoles = Schema.Array(Role).pipe(
  Schema.minItems(1),
  Schema.maxItems(3),
  Schema.filter((roles) => new Set(roles).size === roles.length || "roles must not repeat", {
    jsonSchema: { uniqueItems: true }
  }),
  Schema.filter((roles) => roles.includes("owner") || "must include owner: a workspace always has an owner", {
    jsonSchema: { contains: { const: "owner" } }
  })
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
}).annotations({ ...requestBody, examples: [{ workspaceName: acme.name, claimRoles: ["owner", "admin"], ownerEmail: ada.email }] })

export class ClaimLink extends Schema.Class<ClaimLink>("ClaimLink")(Schema.Struct({
  id: WorkspaceClaimId,
  role: Role,
  token: Schema.String.annotations({ description: "One-time token; shown only here." }),
  url: Schema.String,
  expiresAt: Timestamp
}).annotations({ examples: [claimLink(1, "owner")] })) {}

export const BootstrapWorkspaceResult = Schema.Struct({
  ok: Schema.Literal(true),
  organization: Organization,
  setup: Schema.Struct({ id: BootstrapId, expiresAt: Timestamp }),
  claimLinks: Schema.Array(ClaimLink)
}).annotations({
  identifier: "BootstrapWorkspaceResult",
  examples: [{
    ok: true,
    organization: { id: acme.id, name: acme.name, plan: "free", provisional: true, createdAt: exampleTime() },
    setup: { id: exampleId("wbt"), expiresAt: exampleTime(7 * 24 * 60) },
    claimLinks: [claimLink(1, "owner"), claimLink(2, "admin")]
  }]
})

export const AcceptClaimRequest = Schema.Struct({
  token: Schema.String.pipe(Schema.minLength(24), Schema.maxLength(255))
}).annotations({ ...requestBody, examples: [{ token: exampleToken("opc") }] })

export const AcceptClaimResult = Schema.Struct({
  ok: Schema.Literal(true),
  organization: Organization,
  membership: Membership
}).annotations({ identifier: "AcceptClaimResult" })

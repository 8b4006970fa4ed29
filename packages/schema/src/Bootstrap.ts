/** Agent-first workspace setup: a provisional organization and one-time claim links for the humans who take it over. */
import * as Schema from "effect/Schema"
import { Email, Timestamp } from "./Common.js"
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
export const ClaimRoles = Schema.Array(Role).check(
  Schema.isMinLength(1),
  Schema.isMaxLength(3),
  Schema.makeFilter((roles: ReadonlyArray<Role>) => new Set(roles).size === roles.length || "roles must not repeat", {
    toJsonSchema: () => ({ uniqueItems: true })
  }),
  Schema.makeFilter((roles: ReadonlyArray<Role>) => roles.includes("owner") || "must include owner: a workspace always has an owner", {
    toJsonSchema: () => ({ contains: { const: "owner" } })
  })
)

export const BootstrapWorkspaceRequest = Schema.Struct({
  workspaceName: OrganizationName,
  claimRoles: Schema.optionalKey(ClaimRoles).annotateKey({
    description:
      "One claim link per role; must include `owner`. Default: `[\"owner\"]`. The placeholder owner stays until the owner claim is redeemed."
  }),
  ownerEmail: Schema.optionalKey(Email).annotateKey({
    description: "Only used to prefill the owner claim link; not stored."
  })
}).annotate({ examples: [{ workspaceName: acme.name, claimRoles: ["owner", "admin"], ownerEmail: ada.email }] })

export class ClaimLink extends Schema.Class<ClaimLink>("ClaimLink")(Schema.Struct({
  id: WorkspaceClaimId,
  role: Role,
  token: Schema.String.annotate({ description: "One-time token; shown only here." }),
  url: Schema.String.annotate({
    description:
      "The link to send: this server's claim page (`<ORGPLANE_PUBLIC_URL>/workspace-claim?token=…`, with `email` on the owner's link when `ownerEmail` was given), where the person signs in or creates an account and claims in a browser. The server never writes the token into the page; without a browser, redeem the token with `POST /v1/bootstrap/claims/accept`."
  }),
  expiresAt: Timestamp
}).annotate({ examples: [claimLink(1, "owner")] })) {}

export const BootstrapWorkspaceResult = Schema.Struct({
  ok: Schema.Literal(true),
  organization: Organization,
  setup: Schema.Struct({ id: BootstrapId, expiresAt: Timestamp }),
  claimLinks: Schema.Array(ClaimLink)
}).annotate({
  identifier: "BootstrapWorkspaceResult",
  // Instances: Effect 4 encodes no plain object as a class, and an example it cannot encode is left out.
  examples: [{
    ok: true,
    organization: new Organization({ id: acme.id, name: acme.name, plan: "free", provisional: true, createdAt: exampleTime() }),
    setup: { id: exampleId("wbt"), expiresAt: exampleTime(7 * 24 * 60) },
    claimLinks: [new ClaimLink(claimLink(1, "owner")), new ClaimLink(claimLink(2, "admin"))]
  }]
})

export const AcceptClaimRequest = Schema.Struct({
  // Effect 4 documents `isMinLength(24)` as `minLength: 12` (JSON Schema counts code points, Effect UTF-16 units): the
  // document keeps saying 24, as it did.
  token: Schema.String.check(Schema.isMinLength(24, { toJsonSchema: () => ({ minLength: 24 }) }), Schema.isMaxLength(255))
}).annotate({ examples: [{ token: exampleToken("opc") }] })

export const AcceptClaimResult = Schema.Struct({
  ok: Schema.Literal(true),
  organization: Organization,
  membership: Membership
}).annotate({ identifier: "AcceptClaimResult" })

/**
 * `orgplane access grant | list | revoke`: who may view, edit or manage one config object, plugin or marketplace.
 * The resource's id tells its kind (cob_…, plg_…, mkt_…); a grant is for one member, one team or the whole
 * organization. Managing grants needs manager access on the resource.
 *
 * Partial: only what the other groups share with it so far (who a grant is for, the grant table, the grantee flags
 * and payload: `connectors instances access`, `templates grant`). Left of the original: the `access` group itself
 * (`ResourceId`, `grant`, `list`, `revoke`).
 */
import { type AccessRole, MembershipId, TeamId } from "@orgplane-next/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { UsageError } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

/** Who a grant is for, as every grant kind says it. */
interface Grant {
  readonly orgWide: boolean
  readonly teamId: string | null
  readonly orgMembershipId: string | null
}

/** What every grant kind says of itself beyond its grantee. */
interface GrantTimes {
  readonly id: string
  readonly role: string
  readonly createdAt: Date
  readonly removedAt: Date | null
}

/** `team tem_…`, `member om_…`, `the organization`. */
export const grantee = (grant: Grant) =>
  grant.orgWide ? "the organization" : grant.teamId !== null ? `team ${grant.teamId}` : `member ${grant.orgMembershipId ?? "?"}`

/** The table of a grant list, whatever the resource. */
export const grantColumns: ReadonlyArray<readonly [string, (grant: Grant & GrantTimes) => string]> = [
  ["id", (grant) => grant.id],
  ["role", (grant) => grant.role],
  ["to", grantee],
  ["created", (grant) => Output.date(grant.createdAt)],
  ["revoked", (grant) => Output.date(grant.removedAt)]
]

/** The inputs naming who a grant is for: exactly one of them (checked by `granteePayload`). */
export const granteeInputs = {
  member: Inputs.optional(Inputs.text("member", { placeholder: "<memberId>", description: "A member (om_…) to grant to.", schema: MembershipId })),
  team: Inputs.optional(Inputs.text("team", { placeholder: "<teamId>", description: "A team (tem_…) whose members to grant to.", schema: TeamId })),
  orgWide: Inputs.boolean("org-wide", { description: "Grant to every member of the organization (owners and admins only)." })
}

/** A grant's payload from `granteeInputs` and a role; a usage error unless exactly one grantee is given. */
export const granteePayload = <R extends AccessRole>(role: R, { member, orgWide, team }: {
  readonly member: Option.Option<MembershipId>
  readonly team: Option.Option<TeamId>
  readonly orgWide: boolean
}) =>
  [Option.isSome(member), Option.isSome(team), orgWide].filter(Boolean).length !== 1
    ? Effect.fail(new UsageError({ message: "give exactly one of --member, --team or --org-wide: who the grant is for" }))
    : Effect.succeed({
      role,
      ...Inputs.ifSome("orgMembershipId", member),
      ...Inputs.ifSome("teamId", team),
      ...(orgWide ? { orgWide: true as const } : {})
    })

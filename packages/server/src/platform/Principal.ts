/**
 * Who acts in an organization: a member (from the `MemberAuthentication` middleware) or the system itself, for
 * background work such as connector sync and scheduled jobs. Services take a principal, check it against the
 * policy table with `authorize`, and record who acted with `actingMembershipId`.
 */
import {
  type Action,
  type Actor,
  allows,
  credentialAllows,
  Forbidden,
  type MemberContext,
  type MembershipId,
  type Organization,
  PlanRequired,
  Policy
} from "@orgplane/schema"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { now } from "./Time.js"

/** Background work acting for an organization. Its audit identity is `system:<job>`; it passes every role check. */
export interface SystemPrincipal {
  readonly _tag: "System"
  /** What runs, for example `connector-sync`. */
  readonly job: string
  readonly organization: Organization
}

export type Principal = MemberContext | SystemPrincipal

export const system = (job: string, organization: Organization): SystemPrincipal => ({ _tag: "System", job, organization })

/** Who acted, as records store it: the member's id, or null for the system. */
export const actingMembershipId = (principal: Principal): MembershipId | null =>
  principal._tag === "Member" ? principal.membership.id : null

/** Who acted, for logs and audit trails: `om_…` or `system:<job>`. */
export const auditIdentity = (principal: Principal): string =>
  principal._tag === "Member" ? principal.membership.id : `system:${principal.job}`

/** 403 `insufficient_role`: the caller's role does not allow `action`. */
export const insufficientRole = (action: Action) =>
  new Forbidden({
    reason: "insufficient_role",
    message: `This action requires the ${Policy[action].role} role or higher (${action}).`
  })

/**
 * The actions a member was allowed during a write whose authority is read again at commit (Authority.ts): keyed by
 * the request's `MemberContext`, so a read, which registers nothing, pays one failed lookup per check.
 */
const granted = new WeakMap<MemberContext, Set<Action>>()

/** From now on, records the actions `member` is allowed (`can`, `authorize`) in the set answered. */
export const recordGrants = (member: MemberContext): ReadonlySet<Action> => {
  const actions = new Set<Action>()
  granted.set(member, actions)
  return actions
}

/** 403 `insufficient_scope`: the caller's API key has no scope naming `action`. */
export const insufficientScope = (action: Action) =>
  new Forbidden({
    reason: "insufficient_scope",
    message: `This API key's scopes do not include ${action}: make a key with that scope (POST /v1/api-keys with "scopes") from a session.`
  })

/**
 * Whether the principal may take `action`: its role against the policy table and, for an API key, its scopes
 * (@orgplane/schema's `credentialAllows`, the rule `GET /v1/me` answers with; the system may take any). A key's scopes are fixed when it is made, so the check at commit (Authority.ts) reads again
 * only the role: a demotion narrows the key there too.
 */
export const can = (principal: Principal, action: Action): boolean => {
  if (principal._tag === "System") return true
  const allowed = credentialAllows(principal.membership.role, principal.credential, action)
  if (allowed) granted.get(principal)?.add(action)
  return allowed
}

/** Fails with 403 `insufficient_role`, or `insufficient_scope` for an API key without the scope, unless the principal may take `action`. */
export const authorize = (principal: Principal, action: Action): Effect.Effect<void, Forbidden> =>
  can(principal, action)
    ? Effect.void
    : Effect.fail(principal._tag === "Member" && allows(principal.membership.role, action) ? insufficientScope(action) : insufficientRole(action))

/** Enterprise features by the name their 402 gives in `feature`. */
export type EnterpriseFeature = "desktop_policies" | "sso" | "scim"

/**
 * Fails with 402 `enterprise_plan_required` (naming `feature`) unless the organization is on the enterprise plan.
 * Check it before the role: an organization without the plan learns that first, whoever asks.
 */
export const requireEnterprise = (principal: Principal, feature: EnterpriseFeature): Effect.Effect<void, PlanRequired> =>
  principal.organization.plan === "enterprise"
    ? Effect.void
    : Effect.fail(new PlanRequired({ feature, message: `This feature (${feature}) needs the enterprise plan.` }))

/**
 * Fails with 403 `recent_authentication_required` unless a session's person signed in within `within`
 * (`ORGPLANE_RECENT_AUTHENTICATION`), for the owner-level actions that ask for it, as GitHub's sudo mode does: a
 * stolen, long-lived session cannot take them. API keys are judged by their scopes instead (the actions that ask
 * for it are among those a key takes only when a scope names them); the system passes.
 */
export const requireRecentAuthentication = (
  principal: Principal | Actor,
  within: Duration.Duration,
  /** What else the caller may do instead of signing in again (send the password), said in the message. */
  otherwise?: string
): Effect.Effect<void, Forbidden> => {
  const credential = "credential" in principal ? principal.credential : undefined
  if (credential?._tag !== "Session") return Effect.void
  return Effect.flatMap(now, (at) =>
    at.getTime() - credential.authenticatedAt.getTime() <= Duration.toMillis(within)
      ? Effect.void
      : Effect.fail(
        new Forbidden({
          reason: "recent_authentication_required",
          message: `This action needs a recent sign-in (within ${Duration.format(within)}): sign in again, then retry${
            otherwise === undefined ? "" : `, or ${otherwise}`
          }.`
        })
      ))
}

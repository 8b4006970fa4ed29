/**
 * Desktop policies: managed by owners and admins of enterprise organizations; every member reads the effective
 * policy the desktop app applies for them. Each organization has one default policy, created on first use.
 */
import {
  Conflict,
  type CreateDesktopPolicyRequest,
  DesktopPolicy,
  type DesktopPolicyDocument,
  type DesktopPolicyId,
  type DesktopPolicyListQuery,
  InvalidRequest,
  type MemberContext,
  type MembershipId,
  NotFound,
  type OrganizationId,
  type TeamId,
  type UpdateDesktopPolicyRequest
} from "@orgplane/schema"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Memberships } from "../identity/Memberships.js"
import { describeChange } from "../platform/AuditRecorder.js"
import { makeId } from "../platform/Ids.js"
import { actingMembershipId, authorize, type Principal, requireEnterprise } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { DesktopPoliciesRepository } from "./DesktopPoliciesRepository.js"
import { builtIn, completeDefault, defaultDocument, resolve } from "./Effective.js"

export const desktopPolicyNotFound = () =>
  new NotFound({ error: "desktop_policy_not_found", message: "Desktop policy not found." })

const defaultRequired = (what: string) =>
  new Conflict({ error: "default_policy_required", message: `The default desktop policy cannot be ${what}.` })

const quoted = (ids: ReadonlyArray<string>) => ids.join(", ")

const make = Effect.gen(function*() {
  const policies = yield* DesktopPoliciesRepository
  const memberships = yield* Memberships

  /** The plan first (an organization without it learns that whoever asks), then the role. */
  const manage = (principal: Principal) =>
    Effect.andThen(requireEnterprise(principal, "desktop_policies"), authorize(principal, "desktopPolicies.manage"))

  /** Creates the organization's default policy unless it has one. */
  const ensureDefault = (organizationId: OrganizationId) =>
    Effect.gen(function*() {
      if (yield* policies.hasDefault(organizationId)) return
      yield* policies.insert({
        organizationId,
        id: yield* makeId("dpo"),
        policyName: "Default desktop policy",
        isDefault: true,
        isEnabled: true,
        priority: 0,
        policy: defaultDocument,
        createdByMembershipId: null,
        at: yield* now
      })
    })

  const read = (principal: Principal, id: DesktopPolicyId) =>
    Effect.flatMap(policies.find({ organizationId: principal.organization.id, id }), Option.match({
      onNone: () => Effect.fail(desktopPolicyNotFound()),
      onSome: (desktopPolicy) => Effect.succeed({ desktopPolicy })
    }))

  /** Each id once; fails with 404 naming every id that is not an active member / a team of the organization. */
  const assignments = (principal: Principal, input: { readonly memberIds?: ReadonlyArray<MembershipId> | undefined; readonly teamIds?: ReadonlyArray<TeamId> | undefined }) =>
    Effect.gen(function*() {
      const organizationId = principal.organization.id
      const memberIds = input.memberIds === undefined ? undefined : Arr.dedupe(input.memberIds)
      const teamIds = input.teamIds === undefined ? undefined : Arr.dedupe(input.teamIds)
      const missingMembers = memberIds === undefined ? [] : yield* memberships.missingActive(organizationId, memberIds)
      if (missingMembers.length > 0) {
        return yield* new NotFound({
          error: "member_not_found",
          message: `Not active members of this organization: ${quoted(missingMembers)}.`
        })
      }
      const missingTeams = teamIds === undefined ? [] : yield* policies.missingTeams(organizationId, teamIds)
      if (missingTeams.length > 0) {
        return yield* new NotFound({ error: "team_not_found", message: `Not teams of this organization: ${quoted(missingTeams)}.` })
      }
      return { memberIds, teamIds }
    })

  const create = Effect.fn("DesktopPolicies.create")(function*(principal: Principal, input: CreateDesktopPolicyRequest) {
    yield* manage(principal)
    return yield* transaction(
      Effect.gen(function*() {
        const organizationId = principal.organization.id
        yield* ensureDefault(organizationId)
        const { memberIds, teamIds } = yield* assignments(principal, input)
        const id = yield* makeId("dpo")
        const at = yield* now
        yield* policies.insert({
          organizationId,
          id,
          policyName: input.policyName,
          isDefault: false,
          isEnabled: input.isEnabled ?? true,
          priority: input.priority ?? 0,
          policy: input.policy,
          createdByMembershipId: actingMembershipId(principal),
          at
        })
        const policy = { organizationId, id }
        yield* policies.replaceMembers(policy, memberIds ?? [], at)
        yield* policies.replaceTeams(policy, teamIds ?? [], at)
        return yield* read(principal, id)
      })
    )
  })

  const list = Effect.fn("DesktopPolicies.list")(function*(principal: Principal, query: DesktopPolicyListQuery) {
    yield* manage(principal)
    return yield* transaction(Effect.andThen(ensureDefault(principal.organization.id), policies.list(principal.organization.id, query)))
  })

  const get = Effect.fn("DesktopPolicies.get")(function*(principal: Principal, id: DesktopPolicyId) {
    yield* manage(principal)
    return yield* orUnavailable(read(principal, id))
  })

  const update = Effect.fn("DesktopPolicies.update")(function*(principal: Principal, id: DesktopPolicyId, input: UpdateDesktopPolicyRequest) {
    yield* manage(principal)
    return yield* transaction(
      Effect.gen(function*() {
        const organizationId = principal.organization.id
        const policy = { organizationId, id }
        const isDefault = yield* policies.lock(policy)
        if (isDefault === undefined) return yield* desktopPolicyNotFound()
        const before = yield* read(principal, id)
        let document: DesktopPolicyDocument | undefined = input.policy
        if (isDefault) {
          if (input.isEnabled === false) return yield* defaultRequired("disabled")
          const refused = (["priority", "memberIds", "teamIds"] as const).filter((key) => input[key] !== undefined)
          if (refused.length > 0) {
            return yield* new InvalidRequest({
              details: refused.map((key) => ({
                path: [key],
                message: "the default policy applies to every member, below every other policy: it takes no priority or assignments"
              }))
            })
          }
          if (document !== undefined) document = completeDefault(document)
        }
        const { memberIds, teamIds } = yield* assignments(principal, input)
        const at = yield* now
        yield* policies.update(policy, { policyName: input.policyName, policy: document, priority: input.priority, isEnabled: input.isEnabled }, at)
        if (memberIds !== undefined) yield* policies.replaceMembers(policy, memberIds, at)
        if (teamIds !== undefined) yield* policies.replaceTeams(policy, teamIds, at)
        const after = yield* read(principal, id)
        yield* describeChange(DesktopPolicy, before.desktopPolicy, after.desktopPolicy)
        return after
      })
    )
  })

  const remove = Effect.fn("DesktopPolicies.remove")(function*(principal: Principal, id: DesktopPolicyId) {
    yield* manage(principal)
    return yield* transaction(
      Effect.gen(function*() {
        const policy = { organizationId: principal.organization.id, id }
        const isDefault = yield* policies.lock(policy)
        if (isDefault === undefined) return yield* desktopPolicyNotFound()
        if (isDefault) return yield* defaultRequired("deleted")
        yield* policies.softDelete(policy, yield* now)
      })
    )
  })

  /** Every plan: without the enterprise plan, the built-in defaults. */
  const effective = Effect.fn("DesktopPolicies.effective")(function*(caller: MemberContext) {
    yield* authorize(caller, "desktopPolicies.readEffective")
    return yield* caller.organization.plan !== "enterprise"
      ? Effect.succeed({ effectivePolicy: resolve([builtIn]) })
      : transaction(
        Effect.gen(function*() {
          const organizationId = caller.organization.id
          yield* ensureDefault(organizationId)
          const rows = yield* policies.applicable({ organizationId, membershipId: caller.membership.id })
          const effectivePolicy = resolve(rows.map((row) => ({
            id: row.id,
            policyName: row.policyName,
            via: row.isDefault ? "default" as const : row.direct ? "member" as const : "team" as const,
            policy: row.isDefault ? completeDefault(row.policy) : row.policy
          })))
          return { effectivePolicy }
        })
      )
  })

  return { create, list, get, update, remove, effective } as const
})

export class DesktopPolicies extends Context.Service<DesktopPolicies>()("@orgplane/server/policies/DesktopPolicies", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      DesktopPoliciesRepository.layer,
      Memberships.layer
    ])
  )
}

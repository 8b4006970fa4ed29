/** Organizations: creation (the creator becomes owner) and plan changes by the instance operator. */
import { type Action, Forbidden, type MemberContext, NotFound, Organization, type OrganizationId, type Plan, type Role, type SessionId, type UserId } from "@orgplane/schema"
import { Effect, Option } from "effect"
import { ServerConfig } from "../platform/Config.js"
import { makeId } from "../platform/Ids.js"
import { can } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { Memberships } from "./Memberships.js"
import { OrganizationsRepository } from "./OrganizationsRepository.js"
import * as AuditRecorder from "../platform/AuditRecorder.js"

export class Organizations extends Effect.Service<Organizations>()("@orgplane/server/identity/Organizations", {
  effect: Effect.gen(function*() {
    const settings = yield* ServerConfig
    const organizations = yield* OrganizationsRepository
    const memberships = yield* Memberships

    /** A new organization and its first member, in the caller's transaction. */
    const insertWithMember = (input: {
      readonly name: string
      readonly userId: UserId | null
      readonly role: Role
      readonly provisional: boolean
    }) =>
      Effect.gen(function*() {
        const createdAt = yield* now
        const organization = yield* organizations.insert({
          id: yield* makeId("org"),
          name: input.name,
          plan: settings.defaultPlan,
          provisional: input.provisional,
          createdAt,
          updatedAt: createdAt
        })
        const membership = yield* memberships.join({ organizationId: organization.id, userId: input.userId, role: input.role })
        return { organization, membership }
      })

    const create = (input: { readonly name: string; readonly userId: UserId; readonly sessionId: SessionId }) =>
      transaction(
        Effect.gen(function*() {
          const created = yield* insertWithMember({ name: input.name, userId: input.userId, role: "owner", provisional: false })
          yield* memberships.activate(input.sessionId, created.organization.id)
          // Recorded in the new organization's log, by its owner.
          yield* AuditRecorder.describe({ organizationId: created.organization.id, membershipId: created.membership.id })
          return created
        })
      )

    /** The operator organization: the configured one, else the first created on this instance. */
    const operatorOrganizationId = settings.operatorOrganizationId === undefined
      ? orUnavailable(organizations.operatorOrganizationId)
      : Effect.succeed(Option.some(settings.operatorOrganizationId as OrganizationId))

    /**
     * Passes for the members of the operator organization whose role may take the operator-only `action` (owners and
     * admins, per the policy table); anyone else: 403 `operator_only`.
     */
    const requireOperator = (caller: MemberContext, action: Action) =>
      Effect.gen(function*() {
        const operator = yield* operatorOrganizationId
        if (!Option.contains(operator, caller.organization.id) || !can(caller, action)) {
          return yield* new Forbidden({
            reason: "operator_only",
            message: "Only owners and admins of the operator organization may do this."
          })
        }
      })

    const setPlan = (caller: MemberContext, organizationId: OrganizationId, plan: Plan) =>
      Effect.gen(function*() {
        yield* requireOperator(caller, "organizations.setPlan")
        const updated = yield* transaction(Effect.gen(function*() {
          yield* organizations.lock(organizationId)
          const before = yield* organizations.find(organizationId)
          const after = yield* organizations.update(organizationId, { plan }, yield* now)
          if (Option.isSome(before) && Option.isSome(after)) yield* AuditRecorder.describeChange(Organization, before.value, after.value)
          return after
        }))
        if (Option.isNone(updated)) {
          return yield* new NotFound({ error: "organization_not_found", message: "Organization not found." })
        }
        return updated.value
      })

    return { insertWithMember, create, find: organizations.find, requireOperator, setPlan } as const
  }),
  dependencies: [OrganizationsRepository.Default, Memberships.Default]
}) {}

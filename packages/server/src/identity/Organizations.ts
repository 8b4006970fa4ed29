/** Organizations: creation (the creator becomes owner) and plan changes by the instance's operator (identity/Operator.ts). */
import { Conflict, type MemberContext, NotFound, Organization, type OrganizationId, type Plan, type Role, type SessionId, type UserId } from "@orgplane/schema"
import { Effect, Option } from "effect"
import { ServerConfig } from "../platform/Config.js"
import { makeId } from "../platform/Ids.js"
import { lockLimit, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { Memberships } from "./Memberships.js"
import { Operator } from "./Operator.js"
import { OrganizationsRepository } from "./OrganizationsRepository.js"
import * as AuditRecorder from "../platform/AuditRecorder.js"

export class Organizations extends Effect.Service<Organizations>()("@orgplane/server/identity/Organizations", {
  effect: Effect.gen(function*() {
    const settings = yield* ServerConfig
    const organizations = yield* OrganizationsRepository
    const memberships = yield* Memberships
    const operator = yield* Operator

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

    /**
     * A person's organizations, one creation at a time until its transaction ends (`lockLimit`, keyed by the person):
     * two creations racing cannot both count room under the quota.
     */
    const create = Effect.fn("Organizations.create")(function*(input: { readonly name: string; readonly userId: UserId; readonly sessionId: SessionId }) {
      return yield* transaction(
        Effect.gen(function*() {
          yield* lockLimit("organizations_owned", input.userId)
          const quota = settings.organizationsPerUser
          if ((yield* organizations.countOwnedBy(input.userId)) >= quota) {
            return yield* new Conflict({
              error: "organization_quota_reached",
              message: `You own ${quota} organizations, the most this instance allows (ORGPLANE_ORGANIZATIONS_PER_USER): delete or hand over one, or ask the instance's operator to raise the setting.`
            })
          }
          const created = yield* insertWithMember({ name: input.name, userId: input.userId, role: "owner", provisional: false })
          // Its creator's email is the one the organization knows them by (docs/security.md, "Account takeover").
          yield* memberships.markEmailVerified({ organizationId: created.organization.id, id: created.membership.id, at: created.organization.createdAt })
          yield* memberships.activate(input.sessionId, created.organization.id)
          // Recorded in the new organization's log, by its owner.
          yield* AuditRecorder.describe({ organizationId: created.organization.id, membershipId: created.membership.id })
          return created
        })
      )
    })

    const setPlan = (caller: MemberContext, organizationId: OrganizationId, plan: Plan) =>
      Effect.gen(function*() {
        yield* operator.require(caller, "organizations.setPlan")
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

    return { insertWithMember, create, find: organizations.find, setPlan } as const
  }),
  dependencies: [OrganizationsRepository.Default, Memberships.Default, Operator.Default]
}) {}

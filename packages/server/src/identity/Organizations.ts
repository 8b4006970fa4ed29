/** Organizations: creation (the creator becomes owner) and plan changes by the instance operator. */
import {
  Forbidden,
  type MembershipId,
  NotFound,
  type OrganizationId,
  type Plan,
  type Role,
  type SessionId,
  type UserId
} from "@orgplane/schema"
import { Effect, Option } from "effect"
import { hasRole, type MemberContext } from "../platform/Auth.js"
import { ServerConfig } from "../platform/Config.js"
import { makeId } from "../platform/Ids.js"
import { transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { OrganizationsRepository } from "./OrganizationsRepository.js"
import { SessionsRepository } from "./SessionsRepository.js"

export class Organizations extends Effect.Service<Organizations>()("@orgplane/server/Organizations", {
  effect: Effect.gen(function*() {
    const settings = yield* ServerConfig
    const organizations = yield* OrganizationsRepository
    const sessions = yield* SessionsRepository

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
          id: yield* makeId<OrganizationId>("org"),
          name: input.name,
          plan: settings.defaultPlan,
          provisional: input.provisional,
          createdAt
        })
        const membership = yield* organizations.insertMembership({
          id: yield* makeId<MembershipId>("om"),
          organizationId: organization.id,
          userId: input.userId,
          role: input.role,
          createdAt
        })
        return { organization, membership }
      })

    const create = (input: { readonly name: string; readonly userId: UserId; readonly sessionId: SessionId }) =>
      transaction(
        Effect.gen(function*() {
          const created = yield* insertWithMember({ name: input.name, userId: input.userId, role: "owner", provisional: false })
          yield* sessions.setActiveOrganization(input.sessionId, created.organization.id)
          return created
        })
      )

    /** The operator organization: the configured one, else the first created on this instance. */
    const operatorOrganizationId = Option.match(settings.operatorOrganizationId, {
      onSome: (id) => Effect.succeed(Option.some(id as OrganizationId)),
      onNone: () => organizations.operatorOrganizationId
    })

    const requireOperator = (caller: MemberContext) =>
      Effect.gen(function*() {
        const operator = yield* operatorOrganizationId
        const isOperator = Option.contains(operator, caller.organization.id) && hasRole(caller.membership.role, "admin")
        if (!isOperator) {
          return yield* new Forbidden({
            reason: "operator_only",
            message: "Only owners and admins of the operator organization may do this."
          })
        }
      })

    const setPlan = (caller: MemberContext, organizationId: OrganizationId, plan: Plan) =>
      Effect.gen(function*() {
        yield* requireOperator(caller)
        const updated = yield* organizations.update(organizationId, { plan }, yield* now)
        if (Option.isNone(updated)) {
          return yield* new NotFound({ error: "organization_not_found", message: "Organization not found." })
        }
        return updated.value
      })

    return { insertWithMember, create, setPlan, requireOperator } as const
  }),
  dependencies: [OrganizationsRepository.Default, SessionsRepository.Default]
}) {}


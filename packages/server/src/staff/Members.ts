/**
 * Members and their roles. Every change runs in one transaction that takes the organization's membership lock
 * and re-reads the caller's own membership: decisions are made on the state they change, so concurrent role
 * changes and removals can never leave an organization without an owner.
 */
import {
  Conflict,
  Member,
  type MemberContext,
  type MemberListQuery,
  type MembershipId,
  NotFound,
  OrganizationNotFound,
  type Role
} from "@orgplane/schema"
import { Effect, Option } from "effect"
import { Memberships } from "../identity/Memberships.js"
import { authorize } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { MembersRepository } from "./MembersRepository.js"

export const memberNotFound = (id?: string) =>
  new NotFound({
    error: "member_not_found",
    message: id === undefined ? "Member not found." : `${id} is not a member of this organization.`
  })

const lastOwner = () =>
  new Conflict({ error: "last_owner", message: "An organization keeps at least one owner: make someone else an owner first." })

export class Members extends Effect.Service<Members>()("@orgplane/server/Members", {
  effect: Effect.gen(function*() {
    const members = yield* MembersRepository
    const memberships = yield* Memberships

    /**
     * Runs `change` in a transaction holding the membership lock, with the caller as they are now (their current
     * role decides) and the target's current membership. A caller who left meanwhile gets 404
     * `organization_not_found`.
     */
    const withLock = <A, E, R>(
      caller: MemberContext,
      targetId: MembershipId,
      change: (self: MemberContext, target: Member) => Effect.Effect<A, E, R>
    ) =>
      transaction(
        Effect.gen(function*() {
          const organizationId = caller.organization.id
          const self = yield* memberships.lockAndRead(organizationId, { id: caller.membership.id })
          if (Option.isNone(self)) return yield* new OrganizationNotFound()
          const target = yield* members.findActive({ organizationId, id: targetId })
          if (Option.isNone(target)) return yield* memberNotFound()
          return yield* change({ ...caller, membership: self.value }, target.value)
        })
      )

    /** Fails with 409 `last_owner` when `target` is the organization's only owner. */
    const keepAnOwner = (target: Member) =>
      target.role !== "owner"
        ? Effect.void
        : Effect.flatMap(members.countOwners(target.organizationId), (owners) => owners > 1 ? Effect.void : Effect.fail(lastOwner()))

    const list = (caller: MemberContext, query: MemberListQuery) =>
      Effect.zipRight(authorize(caller, "members.read"), orUnavailable(members.list(caller.organization.id, query)))

    const get = (caller: MemberContext, id: MembershipId) =>
      Effect.gen(function*() {
        yield* authorize(caller, "members.read")
        const member = yield* orUnavailable(members.find({ organizationId: caller.organization.id, id }))
        if (Option.isNone(member)) return yield* memberNotFound()
        return { member: member.value }
      })

    const changeRole = (caller: MemberContext, id: MembershipId, role: Role) =>
      withLock(caller, id, (self, target) =>
        Effect.gen(function*() {
          yield* authorize(self, "members.changeRole")
          if (target.role === "owner" || role === "owner") yield* authorize(self, "members.manageOwners")
          if (target.role === role) return { member: target }
          yield* keepAnOwner(target)
          yield* memberships.changeRole(target.organizationId, target.id, role)
          return { member: new Member({ ...target, role }) }
        }))

    const remove = (caller: MemberContext, id: MembershipId) =>
      withLock(caller, id, (self, target) =>
        Effect.gen(function*() {
          if (target.id === self.membership.id) {
            yield* authorize(self, "members.leave")
          } else {
            yield* authorize(self, "members.remove")
            if (target.role === "owner") yield* authorize(self, "members.manageOwners")
          }
          yield* keepAnOwner(target)
          yield* memberships.remove(target.organizationId, target.id)
        }))

    const transferOwnership = (caller: MemberContext, id: MembershipId) =>
      withLock(caller, id, (self, target) =>
        Effect.gen(function*() {
          yield* authorize(self, "members.transferOwnership")
          if (target.role !== "admin") {
            return yield* new Conflict({
              error: "member_not_admin",
              message: "Ownership can only be transferred to an admin: make them an admin first."
            })
          }
          yield* memberships.changeRole(target.organizationId, target.id, "owner")
          yield* memberships.changeRole(target.organizationId, self.membership.id, "admin")
          const previous = yield* members.findActive({ organizationId: target.organizationId, id: self.membership.id })
          return { previousOwner: Option.getOrThrow(previous), owner: new Member({ ...target, role: "owner" }) }
        }))

    return { list, get, changeRole, remove, transferOwnership } as const
  }),
  dependencies: [MembersRepository.Default, Memberships.Default]
}) {}

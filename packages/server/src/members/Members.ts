/**
 * Members and their roles, over the `Memberships` service. Every change runs in one transaction that takes the
 * organization's membership lock and then re-reads the caller, the target and the owner count in one statement:
 * decisions are made on the state they change, so concurrent role changes and removals can never leave an
 * organization without an owner.
 */
import {
  Conflict,
  Member,
  type MemberContext,
  type MemberListQuery,
  Membership,
  type MembershipId,
  OrganizationNotFound,
  type Role
} from "@orgplane/schema"
import { Effect, Option } from "effect"
import { memberNotFound, Memberships } from "../identity/Memberships.js"
import { describeChange } from "../platform/AuditRecorder.js"
import { authorize } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"

const lastOwner = () =>
  new Conflict({ error: "last_owner", message: "An organization keeps at least one owner: make someone else an owner first." })

/** A change's view of the organization, read under the membership lock. */
interface Locked {
  /** The caller as they are now: their current role decides. */
  readonly self: MemberContext
  /** The caller as a member. */
  readonly caller: Member
  readonly target: Member
  /** The organization's active owners. */
  readonly owners: number
}

export class Members extends Effect.Service<Members>()("@orgplane/server/members/Members", {
  effect: Effect.gen(function*() {
    const memberships = yield* Memberships

    /**
     * Runs `change` in a transaction holding the membership lock, with the caller and the target as they are now
     * and the number of owners, read in one statement. A caller who left meanwhile gets 404
     * `organization_not_found`.
     */
    const withLock = <A, E, R>(caller: MemberContext, targetId: MembershipId, change: (locked: Locked) => Effect.Effect<A, E, R>) =>
      transaction(
        Effect.gen(function*() {
          const found = yield* memberships.lockForChange(caller.organization.id, { callerId: caller.membership.id, targetId })
          if (Option.isNone(found.caller)) return yield* new OrganizationNotFound()
          if (Option.isNone(found.target)) return yield* memberNotFound()
          const self = { ...caller, membership: new Membership({ ...caller.membership, role: found.caller.value.role }, true) }
          return yield* change({ self, caller: found.caller.value, target: found.target.value, owners: found.owners })
        })
      )

    /** Fails with 409 `last_owner` when the target is the organization's only owner. */
    const keepAnOwner = ({ owners, target }: Locked) =>
      target.role !== "owner" || owners > 1 ? Effect.void : Effect.fail(lastOwner())

    const list = (caller: MemberContext, query: MemberListQuery) =>
      Effect.zipRight(authorize(caller, "members.read"), orUnavailable(memberships.list(caller.organization.id, query)))

    const get = (caller: MemberContext, id: MembershipId) =>
      Effect.gen(function*() {
        yield* authorize(caller, "members.read")
        const member = yield* orUnavailable(memberships.find({ organizationId: caller.organization.id, id }))
        if (Option.isNone(member)) return yield* memberNotFound()
        return { member: member.value }
      })

    const changeRole = (caller: MemberContext, id: MembershipId, role: Role) =>
      withLock(caller, id, (locked) =>
        Effect.gen(function*() {
          const { self, target } = locked
          yield* authorize(self, "members.changeRole")
          if (target.role === "owner" || role === "owner") yield* authorize(self, "members.manageOwners")
          if (target.role === role) return { member: target }
          yield* keepAnOwner(locked)
          yield* memberships.changeRole(target.organizationId, target.id, role)
          const member = new Member({ ...target, role })
          yield* describeChange(Member, target, member)
          return { member }
        }))

    const remove = (caller: MemberContext, id: MembershipId) =>
      withLock(caller, id, (locked) =>
        Effect.gen(function*() {
          const { self, target } = locked
          if (target.id === self.membership.id) {
            yield* authorize(self, "members.leave")
          } else {
            yield* authorize(self, "members.remove")
            if (target.role === "owner") yield* authorize(self, "members.manageOwners")
          }
          yield* keepAnOwner(locked)
          yield* memberships.remove(target.organizationId, target.id)
        }))

    const transferOwnership = (caller: MemberContext, id: MembershipId) =>
      withLock(caller, id, ({ caller: previous, self, target }) =>
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
          return { previousOwner: new Member({ ...previous, role: "admin" }), owner: new Member({ ...target, role: "owner" }) }
        }))

    return { list, get, changeRole, remove, transferOwnership } as const
  }),
  dependencies: [Memberships.Default]
}) {}

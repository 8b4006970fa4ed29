/**
 * Members and their roles. Every change runs in one transaction that first locks the organization, then re-reads
 * the caller's own membership: decisions are made on the state they change, so concurrent role changes and
 * removals can never leave an organization without an owner.
 */
import {
  Conflict,
  Member,
  type MemberListQuery,
  type MembershipId,
  NotFound,
  OrganizationNotFound,
  type Role
} from "@orgplane/schema"
import { Effect, Option } from "effect"
import { type MemberContext, requireRole } from "../platform/Auth.js"
import * as Cursor from "../platform/Cursor.js"
import { transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { OrganizationsRepository } from "../identity/OrganizationsRepository.js"
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
    const organizations = yield* OrganizationsRepository

    /**
     * Runs `change` in a transaction holding the organization's membership lock, with the caller's and the
     * target's current memberships. A caller who left meanwhile gets 404 `organization_not_found`.
     */
    const withLock = <A, E, R>(
      caller: MemberContext,
      targetId: MembershipId,
      change: (self: Member, target: Member, at: Date) => Effect.Effect<A, E, R>
    ) =>
      transaction(
        Effect.gen(function*() {
          const organizationId = caller.organization.id
          yield* organizations.lockMemberships(organizationId)
          const self = yield* members.findActive(organizationId, caller.membership.id)
          if (Option.isNone(self)) return yield* new OrganizationNotFound()
          const target = yield* members.findActive(organizationId, targetId)
          if (Option.isNone(target)) return yield* memberNotFound()
          return yield* change(self.value, target.value, yield* now)
        })
      )

    const asContext = (caller: MemberContext, self: Member): MemberContext => ({
      organization: caller.organization,
      membership: { ...caller.membership, role: self.role }
    })

    /** Fails with 409 `last_owner` when `target` is the organization's only owner. */
    const keepAnOwner = (target: Member) =>
      target.role !== "owner"
        ? Effect.void
        : Effect.flatMap(members.countOwners(target.organizationId), (owners) =>
          owners > 1 ? Effect.void : Effect.fail(lastOwner()))

    const list = (caller: MemberContext, query: MemberListQuery) =>
      Effect.gen(function*() {
        const page = yield* Cursor.request(query)
        const rows = yield* members.list(caller.organization.id, query, page)
        return Cursor.page(rows, page.limit, (member) => [member.id])
      })

    const get = (caller: MemberContext, id: MembershipId) =>
      Effect.flatMap(members.find(caller.organization.id, id), Option.match({
        onNone: () => Effect.fail(memberNotFound()),
        onSome: (member) => Effect.succeed({ member })
      }))

    const changeRole = (caller: MemberContext, id: MembershipId, role: Role) =>
      withLock(caller, id, (self, target, at) =>
        Effect.gen(function*() {
          const context = asContext(caller, self)
          yield* requireRole(context, "admin")
          if (target.role === "owner" || role === "owner") yield* requireRole(context, "owner")
          if (target.role === role) return { member: target }
          yield* keepAnOwner(target)
          yield* members.setRole(target.id, role, at)
          return { member: new Member({ ...target, role }) }
        }))

    const remove = (caller: MemberContext, id: MembershipId) =>
      withLock(caller, id, (self, target, at) =>
        Effect.gen(function*() {
          if (target.id !== self.id) {
            const context = asContext(caller, self)
            yield* requireRole(context, "admin")
            if (target.role === "owner") yield* requireRole(context, "owner")
          }
          yield* keepAnOwner(target)
          yield* members.remove(target.id, at)
        }))

    const transferOwnership = (caller: MemberContext, id: MembershipId) =>
      withLock(caller, id, (self, target, at) =>
        Effect.gen(function*() {
          yield* requireRole(asContext(caller, self), "owner")
          if (target.role !== "admin") {
            return yield* new Conflict({
              error: "member_not_admin",
              message: "Ownership can only be transferred to an admin: make them an admin first."
            })
          }
          yield* members.setRole(target.id, "owner", at)
          yield* members.setRole(self.id, "admin", at)
          return {
            previousOwner: new Member({ ...self, role: "admin" }),
            owner: new Member({ ...target, role: "owner" })
          }
        }))

    /** Fails with 404 `member_not_found` unless every id is an active member; locks them against removal. */
    const requireActive = (caller: MemberContext, ids: ReadonlyArray<MembershipId>) =>
      Effect.flatMap(members.missingActive(caller.organization.id, ids), (missing) =>
        missing.length === 0 ? Effect.void : Effect.fail(memberNotFound(missing[0])))

    return { list, get, changeRole, remove, transferOwnership, requireActive } as const
  }),
  dependencies: [MembersRepository.Default, OrganizationsRepository.Default]
}) {}

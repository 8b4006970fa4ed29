/**
 * Members and their roles, over the `Memberships` service. Every change runs in one transaction that takes the
 * organization's membership lock and then re-reads the caller, the target and the owner count in one statement:
 * decisions are made on the state they change, so concurrent role changes and removals can never leave an
 * organization without an owner. Whoever becomes an owner does so within the organizations they may own
 * (OwnershipQuota).
 */
import {
  Conflict,
  Member,
  type MemberContext,
  MemberDirectorySettings,
  type MemberListQuery,
  Membership,
  type MembershipId,
  OrganizationNotFound,
  type Role
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { memberNotFound, Memberships } from "../identity/Memberships.js"
import { OwnershipQuota } from "../identity/OwnershipQuota.js"
import { describeChange } from "../platform/AuditRecorder.js"
import { ServerConfig } from "../platform/Config.js"
import { authorize, can, requireRecentAuthentication } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { DirectoryRepository } from "./DirectoryRepository.js"

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

const make = Effect.gen(function*() {
  const memberships = yield* Memberships
  const directory = yield* DirectoryRepository
  const { recentAuthentication } = yield* ServerConfig
  const quota = yield* OwnershipQuota

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
        const self = {
          ...caller,
          membership: new Membership({ ...caller.membership, role: found.caller.value.role }, { disableChecks: true })
        }
        return yield* change({ self, caller: found.caller.value, target: found.target.value, owners: found.owners })
      })
    )

  /** A member made an owner (a role change, a transfer): within the organizations they may own (OwnershipQuota). */
  const becomesOwner = (target: Member) =>
    target.userId === undefined || target.userId === null ? Effect.void : quota.requireRoom(target.userId, "this member")

  /** Fails with 409 `last_owner` when the target is the organization's only owner. */
  const keepAnOwner = ({ owners, target }: Locked) =>
    target.role !== "owner" || owners > 1 ? Effect.void : Effect.fail(lastOwner())

  /**
   * How the caller sees other members: owners and admins everything; a plain member (or a key acting as one) names,
   * roles and dates, and emails only where the organization allows it.
   */
  const viewOf = Effect.fn("Members.viewOf")(function*(caller: MemberContext) {
    if (can(caller, "members.readDirectory")) return { full: true, emails: true } as const
    return { full: false, emails: yield* orUnavailable(directory.emailsVisible(caller.organization.id)) } as const
  })

  const shown = (view: { readonly full: boolean; readonly emails: boolean }) => (member: Member): Member => {
    if (view.full) return member
    const { email, suspendedAt: _suspendedAt, userId: _userId, ...seen } = member
    return new Member(view.emails && email !== undefined ? { ...seen, email } : seen, { disableChecks: true })
  }

  const list = Effect.fn("Members.list")(function*(caller: MemberContext, query: MemberListQuery) {
    yield* authorize(caller, "members.read")
    const view = yield* viewOf(caller)
    // Former members are the directory's: a plain member asking for them is refused rather than answered without.
    if (query.includeRemoved === true) yield* authorize(caller, "members.readDirectory")
    const page = yield* orUnavailable(memberships.list(caller.organization.id, query, view.emails))
    return { ...page, items: page.items.map(shown(view)) }
  })

  const get = Effect.fn("Members.get")(function*(caller: MemberContext, id: MembershipId) {
    yield* authorize(caller, "members.read")
    const view = yield* viewOf(caller)
    const member = yield* orUnavailable(memberships.find({ organizationId: caller.organization.id, id }))
    if (Option.isNone(member) || (!view.full && member.value.removedAt !== null)) return yield* memberNotFound()
    return { member: shown(view)(member.value) }
  })

  const getDirectorySettings = Effect.fn("Members.getDirectorySettings")(function*(caller: MemberContext) {
    yield* authorize(caller, "members.read")
    const visible = yield* orUnavailable(directory.emailsVisible(caller.organization.id))
    return { settings: new MemberDirectorySettings({ emailsVisibleToMembers: visible }) }
  })

  const setDirectorySettings = Effect.fn("Members.setDirectorySettings")(function*(caller: MemberContext, input: { readonly emailsVisibleToMembers: boolean }) {
    yield* authorize(caller, "members.manageDirectory")
    return yield* transaction(Effect.gen(function*() {
      const before = yield* directory.setEmailsVisible(caller.organization.id, input.emailsVisibleToMembers)
      const settings = new MemberDirectorySettings({ emailsVisibleToMembers: input.emailsVisibleToMembers })
      yield* describeChange(MemberDirectorySettings, new MemberDirectorySettings({ emailsVisibleToMembers: before }), settings)
      return { settings }
    }))
  })

  const changeRole = Effect.fn("Members.changeRole")((caller: MemberContext, id: MembershipId, role: Role) =>
    withLock(caller, id, (locked) =>
      Effect.gen(function*() {
        const { self, target } = locked
        yield* authorize(self, "members.changeRole")
        if (target.role === role) return { member: target }
        if (target.role === "owner" || role === "owner") {
          yield* authorize(self, "members.manageOwners")
          yield* requireRecentAuthentication(self, recentAuthentication)
        }
        if (role === "owner") yield* becomesOwner(target)
        yield* keepAnOwner(locked)
        yield* memberships.changeRole(target.organizationId, target.id, role)
        const member = new Member({ ...target, role })
        yield* describeChange(Member, target, member)
        return { member }
      })))

  const remove = Effect.fn("Members.remove")((caller: MemberContext, id: MembershipId) =>
    withLock(caller, id, (locked) =>
      Effect.gen(function*() {
        const { self, target } = locked
        if (target.id === self.membership.id) {
          yield* authorize(self, "members.leave")
        } else {
          yield* authorize(self, "members.remove")
          if (target.role === "owner") {
            yield* authorize(self, "members.manageOwners")
            yield* requireRecentAuthentication(self, recentAuthentication)
          }
        }
        yield* keepAnOwner(locked)
        yield* memberships.remove(target.organizationId, target.id)
      })))

  const transferOwnership = Effect.fn("Members.transferOwnership")((caller: MemberContext, id: MembershipId) =>
    withLock(caller, id, ({ caller: previous, self, target }) =>
      Effect.gen(function*() {
        yield* authorize(self, "members.transferOwnership")
        yield* requireRecentAuthentication(self, recentAuthentication)
        if (target.role !== "admin") {
          return yield* new Conflict({
            error: "member_not_admin",
            message: "Ownership can only be transferred to an admin: make them an admin first."
          })
        }
        yield* becomesOwner(target)
        yield* memberships.changeRole(target.organizationId, target.id, "owner")
        yield* memberships.changeRole(target.organizationId, self.membership.id, "admin")
        return { previousOwner: new Member({ ...previous, role: "admin" }), owner: new Member({ ...target, role: "owner" }) }
      })))

  return { list, get, getDirectorySettings, setDirectorySettings, changeRole, remove, transferOwnership } as const
})

export class Members extends Context.Service<Members>()("@orgplane/server/members/Members", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      Memberships.layer,
      DirectoryRepository.layer,
      OwnershipQuota.layer
    ])
  )
}

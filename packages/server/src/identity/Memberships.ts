/**
 * The membership lifecycle in one place: joining, role changes, leaving or being removed, the organization's
 * membership lock, and which organization a session acts in; and the way every other area reads memberships
 * (`MembershipsRepository` is the table's one repository). Services decide who may do what; this module
 * makes the change the same way for all of them.
 *
 * The lock: every transaction that changes an organization's memberships (role changes, removals, ownership
 * transfers, invitations and their acceptance, bootstrap claims) first takes the row lock of the organization,
 * then re-reads what it decides on. Checks like "an owner stays" therefore see the state they change, and
 * concurrent changes of one organization queue instead of racing. The organization is locked before the
 * memberships and invitations it guards (a bootstrap claim locks its own claim row first: nothing else locks
 * those), which keeps these transactions free of deadlocks.
 *
 * The re-read is a statement of its own, after the one that took the lock: under READ COMMITTED a statement sees
 * the rows committed when it started, so a statement that waited for the lock would decide on the state from
 * before the wait.
 *
 * Joining is where an account's reach grows, so it is where a password an organization's owner or admin may know
 * (they were shown the reset link that set it) ends: on joining any other organization (docs/security.md, "Who owns
 * an account").
 */
import { type MembershipId, NotFound, type OrganizationId, type Role, type SessionId, type UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Authority from "../platform/Authority.js"
import { makeId } from "../platform/Ids.js"
import { now } from "../platform/Time.js"
import { MembershipsRepository, toMembership } from "./MembershipsRepository.js"
import { OrganizationsRepository } from "./OrganizationsRepository.js"
import { SessionsRepository } from "./SessionsRepository.js"
import { UsersRepository } from "./UsersRepository.js"

/** 404 `member_not_found`, naming the id when the caller gave one that is not a member. */
export const memberNotFound = (id?: string) =>
  new NotFound({
    error: "member_not_found",
    message: id === undefined ? "Member not found." : `${id} is not a member of this organization.`
  })

const make = Effect.gen(function*() {
  const organizations = yield* OrganizationsRepository
  const memberships = yield* MembershipsRepository
  const sessions = yield* SessionsRepository
  const users = yield* UsersRepository

  /**
   * A new membership (`userId` null: the placeholder owner of a bootstrapped workspace). A password another
   * organization's owner or admin may know ends, with the sessions passwords made.
   */
  const join = Effect.fn("Memberships.join")(function*(input: { readonly organizationId: OrganizationId; readonly userId: UserId | null; readonly role: Role }) {
    const id = yield* makeId("om")
    const at = yield* now
    if (input.userId !== null) {
      const ended = yield* users.endPasswordBoundElsewhere({ id: input.userId, organizationId: input.organizationId, at })
      if (ended) yield* sessions.revokePasswordSessions({ userId: input.userId, at })
    }
    return yield* memberships.insert({ id, ...input, createdAt: at })
  })

  /** Takes the organization's membership lock until the transaction ends (see the module comment). */
  const lock = Effect.fn("Memberships.lock")((organizationId: OrganizationId) => Effect.asVoid(organizations.lock(organizationId)))

  /** Takes the lock, then reads the person's active membership as it is now. */
  const lockAndRead = Effect.fn("Memberships.lockAndRead")(function*(organizationId: OrganizationId, who: { readonly userId: UserId }) {
    yield* lock(organizationId)
    return yield* Effect.map(memberships.findActive(organizationId, who), Option.map(toMembership))
  })

  /**
   * Takes the lock, then reads in one statement what a change of one member by another decides on: both members
   * as they are now and the organization's number of owners (`ChangeState`).
   */
  const lockForChange = Effect.fn("Memberships.lockForChange")(function*(organizationId: OrganizationId, ids: { readonly callerId: MembershipId; readonly targetId: MembershipId }) {
    yield* lock(organizationId)
    return yield* memberships.findForChange(organizationId, ids)
  })

  /**
   * The changes below also tell the write's check at commit (platform/Authority.ts) that this transaction changed
   * the membership: when it is the caller's own, the change was decided under the membership lock.
   */
  const changedHere = (membershipId: MembershipId, ended: boolean) => Authority.changedHere({ membershipId, ended })

  const changeRole = Effect.fn("Memberships.changeRole")(function*(organizationId: OrganizationId, id: MembershipId, role: Role) {
    yield* changedHere(id, false)
    return yield* Effect.flatMap(now, (updatedAt) => memberships.changeRole({ organizationId, id, role, updatedAt }))
  })

  /**
   * Ends a membership (leaving or being removed): it keeps its id with `removedAt` set, leaves every team, and
   * the API keys it created are revoked. Sessions acting in the organization fall back to another of the
   * person's organizations on their next request.
   */
  const remove = Effect.fn("Memberships.remove")(function*(organizationId: OrganizationId, id: MembershipId) {
    yield* changedHere(id, true)
    return yield* Effect.flatMap(now, (removedAt) => memberships.remove({ organizationId, id, removedAt }))
  })

  /**
   * The directory (SCIM) deactivated the member: `suspended_at` set (the member stays, is not admitted and is no
   * seat), the person's sessions acting in the organization revoked, the member's API keys of the organization
   * deleted. Runs inside the caller's transaction, after the caller took the lock (`lock`). The member's delegated
   * credentials belong to other areas: the caller also calls mcp's and capabilities' `forgetMember`.
   * False when there is no such active membership.
   */
  const suspend = Effect.fn("Memberships.suspend")(function*(organizationId: OrganizationId, id: MembershipId) {
    yield* changedHere(id, true)
    return yield* Effect.flatMap(now, (at) => memberships.suspend({ organizationId, id, at }))
  })

  /** The directory reactivated the member: `suspended_at` cleared. False when there is no such active membership. */
  const restore = Effect.fn("Memberships.restore")((organizationId: OrganizationId, id: MembershipId) =>
    Effect.flatMap(now, (at) => memberships.restore({ organizationId, id, at })))

  /**
   * The directory deleted the member: suspended as `suspend` does, then removed as `remove` does, `suspended_at`
   * kept so neither SSO JIT nor an invitation brings the person back (`isDeprovisioned`). The person (the users
   * row) is never deleted. False when there is no such active membership.
   */
  const removeByDirectory = Effect.fn("Memberships.removeByDirectory")(function*(organizationId: OrganizationId, id: MembershipId) {
    const at = yield* now
    yield* changedHere(id, true)
    if (!(yield* memberships.suspend({ organizationId, id, at }))) return false
    yield* memberships.remove({ organizationId, id, removedAt: at })
    return true
  })

  /** Makes the organization the one the session acts in. */
  const activate = Effect.fn("Memberships.activate")((sessionId: SessionId, organizationId: OrganizationId) =>
    sessions.setActiveOrganization({ id: sessionId, organizationId }))

  return {
    join,
    lock,
    lockAndRead,
    lockForChange,
    changeRole,
    remove,
    suspend,
    restore,
    removeByDirectory,
    /** Whether the person's latest membership of the organization has `suspended_at` set (the directory's doing). */
    isDeprovisioned: memberships.isDeprovisioned,
    activate,
    find: memberships.find,
    findActive: memberships.findActive,
    list: memberships.list,
    every: memberships.every,
    missingActive: memberships.missingActive,
    wasRemoved: memberships.wasRemoved,
    oldestOrganizationOf: memberships.oldestOrganizationOf,
    activeOrganizationsOf: memberships.activeOrganizationsOf,
    listForUser: memberships.listForUser,
    holdersOf: memberships.holdersOf,
    listRestorable: memberships.listRestorable,
    markEmailVerified: memberships.markEmailVerified,
    emailProven: memberships.emailProven,
    organizationsEverOf: memberships.organizationsEverOf,
    headcount: memberships.headcount,
    clearEmailProofs: memberships.clearEmailProofs,
    /** Every membership of the person in the organization, removed ones too, oldest first (rows, not members). */
    allOf: Effect.fn("Memberships.allOf")((organizationId: OrganizationId, userId: UserId) => memberships.allOf({ organizationId, userId }))
  } as const
})

export class Memberships extends Context.Service<Memberships>()("@orgplane/server/identity/Memberships", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      OrganizationsRepository.layer,
      MembershipsRepository.layer,
      SessionsRepository.layer,
      UsersRepository.layer
    ])
  )
}

/**
 * The membership lifecycle in one place: joining, role changes, leaving or being removed, the organization's
 * membership lock, and which organization a session acts in. Services decide who may do what; this module makes
 * the change the same way for all of them.
 *
 * The lock: every transaction that changes an organization's memberships (role changes, removals, ownership
 * transfers, invitations and their acceptance, bootstrap claims) first takes the row lock of the organization,
 * then re-reads what it decides on. Checks like "an owner stays" therefore see the state they change, and
 * concurrent changes of one organization queue instead of racing. The organization is locked before the
 * memberships and invitations it guards (a bootstrap claim locks its own claim row first: nothing else locks
 * those), which keeps these transactions free of deadlocks.
 */
import type { MembershipId, OrganizationId, Role, SessionId, UserId } from "@orgplane/schema"
import { Effect } from "effect"
import { makeId } from "../platform/Ids.js"
import { now } from "../platform/Time.js"
import { MembershipsRepository } from "./MembershipsRepository.js"
import { OrganizationsRepository } from "./OrganizationsRepository.js"
import { SessionsRepository } from "./SessionsRepository.js"

export class Memberships extends Effect.Service<Memberships>()("@orgplane/server/Memberships", {
  effect: Effect.gen(function*() {
    const organizations = yield* OrganizationsRepository
    const memberships = yield* MembershipsRepository
    const sessions = yield* SessionsRepository

    /** A new membership (`userId` null: the placeholder owner of a bootstrapped workspace). */
    const join = (input: { readonly organizationId: OrganizationId; readonly userId: UserId | null; readonly role: Role }) =>
      Effect.gen(function*() {
        const id = yield* makeId("om")
        return yield* memberships.insert({ id, ...input, createdAt: yield* now })
      })

    /** Takes the organization's membership lock until the transaction ends (see the module comment). */
    const lock = (organizationId: OrganizationId) => Effect.asVoid(organizations.lock(organizationId))

    /** Takes the lock, then reads the active membership a decision depends on, as it is now. */
    const lockAndRead = (
      organizationId: OrganizationId,
      who: { readonly userId: UserId } | { readonly id: MembershipId }
    ) =>
      Effect.zipRight(lock(organizationId), memberships.findActive(organizationId, who))

    const changeRole = (organizationId: OrganizationId, id: MembershipId, role: Role) =>
      Effect.flatMap(now, (updatedAt) => memberships.changeRole({ organizationId, id, role, updatedAt }))

    /**
     * Ends a membership (leaving or being removed): it keeps its id with `removedAt` set, leaves every team, and
     * the API keys it created are revoked. Sessions acting in the organization fall back to another of the
     * person's organizations on their next request.
     */
    const remove = (organizationId: OrganizationId, id: MembershipId) =>
      Effect.flatMap(now, (removedAt) => memberships.remove({ organizationId, id, removedAt }))

    /** Makes the organization the one the session acts in. */
    const activate = (sessionId: SessionId, organizationId: OrganizationId) =>
      sessions.setActiveOrganization({ id: sessionId, organizationId })

    return {
      join,
      lock,
      lockAndRead,
      changeRole,
      remove,
      activate,
      findActive: memberships.findActive,
      wasRemoved: memberships.wasRemoved,
      oldestOrganizationOf: memberships.oldestOrganizationOf,
      listForUser: memberships.listForUser
    } as const
  }),
  dependencies: [OrganizationsRepository.Default, MembershipsRepository.Default, SessionsRepository.Default]
}) {}

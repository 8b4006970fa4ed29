/**
 * Agent-first workspace setup: an agent creates a provisional organization (owned by a placeholder member) and
 * gets one-time claim links; a signed-in person redeems one and takes the workspace over with the claim's role
 * (an owner's claim within the organizations they may own: OwnershipQuota).
 */
import {
  ClaimLink,
  Forbidden,
  hasRole,
  Membership,
  NotFound,
  RateLimited,
  type Role,
  type SessionId,
  type UserId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { publicUrl, ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { describe } from "../platform/AuditRecorder.js"
import { makeId } from "../platform/Ids.js"
import { RateLimiter } from "../platform/RateLimiter.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { BootstrapRepository } from "./BootstrapRepository.js"
import { Memberships } from "./Memberships.js"
import { Organizations } from "./Organizations.js"
import { OrganizationsRepository } from "./OrganizationsRepository.js"
import { OwnershipQuota } from "./OwnershipQuota.js"

export const CLAIM_TOKEN_PREFIX = "opc"
const CLAIM_TTL = Duration.hours(24)

const claimNotFound = () => new NotFound({ error: "claim_not_found", message: "This claim link is unknown, used or expired." })

const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const crypto = yield* Crypto
  const limiter = yield* RateLimiter
  const bootstraps = yield* BootstrapRepository
  const organizations = yield* OrganizationsRepository
  const orgs = yield* Organizations
  const memberships = yield* Memberships
  const quota = yield* OwnershipQuota

  const createWorkspace = Effect.fn("Bootstrap.createWorkspace")(function*(
    clientAddress: string,
    input: { readonly workspaceName: string; readonly claimRoles?: ReadonlyArray<Role> | undefined; readonly ownerEmail?: string | undefined }
  ) {
    const decision = yield* orUnavailable(limiter.hit(`bootstrap:workspace:${clientAddress}`, settings.bootstrapPerHour, Duration.hours(1)))
    if (!decision.allowed) {
      return yield* RateLimited.after(
        decision.retryAfterSeconds,
        `Too many workspaces from this address; retry in ${decision.retryAfterSeconds} seconds.`
      )
    }
    return yield* transaction(
      Effect.gen(function*() {
        const createdAt = yield* now
        const expiresAt = new Date(createdAt.getTime() + Duration.toMillis(CLAIM_TTL))
        const { membership, organization } = yield* orgs.insertWithMember({
          name: input.workspaceName,
          userId: null,
          role: "owner",
          provisional: true
        })
        // The request names no one and no organization: the event goes to the new workspace's log, by nobody known.
        yield* describe({ organizationId: organization.id, anonymous: true })
        const bootstrapId = yield* makeId("wbt")
        yield* bootstraps.insertBootstrap({
          id: bootstrapId,
          organizationId: organization.id,
          setupMembershipId: membership.id,
          status: "provisional",
          createdAt,
          expiresAt
        })
        const claimLinks = yield* Effect.forEach(input.claimRoles ?? (["owner"] as const), (role) =>
          Effect.gen(function*() {
            const token = yield* crypto.newToken(CLAIM_TOKEN_PREFIX)
            const id = yield* makeId("wcl")
            yield* bootstraps.insertClaim({
              id,
              organizationId: organization.id,
              bootstrapId,
              role,
              tokenHash: crypto.hashToken(token),
              createdAt,
              expiresAt
            })
            const url = new URL(`${publicUrl(settings)}/workspace-claim`)
            url.searchParams.set("token", token)
            if (role === "owner" && input.ownerEmail) url.searchParams.set("email", input.ownerEmail)
            return new ClaimLink({ id, role, token, url: url.toString(), expiresAt })
          }))
        return { ok: true as const, organization, setup: { id: bootstrapId, expiresAt }, claimLinks }
      })
    )
  })

  const acceptClaim = Effect.fn("Bootstrap.acceptClaim")((input: { readonly token: string; readonly userId: UserId; readonly sessionId: SessionId }) =>
    transaction(
      Effect.gen(function*() {
        const at = yield* now
        const claim = yield* bootstraps.lockPendingClaim({ tokenHash: crypto.hashToken(input.token), at })
        if (Option.isNone(claim)) return yield* claimNotFound()
        const { organizationId, role } = claim.value
        const existing = yield* memberships.lockAndRead(organizationId, { userId: input.userId })
        // Deleted (or expired unclaimed) while the claim waited for the lock: its links open nothing.
        if (Option.isNone(yield* organizations.find(organizationId))) return yield* claimNotFound()
        if (Option.isNone(existing) && (yield* memberships.wasRemoved(organizationId, input.userId))) {
          return yield* new Forbidden({ reason: "membership_removed", message: "You were removed from this organization." })
        }
        // Claiming as the owner makes the person an owner: within the organizations they may own.
        if (role === "owner" && !Option.exists(existing, (member) => member.role === "owner")) yield* quota.requireRoom(input.userId, "you")
        let membership: Membership
        if (Option.isNone(existing)) {
          membership = yield* memberships.join({ organizationId, userId: input.userId, role })
        } else if (hasRole(existing.value.role, role)) {
          // A claim raises a role, never lowers it: an owner redeeming a member link stays owner (the workspace
          // may have no other real owner).
          membership = existing.value
        } else {
          yield* memberships.changeRole(organizationId, existing.value.id, role)
          membership = new Membership({ ...existing.value, role })
        }
        // The person acts in no organization yet: the event goes to the workspace's log, as its new member.
        yield* describe({ organizationId, membershipId: membership.id })
        const setupMembershipId = yield* bootstraps.markClaimed(claim.value, input.userId, at)
        // The placeholder owner makes way for a real one only: an organization always keeps an owner.
        let organization = yield* organizations.find(organizationId)
        if (role === "owner") {
          yield* memberships.remove(organizationId, setupMembershipId)
          organization = yield* organizations.update(organizationId, { provisional: false }, at)
        }
        yield* memberships.activate(input.sessionId, organizationId)
        return { ok: true as const, organization: Option.getOrThrow(organization), membership }
      })
    ))

  return { createWorkspace, acceptClaim } as const
})

export class Bootstrap extends Context.Service<Bootstrap>()("@orgplane/server/identity/Bootstrap", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      BootstrapRepository.layer,
      OrganizationsRepository.layer,
      RateLimiter.layer,
      Organizations.layer,
      Memberships.layer,
      OwnershipQuota.layer
    ])
  )
}

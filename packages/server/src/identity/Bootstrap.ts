/**
 * Agent-first workspace setup: an agent creates a provisional organization (owned by a placeholder member) and
 * gets one-time claim links; a signed-in person redeems one and takes the workspace over with the claim's role.
 */
import {
  ClaimLink,
  type BootstrapId,
  Forbidden,
  Membership,
  type MembershipId,
  NotFound,
  RateLimited,
  type Role,
  type SessionId,
  type UserId,
  type WorkspaceClaimId
} from "@orgplane/schema"
import { Duration, Effect, Option } from "effect"
import { publicUrl, ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { makeId } from "../platform/Ids.js"
import { RateLimiter } from "../platform/RateLimiter.js"
import { transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { BootstrapRepository } from "./BootstrapRepository.js"
import { Organizations } from "./Organizations.js"
import { OrganizationsRepository } from "./OrganizationsRepository.js"
import { SessionsRepository } from "./SessionsRepository.js"

export const CLAIM_TOKEN_PREFIX = "opc"
const CLAIM_TTL = Duration.hours(24)

export class Bootstrap extends Effect.Service<Bootstrap>()("@orgplane/server/Bootstrap", {
  effect: Effect.gen(function*() {
    const settings = yield* ServerConfig
    const crypto = yield* Crypto
    const limiter = yield* RateLimiter
    const bootstraps = yield* BootstrapRepository
    const organizations = yield* OrganizationsRepository
    const orgs = yield* Organizations
    const sessions = yield* SessionsRepository

    const createWorkspace = (
      clientAddress: string,
      input: { readonly workspaceName: string; readonly claimRoles?: ReadonlyArray<Role> | undefined; readonly ownerEmail?: string | undefined }
    ) =>
      Effect.gen(function*() {
        const decision = yield* limiter.hit(`bootstrap:workspace:${clientAddress}`, settings.bootstrapPerHour, Duration.hours(1))
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
            const bootstrapId = yield* makeId<BootstrapId>("wbt")
            yield* bootstraps.insertBootstrap({
              id: bootstrapId,
              organizationId: organization.id,
              setupMembershipId: membership.id,
              createdAt,
              expiresAt
            })
            const claimLinks = yield* Effect.forEach(input.claimRoles ?? (["owner"] as const), (role) =>
              Effect.gen(function*() {
                const token = yield* crypto.newToken(CLAIM_TOKEN_PREFIX)
                const id = yield* makeId<WorkspaceClaimId>("wcl")
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

    const acceptClaim = (input: { readonly token: string; readonly userId: UserId; readonly sessionId: SessionId }) =>
      transaction(
        Effect.gen(function*() {
          const at = yield* now
          const claim = yield* bootstraps.lockPendingClaim(crypto.hashToken(input.token), at)
          if (Option.isNone(claim)) {
            return yield* new NotFound({ error: "claim_not_found", message: "This claim link is unknown, used or expired." })
          }
          const { organizationId, role } = claim.value
          yield* organizations.lockMemberships(organizationId)
          const existing = yield* organizations.findMembership(organizationId, input.userId)
          if (Option.isNone(existing) && (yield* organizations.wasRemoved(organizationId, input.userId))) {
            return yield* new Forbidden({ reason: "membership_removed", message: "You were removed from this organization." })
          }
          const membership = Option.isNone(existing)
            ? yield* organizations.insertMembership({
              id: yield* makeId<MembershipId>("om"),
              organizationId,
              userId: input.userId,
              role,
              createdAt: at
            })
            : existing.value.role === role
            ? existing.value
            : yield* Effect.as(
              organizations.updateMembership(existing.value.id, { role }, at),
              new Membership({ ...existing.value, role })
            )
          const setupMembershipId = yield* bootstraps.markClaimed(claim.value, input.userId, at)
          // The placeholder owner makes way for a real one only: an organization always keeps an owner.
          if (role === "owner") {
            yield* organizations.updateMembership(setupMembershipId, { removedAt: at }, at)
            yield* organizations.update(organizationId, { provisional: false }, at)
          }
          const organization = yield* organizations.findById(organizationId)
          yield* sessions.setActiveOrganization(input.sessionId, organizationId)
          return { ok: true as const, organization: Option.getOrThrow(organization), membership }
        })
      )

    return { createWorkspace, acceptClaim } as const
  }),
  dependencies: [
    BootstrapRepository.Default,
    OrganizationsRepository.Default,
    SessionsRepository.Default,
    RateLimiter.Default,
    Organizations.Default
  ]
}) {}

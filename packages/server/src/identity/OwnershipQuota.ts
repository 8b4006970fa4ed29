/**
 * The organizations one person may own (`ORGPLANE_ORGANIZATIONS_PER_USER`), held wherever someone becomes an owner of
 * a live organization: creating one, claiming a bootstrapped workspace as its owner, restoring a deleted one (each
 * of its owners owns it again), being handed ownership, being made an owner. Past it, 409
 * `organization_quota_reached`. Counted under a transaction-scoped lock keyed by the person (`lockLimit`), so two
 * of these racing for one person cannot both count room.
 */
import { Conflict, type UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ServerConfig } from "../platform/Config.js"
import { lockLimit } from "../platform/Sql.js"
import { OrganizationsRepository } from "./OrganizationsRepository.js"

/** Who becomes an owner, as the refusal names them: the caller, or someone else (a member, an organization's owner). */
export type Owner = "you" | "this member" | "an owner of this organization"

const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const organizations = yield* OrganizationsRepository

  /**
   * In the caller's transaction, before `userId` becomes an owner: passes while they own fewer live organizations
   * than the quota (the one they are becoming an owner of is not among them: it is new, deleted, or not theirs yet).
   */
  const requireRoom = Effect.fn("OwnershipQuota.requireRoom")(function*(userId: UserId, owner: Owner) {
    yield* lockLimit("organizations_owned", userId)
    const quota = settings.organizationsPerUser
    if ((yield* organizations.countOwnedBy(userId)) < quota) return
    return yield* new Conflict({
      error: "organization_quota_reached",
      message: owner === "you"
        ? `You own ${quota} organizations, the most this instance allows (ORGPLANE_ORGANIZATIONS_PER_USER): delete or hand over one, or ask the instance's operator to raise the setting.`
        : `${owner.charAt(0).toUpperCase()}${owner.slice(1)} owns ${quota} organizations, the most this instance allows (ORGPLANE_ORGANIZATIONS_PER_USER): they delete or hand over one first, or the instance's operator raises the setting.`
    })
  })

  return { requireRoom } as const
})

/** Needs ServerConfig and the database. */
export class OwnershipQuota extends Context.Service<OwnershipQuota>()("@orgplane/server/identity/OwnershipQuota", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(OrganizationsRepository.layer))
}

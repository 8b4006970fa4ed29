/**
 * Identity's part of deleting an account (accounts/AccountDeletion.ts runs the whole of it in one transaction):
 * the account locked, its organizations locked and read (whom it still owns, where it is the last member), and,
 * once the other areas forgot what they hold of it, its sessions ended, its API keys deleted, its memberships ended
 * as removals, what the sign-in throttle keeps of its email forgotten, and the account made a tombstone under a
 * pseudonym. Nothing here decides who may delete whom: the caller did.
 */
import {
  Conflict,
  NotFound,
  type MembershipId,
  type Organization,
  type OrganizationId,
  type UserId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Crypto } from "../platform/Crypto.js"
import { ApiKeysRepository } from "./ApiKeysRepository.js"
import { Memberships } from "./Memberships.js"
import type { MembershipRow } from "./MembershipsRepository.js"
import { OrganizationsRepository } from "./OrganizationsRepository.js"
import { SessionsRepository } from "./SessionsRepository.js"
import { SignInThrottle } from "./SignInThrottle.js"
import { type UserRow, UsersRepository } from "./UsersRepository.js"

/** 404 `user_not_found`: no account with this id, or a deleted one. */
export const userNotFound = () => new NotFound({ error: "user_not_found", message: "No account has this id (or it was deleted)." })

/** One organization the person was ever a member of, as the deletion found it under its membership lock. */
export interface PersonInOrganization {
  readonly organizationId: OrganizationId
  readonly name: string
  /** The organization, while it is not deleted. */
  readonly organization: Option.Option<Organization>
  /** Every membership of the person there, removed ones too: what other areas keep is keyed by them. */
  readonly membershipIds: ReadonlyArray<MembershipId>
  /** The membership that lasts (not removed), if any: the deletion ends it. */
  readonly active: MembershipRow | undefined
  /** The organization's directory (SCIM) deprovisioned the person there: their latest membership is suspended. */
  readonly deprovisioned: boolean
  /** The person is its only owner, and it has other members: the deletion may not go on. */
  readonly lastOwner: boolean
  /** The person is its only active member: it is left with none. */
  readonly lastMember: boolean
}

/** What the identity side removed. */
export interface Erased {
  readonly sessions: number
  readonly apiKeys: number
  readonly organizationsLeft: ReadonlyArray<OrganizationId>
}

const make = Effect.gen(function*() {
  const users = yield* UsersRepository
  const sessions = yield* SessionsRepository
  const memberships = yield* Memberships
  const organizations = yield* OrganizationsRepository
  const apiKeys = yield* ApiKeysRepository
  const throttle = yield* SignInThrottle
  const crypto = yield* Crypto

  /**
   * The pseudonym that names the deleted person wherever their name and email were: derived from their id (which
   * stays), so every organization's log names them alike, and nothing of the name or address is in it.
   */
  const pseudonymOf = (userId: UserId) => `deleted-user-${crypto.hashToken(userId).slice(0, 12)}`

  return {
    pseudonymOf,

    /** The live account, its row locked until the transaction ends; 404 `user_not_found` otherwise. */
    lock: Effect.fn("AccountRemoval.lock")(function*(userId: UserId) {
      const user = yield* users.lockLive(userId)
      if (Option.isNone(user)) return yield* userNotFound()
      return user.value
    }),

    /**
     * Every organization the person was ever a member of, each locked (its membership lock, in the order of their
     * ids, so two deletions sharing organizations cannot deadlock) and read as it is now. Fails with 409
     * `last_owner_of_organizations`, naming them, while the person is the last owner of organizations with other
     * members: removing them would leave those without an owner.
     */
    organizationsOf: Effect.fn("AccountRemoval.organizationsOf")(function*(userId: UserId) {
      const found: Array<PersonInOrganization> = []
      for (const organizationId of yield* memberships.organizationsEverOf(userId)) {
        yield* memberships.lock(organizationId)
        const rows = yield* memberships.allOf(organizationId, userId)
        const active = rows.find((row) => row.removedAt === null)
        const latest = rows.at(-1)
        const { others, owners } = yield* memberships.headcount({ organizationId, userId })
        const organization = yield* organizations.find(organizationId)
        found.push({
          organizationId,
          name: Option.match(organization, { onNone: () => organizationId, onSome: (value) => value.name }),
          organization,
          membershipIds: rows.map((row) => row.id),
          active,
          deprovisioned: latest?.suspendedAt !== null && latest?.suspendedAt !== undefined,
          // A deleted organization does not hold the account back: only the operator restores it now.
          lastOwner: active?.role === "owner" && owners <= 1 && others > 0 && Option.isSome(organization),
          lastMember: active !== undefined && others === 0
        })
      }
      const owned = found.filter((organization) => organization.lastOwner)
      if (owned.length > 0) {
        const names = owned.map((organization) => `${organization.name} (${organization.organizationId})`).join(", ")
        return yield* new Conflict({
          error: "last_owner_of_organizations",
          message: `The account is the last owner of ${names}, which ${owned.length === 1 ? "has" : "have"} other members: ` +
            "make another member an owner first (POST /v1/members/{memberId}/transfer-ownership, 'orgplane members transfer-ownership'), " +
            "or delete the organization; then delete the account."
        })
      }
      return found
    }),

    /**
     * Identity's removal, once the other areas forgot what they hold (run it after them, in the same transaction):
     * every API key of the person's memberships deleted (the keys made with them go with them), every lasting
     * membership ended as a removal (`removed_at`: it leaves its teams; former members' lists keep it), every
     * session ended, the throttle's counts and remembered addresses of the email forgotten, and the account made a
     * tombstone: name and email the pseudonym, the password one nothing matches, `deleted_at` set.
     */
    erase: Effect.fn("AccountRemoval.erase")(function*(user: UserRow, found: ReadonlyArray<PersonInOrganization>, at: Date) {
      let revokedKeys = 0
      const organizationsLeft: Array<OrganizationId> = []
      for (const organization of found) {
        revokedKeys += (yield* apiKeys.revokeForPerson({ organizationId: organization.organizationId, userId: user.id })).length
        if (organization.active !== undefined) {
          yield* memberships.remove(organization.organizationId, organization.active.id)
          organizationsLeft.push(organization.organizationId)
        }
      }
      const ended = yield* sessions.revokeAll({ userId: user.id, at })
      yield* throttle.forget(user.email)
      yield* users.tombstone({ id: user.id, pseudonym: pseudonymOf(user.id), unusableHash: crypto.unusablePasswordHash, at })
      return { sessions: ended, apiKeys: revokedKeys, organizationsLeft } satisfies Erased
    })
  } as const
})

/** Needs ServerConfig, Crypto and the database. */
export class AccountRemoval extends Context.Service<AccountRemoval>()("@orgplane/server/identity/AccountRemoval", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      UsersRepository.layer,
      SessionsRepository.layer,
      Memberships.layer,
      OrganizationsRepository.layer,
      ApiKeysRepository.layer,
      SignInThrottle.layer
    ])
  )
}

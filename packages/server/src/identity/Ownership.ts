/**
 * Who owns an account, decided in one place (docs/security.md, "Who owns an account"). An identity (a password, an
 * SSO provider's subject, a directory's User) reaches an account only when whoever holds it proved the account's
 * email, or the account was made for it; when the account's ownership is re-established (an organization's verified
 * identity taking back an account whose email nobody proved, a reset), every other way into it ends, in every
 * organization it ever joined.
 * - `claim`: what an organization's identity for an address (its SSO provider's person, its directory's User) may do
 *   with the account that has it: `link` (the address is proven, to the instance or to that organization), `take_back`
 *   (unproven, and the organization verified the address's domain: it vouches for the address), or `refuse`
 *   (unproven, and the organization proved nothing of the address).
 * - `reestablish`: ends every way in but the one re-establishing ownership, and every organization's proof of the
 *   address (it was of the holder before), in the caller's transaction; the caller records what it proved.
 * - `linkUsed`: what using a link (a reset link, an invitation) proves of its address: a token that reached the
 *   address's mailbox alone (`mailed`) proves the address to the instance; one anybody else saw (`shown` to its issuer
 *   or inviter, who may send it to whomever they like) proves nothing, in any organization.
 * A password an organization's owner or admin may know (a reset link shown to them) ends when the account joins
 * another organization: `Memberships.join` holds that rule.
 */
import type { HeldApiKey, OrganizationId, UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { AuditRecorder } from "../platform/AuditRecorder.js"
import { AccountTokensRepository } from "./AccountTokensRepository.js"
import { ApiKeysRepository } from "./ApiKeysRepository.js"
import { type IdentityLinkKey, IdentityLinksRepository } from "./IdentityLinksRepository.js"
import { Memberships } from "./Memberships.js"
import { SessionsRepository } from "./SessionsRepository.js"
import { domainOf } from "./SsoEnforcement.js"
import { UsersRepository } from "./UsersRepository.js"

/** Who saw a link's token: only the mailbox of the address it was for (`mailed`), or its issuer too (`shown`). */
export type LinkDelivery = "mailed" | "shown"

/** What an organization's identity for an address may do with the account that has the address. */
export type Claim = "link" | "take_back" | "refuse"

/** What re-establishes ownership, and so what is kept. */
export type Reestablishment =
  /** An SSO sign-in's verified identity took the account back: its link is kept, the password ends. */
  | { readonly by: "sso"; readonly organizationId: OrganizationId; readonly keep: IdentityLinkKey }
  /** An organization's directory provisioned a person of its verified domain: the password ends. */
  | { readonly by: "directory"; readonly organizationId: OrganizationId }
  /** A reset link set a new password (in the same transaction): it is kept. */
  | { readonly by: "reset" }

/** What ended. */
export interface Ended {
  readonly sessions: number
  /** The keys the person's memberships had made, in every organization, before they were revoked. */
  readonly apiKeys: ReadonlyArray<HeldApiKey>
  readonly identityLinks: number
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const users = yield* UsersRepository
  const sessions = yield* SessionsRepository
  const apiKeys = yield* ApiKeysRepository
  const links = yield* IdentityLinksRepository
  const tokens = yield* AccountTokensRepository
  const memberships = yield* Memberships
  const recorder = yield* AuditRecorder

  /** Whether the organization verified the domain of `email` (a domain is verified by one organization at most). */
  const vouchesFor = (organizationId: OrganizationId, email: string) => {
    const domain = domainOf(email)
    return domain === undefined
      ? Effect.succeed(false)
      : sql`SELECT 1 FROM sso_domains WHERE organization_id = ${organizationId} AND domain = ${domain} AND verified_at IS NOT NULL`.pipe(
        Effect.map((rows) => rows.length > 0)
      )
  }

  /** What the organization's identity for `email` may do with the account that has it, read in the caller's transaction. */
  const claim = Effect.fn("Ownership.claim")(function*(userId: UserId, organizationId: OrganizationId, email: string) {
    if ((yield* users.emailVerified(userId)) || (yield* memberships.emailProven({ organizationId, userId }))) return "link" satisfies Claim
    return (yield* vouchesFor(organizationId, email)) ? "take_back" satisfies Claim : "refuse" satisfies Claim
  })

  /**
   * Re-establishes who owns the account, in the caller's transaction: every other way into it ends. Its password
   * (unless a reset just set it), every session, every API key its memberships made in every organization it ever
   * joined (a deleted one's too, so a restore brings none back) with the keys made with them, every identity link but
   * the one kept, and its pending reset and verification links. A take-back is recorded (`user.reclaim`) in the
   * organization that took it and every other it is an active member of.
   */
  const reestablish = Effect.fn("Ownership.reestablish")(function*(userId: UserId, how: Reestablishment, at: Date) {
    if (how.by !== "reset") yield* users.endPassword({ id: userId, at })
    const ended: Ended = {
      sessions: yield* sessions.revokeAll({ userId, at }),
      apiKeys: yield* apiKeys.listForAccount(userId),
      identityLinks: yield* links.endAllBut(userId, how.by === "sso" ? how.keep : undefined)
    }
    yield* apiKeys.revokeForAccount(userId)
    yield* tokens.discardAll(userId)
    // What organizations proved of the address was of whoever held the account before: the caller records its own proof.
    yield* memberships.clearEmailProofs(userId)
    if (how.by !== "reset") {
      const reason = `${ended.sessions} sessions, ${ended.apiKeys.length} API keys and ${ended.identityLinks} identity links ended`
      const elsewhere = (yield* memberships.activeOrganizationsOf(userId)).filter((id) => id !== how.organizationId)
      for (const organizationId of [how.organizationId, ...elsewhere]) {
        yield* recorder.recordSystem({ organizationId, job: how.by === "sso" ? "sso-reclaim" : "scim-reclaim", action: "user.reclaim", targets: [userId], reason })
      }
    }
    return ended
  })

  /** Records what using a link for the account's address proved of it, in the caller's transaction (see the module). */
  const linkUsed = Effect.fn("Ownership.linkUsed")(function*(userId: UserId, delivery: LinkDelivery, at: Date) {
    if (delivery === "mailed") yield* users.markEmailVerified({ id: userId, at })
  })

  return { claim, reestablish, linkUsed } as const
})

/** Needs the audit recorder (for a take-back) and the database. */
export class Ownership extends Context.Service<Ownership>()("@orgplane/server/identity/Ownership", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      UsersRepository.layer,
      SessionsRepository.layer,
      ApiKeysRepository.layer,
      IdentityLinksRepository.layer,
      AccountTokensRepository.layer,
      Memberships.layer
    ])
  )
}

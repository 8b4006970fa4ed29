/**
 * The person an SSO sign-in is for (sso/SignIn.ts completes the flow): the one the connection's subject is linked to,
 * else the account with the email (linked when its email is proven, else taken back: identity's Ownership decides),
 * else a new account (JIT); a member of the organization (JIT: the connection's default role and teams), in the teams
 * its group rules name, refused when directory sync deprovisioned them, the name updated from the provider and the
 * identity link recorded.
 */
import { Conflict, type SsoProfile, type UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Accounts } from "../identity/Accounts.js"
import { IdentityLinksRepository } from "../identity/IdentityLinksRepository.js"
import { Memberships } from "../identity/Memberships.js"
import { Ownership } from "../identity/Ownership.js"
import { UsersRepository } from "../identity/UsersRepository.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { TeamsRepository } from "../teams/TeamsRepository.js"
import { failure, type Received } from "./Protocol.js"
import type { SsoConnectionRow } from "./SsoRepository.js"

const make = Effect.gen(function*() {
  const links = yield* IdentityLinksRepository
  const users = yield* UsersRepository
  const memberships = yield* Memberships
  const teams = yield* TeamsRepository
  const accounts = yield* Accounts
  const ownership = yield* Ownership

  /**
   * The person a sign-in is for: the linked one, else the account with the email, else a new one (JIT). Two first
   * sign-ins of one new person at the same time both create the account: the one that loses on its unique email
   * runs once more, and finds the account, identity and membership the other committed.
   */
  const personFor = Effect.fn("Jit.personFor")((connection: SsoConnectionRow, received: Received, profile: SsoProfile, email: string) => {
    const attempt = once(connection, received, profile, email)
    return Effect.catchIf(attempt, (error) => error instanceof Conflict && error.error === "email_taken", () => attempt)
  })

  /** Whether a live account with the email is an active member of the organization that its directory did not deprovision. */
  const provisionedAgain = Effect.fn("Jit.provisionedAgain")(function*(organizationId: SsoConnectionRow["organizationId"], email: string) {
    const member = yield* memberships.findActive(organizationId, { email })
    if (Option.isNone(member) || member.value.userId === undefined || member.value.userId === null) return false
    return !(yield* memberships.isDeprovisioned(organizationId, member.value.userId))
  })

  const once = (connection: SsoConnectionRow, received: Received, profile: SsoProfile, email: string) =>
    orUnavailable(transaction(Effect.gen(function*() {
      const organizationId = connection.organizationId
      const at = yield* now
      const key = { organizationId, connectionId: connection.id, subject: received.subject }
      let linked = yield* links.find(key)
      if (Option.isSome(linked) && Option.exists(yield* users.findById(linked.value.userId), (row) => row.deletedAt !== null)) {
        // The account it named was deleted. Such a link is kept only where the organization's directory had
        // deprovisioned the person: still refused, unless the directory provisioned them again since (a new
        // account, an active member). Otherwise the link goes, and this is a first sign-in.
        const deletedId = linked.value.userId
        if ((yield* memberships.isDeprovisioned(organizationId, deletedId)) && !(yield* provisionedAgain(organizationId, email))) {
          return yield* failure("identity_deprovisioned", "Directory sync deactivated this person in the organization.")
        }
        yield* links.forget(key)
        linked = Option.none()
      }
      let userId: UserId
      if (Option.isSome(linked)) {
        userId = linked.value.userId
      } else {
        const existing = yield* users.findByEmail(email)
        if (Option.isSome(existing)) {
          userId = existing.value.id
          // Linked by its email only when that email is proven. Otherwise whoever made the account may not be the
          // person: the provider's verified identity (of a domain the organization verified) takes it back first, and
          // every other way into it ends but this link.
          const claim = yield* ownership.claim(userId, organizationId, email)
          if (claim === "refuse") return yield* failure("email_domain_not_verified", `${email} is not of a domain this organization verified.`)
          if (claim === "take_back") yield* ownership.reestablish(userId, { by: "sso", organizationId, keep: key }, at)
        } else {
          if (!connection.jit.enabled) {
            return yield* failure("membership_required", `${email} has no account, and this connection does not create members: ask an administrator to invite you.`)
          }
          const name = profile.name ?? ([profile.givenName, profile.familyName].filter((part) => part !== null).join(" ") || email)
          // An account made by SSO has no password of its own.
          userId = (yield* accounts.createUser({ email, name: name.slice(0, 200), passwordHash: null }, at)).id
        }
      }
      if (
        (yield* links.isDeprovisioned({ organizationId, userId })) ||
        (yield* memberships.isDeprovisioned(organizationId, userId))
      ) {
        return yield* failure("identity_deprovisioned", "Directory sync deactivated this person in the organization.")
      }
      const account = yield* users.findById(userId)
      if (Option.exists(account, (row) => row.disabledAt !== null)) {
        return yield* failure("account_disabled", "The instance's operator disabled this account: ask them to enable it.")
      }
      yield* memberships.lock(organizationId)
      const member = yield* memberships.findActive(organizationId, { userId })
      let membershipId = Option.getOrUndefined(Option.map(member, (row) => row.id))
      if (membershipId === undefined) {
        if (!connection.jit.enabled) {
          return yield* failure("membership_required", `${email} is not a member of the organization, and this connection does not create members.`)
        }
        membershipId = (yield* memberships.join({ organizationId, userId, role: connection.jit.defaultRole })).id
        for (const teamId of connection.jit.defaultTeamIds) {
          if (yield* teams.lock({ organizationId, id: teamId })) yield* teams.addMembers({ organizationId, id: teamId, memberIds: [membershipId], at })
        }
      }
      for (const rule of connection.mapping.groupRules) {
        if (profile.groups.includes(rule.group) && (yield* teams.lock({ organizationId, id: rule.teamId }))) {
          yield* teams.addMembers({ organizationId, id: rule.teamId, memberIds: [membershipId], at })
        }
      }
      // Repeat sign-ins update the name from the provider (the email is the account's key: kept).
      if (profile.name !== null) yield* users.update({ id: userId, name: profile.name.slice(0, 200), updatedAt: at })
      // The verified domain's provider vouched for the email: proven to the instance from now on, when it is the
      // account's (a linked person who changed the account's email since proved nothing of the new address).
      if (Option.exists(account, (row) => row.email.toLowerCase() === email.toLowerCase())) yield* users.markEmailVerified({ id: userId, at })
      yield* links.upsert({ organizationId, connectionId: connection.id, subject: received.subject, userId, email, claims: received.claims, at })
      return userId
    })))

  return { personFor } as const
})

export class Jit extends Context.Service<Jit>()("@orgplane/server/sso/Jit", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      IdentityLinksRepository.layer,
      UsersRepository.layer,
      Memberships.layer,
      TeamsRepository.layer,
      Accounts.layer,
      Ownership.layer
    ])
  )
}

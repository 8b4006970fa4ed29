/**
 * Deleting an account, by its person (`DELETE /v1/me`) or by the instance's operator (`DELETE /v1/admin/users/{id}`),
 * in one transaction: what every area keeps of the person goes (memories, their own MCP and mail/calendar
 * credentials, SSO links, SCIM Users), their events in each organization's audit log are kept under a pseudonym, then
 * identity ends their sessions, API keys and memberships and makes the account a tombstone
 * (identity/AccountRemoval.ts). The event `user.delete` is recorded in every organization left and, for the
 * operator, in theirs. docs/security.md, "Deleting an account", says what goes, what stays and why.
 */
import {
  type AccountDeletion as AccountDeletionResult,
  type Actor,
  AUDIT_REDACTED,
  type DeleteAccountRequest,
  Forbidden,
  type MemberContext,
  type OrganizationId,
  Unauthorized,
  type UserId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { AuditRepository } from "../audit/AuditRepository.js"
import { SuiteRepository } from "../capabilities/SuiteRepository.js"
import { Accounts } from "../identity/Accounts.js"
import { AccountRemoval, type PersonInOrganization } from "../identity/AccountRemoval.js"
import { Operator } from "../identity/Operator.js"
import { OrganizationDeletion } from "../identity/OrganizationDeletion.js"
import { CredentialsRepository } from "../mcp/CredentialsRepository.js"
import { MemoryRepository } from "../memory/MemoryRepository.js"
import { describe } from "../platform/AuditRecorder.js"
import { ServerConfig } from "../platform/Config.js"
import * as Principal from "../platform/Principal.js"
import { transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { UsersRepository as ScimUsersRepository } from "../scim/UsersRepository.js"
import { IdentityLinksRepository } from "../identity/IdentityLinksRepository.js"
import { IntentsRepository } from "../sso/IntentsRepository.js"

/** Who deletes the account: its person, or the instance's operator (whose organization records it too). */
type Deleter = { readonly _tag: "Self" } | { readonly _tag: "Operator"; readonly caller: MemberContext }

const make = Effect.gen(function*() {
  const accounts = yield* Accounts
  const removal = yield* AccountRemoval
  const operator = yield* Operator
  const memories = yield* MemoryRepository
  const mcpCredentials = yield* CredentialsRepository
  const suites = yield* SuiteRepository
  const intents = yield* IntentsRepository
  const links = yield* IdentityLinksRepository
  const scimUsers = yield* ScimUsersRepository
  const audit = yield* AuditRepository
  const { recentAuthentication } = yield* ServerConfig
  const organizationDeletion = yield* OrganizationDeletion

  /**
   * An organization the deleted person was its only active member of: it is deleted too, in this transaction, as the
   * system's request on the account's behalf (`organization.delete` in its own log), restorable by the operator for
   * the grace period, then purged. The operator organization is left as it is, memberless (deleting it would leave
   * nobody to operate the instance): the answer lists it in `organizationsWithoutMembers` all the same.
   */
  const organizationLeftEmpty = Effect.fn("AccountDeletion.organizationLeftEmpty")(function*(organization: PersonInOrganization) {
    const operating = yield* operator.organizationId
    const live = organization.organization
    if (Option.isSome(live) && !Option.contains(operating, live.value.id)) {
      // Under the membership lock this transaction holds, which a deletion of the organization takes too: found live, it
      // is still live (a 404 here would mean someone deleted it meanwhile, which leaves nothing more to do).
      yield* organizationDeletion.schedule(Principal.system("account-deletion", live.value), live.value.id).pipe(
        Effect.catchTag("OrganizationNotFound", () => Effect.void)
      )
    }
    return organization.organizationId
  })

  /** The deletion itself, in one transaction (see the module comment); fails, changing nothing, on a 404 or a 409. */
  const remove = (userId: UserId, by: Deleter) =>
    transaction(Effect.gen(function*() {
      const at = yield* now
      const user = yield* removal.lock(userId)
      // The operator's hierarchy, decided as for every operation of the operator's on an account.
      if (by._tag === "Operator") yield* operator.requireReach(by.caller, userId)
      const found = yield* removal.organizationsOf(userId)
      const pseudonym = removal.pseudonymOf(userId)
      const removed = { memories: 0, mcpCredentials: 0, suiteConnections: 0, ssoLinks: 0, scimUsers: 0 }
      for (const organization of found) {
        const person = { organizationId: organization.organizationId, userId }
        removed.memories += yield* memories.removeAllOf(person)
        for (const membershipId of organization.membershipIds) {
          removed.mcpCredentials += yield* mcpCredentials.forgetMember(organization.organizationId, membershipId)
          removed.suiteConnections += yield* suites.forgetMember(organization.organizationId, membershipId)
        }
        yield* intents.forgetPerson(person)
        removed.ssoLinks += yield* links.forgetPerson(person, { keepLinked: organization.deprovisioned, pseudonym })
        removed.scimUsers += yield* scimUsers.forgetPerson({ ...person, pseudonym, at })
        yield* audit.pseudonymise({ ...person, membershipIds: organization.membershipIds, pseudonym, redacted: AUDIT_REDACTED })
      }
      const erased = yield* removal.erase(user, found, at)
      const organizationsWithoutMembers: Array<OrganizationId> = []
      for (const organization of found) {
        if (organization.lastMember) organizationsWithoutMembers.push(yield* organizationLeftEmpty(organization))
      }
      const left = found.filter((organization) => organization.active !== undefined)
      yield* describe({
        targets: [userId],
        // The person's own deletion names them by the pseudonym too; the operator's names the operator.
        ...(by._tag === "Self" ? { actorLabel: pseudonym } : {}),
        alsoIn: left.map((organization) => ({
          organizationId: organization.organizationId,
          membershipId: by._tag === "Self" ? organization.active?.id ?? null : null
        }))
      })
      return {
        userId,
        pseudonym,
        organizationsLeft: erased.organizationsLeft,
        organizationsWithoutMembers,
        removed: { sessions: erased.sessions, apiKeys: erased.apiKeys, ...removed }
      } satisfies typeof AccountDeletionResult.Type
    }))

  return {
    /**
     * `DELETE /v1/me`: confirmed by the password, or by a recent sign-in of the session without one. The checks
     * come before anything is locked.
     */
    deleteOwn: Effect.fn("AccountDeletion.deleteOwn")(function*(actor: Actor, input: typeof DeleteAccountRequest.Type) {
      if (input.password !== undefined) yield* accounts.confirmPassword(actor.user.id, input.password, "password")
      else yield* Principal.requireRecentAuthentication(actor, recentAuthentication, "send the account's password as `password`")
      // Deleted meanwhile (by the operator): the caller's credentials are gone with it.
      return yield* Effect.catchTag(remove(actor.user.id, { _tag: "Self" }), "NotFound", () => Effect.fail(Unauthorized.because("credential_revoked")))
    }),

    /**
     * `DELETE /v1/admin/users/{userId}`: the operator's, after a recent sign-in; their own account only from a session
     * (the person's own rule, which a recent sign-in meets).
     */
    deleteByOperator: Effect.fn("AccountDeletion.deleteByOperator")(function*(caller: MemberContext, userId: UserId) {
      yield* operator.require(caller, "admin.manageUsers")
      if (userId === caller.user.id && caller.credential._tag === "ApiKey") {
        return yield* new Forbidden({
          reason: "session_required",
          message: "An API key cannot delete the account that made it: delete your own account from a session (DELETE /v1/me)."
        })
      }
      yield* Principal.requireRecentAuthentication(caller, recentAuthentication)
      return yield* remove(userId, { _tag: "Operator", caller })
    })
  } as const
})

export class AccountDeletion extends Context.Service<AccountDeletion>()("@orgplane/server/accounts/AccountDeletion", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      Accounts.layer,
      AccountRemoval.layer,
      Operator.layer,
      OrganizationDeletion.layer,
      MemoryRepository.layer,
      CredentialsRepository.layer,
      SuiteRepository.layer,
      IntentsRepository.layer,
      IdentityLinksRepository.layer,
      ScimUsersRepository.layer,
      AuditRepository.layer
    ])
  )
}

/**
 * The instance's people as its operator sees and stops them (the Admin group): every account listed, and an account
 * disabled (its sessions ended at once, its API keys and sign-ins refused while it stays so) or enabled again. The
 * refusals themselves live where credentials are resolved: SessionsRepository and ApiKeysRepository join the account
 * in, the check at commit reads it (MembershipsRepository `standing`), password sign-in answers 403
 * `account_disabled` (Accounts), SSO sign-in refuses with the same code (sso/Jit.ts).
 */
import { AdminUser, Conflict, type AdminUserListQuery, type MemberContext, type UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { describeChange } from "../platform/AuditRecorder.js"
import { ServerConfig } from "../platform/Config.js"
import { requireRecentAuthentication } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { userNotFound } from "./AccountRemoval.js"
import { Operator } from "./Operator.js"
import { SessionsRepository } from "./SessionsRepository.js"
import { UsersRepository } from "./UsersRepository.js"

const make = Effect.gen(function*() {
  const operator = yield* Operator
  const users = yield* UsersRepository
  const sessions = yield* SessionsRepository
  const { recentAuthentication } = yield* ServerConfig

  /**
   * Disables (`disabled`) or enables the account in one transaction, within the operator's hierarchy
   * (`Operator.requireReach`): its row first, then (disabling) its sessions, the order the check at commit reads them
   * in. Answers the account as the operator sees it; the audit event records `disabledAt` before and after.
   */
  const setDisabled = (caller: MemberContext, userId: UserId, disabled: boolean) =>
    Effect.gen(function*() {
      yield* operator.require(caller, "admin.manageUsers")
      yield* requireRecentAuthentication(caller, recentAuthentication)
      return yield* transaction(Effect.gen(function*() {
        if (Option.isNone(yield* users.lockLive(userId))) return yield* userNotFound()
        yield* operator.requireReach(caller, userId)
        const before = yield* users.findForOperator(userId)
        if (Option.isNone(before)) return yield* userNotFound()
        const at = yield* now
        yield* users.setDisabled({ id: userId, at: disabled ? at : null })
        if (disabled) yield* sessions.revokeAll({ userId, at })
        const after = yield* users.findForOperator(userId)
        if (Option.isNone(after)) return yield* userNotFound()
        yield* describeChange(AdminUser, before.value, after.value)
        return { user: after.value }
      }))
    })

  return {
    /** `GET /v1/admin/users`: every live account, oldest first. */
    list: Effect.fn("OperatorUsers.list")(function*(caller: MemberContext, query: AdminUserListQuery) {
      yield* operator.require(caller, "admin.readUsers")
      return yield* orUnavailable(users.listForOperator(query))
    }),
    disable: Effect.fn("OperatorUsers.disable")(function*(caller: MemberContext, userId: UserId) {
      if (userId === caller.user.id) {
        yield* operator.require(caller, "admin.manageUsers")
        return yield* new Conflict({
          error: "cannot_disable_yourself",
          message: "You cannot disable your own account: another owner or admin of the operator organization can."
        })
      }
      return yield* setDisabled(caller, userId, true)
    }),
    enable: Effect.fn("OperatorUsers.enable")(function*(caller: MemberContext, userId: UserId) {
      return yield* setDisabled(caller, userId, false)
    })
  } as const
})

/** Needs ServerConfig, Crypto and the database. */
export class OperatorUsers extends Context.Service<OperatorUsers>()("@orgplane/server/identity/OperatorUsers", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([Operator.layer, UsersRepository.layer, SessionsRepository.layer])
  )
}

/** Accounts and sessions: sign-up, sign-in, sign-out, and the caller's view of themselves. */
import {
  Forbidden,
  InvalidRequest,
  RateLimited,
  type PageQuery,
  type Membership,
  type Organization,
  OrganizationNotFound,
  Session,
  type SessionId,
  Unauthorized,
  type User,
  type OrganizationId,
  type UserId
} from "@orgplane/schema"
import { Duration, Effect, Option } from "effect"
import { ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import * as Cursor from "../platform/Cursor.js"
import { makeId } from "../platform/Ids.js"
import { transaction } from "../platform/Sql.js"
import { RateLimiter } from "../platform/RateLimiter.js"
import { now } from "../platform/Time.js"
import { OrganizationsRepository } from "./OrganizationsRepository.js"
import { SessionsRepository } from "./SessionsRepository.js"
import { toUser, UsersRepository } from "./UsersRepository.js"

export const SESSION_TOKEN_PREFIX = "ops"
/** Password changes (right or wrong current password) per account and window. */
const PASSWORD_CHANGES_PER_WINDOW = 10
const PASSWORD_CHANGE_WINDOW = Duration.minutes(15)

export class Accounts extends Effect.Service<Accounts>()("@orgplane/server/Accounts", {
  effect: Effect.gen(function*() {
    const settings = yield* ServerConfig
    const crypto = yield* Crypto
    const users = yield* UsersRepository
    const sessions = yield* SessionsRepository
    const organizations = yield* OrganizationsRepository
    const limiter = yield* RateLimiter

    /** Issues a session for the user; the plaintext token exists only in the return value. */
    const startSession = (userId: UserId, activeOrganizationId: OrganizationId | null) =>
      Effect.gen(function*() {
        const createdAt = yield* now
        const token = yield* crypto.newToken(SESSION_TOKEN_PREFIX)
        const expiresAt = new Date(createdAt.getTime() + Duration.toMillis(settings.sessionTtl))
        yield* sessions.insert({
          id: yield* makeId<SessionId>("ses"),
          userId,
          tokenHash: crypto.hashToken(token),
          activeOrganizationId,
          createdAt,
          expiresAt
        })
        return new Session({ token, expiresAt })
      })

    const signUp = (input: { readonly email: string; readonly password: string; readonly name: string }) =>
      Effect.gen(function*() {
        // A closed instance still lets its very first account in: someone has to invite the others.
        if (!settings.signupEnabled && (yield* users.count) > 0) {
          return yield* new Forbidden({ reason: "signup_disabled", message: "Sign-up is disabled on this instance." })
        }
        const passwordHash = yield* crypto.hashPassword(input.password)
        const createdAt = yield* now
        return yield* transaction(
          Effect.gen(function*() {
            const user = yield* users.insert({
              id: yield* makeId<UserId>("usr"),
              email: input.email,
              name: input.name,
              passwordHash,
              createdAt
            })
            const session = yield* startSession(user.id, null)
            return { user, session }
          })
        )
      })

    const signIn = (input: { readonly email: string; readonly password: string }) =>
      Effect.gen(function*() {
        const found = yield* users.findByEmail(input.email)
        const ok = yield* crypto.verifyPassword(input.password, Option.getOrUndefined(Option.map(found, (row) => row.passwordHash)))
        if (!ok || Option.isNone(found)) return yield* new Unauthorized()
        const membership = yield* organizations.firstMembershipOf(found.value.id)
        const session = yield* startSession(found.value.id, Option.getOrNull(Option.map(membership, (m) => m.organizationId)))
        return { user: toUser(found.value), session }
      })

    const signOut = (sessionId: SessionId) => Effect.flatMap(now, (at) => sessions.revoke(sessionId, at))

    const me = (userId: UserId, context: Option.Option<{ readonly organization: Organization; readonly membership: Membership }>) =>
      Effect.gen(function*() {
        const user = yield* users.findById(userId)
        // The middleware found this user a moment ago; users are never deleted.
        if (Option.isNone(user)) return yield* Effect.dieMessage(`user ${userId} vanished`)
        return {
          user: toUser(user.value) as User,
          organization: Option.getOrNull(Option.map(context, (c) => c.organization)),
          membership: Option.getOrNull(Option.map(context, (c) => c.membership))
        }
      })

    const switchOrganization = (sessionId: SessionId, userId: UserId, organizationId: OrganizationId) =>
      Effect.gen(function*() {
        const membership = yield* organizations.findMembership(organizationId, userId)
        if (Option.isNone(membership)) return yield* new OrganizationNotFound()
        yield* sessions.setActiveOrganization(sessionId, organizationId)
        const organization = yield* organizations.findById(organizationId)
        if (Option.isNone(organization)) return yield* new OrganizationNotFound()
        return { organization: organization.value, membership: membership.value }
      })

    const updateName = (userId: UserId, name: string) => Effect.flatMap(now, (at) => users.update(userId, { name }, at))

    /** Checks the current password, sets the new one and signs out every other session, in one transaction. */
    const changePassword = (
      session: { readonly sessionId: SessionId; readonly userId: UserId },
      input: { readonly currentPassword: string; readonly newPassword: string }
    ) =>
      Effect.gen(function*() {
        // A stolen session must not become an oracle for the account's password.
        const decision = yield* limiter.hit(`password-change:${session.userId}`, PASSWORD_CHANGES_PER_WINDOW, PASSWORD_CHANGE_WINDOW)
        if (!decision.allowed) {
          return yield* RateLimited.after(
            decision.retryAfterSeconds,
            `Too many password changes; retry in ${decision.retryAfterSeconds} seconds.`
          )
        }
        const user = yield* users.findById(session.userId)
        const ok = yield* crypto.verifyPassword(input.currentPassword, Option.getOrUndefined(Option.map(user, (row) => row.passwordHash)))
        if (!ok) return yield* InvalidRequest.field(["currentPassword"], "is not the account's current password")
        const passwordHash = yield* crypto.hashPassword(input.newPassword)
        const at = yield* now
        yield* transaction(
          Effect.zipRight(
            users.update(session.userId, { passwordHash }, at),
            sessions.revokeOthers(session.userId, session.sessionId, at)
          )
        )
      })

    const listOrganizations = (userId: UserId, query: PageQuery) =>
      Effect.gen(function*() {
        const page = yield* Cursor.request(query)
        const rows = yield* organizations.listForUser(userId, page)
        return Cursor.page(rows, page.limit, (row) => [row.membership.id])
      })

    return {
      signUp,
      signIn,
      signOut,
      me,
      switchOrganization,
      startSession,
      updateName,
      changePassword,
      listOrganizations
    } as const
  }),
  dependencies: [UsersRepository.Default, SessionsRepository.Default, OrganizationsRepository.Default, RateLimiter.Default]
}) {}

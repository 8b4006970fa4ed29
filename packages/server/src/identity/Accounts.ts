/**
 * Accounts and sessions: sign-up, sign-in (a temporary password changed at its first one), sign-out, and the
 * caller's view of themselves: their sessions, password, email and organizations.
 */
import {
  type Actor,
  type ChangeEmailRequest,
  type ChangePasswordRequest,
  credentialActions,
  Forbidden,
  InvalidRequest,
  NotFound,
  type OrganizationId,
  OrganizationNotFound,
  type PageQuery,
  RateLimited,
  Session,
  type SessionId,
  type SsoConnectionId,
  Unauthorized,
  User,
  type UserId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { clientAddress } from "../platform/ClientAddress.js"
import { ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { makeId } from "../platform/Ids.js"
import { RateLimiter } from "../platform/RateLimiter.js"
import { lockLimit, orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { ApiKeysRepository } from "./ApiKeysRepository.js"
import { Memberships } from "./Memberships.js"
import { toMembership } from "./MembershipsRepository.js"
import { OrganizationsRepository } from "./OrganizationsRepository.js"
import { SessionsRepository } from "./SessionsRepository.js"
import { SignInThrottle } from "./SignInThrottle.js"
import { SignUpThrottle } from "./SignUpThrottle.js"
import { admission, assuranceOrNone, SsoEnforcement, ssoRequired } from "./SsoEnforcement.js"
import { storedPassword, toUser, UsersRepository } from "./UsersRepository.js"
import * as AuditRecorder from "../platform/AuditRecorder.js"
import * as Metrics from "../platform/Metrics.js"

export const SESSION_TOKEN_PREFIX = "ops"

/** 403 `password_change_required`: a right temporary password signs in only with the person's own beside it. */
const passwordChangeRequired = () =>
  new Forbidden({
    reason: "password_change_required",
    message:
      "This password was set through a reset link an administrator of your organization issued: sign in with it once more and choose your own beside it (newPassword in POST /v1/auth/sign-in; orgplane auth login asks for it)."
  })

/** 403 `account_disabled`: the instance's operator disabled the account (a sign-in with its right password). */
export const accountDisabled = () =>
  new Forbidden({
    reason: "account_disabled",
    message: "This account is disabled by the instance's operator: ask them to enable it (POST /v1/admin/users/{userId}/enable)."
  })

/** Password changes (right or wrong current password) per account and window. */
const PASSWORD_CHANGES_PER_WINDOW = 10
const PASSWORD_CHANGE_WINDOW = Duration.minutes(15)
/** The longest `User-Agent` a session records, and the longest address (a forwarded one is what a proxy said). */
const MAX_USER_AGENT = 512
const MAX_ADDRESS = 100

const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const crypto = yield* Crypto
  const users = yield* UsersRepository
  const sessions = yield* SessionsRepository
  const organizations = yield* OrganizationsRepository
  const memberships = yield* Memberships
  const limiter = yield* RateLimiter
  const enforcement = yield* SsoEnforcement
  const throttle = yield* SignInThrottle
  const signUps = yield* SignUpThrottle
  const apiKeys = yield* ApiKeysRepository

  /** Issues a session for the user; the plaintext token exists only in the return value. */
  const startSession = Effect.fn("Accounts.startSession")(function*(
    user: { readonly id: UserId; readonly name: string; readonly email: string },
    activeOrganizationId: OrganizationId | null,
    sso?: { readonly connectionId: SsoConnectionId; readonly organizationId: OrganizationId }
  ) {
    const createdAt = yield* now
    const expiresAt = new Date(createdAt.getTime() + Duration.toMillis(settings.sessionTtl))
    const token = yield* crypto.newToken(SESSION_TOKEN_PREFIX)
    const id = yield* makeId("ses")
    // What the person will recognise it by in `GET /v1/me/sessions`: where and with what it signed in.
    const request = yield* Effect.serviceOption(HttpServerRequest.HttpServerRequest)
    const ipAddress = Option.isSome(request)
      ? (yield* Effect.provideService(clientAddress, HttpServerRequest.HttpServerRequest, request.value)).slice(0, MAX_ADDRESS)
      : null
    const userAgent = Option.isSome(request) ? request.value.headers["user-agent"]?.slice(0, MAX_USER_AGENT) ?? null : null
    yield* sessions.insert({
      id,
      userId: user.id,
      tokenHash: crypto.hashToken(token),
      activeOrganizationId,
      createdAt,
      expiresAt,
      ipAddress,
      userAgent,
      sso
    })
    // The person signing in acts in the session's organization, through it (sign-in, SSO, an accepted invitation).
    yield* AuditRecorder.describe({
      organizationId: activeOrganizationId,
      person: user,
      credentialId: id,
      ssoConnectionId: sso?.connectionId ?? null,
      targets: [id]
    })
    return new Session({ id, token, expiresAt })
  })

  /**
   * A new account, in the caller's transaction; 409 `email_taken` when the email has one. Without `passwordHash` (made
   * by SSO or a directory) it has no password of its own: nothing matches the unusable hash it gets.
   */
  const createUser = Effect.fn("Accounts.createUser")(function*(input: { readonly email: string; readonly name: string; readonly passwordHash: string | null }, at: Date) {
    const id = yield* makeId("usr")
    return toUser(yield* users.insert({
      id,
      email: input.email,
      name: input.name,
      passwordHash: input.passwordHash ?? crypto.unusablePasswordHash,
      hasPassword: input.passwordHash !== null,
      createdAt: at,
      updatedAt: at
    }))
  })

  /**
   * Checks the account's password, re-entered to confirm a change (a new password, email, the account's deletion),
   * in one budget per account: a stolen session must not become an oracle for the password, however many of those
   * operations it tries. A wrong one is 400 on `field`.
   */
  const confirmPassword = Effect.fn("Accounts.confirmPassword")(function*(userId: UserId, password: string, field: string) {
    const decision = yield* orUnavailable(
      limiter.hit(`password-change:${userId}`, PASSWORD_CHANGES_PER_WINDOW, PASSWORD_CHANGE_WINDOW)
    )
    if (!decision.allowed) {
      return yield* RateLimited.after(
        decision.retryAfterSeconds,
        `Too many password checks; retry in ${decision.retryAfterSeconds} seconds.`
      )
    }
    const user = yield* orUnavailable(users.findById(userId))
    const ok = yield* crypto.verifyPassword(password, Option.getOrUndefined(Option.flatMapNullishOr(user, storedPassword)))
    if (!ok) return yield* InvalidRequest.field([field], "is not the account's current password")
  })

  const signupDisabled = () => new Forbidden({ reason: "signup_disabled", message: "Sign-up is disabled on this instance." })

  /**
   * Sign-up from the client `address`. Every attempt counts against the address's hourly limit before anything is
   * checked (SignUpThrottle: the email's being taken included), so the 409 `email_taken` answer cannot be used to
   * test a list of emails faster than the limit, nor sign-up to make accounts in bulk.
   */
  const signUp = Effect.fn("Accounts.signUp")(function*(input: { readonly email: string; readonly password: string; readonly name: string }, address: string) {
    yield* signUps.count(address)
    // A closed instance still lets its very first account in: someone has to invite the others.
    if (!settings.signupEnabled && (yield* orUnavailable(users.count)) > 0) return yield* signupDisabled()
    // A password account for an enforcing organization's domain could never sign in with it, and would be
    // the account that domain's SSO later links to: such people get their account from SSO (JIT).
    const enforced = yield* orUnavailable(enforcement.forEmail(input.email))
    if (Option.isSome(enforced)) return yield* ssoRequired(enforced.value.connectionId, input.email)
    const passwordHash = yield* crypto.hashPassword(input.password)
    return yield* transaction(
      Effect.gen(function*() {
        // Counted again under a lock of the instance's own: two sign-ups racing for the first account of a
        // closed instance would both count none and both get in (READ COMMITTED).
        if (!settings.signupEnabled) {
          yield* lockLimit("first_account", "instance")
          if ((yield* users.count) > 0) return yield* signupDisabled()
        }
        const user = yield* createUser({ email: input.email, name: input.name, passwordHash }, yield* now)
        return { user, session: yield* startSession(user, null) }
      })
    )
  })

  /**
   * A failed password sign-in for a known person is a security event of each organization they belong to (an
   * unknown email belongs to none, and says nothing to anyone): `invalid_password`, or `rate_limited` when the
   * throttle refused it.
   */
  const recordFailure = (reason: "invalid_password" | "rate_limited", person: { readonly id: UserId; readonly name: string; readonly email: string }) =>
    Effect.flatMap(orUnavailable(memberships.activeOrganizationsOf(person.id)), (organizationIds) =>
      AuditRecorder.describe({ failure: { reason, person, organizationIds } }))

  /**
   * Password sign-in from the client `address`. For an email of a domain whose organization requires SSO: 403
   * `sso_required` whatever the password (the answer depends on the domain alone), except the owners' break-glass
   * while the policy keeps it: an owner's right password gives a session acting in that organization. Every
   * password check is throttled first (SignInThrottle): past a limit, 429 without checking it, alike for an email
   * with an account and one without.
   */
  const signIn = Effect.fn("Accounts.signIn")(function*(input: { readonly email: string; readonly password: string; readonly newPassword?: string | undefined }, address: string) {
    const enforced = Option.getOrUndefined(yield* orUnavailable(enforcement.forEmail(input.email)))
    if (enforced !== undefined && !enforced.ownersPasswordFallback) return yield* ssoRequired(enforced.connectionId, input.email)
    const found = yield* orUnavailable(users.findByEmail(input.email))
    const refused = yield* orUnavailable(throttle.attempt(input.email, address))
    if (Option.isSome(refused)) {
      // Once per email, address and window: a flood of refusals does not flood the log.
      if (refused.value.first && Option.isSome(found)) yield* recordFailure("rate_limited", found.value)
      const seconds = refused.value.retryAfterSeconds
      return yield* RateLimited.after(seconds, `Too many failed sign-ins; retry in ${seconds} seconds.`)
    }
    const ok = yield* crypto.verifyPassword(input.password, Option.getOrUndefined(Option.flatMapNullishOr(found, storedPassword)))
    // Told only to whoever knows the password (a wrong one is the 401 any account gets), and counted as a failed
    // attempt: the throttle's counts are not cleared by it.
    if (ok && Option.exists(found, (row) => row.disabledAt !== null)) return yield* accountDisabled()
    if (enforced !== undefined) {
      const owner = ok && Option.isSome(found) &&
        Option.exists(yield* orUnavailable(memberships.findActive(enforced.organizationId, { userId: found.value.id })), (row) => row.role === "owner")
      if (!owner || Option.isNone(found)) return yield* ssoRequired(enforced.connectionId, input.email)
      yield* orUnavailable(throttle.succeeded(input.email, address))
      const session = yield* orUnavailable(startSession(found.value, enforced.organizationId))
      return { user: toUser(found.value), session }
    }
    if (!ok || Option.isNone(found)) {
      if (Option.isSome(found)) yield* recordFailure("invalid_password", found.value)
      // The same answer, byte for byte, whether the email has an account or not.
      return yield* Unauthorized.because("invalid_credentials")
    }
    // Told only to whoever knows the password, as a disabled account is.
    if (!found.value.passwordChangeRequired && input.newPassword !== undefined) {
      return yield* InvalidRequest.field(["newPassword"], "is only for a temporary password that must change: change yours with POST /v1/me/password")
    }
    if (found.value.passwordChangeRequired && input.newPassword === undefined) {
      yield* orUnavailable(throttle.succeeded(input.email, address))
      return yield* passwordChangeRequired()
    }
    const chosen = input.newPassword === undefined ? undefined : yield* crypto.hashPassword(input.newPassword)
    return yield* orUnavailable(transaction(Effect.gen(function*() {
      yield* throttle.succeeded(input.email, address)
      if (chosen !== undefined) yield* users.setPassword({ id: found.value.id, passwordHash: chosen, at: yield* now })
      const organizationId = yield* memberships.oldestOrganizationOf(found.value.id)
      const session = yield* startSession(found.value, Option.getOrNull(organizationId))
      return { user: toUser(found.value), session }
    })))
  }, Metrics.signInOutcome("password"))

  const signOut = Effect.fn("Accounts.signOut")((sessionId: SessionId) => Effect.flatMap(now, (at) => orUnavailable(sessions.revoke({ id: sessionId, at }))))

  /** The instant before which an unused session has ended. */
  const idleSince = (at: Date) => new Date(at.getTime() - Duration.toMillis(settings.sessionIdleTimeout))

  const listSessions = Effect.fn("Accounts.listSessions")(function*(session: { readonly sessionId: SessionId; readonly userId: UserId }, query: PageQuery) {
    const at = yield* now
    return yield* orUnavailable(sessions.listLive({ userId: session.userId, current: session.sessionId, at, idleSince: idleSince(at) }, query))
  })

  /** Ends one of the person's live sessions; 404 `session_not_found` for any other id, another person's included. */
  const endSession = Effect.fn("Accounts.endSession")(function*(userId: UserId, id: SessionId) {
    const at = yield* now
    const ended = yield* orUnavailable(sessions.revokeLive({ userId, id, at, idleSince: idleSince(at) }))
    if (!ended) return yield* new NotFound({ error: "session_not_found", message: "Session not found." })
    yield* AuditRecorder.describe({ targets: [id] })
  })

  const endOtherSessions = Effect.fn("Accounts.endOtherSessions")(function*(session: { readonly sessionId: SessionId; readonly userId: UserId }) {
    const at = yield* now
    const ended = yield* orUnavailable(sessions.revokeOthers({ userId: session.userId, keep: session.sessionId, at }))
    return { ended }
  })

  /** What `GET /v1/me` shows: authentication resolved all of it, the credential as the request narrowed it. */
  const me = (actor: Actor) => ({
    user: actor.user,
    organization: actor.organization,
    membership: actor.membership,
    credential: {
      ...(actor.credential._tag === "Session"
        ? { type: "session", id: actor.credential.sessionId, scopes: null } as const
        : { type: "api_key", id: actor.credential.apiKeyId, scopes: actor.credential.scopes } as const),
      readOnly: actor.credential.readOnly === true,
      actions: actor.membership === null ? [] : credentialActions(actor.membership.role, actor.credential)
    }
  })

  const switchOrganization = Effect.fn("Accounts.switchOrganization")((actor: Actor, sessionId: SessionId, organizationId: OrganizationId) =>
    transaction(
      Effect.gen(function*() {
        const member = yield* memberships.findActive(organizationId, { userId: actor.user.id })
        if (Option.isNone(member)) return yield* new OrganizationNotFound()
        const organization = yield* organizations.find(organizationId)
        if (Option.isNone(organization)) return yield* new OrganizationNotFound()
        // Its SSO enforcement first: the switch would only lead to refusals.
        const assurance = assuranceOrNone(yield* enforcement.forSession({ sessionId, organizationId }))
        const refused = admission(organization.value, member.value.role, assurance)
        if (Option.isSome(refused)) return yield* refused.value
        yield* memberships.activate(sessionId, organizationId)
        return { ...me(actor), organization: organization.value, membership: toMembership(member.value) }
      })
    ))

  const updateName = Effect.fn("Accounts.updateName")(function*(actor: Actor, name: string) {
    yield* orUnavailable(users.update({ id: actor.user.id, name, updatedAt: yield* now }))
    const user = toUser({ ...actor.user, name })
    yield* AuditRecorder.describeChange(User, toUser(actor.user), user)
    return { ...me(actor), user }
  })

  /**
   * Checks the current password, sets the new one and signs out every other session, in one transaction; answers
   * how many ended and the API keys the person's memberships made, revoked with it when `revokeApiKeys`.
   */
  const changePassword = Effect.fn("Accounts.changePassword")(function*(
    session: { readonly sessionId: SessionId; readonly userId: UserId },
    input: typeof ChangePasswordRequest.Type
  ) {
    yield* confirmPassword(session.userId, input.currentPassword, "currentPassword")
    const passwordHash = yield* crypto.hashPassword(input.newPassword)
    const revokeApiKeys = input.revokeApiKeys === true
    return yield* transaction(
      Effect.gen(function*() {
        const at = yield* now
        yield* users.setPassword({ id: session.userId, passwordHash, at })
        const otherSessionsEnded = yield* sessions.revokeOthers({ userId: session.userId, keep: session.sessionId, at })
        const held = yield* apiKeys.listForAccount(session.userId)
        if (revokeApiKeys) yield* apiKeys.revokeForAccount(session.userId)
        return { otherSessionsEnded, apiKeys: held, apiKeysRevoked: revokeApiKeys }
      })
    )
  })

  const listOrganizations = Effect.fn("Accounts.listOrganizations")((userId: UserId, query: PageQuery) => orUnavailable(memberships.listForUser(userId, query)))

  /**
   * `PUT /v1/me/email`, after the password: the account's new email, unproven (the proofs of the old one, to the
   * instance and to each organization, are cleared: an SSO sign-in takes the account back before linking to it by
   * the new address), unless only the letters' case changed. Refused, as sign-up is, for a domain whose
   * organization requires SSO. The addresses the account signed in from follow it.
   */
  const changeEmail = Effect.fn("Accounts.changeEmail")(function*(actor: Actor, input: typeof ChangeEmailRequest.Type) {
    yield* confirmPassword(actor.user.id, input.password, "password")
    const sameAddress = input.email.toLowerCase() === actor.user.email.toLowerCase()
    if (!sameAddress) {
      const enforced = yield* orUnavailable(enforcement.forEmail(input.email))
      if (Option.isSome(enforced)) return yield* ssoRequired(enforced.value.connectionId, input.email)
    }
    return yield* transaction(Effect.gen(function*() {
      const at = yield* now
      const before = yield* users.findById(actor.user.id)
      if (Option.isNone(before)) return yield* Unauthorized.because("credential_revoked")
      yield* users.changeEmail({ id: actor.user.id, email: input.email, sameAddress, at })
      if (!sameAddress) yield* memberships.clearEmailProofs(actor.user.id)
      yield* throttle.follow(before.value.email, input.email)
      const user = toUser({ ...before.value, email: input.email })
      yield* AuditRecorder.describeChange(User, toUser(before.value), user)
      return { user, emailVerified: sameAddress && (yield* users.emailVerified(actor.user.id)) }
    }))
  })

  return {
    signUp,
    signIn,
    signOut,
    me,
    switchOrganization,
    startSession,
    createUser,
    updateName,
    changePassword,
    listSessions,
    endSession,
    endOtherSessions,
    listOrganizations,
    confirmPassword,
    changeEmail
  } as const
})

/** Needs ServerConfig, Crypto, the database and the ids. */
export class Accounts extends Context.Service<Accounts>()("@orgplane/server/identity/Accounts", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      UsersRepository.layer,
      SessionsRepository.layer,
      OrganizationsRepository.layer,
      Memberships.layer,
      RateLimiter.layer,
      SsoEnforcement.layer,
      SignInThrottle.layer,
      SignUpThrottle.layer,
      ApiKeysRepository.layer
    ])
  )
}

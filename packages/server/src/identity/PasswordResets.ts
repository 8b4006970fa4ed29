/**
 * Password reset links: one-time tokens that set an account's password without the current one (docs/security.md,
 * "Recovery without the current password" and "Who owns an account"). Issued by an owner or admin for a member only
 * their organization ever held, by the instance's operator for anyone, by whoever runs the server (`orgplane admin
 * reset-password`), or mailed to the address on request; an owner's, admin's or operator's link is mailed to the
 * person when the server sends mail, else shown to its issuer, and then an owner's or admin's sets a temporary
 * password bound to their organization. Used once, within `ORGPLANE_PASSWORD_RESET_TTL`, while the account's password
 * and email are those it was issued against; using it re-establishes who owns the account (Ownership.ts).
 */
import {
  Conflict,
  Forbidden,
  hasRole,
  InvalidRequest,
  type MemberContext,
  type MembershipId,
  NotFound,
  type OrganizationId,
  PASSWORD_RESET_TOKEN_PREFIX,
  PasswordResetLink,
  RateLimited,
  type ResetPasswordRequest,
  type Role,
  type UserId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NodeCrypto from "node:crypto"
import { Mailer } from "../integrations/mail/Mailer.js"
import * as AuditRecorder from "../platform/AuditRecorder.js"
import { addressBlock } from "../platform/ClientAddress.js"
import { publicUrl, ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { authorize, requireRecentAuthentication } from "../platform/Principal.js"
import { RateLimiter } from "../platform/RateLimiter.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { AccountTokensRepository, type Issuer } from "./AccountTokensRepository.js"
import { memberNotFound, Memberships } from "./Memberships.js"
import { Operator } from "./Operator.js"
import { Ownership } from "./Ownership.js"
import { sendLater } from "../integrations/mail/LinkMail.js"
import { passwordResetMail } from "./RecoveryMail.js"
import { toUser, type UserRow, UsersRepository } from "./UsersRepository.js"

/** Recovery requests and mails are counted in hourly windows. */
export const RECOVERY_WINDOW = Duration.hours(1)

/** The rate-limit keys of recovery: per client address (its IPv6 /64), and per email by a hash (never the account). */
export const addressKey = (address: string) => `recovery:address:${addressBlock(address)}`
export const emailKey = (hash: string) => `recovery:email:${hash}`

/** SHA-256 of the stored password hash, hex, as `UsersRepository.resetPassword` computes it in SQL. */
const digestOf = (passwordHash: string) => NodeCrypto.createHash("sha256").update(passwordHash, "utf8").digest("hex")

export const mailNotConfigured = () =>
  new Conflict({
    error: "mail_not_configured",
    message:
      "This server sends no mail (ORGPLANE_SMTP_URL and ORGPLANE_MAIL_FROM are not set). To get back into an account, ask an owner or admin of your organization for a password reset link (orgplane members reset-password <memberId>), or whoever runs the server (orgplane admin reset-password <email>, run on it)."
  })

const resetOwnPassword = () =>
  new Conflict({
    error: "reset_own_password",
    message: "A reset link is for someone else's account: change your own password with POST /v1/me/password (orgplane auth password)."
  })

/** 400 on `token`, with a `code`: a check only the server makes, which a client tells apart from a malformed body. */
const invalidToken = (why = "it is unknown, expired or used, or a newer link or a change of the account's password or email replaced it") =>
  new InvalidRequest({
    details: [{ path: ["token"], message: `is not a live password reset link: ${why}. Ask for a new one.`, code: "password_reset_token_invalid" }]
  })

/** The highest role an owner's or admin's link may reset: an admin resets members, an owner admins and members. */
const reachOf = (role: Role): Role | undefined => (role === "owner" ? "admin" : role === "admin" ? "member" : undefined)

/** 409 `account_in_other_organizations`: no one organization holds the account, so none may reset its password. */
const inOtherOrganizations = () =>
  new Conflict({
    error: "account_in_other_organizations",
    message:
      "This account belongs, or belonged, to another organization, so no one organization may reset its password: ask the instance's operator (orgplane admin users reset-password <userId>), or whoever runs the server (orgplane admin reset-password <email>, run on it)."
  })

const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const crypto = yield* Crypto
  const users = yield* UsersRepository
  const memberships = yield* Memberships
  const ownership = yield* Ownership
  const tokens = yield* AccountTokensRepository
  const limiter = yield* RateLimiter
  const operator = yield* Operator
  const mailer = yield* Mailer

  /** The base of what a link names: `ORGPLANE_PUBLIC_URL`, else the configured host and port; never a request's Host. */
  const baseUrl = publicUrl(settings)

  /**
   * Makes the account's reset token (replacing the one it had), in the caller's transaction: for its issuer to show
   * (`delivery: shown`; an owner's or admin's then sets a temporary password), or to mail once the transaction commits.
   */
  const issue = (
    user: UserRow,
    issuer: {
      readonly issuedBy: Issuer
      readonly delivery: "shown" | "mailed"
      readonly label: string | null
      readonly organizationId: OrganizationId | null
      readonly allowedRole: Role | null
    }
  ) =>
    Effect.gen(function*() {
      const token = yield* crypto.newToken(PASSWORD_RESET_TOKEN_PREFIX)
      const createdAt = yield* now
      const expiresAt = new Date(createdAt.getTime() + Duration.toMillis(settings.passwordResetTtl))
      yield* tokens.replace({
        userId: user.id,
        purpose: "password_reset",
        tokenHash: crypto.hashToken(token),
        email: user.email,
        passwordDigest: digestOf(user.passwordHash),
        issuedBy: issuer.issuedBy,
        delivery: issuer.delivery,
        issuerLabel: issuer.label,
        issuerOrganizationId: issuer.organizationId,
        allowedRole: issuer.allowedRole,
        createdAt,
        expiresAt
      })
      return { token, link: new PasswordResetLink({
        userId: user.id,
        email: user.email,
        delivery: issuer.delivery,
        token: issuer.delivery === "shown" ? token : null,
        temporary: issuer.delivery === "shown" && issuer.issuedBy === "member",
        expiresAt
      }, { disableChecks: true }) }
    })

  /** Mails a link an issuer asked for, after the commit: the person, not the issuer, holds it. */
  const mailLink = (issued: { readonly token: string; readonly link: PasswordResetLink }, issuer: string) =>
    issued.link.delivery === "mailed"
      ? sendLater(mailer, passwordResetMail({ to: issued.link.email, baseUrl, token: issued.token, expiresAt: issued.link.expiresAt }, issuer))
      : Effect.void

  const labelOf = (caller: MemberContext) => `${caller.user.name} <${caller.user.email}>`

  /**
   * `POST /v1/members/{memberId}/password-reset`: an owner or admin, recently signed in, for a member of lower role
   * whose account no other organization holds (read under the membership lock).
   */
  const issueForMember = Effect.fn("PasswordResets.issueForMember")(function*(caller: MemberContext, memberId: MembershipId) {
    yield* authorize(caller, "members.resetPassword")
    yield* requireRecentAuthentication(caller, settings.recentAuthentication)
    const organizationId = caller.organization.id
    const issued = yield* transaction(Effect.gen(function*() {
      const state = yield* memberships.lockForChange(organizationId, { callerId: caller.membership.id, targetId: memberId })
      const target = Option.getOrUndefined(state.target)
      const userId = target?.userId
      if (target === undefined || userId === undefined || userId === null) return yield* memberNotFound(memberId)
      if (userId === caller.user.id) return yield* resetOwnPassword()
      const reach = reachOf(Option.match(state.caller, { onNone: () => caller.membership.role, onSome: (member) => member.role }))
      if (reach === undefined || !hasRole(reach, target.role)) {
        return yield* new Forbidden({
          reason: "insufficient_role",
          message:
            "An admin issues reset links for members, an owner for admins and members: another owner's or admin's link comes from an owner, or the instance's operator (POST /v1/admin/users/{userId}/password-reset)."
        })
      }
      // What the account ever joined: a membership ended, or of a deleted organization, kept what the person made there.
      if ((yield* memberships.organizationsEverOf(userId)).some((id) => id !== organizationId)) return yield* inOtherOrganizations()
      const user = yield* users.findById(userId)
      if (Option.isNone(user)) return yield* memberNotFound(memberId)
      const delivery = mailer.configured ? "mailed" as const : "shown" as const
      // A password nobody but the issuer would know of, on an account that signs in another way: only the person asks for one.
      if (delivery === "shown" && !user.value.hasPassword) {
        return yield* new Conflict({
          error: "account_without_password",
          message:
            "This account has no password of its own: it signs in through SSO or was made by a directory. A password is set only when the person asks for one (POST /v1/auth/forgot-password, on a server that sends mail), or through the instance's operator."
        })
      }
      const issued = yield* issue(user.value, { issuedBy: "member", delivery, label: labelOf(caller), organizationId, allowedRole: reach })
      yield* AuditRecorder.describe({ targets: [userId] })
      return issued
    }))
    yield* mailLink(issued, `${labelOf(caller)}, of ${caller.organization.name},`)
    return { passwordReset: issued.link }
  })

  /**
   * `POST /v1/admin/users/{userId}/password-reset`: the instance's operator, recently signed in, for any account;
   * the operator organization's own owners and admins only by its owners.
   */
  const issueForUser = Effect.fn("PasswordResets.issueForUser")(function*(caller: MemberContext, userId: UserId) {
    yield* operator.require(caller, "admin.resetPasswords")
    yield* requireRecentAuthentication(caller, settings.recentAuthentication)
    if (userId === caller.user.id) return yield* resetOwnPassword()
    const issued = yield* transaction(Effect.gen(function*() {
      const user = yield* users.findById(userId)
      if (Option.isNone(user)) return yield* new NotFound({ error: "user_not_found", message: `${userId} is not an account on this instance.` })
      yield* operator.requireReach(caller, userId)
      return yield* issue(user.value, {
        issuedBy: "operator",
        delivery: mailer.configured ? "mailed" : "shown",
        label: labelOf(caller),
        organizationId: caller.organization.id,
        allowedRole: null
      })
    }))
    yield* mailLink(issued, `${labelOf(caller)}, of the instance's operator,`)
    return { passwordReset: issued.link }
  })

  /**
   * `orgplane admin reset-password <email>`, run where the server's database is: no caller, no session. Each
   * organization the person belongs to records it, as the server's own doing.
   */
  const issueOnMachine = Effect.fn("PasswordResets.issueOnMachine")(function*(email: string) {
    const recorder = yield* AuditRecorder.AuditRecorder
    return yield* transaction(Effect.gen(function*() {
      const user = yield* users.findByEmail(email)
      if (Option.isNone(user)) return yield* new NotFound({ error: "user_not_found", message: `No account has the email ${email}.` })
      const { link } = yield* issue(user.value, {
        issuedBy: "machine",
        delivery: "shown",
        label: "orgplane admin reset-password, on the server",
        organizationId: null,
        allowedRole: null
      })
      for (const organizationId of yield* memberships.activeOrganizationsOf(user.value.id)) {
        yield* recorder.recordSystem({ organizationId, job: "admin-reset-password", action: "user.password.reset_link.create", targets: [user.value.id] })
      }
      return link
    }))
  })

  /** Counts a recovery request against the client address; past the hourly limit, 429 with `Retry-After`. */
  const countAddress = Effect.fn("PasswordResets.countAddress")(function*(address: string) {
    const decision = yield* orUnavailable(limiter.hit(addressKey(address), settings.recoveryRequestsPerAddress, RECOVERY_WINDOW))
    if (!decision.allowed) {
      return yield* RateLimited.after(decision.retryAfterSeconds, `Too many recovery requests from this address; retry in ${decision.retryAfterSeconds} seconds.`)
    }
  })

  /** Counts a mail to `email` (by its hash: an address without an account counts alike); past the limit, 429. */
  const countMail = Effect.fn("PasswordResets.countMail")(function*(email: string) {
    const decision = yield* orUnavailable(limiter.hit(emailKey(crypto.hashToken(email.trim().toLowerCase())), settings.recoveryMailsPerEmail, RECOVERY_WINDOW))
    if (!decision.allowed) {
      return yield* RateLimited.after(decision.retryAfterSeconds, `Too many recovery mails to this address; retry in ${decision.retryAfterSeconds} seconds.`)
    }
  })

  /**
   * `POST /v1/auth/forgot-password`: mails a reset link to the address when an account has it. The answer is the
   * same either way, and the mail leaves after the commit, in the background.
   */
  const forgotPassword = Effect.fn("PasswordResets.forgotPassword")(function*(email: string, address: string) {
    if (!mailer.configured) return yield* mailNotConfigured()
    yield* countAddress(address)
    yield* countMail(email)
    const issued = yield* transaction(Effect.gen(function*() {
      const user = yield* users.findByEmail(email)
      if (Option.isNone(user)) return Option.none()
      const { link: passwordReset, token } = yield* issue(user.value, {
        issuedBy: "self",
        delivery: "mailed",
        label: "a mailed link (POST /v1/auth/forgot-password)",
        organizationId: null,
        allowedRole: null
      })
      // Nobody the request identifies asked: the person's organizations learn that a link went to their address.
      const organizations = yield* memberships.activeOrganizationsOf(user.value.id)
      yield* AuditRecorder.describe({ anonymous: true, organizationId: organizations[0] ?? null, alsoIn: organizations.map(AuditRecorder.elsewhere), targets: [user.value.id] })
      return Option.some({ to: passwordReset.email, token, expiresAt: passwordReset.expiresAt })
    }))
    if (Option.isSome(issued)) yield* sendLater(mailer, passwordResetMail({ ...issued.value, baseUrl }))
  })

  /**
   * `POST /v1/auth/password-reset`: spends the token and sets the password, which re-establishes who owns the account:
   * every session, API key (every organization), identity link and other link of the account ends, in one
   * transaction. A mailed link's use proves the address it went to. Answers what ended.
   */
  const reset = Effect.fn("PasswordResets.reset")(function*(input: typeof ResetPasswordRequest.Type, address: string) {
    yield* countAddress(address)
    const passwordHash = yield* crypto.hashPassword(input.newPassword)
    return yield* transaction(Effect.gen(function*() {
      const at = yield* now
      const token = Option.getOrUndefined(yield* tokens.take({ tokenHash: crypto.hashToken(input.token), purpose: "password_reset" }))
      if (token === undefined || token.expiresAt.getTime() <= at.getTime() || token.passwordDigest === null) return yield* invalidToken()
      if (token.issuedBy === "member") {
        // An organization's link holds while that organization alone ever held the account, at a role it may reset.
        const ever = yield* memberships.organizationsEverOf(token.userId)
        const only = (yield* memberships.holdersOf(token.userId))[0]
        if (
          ever.some((id) => id !== token.issuerOrganizationId) || only === undefined || only.organizationId !== token.issuerOrganizationId ||
          token.allowedRole === null || !hasRole(token.allowedRole, only.role)
        ) {
          return yield* invalidToken(
            "an organization's owner or admin issued it, and the account has since joined another organization or taken a higher role; the instance's operator issues links for such accounts"
          )
        }
      }
      // A link its issuer was shown: an owner's or admin's sets a temporary password their organization may know.
      const boundOrganizationId = token.issuedBy === "member" && token.delivery === "shown" ? token.issuerOrganizationId : null
      const user = yield* users.resetPassword({ id: token.userId, email: token.email, passwordDigest: token.passwordDigest, passwordHash, boundOrganizationId, at })
      if (Option.isNone(user)) return yield* invalidToken()
      const ended = yield* ownership.reestablish(token.userId, { by: "reset" }, at)
      yield* ownership.linkUsed(token.userId, token.delivery, at)
      const organizations = yield* memberships.activeOrganizationsOf(token.userId)
      // The person acted, with what someone else issued: each of their organizations, and the issuer's, record it.
      yield* AuditRecorder.describe({
        person: user.value,
        organizationId: token.issuerOrganizationId ?? organizations[0] ?? null,
        alsoIn: organizations.map(AuditRecorder.elsewhere),
        targets: [token.userId],
        reason: `link issued by ${token.issuerLabel ?? token.issuedBy}`
      })
      return { user: toUser(user.value), sessionsEnded: ended.sessions, apiKeys: ended.apiKeys, apiKeysRevoked: true }
    }))
  })

  return { issueForMember, issueForUser, issueOnMachine, forgotPassword, reset, countAddress, countMail } as const
})

/** Needs ServerConfig, Crypto, the database and the ids. */
export class PasswordResets extends Context.Service<PasswordResets>()("@orgplane/server/identity/PasswordResets", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      UsersRepository.layer,
      Memberships.layer,
      Ownership.layer,
      AccountTokensRepository.layer,
      RateLimiter.layer,
      Operator.layer,
      Mailer.layer
    ])
  )
}

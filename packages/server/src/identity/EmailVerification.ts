/**
 * Proving an account's email by a mailed link (docs/security.md, "Recovery without the current password"): a
 * signed-in person asks for a link to their own address, and uses it signed in as that account: holding both the
 * account and the mailbox proves the address (`users.email_verified_at`), which is what a first SSO sign-in with that
 * email needs to link to the account rather than take it back ("Who owns an account"). The mailbox alone proves
 * nothing for an account someone else made with its address.
 */
import { Conflict, EMAIL_VERIFICATION_TOKEN_PREFIX, InvalidRequest, type UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Mailer } from "../integrations/mail/Mailer.js"
import * as AuditRecorder from "../platform/AuditRecorder.js"
import { publicUrl, ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { AccountTokensRepository } from "./AccountTokensRepository.js"
import { Memberships } from "./Memberships.js"
import { mailNotConfigured, PasswordResets } from "./PasswordResets.js"
import { sendLater } from "../integrations/mail/LinkMail.js"
import { emailVerificationMail } from "./RecoveryMail.js"
import { toUser, UsersRepository } from "./UsersRepository.js"

/** 400 on `token`, with a `code`: a check only the server makes. */
const invalidToken = () =>
  new InvalidRequest({
    details: [{
      path: ["token"],
      message:
        "is not a live email verification link of your account: it is unknown, expired or used, a newer link replaced it, the account's email changed since, or another account asked for it (use it signed in as the account that asked). Ask for a new one.",
      code: "email_verification_token_invalid"
    }]
  })

const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const crypto = yield* Crypto
  const users = yield* UsersRepository
  const memberships = yield* Memberships
  const tokens = yield* AccountTokensRepository
  const mailer = yield* Mailer
  const resets = yield* PasswordResets
  const baseUrl = publicUrl(settings)

  /** `POST /v1/me/email-verification`: a link to the person's own address, mailed after the commit. */
  const request = Effect.fn("EmailVerification.request")(function*(userId: UserId) {
    if (!mailer.configured) return yield* mailNotConfigured()
    if (yield* orUnavailable(users.emailVerified(userId))) {
      return yield* new Conflict({ error: "email_already_verified", message: "Your email address is proven already." })
    }
    // A session's account exists; one deleted meanwhile has nothing to mail.
    const user = Option.getOrUndefined(yield* orUnavailable(users.findById(userId)))
    if (user === undefined) return
    yield* resets.countMail(user.email)
    const issued = yield* transaction(Effect.gen(function*() {
      const token = yield* crypto.newToken(EMAIL_VERIFICATION_TOKEN_PREFIX)
      const createdAt = yield* now
      const expiresAt = new Date(createdAt.getTime() + Duration.toMillis(settings.emailVerificationTtl))
      yield* tokens.replace({
        userId,
        purpose: "email_verification",
        tokenHash: crypto.hashToken(token),
        email: user.email,
        passwordDigest: null,
        issuedBy: "self",
        delivery: "mailed",
        issuerLabel: null,
        issuerOrganizationId: null,
        allowedRole: null,
        createdAt,
        expiresAt
      })
      return { to: user.email, token, expiresAt }
    }))
    yield* sendLater(mailer, emailVerificationMail({ ...issued, baseUrl }))
  })

  /**
   * `POST /v1/auth/verify-email`, by the account's own session (`userId`): spends the token; the account's email,
   * still the one it went to, is proven. Another account's token is refused as an unknown one, and left as it was.
   */
  const verify = Effect.fn("EmailVerification.verify")(function*(token: string, userId: UserId, address: string) {
    yield* resets.countAddress(address)
    return yield* transaction(Effect.gen(function*() {
      const at = yield* now
      const taken = Option.getOrUndefined(yield* tokens.takeOwn({ tokenHash: crypto.hashToken(token), purpose: "email_verification", userId }))
      if (taken === undefined || taken.expiresAt.getTime() <= at.getTime()) return yield* invalidToken()
      const proven = yield* users.proveEmail({ id: taken.userId, email: taken.email, at })
      if (Option.isNone(proven)) return yield* invalidToken()
      const organizations = yield* memberships.activeOrganizationsOf(taken.userId)
      yield* AuditRecorder.describe({ person: proven.value, organizationId: organizations[0] ?? null, alsoIn: organizations.map(AuditRecorder.elsewhere), targets: [taken.userId] })
      return { user: toUser(proven.value), emailVerifiedAt: proven.value.emailVerifiedAt }
    }))
  })

  return { request, verify } as const
})

/** Needs ServerConfig, Crypto, the database and the ids. */
export class EmailVerification extends Context.Service<EmailVerification>()("@orgplane/server/identity/EmailVerification", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([UsersRepository.layer, Memberships.layer, AccountTokensRepository.layer, Mailer.layer, PasswordResets.layer])
  )
}

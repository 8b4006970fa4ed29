/** Recovery without the current password: one-time password reset links, and proving an email by a mailed link. */
import * as Schema from "effect/Schema"
import { Email, Timestamp } from "./Common.js"
import { ada, exampleOf, examplePassword, exampleTime, exampleToken, grace } from "./Examples.js"
import { MembershipId, UserId } from "./Ids.js"
import { HeldApiKey, HeldApiKeysFields, Password, User } from "./Users.js"

/** The prefix of a password reset token (`opr_…`); an email verification token's is `opv_`. */
export const PASSWORD_RESET_TOKEN_PREFIX = "opr"
export const EMAIL_VERIFICATION_TOKEN_PREFIX = "opv"

/** What a one-time token is sent as: the server made it, so anything longer or empty is not one. */
const OneTimeToken = Schema.String.check(
  Schema.isMinLength(1, { message: "must not be empty" }),
  Schema.isMaxLength(255, { message: "must be at most 255 characters" })
)

/** How a reset link reaches the person: shown to whoever issued it, or mailed to the account's address. */
export const PasswordResetDelivery = Schema.Literals(["shown", "mailed"]).annotate({
  identifier: "PasswordResetDelivery",
  description:
    "`mailed`: sent to the account's address (an owner's or admin's link, on a server with SMTP settings), and never shown; `shown`: the token is in this answer, once, for the issuer to hand to the person."
})

/** A password reset link, as the owner, admin or operator who issued it sees it: once. */
export class PasswordResetLink extends Schema.Class<PasswordResetLink>("PasswordResetLink")(Schema.Struct({
  userId: UserId,
  email: Schema.String.annotate({ description: "The account's email: give the token to that person, and to no one else." }),
  delivery: PasswordResetDelivery,
  token: Schema.NullOr(Schema.String).annotate({
    description:
      "The one-time token (`opr_…`), when `delivery` is `shown`: shown only here. The person sets a new password with it: `orgplane auth reset-password <token>`, or `POST /v1/auth/password-reset`. Null when the link was mailed."
  }),
  temporary: Schema.Boolean.annotate({
    description:
      "The password the link sets is temporary: an owner's or admin's link shown to them. Its first sign-in chooses the person's own (`newPassword` in `POST /v1/auth/sign-in`), and it stops working, with what was chosen in its place, when the account joins another organization."
  }),
  expiresAt: Timestamp.annotateKey({ description: "After this (`ORGPLANE_PASSWORD_RESET_TTL` from its making, 1 hour by default), it works no more." })
}).annotate({
  examples: [{ userId: grace.userId, email: grace.email, delivery: "shown", token: exampleToken(PASSWORD_RESET_TOKEN_PREFIX), temporary: true, expiresAt: exampleTime(60) }]
})) {}

export const PasswordResetLinkResponse = Schema.Struct({ passwordReset: PasswordResetLink }).annotate({
  identifier: "PasswordResetLinkResponse"
})

export const MemberPasswordResetPath = Schema.Struct({ memberId: MembershipId })
export const UserPasswordResetPath = Schema.Struct({ userId: UserId })

export const ResetPasswordRequest = Schema.Struct({
  token: OneTimeToken.annotate({ description: "The one-time token of the reset link (`opr_…`)." }),
  newPassword: Password,
  revokeApiKeys: Schema.optionalKey(Schema.Boolean).annotateKey({
    description:
      "Accepted for the clients that send it, and changes nothing: a reset re-establishes who owns the account, so every API key the person's memberships made, in every organization, is revoked (the answer lists them)."
  })
}).annotate({
  examples: [{ token: exampleToken(PASSWORD_RESET_TOKEN_PREFIX), newPassword: examplePassword, revokeApiKeys: true }]
})

export const PasswordResetResult = Schema.Struct({
  user: User,
  sessionsEnded: Schema.Int.annotate({ description: "The person's sessions, every one of them, ended by the reset." }),
  ...HeldApiKeysFields
}).annotate({
  identifier: "PasswordResetResult",
  // Instances: Effect 4 encodes no plain object as a class, and an example it cannot encode is left out.
  examples: [{
    user: new User({ id: ada.userId, email: ada.email, name: ada.name, createdAt: exampleTime() }),
    sessionsEnded: 2,
    apiKeys: [exampleOf(HeldApiKey)],
    apiKeysRevoked: true
  }]
})

export const ForgotPasswordRequest = Schema.Struct({ email: Email }).annotate({
  examples: [{ email: ada.email }]
})

export const VerifyEmailRequest = Schema.Struct({
  token: OneTimeToken.annotate({ description: "The one-time token of the verification link mailed to the address (`opv_…`)." })
}).annotate({ examples: [{ token: exampleToken(EMAIL_VERIFICATION_TOKEN_PREFIX) }] })

export const VerifiedEmail = Schema.Struct({
  user: User,
  emailVerifiedAt: Timestamp.annotateKey({ description: "When the address was first proven (an earlier proof, an SSO sign-in say, is kept)." })
}).annotate({
  identifier: "VerifiedEmail",
  examples: [{ user: new User({ id: ada.userId, email: ada.email, name: ada.name, createdAt: exampleTime() }), emailVerifiedAt: exampleTime(30) }]
})

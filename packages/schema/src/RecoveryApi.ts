/** Recovery: password reset links issued by someone with authority or mailed on request, and email verification. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { audits, notAudited } from "./AuditCatalog.js"
import {
  ConflictResponse,
  ForbiddenResponse,
  InvalidRequestResponse,
  NotFoundResponse,
  RateLimitedResponse,
  ServiceUnavailableResponse
} from "./Errors.js"
import { requires } from "./Policy.js"
import {
  ForgotPasswordRequest,
  MemberPasswordResetPath,
  PasswordResetLinkResponse,
  PasswordResetResult,
  ResetPasswordRequest,
  VerifiedEmail,
  VerifyEmailRequest
} from "./Recovery.js"
import { Authentication, MemberAuthentication, memberAuthenticationErrors, sessionOnly } from "./Security.js"

/** What every mail-sending operation answers without SMTP settings: what to do instead. */
const withoutMail =
  "409 `mail_not_configured` when the server has no SMTP settings (`ORGPLANE_SMTP_URL`, `ORGPLANE_MAIL_FROM`): ask an owner or admin of your organization for a reset link (`POST /v1/members/{memberId}/password-reset`), or whoever runs the server (`orgplane admin reset-password <email>` on it)"

export class RecoveryApi extends HttpApiGroup.make("recovery")
  .add(
    HttpApiEndpoint.post("issueMemberPasswordReset", "/v1/members/:memberId/password-reset", { params: MemberPasswordResetPath, success: PasswordResetLinkResponse.pipe(HttpApiSchema.status(201)), error: [ForbiddenResponse, NotFoundResponse, ConflictResponse, ...memberAuthenticationErrors] }).pipe(audits("user.password.reset_link.create"), requires("members.resetPassword"))
      .middleware(MemberAuthentication)
      .annotate(OpenApi.Summary, "Issue a password reset link for a member")
      .annotate(
        OpenApi.Description,
        "Makes a one-time password reset token for the member's account. On a server with SMTP settings it is mailed to the person's address and never shown (`delivery: mailed`); without them it is answered once (`delivery: shown`) for the caller to hand to the person, and the password it sets is temporary (`temporary: true`): its first sign-in chooses the person's own (`newPassword` in `POST /v1/auth/sign-in`), and it ends, with what was chosen in its place, when the account joins another organization. Using it (`POST /v1/auth/password-reset`) ends every session and API key of the account. It is valid for `ORGPLANE_PASSWORD_RESET_TTL` (1 hour), once, and only while the account's password and email stay as they are; issuing another link for the account (or any reset link) voids it. Accounts span organizations, so one organization resets only the accounts it alone ever held: the member's account must never have belonged to another organization (a membership ended or in a deleted organization counts), an admin resets plain members only and an owner admins and members; other owners, and accounts of several organizations, are the instance operator's to reset (`POST /v1/admin/users/{userId}/password-reset`). An account with no password of its own (made by SSO or a directory) gets none this way: the person asks for one by mail (`POST /v1/auth/forgot-password`). The rule is checked again when the link is used. A reset password does not let a member whose organization requires SSO sign in with it. Asks for a recent sign-in (`ORGPLANE_RECENT_AUTHENTICATION`).\n\nErrors: 403 `insufficient_role` when the member's role is the caller's or higher (an admin resetting an admin or owner, an owner another owner), `recent_authentication_required`; 404 `member_not_found` for an unknown or removed member; 409 `reset_own_password` for the caller's own membership (use `POST /v1/me/password`), `account_in_other_organizations` when the account belongs or belonged to another organization (ask the instance's operator), `account_without_password` when it has no password of its own."
      )
  )
  .add(
    HttpApiEndpoint.post("resetPassword", "/v1/auth/password-reset", { payload: ResetPasswordRequest, success: PasswordResetResult, error: [InvalidRequestResponse, RateLimitedResponse, ServiceUnavailableResponse] }).pipe(audits("user.password.reset"))
      .annotate(OpenApi.Summary, "Set a new password with a reset link")
      .annotate(
        OpenApi.Description,
        "Spends a one-time password reset token: sets the account's new password and re-establishes who owns the account, so every other way into it ends: every session, every API key the person's memberships made in every organization (the answer lists them; `revokeApiKeys` changes nothing), every SSO identity linked to it and every other link of its. Then sign in with the new password (`POST /v1/auth/sign-in`): a member of an organization that requires SSO signs in through it as before. Public: the token is the credential.\n\nErrors: 400 `invalid_request` on `token` with `code: password_reset_token_invalid` when it is not a live reset token (unknown, expired, used, voided by a newer link or by a change of the account's password or email, or an owner's or admin's link whose account has since joined another organization or risen in role); 429 `rate_limited` (with `Retry-After`) past `ORGPLANE_RECOVERY_REQUESTS_PER_ADDRESS` (20) recovery requests from one client address in an hour."
      )
  )
  .add(
    HttpApiEndpoint.post("forgotPassword", "/v1/auth/forgot-password", { payload: ForgotPasswordRequest, success: HttpApiSchema.Empty(202), error: [ConflictResponse, RateLimitedResponse, ServiceUnavailableResponse] }).pipe(audits("user.password.reset_link.create"))
      .annotate(OpenApi.Summary, "Mail a password reset link")
      .annotate(
        OpenApi.Description,
        "Mails a one-time password reset link (valid `ORGPLANE_PASSWORD_RESET_TTL`, 1 hour) to the address, if an account has it. The answer is the same, 202 without a body, whether or not one does, and the mail is sent after it; a failure to send is logged, never answered. The link names `ORGPLANE_PUBLIC_URL` (else the configured host and port), never the request's `Host`. Public.\n\nErrors: " + withoutMail + "; 429 `rate_limited` (with `Retry-After`) past `ORGPLANE_RECOVERY_MAILS_PER_EMAIL` (3) requests for one email, or `ORGPLANE_RECOVERY_REQUESTS_PER_ADDRESS` (20) recovery requests from one client address, in an hour: alike for an email with an account and one without."
      )
  )
  .add(
    HttpApiEndpoint.post("requestEmailVerification", "/v1/me/email-verification", { success: HttpApiSchema.Empty(202), error: [ForbiddenResponse, ConflictResponse, RateLimitedResponse] }).pipe(sessionOnly, notAudited("mails a link to the caller's own address and changes nothing; proving it (user.email.verify) is recorded"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Mail an email verification link")
      .annotate(
        OpenApi.Description,
        "Mails a one-time verification link (valid `ORGPLANE_EMAIL_VERIFICATION_TTL`, 24 hours) to the caller's own email address; using it (`POST /v1/auth/verify-email`) proves the address to the whole instance, as an SSO sign-in through a verified domain does. A newer link voids the older one, and a change of the account's email voids both. Session only.\n\nErrors: 401 `unauthorized` without a valid session; 403 `session_required` with an API key; " + withoutMail + ", `email_already_verified` when the address is proven already; 429 `rate_limited` (with `Retry-After`) past `ORGPLANE_RECOVERY_MAILS_PER_EMAIL` (3) in an hour."
      )
  )
  .add(
    HttpApiEndpoint.post("verifyEmail", "/v1/auth/verify-email", { payload: VerifyEmailRequest, success: VerifiedEmail, error: [InvalidRequestResponse, ForbiddenResponse, RateLimitedResponse, ServiceUnavailableResponse] }).pipe(sessionOnly, audits("user.email.verify"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Prove an email address")
      .annotate(
        OpenApi.Description,
        "Spends a one-time email verification token: the account's email, still the one it was sent to, is proven (`emailVerifiedAt`), so a first SSO sign-in with it links to the account instead of taking it back (docs/security.md, \"Pre-account hijacking through SSO\"). Session only, of the account that asked for the link: whoever holds the mailbox proves it for their own account, never for an account someone else made with their address and asked a link for (docs/security.md, \"Who owns an account\").\n\nErrors: 400 `invalid_request` on `token` with `code: email_verification_token_invalid` when it is not a live verification token of the caller's account (unknown, expired, used, voided by a newer one, sent to an address the account no longer has, or asked for by another account); 401 `unauthorized` without a valid session; 403 `session_required` with an API key; 429 `rate_limited` (with `Retry-After`) past `ORGPLANE_RECOVERY_REQUESTS_PER_ADDRESS` (20) recovery requests from one client address in an hour."
      )
  )
  .annotate(OpenApi.Title, "Recovery")
  .annotate(
    OpenApi.Description,
    "Getting back into an account without its password, and proving its email. Owners and admins issue one-time reset links for the members only their organization holds, the instance's operator for anyone (`POST /v1/admin/users/{userId}/password-reset`), and whoever runs the server for anyone with `orgplane admin reset-password <email>`; with SMTP settings, a person asks for a link by mail and proves their address. A reset link is shown or mailed once, stored hashed, valid an hour, and spent once; using it ends every other way into the account (sessions, API keys, SSO links). Mailing operations without SMTP settings answer 409 `mail_not_configured` saying what to do instead."
  )
{}

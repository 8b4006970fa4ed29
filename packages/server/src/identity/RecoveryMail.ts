/** The recovery mails: a password reset link asked for or issued, an email verification link. */
import { type Link, linkMail } from "../integrations/mail/LinkMail.js"
import type { MailMessage } from "../integrations/mail/Mailer.js"

/** A reset link's mail; `issuer` names who asked for it when it was not the person (an administrator, the operator). */
export const passwordResetMail = (link: Link, issuer?: string): MailMessage =>
  linkMail(link, {
    subject: "Reset your orgplane password",
    why: issuer === undefined
      ? `Someone asked to reset the password of the orgplane account ${link.to} at ${link.baseUrl}.`
      : `${issuer} issued a link to reset the password of your orgplane account ${link.to} at ${link.baseUrl}.`,
    what: "To choose a new password",
    command: "auth reset-password",
    request: `/v1/auth/password-reset with {"token": "TOKEN", "newPassword": "..."}`,
    after: [
      "The link works once, until EXPIRES, and using it signs the account out everywhere and revokes its API keys.",
      "If you did not ask for it, ignore this message: your password stays as it is."
    ]
  })

export const emailVerificationMail = (link: Link): MailMessage =>
  linkMail(link, {
    subject: "Verify your email address for orgplane",
    why: `Someone signed in to the orgplane account ${link.to} at ${link.baseUrl} asked to verify this address.`,
    what: "To prove it is yours, signed in as that account",
    command: "auth verify-email",
    request: `/v1/auth/verify-email, with the account's session, and {"token": "TOKEN"}`,
    after: [
      "The link works once, until EXPIRES, and only for the account that asked for it.",
      "If you did not ask for it, ignore this message: someone else may have made an account with your address."
    ]
  })

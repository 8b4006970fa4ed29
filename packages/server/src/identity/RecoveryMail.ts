/**
 * The recovery mails (a password reset link asked for, an email verification link), pure, and how they leave: after
 * the transaction that made their token committed, off the request, a failure logged and never answered (an answer
 * that differed would tell whether the address has an account).
 */
import * as Effect from "effect/Effect"
import type { MailerService, MailMessage } from "../integrations/mail/Mailer.js"

interface Link {
  readonly to: string
  readonly baseUrl: string
  readonly token: string
  readonly expiresAt: Date
}

/** A link's mail: why it came, how to use its token without a browser page (the CLI, or the request), until when. */
const linkMail = (link: Link, text: {
  readonly subject: string
  readonly why: string
  readonly what: string
  readonly command: string
  readonly request: string
  readonly after: ReadonlyArray<string>
}): MailMessage => ({
  to: link.to,
  subject: text.subject,
  text: [
    text.why,
    "",
    `${text.what}, run:`,
    "",
    `  orgplane ${text.command} ${link.token} --url ${link.baseUrl}`,
    "",
    `or send POST ${link.baseUrl}${text.request.replace("TOKEN", link.token)}.`,
    "",
    ...text.after.map((line) => line.replace("EXPIRES", link.expiresAt.toISOString()))
  ].join("\n")
})

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

/**
 * Sends `message` in the background, once the caller's transaction has committed: the answer does not wait for
 * the mail server, and a failure is a warning in the log (naming the mail server, never the address's account).
 */
export const sendLater = (mailer: MailerService, message: MailMessage) =>
  Effect.asVoid(Effect.forkDetach(
    mailer.send(message).pipe(
      Effect.catch((error) => Effect.logWarning(`A recovery mail ("${message.subject}") was not sent: ${error.message}`))
    )
  ))

/**
 * The recovery mails (a password reset link asked for, an email verification link), pure, and how they leave: after
 * the transaction that made their token committed, off the request, a failure logged and never answered (an answer
 * that differed would tell whether the address has an account).
 */
import { Effect } from "effect"
import type { MailerService, MailMessage } from "../integrations/mail/Mailer.js"

/** How a person uses a token without a browser page: the CLI's command, or the request itself. */
const howToUse = (baseUrl: string, command: string, request: string) =>
  [
    `  orgplane ${command} --url ${baseUrl}`,
    "",
    `or send POST ${baseUrl}${request}.`
  ].join("\n")

export const passwordResetMail = (input: {
  readonly to: string
  readonly baseUrl: string
  readonly token: string
  readonly expiresAt: Date
}): MailMessage => ({
  to: input.to,
  subject: "Reset your orgplane password",
  text: [
    `Someone asked to reset the password of the orgplane account ${input.to} at ${input.baseUrl}.`,
    "",
    "To choose a new password, run:",
    "",
    howToUse(input.baseUrl, `auth reset-password ${input.token}`, `/v1/auth/password-reset with {"token": "${input.token}", "newPassword": "..."}`),
    "",
    `The link works once, until ${input.expiresAt.toISOString()}, and using it signs the account out everywhere.`,
    "If you did not ask for it, ignore this message: your password stays as it is."
  ].join("\n")
})

export const emailVerificationMail = (input: {
  readonly to: string
  readonly baseUrl: string
  readonly token: string
  readonly expiresAt: Date
}): MailMessage => ({
  to: input.to,
  subject: "Verify your email address for orgplane",
  text: [
    `Someone signed in to the orgplane account ${input.to} at ${input.baseUrl} asked to verify this address.`,
    "",
    "To prove it is yours, run:",
    "",
    howToUse(input.baseUrl, `auth verify-email ${input.token}`, `/v1/auth/verify-email with {"token": "${input.token}"}`),
    "",
    `The link works once, until ${input.expiresAt.toISOString()}. If you did not ask for it, ignore this message.`
  ].join("\n")
})

/**
 * Sends `message` in the background, once the caller's transaction has committed: the answer does not wait for
 * the mail server, and a failure is a warning in the log (naming the mail server, never the address's account).
 */
export const sendLater = (mailer: MailerService, message: MailMessage) =>
  Effect.asVoid(Effect.forkDaemon(
    mailer.send(message).pipe(
      Effect.catchAll((error) => Effect.logWarning(`A recovery mail ("${message.subject}") was not sent: ${error.message}`))
    )
  ))

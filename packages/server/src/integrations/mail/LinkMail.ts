/**
 * A mail carrying a one-time link's token (a password reset, an email verification, an invitation), pure, and how
 * such mails leave: after the transaction that made their token committed, off the request, a failure logged and
 * never answered (an answer that differed would tell whether the address has an account).
 */
import * as Effect from "effect/Effect"
import { afterCommit } from "../../platform/Sql.js"
import type { MailerService, MailMessage } from "./Mailer.js"

export interface Link {
  readonly to: string
  readonly baseUrl: string
  readonly token: string
  readonly expiresAt: Date
}

/** A link's mail: why it came, how to use its token without a browser page (the CLI, or the request), until when. */
export const linkMail = (link: Link, text: {
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

/**
 * Sends `message` in the background, once the caller's transaction has committed (called after it; inside an
 * operation made of several changes, held until the whole has committed: Sql.ts `afterCommit`): the answer does
 * not wait for the mail server, and a failure is a warning in the log (naming the mail server, never the address's
 * account).
 */
export const sendLater = (mailer: MailerService, message: MailMessage) =>
  afterCommit(Effect.asVoid(Effect.forkDetach(
    mailer.send(message).pipe(
      Effect.catch((error) => Effect.logWarning(`A mail ("${message.subject}") was not sent: ${error.message}`))
    )
  )))

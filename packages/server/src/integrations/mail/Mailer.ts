/**
 * The mail the server sends (password reset and email verification links): SMTP through nodemailer, loaded on first
 * use, to `ORGPLANE_SMTP_URL` from `ORGPLANE_MAIL_FROM`. Without them the server sends none (`configured` is false).
 * The URL's password is never logged: a failure names the mail server's host and port only.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type { Transporter } from "nodemailer"
import { ServerConfig } from "../../platform/Config.js"
import { lazily } from "../../platform/Lazy.js"

const nodemailer = lazily(() => import("nodemailer"))

/** Only a message: nodemailer's error objects carry the SMTP exchange, which is not for logs. */
export class MailError extends Data.TaggedError("MailError")<{ readonly message: string }> {}

export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
}

/** The longest a message may take, connection included: nodemailer's own timeouts are minutes. */
const SEND_TIMEOUT = Duration.seconds(30)

/** What the transport is made from: the URL read once, its parts decoded (a password may hold `@` or `:`). */
const smtpOptions = (value: string) => {
  const url = new URL(value.trim())
  const secure = url.protocol === "smtps:"
  const user = decodeURIComponent(url.username)
  return {
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port === "" ? (secure ? 465 : 587) : Number(url.port),
    secure,
    ...(user === "" ? {} : { auth: { user, pass: decodeURIComponent(url.password) } }),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000
  }
}

export interface MailerService {
  /** Whether a mail server and a From address are configured; without them `send` always fails. */
  readonly configured: boolean
  /** Sends one message; a refusal or a timeout is a `MailError` naming the server, never its credentials. */
  readonly send: (message: MailMessage) => Effect.Effect<void, MailError>
}

const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const from = settings.mailFrom
  const options = settings.smtpUrl === undefined || from === undefined ? undefined : smtpOptions(Redacted.value(settings.smtpUrl))
  let transport: Transporter | undefined

  const transporter = (smtp: NonNullable<typeof options>) =>
    Effect.map(nodemailer, (library) => (transport ??= library.createTransport(smtp)))

  // Pooled connections are not used: a transport connects per message, so nothing is left open between mails.
  yield* Effect.addFinalizer(() => Effect.sync(() => transport?.close()))

  const send = Effect.fn("Mailer.send")(function*(message: MailMessage) {
    if (options === undefined || from === undefined) return yield* new MailError({ message: "No mail server is configured (ORGPLANE_SMTP_URL, ORGPLANE_MAIL_FROM)." })
    const smtp = yield* transporter(options)
    yield* Effect.tryPromise({
      try: () => smtp.sendMail({ from, to: message.to, subject: message.subject, text: message.text }),
      catch: (cause) =>
        new MailError({
          message: `The mail server ${options.host}:${options.port} did not take the message: ${cause instanceof Error ? cause.message : "unknown error"}`
        })
    }).pipe(
      Effect.timeoutOrElse({
        duration: SEND_TIMEOUT,
        orElse: () => Effect.fail(new MailError({ message: `The mail server ${options.host}:${options.port} did not answer within ${Duration.format(SEND_TIMEOUT)}.` }))
      })
    )
  })

  return { configured: options !== undefined, send } satisfies MailerService
})

/** Needs ServerConfig (`smtpUrl`, `mailFrom`). */
export class Mailer extends Context.Service<Mailer, MailerService>()("@orgplane/server/integrations/mail/Mailer", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

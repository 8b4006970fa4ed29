/**
 * The mailer against a real SMTP server on 127.0.0.1 (testkit's FakeSmtp: the smtp-server package, no Effect, asking
 * for a user and password), as http/RecoveryMail.test.ts has it: a message arrives from the configured
 * address, authenticated with a password holding `@` and `:`; a server that refuses, is not there or never answers
 * is a MailError naming its host and port, never its password; without a mail server nothing is configured.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { TestClock } from "effect/testing"
import * as Net from "node:net"
import * as FakeSmtp from "../../../packages/testkit/src/FakeSmtp.js"
import * as Config from "../src/platform/Config.js"
import { Mailer } from "../src/integrations/mail/Mailer.js"

const SMTP_PASSWORD = "smtp-secret-p@ss:word"
const FROM = "orgplane <no-reply@orgplane.example.com>"
let smtp: FakeSmtp.FakeSmtp

beforeAll(async () => {
  smtp = await FakeSmtp.start({ user: "orgplane", password: SMTP_PASSWORD })
})
afterAll(async () => {
  await smtp?.close()
})

/** The mailer as the server builds it: ServerConfig from an empty environment with these options on top. */
const mailer = (options: Config.Options) =>
  Mailer.layer.pipe(
    Layer.provide(Config.layer(options)),
    Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} })))
  )

const message = (to: string) => ({ to, subject: "Reset your orgplane password", text: "orgplane auth reset --url https://orgplane.example.com\n" })

/** A loopback port that takes connections and never says a word (an SMTP server that hangs before its greeting). */
const silentServer = Effect.acquireRelease(
  Effect.promise(async () => {
    const sockets = new Set<Net.Socket>()
    const server = Net.createServer((socket) => void sockets.add(socket))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    return { server, sockets, port: typeof address === "object" && address !== null ? address.port : 0 }
  }),
  ({ server, sockets }) =>
    Effect.promise(() => {
      for (const socket of sockets) socket.destroy()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    })
)

describe("Mailer", () => {
  it.live("sends through the configured server, authenticated, from the configured address", () =>
    Effect.gen(function*() {
      const mail = yield* Mailer
      expect(mail.configured).toBe(true)
      const to = `person.${Date.now()}@example.com`
      yield* mail.send(message(to))
      const received = yield* Effect.promise(() => smtp.next(to))
      expect(received).toMatchObject({ from: "no-reply@orgplane.example.com", to: [to], subject: "Reset your orgplane password", user: "orgplane" })
      expect(received.text).toContain("--url https://orgplane.example.com")
      // The transport is made once and used again.
      const again = `again.${Date.now()}@example.com`
      yield* mail.send({ to: again, subject: "Verify your email address for orgplane", text: "opv_x" })
      expect((yield* Effect.promise(() => smtp.next(again))).subject).toBe("Verify your email address for orgplane")
    }).pipe(Effect.provide(mailer({ smtpUrl: smtp.url, mailFrom: FROM }))))

  it.live("fails with the server's host and port, never its password, when the server refuses the message", () =>
    Effect.gen(function*() {
      const mail = yield* Mailer
      const port = new URL(smtp.url).port
      smtp.refuse = true
      const refused = yield* Effect.flip(mail.send(message(`refused.${Date.now()}@example.com`))).pipe(Effect.ensuring(Effect.sync(() => (smtp.refuse = false))))
      expect(refused._tag).toBe("MailError")
      expect(refused.message).toMatch(new RegExp(`^The mail server 127\\.0\\.0\\.1:${port} did not take the message: `))
      expect(JSON.stringify(refused)).not.toContain(SMTP_PASSWORD)
      expect(JSON.stringify(refused)).not.toContain(encodeURIComponent(SMTP_PASSWORD))
      expect(refused.message).not.toContain(SMTP_PASSWORD)
    }).pipe(Effect.provide(mailer({ smtpUrl: smtp.url, mailFrom: FROM }))))

  it.live("fails naming the server when the password is wrong, or nothing listens there", () =>
    Effect.gen(function*() {
      const port = new URL(smtp.url).port
      const wrong = `smtp://orgplane:${encodeURIComponent("not the p@ssword")}@127.0.0.1:${port}`
      const denied = yield* Effect.flip(Effect.flatMap(Mailer, (mail) => mail.send(message("denied@example.com")))).pipe(Effect.provide(mailer({ smtpUrl: wrong, mailFrom: FROM })))
      expect(denied.message).toMatch(new RegExp(`^The mail server 127\\.0\\.0\\.1:${port} did not take the message: `))
      expect(denied.message).not.toContain("not the p@ssword")
      const nobody = yield* Effect.flip(Effect.flatMap(Mailer, (mail) => mail.send(message("nobody@example.com")))).pipe(
        Effect.provide(mailer({ smtpUrl: "smtp://user:secret@127.0.0.1:1", mailFrom: FROM }))
      )
      expect(nobody.message).toMatch(/^The mail server 127\.0\.0\.1:1 did not take the message: /)
      expect(nobody.message).not.toContain("secret")
    }))

  it.effect("gives up on a server that never answers after 30 seconds", () =>
    Effect.gen(function*() {
      const silent = yield* silentServer
      const fiber = yield* Effect.flatMap(Mailer, (mail) => Effect.flip(mail.send(message("silent@example.com")))).pipe(
        Effect.provide(mailer({ smtpUrl: `smtp://user:secret@127.0.0.1:${silent.port}`, mailFrom: FROM })),
        Effect.forkChild
      )
      // The connection is open and the greeting awaited when the clock moves past the limit.
      yield* Effect.promise(() => new Promise<void>((resolve) => (function wait() {
        if (silent.sockets.size > 0) resolve()
        else setTimeout(wait, 5)
      })()))
      yield* TestClock.adjust("29 seconds")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 second")
      const timedOut = yield* Fiber.join(fiber)
      expect(timedOut.message).toBe(`The mail server 127.0.0.1:${silent.port} did not answer within 30s.`)
    }).pipe(Effect.scoped))

  it.effect("without a mail server and a From address is not configured and sends nothing", () =>
    Effect.gen(function*() {
      const mail = yield* Mailer
      expect(mail.configured).toBe(false)
      const error = yield* Effect.flip(mail.send(message("anyone@example.com")))
      expect(error).toMatchObject({ _tag: "MailError", message: "No mail server is configured (ORGPLANE_SMTP_URL, ORGPLANE_MAIL_FROM)." })
    }).pipe(Effect.provide(mailer({}))))
})

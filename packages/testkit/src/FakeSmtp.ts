/**
 * A real SMTP server on 127.0.0.1 (the `smtp-server` package) that keeps every message it receives, parsed with
 * `mailparser`: where a test server's mail goes. It asks for a user and password when given them (AUTH over the
 * plain connection, as a relay on a private network may), and `refuse` makes it turn every message away, as a mail
 * server that is down or full does.
 */
import { simpleParser } from "mailparser"
import type { AddressInfo } from "node:net"
import { SMTPServer, type SMTPServerOptions } from "smtp-server"
import * as Wait from "./Wait.js"

export interface ReceivedMail {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly subject: string
  readonly text: string
  /** The user the sender authenticated as, if it did. */
  readonly user: string | null
}

export interface FakeSmtp {
  /** `smtp://user:password@127.0.0.1:<port>` (no credentials when none were asked for). */
  readonly url: string
  readonly messages: ReadonlyArray<ReceivedMail>
  /** Turns every message away (`554`) from now on, or takes them again. */
  refuse: boolean
  /** The messages sent to `to` so far. */
  readonly to: (address: string) => ReadonlyArray<ReceivedMail>
  /** Waits for the `count`th message to `to` (the first by default) and answers it. */
  readonly next: (address: string, count?: number) => Promise<ReceivedMail>
  /**
   * Waits for a message to `to` carrying a token with `prefix` (`opi` an invitation, `opr` a reset link, `opv` a
   * verification link) that no call took yet, and answers the newest such token.
   */
  readonly token: (address: string, prefix: "opi" | "opr" | "opv") => Promise<string>
  readonly close: () => Promise<void>
}

export const start = async (options: { readonly user?: string; readonly password?: string } = {}): Promise<FakeSmtp> => {
  const messages: Array<ReceivedMail> = []
  const credentials = options.user === undefined ? undefined : { user: options.user, password: options.password ?? "" }
  const state = { refuse: false }
  // `earlyTalkerDelay` (patches/smtp-server@3.21.6.patch): the package waits 100 ms before greeting each connection,
  // to catch clients that talk first; a message of a test paid it, 17 s of the account ownership model's 45. No
  // reverse lookup of 127.0.0.1 either.
  const settings: SMTPServerOptions & { readonly earlyTalkerDelay: number } = {
    earlyTalkerDelay: 0,
    disableReverseLookup: true,
    logger: false,
    disabledCommands: credentials === undefined ? ["STARTTLS", "AUTH"] : ["STARTTLS"],
    allowInsecureAuth: true,
    authOptional: credentials === undefined,
    onAuth(auth, _session, callback) {
      if (credentials !== undefined && auth.username === credentials.user && auth.password === credentials.password) {
        return callback(null, { user: auth.username })
      }
      return callback(new Error("Invalid username or password"))
    },
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (parsed) => {
          if (state.refuse) return callback(Object.assign(new Error("Message refused"), { responseCode: 554 }))
          messages.push({
            from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((recipient) => recipient.address),
            subject: parsed.subject ?? "",
            text: parsed.text ?? "",
            user: typeof session.user === "string" ? session.user : null
          })
          callback()
        },
        (error: Error) => callback(error)
      )
    }
  }
  const server = new SMTPServer(settings)
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const { port } = server.server.address() as AddressInfo
  const auth = credentials === undefined ? "" : `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@`
  const to = (address: string) => messages.filter((message) => message.to.includes(address))
  const taken = new Set<string>()
  const tokens = (address: string, prefix: string) =>
    to(address).flatMap((message) => message.text.match(new RegExp(`${prefix}_[A-Za-z0-9_-]{43}`, "g")) ?? []).filter((token) => !taken.has(token))
  return {
    url: `smtp://${auth}127.0.0.1:${port}`,
    messages,
    get refuse() {
      return state.refuse
    },
    set refuse(value: boolean) {
      state.refuse = value
    },
    to,
    next: async (address, count = 1) => {
      await Wait.until(() => to(address).length >= count, `mail number ${count} to ${address}`)
      return to(address)[count - 1]!
    },
    token: async (address, prefix) => {
      await Wait.until(() => tokens(address, prefix).length > 0, `a mail to ${address} with a ${prefix}_ token`)
      const fresh = tokens(address, prefix)
      for (const token of fresh) taken.add(token)
      return fresh.at(-1)!
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

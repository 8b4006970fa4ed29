/**
 * An automation script with the Promise client: turn a text file into a mail draft in your own mailbox (suite-a,
 * a Microsoft 365 mailbox through Microsoft Graph), never sent. It makes sure the organization's OAuth client for
 * the mail suite is configured (an owner's or admin's key), connects your own account when it is not connected yet
 * (prints the page to open, then waits for you), creates the draft and reads it back.
 *
 *   ORGPLANE_URL=http://127.0.0.1:8787 ORGPLANE_API_KEY=opk_... SUITE_A_CLIENT_ID=... SUITE_A_CLIENT_SECRET=... \
 *     pnpm --filter @orgplane/examples draft-mail --to grace@example.com "Weekly notes" examples/mail/weekly-notes.txt
 *
 * Without ORGPLANE_URL it starts a throwaway server (in memory, private destinations allowed), a demo OAuth server
 * that approves every authorization and a demo mail suite on loopback, and runs against those: the script then
 * "opens" the authorization page itself.
 */
import { createClient, OrgplaneError } from "@orgplane/client"
import type { SuiteFeature } from "@orgplane/schema"
import { FakeOAuth, FakeSuites } from "@orgplane/testkit"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { startLocalServer } from "./local-server.js"
import { demoOrganization } from "./publish-skill.js"

/** The mail suite's OAuth client, as an admin registered it with the suite. */
export interface SuiteAClient {
  readonly clientId: string
  readonly clientSecret?: string | undefined
  readonly tenant?: string | undefined
  readonly authorizationEndpoint?: string | undefined
  readonly tokenEndpoint?: string | undefined
  readonly apiBaseUrl?: string | undefined
}

export interface DraftMailOptions {
  readonly baseUrl: string
  /** The caller's API key: the draft goes to this person's mailbox. */
  readonly apiKey: string
  /** An owner's or admin's key that configures the OAuth client when none is; default `apiKey`. */
  readonly adminApiKey?: string | undefined
  /** Used only when the organization has no OAuth client for suite-a yet. */
  readonly client?: SuiteAClient | undefined
  readonly to: ReadonlyArray<string>
  readonly subject: string
  /** A plain-text file: the draft's body. */
  readonly bodyFile: string
  /** Opens the suite's authorization page; default: print it for a person to open in a browser. */
  readonly openAuthorizeUrl?: ((url: string) => Promise<void>) | undefined
  /** How often the connection is checked while waiting for the authorization. Default 2 s. */
  readonly pollIntervalMs?: number | undefined
  /** How long to wait for the authorization. Default 10 minutes. */
  readonly pollTimeoutMs?: number | undefined
  readonly log?: ((line: string) => void) | undefined
}

export type DraftMailReport =
  | {
    readonly ok: true
    /** Whether this run configured the OAuth client (false: one was there). */
    readonly configuredClient: boolean
    /** Whether this run authorized the connection (false: it was connected). */
    readonly authorized: boolean
    readonly draftId: string
    readonly webLink: string
    readonly bodyTruncated: boolean
    /** The draft as read back from the mailbox. */
    readonly readBack: { readonly subject: string; readonly body: string; readonly to: ReadonlyArray<string> }
  }
  | {
    readonly ok: false
    /** The answer was 409 `needs_connection`: why, and what the server says to do. */
    readonly needsConnection: { readonly suite: string | undefined; readonly reason: string | undefined; readonly message: string }
  }

const FEATURES: ReadonlyArray<SuiteFeature> = ["mailDraft", "mailRead"]

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const draftMail = async (options: DraftMailOptions): Promise<DraftMailReport> => {
  const log = options.log ?? ((line: string) => console.log(line))
  const body = await Fs.readFile(options.bodyFile, "utf8")
  const client = createClient({ baseUrl: options.baseUrl, apiKey: options.apiKey })
  const admin = options.adminApiKey === undefined ? client : createClient({ baseUrl: options.baseUrl, apiKey: options.adminApiKey })
  try {
    // 1. The organization's OAuth client for the mail suite: the one there, or configured now.
    let configuredClient = false
    const existing = await admin.suiteClients.get({ path: { suite: "suite-a" } }).catch((error) => {
      if (error instanceof OrgplaneError && error.code === "suite_client_not_found") return undefined
      throw error
    })
    const suiteClient = existing ?? await (async () => {
      if (options.client === undefined) {
        throw new Error("suite-a has no OAuth client in the organization: give its client id and secret (SUITE_A_CLIENT_ID, SUITE_A_CLIENT_SECRET)")
      }
      const { clientId, clientSecret, tenant, authorizationEndpoint, tokenEndpoint, apiBaseUrl } = options.client
      configuredClient = true
      return admin.suiteClients.put({
        path: { suite: "suite-a" },
        payload: {
          clientId,
          features: FEATURES,
          ...(clientSecret === undefined ? {} : { clientSecret }),
          ...(tenant === undefined ? {} : { tenant }),
          ...(authorizationEndpoint === undefined ? {} : { authorizationEndpoint }),
          ...(tokenEndpoint === undefined ? {} : { tokenEndpoint }),
          ...(apiBaseUrl === undefined ? {} : { apiBaseUrl })
        }
      })
    })()
    log(
      `${configuredClient ? "Configured" : "Found"} the mail suite's OAuth client ${suiteClient.clientId} (features: ${suiteClient.features.join(", ") || "none"})`
    )
    log(`  redirect URI to register with the suite: ${suiteClient.redirectUri}`)

    try {
      // 2. The caller's own connection: connected already, or authorized now in a browser.
      let authorized = false
      const started = await client.suiteConnections.connect({ path: { suite: "suite-a" } })
      if (started.status === "needs_auth") {
        const before = await client.suiteConnections.get({ path: { suite: "suite-a" } })
        if (options.openAuthorizeUrl === undefined) {
          log(`Open this page in a browser to connect your mailbox (valid 10 minutes):`)
          log(`  ${started.authorizeUrl}`)
        } else {
          log(`Opening the authorization page (scopes: ${started.scopes.join(" ")})`)
          await options.openAuthorizeUrl(started.authorizeUrl!)
        }
        // Connected, with a connection newer than the one before (connecting again for a newly enabled feature).
        const interval = options.pollIntervalMs ?? 2_000
        const deadline = Date.now() + (options.pollTimeoutMs ?? 10 * 60_000)
        for (;;) {
          const now = await client.suiteConnections.get({ path: { suite: "suite-a" } })
          if (now.status === "connected" && now.connectedAt?.getTime() !== before.connectedAt?.getTime()) break
          if (Date.now() + interval > deadline) throw new Error("gave up waiting for the authorization after 10 minutes: run the script again")
          await sleep(interval)
        }
        authorized = true
        log("Connected your mailbox")
      } else {
        log("Your mailbox is connected")
      }

      // 3. The draft, then read back from the mailbox.
      const { draft } = await client.capabilities.createMailDraft({ payload: { to: options.to, subject: options.subject, body } })
      log(`Created draft ${draft.id} (never sent)`)
      log(`  ${draft.webLink}`)
      const { message } = await client.capabilities.readMailMessage({ path: { messageId: draft.id } })
      log(`Read it back: "${message.subject}" to ${message.to.map((recipient) => recipient.address).join(", ")}, ${message.body.length} characters${message.bodyTruncated ? " (truncated)" : ""}`)
      return {
        ok: true,
        configuredClient,
        authorized,
        draftId: draft.id,
        webLink: draft.webLink,
        bodyTruncated: message.bodyTruncated,
        readBack: { subject: message.subject, body: message.body, to: message.to.map((recipient) => recipient.address) }
      }
    } catch (error) {
      // 4. Not usable yet: the server says why (an admin's move, or yours: connect again).
      if (!(error instanceof OrgplaneError && error.code === "needs_connection")) throw error
      const answer = error.body as { suite?: string; reason?: string; message: string }
      log(`Cannot use the mail suite (${answer.reason ?? "needs_connection"}): ${answer.message}`)
      return { ok: false, needsConnection: { suite: answer.suite, reason: answer.reason, message: answer.message } }
    }
  } finally {
    if (admin !== client) await admin.close()
    await client.close()
  }
}

/**
 * What a browser does with the demo's authorization page, which approves at once: follow its redirect to the
 * server's callback. A real suite shows a sign-in and consent page instead.
 */
export const openInDemo = async (authorizeUrl: string): Promise<void> => {
  const approved = await fetch(authorizeUrl, { redirect: "manual" })
  const location = approved.headers.get("location")
  if (approved.status !== 302 || location === null) throw new Error(`the demo authorization page answered ${approved.status}`)
  const callback = await fetch(location)
  if (!callback.ok) throw new Error(`the callback answered ${callback.status}: ${await callback.text()}`)
}

/** The demo suite: an OAuth server that approves everything and a mail API, on loopback, for a server at `serverUrl`. */
export const startDemoSuite = async (serverUrl: string) => {
  const oauth = await FakeOAuth.start({ dynamicRegistration: false, scopesSupported: ["offline_access", "Mail.ReadWrite", "Mail.Read"] })
  const mail = await FakeSuites.startMail({ verifyToken: oauth.verifyAccessToken })
  oauth.addClient({
    client_id: "demo-client",
    client_secret: "demo-secret",
    redirect_uris: [`${serverUrl}/v1/capabilities/oauth/callback`],
    token_endpoint_auth_method: "client_secret_post"
  })
  return {
    oauth,
    mail,
    client: {
      clientId: "demo-client",
      clientSecret: "demo-secret",
      authorizationEndpoint: `${oauth.url}/authorize`,
      tokenEndpoint: `${oauth.url}/token`,
      apiBaseUrl: mail.url
    } satisfies SuiteAClient,
    close: async () => {
      await mail.close()
      await oauth.close()
    }
  }
}

/** `--to a@x --to b@y <subject> <file>` */
const parseArgs = (args: ReadonlyArray<string>) => {
  const to: Array<string> = []
  const rest: Array<string> = []
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!
    if (arg === "--to") to.push(args[++index] ?? "")
    else if (arg.startsWith("--to=")) to.push(arg.slice("--to=".length))
    else rest.push(arg)
  }
  return { to: to.filter((address) => address !== ""), subject: rest[0], file: rest[1], extra: rest.slice(2) }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { to, subject, file, extra } = parseArgs(process.argv.slice(2))
  const given = process.env.ORGPLANE_URL ?? ""
  if (to.length === 0 || !subject || !file || extra.length > 0 || (given !== "" && (process.env.ORGPLANE_API_KEY ?? "") === "")) {
    console.error(
      "usage: [ORGPLANE_URL=… ORGPLANE_API_KEY=opk_… [ORGPLANE_ADMIN_API_KEY=opk_…] SUITE_A_CLIENT_ID=… SUITE_A_CLIENT_SECRET=…] draft-mail.ts --to <address> [--to …] <subject> <text file>"
    )
    process.exit(2)
  }
  // pnpm runs the script in examples/; a relative path means one from where the command was typed.
  const bodyFile = Path.resolve(process.env.INIT_CWD ?? process.cwd(), file)
  const local = given === "" ? await startLocalServer({ outboundAllowPrivate: true }) : undefined
  const demo = local === undefined ? undefined : await startDemoSuite(local.url)
  try {
    if (local !== undefined && demo !== undefined) {
      console.error(
        `No ORGPLANE_URL: started a throwaway server on ${local.url}, a demo OAuth server on ${demo.oauth.url} (approves every authorization) and a demo mail suite on ${demo.mail.url}.`
      )
    }
    const env = (name: string) => (process.env[name] ?? "") === "" ? undefined : process.env[name]
    const clientId = env("SUITE_A_CLIENT_ID")
    const report = await draftMail({
      baseUrl: local?.url ?? given,
      apiKey: local === undefined ? process.env.ORGPLANE_API_KEY! : (await demoOrganization(local.url)).apiKey,
      adminApiKey: env("ORGPLANE_ADMIN_API_KEY"),
      client: demo?.client ?? (clientId === undefined ? undefined : {
        clientId,
        clientSecret: env("SUITE_A_CLIENT_SECRET"),
        tenant: env("SUITE_A_TENANT"),
        authorizationEndpoint: env("SUITE_A_AUTHORIZATION_ENDPOINT"),
        tokenEndpoint: env("SUITE_A_TOKEN_ENDPOINT"),
        apiBaseUrl: env("SUITE_A_API_BASE_URL")
      }),
      to,
      subject,
      bodyFile,
      openAuthorizeUrl: demo === undefined ? undefined : openInDemo
    })
    if (report.ok && demo !== undefined) {
      const stored = demo.mail.drafts().find((draft) => draft.id === report.draftId)
      console.error(`The demo mailbox holds it as a draft: ${stored?.isDraft === true ? "yes" : "no"}`)
    }
    console.log(JSON.stringify(
      report.ok ? { draftId: report.draftId, webLink: report.webLink, bodyTruncated: report.bodyTruncated } : report,
      null,
      2
    ))
    if (!report.ok) process.exitCode = 1
  } finally {
    await local?.close()
    await demo?.close()
  }
}

/**
 * `orgplane connections suite-a|suite-b …`, `orgplane mail draft | read` and `orgplane calendar meet`: the CLI
 * in-process (Harness.ts) against a real server, a fake authorization server and the fake suites on loopback (which
 * only private mode lets the server reach). The browser's part (opening the URL, the redirect to the callback) is
 * plain `fetch`. The server is RealServer.ts's.
 */
import {
  CalendarEventResult,
  MailDraftResult,
  MailMessageResult,
  SuiteClient,
  SuiteConnection,
  SuiteConnectResult,
  SuiteDisconnectResult
} from "@orgplane/schema"
import * as FakeOAuth from "../../../packages/testkit/src/FakeOAuth.js"
import * as FakeSuites from "../../../packages/testkit/src/FakeSuites.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as RealServer from "./RealServer.js"
import * as Wait from "../../../packages/testkit/src/Wait.js"
import * as Schema from "effect/Schema"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { Readable } from "node:stream"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { cleanup, fresh, json, type Output, type Result } from "./Harness.js"

const GOOGLE = "https://www.googleapis.com/auth/"
const SECRET_A = "suite-a-client-secret-from-stdin"
const SECRET_B = "suite-b-client-secret-from-env"

let server: RealServer.RealServer
let oauth: FakeOAuth.FakeOAuth
let mail: FakeSuites.FakeMail
let calendar: FakeSuites.FakeCalendar

beforeAll(async () => {
  ;[server, oauth] = await Promise.all([
    RealServer.start({ ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true" }),
    FakeOAuth.start({
      dynamicRegistration: false,
      scopesSupported: ["offline_access", "Mail.ReadWrite", "Mail.Read", `${GOOGLE}calendar.events`]
    })
  ])
  ;[mail, calendar] = await Promise.all([
    FakeSuites.startMail({ verifyToken: oauth.verifyAccessToken }),
    FakeSuites.startCalendar({ verifyToken: oauth.verifyAccessToken })
  ])
})
afterAll(async () => {
  await Promise.all([server?.close(), oauth?.close(), mail?.close(), calendar?.close()])
  await cleanup()
})
afterEach(() => {
  vi.restoreAllMocks()
})

/** Standard input holding `text`, for the next command that reads it. */
const stdin = (text: string) => vi.spyOn(process, "stdin", "get").mockReturnValue(Readable.from([Buffer.from(text)]) as typeof process.stdin)

/** The browser: open the authorization URL (auto-approved), follow the redirect to the server's callback. */
const authorizeInBrowser = async (authorizeUrl: string) => {
  const answer = await fetch(authorizeUrl, { redirect: "manual" })
  expect(answer.status).toBe(302)
  const callback = await fetch(answer.headers.get("location")!)
  expect(callback.status, await callback.clone().text()).toBe(200)
}

/** The `--json` answer decoded with the API's schema. */
const decoded = <A, I>(schema: Schema.Codec<A, I>, result: Result) => {
  expect(result.code, result.stderr).toBe(0)
  return Schema.decodeUnknownSync(schema)(json(result))
}

describe("orgplane connections, mail and calendar", { timeout: 120_000 }, () => {
  it("configures both suites, connects a member's accounts, drafts and reads mail, adds a meeting link, disconnects", async () => {
    const org = await Http.staffed(server.url, "Suites Org")
    const { cli, home } = await fresh()
    const owner = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.owner.token }
    const member = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.member.token }

    // Nothing configured yet: a capability needs a connection, and the hint says who can make one possible.
    const early = await cli(["mail", "draft", "--to", "bob@fabrikam.example", "--subject", "Hi"], member)
    expect(early.code).toBe(1)
    expect(early.stderr).toContain("needs_connection (409)")
    expect(early.stderr).toContain("ask an owner or admin to configure it with 'orgplane connections suite-a client set'")
    const unconfigured = await cli(["connections", "suite-a", "connect"], member)
    expect(unconfigured.code).toBe(1)
    expect(unconfigured.stderr).toContain("suite_not_configured")
    expect(unconfigured.stderr).toContain("'orgplane connections suite-a client set'")

    // The owner configures suite-a with its secret from standard input, suite-b with its secret from the environment.
    stdin(`${SECRET_A}\n`)
    const setA = await cli([
      "connections", "suite-a", "client", "set", "--client-id", "suite-a-app", "--features", "mailDraft, mailRead",
      "--tenant", "contoso.example", "--authorization-endpoint", `${oauth.url}/authorize`, "--token-endpoint", `${oauth.url}/token`,
      "--api-base-url", mail.url, "--client-secret-stdin"
    ], owner)
    expect(setA.code, setA.stderr).toBe(0)
    const redirectUri = `${server.url}/v1/capabilities/oauth/callback`
    expect(setA.stdout).toContain(`Register this redirect URI with the suite's OAuth client:\n  ${redirectUri}`)
    expect(setA.stdout).toContain("stored (never shown)")
    expect(setA.stdout + setA.stderr).not.toContain(SECRET_A)
    const setB = await cli([
      "connections", "suite-b", "client", "set", "--client-id", "suite-b-app", "--authorization-endpoint", `${oauth.url}/authorize`,
      "--token-endpoint", `${oauth.url}/token`, "--api-base-url", calendar.url, "--json"
    ], { ...owner, ORGPLANE_SUITE_CLIENT_SECRET: SECRET_B })
    const clientB = decoded(SuiteClient, setB)
    expect(clientB).toMatchObject({ suite: "suite-b", clientId: "suite-b-app", hasClientSecret: true, features: ["calendarWrite"], redirectUri })
    expect(setB.stdout).not.toContain(SECRET_B)
    const shownA = decoded(SuiteClient, await cli(["connections", "suite-a", "client", "get", "--json"], owner))
    expect(shownA).toMatchObject({ tenant: "contoso.example", features: ["mailDraft", "mailRead"], apiBaseUrl: mail.url, hasClientSecret: true })
    for (const [clientId, secret] of [["suite-a-app", SECRET_A], ["suite-b-app", SECRET_B]] as const) {
      oauth.addClient({ client_id: clientId, client_secret: secret, redirect_uris: [redirectUri], token_endpoint_auth_method: "client_secret_post" })
    }

    // Members may not touch the clients; a feature of the other suite is the server's 400.
    const refused = await cli(["connections", "suite-a", "client", "get"], member)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("insufficient_role")
    const wrongFeature = await cli(["connections", "suite-b", "client", "set", "--client-id", "x", "--features", "mailRead"], owner)
    expect(wrongFeature.code).not.toBe(0)
    expect(wrongFeature.stderr).toContain("invalid_request")
    const badFeature = await cli(["connections", "suite-b", "client", "set", "--client-id", "x", "--features", "sendMail"], owner)
    expect(badFeature.code).toBe(2)
    expect(badFeature.stderr).toContain("--features")

    // The member connects suite-a: the URL, the browser, then the status says connected.
    expect((await cli(["connections", "suite-a", "status"], member)).stdout).toContain("suite-a: not connected")
    const started = decoded(SuiteConnectResult, await cli(["connections", "suite-a", "connect", "--json"], member))
    expect(started.status).toBe("needs_auth")
    expect(started.scopes).toEqual(["offline_access", "Mail.ReadWrite", "Mail.Read"])
    await authorizeInBrowser(started.authorizeUrl!)
    const status = await cli(["connections", "suite-a", "status"], member)
    expect(status.code, status.stderr).toBe(0)
    expect(status.stdout).toContain("suite-a: connected")
    expect(status.stdout).toMatch(/mailDraft\s+enabled: yes, granted: yes/)
    expect(status.stdout).toMatch(/mailRead\s+enabled: yes, granted: yes/)
    const connection = decoded(SuiteConnection, await cli(["connections", "suite-a", "status", "--json"], member))
    expect(connection.status).toBe("connected")
    expect(connection.accessTokenExpiresAt).not.toBeNull()
    const again = await cli(["connections", "suite-a", "connect"], member)
    expect(again.stdout).toBe("Connected: your suite-a account is connected.\n")

    // suite-b with --wait: the URL on stderr, the browser completes meanwhile.
    const output: Output = { stdout: [], stderr: [] }
    const waiting = cli(["connections", "suite-b", "connect", "--wait"], member, {}, output)
    await Wait.until(() => output.stderr.join("").includes("Open this URL in a browser to authorize"), "the CLI's authorization URL")
    const other = Http.expectStatus<typeof SuiteConnectResult.Encoded>("connect", await Http.request(server.url, "POST", "/v1/capabilities/suite-b/connection/connect", { token: org.member.token }), 200)
    await authorizeInBrowser(other.authorizeUrl!)
    const waited = await waiting
    expect(waited.code, waited.stderr).toBe(0)
    expect(waited.stderr).toContain("Open this URL in a browser to authorize")
    expect(waited.stdout).toBe("Connected: your suite-b account is connected.\n")

    // A draft: recipients, a subject, the body from a file; never sent.
    const bodyFile = Path.join(home, "body.txt")
    await Fs.writeFile(bodyFile, "Hello Bob,\n\nsee you Tuesday.\n")
    const drafted = await cli([
      "mail", "draft", "--to", "bob@fabrikam.example", "--to", "carol@fabrikam.example", "--cc", "dave@fabrikam.example",
      "--bcc", "erin@fabrikam.example", "--subject", "  Tuesday  ", "--body-file", bodyFile
    ], member)
    expect(drafted.code, drafted.stderr).toBe(0)
    const [stored] = mail.drafts()
    expect(mail.drafts()).toHaveLength(1)
    expect(stored).toMatchObject({ subject: "Tuesday", isDraft: true, body: { contentType: "text", content: "Hello Bob,\n\nsee you Tuesday.\n" } })
    expect(stored!.toRecipients.map((r) => r.emailAddress.address)).toEqual(["bob@fabrikam.example", "carol@fabrikam.example"])
    expect(stored!.bccRecipients.map((r) => r.emailAddress.address)).toEqual(["erin@fabrikam.example"])
    expect(drafted.stdout).toContain(`Created draft ${stored!.id} (not sent).`)
    expect(drafted.stdout).toMatch(/subject\s+Tuesday/)
    expect(drafted.stdout).toContain("bob@fabrikam.example, carol@fabrikam.example")
    expect(drafted.stdout).toMatch(/link\s+\S+/)

    // The body from standard input, and --json against the schema.
    stdin("From stdin.")
    const piped = decoded(MailDraftResult, await cli(["mail", "draft", "--to", "bob@fabrikam.example", "--subject", "Piped", "--body-file", "-", "--json"], member))
    expect(piped.draft.subject).toBe("Piped")
    expect(mail.drafts().at(-1)!.body.content).toBe("From stdin.")

    // Bad input is a usage error before anything is sent.
    const before = mail.requests.length
    const [noTo, badTo, noSubject] = await Promise.all([
      cli(["mail", "draft", "--subject", "Hi"], member),
      cli(["mail", "draft", "--to", "not-an-address", "--subject", "Hi"], member),
      cli(["mail", "draft", "--to", "bob@fabrikam.example"], member)
    ])
    for (const result of [noTo, badTo, noSubject]) expect(result.code, result.stderr).toBe(2)
    expect(noTo.stderr).toContain("--to")
    expect(badTo.stderr).toContain("--to: must be an email address")
    expect(noSubject.stderr).toContain("subject")
    expect(mail.requests.length).toBe(before)

    // Reading a received message: headers, then the text body.
    const messageId = mail.addMessage({
      subject: "Quarterly numbers",
      text: "The numbers are in.",
      to: [{ name: "Ada Member", address: "ada@contoso.example" }],
      cc: [{ address: "finance@contoso.example" }],
      receivedDateTime: "2026-03-02T09:30:00Z"
    })
    const read = await cli(["mail", "read", messageId], member)
    expect(read.code, read.stderr).toBe(0)
    expect(read.stdout).toMatch(/^from\s+Grace Sender <grace@fabrikam\.example>$/m)
    expect(read.stdout).toMatch(/^to\s+Ada Member <ada@contoso\.example>$/m)
    expect(read.stdout).toMatch(/^cc\s+finance@contoso\.example$/m)
    expect(read.stdout).toMatch(/^subject\s+Quarterly numbers$/m)
    expect(read.stdout).toMatch(/^received\s+2026-03-02T09:30:00Z$/m)
    expect(read.stdout).toContain("\n\nThe numbers are in.")
    expect(read.stdout).not.toContain("[body truncated]")
    const readJson = decoded(MailMessageResult, await cli(["mail", "read", messageId, "--json"], member))
    expect(readJson.message).toMatchObject({ id: messageId, bodyTruncated: false })
    const missing = await cli(["mail", "read", "AAMkADmissing="], member)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("suite_a_api_error")

    // A meeting link on an existing event.
    const eventId = calendar.addEvent({ summary: "Planning", start: "2026-03-03T10:00:00Z", end: "2026-03-03T11:00:00Z" })
    const met = await cli(["calendar", "meet", eventId], member)
    expect(met.code, met.stderr).toBe(0)
    expect(calendar.patches(eventId)).toBe(1)
    const event = calendar.events().find((candidate) => candidate.id === eventId)!
    expect(event.hangoutLink).toMatch(/^https:\/\//)
    expect(met.stdout).toContain(`Meeting link: ${event.hangoutLink}`)
    expect(met.stdout).toContain(`Planning (${eventId})`)
    expect(met.stdout).toMatch(/when\s+2026-03-03T10:00:00Z – 2026-03-03T11:00:00Z/)
    expect(met.stdout).toContain(event.htmlLink)
    const metJson = decoded(CalendarEventResult, await cli(["calendar", "meet", eventId, "--json"], member))
    expect(metJson.meetLink).toBe(event.hangoutLink)

    // Disconnected: the capability needs a connection again, and the exit code says it failed.
    const dropped = decoded(SuiteDisconnectResult, await cli(["connections", "suite-a", "disconnect", "--json"], member))
    expect(dropped).toEqual({ ok: true, removed: true })
    expect((await cli(["connections", "suite-a", "disconnect"], member)).stdout).toBe("Nothing to disconnect: your suite-a account was not connected.\n")
    const drafts = mail.drafts().length
    const after = await cli(["mail", "draft", "--to", "bob@fabrikam.example", "--subject", "After"], member)
    expect(after.code).toBe(1)
    expect(after.stderr).toContain("needs_connection (409)")
    expect(after.stderr).toContain("run 'orgplane connections suite-a connect'")
    const afterJson = await cli(["mail", "draft", "--to", "bob@fabrikam.example", "--subject", "After", "--json"], member)
    expect(afterJson.code).toBe(1)
    expect(JSON.parse(afterJson.stderr)).toMatchObject({ error: "needs_connection" })
    expect(mail.drafts().length).toBe(drafts)

    // The owner removes the secret, then the client.
    const publicClient = decoded(SuiteClient, await cli(["connections", "suite-b", "client", "set", "--client-id", "suite-b-app", "--remove-client-secret", "--api-base-url", calendar.url, "--json"], owner))
    expect(publicClient.hasClientSecret).toBe(false)
    const removed = await cli(["connections", "suite-b", "client", "delete"], owner)
    expect(removed.code, removed.stderr).toBe(0)
    const gone = await cli(["connections", "suite-b", "client", "get"], owner)
    expect(gone.code).toBe(4)
    expect(gone.stderr).toContain("suite_client_not_found")
    const meetGone = await cli(["calendar", "meet", eventId], member)
    expect(meetGone.code).toBe(1)
    expect(meetGone.stderr).toContain("needs_connection (409)")
    expect(meetGone.stderr).toContain("'orgplane connections suite-b client set'")
  })
})

/**
 * What each example does, checked. Their README commands run in CI too (`pnpm examples`, examples/run-all.ts);
 * here the same code runs in-process, with assertions.
 */
import { AcceptedInvitation, InvitationPage, MarketplacePage, ResolvedMarketplaceResponse, TeamResponse } from "@orgplane/schema"
import { FakeGitHub, FakeMcp, Http } from "@orgplane/testkit"
import * as TestServer from "../packages/server/test/support/HttpServer.js"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { marked, markedCommands, showsSample } from "./run-all.js"
import { startHost, tour } from "./src/embed-node-host.js"
import { demoOrganization, onboard, onboardingScopes } from "./src/onboard-team.js"
import { asCode } from "./src/organization-as-code.js"
import { demoEnvironments, promote } from "./src/promote-document.js"
import { drive } from "./src/agent-over-mcp.js"
import { diagnose } from "./src/diagnose-mcp.js"
import { demoRepository, importLocalMarketplace } from "./src/local-marketplace.js"
import { followLifecycle } from "./src/marketplace-lifecycle.js"
import { draftMail, openInDemo, startDemoSuite } from "./src/draft-mail.js"
import { demoOrganization as publishingOrganization, publish } from "./src/publish-skill.js"
import { main as webHandler } from "./src/web-handler.js"

// Each example starts an embedded database; on a loaded machine that alone can take tens of seconds.
describe("examples", { timeout: 120_000 }, () => {
  it("embed-node-host: the host serves its own route and the mounted API side by side", async () => {
    const host = await startHost({ port: 0 })
    try {
      const seen = await tour(host.url)
      expect(seen.hello).toEqual({ hello: "from the host app" })
      expect(seen.health).toMatchObject({ ok: true })
      expect(seen.signUpStatus).toBe(201)
      expect(seen.elsewhereStatus).toBe(404)
    } finally {
      await host.close()
    }
  })

  it("web-handler: answers Requests with Responses, no socket involved", async () => {
    const result = await webHandler()
    expect(result.health).toMatchObject({ ok: true })
    expect(result.signUpStatus).toBe(201)
    expect(result.me.user.email).toBe("web@example.com")
  })

  it("organization-as-code: applies exactly the plan of the edited export, which then plans nothing", async () => {
    const server = await TestServer.start()
    try {
      const { ownerToken } = await demoOrganization(server.url)
      const { after, applied, plan } = await asCode({ baseUrl: server.url, token: ownerToken })
      expect(plan.changes.map((change) => `${change.action} ${change.kind} ${change.name}`)).toEqual([
        "update member ada@example.com",
        "create invitation alan@example.com",
        "create team Platform"
      ])
      expect(applied.changes).toEqual(plan.changes)
      expect(applied.inviteTokens).toEqual([{ email: "alan@example.com", inviteToken: expect.stringMatching(/^opi_/) }])
      expect(after.changes).toEqual([])
      expect(after.liveHash).toBe(applied.liveHash)
    } finally {
      await server.close()
    }
  })

  it("promote-document: staging's providers and settings applied to production, secrets read from the environment", async () => {
    const server = await TestServer.start()
    try {
      const tokens = await demoEnvironments(server.url)
      await expect(promote({ baseUrl: server.url, ...tokens, environment: {} })).rejects.toThrow("env:LLM_OPENAI_API_KEY")
      const { after, applied, plan } = await promote({ baseUrl: server.url, ...tokens, environment: { LLM_OPENAI_API_KEY: "sk-production" } })
      expect(plan.changes.map((change) => `${change.action} ${change.kind} ${change.name}`)).toEqual(["update directory directory", "create llmProvider OpenAI"])
      expect(plan.secrets).toEqual(["env:LLM_OPENAI_API_KEY"])
      expect(applied.changes).toEqual(plan.changes)
      expect(after.changes).toEqual([])
      // Production's provider holds production's key, not staging's.
      const production = await Http.request(server.url, "GET", "/v1/llm-providers", { token: tokens.productionToken })
      const id = (production.body as { items: Array<{ id: string }> }).items[0]!.id
      const connected = await Http.request(server.url, "GET", `/v1/llm-providers/${id}/connect`, { token: tokens.productionToken })
      expect(connected.body).toMatchObject({ apiKey: "sk-production" })
    } finally {
      await server.close()
    }
  })

  it("onboard-team: puts members in the team, invites the others once, and can run again", async () => {
    const server = await TestServer.start()
    try {
      const org = await Http.staffed(server.url)
      const key = await Http.apiKey(server.url, org.owner.token, onboardingScopes, "onboarding")
      const options = {
        baseUrl: server.url,
        apiKey: key.key,
        team: "Platform",
        roster: [
          { email: org.member.email.toUpperCase(), role: "member" as const },
          { email: "newcomer@example.com", role: "admin" as const }
        ]
      }
      const first = await onboard(options)
      expect(first.addedToTeam).toEqual([org.member.membership.id])
      expect(first.invited.map((i) => i.email)).toEqual(["newcomer@example.com"])
      const again = await onboard(options)
      expect(again).toEqual({ teamId: first.teamId, addedToTeam: [], invited: [], alreadyInvited: ["newcomer@example.com"] })
      // The test server has no mail settings: the token is shown, to send on.
      expect(first.invited[0]?.inviteToken).toMatch(/^opi_/)
      const accepted = Http.expectStatus<typeof AcceptedInvitation.Encoded>("accepting", await Http.request(server.url, "POST", "/v1/invitations/accept", {
        body: { token: first.invited[0]?.inviteToken, signUp: { name: "Newcomer", password: "correct horse battery" } }
      }), 200)
      expect(accepted.membership.role).toBe("admin")
      const third = await onboard(options)
      expect(third.addedToTeam).toEqual([accepted.membership.id])
    } finally {
      await server.close()
    }
  })

  it("onboard-team's demo organization: Ada is a member, so she joins the team and Alan is invited", async () => {
    const server = await TestServer.start()
    try {
      const { apiKey } = await demoOrganization(server.url)
      const report = await onboard({
        baseUrl: server.url,
        apiKey,
        team: "Platform",
        roster: [{ email: "ada@example.com", role: "member" }, { email: "alan@example.com", role: "admin" }]
      })
      expect(report.addedToTeam).toHaveLength(1)
      expect(report.invited.map((i) => i.email)).toEqual(["alan@example.com"])
    } finally {
      await server.close()
    }
  })

  it("publish-skill: the team's members find the skill through the marketplace; a second run adds a version only for a changed file", async () => {
    const server = await TestServer.start()
    try {
      const { ada, apiKey } = await publishingOrganization(server.url)
      const skillFile = new URL("skills/deploy-to-staging/SKILL.md", import.meta.url).pathname
      const lines: Array<string> = []
      const first = await publish({ baseUrl: server.url, apiKey, skillFile, team: "platform", log: (line) => lines.push(line) })
      expect(first.configObject).toMatchObject({ title: "deploy-to-staging", version: 1, changed: true })
      expect(first.grant.role).toBe("viewer")
      expect(first.listed).toEqual({ skill: 1 })
      expect(lines).toEqual([
        `Published skill deploy-to-staging (${first.configObject.id}), version 1`,
        `Bundled it in plugin Deploy tools (${first.plugin.id})`,
        `Listed the plugin in marketplace Engineering (${first.marketplace.id})`,
        `Granted team platform (${first.grant.teamId}) viewer access to the marketplace (grant ${first.grant.id})`
      ])

      // Ada, a plain member of the team, now sees the marketplace, the plugin and the skill.
      const { token } = await Http.signIn(server.url, ada.email, ada.password)
      const skill = await Http.request(server.url, "GET", `/v1/config-objects/${first.configObject.id}`, { token })
      expect(skill.status).toBe(200)
      const marketplaces = Http.expectStatus<typeof MarketplacePage.Encoded>("marketplaces", await Http.request(server.url, "GET", "/v1/marketplaces", { token }), 200)
      expect(marketplaces.items.map((item) => item.id)).toEqual([first.marketplace.id])

      // Again with the same file: nothing new. With a changed file: version 2 of the same object.
      const again = await publish({ baseUrl: server.url, apiKey, skillFile, team: "Platform", log: () => {} })
      expect(again).toEqual({ ...first, configObject: { ...first.configObject, changed: false } })
      const changed = Path.join(await Fs.promises.mkdtemp(Path.join(Os.tmpdir(), "publish-")), "deploy-to-staging", "SKILL.md")
      await Fs.promises.mkdir(Path.dirname(changed))
      await Fs.promises.writeFile(changed, Fs.readFileSync(skillFile, "utf8").replace("Report the URL", "Post the URL"))
      const updated = await publish({ baseUrl: server.url, apiKey, skillFile: changed, team: "Platform", log: () => {} })
      expect(updated.configObject).toEqual({ ...first.configObject, version: 2, changed: true })

      // A team that does not exist stops it before anything is published.
      await expect(publish({ baseUrl: server.url, apiKey, skillFile, team: "Nobody", log: () => {} })).rejects.toThrow(/no team named 'Nobody'/)
    } finally {
      await server.close()
    }
  })

  it("agent-over-mcp: an MCP client drives orgplane mcp serve to make a team, an invitation and a published skill the team may view", async () => {
    const server = await TestServer.start()
    try {
      const owner = await Http.owner(server.url)
      const skillFile = new URL("skills/deploy-to-staging/SKILL.md", import.meta.url).pathname
      const lines: Array<string> = []
      const report = await drive({ baseUrl: server.url, credential: { token: owner.token }, skillFile, team: "Platform", invite: "grace@example.com", log: (line) => lines.push(line) })
      expect(report.tools).toEqual(["find_operations", "describe_operation", "read_operation", "call_operation"])
      expect(lines).toHaveLength(8)
      expect(lines.at(-1)).toBe(`Granted team Platform viewer access to the marketplace (grant ${report.grant.id})`)

      // What the agent did is there through the API, made by the owner it acted for.
      const token = owner.token
      const team = Http.expectStatus<typeof TeamResponse.Encoded>("team", await Http.request(server.url, "GET", `/v1/teams/${report.team.id}`, { token }), 200)
      expect(team.team.name).toBe("Platform")
      const invitations = Http.expectStatus<typeof InvitationPage.Encoded>("invitations", await Http.request(server.url, "GET", "/v1/invitations", { token }), 200)
      expect(invitations.items.map((item) => item.email)).toContain("grace@example.com")
      const resolved = await Http.request(server.url, "GET", `/v1/marketplaces/${report.marketplace.id}/resolved`, { token })
      expect(resolved.status).toBe(200)
      const listed = Http.expectStatus<typeof ResolvedMarketplaceResponse.Encoded>("resolved", resolved, 200).item.plugins.find((plugin) => plugin.id === report.plugin.id)
      expect(listed?.componentCounts).toEqual({ skill: 1 })
      const grants = await Http.request(server.url, "GET", `/v1/marketplaces/${report.marketplace.id}/access`, { token })
      expect(JSON.stringify(grants.body)).toContain(report.team.id)
    } finally {
      await server.close()
    }
  })

  it("diagnose-mcp: registers a checked connection, grants it to the caller, runs a tool and reports failures with their diagnostic", async () => {
    const server = await TestServer.start({ outboundAllowPrivate: true })
    const mcp = await FakeMcp.start({ auth: { apiKey: "demo-key" } })
    try {
      const { apiKey } = await publishingOrganization(server.url)
      const options = { baseUrl: server.url, apiKey, name: "Demo MCP", url: mcp.url, mcpApiKey: "demo-key", log: () => {} }
      const first = await diagnose({ ...options, tool: "add", arguments: { a: 2, b: 3 } })
      expect(first.ok).toBe(true)
      expect(first.outcome).toMatchObject({ structuredContent: { sum: 5 } })
      const authorization = first.inspection.request?.headers.find((header) => header.name === "authorization")
      expect(authorization).toEqual({ name: "authorization", value: "Bearer [redacted]", redacted: true })
      expect(JSON.stringify(first)).not.toContain("demo-key")
      expect(first.inspection.response?.statusText).toBe("OK")

      // Again: the same connection; a tool that fails answers its diagnostic instead of throwing.
      const failed = await diagnose({ ...options, tool: "fail", arguments: {} })
      expect(failed).toMatchObject({ connectionId: first.connectionId, ok: false, outcome: "MCP_PROVIDER_TOOL_ERROR" })

      // A wrong key never gets stored: the live check refuses it.
      await expect(diagnose({ ...options, name: "Wrong key", mcpApiKey: "nope", tool: "add", arguments: {} })).rejects.toMatchObject({
        code: "connection_validation_failed"
      })
    } finally {
      await mcp.close()
      await server.close()
    }
  })

  it("draft-mail: configures the OAuth client, connects once, drafts the file's text (never sent) and reads it back; needs_connection says why", async () => {
    const server = await TestServer.start({ outboundAllowPrivate: true })
    const demo = await startDemoSuite(server.url)
    try {
      const { apiKey } = await publishingOrganization(server.url)
      const bodyFile = new URL("mail/weekly-notes.txt", import.meta.url).pathname
      const text = Fs.readFileSync(bodyFile, "utf8")
      const authorizations = () => demo.oauth.requests.filter((request) => request.path.startsWith("/authorize")).length
      const lines: Array<string> = []
      const options = {
        baseUrl: server.url,
        apiKey,
        client: demo.client,
        to: ["grace@example.com"],
        subject: "Weekly notes",
        bodyFile,
        openAuthorizeUrl: openInDemo,
        pollIntervalMs: 50,
        log: (line: string) => lines.push(line)
      }
      const first = await draftMail(options)
      if (!first.ok) throw new Error(`needs_connection: ${first.needsConnection.message}`)
      expect(first).toMatchObject({ configuredClient: true, authorized: true, bodyTruncated: false })
      expect(lines).toContain(`  redirect URI to register with the suite: ${server.url}/v1/capabilities/oauth/callback`)
      expect(authorizations()).toBe(1)

      // In the mailbox as a draft with the file's text; nothing but drafting and reading reached the suite.
      const stored = demo.mail.drafts().find((draft) => draft.id === first.draftId)
      expect(stored).toMatchObject({ isDraft: true, subject: "Weekly notes", body: { contentType: "text", content: text } })
      expect(stored!.toRecipients).toEqual([{ emailAddress: { name: "grace@example.com", address: "grace@example.com" } }])
      expect(demo.mail.requests.map((request) => `${request.method} ${request.path.split("?")[0]}`)).toEqual([
        "POST /v1.0/me/messages",
        `GET /v1.0/me/messages/${encodeURIComponent(first.draftId)}`
      ])
      expect(first.readBack).toEqual({ subject: "Weekly notes", body: text, to: ["grace@example.com"] })

      // Again: the client and the connection are reused, no new authorization; a second draft.
      const again = await draftMail({ ...options, subject: "Weekly notes, again" })
      if (!again.ok) throw new Error(`needs_connection: ${again.needsConnection.message}`)
      expect(again).toMatchObject({ configuredClient: false, authorized: false })
      expect(again.draftId).not.toBe(first.draftId)
      expect(authorizations()).toBe(1)
      expect(demo.mail.drafts()).toHaveLength(2)

      // An organization whose admin enabled reading only: the member connects, and drafting is refused with the reason.
      const org = await Http.staffed(server.url, "Readers")
      const key = await Http.apiKey(server.url, org.owner.token, undefined, "mail")
      const readOnly = await Http.request(server.url, "PUT", "/v1/capabilities/suite-a/client", {
        token: org.owner.token,
        body: { ...demo.client, features: ["mailRead"] }
      })
      expect(readOnly.status).toBe(200)
      const refusedLines: Array<string> = []
      const refused = await draftMail({ ...options, apiKey: key.key, log: (line) => refusedLines.push(line) })
      expect(refused).toEqual({
        ok: false,
        needsConnection: { suite: "suite-a", reason: "feature_disabled", message: expect.stringMatching(/administrator has disabled mail drafts/) }
      })
      expect(refusedLines.at(-1)).toMatch(/^Cannot use the mail suite \(feature_disabled\): /)
      expect(demo.mail.drafts()).toHaveLength(2)
    } finally {
      await demo.close()
      await server.close()
    }
  })

  it("local-marketplace: a local repository served on loopback is discovered, synced and downloaded as the repository has it", async () => {
    const github = await FakeGitHub.start()
    const server = await TestServer.start({ codehostApiUrl: github.url })
    const repository = await demoRepository()
    const out = Fs.mkdtempSync(Path.join(Os.tmpdir(), "orgplane-plugins-"))
    try {
      const org = await Http.owner(server.url)
      const key = await Http.apiKey(server.url, org.token, undefined, "importing")
      const report = await importLocalMarketplace({ baseUrl: server.url, apiKey: key.key, github, repository, out, log: () => {} })
      expect(report.sync).toEqual({ created: 3, skipped: 0, warnings: [] })
      expect(report.plugins).toEqual([{ name: "release-tools", components: 3, files: 7 }])
      expect(report.identical).toBe(true)
      const plugin = Path.join(import.meta.dirname, "marketplace", "plugins", "release-tools")
      for (const path of ["skills/changelog/SKILL.md", "skills/changelog/references/style.md", "skills/changelog/scripts/commits.sh", "hooks/scripts/check-version.sh"]) {
        expect(Fs.readFileSync(Path.join(out, "release-tools", path), "utf8")).toBe(Fs.readFileSync(Path.join(plugin, path), "utf8"))
      }
    } finally {
      Fs.rmSync(out, { recursive: true, force: true })
      await repository.remove()
      await server.close()
      await github.close()
    }
  })

  it("marketplace-lifecycle: a change, a rename, a removal, a trailing comma and its repair are each followed by a sync", async () => {
    const github = await FakeGitHub.start()
    const server = await TestServer.start({ codehostApiUrl: github.url })
    const repository = await demoRepository()
    try {
      const org = await Http.owner(server.url)
      const key = await Http.apiKey(server.url, org.token, undefined, "following")
      const steps = await followLifecycle({ baseUrl: server.url, apiKey: key.key, github, repository, log: () => {} })
      expect(steps.map(({ plugin, status, step }) => [step, status, plugin.name, plugin.status, plugin.version, plugin.inMarketplace])).toEqual([
        ["import", "completed", "release-tools", "active", "1.0.0", true],
        ["change: version 1.1.0", "completed", "release-tools", "active", "1.1.0", true],
        ["rename: release-kit", "completed", "release-kit", "active", "1.1.0", true],
        ["remove: the entry", "completed", "release-kit", "archived", "1.1.0", false],
        ["break: a trailing comma", "failed", "release-kit", "archived", "1.1.0", false],
        ["repair", "completed", "release-kit", "active", "1.1.0", true]
      ])
      expect(steps.every((step) => step.expected)).toBe(true)
    } finally {
      await repository.remove()
      await server.close()
      await github.close()
    }
  })

  it("the README marks one command per example script, and CI runs those", () => {
    const commands = markedCommands(Fs.readFileSync(new URL("README.md", import.meta.url), "utf8"))
    const scripts = Object.keys(JSON.parse(Fs.readFileSync(new URL("package.json", import.meta.url), "utf8")).scripts)
    // `[NAME=value ...] pnpm --filter @orgplane/examples <script> ...`
    expect(commands.map((command) => command.replace(/^(\w+=\S*\s+)+/, "").split(" ")[3]).sort()).toEqual(scripts.sort())
  })

  it("the README shows what each marked command prints, which pnpm examples holds each run's output to", () => {
    const examples = marked(Fs.readFileSync(new URL("README.md", import.meta.url), "utf8"))
    expect(examples.length).toBe(markedCommands(Fs.readFileSync(new URL("README.md", import.meta.url), "utf8")).length)
    for (const { command, sample } of examples) expect(sample.trim(), command).not.toBe("")

    const sample = [
      "+ orgplane members list",
      "ID     NAME          ROLE",
      "om_…   Ada Lovelace  owner",
      "…",
      "Done at 2026-…"
    ].join("\n")
    const printed = (rows: ReadonlyArray<string>) => `a log line\n${rows.join("\n")}\n`
    // Ids, times and the columns they widen vary; lines may stand where a line of "…" does.
    expect(showsSample(sample, printed([
      "+ orgplane members list",
      "ID                             NAME          ROLE",
      "om_01m6dsg7e0e149zv53hej0fvry  Ada Lovelace  owner",
      "om_01m6dsg7e0e149zv53hej0fvrz  Grace Hopper  admin",
      "Done at 2026-11-27T18:00:00Z"
    ]))).toBe(true)
    // A column the README does not show, a line it shows that is not printed, or more printed after it: drift.
    expect(showsSample(sample, printed(["+ orgplane members list", "ID  NAME  ROLE  SUSPENDED", "om_1  Ada Lovelace  owner  -", "Done at 2026-11-27"]))).toBe(false)
    expect(showsSample(sample, printed(["+ orgplane members list", "ID  NAME  ROLE", "om_1  Ada Lovelace  owner"]))).toBe(false)
    expect(showsSample(sample, printed(["+ orgplane members list", "ID  NAME  ROLE", "om_1  Ada Lovelace  owner", "Done at 2026-11-27", "setup token: x"]))).toBe(false)
  })
})

/**
 * `orgplane connectors accounts | instances | targets | mappings | discover | tree | apply | sync | resync | syncs`:
 * the CLI in-process (see Harness.ts) against a real server reading a fake GitHub (real git repositories); `--json`
 * output decoded with the response schemas, tables read as people would.
 */
import {
  ApplyDiscoveryResponse,
  ConnectorAccountPage,
  ConnectorAccountResponse,
  ConnectorInstanceAccessGrantPage,
  ConnectorInstanceAccessGrantResponse,
  ConnectorInstanceDetail,
  ConnectorInstanceResponse,
  ConnectorMappingPage,
  ConnectorMappingResponse,
  ConnectorSyncEventDetail,
  ConnectorSyncEventPage,
  ConnectorTargetPage,
  ConnectorTargetResponse,
  DisconnectConnectorAccountResponse,
  DiscoveryResponse,
  PluginResponse,
  RemoveConnectorInstanceResponse,
  ResyncResponse,
  SyncNowResponse,
  TreeEntryPage
} from "@orgplane/schema"
import * as FakeGitHub from "../../../packages/testkit/src/FakeGitHub.js"
import * as GitRepo from "../../../packages/testkit/src/GitRepo.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as RealServer from "./RealServer.js"
import * as Schema from "effect/Schema"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { cleanup, fresh, json, type Result } from "./Harness.js"

let server: RealServer.RealServer
let github: FakeGitHub.FakeGitHub
const repos: Array<GitRepo.GitRepo> = []

/** A repository holding one Claude plugin at its root, served as `fullName` to `token`. */
const pluginRepository = async (fullName: string, token: string, extra: GitRepo.Files = {}) => {
  const repo = await GitRepo.withFiles({
    ...extra,
    ".claude-plugin/plugin.json": JSON.stringify({ name: "deploy-tools", description: "Deploys things." }),
    "skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploys the service.\n---\n\nRun the deploy script.\n",
    "commands/ship.md": "---\ndescription: Ships it.\n---\n\nShip the release.\n",
    "README.md": "# Deploy tools\n"
  })
  repos.push(repo)
  github.addRepository(fullName, repo)
  github.addToken(token, [fullName])
  return repo
}

beforeAll(async () => {
  github = await FakeGitHub.start()
  server = await RealServer.start({ ORGPLANE_CODEHOST_API_URL: github.url })
})
afterAll(async () => {
  await server?.close()
  await github?.close()
  await Promise.all(repos.map((repo) => repo.remove()))
  await cleanup()
})

const as = (token: string) => ({ ORGPLANE_URL: server.url, ORGPLANE_TOKEN: token })

const decoded = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, result: Result): S["Type"] => {
  expect(result.code, result.stderr).toBe(0)
  return Schema.decodeUnknownSync(schema)(json(result))
}

const GITHUB_TOKEN = "ghp_cli_test_secret_0123456789"

/**
 * An organization whose owner connected a token account (through the CLI) to `fullName` (a plugin repository) and
 * made an instance following its `main` branch.
 */
const followed = async (organization: string, fullName: string, extra: GitRepo.Files = {}) => {
  const owner = await Http.owner(server.url, organization)
  const token = `ghp_cli_${fullName.replace(/\W/g, "_")}_0123456789`
  const repo = await pluginRepository(fullName, token, extra)
  const { cli } = await fresh()
  const env = as(owner.token)
  const account = decoded(ConnectorAccountResponse, await cli(["connectors", "accounts", "connect", "--json"], { ...env, ORGPLANE_CODEHOST_TOKEN: token })).item
  const instance = decoded(
    ConnectorInstanceResponse,
    await cli(["connectors", "instances", "create", "--account", account.id, "--repository", fullName, "--name", fullName.split("/")[1]!, "--json"], env)
  ).item
  const target = decoded(ConnectorTargetResponse, await cli(["connectors", "targets", "add", instance.id, "--branch", "main", "--json"], env)).item
  return { cli, env, instance, target, repo }
}

describe.concurrent("orgplane connectors", { timeout: 120_000 }, () => {
  it("connects a token account, creates an instance with a target and two mappings, lists them, and removes the instance", async () => {
    const owner = await Http.owner(server.url, "Connectors Org")
    const plugin = await Http.request(server.url, "POST", "/v1/plugins", { token: owner.token, body: { name: "Synced" } })
    expect(plugin.status).toBe(201)
    const pluginId: string = Http.expectStatus<typeof PluginResponse.Encoded>("plugin", plugin, 201).item.id
    const { cli } = await fresh()
    const env = as(owner.token)

    // The token comes from the environment, is sent, and is never printed back.
    const connected = await cli(["connectors", "accounts", "connect", "--login", "acme", "--display-name", "Acme bot", "--json"], {
      ...env,
      ORGPLANE_CODEHOST_TOKEN: GITHUB_TOKEN
    })
    const account = decoded(ConnectorAccountResponse, connected).item
    expect(account).toMatchObject({ kind: "token", displayName: "Acme bot", externalAccountRef: "acme", remoteId: null, status: "active" })
    expect(connected.stdout + connected.stderr).not.toContain(GITHUB_TOKEN)
    const accounts = await cli(["connectors", "accounts", "list"], env)
    expect(accounts.code, accounts.stderr).toBe(0)
    expect(accounts.stdout.split("\n")[0]).toMatch(/^ID\s+KIND\s+NAME\s+LOGIN\s+INSTALLATION\s+STATUS\s+CREATED$/)
    expect(accounts.stdout).toMatch(new RegExp(`^${account.id}\\s+token\\s+Acme bot\\s+acme\\s+-\\s+active\\s+\\d{4}-`, "m"))
    expect(decoded(ConnectorAccountPage, await cli(["connectors", "accounts", "list", "--json"], env)).items.map((item) => item.id))
      .toEqual([account.id])

    // An instance of one repository, with settings given as JSON.
    const instance = decoded(
      ConnectorInstanceResponse,
      await cli([
        "connectors", "instances", "create",
        "--account", account.id, "--repository", "acme/agent-config", "--name", "Agent config",
        "--config", `{"autoImportNewPlugins": false}`, "--json"
      ], env)
    ).item
    expect(instance).toMatchObject({
      connectorAccountId: account.id,
      remoteId: "acme/agent-config",
      name: "Agent config",
      status: "active",
      instanceConfigJson: { autoImportNewPlugins: false },
      lastSyncStatus: null
    })
    const shown = await cli(["connectors", "instances", "get", instance.id], env)
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toMatch(/^repository +acme\/agent-config$/m)
    expect(shown.stdout).toMatch(/^config +\{"autoImportNewPlugins":false\}$/m)

    // A target: the branch, in the instance's repository unless told otherwise.
    const target = decoded(ConnectorTargetResponse, await cli(["connectors", "targets", "add", instance.id, "--branch", "main", "--json"], env)).item
    expect(target).toMatchObject({ connectorInstanceId: instance.id, remoteId: "acme/agent-config", externalTargetRef: "main" })
    expect(decoded(ConnectorTargetPage, await cli(["connectors", "targets", "list", instance.id, "--json"], env)).items.map((item) => item.id))
      .toEqual([target.id])

    // Two mappings: skills into the plugin (added by sync), agents on their own.
    const skills = decoded(
      ConnectorMappingResponse,
      await cli([
        "connectors", "mappings", "add", target.id,
        "--selector", "skills/**", "--object-type", "skill", "--plugin-id", pluginId, "--auto-add", "--json"
      ], env)
    ).item
    expect(skills).toMatchObject({
      connectorTargetId: target.id,
      connectorInstanceId: instance.id,
      mappingKind: "path",
      selector: "skills/**",
      objectType: "skill",
      pluginId,
      autoAddToPlugin: true
    })
    const agents = await cli(["connectors", "mappings", "add", target.id, "--selector", "agents/reviewer.md", "--object-type", "agent"], env)
    expect(agents.code, agents.stderr).toBe(0)
    expect(agents.stdout.trim()).toMatch(/^Added path mapping cmp_\w{26}: agents\/reviewer\.md → agent\.$/)
    const agentsId = agents.stdout.match(/(cmp_\w{26})/)![1]!

    // Listed as JSON (most recently updated first), filtered, and as a table.
    const [all, bySkill, byPlugin, byText, table] = await Promise.all([
      cli(["connectors", "mappings", "list", target.id, "--json"], env),
      cli(["connectors", "mappings", "list", target.id, "--object-type", "skill", "--json"], env),
      cli(["connectors", "mappings", "list", target.id, "--plugin-id", pluginId, "--mapping-kind", "path", "--json"], env),
      cli(["connectors", "mappings", "list", target.id, "--query", "REVIEWER", "--json"], env),
      cli(["connectors", "mappings", "list", target.id], env)
    ])
    expect(decoded(ConnectorMappingPage, all).items.map((item) => item.id)).toEqual([agentsId, skills.id])
    expect(decoded(ConnectorMappingPage, bySkill).items.map((item) => item.id)).toEqual([skills.id])
    expect(decoded(ConnectorMappingPage, byPlugin).items.map((item) => item.id)).toEqual([skills.id])
    expect(decoded(ConnectorMappingPage, byText).items.map((item) => item.id)).toEqual([agentsId])
    expect(table.code, table.stderr).toBe(0)
    const lines = table.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^ID\s+KIND\s+SELECTOR\s+TYPE\s+PLUGIN\s+AUTO-ADD\s+UPDATED$/)
    expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 6))).toEqual([
      [agentsId, "path", "agents/reviewer.md", "agent", "-", "no"],
      [skills.id, "path", "skills/**", "skill", pluginId, "yes"]
    ])

    // One per page: the hint repeats the target and the filters.
    const first = await cli(["connectors", "mappings", "list", target.id, "--mapping-kind", "path", "--limit", "1"], env)
    expect(first.code, first.stderr).toBe(0)
    const hint = first.stderr.match(/^More mappings: orgplane (connectors mappings list \S+ --mapping-kind path --cursor \S+) \(or --all\)$/m)
    expect(hint, first.stderr).not.toBeNull()
    const second = await cli([...hint![1]!.split(" "), "--json"], env)
    expect(decoded(ConnectorMappingPage, second)).toMatchObject({ items: [{ id: skills.id }], nextCursor: null })

    // Updates: detach the plugin; nothing to change is a usage error.
    const detached = decoded(ConnectorMappingResponse, await cli(["connectors", "mappings", "update", skills.id, "--no-plugin", "--auto-add", "off", "--json"], env)).item
    expect(detached).toMatchObject({ id: skills.id, pluginId: null, autoAddToPlugin: false })
    const nothing = await cli(["connectors", "mappings", "update", skills.id], env)
    expect(nothing.code).toBe(2)
    expect(nothing.stderr).toContain("give at least one of --selector, --object-type, --plugin-id, --no-plugin, --auto-add, --config")
    const renamed = decoded(ConnectorInstanceResponse, await cli(["connectors", "instances", "update", instance.id, "--name", "Agents", "--json"], env)).item
    expect(renamed).toMatchObject({ name: "Agents", remoteId: "acme/agent-config", instanceConfigJson: { autoImportNewPlugins: false } })
    const disabled = await cli(["connectors", "instances", "disable", instance.id], env)
    expect(disabled.stdout.trim()).toBe(`Instance Agents (${instance.id}) of acme/agent-config is now disabled.`)

    // Deleting one mapping, then removing the instance with the rest.
    const deleted = await cli(["connectors", "mappings", "delete", agentsId, "--json"], env)
    expect(decoded(Schema.Struct({ ok: Schema.Literal(true), deleted: Schema.String }), deleted)).toEqual({ ok: true, deleted: agentsId })
    const removed = decoded(RemoveConnectorInstanceResponse, await cli(["connectors", "instances", "remove", instance.id, "--json"], env)).item
    expect(removed).toMatchObject({ removedConnectorInstanceId: instance.id, deletedConnectorMappingCount: 1, deletedConfigObjectCount: 0 })
    const [gone, goneMappings] = await Promise.all([
      cli(["connectors", "instances", "get", instance.id], env),
      cli(["connectors", "mappings", "get", skills.id, "--json"], env)
    ])
    expect(gone.code).toBe(4)
    expect(gone.stderr).toContain("connector_instance_not_found")
    expect(goneMappings.code).toBe(4)
    expect(JSON.parse(goneMappings.stderr)).toMatchObject({ error: "connector_mapping_not_found" })

    // The account goes last; nothing is left under it.
    const disconnected = decoded(DisconnectConnectorAccountResponse, await cli(["connectors", "accounts", "disconnect", account.id, "--reason", "done", "--json"], env)).item
    expect(disconnected).toEqual({
      disconnectedAccountId: account.id,
      deletedConnectorInstanceCount: 0,
      deletedConfigObjectCount: 0,
      deletedConnectorMappingCount: 0,
      deletedPluginCount: 0,
      deletedMarketplaceCount: 0,
      reason: "done"
    })
  })

  it("shares an instance with a member, who can then read it until the grant is revoked", async () => {
    const owner = await Http.owner(server.url, "Connectors Sharing Org")
    const member = await Http.join(server.url, owner.token, "member", "Mallory")
    const { cli } = await fresh()
    const env = as(owner.token)
    const account = decoded(
      ConnectorAccountResponse,
      await cli(["connectors", "accounts", "connect", "--json"], { ...env, ORGPLANE_CODEHOST_TOKEN: GITHUB_TOKEN })
    ).item
    const instance = decoded(
      ConnectorInstanceResponse,
      await cli(["connectors", "instances", "create", "--account", account.id, "--repository", "acme/shared", "--name", "Shared", "--json"], env)
    ).item

    const hidden = await cli(["connectors", "instances", "get", instance.id, "--json"], as(member.token))
    expect(hidden.code).toBe(1)
    expect(JSON.parse(hidden.stderr)).toMatchObject({ reason: "insufficient_access" })

    const granted = decoded(
      ConnectorInstanceAccessGrantResponse,
      await cli(["connectors", "instances", "access", "grant", instance.id, "--role", "viewer", "--member", member.membership.id, "--json"], env)
    ).item
    expect(granted).toMatchObject({ role: "viewer", orgMembershipId: member.membership.id, teamId: null, orgWide: false })
    expect(decoded(ConnectorInstanceDetail, await cli(["connectors", "instances", "get", instance.id, "--json"], as(member.token))).item.id)
      .toBe(instance.id)
    const grants = decoded(ConnectorInstanceAccessGrantPage, await cli(["connectors", "instances", "access", "list", instance.id, "--json"], env))
    expect(grants.items.map((grant) => [grant.role, grant.orgMembershipId])).toEqual([
      ["viewer", member.membership.id],
      ["manager", owner.membership.id]
    ])

    const revoked = await cli(["connectors", "instances", "access", "revoke", instance.id, granted.id], env)
    expect(revoked.code, revoked.stderr).toBe(0)
    expect(revoked.stdout.trim()).toBe(`Revoked grant ${granted.id} of instance ${instance.id}; it stops applying at once.`)
    expect((await cli(["connectors", "instances", "get", instance.id], as(member.token))).code).toBe(1)

    // Who the grant is for must be said exactly once, before anything is sent.
    const noOne = await cli(["connectors", "instances", "access", "grant", instance.id, "--role", "viewer"], env)
    expect(noOne.code).toBe(2)
    expect(noOne.stderr).toContain("give exactly one of --member, --team or --org-wide")
  })

  it("refuses bad input with usage errors that name the flag, and never echoes a token", async () => {
    const owner = await Http.owner(server.url, "Connectors Usage Org")
    const { cli } = await fresh()
    const env = as(owner.token)
    const [noCredential, badInstallation, both, badConfig, badRepository, badBranch, badId] = await Promise.all([
      cli(["connectors", "accounts", "connect"], env),
      cli(["connectors", "accounts", "connect", "--installation-id", "abc"], env),
      cli(["connectors", "accounts", "connect", "--installation-id", "12", "--token-stdin"], env),
      cli(["connectors", "instances", "create", "--account", "cac_01h455vb4pex5vsknk084sn02q", "--repository", "a/b", "--name", "x", "--config", "[1]"], env),
      cli(["connectors", "instances", "create", "--account", "cac_01h455vb4pex5vsknk084sn02q", "--repository", "not a repo", "--name", "x"], env),
      cli(["connectors", "targets", "add", "cin_01h455vb4pex5vsknk084sn02q", "--branch", "a..b"], env),
      cli(["connectors", "mappings", "list", "cin_01h455vb4pex5vsknk084sn02q"], env)
    ])
    for (const result of [noCredential, badInstallation, both, badConfig, badRepository, badBranch, badId]) expect(result.code, result.stderr).toBe(2)
    expect(noCredential.stderr).toContain("--token-stdin or ORGPLANE_CODEHOST_TOKEN")
    expect(badInstallation.stderr).toContain("--installation-id")
    expect(both.stderr).toContain("not both")
    expect(badConfig.stderr).toContain("--config")
    expect(badRepository.stderr).toContain("--repository: must be a repository as owner/name")
    expect(badBranch.stderr).toContain("--branch: is not a valid git branch name")
    expect(badId.stderr).toContain("targetId")

    const tooLong = await cli(["connectors", "accounts", "connect"], { ...env, ORGPLANE_CODEHOST_TOKEN: `ghp_${"x".repeat(1000)}` })
    expect(tooLong.code).toBe(2)
    expect(tooLong.stderr).toContain("1 to 1000 characters")
    expect(tooLong.stderr).not.toContain("xxxxxxxx")
  })

  it("documents discovery and sync in the help", async () => {
    const { cli } = await fresh()
    const [group, discover, tree, apply, sync, syncs] = await Promise.all([
      cli(["connectors", "--help"]),
      cli(["connectors", "discover", "--help"]),
      cli(["connectors", "tree", "--help"]),
      cli(["connectors", "apply", "--help"]),
      cli(["connectors", "sync", "--help"]),
      cli(["connectors", "syncs", "--help"])
    ])
    for (const result of [group, discover, tree, apply, sync, syncs]) expect(result.code, result.stderr).toBe(0)
    for (const command of ["discover", "tree", "apply", "sync", "resync", "syncs"]) expect(group.stdout).toMatch(new RegExp(`^  ${command} `, "m"))
    expect(discover.stdout).toContain("orgplane connectors discover <instanceId> [flags]")
    expect(discover.stdout).toMatch(/--target <targetId>\s+The target \(branch\) to scan/)
    expect(tree.stdout).toMatch(/--prefix <path>/)
    expect(tree.stdout).toMatch(/--limit <n>\s+Page size, 1 to 500/)
    expect(apply.stdout).toMatch(/--select <key>\.\.\.\s+.*Repeatable\./)
    expect(apply.stdout).toMatch(/--all-supported\s+Every supported candidate/)
    expect(sync.stdout).toMatch(/--wait\s+Wait until the sync completed or failed \(exit 1 when it failed or skipped files\)/)
    expect(sync.stdout).toMatch(/--allow-partial\s+With --wait, exit 0 when the sync completed but skipped files/)
    expect(syncs.stdout).toMatch(/^  list /m)
    expect(syncs.stdout).toMatch(/^  get /m)
  })

  it("checks discovery and sync arguments before sending anything", async () => {
    const owner = await Http.owner(server.url, "Connectors Sync Usage Org")
    const { cli } = await fresh()
    const env = as(owner.token)
    const instance = "cin_01h455vb4pex5vsknk084sn02q"
    const [neither, both, emptyKey, bigPage, badTarget, badEvent, badStatus, badResync] = await Promise.all([
      cli(["connectors", "apply", instance], env),
      cli(["connectors", "apply", instance, "--select", "manifest:root", "--all-supported"], env),
      cli(["connectors", "apply", instance, "--select", "  "], env),
      cli(["connectors", "tree", instance, "--limit", "501"], env),
      cli(["connectors", "discover", instance, "--target", "cin_01h455vb4pex5vsknk084sn02q"], env),
      cli(["connectors", "syncs", "get", "ctg_01h455vb4pex5vsknk084sn02q", "--json"], env),
      cli(["connectors", "syncs", "list", instance, "--status", "done"], env),
      cli(["connectors", "resync", instance], env)
    ])
    for (const result of [neither, both, emptyKey, bigPage, badTarget, badEvent, badStatus, badResync]) {
      expect(result.code, result.stderr).toBe(2)
      expect(result.stdout).toBe("")
    }
    expect(neither.stderr).toContain("give --select <key> (repeatable) or --all-supported, not both")
    expect(both.stderr).toContain("not both")
    expect(emptyKey.stderr).toContain("--select")
    expect(bigPage.stderr).toContain("--limit")
    expect(badTarget.stderr).toContain("--target")
    expect(JSON.parse(badEvent.stderr)).toMatchObject({ error: "usage" })
    expect(badEvent.stderr).toContain("eventId")
    expect(badStatus.stderr).toContain("--status: must be one of queued, running, completed, failed, ignored")
    expect(badResync.stderr).toContain("targetId")
  })

  it("shows with the discovery the files each candidate will not import, and why", async () => {
    const { cli, env, instance } = await followed("Connectors Skipped Org", "acme/lossy-tools", {
      ".lsp.json": JSON.stringify({ go: { command: "gopls" } })
    })
    const shown = await cli(["connectors", "discover", instance.id], env)
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toMatch(/^manifest:root\s+deploy-tools\s+skill,command,lsp_server\s+yes\s+yes\s+0\s+1$/m)
    expect(shown.stdout).toMatch(/^skipped: manifest:root: \.lsp\.json: orgplane does not import LSP server configurations$/m)
  })

  // The tests below need the server's discovery and sync handlers (branches helper/discovery and helper/sync).
  it("discovers a repository, lists its tree, applies a candidate and follows its sync to the end", async () => {
    const { cli, env, instance, target } = await followed("Connectors Discovery Org", "acme/deploy-tools")

    // Discovery as JSON (the API's body), and as people read it.
    const discovered = decoded(DiscoveryResponse, await cli(["connectors", "discover", instance.id, "--target", target.id, "--json"], env)).item
    expect(discovered).toMatchObject({
      classification: "claude_single_plugin_repo",
      repositoryFullName: "acme/deploy-tools",
      connectorTarget: { id: target.id },
      treeSummary: { truncated: false }
    })
    expect(discovered.discoveredPlugins.map((candidate) => [candidate.key, candidate.supported])).toEqual([["manifest:root", true]])
    // On a terminal a spinner is drawn straight on stderr while discovery runs, then erased; elsewhere nothing is.
    const drawn: Array<string> = []
    const write = process.stderr.write.bind(process.stderr) as (chunk: unknown, ...rest: Array<unknown>) => boolean
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk: unknown, ...rest: Array<unknown>) => {
      if (typeof chunk === "string" && chunk.startsWith("\r\u001b[K")) return drawn.push(chunk) > 0
      return write(chunk, ...rest)
    })
    let shown: Result
    let onTerminal: Result
    try {
      shown = await cli(["connectors", "discover", instance.id], env)
      expect(drawn).toEqual([])
      onTerminal = await cli(["connectors", "discover", instance.id], env, { interactive: true })
    } finally {
      spy.mockRestore()
    }
    expect(drawn[0]).toMatch(/^\r\u001b\[K⠋ scanning .*… \d+\.\ds$/)
    expect(drawn.at(-1)).toBe("\r\u001b[K")
    expect(onTerminal.stdout).toBe(shown.stdout)
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toMatch(/^repository +acme\/deploy-tools$/m)
    expect(shown.stdout).toMatch(new RegExp(`^branch +main \\(${target.id}\\)$`, "m"))
    expect(shown.stdout).toMatch(new RegExp(`^revision +${discovered.sourceRevisionRef}$`, "m"))
    expect(shown.stdout).toMatch(/^classification +claude_single_plugin_repo$/m)
    expect(shown.stdout).toMatch(/^KEY\s+NAME\s+KINDS\s+SUPPORTED\s+DEFAULT\s+WARNINGS\s+SKIPPED$/m)
    expect(shown.stdout).toMatch(/^manifest:root\s+deploy-tools\s+skill,command\s+yes\s+yes\s+0\s+0$/m)
    expect(shown.stdout).not.toContain("skipped:")
    expect(shown.stderr.trim()).toBe(`Import: orgplane connectors apply ${instance.id} --select <key> (or --all-supported)`)

    // The tree, by prefix and page by page; the hint repeats the prefix.
    const skills = decoded(TreeEntryPage, await cli(["connectors", "tree", instance.id, "--prefix", "skills/", "--json"], env))
    expect(skills.items.map((entry) => [entry.kind, entry.path])).toEqual([["tree", "skills/deploy"], ["blob", "skills/deploy/SKILL.md"]])
    const page = await cli(["connectors", "tree", instance.id, "--limit", "2"], env)
    expect(page.code, page.stderr).toBe(0)
    expect(page.stdout.split("\n")[0]).toMatch(/^KIND\s+SIZE\s+SHA\s+PATH$/)
    const hint = page.stderr.match(/^More entries: orgplane (connectors tree \S+ --cursor \S+) \(or --all\)$/m)
    expect(hint, page.stderr).not.toBeNull()
    const next = decoded(TreeEntryPage, await cli([...hint![1]!.split(" "), "--limit", "2", "--json"], env))
    expect(next.items).toHaveLength(2)
    expect(page.stdout).not.toContain(next.items[0]!.path)
    const all = decoded(TreeEntryPage, await cli(["connectors", "tree", instance.id, "--all", "--json"], env))
    expect(all.items.map((entry) => entry.path)).toContain("commands/ship.md")
    expect(all.nextCursor).toBeNull()

    // Applying the supported candidates: a plugin, mappings, and a queued sync.
    const applied = decoded(ApplyDiscoveryResponse, await cli(["connectors", "apply", instance.id, "--all-supported", "--json"], env)).item
    expect(applied.plugins).toMatchObject([{ key: "manifest:root", created: true }])
    expect(applied.syncEvent).toMatchObject({ eventType: "apply", connectorTargetId: target.id })
    const again = await cli(["connectors", "apply", instance.id, "--select", "manifest:root"], env)
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toMatch(/^Imported 1 plugin at \w+: 0 created, 1 reused\.$/m)
    expect(again.stdout).toMatch(new RegExp(`^manifest:root\\s+${applied.plugins[0]!.pluginId}\\s+no\\s+\\d+$`, "m"))

    // Sync now, followed to the end: the head is already queued by apply, so it is that sync.
    const synced = decoded(SyncNowResponse, await cli(["connectors", "sync", instance.id, "--wait", "--json"], env))
    expect(synced.items).toHaveLength(1)
    expect(synced.items[0]).toMatchObject({ connectorTargetId: target.id, status: "completed" })
    expect(synced.items[0]!.summary).not.toBeNull()
    const history = decoded(ConnectorSyncEventPage, await cli(["connectors", "syncs", "list", instance.id, "--target", target.id, "--json"], env))
    expect(history.items.map((event) => event.id)).toContain(applied.syncEvent.id)
    const one = decoded(ConnectorSyncEventDetail, await cli(["connectors", "syncs", "get", applied.syncEvent.id, "--json"], env)).item
    expect(one).toMatchObject({ id: applied.syncEvent.id, status: "completed" })
    const table = await cli(["connectors", "syncs", "get", applied.syncEvent.id], env)
    expect(table.stdout).toMatch(/^status +completed$/m)
    expect(table.stdout).toMatch(/^summary +\d+ created, \d+ updated, \d+ deleted, \d+ unchanged, \d+ skipped$/m)

    // A resync is always a new sync.
    const resynced = decoded(ResyncResponse, await cli(["connectors", "resync", target.id, "--wait", "--json"], env)).item
    expect(resynced).toMatchObject({ eventType: "resync", status: "completed" })
    expect(resynced.id).not.toBe(applied.syncEvent.id)
    const queued = await cli(["connectors", "resync", target.id], env)
    expect(queued.code, queued.stderr).toBe(0)
    expect(queued.stdout.trim()).toMatch(new RegExp(`^Queued resync cse_\\w{26} of target ${target.id}\\.$`))
    expect(queued.stderr).toMatch(/Follow it with 'orgplane connectors syncs get cse_\w{26}', or pass --wait\./)
  })

  it("exits 1 when a sync it waits for skipped files, naming them, unless --allow-partial", async () => {
    const { cli, env, target } = await followed("Connectors Partial Sync Org", "acme/partial")
    // README.md is not an MCP definition: the sync cannot import it.
    const mapped = await cli(["connectors", "mappings", "add", target.id, "--selector", "README.md", "--object-type", "mcp", "--json"], env)
    expect(mapped.code, mapped.stderr).toBe(0)
    const partial = await cli(["connectors", "resync", target.id, "--wait", "--json"], env)
    expect(partial.code).toBe(1)
    const printed = Schema.decodeUnknownSync(ResyncResponse)(JSON.parse(partial.stdout)).item
    expect(printed).toMatchObject({ status: "completed", summary: { outcome: "partial", skipped: 1, skippedFiles: [{ path: "README.md" }] } })
    expect(JSON.parse(partial.stderr)).toMatchObject({ error: "sync_partial" })
    expect(JSON.parse(partial.stderr).message).toContain(`sync ${printed.id} of ${target.id} skipped 1 file`)

    const accepted = await cli(["connectors", "resync", target.id, "--wait", "--allow-partial"], env)
    expect(accepted.code, accepted.stderr).toBe(0)
    expect(accepted.stdout).toMatch(/^summary +partial: 0 created, 0 updated, 0 deleted, 0 unchanged, 1 skipped$/m)
    expect(accepted.stdout).toMatch(/^skipped +README\.md: cannot be read as json \(is not valid JSON/m)
  })

  it("sync --wait says how the plugins followed the repository, and exits 1 on a sync that kept a plugin it could not read", async () => {
    const { cli, env, instance, repo } = await followed("Connectors Follow Org", "acme/follow")
    const applied = decoded(ApplyDiscoveryResponse, await cli(["connectors", "apply", instance.id, "--all-supported", "--json"], env)).item
    const pluginId = applied.plugins[0]!.pluginId
    expect((await cli(["connectors", "sync", instance.id, "--wait"], env)).code).toBe(0)

    await repo.commitFiles({ ".claude-plugin/plugin.json": JSON.stringify({ name: "deploy-kit", description: "Deploys things.", version: "2.0.0" }) }, "rename")
    const renamed = await cli(["connectors", "sync", instance.id, "--wait"], env)
    expect(renamed.code, renamed.stderr).toBe(0)
    expect(renamed.stdout).toContain(`plugin: deploy-tools renamed deploy-kit (${pluginId})`)
    const shown = await cli(["plugins", "get", pluginId, "--json"], env)
    expect(json(shown).item).toMatchObject({ name: "deploy-kit", sourceMetadata: { version: "2.0.0" } })

    await repo.commitFiles({ ".claude-plugin/plugin.json": "{ \"name\": \"deploy-kit\", }" }, "break it")
    const kept = await cli(["connectors", "sync", instance.id, "--wait"], env)
    expect(kept.code).toBe(1)
    expect(kept.stdout).toMatch(/^warning: Plugin "deploy-kit" is kept as the last good sync left it: `\.claude-plugin\/plugin\.json` is not valid JSON \(line 1, column 25: /m)
    expect(kept.stderr).toMatch(/completed with 1 warning \(see 'orgplane connectors syncs get <eventId>'; --allow-partial accepts a partial sync\)/)
  })

  it("exits 1 when a sync it waits for fails, after printing it", async () => {
    const { cli, env, target } = await followed("Connectors Failing Sync Org", "acme/vanishing")

    // The repository goes away: a resync is still queued (nothing is read then), and fails when it runs.
    github.removeRepository("acme/vanishing")
    const failed = await cli(["connectors", "resync", target.id, "--wait", "--json"], env)
    expect(failed.code).toBe(1)
    const printed = Schema.decodeUnknownSync(ResyncResponse)(JSON.parse(failed.stdout)).item
    expect(printed).toMatchObject({ connectorTargetId: target.id, status: "failed" })
    expect(printed.lastError).not.toBeNull()
    expect(JSON.parse(failed.stderr)).toMatchObject({ error: "sync_failed" })
    expect(JSON.parse(failed.stderr).message).toContain(`sync ${printed.id} of ${target.id} failed`)
  })
})

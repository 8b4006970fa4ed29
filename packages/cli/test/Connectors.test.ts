/**
 * `orgplane connectors accounts | instances | targets | mappings`: the CLI in-process (see Harness.ts) against a real
 * server; `--json` output decoded with the response schemas, tables read as people would.
 */
import {
  ConnectorAccountPage,
  ConnectorAccountResponse,
  ConnectorInstanceAccessGrantPage,
  ConnectorInstanceAccessGrantResponse,
  ConnectorInstanceDetail,
  ConnectorInstanceResponse,
  ConnectorMappingPage,
  ConnectorMappingResponse,
  ConnectorTargetPage,
  ConnectorTargetResponse,
  DisconnectConnectorAccountResponse,
  RemoveConnectorInstanceResponse
} from "@orgplane/schema"
import { Http, TestServer } from "@orgplane/testkit"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, type Result } from "./Harness.js"

let server: TestServer.RunningServer

beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

const as = (token: string) => ({ ORGPLANE_URL: server.url, ORGPLANE_TOKEN: token })

const decoded = <A, I>(schema: Schema.Schema<A, I>, result: Result): A => {
  expect(result.code, result.stderr).toBe(0)
  return Schema.decodeUnknownSync(schema)(json(result))
}

const GITHUB_TOKEN = "ghp_cli_test_secret_0123456789"

describe.concurrent("orgplane connectors", { timeout: 120_000 }, () => {
  it("connects a token account, creates an instance with a target and two mappings, lists them, and removes the instance", async () => {
    const owner = await Http.owner(server.url, "Connectors Org")
    const plugin = await Http.request(server.url, "POST", "/v1/plugins", { token: owner.token, body: { name: "Synced" } })
    expect(plugin.status).toBe(201)
    const pluginId: string = plugin.body.item.id
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
})

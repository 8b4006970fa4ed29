/**
 * The connectors area's services (Connectors, DiscoveryService, Materializer with ComponentFileStore and
 * ClaudeContent) on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL), against FakeGitHub
 * serving real git repositories: what http/Connectors.test.ts, ConnectorDiscovery.test.ts, ConnectorFidelity.test.ts
 * and ConnectorAutoImport.test.ts check through HTTP that lives in the services. Accounts, instances, targets and mappings
 * by their rules (roles, grants, uniqueness), a repository's discovery (candidates, the per-commit cache, the tree's
 * pages, refusals), apply (plugins, mappings, a marketplace, the queued sync), the sync's plan and batches
 * materializing the plugins' components into the catalog (and again: nothing written twice), auto-import of a
 * plugin committed later, and another organization's resources not found.
 *
 * The file's `Sync` is test/support/ConnectorSync.ts's stand-in (events recorded by the real repository, their
 * starts noted) and the sync's steps are run by `syncOnce`, so that each batch is run, and run again, when a test
 * says; one test runs the real thing, SyncWorkflow's `Sync` and workflow on the durable engine (one runner).
 */
import { expect, layer } from "@effect/vitest"
import { type ConfigObjectId, type ConnectorInstance, type ConnectorSyncEventId, type ConnectorTarget, type MemberContext, type Organization, PluginId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { Access, PluginKind } from "../src/access/Access.js"
import { ComponentFilesRepository } from "../src/catalog/ComponentFilesRepository.js"
import { Connectors } from "../src/connectors/Connectors.js"
import { DiscoveryService } from "../src/connectors/DiscoveryService.js"
import { SyncEventsRepository } from "../src/connectors/SyncEventsRepository.js"
import { PluginsRepository } from "../src/catalog/PluginsRepository.js"
import { makeId } from "../src/platform/Ids.js"
import { Sync } from "../src/connectors/Sync.js"
import * as SyncWorkflow from "../src/connectors/SyncWorkflow.js"
import * as Durable from "../src/platform/Durable.js"
import { testTuning } from "./durable/runner.js"
import * as ConnectorSync from "./support/ConnectorSync.js"
import { failure, Fake, serve, TestLayer } from "./support/Connectors.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const unique = () => Math.random().toString(36).slice(2, 10)
const json = (value: unknown) => JSON.stringify(value)

/** An organization with an owner, an admin and a member, their rows written. */
const staffed = Effect.fn("ConnectorsServices.staffed")(function*() {
  const organization = Members.organization("team")
  const owner = Members.member(organization, "owner")
  const admin = Members.member(organization, "admin")
  const member = Members.member(organization, "member")
  yield* Members.seed(owner, admin, member)
  return { organization, owner, admin, member }
})

/** A plugin `caller` made by hand, its row and grant, without the catalog's Plugins service. */
const madePlugin = Effect.fn("ConnectorsServices.madePlugin")(function*(caller: MemberContext, name = `P ${unique()}`) {
  const plugins = yield* PluginsRepository
  const access = yield* Access
  const id = yield* makeId("plg")
  const at = new Date()
  yield* plugins.insert({ id, organizationId: caller.organization.id, name, description: "", createdByMembershipId: caller.membership.id, at })
  yield* access.grantCreator(caller, PluginKind, id, at)
  return id
})

/** Another organization's owner. */
const outsider = Effect.fn("ConnectorsServices.outsider")(function*() {
  const owner = Members.member(Members.organization("team"), "owner")
  yield* Members.seed(owner)
  return owner
})

/**
 * A repository of `files` on FakeGitHub, read by a fresh token, and an instance of a new token account of `caller`
 * following `branch` of it.
 */
const connect = Effect.fn("ConnectorsServices.connect")(function*(
  caller: MemberContext,
  files: Record<string, string>,
  options: { readonly branch?: string; readonly config?: Record<string, unknown> } = {}
) {
  const connectors = yield* Connectors
  const { gitHub } = yield* Fake
  const fullName = `acme/repo-${unique()}`
  const repo = yield* serve(fullName, files)
  const githubToken = `ghp_${unique()}`
  gitHub.addToken(githubToken, [fullName])
  const { item: account } = yield* connectors.createAccount(caller, { kind: "token", token: githubToken, accountLogin: "acme" })
  const { item: instance } = yield* connectors.createInstance(caller, {
    connectorAccountId: account.id,
    name: `Repo ${unique()}`,
    remoteId: fullName,
    ...(options.config === undefined ? {} : { config: options.config })
  })
  const { item: target } = yield* connectors.createTarget(caller, instance.id, { externalTargetRef: options.branch ?? "main" })
  return { repo, fullName, account, instance, target }
})

const singlePlugin = {
  ".claude-plugin/plugin.json": json({ name: "deploy-tools", description: "Deploys things." }),
  "skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploys.\n---\nRun `scripts/run.sh`.\n",
  "skills/deploy/scripts/run.sh": "#!/bin/sh\necho deploy\n",
  "commands/ship.md": "---\ndescription: Ships it\n---\n# Context\n",
  "agents/reviewer.md": "---\nname: reviewer\ndescription: Use this agent when reviewing. Context: a PR. user: review\n---\nYou review.\n",
  "README.md": "# readme"
}

const marketplaceRepo = {
  ".claude-plugin/marketplace.json": json({
    name: "acme-tools",
    owner: { name: "Acme" },
    metadata: { description: "Acme's plugins.", version: "2.0.0" },
    plugins: [
      { name: "alpha", source: "./plugins/alpha", description: "Alpha." },
      { name: "beta", source: "./plugins/beta" },
      { name: "remote", source: { source: "url", url: "https://git.example.test/remote.git" } }
    ]
  }),
  "plugins/alpha/.claude-plugin/plugin.json": json({ name: "alpha" }),
  "plugins/alpha/skills/x/SKILL.md": "---\nname: x\ndescription: X.\n---\n",
  "plugins/beta/commands/b.md": "# b"
}

/** Requests FakeGitHub answered for one repository, by kind. */
const requestsOf = (fullName: string) =>
  Fake.useSync(({ gitHub }) => {
    const of = (part: string) => gitHub.requests.filter((request) => request.path.startsWith(`/repos/${fullName}/${part}`)).length
    return { heads: of("commits/"), trees: of("git/trees/"), blobs: of("git/blobs/") }
  })

/** The configuration objects of a plugin, as the catalog lists them: type, title, status. */
const objectsOf = Effect.fn("ConnectorsServices.objectsOf")(function*(organization: Organization, pluginId: string) {
  const sql = yield* SqlClient.SqlClient
  return yield* sql<{ readonly kind: string; readonly title: string; readonly status: string; readonly id: ConfigObjectId }>`
    SELECT c.object_type AS kind, c.title, c.status, c.id FROM plugin_config_objects p
      JOIN config_objects c ON c.organization_id = p.organization_id AND c.id = p.config_object_id
      WHERE p.organization_id = ${organization.id} AND p.plugin_id = ${pluginId} ORDER BY c.object_type, c.title COLLATE "C"`
})

const versionCount = Effect.fn("ConnectorsServices.versionCount")(function*(organization: Organization) {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM config_object_versions WHERE organization_id = ${organization.id}`
  return row?.n ?? 0
})

/** Applies `keys` as `caller`, then runs the sync the apply queued. */
const applyAndSync = Effect.fn("ConnectorsServices.applyAndSync")(function*(
  caller: MemberContext,
  instance: ConnectorInstance,
  target: ConnectorTarget,
  keys: ReadonlyArray<string>
) {
  const discovery = yield* DiscoveryService
  const { item } = yield* discovery.apply(caller, instance.id, { keys })
  const summary = yield* ConnectorSync.syncOnce({
    organizationId: caller.organization.id,
    instance,
    target,
    revision: item.sourceRevisionRef,
    eventId: item.syncEvent.id
  })
  return { applied: item, summary }
})

layer(TestLayer, { timeout: 600_000, excludeTestServices: true })(`connector services on ${TestDatabase.kind}`, (it) => {
  it.effect("accounts: connected by owners and admins, the token stored encrypted and never shown; an installation once per organization", () =>
    Effect.gen(function*() {
      const connectors = yield* Connectors
      const sql = yield* SqlClient.SqlClient
      const { admin, member, organization, owner } = yield* staffed()
      expect(yield* failure(connectors.createAccount(member, { kind: "token", token: "ghp_x" }))).toMatchObject({
        _tag: "Forbidden",
        reason: "insufficient_role"
      })
      const { item: account } = yield* connectors.createAccount(admin, { kind: "token", token: "ghp_secret123", displayName: "CI bot" })
      expect(account).toMatchObject({
        organizationId: organization.id,
        connectorType: "codehost",
        kind: "token",
        remoteId: null,
        displayName: "CI bot",
        status: "active",
        createdByOrgMembershipId: admin.membership.id
      })
      expect(account.id).toMatch(/^cac_/)
      expect(JSON.stringify(account)).not.toContain("ghp_secret123")
      const [stored] = yield* sql<{ readonly secret: string }>`
        SELECT token_ciphertext AS secret FROM connector_accounts WHERE organization_id = ${organization.id} AND id = ${account.id}`
      expect(stored?.secret).toBeTypeOf("string")
      expect(stored?.secret).not.toContain("ghp_secret123")

      // Any member reads them; another organization's owner finds nothing.
      expect((yield* connectors.listAccounts(member, {})).items).toEqual([account])
      expect(yield* connectors.getAccount(member, account.id)).toEqual({ item: account })
      const other = yield* outsider()
      expect(yield* failure(connectors.getAccount(other, account.id))).toEqual({
        _tag: "NotFound",
        error: "connector_account_not_found",
        message: "Connector account not found."
      })
      expect((yield* connectors.listAccounts(other, {})).items).toEqual([])
      expect(yield* failure(connectors.disconnectAccount(other, account.id, undefined))).toMatchObject({ error: "connector_account_not_found" })

      const installation = { kind: "app_installation", installationId: 4242, accountLogin: "acme" } as const
      const { item: first } = yield* connectors.createAccount(owner, installation)
      expect(first).toMatchObject({ kind: "app_installation", remoteId: "4242", externalAccountRef: "acme", displayName: "acme" })
      expect(yield* failure(connectors.createAccount(owner, installation))).toMatchObject({ _tag: "Conflict", error: "connector_account_exists" })
      // Another organization may connect the same installation.
      expect((yield* connectors.createAccount(other, installation)).item.remoteId).toBe("4242")
    }))

  it.effect("instances: created by owners and admins, who manage them; members need a grant; another organization's is not found", () =>
    Effect.gen(function*() {
      const connectors = yield* Connectors
      const { admin, member, organization } = yield* staffed()
      const { item: account } = yield* connectors.createAccount(admin, { kind: "token", token: "ghp_secret123" })
      const body = { connectorAccountId: account.id, name: "Plugins", remoteId: "acme/plugins" }
      expect(yield* failure(connectors.createInstance(member, body))).toMatchObject({ _tag: "Forbidden", reason: "insufficient_role" })
      const { item } = yield* connectors.createInstance(admin, { ...body, config: { autoImportNewPlugins: false, some_key: 1 } })
      expect(item).toMatchObject({
        organizationId: organization.id,
        connectorAccountId: account.id,
        connectorType: "codehost",
        remoteId: "acme/plugins",
        name: "Plugins",
        status: "active",
        instanceConfigJson: { autoImportNewPlugins: false, some_key: 1 },
        lastSyncedAt: null,
        lastSyncCursor: null,
        createdByOrgMembershipId: admin.membership.id
      })
      expect(item.id).toMatch(/^cin_/)
      const grants = (yield* connectors.listGrants(admin, item.id, {})).items
      expect(grants).toEqual([expect.objectContaining({ orgMembershipId: admin.membership.id, role: "manager" })])

      // Names are unique, case-insensitively: 409.
      expect(yield* failure(connectors.createInstance(admin, { ...body, name: "PLUGINS", remoteId: "acme/other" }))).toMatchObject({
        _tag: "Conflict",
        error: "connector_instance_exists"
      })

      expect(yield* failure(connectors.getInstance(member, item.id))).toMatchObject({ _tag: "Forbidden", reason: "insufficient_access" })
      expect((yield* connectors.listInstances(member, {})).items).toEqual([])
      yield* connectors.grant(admin, item.id, { orgMembershipId: member.membership.id, role: "viewer" })
      expect((yield* connectors.listInstances(member, {})).items).toEqual([item])
      expect(yield* failure(connectors.updateInstance(member, item.id, { name: "Mine" }))).toEqual({
        _tag: "Forbidden",
        reason: "insufficient_access",
        message: "Missing editor access for connector instance."
      })

      const { item: renamed } = yield* connectors.updateInstance(admin, item.id, { name: "Renamed", config: { a: 1 } })
      expect(renamed).toMatchObject({ name: "Renamed", instanceConfigJson: { a: 1 }, remoteId: "acme/plugins" })
      expect((yield* connectors.disable(admin, item.id)).item.status).toBe("disabled")
      expect((yield* connectors.enable(admin, item.id)).item.status).toBe("active")

      const other = yield* outsider()
      const notFound = { _tag: "NotFound", error: "connector_instance_not_found", message: "Connector instance not found." }
      expect(yield* failure(connectors.getInstance(other, item.id))).toEqual(notFound)
      expect(yield* failure(connectors.updateInstance(other, item.id, { name: "Taken" }))).toEqual(notFound)
      expect(yield* failure(connectors.removeInstance(other, item.id))).toEqual(notFound)
      expect(yield* failure(connectors.createInstance(other, { ...body, name: "Theirs" }))).toMatchObject({ error: "connector_account_not_found" })
    }))

  it.effect("targets follow one branch each; mappings are unique per target, selector and type; a plugin needs editor access", () =>
    Effect.gen(function*() {
      const connectors = yield* Connectors
      const plugins = yield* PluginsRepository
      const { admin, member, organization, owner } = yield* staffed()
      const { item: account } = yield* connectors.createAccount(admin, { kind: "token", token: "ghp_secret123" })
      const { item: instance } = yield* connectors.createInstance(admin, { connectorAccountId: account.id, name: "Plugins", remoteId: "acme/plugins" })
      const { item: target } = yield* connectors.createTarget(admin, instance.id, { externalTargetRef: "main" })
      expect(target).toMatchObject({
        connectorInstanceId: instance.id,
        connectorType: "codehost",
        remoteId: "acme/plugins",
        targetKind: "repository_branch",
        externalTargetRef: "main",
        targetConfigJson: {}
      })
      expect(yield* failure(connectors.createTarget(admin, instance.id, { externalTargetRef: "main" }))).toMatchObject({ error: "connector_target_exists" })
      const { item: dev } = yield* connectors.createTarget(admin, instance.id, { externalTargetRef: "dev" })
      expect((yield* connectors.listTargets(admin, instance.id, {})).items.map((item) => item.id)).toEqual([target.id, dev.id])
      expect(yield* failure(connectors.updateTarget(admin, dev.id, { externalTargetRef: "main" }))).toMatchObject({ error: "connector_target_exists" })
      expect((yield* connectors.updateTarget(admin, dev.id, { externalTargetRef: "release" })).item.externalTargetRef).toBe("release")

      const { item: mapping } = yield* connectors.createMapping(admin, target.id, {
        mappingKind: "path",
        selector: "skills/**",
        objectType: "skill",
        autoAddToPlugin: true,
        config: { note: "x" }
      })
      expect(mapping).toMatchObject({
        connectorInstanceId: instance.id,
        connectorTargetId: target.id,
        mappingKind: "path",
        selector: "skills/**",
        objectType: "skill",
        pluginId: null,
        autoAddToPlugin: true,
        mappingConfigJson: { note: "x" }
      })
      expect(yield* failure(connectors.createMapping(admin, target.id, { mappingKind: "api", selector: "skills/**", objectType: "skill" }))).toMatchObject({
        _tag: "Conflict",
        error: "connector_mapping_exists"
      })
      const { item: second } = yield* connectors.createMapping(admin, target.id, { mappingKind: "path", selector: "skills/**", objectType: "agent" })
      expect(second.autoAddToPlugin).toBe(false)
      expect(yield* failure(connectors.updateMapping(admin, second.id, { objectType: "skill" }))).toMatchObject({ error: "connector_mapping_exists" })

      // An editor of the instance with no access to the plugin.
      const pluginId = yield* madePlugin(owner)
      yield* connectors.grant(admin, instance.id, { orgMembershipId: member.membership.id, role: "editor" })
      expect(yield* failure(connectors.createMapping(member, target.id, { mappingKind: "path", selector: "agents/**", objectType: "agent", pluginId }))).toMatchObject({
        _tag: "Forbidden",
        message: "Missing editor access for plugin."
      })
      const { item: updated } = yield* connectors.updateMapping(member, second.id, { selector: "agents/**", config: null })
      expect(updated).toMatchObject({ selector: "agents/**", mappingConfigJson: null, mappingKind: "path" })
      yield* connectors.deleteMapping(member, second.id)
      expect(yield* failure(connectors.getMapping(member, second.id))).toMatchObject({ error: "connector_mapping_not_found" })
      // An admin manages every plugin; a plugin the organization does not have is not found.
      const { item: fed } = yield* connectors.createMapping(admin, target.id, { mappingKind: "path", selector: "commands/**", objectType: "command", pluginId })
      expect(fed.pluginId).toBe(pluginId)
      expect(Option.isSome(yield* plugins.find(organization.id, pluginId))).toBe(true)
      const unknownPlugin = Schema.decodeUnknownSync(PluginId)(`plg_${"0".repeat(26)}`)
      expect(yield* failure(connectors.createMapping(admin, target.id, { mappingKind: "path", selector: "x", objectType: "tool", pluginId: unknownPlugin }))).toMatchObject({
        error: "plugin_not_found"
      })

      // Another organization's targets and mappings are not found.
      const other = yield* outsider()
      expect(yield* failure(connectors.getTarget(other, target.id))).toEqual({
        _tag: "NotFound",
        error: "connector_target_not_found",
        message: "Connector target not found."
      })
      expect(yield* failure(connectors.listMappings(other, target.id, {}))).toMatchObject({ error: "connector_target_not_found" })
      expect(yield* failure(connectors.getMapping(other, mapping.id))).toMatchObject({ error: "connector_mapping_not_found" })
      expect(yield* failure(connectors.deleteMapping(other, mapping.id))).toMatchObject({ error: "connector_mapping_not_found" })
    }))

  it.effect("discovery finds the plugins of a repository, with the instance and target as they are now, kept per commit", () =>
    Effect.gen(function*() {
      const connectors = yield* Connectors
      const discovery = yield* DiscoveryService
      const { owner } = yield* staffed()
      const { fullName, instance, repo, target } = yield* connect(owner, singlePlugin)
      const head = yield* Effect.promise(() => repo.head())
      const { item } = yield* discovery.discover(owner, instance.id, undefined)
      expect(item).toMatchObject({
        autoImportNewPlugins: true,
        classification: "claude_single_plugin_repo",
        marketplace: null,
        repositoryFullName: fullName,
        sourceRevisionRef: head,
        treeSummary: { strategy: "git-tree-recursive", truncated: false, walkedSubtrees: 0 },
        warnings: []
      })
      expect(item.connectorInstance.id).toBe(instance.id)
      expect(item.connectorTarget.id).toBe(target.id)
      expect(item.steps.map((step) => step.id)).toEqual([
        "read_repository_structure",
        "check_marketplace_manifest",
        "check_plugin_manifests",
        "prepare_discovered_plugins"
      ])
      expect(item.discoveredPlugins).toHaveLength(1)
      expect(item.discoveredPlugins[0]).toMatchObject({
        key: "manifest:root",
        displayName: "deploy-tools",
        supported: true,
        componentKinds: ["skill", "command", "agent"]
      })

      // Asked again: only the head is read; the instance is read fresh, not from the cache.
      const afterFirst = yield* requestsOf(fullName)
      expect(afterFirst.trees).toBe(1)
      yield* connectors.updateInstance(owner, instance.id, { name: "Renamed", config: { autoImportNewPlugins: false } })
      const again = (yield* discovery.discover(owner, instance.id, undefined)).item
      expect(again.connectorInstance.name).toBe("Renamed")
      expect(again.autoImportNewPlugins).toBe(false)
      expect(again.discoveredPlugins).toEqual(item.discoveredPlugins)
      const afterSecond = yield* requestsOf(fullName)
      expect(afterSecond).toEqual({ ...afterFirst, heads: afterFirst.heads + 1 })
      // The tree's pages read the same cache, in byte order under a prefix.
      const page = yield* discovery.tree(owner, instance.id, { prefix: "skills/" })
      expect(page.items.map((entry) => entry.path)).toEqual(["skills/deploy", "skills/deploy/SKILL.md", "skills/deploy/scripts", "skills/deploy/scripts/run.sh"])
      const first = yield* discovery.tree(owner, instance.id, { prefix: "skills/", limit: 1 })
      expect(first.items.map((entry) => entry.path)).toEqual(["skills/deploy"])
      expect(first.nextCursor).not.toBeNull()
      expect((yield* requestsOf(fullName)).trees).toBe(afterFirst.trees)

      // A new commit is scanned again.
      const moved = yield* Effect.promise(() => repo.commitFiles({ "plugins/two/.claude-plugin/plugin.json": json({ name: "two" }) }, "second"))
      const third = (yield* discovery.discover(owner, instance.id, undefined)).item
      expect(third.sourceRevisionRef).toBe(moved)
      expect((yield* requestsOf(fullName)).trees).toBe(afterFirst.trees + 1)
    }))

  it.effect("discovery refuses: no target 409, another instance's target 404, another organization's instance 404, a missing branch 502", () =>
    Effect.gen(function*() {
      const connectors = yield* Connectors
      const discovery = yield* DiscoveryService
      const { member, owner } = yield* staffed()
      const { account, instance } = yield* connect(owner, marketplaceRepo)
      const { item: found } = yield* discovery.discover(owner, instance.id, undefined)
      expect(found.classification).toBe("claude_marketplace_repo")
      expect(found.marketplace).toMatchObject({ name: "acme-tools", description: "Acme's plugins.", owner: "Acme", entryCount: 3 })
      const byKey = new Map(found.discoveredPlugins.map((plugin) => [plugin.key, plugin]))
      expect(byKey.get("marketplace:plugins/alpha")).toMatchObject({ supported: true, sourceKind: "marketplace_entry" })
      expect(byKey.get("marketplace:remote")).toMatchObject({ supported: false, selectedByDefault: false })

      const { item: bare } = yield* connectors.createInstance(owner, { connectorAccountId: account.id, name: `Bare ${unique()}`, remoteId: "acme/none" })
      expect(yield* failure(discovery.discover(owner, bare.id, undefined))).toMatchObject({ _tag: "Conflict", error: "connector_target_required" })
      const other = yield* connect(owner, singlePlugin)
      expect(yield* failure(discovery.discover(owner, instance.id, other.target.id))).toMatchObject({ _tag: "NotFound", error: "connector_target_not_found" })

      // Viewer access to discover.
      expect(yield* failure(discovery.discover(member, instance.id, undefined))).toMatchObject({ _tag: "Forbidden", reason: "insufficient_access" })
      yield* connectors.grant(owner, instance.id, { orgMembershipId: member.membership.id, role: "viewer" })
      expect((yield* discovery.discover(member, instance.id, undefined)).item.sourceRevisionRef).toBe(found.sourceRevisionRef)
      expect(yield* failure(discovery.apply(member, instance.id, { keys: ["marketplace:plugins/alpha"] }))).toMatchObject({ reason: "insufficient_access" })

      const stranger = yield* outsider()
      const notFound = { _tag: "NotFound", error: "connector_instance_not_found", message: "Connector instance not found." }
      expect(yield* failure(discovery.discover(stranger, instance.id, undefined))).toEqual(notFound)
      expect(yield* failure(discovery.tree(stranger, instance.id, {}))).toEqual(notFound)
      expect(yield* failure(discovery.apply(stranger, instance.id, { keys: ["marketplace:plugins/alpha"] }))).toEqual(notFound)

      const missing = yield* connect(owner, singlePlugin, { branch: "no-such-branch" })
      expect(yield* failure(discovery.discover(owner, missing.instance.id, undefined))).toMatchObject({ _tag: "CodeHostApiError", error: "codehost_api_error" })
    }))

  it.effect("apply makes a plugin and its mappings and queues a sync, whose batches materialize the components into the plugin, never twice", () =>
    Effect.gen(function*() {
      const connectors = yield* Connectors
      const events = yield* SyncEventsRepository
      const files = yield* ComponentFilesRepository
      const sql = yield* SqlClient.SqlClient
      const { organization, owner } = yield* staffed()
      const { instance, repo, target } = yield* connect(owner, singlePlugin)
      const head = yield* Effect.promise(() => repo.head())

      const { applied, summary } = yield* applyAndSync(owner, instance, target, ["manifest:root"])
      expect(applied.sourceRevisionRef).toBe(head)
      expect(applied.marketplaceId).toBeNull()
      expect(applied.plugins).toHaveLength(1)
      expect(applied.plugins[0]).toMatchObject({ key: "manifest:root", created: true })
      expect(applied.syncEvent).toMatchObject({ connectorInstanceId: instance.id, connectorTargetId: target.id, eventType: "apply", sourceRevisionRef: head })
      // Queued after the commit: started once.
      expect(ConnectorSync.started.filter((ref) => ref.id === applied.syncEvent.id)).toEqual([{ organizationId: organization.id, id: applied.syncEvent.id }])
      const pluginId = applied.plugins[0]!.pluginId
      const mappings = yield* sql<{ readonly kind: string; readonly selector: string; readonly plugin: string; readonly auto: boolean }>`
        SELECT object_type AS kind, selector, plugin_id AS plugin, auto_add_to_plugin AS auto FROM connector_mappings
          WHERE organization_id = ${organization.id} AND connector_target_id = ${target.id} ORDER BY selector`
      expect(mappings).toEqual([
        { kind: "agent", selector: "agents/**", plugin: pluginId, auto: true },
        { kind: "command", selector: "commands/**", plugin: pluginId, auto: true },
        { kind: "skill", selector: "skills/**", plugin: pluginId, auto: true }
      ])

      // The sync: every component a version of its own, in the plugin, named as Claude Code names it.
      expect(summary).toMatchObject({ created: 3, updated: 0, deleted: 0, unchanged: 0, skipped: 0, skippedFiles: [] })
      const objects = yield* objectsOf(organization, pluginId)
      expect(objects.map(({ kind, status, title }) => ({ kind, status, title }))).toEqual([
        { kind: "agent", status: "active", title: "reviewer" },
        { kind: "command", status: "active", title: "ship" },
        { kind: "skill", status: "active", title: "deploy" }
      ])
      // The skill carries its script: stored by content, listed with the version.
      const skill = objects.find((object) => object.kind === "skill")!
      const list = yield* files.latestListOf(organization.id, skill.id)
      expect(list.map((row) => [row.path, row.kind, row.omitted])).toEqual([
        ["skills/deploy/SKILL.md", "entry", null],
        ["skills/deploy/scripts/run.sh", "file", null]
      ])

      // The same batch run again (an activity re-run after a crash) writes nothing: counted, not written.
      const versions = yield* versionCount(organization)
      const rerun = yield* ConnectorSync.syncOnce({ organizationId: organization.id, instance, target, revision: head, eventId: applied.syncEvent.id, full: true })
      expect(rerun).toMatchObject({ created: 3, updated: 0 })
      expect(yield* versionCount(organization)).toBe(versions)

      // Applied again: the same plugin, nothing new; its sync finds every file unchanged.
      const again = yield* applyAndSync(owner, instance, target, ["manifest:root", "manifest:root"])
      expect(again.applied.plugins).toEqual([{ ...applied.plugins[0], created: false }])
      expect(again.applied.syncEvent.id).not.toBe(applied.syncEvent.id)
      expect(again.summary).toMatchObject({ created: 0, updated: 0, deleted: 0, unchanged: 3 })
      expect(yield* versionCount(organization)).toBe(versions)

      // A change, a deletion, a new file and one that is not text.
      const moved = yield* Effect.promise(() =>
        repo.commitFiles({
          "commands/ship.md": "---\ndescription: Ships it now\n---\n# Context\n",
          "agents/reviewer.md": null,
          "skills/tidy/SKILL.md": "---\nname: Tidy Things\n---\nTidies.\n",
          "commands/binary.md": new Uint8Array([0xff, 0xfe, 0x00, 0x41])
        }, "changes"))
      const { event } = yield* events.record({
        organizationId: organization.id,
        connectorInstanceId: instance.id,
        connectorTargetId: target.id,
        eventType: "sync_now",
        revision: moved
      })
      const changed = yield* ConnectorSync.syncOnce({ organizationId: organization.id, instance, target, revision: moved, eventId: event.id })
      expect(changed).toMatchObject({
        created: 1,
        updated: 1,
        deleted: 1,
        unchanged: 1,
        skipped: 1,
        skippedFiles: [{ path: "commands/binary.md", reason: "not UTF-8 text" }]
      })
      const after = yield* objectsOf(organization, pluginId)
      expect(after.map(({ kind, status, title }) => ({ kind, status, title }))).toEqual([
        { kind: "agent", status: "deleted", title: "reviewer" },
        { kind: "command", status: "active", title: "ship" },
        { kind: "skill", status: "active", title: "Tidy Things" },
        { kind: "skill", status: "active", title: "deploy" }
      ])

      // Removing the instance deletes what apply made and the sync wrote.
      const { item: removed } = yield* connectors.removeInstance(owner, instance.id)
      expect(removed).toMatchObject({ removedConnectorInstanceId: instance.id, deletedPluginCount: 1, deletedConnectorMappingCount: 3 })
      expect(yield* objectsOf(organization, pluginId)).toEqual([])
    }))

  it.effect("apply: a marketplace listing the plugins; unsupported keys are 400, a name a person's plugin holds no refusal, a disabled instance 409", () =>
    Effect.gen(function*() {
      const connectors = yield* Connectors
      const discovery = yield* DiscoveryService
      const sql = yield* SqlClient.SqlClient
      const { organization, owner } = yield* staffed()
      const pluginCount = Effect.map(
        sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM plugins WHERE organization_id = ${organization.id}`,
        (rows) => rows[0]?.n ?? 0
      )
      const { instance } = yield* connect(owner, marketplaceRepo)
      const before = yield* pluginCount
      const bad = yield* Effect.flip(discovery.apply(owner, instance.id, { keys: ["marketplace:plugins/alpha", "marketplace:remote", "nope"] }))
      expect(bad._tag).toBe("InvalidRequest")
      expect(bad._tag === "InvalidRequest" ? bad.details.map((detail) => detail.path) : []).toEqual([["keys", 1], ["keys", 2]])
      expect(yield* pluginCount).toBe(before)

      // A plugin named like a candidate, made by a person: names are unique within the repository's plugins
      // (migration 0045), so the repository's beta is made beside it.
      yield* madePlugin(owner, "beta")
      const keys = ["marketplace:plugins/alpha", "marketplace:plugins/beta"]
      const { item: first } = yield* discovery.apply(owner, instance.id, { keys })
      expect(yield* pluginCount).toBe(before + 3)
      expect(first.marketplaceId).toMatch(/^mkt_/)
      const [market] = yield* sql<{ readonly name: string; readonly description: string }>`
        SELECT name, description FROM marketplaces WHERE organization_id = ${organization.id} AND id = ${first.marketplaceId}`
      expect(market).toEqual({ name: "acme-tools", description: "Acme's plugins." })
      const listed = yield* sql<{ readonly plugin: string }>`
        SELECT plugin_id AS plugin FROM marketplace_plugins WHERE organization_id = ${organization.id} AND marketplace_id = ${first.marketplaceId}`
      expect(listed.map((row) => row.plugin)).toEqual(first.plugins.map((plugin) => plugin.pluginId))
      const again = (yield* discovery.apply(owner, instance.id, { keys })).item
      expect(again.marketplaceId).toBe(first.marketplaceId)
      expect(again.plugins.every((plugin) => !plugin.created)).toBe(true)

      yield* connectors.disable(owner, instance.id)
      expect(yield* failure(discovery.apply(owner, instance.id, { keys }))).toMatchObject({ _tag: "Conflict", error: "connector_instance_disabled" })
    }))

  it.effect("auto-import: a plugin committed after apply is imported for the sync of its commit, once; none while the setting is off", () =>
    Effect.gen(function*() {
      const connectors = yield* Connectors
      const discovery = yield* DiscoveryService
      const events = yield* SyncEventsRepository
      const sql = yield* SqlClient.SqlClient
      const { organization, owner } = yield* staffed()
      const pluginFiles = (name: string) => ({
        [`plugins/${name}/.claude-plugin/plugin.json`]: json({ name, description: `The ${name} plugin.` }),
        [`plugins/${name}/commands/${name}.md`]: `# ${name}\n`
      })
      const { instance, repo, target } = yield* connect(owner, { ...pluginFiles("one"), ...pluginFiles("two"), "README.md": "# plugins" })
      const keysOf = Effect.map(
        sql<{ readonly key: string }>`SELECT connector_candidate_key AS key FROM plugins
          WHERE organization_id = ${organization.id} AND connector_instance_id = ${instance.id} ORDER BY connector_candidate_key`,
        (rows) => rows.map((row) => row.key)
      )
      const importFor = (revision: string) =>
        Effect.gen(function*() {
          const { event } = yield* events.record({
            organizationId: organization.id,
            connectorInstanceId: instance.id,
            connectorTargetId: target.id,
            eventType: "sync_now",
            revision
          })
          const keys = yield* discovery.importNew({ organizationId: organization.id, instanceId: instance.id, targetId: target.id, revision, syncEventId: event.id })
          return { event, keys }
        })

      // Never applied: nothing is imported.
      const head = yield* Effect.promise(() => repo.head())
      expect((yield* importFor(head)).keys).toEqual([])
      expect(yield* keysOf).toEqual([])

      yield* applyAndSync(owner, instance, target, ["manifest:plugins/one"])
      const added = yield* Effect.promise(() => repo.commitFiles(pluginFiles("three"), "add three"))
      const { event, keys } = yield* importFor(added)
      expect(keys).toEqual(["manifest:plugins/three"])
      // "two" was offered at apply and left out: it stays out.
      expect(yield* keysOf).toEqual(["manifest:plugins/one", "manifest:plugins/three"])
      // The step run again answers the same keys and imports nothing more.
      expect(yield* discovery.importNew({ organizationId: organization.id, instanceId: instance.id, targetId: target.id, revision: added, syncEventId: event.id })).toEqual(keys)
      expect(yield* keysOf).toEqual(["manifest:plugins/one", "manifest:plugins/three"])
      const synced = yield* ConnectorSync.syncOnce({ organizationId: organization.id, instance, target, revision: added, eventId: event.id })
      expect(synced).toMatchObject({ created: 1, unchanged: 1 })

      // Off: a new plugin waits; on again, it is imported.
      yield* connectors.updateInstance(owner, instance.id, { config: { autoImportNewPlugins: false } })
      const four = yield* Effect.promise(() => repo.commitFiles(pluginFiles("four"), "add four"))
      expect((yield* importFor(four)).keys).toEqual([])
      yield* connectors.updateInstance(owner, instance.id, { config: { autoImportNewPlugins: true } })
      expect((yield* importFor(four)).keys).toEqual(["manifest:plugins/four"])
    }))

  it.effect("the durable sync: apply's workflow materializes the plugin and completes its event, audited; sync now at that head answers it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { organization, owner } = yield* staffed()
      const { instance, repo, target } = yield* connect(owner, singlePlugin)
      const head = yield* Effect.promise(() => repo.head())
      yield* Effect.gen(function*() {
        const discovery = yield* DiscoveryService
        const sync = yield* Sync
        /** The event once its workflow is done with it. */
        const settled = (id: ConnectorSyncEventId) =>
          sync.getEvent(owner, id).pipe(
            Effect.map(({ item }) => item),
            Effect.repeat({ until: (event) => event.status !== "queued" && event.status !== "running", schedule: Schedule.spaced("100 millis"), times: 600 })
          )
        const { item } = yield* discovery.apply(owner, instance.id, { keys: ["manifest:root"] })
        const done = yield* settled(item.syncEvent.id)
        expect(done).toMatchObject({
          status: "completed",
          sourceRevisionRef: head,
          summary: { outcome: "complete", created: 3, updated: 0, deleted: 0, unchanged: 0, skipped: 0, importedPluginKeys: [] }
        })
        const objects = yield* objectsOf(organization, item.plugins[0]!.pluginId)
        expect(objects.map(({ kind, status, title }) => ({ kind, status, title }))).toEqual([
          { kind: "agent", status: "active", title: "reviewer" },
          { kind: "command", status: "active", title: "ship" },
          { kind: "skill", status: "active", title: "deploy" }
        ])
        const [audited] = yield* sql<{ readonly actor: string; readonly reason: string }>`
          SELECT actor_id AS actor, reason FROM audit_events WHERE organization_id = ${organization.id} AND action = 'connector_sync.complete'`
        expect(audited).toEqual({ actor: "system:connector-sync", reason: "complete: 3 created, 0 updated, 0 deleted, 0 skipped" })

        // "Sync now" at the same head answers the completed event; a resync reads every file again, changing nothing.
        expect((yield* sync.syncNow(owner, instance.id)).items.map((event) => event.id)).toEqual([item.syncEvent.id])
        const { item: resync } = yield* sync.resync(owner, target.id)
        expect(yield* settled(resync.id)).toMatchObject({ status: "completed", eventType: "resync", summary: { created: 0, updated: 0, unchanged: 3 } })
        expect((yield* sync.listEvents(owner, instance.id, {})).items.map((event) => event.id)).toEqual([resync.id, item.syncEvent.id])
        const stranger = yield* outsider()
        expect(yield* failure(sync.getEvent(stranger, item.syncEvent.id))).toEqual({
          _tag: "NotFound",
          error: "connector_sync_event_not_found",
          message: "Connector sync event not found."
        })
        expect(yield* failure(sync.syncNow(stranger, instance.id))).toMatchObject({ error: "connector_instance_not_found" })
      }).pipe(Effect.provide(SyncWorkflow.layer.pipe(Layer.provideMerge(Durable.layerSingle({ sharding: testTuning })))))
    }), { timeout: 120_000 })
})

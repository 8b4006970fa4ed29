/**
 * Discovery through HTTP against FakeGitHub serving real git repositories: the candidates of each repository
 * layout, a tree GitHub lists only in part, the per-commit cache, the tree's pages, and apply (plugins, a
 * marketplace, mappings, the queued sync) with the resolved marketplace's source.
 */
import type { TreeEntryPage } from "@orgplane/schema"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as GitRepo from "../../../../packages/testkit/src/GitRepo.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as ConnectorWorld from "../support/ConnectorWorld.js"
import { describe, expect, it } from "vitest"

const treeLimit = 60

const world = ConnectorWorld.forFile({ treeLimit })
const { sql } = world
const { connectorInstances, marketplaces, plugins } = calls(() => world.url)
const unique = () => Math.random().toString(36).slice(2, 10)
const json = (value: unknown) => JSON.stringify(value)

type Query<Call extends (request: never) => unknown> = NonNullable<Parameters<Call>[0]["query"]>
const discovery = (token: string, instanceId: string, query: Query<typeof connectorInstances.discover> = {}) =>
  connectorInstances.discover({ token, path: { connectorInstanceId: instanceId }, query })
const discover = async (token: string, instanceId: string) => ok(await discovery(token, instanceId), 200).item
const tree = (token: string, instanceId: string, query: Query<typeof connectorInstances.discoveryTree> = {}) =>
  connectorInstances.discoveryTree({ token, path: { connectorInstanceId: instanceId }, query })
const apply = (token: string, instanceId: string, payload: { readonly keys: ReadonlyArray<string> }) =>
  connectorInstances.applyDiscovery({ token, path: { connectorInstanceId: instanceId }, payload })

/** The marketplace an apply made; throws, naming the apply, when it made none. */
const marketplaceOf = (applied: { readonly marketplaceId: string | null; readonly syncEvent: { readonly id: string } }) => {
  if (applied.marketplaceId === null) throw new Error(`the apply of sync ${applied.syncEvent.id} made no marketplace`)
  return applied.marketplaceId
}

/** Requests FakeGitHub answered for one repository, by kind. */
const requestsOf = (fullName: string) => {
  const of = (part: string) => world.github.requests.filter((request) => request.path.startsWith(`/repos/${fullName}/${part}`)).length
  return { heads: of("commits/"), trees: of("git/trees/"), blobs: of("git/blobs/") }
}

/** Every path of the commit (files and folders), in byte order: what GitHub's complete listing holds. */
const allPaths = async (repo: GitRepo.GitRepo) =>
  (await repo.git("ls-tree", "-r", "-t", "--name-only", "-z", "HEAD")).split("\u0000").filter((path) => path !== "")
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))

const singlePlugin: GitRepo.Files = {
  ".claude-plugin/plugin.json": json({ name: "deploy-tools", description: "Deploys things." }),
  "skills/deploy/SKILL.md": "---\nname: deploy\n---\n",
  "commands/ship.md": "# ship",
  "agents/reviewer.md": "# reviewer",
  "README.md": "# readme"
}

const marketplaceRepo: GitRepo.Files = {
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
  "plugins/alpha/skills/x/SKILL.md": "---\nname: x\n---\n",
  "plugins/beta/commands/b.md": "# b"
}

describe("discovery", () => {
  it("finds one Claude plugin at the root, with the instance and target as they are now", async () => {
    const org = await Http.owner(world.url)
    const { fullName, instance, repo, target } = await world.followAs(org, singlePlugin)
    const item = await discover(org.token, instance.id)
    expect(item).toMatchObject({
      autoImportNewPlugins: true,
      classification: "claude_single_plugin_repo",
      marketplace: null,
      repositoryFullName: fullName,
      sourceRevisionRef: await repo.head(),
      treeSummary: { scannedEntryCount: (await allPaths(repo)).length, strategy: "git-tree-recursive", truncated: false, walkedSubtrees: 0 },
      warnings: []
    })
    expect(item.connectorInstance.id).toBe(instance.id)
    expect(item.connectorTarget.id).toBe(target.id)
    expect(item.steps.map((step: { id: string }) => step.id)).toEqual([
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

    // The instance is read fresh, not from the cache.
    ok(await connectorInstances.update({
      token: org.token,
      path: { connectorInstanceId: instance.id },
      payload: { name: "Renamed", config: { autoImportNewPlugins: false } }
    }), 200)
    const again = await discover(org.token, instance.id)
    expect(again.connectorInstance.name).toBe("Renamed")
    expect(again.autoImportNewPlugins).toBe(false)
  })

  it("finds several Claude plugins in folders", async () => {
    const org = await Http.owner(world.url)
    const { instance } = await world.followAs(org, {
      "plugins/one/.claude-plugin/plugin.json": json({ name: "one" }),
      "plugins/one/commands/a.md": "# a",
      "plugins/two/.claude-plugin/plugin.json": json({ name: "two" }),
      "plugins/two/agents/b.md": "# b",
      "plugins/twin/.claude-plugin/plugin.json": json({ name: "Two" }),
      "plugins/twin/agents/c.md": "# c"
    })
    const item = await discover(org.token, instance.id)
    expect(item.classification).toBe("claude_multi_plugin_repo")
    expect(item.discoveredPlugins.map((plugin: { key: string }) => plugin.key)).toEqual([
      "manifest:plugins/one",
      "manifest:plugins/twin",
      "manifest:plugins/two"
    ])

    // Two candidates named alike become two plugins, the later told apart by its folder.
    const applied = ok(await apply(org.token, instance.id, { keys: ["manifest:plugins/two", "manifest:plugins/twin"] }), 200).item
    const names = await Promise.all(applied.plugins.map(async (plugin) =>
      ok(await plugins.get({ token: org.token, path: { pluginId: plugin.pluginId } }), 200).item.name
    ))
    expect(names).toEqual(["two", "Two (plugins/twin)"])
  })

  it("lists per candidate the files it will not import, with the reason and the file, stored discoveries included", async () => {
    const org = await Http.owner(world.url)
    const { instance, target } = await world.followAs(org, {
      ".claude-plugin/plugin.json": json({ name: "lossy", commands: ["./extra/notes.txt", "./gone.md", "../../outside.md", "./extra/ok.md"] }),
      "skills/small/SKILL.md": "---\nname: small\n---\n",
      // One byte over MAX_SOURCE_BYTES: the sync would skip it; discovery knows from the tree's size.
      "skills/big/SKILL.md": `---\nname: big\n---\n${"x".repeat(1024 * 1024)}`,
      "extra/notes.txt": "notes",
      "extra/ok.md": "# ok",
      ".lsp.json": json({ go: { command: "gopls" } }),
      "README.md": "# readme"
    })
    const item = await discover(org.token, instance.id)
    const [candidate] = item.discoveredPlugins
    expect(candidate).toMatchObject({ key: "manifest:root", supported: true })
    expect(candidate.skippedFiles).toEqual([
      { path: "extra/notes.txt", reason: "`.claude-plugin/plugin.json` declares it as commands, which take Markdown files or folders only" },
      { path: "gone.md", reason: "`.claude-plugin/plugin.json` declares it as commands, but this branch does not have it" },
      { path: "../../outside.md", reason: "`.claude-plugin/plugin.json` declares it as commands, outside the plugin's folder" },
      { path: "skills/big/SKILL.md", reason: "larger than 1048576 bytes" },
      { path: ".lsp.json", reason: "orgplane does not import LSP server configurations" }
    ])
    // What it imports is not listed, nor what no component names.
    const listed = candidate.skippedFiles!.map((file) => file.path)
    for (const path of ["skills/small/SKILL.md", "extra/ok.md", "README.md"]) expect(listed).not.toContain(path)

    // The stored discovery answers the same, and one stored before the field existed decodes with none.
    expect((await discover(org.token, instance.id)).discoveredPlugins[0].skippedFiles).toEqual(candidate.skippedFiles)
    await sql((sql) =>
      sql`UPDATE connector_discoveries
          SET result_json = jsonb_set(result_json, '{discoveredPlugins,0}', (result_json -> 'discoveredPlugins' -> 0) - 'skippedFiles')
          WHERE organization_id = ${org.organization.id} AND connector_target_id = ${target.id}`
    )
    expect((await discover(org.token, instance.id)).discoveredPlugins[0].skippedFiles).toEqual([])
  })

  it("finds a marketplace's local entries and marks external ones unsupported", async () => {
    const org = await Http.owner(world.url)
    const { instance } = await world.followAs(org, marketplaceRepo)
    const item = await discover(org.token, instance.id)
    expect(item.classification).toBe("claude_marketplace_repo")
    expect(item.marketplace).toMatchObject({ name: "acme-tools", description: "Acme's plugins.", owner: "Acme", entryCount: 3 })
    const byKey = Object.fromEntries(item.discoveredPlugins.map((plugin) => [plugin.key, plugin]))
    expect(byKey["marketplace:plugins/alpha"]).toMatchObject({ supported: true, sourceKind: "marketplace_entry" })
    expect(byKey["marketplace:plugins/beta"]).toMatchObject({ supported: true })
    expect(byKey["marketplace:remote"]).toMatchObject({ supported: false, selectedByDefault: false })
    expect(byKey["marketplace:remote"].warnings.length).toBeGreaterThan(0)
  })

  it("finds Agent Plugins, and says why a repository without plugins is unsupported", async () => {
    const org = await Http.owner(world.url)
    const agent = await world.followAs(org, {
      "tools/plugin.json": json({ $schema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", name: "tools" }),
      "tools/skills/a/SKILL.md": "---\nname: a\n---\n"
    })
    const found = await discover(org.token, agent.instance.id)
    expect(found.classification).toBe("agent_plugin_repo")
    expect(found.discoveredPlugins[0]).toMatchObject({ key: "agent-plugin:tools", sourceKind: "agent_plugin_manifest", sourceSchemaVersion: "1.0.0" })

    const plain = await world.followAs(org, { "README.md": "# nothing here", "src/index.ts": "export {}" })
    const none = await discover(org.token, plain.instance.id)
    expect(none.classification).toBe("unsupported")
    expect(none.discoveredPlugins).toEqual([])
    expect(none.warnings.length).toBeGreaterThan(0)
    expect(none.steps.map((step: { status: string }) => step.status)).toEqual(["completed", "skipped", "warning", "warning"])
  })

  it("completes a tree GitHub lists only in part, and says so", async () => {
    const org = await Http.owner(world.url)
    // The plugin sorts after everything else: only the walk of the cut listing finds it.
    const files = {
      ...GitRepo.manyFiles(3 * treeLimit, { perFolder: 10 }),
      "zz/.claude-plugin/plugin.json": json({ name: "last" }),
      "zz/commands/c.md": "# c"
    }
    const { instance, repo } = await world.followAs(org, files)
    const item = await discover(org.token, instance.id)
    const paths = await allPaths(repo)
    expect(paths.length).toBeGreaterThan(treeLimit)
    expect(item.treeSummary.truncated).toBe(true)
    expect(item.treeSummary.walkedSubtrees).toBeGreaterThan(0)
    expect(item.treeSummary.scannedEntryCount).toBe(paths.length)
    expect(item.discoveredPlugins.map((plugin: { key: string }) => plugin.key)).toEqual(["manifest:zz"])
  })

  it("is kept per commit: asking again reads only the head, a new commit is scanned again", async () => {
    const org = await Http.owner(world.url)
    const { fullName, instance, repo, target } = await world.followAs(org, singlePlugin)
    const first = await discover(org.token, instance.id)
    const afterFirst = requestsOf(fullName)
    expect(afterFirst.trees).toBe(1)

    const second = await discover(org.token, instance.id)
    const afterSecond = requestsOf(fullName)
    expect(second).toEqual(first)
    expect(afterSecond.heads).toBe(afterFirst.heads + 1)
    expect(afterSecond.trees).toBe(afterFirst.trees)
    expect(afterSecond.blobs).toBe(afterFirst.blobs)
    // The tree's pages read the same cache.
    ok(await tree(org.token, instance.id), 200)
    expect(requestsOf(fullName).trees).toBe(afterFirst.trees)

    const moved = await repo.commitFiles({ "plugins/two/.claude-plugin/plugin.json": json({ name: "two" }) }, "second")
    const third = await discover(org.token, instance.id)
    expect(third.sourceRevisionRef).toBe(moved)
    expect(requestsOf(fullName).trees).toBe(afterFirst.trees + 1)

    // Old commits are forgotten but for the newest few.
    for (let i = 0; i < 3; i++) {
      await repo.commitFiles({ [`notes/${i}.md`]: `# ${i}` }, `note ${i}`)
      await discover(org.token, instance.id)
    }
    const kept = await sql((sql) =>
      sql<{ count: number }>`SELECT count(*)::int AS count FROM connector_discoveries
          WHERE organization_id = ${org.organization.id} AND connector_target_id = ${target.id}`
    )
    expect(kept[0].count).toBe(3)
  })

  it("answers concurrent first requests at one commit alike, storing the commit once", async () => {
    const org = await Http.owner(world.url)
    const { instance, target } = await world.followAs(org, singlePlugin)
    const answers = await Promise.all([
      discovery(org.token, instance.id),
      discovery(org.token, instance.id),
      tree(org.token, instance.id),
      discovery(org.token, instance.id)
    ])
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200])
    expect(answers[1].body).toEqual(answers[0].body)
    expect(answers[3].body).toEqual(answers[0].body)
    const stored = await sql((sql) =>
      sql<{ discoveries: number; entries: number }>`SELECT
        (SELECT count(*)::int FROM connector_discoveries WHERE organization_id = ${org.organization.id} AND connector_target_id = ${target.id}) AS discoveries,
        (SELECT count(*)::int FROM connector_tree_entries WHERE organization_id = ${org.organization.id} AND connector_target_id = ${target.id}) AS entries`
    )
    expect(stored[0]).toEqual({ discoveries: 1, entries: ok(answers[0], 200).item.treeSummary.scannedEntryCount })
  })

  it("answers 409 without a target, 404 for a target of another instance or another organization's instance, 502 for a missing branch", async () => {
    const org = await Http.owner(world.url)
    const { account, instance } = await world.followAs(org, singlePlugin)
    const bare = ok(await connectorInstances.create({
      token: org.token,
      payload: { connectorAccountId: account.id, name: `Bare ${unique()}`, remoteId: "acme/none" }
    }), 201).item
    const required = await discovery(org.token, bare.id)
    expect(required.status).toBe(409)
    expect(required.body).toMatchObject({ error: "connector_target_required" })

    const other = await world.followAs(org, singlePlugin)
    const foreignTarget = await discovery(org.token, instance.id, { connectorTargetId: other.target.id })
    expect(foreignTarget.status).toBe(404)
    expect(foreignTarget.body).toMatchObject({ error: "connector_target_not_found" })

    const stranger = await Http.owner(world.url, "Other")
    for (const response of [
      await discovery(stranger.token, instance.id),
      await tree(stranger.token, instance.id),
      await apply(stranger.token, instance.id, { keys: ["manifest:root"] })
    ]) {
      expect(response.status).toBe(404)
      expect(response.body).toMatchObject({ error: "connector_instance_not_found" })
    }

    const missing = await world.followAs(org, singlePlugin, { branch: "no-such-branch" })
    const failed = await discovery(org.token, missing.instance.id)
    expect(failed.status).toBe(502)
    expect(failed.body).toMatchObject({ error: "codehost_api_error" })
  })
})

describe("the discovered tree", () => {
  const files: GitRepo.Files = {
    ...singlePlugin,
    "skills/Zeta/SKILL.md": "# Z",
    "skills/alpha/SKILL.md": "# a",
    "skills/\u00e9t\u00e9/SKILL.md": "# \u00e9",
    "skills_x/a.md": "# not under skills/",
    "s%/a.md": "# a literal percent"
  }

  it("pages in byte order under a prefix matched literally, with cursors bound to the prefix and the commit", async () => {
    const org = await Http.owner(world.url)
    const { instance, repo } = await world.followAs(org, files)
    const everything = await allPaths(repo)

    const whole = ok(await tree(org.token, instance.id, { limit: "500" }), 200)
    expect(whole.items.map((entry) => entry.path)).toEqual(everything)
    expect(whole.nextCursor).toBeNull()
    const folder = whole.items.find((entry) => entry.path === "skills")
    expect(folder).toMatchObject({ id: "skills", kind: "tree", size: 0 })
    expect(whole.items.find((entry) => entry.path === "commands/ship.md")).toMatchObject({ kind: "blob", size: 6 })

    const seen: Array<string> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: typeof TreeEntryPage.Encoded = ok(await tree(org.token, instance.id, { prefix: "skills/", limit: "2", ...(cursor ? { cursor } : {}) }), 200)
      expect(page.items.length).toBeLessThanOrEqual(2)
      seen.push(...page.items.map((entry) => entry.path))
      cursor = page.nextCursor
      if (cursor !== null) expect(cursor.length).toBeLessThanOrEqual(255)
      pages++
    } while (cursor !== null && pages < 20)
    expect(seen).toEqual(everything.filter((path) => path.startsWith("skills/")))
    expect(seen.indexOf("skills/Zeta")).toBeLessThan(seen.indexOf("skills/alpha"))
    expect(seen.indexOf("skills/alpha")).toBeLessThan(seen.indexOf("skills/\u00e9t\u00e9"))

    // Wildcards are text: `s%` is the folder of that name only.
    const percent = ok(await tree(org.token, instance.id, { prefix: "s%" }), 200)
    expect(percent.items.map((entry) => entry.path)).toEqual(["s%", "s%/a.md"])

    const first = ok(await tree(org.token, instance.id, { prefix: "skills/", limit: "1" }), 200)
    if (first.nextCursor === null) throw new Error(`a page of one of several entries has no cursor: ${JSON.stringify(first)}`)
    const otherPrefix = await tree(org.token, instance.id, { prefix: "commands/", cursor: first.nextCursor })
    expect(otherPrefix.status).toBe(400)
    expect(invalid(otherPrefix).details[0].path).toEqual(["cursor"])
    const madeUp = await tree(org.token, instance.id, { cursor: "bm90LWEtY3Vyc29y.xyz" })
    expect(madeUp.status).toBe(400)
    expect(invalid(madeUp).details[0].path).toEqual(["cursor"])
    expect((await tree(org.token, instance.id, { limit: "501" })).status).toBe(400)
    expect((await tree(org.token, instance.id, { limit: "0" })).status).toBe(400)
    expect((await tree(org.token, instance.id, { cursor: "x".repeat(256) })).status).toBe(400)

    // Once the branch moves, the old listing's cursor is refused.
    await repo.commitFiles({ "skills/new/SKILL.md": "# new" }, "moved")
    const stale = await tree(org.token, instance.id, { prefix: "skills/", limit: "1", cursor: first.nextCursor })
    expect(stale.status).toBe(400)
    expect(invalid(stale).details[0].path).toEqual(["cursor"])
  })
})

describe("apply", () => {
  const pluginCount = (organizationId: string) =>
    sql((sql) => sql<{ count: number }>`SELECT count(*)::int AS count FROM plugins WHERE organization_id = ${organizationId}`)
      .then((rows) => rows[0].count)
  const mappingsOf = (organizationId: string, targetId: string) =>
    sql((sql) =>
      sql<{ id: string; selector: string; objectType: string; pluginId: string; autoAddToPlugin: boolean; mappingKind: string }>`
        SELECT id, selector, object_type, plugin_id, auto_add_to_plugin, mapping_kind FROM connector_mappings
        WHERE organization_id = ${organizationId} AND connector_target_id = ${targetId} ORDER BY selector`
    )

  it("creates a plugin and its mappings, queues a sync, and creates nothing new the second time", async () => {
    const org = await Http.owner(world.url)
    const { instance, repo, target } = await world.followAs(org, singlePlugin)
    const head = await repo.head()
    const first = ok(await apply(org.token, instance.id, { keys: ["manifest:root"] }), 200).item
    expect(first.sourceRevisionRef).toBe(head)
    expect(first.marketplaceId).toBeNull()
    expect(first.plugins).toHaveLength(1)
    expect(first.plugins[0]).toMatchObject({ key: "manifest:root", created: true })
    expect(first.syncEvent).toMatchObject({
      connectorInstanceId: instance.id,
      connectorTargetId: target.id,
      eventType: "apply",
      sourceRevisionRef: head
    })

    const plugin = ok(await plugins.get({ token: org.token, path: { pluginId: first.plugins[0].pluginId } }), 200).item
    expect(plugin).toMatchObject({ name: "deploy-tools", description: "Deploys things." })
    const mappings = await mappingsOf(org.organization.id, target.id)
    expect(mappings.map((mapping) => [mapping.objectType, mapping.selector])).toEqual([
      ["agent", "agents/**"],
      ["command", "commands/**"],
      ["skill", "skills/**"]
    ])
    for (const mapping of mappings) {
      expect(mapping).toMatchObject({ pluginId: plugin.id, autoAddToPlugin: true, mappingKind: "path" })
    }
    expect([...first.plugins[0].mappingIds].sort()).toEqual(mappings.map((mapping) => mapping.id).sort())

    const count = await pluginCount(org.organization.id)
    const second = ok(await apply(org.token, instance.id, { keys: ["manifest:root", "manifest:root"] }), 200).item
    expect(second.plugins).toEqual([{ ...first.plugins[0], created: false }])
    expect(second.syncEvent.id).not.toBe(first.syncEvent.id)
    expect(await pluginCount(org.organization.id)).toBe(count)
    expect(await mappingsOf(org.organization.id, target.id)).toEqual(mappings)
  })

  it("run at once, create one plugin; after its plugin is deleted, make a new one that its mappings feed", async () => {
    const org = await Http.owner(world.url)
    const { instance, target } = await world.followAs(org, singlePlugin)
    ok(await discovery(org.token, instance.id), 200)
    const before = await pluginCount(org.organization.id)
    const both = await Promise.all([
      apply(org.token, instance.id, { keys: ["manifest:root"] }),
      apply(org.token, instance.id, { keys: ["manifest:root"] })
    ])
    expect(both.map((answer) => answer.status)).toEqual([200, 200])
    const [a, b] = both.map((answer) => ok(answer, 200).item.plugins[0])
    expect(a.pluginId).toBe(b.pluginId)
    expect([a.created, b.created].sort()).toEqual([false, true])
    expect(await pluginCount(org.organization.id)).toBe(before + 1)

    ok(await plugins.delete({ token: org.token, path: { pluginId: a.pluginId } }), 200)
    const again = ok(await apply(org.token, instance.id, { keys: ["manifest:root"] }), 200).item.plugins[0]
    expect(again.created).toBe(true)
    expect(again.pluginId).not.toBe(a.pluginId)
    expect(again.mappingIds).toEqual(a.mappingIds)
    for (const mapping of await mappingsOf(org.organization.id, target.id)) expect(mapping.pluginId).toBe(again.pluginId)
  })

  it("creates a marketplace listing the plugins, whose resolved form names its source", async () => {
    const org = await Http.owner(world.url)
    const { account, fullName, instance } = await world.followAs(org, marketplaceRepo)
    const keys = ["marketplace:plugins/alpha", "marketplace:plugins/beta"]
    const first = ok(await apply(org.token, instance.id, { keys }), 200).item
    expect(first.marketplaceId).toMatch(/^mkt_/)
    const resolved = ok(await marketplaces.resolved({ token: org.token, path: { marketplaceId: marketplaceOf(first) } }), 200).item
    expect(resolved.marketplace).toMatchObject({ name: "acme-tools", description: "Acme's plugins." })
    expect(resolved.plugins.map((plugin) => plugin.id).sort()).toEqual(
      first.plugins.map((plugin) => plugin.pluginId).sort()
    )
    expect(resolved.source).toEqual({
      connectorAccountId: account.id,
      connectorInstanceId: instance.id,
      accountLogin: "acme",
      repositoryFullName: fullName,
      branch: "main"
    })

    const again = ok(await apply(org.token, instance.id, { keys }), 200).item
    expect(again.marketplaceId).toBe(first.marketplaceId)
    expect(again.plugins.every((plugin) => !plugin.created)).toBe(true)

    // A marketplace people made has no source.
    const manual = ok(await marketplaces.create({ token: org.token, payload: { name: `Manual ${unique()}` } }), 201).item
    expect(ok(await marketplaces.resolved({ token: org.token, path: { marketplaceId: manual.id } }), 200).item.source).toBeNull()
  })

  it("needs viewer access to discover and editor access to apply; removing the instance deletes what apply created", async () => {
    const org = await Http.staffed(world.url)
    const { instance } = await world.followAs(org.admin, marketplaceRepo)
    expect((await discovery(org.member.token, instance.id)).status).toBe(403)
    const path = { connectorInstanceId: instance.id }
    ok(await connectorInstances.connectorInstanceGrant({
      token: org.admin.token,
      path,
      payload: { orgMembershipId: org.member.membership.id, role: "viewer" }
    }), 201)
    ok(await discovery(org.member.token, instance.id), 200)
    const refused = await apply(org.member.token, instance.id, { keys: ["marketplace:plugins/alpha"] })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ reason: "insufficient_access" })

    ok(await connectorInstances.connectorInstanceGrant({
      token: org.admin.token,
      path,
      payload: { orgMembershipId: org.member.membership.id, role: "editor" }
    }), 201)
    const applied = ok(await apply(org.member.token, instance.id, { keys: ["marketplace:plugins/alpha"] }), 200).item
    // The editor who applied manages what it created.
    ok(await plugins.update({
      token: org.member.token,
      path: { pluginId: applied.plugins[0].pluginId },
      payload: { description: "Changed by its creator." }
    }), 200)

    const removed = ok(await connectorInstances.remove({ token: org.owner.token, path }), 200).item
    expect(removed).toMatchObject({ deletedPluginCount: 1, deletedMarketplaceCount: 1 })
  })

  it("refuses keys that are not supported candidates and disabled instances; names others hold are no refusal", async () => {
    const org = await Http.owner(world.url)
    const { fullName, instance } = await world.followAs(org, marketplaceRepo)
    const count = await pluginCount(org.organization.id)
    const bad = await apply(org.token, instance.id, { keys: ["marketplace:plugins/alpha", "marketplace:remote", "nope"] })
    expect(bad.status).toBe(400)
    expect(invalid(bad).error).toBe("invalid_request")
    expect(invalid(bad).details.map((detail) => detail.path)).toEqual([["keys", 1], ["keys", 2]])
    expect(await pluginCount(org.organization.id)).toBe(count)

    // A plugin named like a candidate and a marketplace named like the repository's, both made by a person: plugin
    // names are unique within a repository's plugins (as within a Claude Code marketplace), and the marketplace is
    // told apart by its repository (migration 0045, docs/connectors.md).
    ok(await plugins.create({ token: org.token, payload: { name: "beta" } }), 201)
    ok(await marketplaces.create({ token: org.token, payload: { name: "acme-tools" } }), 201)
    const applied = ok(await apply(org.token, instance.id, { keys: ["marketplace:plugins/alpha", "marketplace:plugins/beta"] }), 200).item
    expect(await pluginCount(org.organization.id)).toBe(count + 3)
    const beta = applied.plugins.find((plugin) => plugin.key === "marketplace:plugins/beta")
    if (beta === undefined) throw new Error(`the apply made no beta: ${JSON.stringify(applied.plugins)}`)
    expect(ok(await plugins.get({ token: org.token, path: { pluginId: beta.pluginId } }), 200).item.name).toBe("beta")
    expect(ok(await marketplaces.get({ token: org.token, path: { marketplaceId: marketplaceOf(applied) } }), 200).item.name).toBe(`acme-tools (${fullName})`)

    ok(await connectorInstances.disable({ token: org.token, path: { connectorInstanceId: instance.id } }), 200)
    const disabled = await apply(org.token, instance.id, { keys: ["marketplace:plugins/alpha"] })
    expect(disabled.status).toBe(409)
    expect(disabled.body).toMatchObject({ error: "connector_instance_disabled" })
  })
})

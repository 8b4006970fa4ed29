/**
 * A sync follows its marketplace as a Claude Code user who adds it gets it (docs/connectors.md, "Following a
 * marketplace"), through HTTP against FakeGitHub serving a real git repository changed the way maintainers change
 * one, a commit and a "sync now" each: metadata bumped, a plugin renamed in place, a folder moved, a hook added, an
 * entry removed and put back, a trailing comma (the sync fails, the catalog keeps the last good state, the repair
 * syncs), an invalid plugin.json (the plugin is kept, the sync is partial).
 */
import type * as GitRepo from "../../../../packages/testkit/src/GitRepo.js"
import { calls, ok, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as ConnectorWorld from "../support/ConnectorWorld.js"
import { describe, expect, it } from "vitest"

const world = ConnectorWorld.forFile()
const { settled, synced } = world
const { configObjects, connectorInstances, connectorTargets, marketplaces, plugins } = calls(() => world.url)
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

interface Entry {
  readonly name: string
  readonly source: string
  readonly description?: string
}

const marketplace = (entries: ReadonlyArray<Entry>): GitRepo.Files => ({
  ".claude-plugin/marketplace.json": json({ name: "team-tools", owner: { name: "Acme" }, plugins: entries })
})

const ralph: Entry = { name: "ralph-wiggum", source: "./plugins/ralph-wiggum", description: "Loops until done." }
const review: Entry = { name: "code-review", source: "./plugins/code-review" }
const old: Entry = { name: "old-tool", source: "./plugins/old-tool" }

const files: GitRepo.Files = {
  ...marketplace([ralph, review, old]),
  "plugins/ralph-wiggum/.claude-plugin/plugin.json": json({ name: "ralph-wiggum", version: "1.0.0" }),
  "plugins/ralph-wiggum/commands/ralph-loop.md": "---\ndescription: Start a loop\n---\nLoop.\n",
  "plugins/code-review/.claude-plugin/plugin.json": json({ name: "code-review", version: "1.0.0", description: "Reviews pull requests." }),
  "plugins/code-review/commands/review.md": "---\ndescription: Review\n---\nReview the diff.\n",
  "plugins/old-tool/.claude-plugin/plugin.json": json({ name: "old-tool", version: "0.9.0" }),
  "plugins/old-tool/agents/helper.md": "---\nname: helper\ndescription: Helps.\n---\nHelp.\n"
}

const pluginOf = async (token: string, pluginId: string) => ok(await plugins.get({ token, path: { pluginId } }), 200).item

/** The plugin's config objects, deleted ones too. */
const objectsOf = async (token: string, pluginId: string) => {
  const page = ok(await plugins.listConfigObjects({ token, path: { pluginId }, query: { limit: "100" } }), 200)
  return Promise.all(page.items.map(async ({ configObjectId }) => ok(await configObjects.get({ token, path: { configObjectId } }), 200).item))
}

/** The repository path of a config object a sync made; throws, naming the object, when it has none. */
const pathOf = (object: { readonly id: string; readonly currentRelativePath: string | null }) => {
  if (object.currentRelativePath === null) throw new Error(`config object ${object.id} has no repository path`)
  return object.currentRelativePath
}

/** The repository paths of the plugin's config objects that are not deleted. */
const pathsOf = async (token: string, pluginId: string) =>
  (await objectsOf(token, pluginId)).filter((object) => object.status !== "deleted").map(pathOf).sort()

/** The plugin ids the marketplace serves. */
const servedBy = async (token: string, marketplaceId: string) => {
  const page = ok(await marketplaces.listPlugins({ token, path: { marketplaceId }, query: { limit: "100" } }), 200)
  return page.items.map((item) => item.pluginId).sort()
}

/** The marketplace an apply made; throws, naming the apply, when it made none. */
const marketplaceOf = (applied: { readonly marketplaceId: string | null; readonly syncEvent: { readonly id: string } }) => {
  if (applied.marketplaceId === null) throw new Error(`the apply of sync ${applied.syncEvent.id} made no marketplace`)
  return applied.marketplaceId
}

/** Applies every candidate of the discovery at the head: the apply's answer (its sync queued, not waited for). */
const applyAll = async (token: string, instanceId: string) => {
  const path = { connectorInstanceId: instanceId }
  const discovery = ok(await connectorInstances.discover({ token, path }), 200).item
  const keys = discovery.discoveredPlugins.map((candidate) => candidate.key)
  return ok(await connectorInstances.applyDiscovery({ token, path, payload: { keys } }), 200).item
}

/** Applies every candidate and waits for the apply's sync, which must complete. */
const appliedAll = async (token: string, instanceId: string) => {
  const applied = await applyAll(token, instanceId)
  expect((await settled(token, applied.syncEvent.id)).status).toBe("completed")
  return applied
}

describe("a sync follows the marketplace", () => {
  // Twelve syncs one after another (27 s in a CI run): the default 30 s is not enough under load.
  it("takes metadata, renames, moves, new hooks, removals and returns; fails loudly on a broken marketplace.json and keeps the last good state", async () => {
    const { instance, repo, token } = await world.follow(files)
    const applied = await appliedAll(token, instance.id)
    const idOf = new Map<string, string>(applied.plugins.map((plugin) => [plugin.key, plugin.pluginId]))
    const ralphId = idOf.get("marketplace:plugins/ralph-wiggum")!
    const reviewId = idOf.get("marketplace:plugins/code-review")!
    const oldId = idOf.get("marketplace:plugins/old-tool")!
    const marketplaceId = marketplaceOf(applied)
    expect(await servedBy(token, marketplaceId)).toEqual([ralphId, reviewId, oldId].sort())

    // 1. Metadata: version, description, keywords and author in plugin.json.
    await repo.commitFiles({
      "plugins/code-review/.claude-plugin/plugin.json": json({
        name: "code-review",
        version: "1.1.0",
        description: "Reviews pull requests with five agents.",
        keywords: ["review", "pr"],
        author: { name: "Boris", email: "boris@example.com" }
      })
    }, "code-review 1.1.0")
    const bumped = await synced(token, instance.id)
    expect(bumped).toMatchObject({ status: "completed", summary: { outcome: "complete", followedPlugins: [{ pluginId: reviewId, change: "updated", name: "code-review" }] } })
    expect(await pluginOf(token, reviewId)).toMatchObject({
      description: "Reviews pull requests with five agents.",
      sourceMetadata: { version: "1.1.0", keywords: ["review", "pr"], author: "Boris", authorEmail: "boris@example.com", authorUrl: null }
    })

    // 2. A rename in place: same folder, new name.
    await repo.commitFiles({
      ...marketplace([{ ...ralph, name: "ralph-loop" }, review, old]),
      "plugins/ralph-wiggum/.claude-plugin/plugin.json": json({ name: "ralph-loop", version: "1.0.0" })
    }, "rename ralph-wiggum to ralph-loop")
    const renamed = await synced(token, instance.id)
    expect(renamed.summary!.followedPlugins).toEqual([{ pluginId: ralphId, change: "renamed", name: "ralph-loop", previousName: "ralph-wiggum", key: "marketplace:plugins/ralph-wiggum" }])
    expect(await pluginOf(token, ralphId)).toMatchObject({ name: "ralph-loop", status: "active" })

    // 3. A moved folder, same name: the same plugin, its components at the new paths, no second plugin.
    await repo.commitFiles({
      ...marketplace([{ ...ralph, name: "ralph-loop" }, review, { ...old, source: "./plugins/tools/old-tool" }]),
      "plugins/old-tool/.claude-plugin/plugin.json": null,
      "plugins/old-tool/agents/helper.md": null,
      "plugins/tools/old-tool/.claude-plugin/plugin.json": json({ name: "old-tool", version: "0.9.0" }),
      "plugins/tools/old-tool/agents/helper.md": "---\nname: helper\ndescription: Helps.\n---\nHelp.\n"
    }, "move old-tool")
    const moved = await synced(token, instance.id)
    expect(moved).toMatchObject({ status: "completed", summary: { importedPluginKeys: [] } })
    expect(moved.summary!.followedPlugins).toEqual([{ pluginId: oldId, change: "moved", name: "old-tool", previousName: null, key: "marketplace:plugins/tools/old-tool" }])
    expect(moved.summary).toMatchObject({ created: 1, deleted: 1 })
    expect(await pathsOf(token, oldId)).toEqual(["plugins/tools/old-tool/agents/helper.md"])
    const listed = ok(await plugins.list({ token, query: { limit: "100" } }), 200).items
    expect(listed.map((plugin) => plugin.name).sort()).toEqual(["code-review", "old-tool", "ralph-loop"])

    // 4. A new component kind in an existing plugin: imported by the same sync, with the files it carries.
    await repo.commitFiles({
      "plugins/code-review/hooks/hooks.json": json({ hooks: { Stop: [{ hooks: [{ type: "command", command: "bash ${CLAUDE_PLUGIN_ROOT}/hooks/check.sh" }] }] } }),
      "plugins/code-review/hooks/check.sh": "#!/bin/sh\nexit 0\n"
    }, "code-review: a hook")
    const hooked = await synced(token, instance.id)
    expect(hooked).toMatchObject({ status: "completed", summary: { created: 1, followedPlugins: [{ pluginId: reviewId, change: "updated" }] } })
    expect(await pathsOf(token, reviewId)).toEqual(["plugins/code-review/commands/review.md", "plugins/code-review/hooks/hooks.json"])

    // 5. An entry removed (its folder kept): the plugin leaves, archived, out of the marketplace, nothing served; its
    //    components stay as they were, as history.
    await repo.commitFiles(marketplace([{ ...ralph, name: "ralph-loop" }, review]), "drop old-tool")
    const dropped = await synced(token, instance.id)
    expect(dropped.summary!.followedPlugins).toEqual([{ pluginId: oldId, change: "left", name: "old-tool", previousName: null, key: "marketplace:plugins/tools/old-tool" }])
    expect(await pluginOf(token, oldId)).toMatchObject({ status: "archived", marketplaces: [] })
    expect(await pathsOf(token, oldId)).toEqual(["plugins/tools/old-tool/agents/helper.md"])
    expect(await servedBy(token, marketplaceId)).toEqual([ralphId, reviewId].sort())
    // Nothing more is followed for it while it is gone.
    await repo.commitFiles({ "README.md": "# Team tools\n" }, "readme")
    expect((await synced(token, instance.id)).summary!.followedPlugins).toEqual([])

    // 6. Listed again: it comes back whole, active, in the marketplace, the same components.
    await repo.commitFiles(marketplace([{ ...ralph, name: "ralph-loop" }, review, { ...old, source: "./plugins/tools/old-tool" }]), "old-tool is back")
    const back = await synced(token, instance.id)
    expect(back.summary).toMatchObject({ created: 0, deleted: 0 })
    expect(back.summary!.followedPlugins).toEqual([expect.objectContaining({ pluginId: oldId, change: "returned" })])
    expect(await pluginOf(token, oldId)).toMatchObject({ status: "active" })
    expect(await pathsOf(token, oldId)).toEqual(["plugins/tools/old-tool/agents/helper.md"])
    expect(await servedBy(token, marketplaceId)).toEqual([ralphId, reviewId, oldId].sort())

    // 7. A trailing comma: the sync fails with the file and the position; the catalog keeps the last good state.
    const good = await repo.head()
    await repo.commitFiles({ ".claude-plugin/marketplace.json": json({ name: "team-tools", plugins: [] }).replace("[]", "[{\"name\": \"x\", \"source\": \"./x\"},]") }, "oops")
    const broken = await synced(token, instance.id)
    expect(broken.status).toBe("failed")
    expect(broken.lastError).toContain(".claude-plugin/marketplace.json")
    expect(broken.lastError).toContain("`.claude-plugin/marketplace.json` is not valid JSON (line 3, column 46: ")
    expect(await servedBy(token, marketplaceId)).toEqual([ralphId, reviewId, oldId].sort())
    expect(await pluginOf(token, ralphId)).toMatchObject({ name: "ralph-loop", status: "active" })
    const instanceNow = ok(await connectorInstances.get({ token, path: { connectorInstanceId: instance.id } }), 200).item
    expect(instanceNow).toMatchObject({ lastSyncStatus: "failed" })
    expect(good).not.toBe(await repo.head())
    // The marketplace says since when it lists what the last good sync left, and why.
    const stale = ok(await marketplaces.get({ token, path: { marketplaceId } }), 200).item
    expect(stale).toMatchObject({ staleSince: broken.completedAt, lastSyncError: broken.lastError })
    const resolved = ok(await marketplaces.resolved({ token, path: { marketplaceId } }), 200).item
    expect(resolved.marketplace).toMatchObject({ staleSince: broken.completedAt })

    // Over 1 MiB: refused unread, the same way.
    await repo.commitFiles({
      ".claude-plugin/marketplace.json": json({ name: "team-tools", description: "x".repeat(1024 * 1024), plugins: [{ ...ralph, name: "ralph-loop" }, review] })
    }, "too large")
    const large = await synced(token, instance.id)
    expect(large).toMatchObject({ status: "failed", lastError: expect.stringContaining("`.claude-plugin/marketplace.json` is larger than 1 MiB") })
    // Still stale since the first failure; the error is the latest's.
    expect(ok(await marketplaces.get({ token, path: { marketplaceId } }), 200).item)
      .toMatchObject({ staleSince: broken.completedAt, lastSyncError: large.lastError })
    expect(await servedBy(token, marketplaceId)).toEqual([ralphId, reviewId, oldId].sort())

    // The repair syncs again.
    await repo.commitFiles(marketplace([{ ...ralph, name: "ralph-loop" }, review, { ...old, source: "./plugins/tools/old-tool" }]), "repair")
    expect(await synced(token, instance.id)).toMatchObject({ status: "completed", summary: { outcome: "complete", followedPlugins: [] } })
    expect(ok(await marketplaces.get({ token, path: { marketplaceId } }), 200).item).toMatchObject({ staleSince: null, lastSyncError: null })

    // 8. An invalid plugin.json: the plugin is kept as it was, and the sync is partial and says why.
    await repo.commitFiles({ "plugins/code-review/.claude-plugin/plugin.json": "{ \"name\": \"code-review\", }" }, "break code-review")
    const partial = await synced(token, instance.id)
    expect(partial).toMatchObject({ status: "completed", summary: { outcome: "partial", followedPlugins: [] } })
    expect(partial.summary!.warnings[0]).toMatch(/^Plugin "code-review" is kept as the last good sync left it: `plugins\/code-review\/\.claude-plugin\/plugin\.json` is not valid JSON/)
    expect(await pluginOf(token, reviewId)).toMatchObject({ status: "active", sourceMetadata: { version: "1.1.0" } })
    expect(await servedBy(token, marketplaceId)).toEqual([ralphId, reviewId, oldId].sort())
  }, 120_000)

  it("sync now right after apply answers the apply's sync of that commit: one sync, not two", async () => {
    // Enough commands that the apply's sync is still queued or running when "sync now" comes.
    const commands: GitRepo.Files = Object.fromEntries(Array.from({ length: 120 }, (_, n) => [`plugins/ralph-wiggum/commands/c-${n}.md`, `# Command ${n}\n`]))
    const { instance, token } = await world.follow({ ...files, ...commands })
    const applied = await applyAll(token, instance.id)
    const [answered] = ok(await connectorInstances.sync({ token, path: { connectorInstanceId: instance.id } }), 202).items
    expect(answered.id).toBe(applied.syncEvent.id)
    expect((await settled(token, applied.syncEvent.id)).status).toBe("completed")
    const events = ok(await connectorInstances.listSyncEvents({ token, path: { connectorInstanceId: instance.id }, query: { limit: "100" } }), 200).items
    expect(events.map((event) => event.id)).toEqual([applied.syncEvent.id])
  })

  it("two syncs of one target run one after the other, never interleaved", async () => {
    const commands = (version: number): GitRepo.Files =>
      Object.fromEntries(Array.from({ length: 120 }, (_, n) => [`plugins/ralph-wiggum/commands/c-${n}.md`, `# Command ${n}, version ${version}\n`]))
    const { instance, repo, target, token } = await world.follow({ ...files, ...commands(1) })
    await appliedAll(token, instance.id)

    // A new commit, then a full resync and a sync now of it at once: two events.
    await repo.commitFiles(commands(2), "version 2")
    const [resync, now] = await Promise.all([
      connectorTargets.resync({ token, path: { connectorTargetId: target.id } }),
      connectorInstances.sync({ token, path: { connectorInstanceId: instance.id } })
    ])
    const ids: Array<string> = [ok(resync, 202).item.id, ok(now, 202).items[0].id]
    expect(new Set(ids).size).toBe(2)
    const done = await Promise.all(ids.map((id) => settled(token, id)))
    expect(done.map((event) => event.status)).toEqual(["completed", "completed"])
    const [first, second] = [...done].sort((a, b) => Date.parse(a.startedAt!) - Date.parse(b.startedAt!))
    expect(Date.parse(second!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(first!.completedAt!))
    // Three syncs of 120 files each: past the default 30 s on a loaded machine (a run beside other work, stop 76).
  }, 120_000)
})

describe("plugin names, scoped as Claude Code scopes them (name@marketplace)", () => {
  it("a fork's plugins import beside the original's and a person's of the same name; a marketplace lists one plugin of a name; a kept plugin that joins the organization's own beside a namesake takes its id", async () => {
    const owner = await Http.owner(world.url)
    const token = owner.token
    const personal = ok(await plugins.create({ token, payload: { name: "code-review" } }), 201).item
    const original = await world.follow(files, { owner })
    const fork = await world.follow(files, { owner })
    const first = await appliedAll(token, original.instance.id)
    // Before: 409 plugin_exists, the person's code-review holding the name in the whole organization.
    const second = await appliedAll(token, fork.instance.id)
    const reviewOf = (applied: { plugins: ReadonlyArray<{ key: string; pluginId: string }> }) =>
      applied.plugins.find((plugin) => plugin.key === "marketplace:plugins/code-review")!.pluginId
    const names = ok(await plugins.list({ token, query: { limit: "100", q: "code-review" } }), 200).items
    expect(names.map((plugin) => [plugin.id, plugin.name]).sort()).toEqual(
      [[personal.id, "code-review"], [reviewOf(first), "code-review"], [reviewOf(second), "code-review"]].sort()
    )

    // Marketplace names stay unique in the organization (a Claude Code user registers one per name): the fork's is
    // told apart by its repository.
    expect(ok(await marketplaces.get({ token, path: { marketplaceId: marketplaceOf(second) } }), 200).item.name).toBe(`team-tools (${fork.fullName})`)

    // One marketplace lists one plugin of a name.
    const refused = await marketplaces.addPlugin({ token, path: { marketplaceId: marketplaceOf(first) }, payload: { pluginId: reviewOf(second) } })
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ error: "plugin_name_listed" })
    refusal(await marketplaces.addPlugin({ token, path: { marketplaceId: marketplaceOf(first) }, payload: { pluginId: personal.id } }), 409)

    // The original's code-review holds a person's config object, so removing the instance keeps it, untied: it joins
    // the organization's own plugins, where the person's holds the name, and takes its id after it.
    const held = ok(await configObjects.create({
      token,
      payload: { input: { objectType: "command", rawSourceText: "---\ndescription: Kept\n---\nKeep me.\n" }, pluginIds: [reviewOf(first)] }
    }), 201).item
    expect(held.id).toMatch(/^cob_/)
    ok(await connectorInstances.remove({ token, path: { connectorInstanceId: original.instance.id } }), 200)
    const kept = ok(await plugins.get({ token, path: { pluginId: reviewOf(first) } }), 200).item
    expect(kept.name).toBe(`code-review (${reviewOf(first)})`)
    // Three repositories applied and synced: past the default 30 s on a loaded machine (stop 76).
  }, 120_000)
})

describe("symbolic links, followed as a checkout has them", () => {
  it("a symlinked skill folder is a skill with its files, a linked file its target's content; a link that leaves its plugin's folder or the repository is said and left out", async () => {
    const linked: GitRepo.Files = {
      ".claude-plugin/marketplace.json": json({ name: "docs", owner: { name: "Acme" }, plugins: [{ name: "docs-kit", source: "./plugins/docs-kit" }] }),
      "plugins/docs-kit/.claude-plugin/plugin.json": json({ name: "docs-kit", version: "1.0.0" }),
      "plugins/docs-kit/shared/pdf/SKILL.md": "---\nname: pdf\ndescription: Fills PDF forms.\n---\nSee forms.md.\n",
      "plugins/docs-kit/shared/pdf/forms.md": "# Forms\n",
      "plugins/docs-kit/shared/guide.md": "---\ndescription: The guide\n---\nRead the guide.\n",
      "common/notes.md": "---\ndescription: Notes\n---\nShared notes.\n",
      "plugins/docs-kit/skills/pdf": { link: "../shared/pdf" },
      "plugins/docs-kit/commands/guide.md": { link: "../shared/guide.md" },
      "plugins/docs-kit/commands/notes.md": { link: "../../../common/notes.md" },
      "plugins/docs-kit/commands/secrets.md": { link: "../../../../etc/passwd" }
    }
    const { instance, token } = await world.follow(linked)
    const discovery = ok(await connectorInstances.discover({ token, path: { connectorInstanceId: instance.id } }), 200).item
    expect(discovery.warnings).toEqual(expect.arrayContaining([
      "`plugins/docs-kit/commands/secrets.md` is a link not followed: its target `../../../../etc/passwd` leaves the repository.",
      "`plugins/docs-kit/commands/notes.md` is a link not followed: it leads out of its plugin's folder, to `common/notes.md` (a plugin is installed as its folder alone)."
    ]))
    expect(discovery.discoveredPlugins[0]).toMatchObject({ key: "marketplace:plugins/docs-kit", supported: true, componentKinds: ["skill", "command"] })
    const applied = await appliedAll(token, instance.id)
    const pluginId = applied.plugins[0].pluginId
    expect(await pathsOf(token, pluginId)).toEqual(["plugins/docs-kit/commands/guide.md", "plugins/docs-kit/skills/pdf/SKILL.md"])

    // The skill carries the linked folder's file, the command its target's text.
    const objects = await objectsOf(token, pluginId)
    const skill = objects.find((object) => pathOf(object).endsWith("SKILL.md"))
    const command = objects.find((object) => pathOf(object).endsWith("guide.md"))
    if (skill === undefined || command === undefined) throw new Error(`the plugin's objects lack the skill or the command: ${objects.map(pathOf).join(", ")}`)
    expect(command.latestVersion.rawSourceText).toBe(linked["plugins/docs-kit/shared/guide.md"])
    const skillFiles = ok(await configObjects.listVersionFiles({ token, path: { configObjectId: skill.id, versionId: skill.latestVersion.id } }), 200)
    expect(skillFiles.items.map((item) => item.path)).toEqual(["skills/pdf/SKILL.md", "skills/pdf/forms.md"])
  })
})

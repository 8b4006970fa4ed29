/**
 * Auto-import of new plugins during sync (`instanceConfigJson.autoImportNewPlugins`), through HTTP against FakeGitHub
 * serving real git repositories: a plugin folder committed after discovery was applied becomes a plugin whose files
 * the same sync materializes; a candidate left out at apply or whose plugin was deleted is not imported; the setting
 * turned off or an instance never applied import nothing; a person's plugin of the same name does not stop an import;
 * a candidate whose manifest does not read is imported by a later sync, and meanwhile the sync of the existing
 * mappings completes.
 */
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import type * as GitRepo from "../../../../packages/testkit/src/GitRepo.js"
import * as ConnectorWorld from "../support/ConnectorWorld.js"
import { describe, expect, it } from "vitest"

const world = ConnectorWorld.forFile()
const { settled, sql } = world
const { configObjects, connectorInstances, connectorTargets, plugins } = calls(() => world.url)
const json = (value: unknown) => JSON.stringify(value)

/** A plugin folder: its manifest and one command. */
const pluginFiles = (name: string): GitRepo.Files => ({
  [`plugins/${name}/.claude-plugin/plugin.json`]: json({ name, description: `The ${name} plugin.` }),
  [`plugins/${name}/commands/${name}.md`]: `# ${name}\n`
})

/** A repository of two plugins on FakeGitHub, read with a token of its own, and an instance following main. */
const setup = () => world.follow({ ...pluginFiles("one"), ...pluginFiles("two"), "README.md": "# plugins" })

/** Tree listings FakeGitHub served for a repository. */
const treeReads = (fullName: string) => world.github.requests.filter((request) => request.path.startsWith(`/repos/${fullName}/git/trees/`)).length

/** Applies discovery with the given keys and waits for the apply's sync. */
const applied = async (token: string, instanceId: string, keys: Array<string>) => {
  const item = ok(await connectorInstances.applyDiscovery({ token, path: { connectorInstanceId: instanceId }, payload: { keys } }), 200).item
  const event = await settled(token, item.syncEvent.id)
  expect(event).toMatchObject({ status: "completed", summary: { importedPluginKeys: [] } })
  return item
}

/** The instance's plugins made for a candidate, deleted ones too, by key. */
const pluginsOf = (organizationId: string, instanceId: string) =>
  sql((sql) =>
    sql<{ id: string; name: string; key: string; deleted: boolean; createdBy: string | null }>`
      SELECT id, name, connector_candidate_key AS key, deleted_at IS NOT NULL AS deleted, created_by_membership_id AS created_by
      FROM plugins WHERE organization_id = ${organizationId} AND connector_instance_id = ${instanceId} ORDER BY connector_candidate_key, created_at`
  )

/** The paths of the plugin's config objects. */
const filesOf = async (token: string, pluginId: string) => {
  const page = ok(await plugins.listConfigObjects({ token, path: { pluginId }, query: { limit: "100" } }), 200)
  const paths = await Promise.all(page.items.map(async ({ configObjectId }) => {
    const { item } = ok(await configObjects.get({ token, path: { configObjectId } }), 200)
    if (item.currentRelativePath === null) throw new Error(`config object ${configObjectId} has no path: ${JSON.stringify(item)}`)
    return item.currentRelativePath
  }))
  return paths.sort()
}

describe("auto-import of new plugins", () => {
  it("imports a plugin committed after apply, with its files, in the same sync; never one left out or deleted", async () => {
    const { fullName, owner, repo, token, instance } = await setup()
    await applied(token, instance.id, ["manifest:plugins/one"])
    expect((await pluginsOf(owner.organization.id, instance.id)).map((plugin) => plugin.key)).toEqual(["manifest:plugins/one"])

    await repo.commitFiles(pluginFiles("three"), "add three")
    const trees = treeReads(fullName)
    const synced = await world.synced(token, instance.id)
    // The discovery's listing of the commit serves the plan too.
    expect(treeReads(fullName) - trees).toBe(1)
    expect(synced).toMatchObject({
      status: "completed",
      summary: { created: 1, importedPluginKeys: ["manifest:plugins/three"], warnings: [] }
    })
    // "two" was offered at apply and left out: it stays out.
    const made = await pluginsOf(owner.organization.id, instance.id)
    expect(made.map((plugin) => plugin.key)).toEqual(["manifest:plugins/one", "manifest:plugins/three"])
    const three = made[1]!
    expect(three).toMatchObject({ name: "three", deleted: false, createdBy: instance.createdByOrgMembershipId })
    const shown = ok(await plugins.get({ token, path: { pluginId: three.id } }), 200).item
    expect(shown).toMatchObject({ name: "three", description: "The three plugin." })
    expect(await filesOf(token, three.id)).toEqual(["plugins/three/commands/three.md"])
    // The creator of the instance manages it, as they would had they applied it.
    const grants = ok(await plugins.pluginListAccess({ token, path: { pluginId: three.id } }), 200).items
    expect(grants).toEqual([expect.objectContaining({ orgMembershipId: owner.membership.id, role: "manager" })])

    // A full sync of the same commit imports nothing more.
    const target = ok(await connectorInstances.listTargets({ token, path: { connectorInstanceId: instance.id } }), 200).items[0]
    const resynced = await settled(token, ok(await connectorTargets.resync({ token, path: { connectorTargetId: target.id } }), 202).item.id)
    expect(resynced).toMatchObject({ status: "completed", summary: { importedPluginKeys: [] } })
    expect(await pluginsOf(owner.organization.id, instance.id)).toHaveLength(2)

    // A plugin a person deleted is not imported again by a later sync (apply brings it back).
    ok(await plugins.delete({ token, path: { pluginId: three.id } }), 200)
    await repo.commitFiles({ "plugins/three/commands/more.md": "# more\n" }, "more")
    const later = await world.synced(token, instance.id)
    expect(later).toMatchObject({ status: "completed", summary: { importedPluginKeys: [] } })
    expect((await pluginsOf(owner.organization.id, instance.id)).filter((plugin) => !plugin.deleted).map((plugin) => plugin.key)).toEqual(["manifest:plugins/one"])
  })

  it("imports nothing while autoImportNewPlugins is false, and what is new once it is true again", async () => {
    const { owner, repo, token, instance } = await setup()
    await applied(token, instance.id, ["manifest:plugins/one", "manifest:plugins/two"])
    ok(await connectorInstances.update({ token, path: { connectorInstanceId: instance.id }, payload: { config: { autoImportNewPlugins: false } } }), 200)

    await repo.commitFiles(pluginFiles("three"), "add three")
    const off = await world.synced(token, instance.id)
    expect(off).toMatchObject({ status: "completed", summary: { created: 0, importedPluginKeys: [] } })
    expect(await pluginsOf(owner.organization.id, instance.id)).toHaveLength(2)

    ok(await connectorInstances.update({ token, path: { connectorInstanceId: instance.id }, payload: { config: {} } }), 200)
    await repo.commitFiles({ "README.md": "# plugins, again" }, "touch")
    const on = await world.synced(token, instance.id)
    expect(on).toMatchObject({ status: "completed", summary: { created: 1, importedPluginKeys: ["manifest:plugins/three"] } })
  })

  it("imports nothing for an instance discovery was never applied to", async () => {
    const { owner, repo, token, instance, target } = await setup()
    ok(await connectorTargets.createMapping({
      token,
      path: { connectorTargetId: target.id },
      payload: { mappingKind: "path", selector: "plugins/one/commands/**", objectType: "command" }
    }), 201)
    await repo.commitFiles(pluginFiles("three"), "add three")
    const synced = await world.synced(token, instance.id)
    expect(synced).toMatchObject({ status: "completed", summary: { created: 1, importedPluginKeys: [], warnings: [] } })
    expect(await pluginsOf(owner.organization.id, instance.id)).toEqual([])
  })

  it("a plugin a person made with the same name does not stop the import: the repository's is imported beside it", async () => {
    const { owner, repo, token, instance } = await setup()
    await applied(token, instance.id, ["manifest:plugins/one"])
    const personal = ok(await plugins.create({ token, payload: { name: "Three", description: "made by hand" } }), 201).item
    await repo.commitFiles({ ...pluginFiles("three"), "plugins/one/commands/new.md": "# new\n" }, "add three")
    const synced = await world.synced(token, instance.id)
    // Names are unique within a repository's plugins, as within a Claude Code marketplace (docs/connectors.md).
    expect(synced).toMatchObject({ status: "completed", summary: { created: 2, importedPluginKeys: ["manifest:plugins/three"], warnings: [] } })
    const imported = (await pluginsOf(owner.organization.id, instance.id)).find((plugin) => plugin.key === "manifest:plugins/three")!
    expect(imported).toMatchObject({ name: "three", deleted: false })
    expect(imported.id).not.toBe(personal.id)
  })

  it("a new plugin whose manifest cannot be read is not imported, the existing mappings still sync; fixed, it is", async () => {
    const { owner, repo, token, instance } = await setup()
    await applied(token, instance.id, ["manifest:plugins/one"])
    await repo.commitFiles({
      ...pluginFiles("three"),
      "plugins/three/.claude-plugin/plugin.json": "{ not json",
      "plugins/one/commands/new.md": "# new\n"
    }, "add three, broken")
    const synced = await world.synced(token, instance.id)
    expect(synced).toMatchObject({ status: "completed", summary: { created: 1, importedPluginKeys: [], warnings: [] } })
    const [one] = await pluginsOf(owner.organization.id, instance.id)
    expect(await filesOf(token, one!.id)).toEqual(["plugins/one/commands/new.md", "plugins/one/commands/one.md"])

    // Not a decision about the candidate: once its manifest reads, a sync imports it.
    await repo.commitFiles(pluginFiles("three"), "fix three")
    const fixed = await world.synced(token, instance.id)
    expect(fixed).toMatchObject({ status: "completed", summary: { created: 1, importedPluginKeys: ["manifest:plugins/three"] } })
  })
})

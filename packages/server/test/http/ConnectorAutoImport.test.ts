/**
 * Auto-import of new plugins during sync (`instanceConfigJson.autoImportNewPlugins`), through HTTP against FakeGitHub
 * serving real git repositories: a plugin folder committed after discovery was applied becomes a plugin whose files
 * the same sync materializes; a candidate left out at apply or whose plugin was deleted is not imported; the setting
 * turned off or an instance never applied import nothing; a person's plugin of the same name does not stop an import;
 * a candidate whose manifest does not read is imported by a later sync, and meanwhile the sync of the existing
 * mappings completes.
 */
import * as SqlClient from "effect/sql/SqlClient"
import * as Connectors from "../../../../packages/testkit/src/Connectors.js"
import * as FakeGitHub from "../../../../packages/testkit/src/FakeGitHub.js"
import * as GitRepo from "../../../../packages/testkit/src/GitRepo.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
let fake: FakeGitHub.FakeGitHub
const cleanup: Array<() => Promise<void>> = []

beforeAll(async () => {
  fake = await FakeGitHub.start()
  cleanup.push(() => fake.close())
  server = await TestServer.startSharingDatabase({ codehostApiUrl: fake.url })
  cleanup.push(() => server.close())
}, 60_000)
afterAll(async () => {
  for (const step of cleanup.reverse()) await step()
})

const { del, get, patch, post } = Http.verbs(() => server.url)
const sql = <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => server.sql(use)
const ok = Http.expectStatus
const json = (value: unknown) => JSON.stringify(value)

/** A plugin folder: its manifest and one command. */
const pluginFiles = (name: string): GitRepo.Files => ({
  [`plugins/${name}/.claude-plugin/plugin.json`]: json({ name, description: `The ${name} plugin.` }),
  [`plugins/${name}/commands/${name}.md`]: `# ${name}\n`
})

/** A repository of two plugins on FakeGitHub, read with a token of its own, and an instance following main. */
const setup = async () => {
  const followed = await Connectors.followRepository({
    url: server.url,
    github: fake,
    files: { ...pluginFiles("one"), ...pluginFiles("two"), "README.md": "# plugins" }
  })
  cleanup.push(() => followed.repo.remove())
  return followed
}

/** Tree listings FakeGitHub served for a repository. */
const treeReads = (fullName: string) => fake.requests.filter((request) => request.path.startsWith(`/repos/${fullName}/git/trees/`)).length

/** Polls the event until it is no longer queued or running. */
const settled = (token: string, eventId: string) => Connectors.settled(server.url, token, eventId)

/** Applies discovery with the given keys and waits for the apply's sync. */
const applied = async (token: string, instanceId: string, keys: Array<string>) => {
  const item = ok("apply", await post(`/v1/connector-instances/${instanceId}/discovery/apply`, { token, body: { keys } }), 200).item
  const event = await settled(token, item.syncEvent.id)
  expect(event).toMatchObject({ status: "completed", summary: { importedPluginKeys: [] } })
  return item
}

/** "Sync now" of the instance's one target, settled. */
const syncNow = async (token: string, instanceId: string) => {
  const [event] = ok("sync", await post(`/v1/connector-instances/${instanceId}/sync`, { token }), 202).items
  return settled(token, event.id)
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
  const page = ok("plugin objects", await get(`/v1/plugins/${pluginId}/config-objects?limit=100`, { token }), 200)
  const paths = await Promise.all(page.items.map(async (item: { configObjectId: string }) =>
    ok("object", await get(`/v1/config-objects/${item.configObjectId}`, { token }), 200).item.currentRelativePath as string))
  return paths.sort()
}

describe("auto-import of new plugins", () => {
  it("imports a plugin committed after apply, with its files, in the same sync; never one left out or deleted", async () => {
    const { fullName, org, repo, token, instance } = await setup()
    await applied(token, instance.id, ["manifest:plugins/one"])
    expect((await pluginsOf(org.organization.id, instance.id)).map((plugin) => plugin.key)).toEqual(["manifest:plugins/one"])

    await repo.commitFiles(pluginFiles("three"), "add three")
    const trees = treeReads(fullName)
    const synced = await syncNow(token, instance.id)
    // The discovery's listing of the commit serves the plan too.
    expect(treeReads(fullName) - trees).toBe(1)
    expect(synced).toMatchObject({
      status: "completed",
      summary: { created: 1, importedPluginKeys: ["manifest:plugins/three"], warnings: [] }
    })
    // "two" was offered at apply and left out: it stays out.
    const plugins = await pluginsOf(org.organization.id, instance.id)
    expect(plugins.map((plugin) => plugin.key)).toEqual(["manifest:plugins/one", "manifest:plugins/three"])
    const three = plugins[1]!
    expect(three).toMatchObject({ name: "three", deleted: false, createdBy: instance.createdByOrgMembershipId })
    const shown = ok("plugin", await get(`/v1/plugins/${three.id}`, { token }), 200).item
    expect(shown).toMatchObject({ name: "three", description: "The three plugin." })
    expect(await filesOf(token, three.id)).toEqual(["plugins/three/commands/three.md"])
    // The creator of the instance manages it, as they would had they applied it.
    const grants = ok("grants", await get(`/v1/plugins/${three.id}/access`, { token }), 200).items
    expect(grants).toEqual([expect.objectContaining({ orgMembershipId: org.membership.id, role: "manager" })])

    // A full sync of the same commit imports nothing more.
    const target = ok("targets", await get(`/v1/connector-instances/${instance.id}/targets`, { token }), 200).items[0]
    const resynced = await settled(token, ok("resync", await post(`/v1/connector-targets/${target.id}/resync`, { token }), 202).item.id)
    expect(resynced).toMatchObject({ status: "completed", summary: { importedPluginKeys: [] } })
    expect(await pluginsOf(org.organization.id, instance.id)).toHaveLength(2)

    // A plugin a person deleted is not imported again by a later sync (apply brings it back).
    ok("delete", await del(`/v1/plugins/${three.id}`, { token }), 200)
    await repo.commitFiles({ "plugins/three/commands/more.md": "# more\n" }, "more")
    const later = await syncNow(token, instance.id)
    expect(later).toMatchObject({ status: "completed", summary: { importedPluginKeys: [] } })
    expect((await pluginsOf(org.organization.id, instance.id)).filter((plugin) => !plugin.deleted).map((plugin) => plugin.key)).toEqual(["manifest:plugins/one"])
  })

  it("imports nothing while autoImportNewPlugins is false, and what is new once it is true again", async () => {
    const { org, repo, token, instance } = await setup()
    await applied(token, instance.id, ["manifest:plugins/one", "manifest:plugins/two"])
    ok("config", await patch(`/v1/connector-instances/${instance.id}`, { token, body: { config: { autoImportNewPlugins: false } } }), 200)

    await repo.commitFiles(pluginFiles("three"), "add three")
    const off = await syncNow(token, instance.id)
    expect(off).toMatchObject({ status: "completed", summary: { created: 0, importedPluginKeys: [] } })
    expect(await pluginsOf(org.organization.id, instance.id)).toHaveLength(2)

    ok("config", await patch(`/v1/connector-instances/${instance.id}`, { token, body: { config: {} } }), 200)
    await repo.commitFiles({ "README.md": "# plugins, again" }, "touch")
    const on = await syncNow(token, instance.id)
    expect(on).toMatchObject({ status: "completed", summary: { created: 1, importedPluginKeys: ["manifest:plugins/three"] } })
  })

  it("imports nothing for an instance discovery was never applied to", async () => {
    const { org, repo, token, instance, target } = await setup()
    ok("mapping", await post(`/v1/connector-targets/${target.id}/mappings`, {
      token,
      body: { mappingKind: "path", selector: "plugins/one/commands/**", objectType: "command" }
    }), 201)
    await repo.commitFiles(pluginFiles("three"), "add three")
    const synced = await syncNow(token, instance.id)
    expect(synced).toMatchObject({ status: "completed", summary: { created: 1, importedPluginKeys: [], warnings: [] } })
    expect(await pluginsOf(org.organization.id, instance.id)).toEqual([])
  })

  it("a plugin a person made with the same name does not stop the import: the repository's is imported beside it", async () => {
    const { org, repo, token, instance } = await setup()
    await applied(token, instance.id, ["manifest:plugins/one"])
    const personal = ok("plugin", await post("/v1/plugins", { token, body: { name: "Three", description: "made by hand" } }), 201).item
    await repo.commitFiles({ ...pluginFiles("three"), "plugins/one/commands/new.md": "# new\n" }, "add three")
    const synced = await syncNow(token, instance.id)
    // Names are unique within a repository's plugins, as within a Claude Code marketplace (docs/connectors.md).
    expect(synced).toMatchObject({ status: "completed", summary: { created: 2, importedPluginKeys: ["manifest:plugins/three"], warnings: [] } })
    const imported = (await pluginsOf(org.organization.id, instance.id)).find((plugin) => plugin.key === "manifest:plugins/three")!
    expect(imported).toMatchObject({ name: "three", deleted: false })
    expect(imported.id).not.toBe(personal.id)
  })

  it("a new plugin whose manifest cannot be read is not imported, the existing mappings still sync; fixed, it is", async () => {
    const { org, repo, token, instance } = await setup()
    await applied(token, instance.id, ["manifest:plugins/one"])
    await repo.commitFiles({
      ...pluginFiles("three"),
      "plugins/three/.claude-plugin/plugin.json": "{ not json",
      "plugins/one/commands/new.md": "# new\n"
    }, "add three, broken")
    const synced = await syncNow(token, instance.id)
    expect(synced).toMatchObject({ status: "completed", summary: { created: 1, importedPluginKeys: [], warnings: [] } })
    const [one] = await pluginsOf(org.organization.id, instance.id)
    expect(await filesOf(token, one!.id)).toEqual(["plugins/one/commands/new.md", "plugins/one/commands/one.md"])

    // Not a decision about the candidate: once its manifest reads, a sync imports it.
    await repo.commitFiles(pluginFiles("three"), "fix three")
    const fixed = await syncNow(token, instance.id)
    expect(fixed).toMatchObject({ status: "completed", summary: { created: 1, importedPluginKeys: ["manifest:plugins/three"] } })
  })
})

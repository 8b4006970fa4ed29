/**
 * The Plugins group through HTTP: the resource with its member count, marketplaces and manifest, names, soft
 * delete and restore, memberships of config objects, access (grants, through marketplaces, other organizations),
 * and keyset paging.
 *
 * Config objects are made through the Config objects group; only bulk rows for paging are written with SQL.
 */
import * as SqlClient from "effect/sql/SqlClient"
import type { ObjectType } from "@orgplane/schema"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import { typeid } from "typeid-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/** The server shares its database with the tests, so they can write what no endpoint writes yet. */
let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  server = await TestServer.startSharingDatabase()
}, 60_000)
afterAll(() => server.close())

const { post } = Http.verbs(() => server.url)
const sql = <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => server.sql(use)

/** Effect 4's `sql.insert` takes a non-empty array of rows. */
const nonEmpty = <A>(rows: ReadonlyArray<A>): Arr.NonEmptyReadonlyArray<A> => {
  if (!Arr.isReadonlyArrayNonEmpty(rows)) throw new Error("no rows to insert")
  return rows
}

const api = calls(() => server.url)

const typeId = (prefix: Parameters<typeof typeid>[0]) => typeid(prefix).toString()

const slug = (title: string) => title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")

/** What a config object of `type` titled `title` is made from. */
const sourceOf = (type: typeof ObjectType.Type, title: string, revision = 1): Record<string, unknown> => {
  switch (type) {
    case "skill":
    case "agent":
    case "command":
      return { rawSourceText: `---\nname: ${slug(title)}\ndescription: ${title} (revision ${revision}).\n---\n# ${title}\n` }
    case "mcp":
      return { normalizedPayloadJson: { mcpServers: { [slug(title)]: { url: `https://example.com/mcp/${revision}` } } }, metadata: { title } }
    case "hook":
      return { normalizedPayloadJson: { name: slug(title), on: ["pre_commit"], revision } }
    default:
      return { rawSourceText: `${title} ${revision}`, metadata: { title } }
  }
}

/** A config object made through the API, with `versions` versions, then archived or deleted when asked. */
const configObject = async (
  token: string,
  input: { readonly type: typeof ObjectType.Type; readonly title: string; readonly status?: "active" | "archived" | "deleted"; readonly versions?: number }
): Promise<{ id: string; latestVersionId: string; title: string }> => {
  let item = ok(await api.configObjects.create({ token, payload: { input: { objectType: input.type, ...sourceOf(input.type, input.title) } } }), 201).item
  for (let revision = 2; revision <= (input.versions ?? 1); revision++) {
    const version = ok(await api.configObjects.createVersion({ path: { configObjectId: item.id }, token, payload: { input: sourceOf(input.type, input.title, revision) } }), 201)
    item = { ...item, latestVersion: version.item.latestVersion ?? version.item }
  }
  if (input.status === "archived") ok(await api.configObjects.archive({ path: { configObjectId: item.id }, token }), 200)
  if (input.status === "deleted") ok(await api.configObjects.delete({ path: { configObjectId: item.id }, token }), 200)
  const read = ok(await api.configObjects.get({ path: { configObjectId: item.id }, token }), 200).item
  return { id: read.id, latestVersionId: read.latestVersion.id, title: read.title }
}

/** Plugins written in one statement, each with its creator's manager grant (as creating them through the API does). */
const bulkPlugins = (organizationId: string, creator: string, names: ReadonlyArray<string>) =>
  sql((sql) =>
    Effect.gen(function*() {
      const at = new Date()
      const ids = names.map(() => typeId("plg"))
      yield* sql`INSERT INTO plugins ${
        sql.insert(nonEmpty(names.map((name, i) => ({
          id: ids[i]!,
          organization_id: organizationId,
          name,
          description: "",
          status: "active",
          created_by_membership_id: creator,
          created_at: at,
          updated_at: at
        }))))
      }`
      yield* sql`INSERT INTO plugin_grants ${
        sql.insert(nonEmpty(ids.map((id) => ({
          id: typeId("pag"),
          organization_id: organizationId,
          plugin_id: id,
          membership_id: creator,
          org_wide: false,
          role: "manager",
          created_by_membership_id: creator,
          created_at: at
        }))))
      }`
      return ids
    })
  )

const newPlugin = async (token: string, name = `Plugin ${Math.random().toString(36).slice(2, 10)}`, description?: string) =>
  ok(await api.plugins.create({ token, payload: description === undefined ? { name } : { name, description } }), 201).item

const newMarketplace = async (token: string, name = `Market ${Math.random().toString(36).slice(2, 10)}`) =>
  ok(await api.marketplaces.create({ token, payload: { name } }), 201).item

const pluginFields = [
  "createdAt",
  "createdByOrgMembershipId",
  "deletedAt",
  "description",
  "extension",
  "id",
  "marketplaces",
  "memberCount",
  "name",
  "organizationId",
  "skippedFiles",
  "sourceMetadata",
  "status",
  "updatedAt"
]
const manifestFields = ["contributions", "description", "id", "lifecycle", "name", "resources", "schemaVersion", "setup", "source"]
const membershipFields = [
  "configObject",
  "configObjectId",
  "connectorMappingId",
  "createdAt",
  "createdByOrgMembershipId",
  "id",
  "membershipSource",
  "pluginId",
  "removedAt"
]
const grantFields = ["createdAt", "createdByOrgMembershipId", "id", "orgMembershipId", "orgWide", "removedAt", "role", "teamId"]

const keys = (value: object) => Object.keys(value).sort()

describe("plugins", () => {
  it("are created by members, who then manage them; read with their member count, marketplaces and manifest", async () => {
    const org = await Http.staffed(server.url)
    const created = await api.plugins.create({ token: org.member.token, payload: { name: "  Review kit ", description: "Code review helpers" } })
    expect(created.status).toBe(201)
    expect(ok(created, 201).ok).toBe(true)
    const plugin = ok(created, 201).item
    expect(keys(plugin)).toEqual(pluginFields)
    expect(plugin.id).toMatch(/^plg_[0-7][0-9a-z]{25}$/)
    expect(plugin).toMatchObject({
      organizationId: org.organizationId,
      name: "Review kit",
      description: "Code review helpers",
      status: "active",
      createdByOrgMembershipId: org.member.membership.id,
      deletedAt: null,
      memberCount: 0,
      marketplaces: [],
      // A plugin people made has no repository behind it.
      sourceMetadata: null,
      skippedFiles: []
    })
    expect(keys(plugin.extension)).toEqual(["description", "id", "manifest", "name"])
    expect(keys(plugin.extension.manifest)).toEqual(manifestFields)
    expect(plugin.extension.manifest).toEqual({
      schemaVersion: 1,
      id: plugin.id,
      name: "Review kit",
      description: "Code review helpers",
      source: { trusted: true, reference: `orgplane:plugin/${plugin.id}` },
      resources: [],
      contributions: [],
      setup: {},
      lifecycle: { status: "active", updatedAt: plugin.updatedAt }
    })

    // The creator got a manager grant; reading needs viewer access, which another member does not have.
    const grants = ok(await api.plugins.pluginListAccess({ path: { pluginId: plugin.id }, token: org.member.token }), 200)
    expect(grants.items).toHaveLength(1)
    expect(grants.items[0]).toMatchObject({ orgMembershipId: org.member.membership.id, role: "manager", removedAt: null })
    const read = await api.plugins.get({ path: { pluginId: plugin.id }, token: org.member.token })
    expect(read.status).toBe(200)
    expect(read.body).toEqual({ item: plugin })
    expect((await api.plugins.get({ path: { pluginId: plugin.id }, token: org.admin.token })).body).toEqual({ item: plugin })
    const other = await Http.join(server.url, org.owner.token, "member", "Other")
    const refused = await api.plugins.get({ path: { pluginId: plugin.id }, token: other.token })
    expect(refused.status).toBe(403)
    expect(refused.body).toEqual({ reason: "insufficient_access", message: "Missing viewer access for plugin." })
    expect(ok(await api.plugins.list({ token: other.token }), 200).items).toEqual([])

    const updated = await api.plugins.update({ path: { pluginId: plugin.id }, token: org.member.token, payload: { description: "Reviews" } })
    expect(updated.status).toBe(200)
    expect(ok(updated, 200).ok).toBe(true)
    expect(ok(updated, 200).item).toMatchObject({ name: "Review kit", description: "Reviews" })
    expect(ok(updated, 200).item.extension.manifest.description).toBe("Reviews")
    expect((await api.plugins.update({ path: { pluginId: plugin.id }, token: org.member.token, payload: {} })).status).toBe(400)
  })

  it("answer 409 plugin_exists for a name another plugin of the organization has, whatever its case; deleted ones free theirs", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const first = await newPlugin(org.member.token, "Deploy")
    const duplicate = await api.plugins.create({ token: org.admin.token, payload: { name: "DEPLOY" } })
    expect(duplicate.status).toBe(409)
    expect(duplicate.body).toEqual({ error: "plugin_exists", message: 'The organization already has a plugin named "DEPLOY".' })
    const second = await newPlugin(org.member.token, "Release")
    const renamed = await api.plugins.update({ path: { pluginId: second.id }, token: org.member.token, payload: { name: "deploy" } })
    expect(renamed.status).toBe(409)
    expect(renamed.body).toMatchObject({ error: "plugin_exists" })
    expect(ok(await api.plugins.get({ path: { pluginId: second.id }, token: org.member.token }), 200).item.name).toBe("Release")
    expect((await api.plugins.create({ token: other.token, payload: { name: "Deploy" } })).status).toBe(201)

    // A deleted plugin's name is free again; restoring it then conflicts.
    ok(await api.plugins.delete({ path: { pluginId: first.id }, token: org.member.token }), 200)
    const reused = await newPlugin(org.member.token, "deploy")
    const restore = await api.plugins.restore({ path: { pluginId: first.id }, token: org.member.token })
    expect(restore.status).toBe(409)
    expect(restore.body).toMatchObject({ error: "plugin_exists" })
    ok(await api.plugins.delete({ path: { pluginId: reused.id }, token: org.member.token }), 200)
    expect(ok(await api.plugins.restore({ path: { pluginId: first.id }, token: org.member.token }), 200).item.status).toBe("active")
  })

  it("are soft-deleted, archived and restored by managers; deleted ones stay readable and refuse changes", async () => {
    const org = await Http.staffed(server.url)
    const plugin = await newPlugin(org.member.token, "Lifecycle")
    const editor = await Http.join(server.url, org.owner.token, "member", "Editor")
    ok(await api.plugins.pluginGrant({ path: { pluginId: plugin.id }, token: org.member.token, payload: { orgMembershipId: editor.membership.id, role: "editor" } }), 201)
    for (const path of ["archive", "restore"]) {
      const refused = await post(`/v1/plugins/${plugin.id}/${path}`, { token: editor.token })
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual({ reason: "insufficient_access", message: "Missing manager access for plugin." })
    }
    expect((await api.plugins.delete({ path: { pluginId: plugin.id }, token: editor.token })).status).toBe(403)

    const archived = await api.plugins.archive({ path: { pluginId: plugin.id }, token: org.member.token })
    expect(archived.status).toBe(200)
    expect(ok(archived, 200).item).toMatchObject({ status: "archived", deletedAt: null })
    expect(ok(archived, 200).item.extension.manifest.lifecycle.status).toBe("archived")
    expect(ok(await api.plugins.list({ token: org.member.token }), 200).items.map((p) => p.id)).toEqual([plugin.id])

    const deleted = await api.plugins.delete({ path: { pluginId: plugin.id }, token: org.member.token })
    expect(deleted.status).toBe(200)
    expect(ok(deleted, 200).ok).toBe(true)
    expect(ok(deleted, 200).item).toMatchObject({ status: "deleted" })
    expect(ok(deleted, 200).item.deletedAt).not.toBeNull()
    const again = await api.plugins.delete({ path: { pluginId: plugin.id }, token: org.member.token })
    expect(again.status).toBe(200)
    expect(ok(again, 200).item).toEqual(ok(deleted, 200).item)

    const read = ok(await api.plugins.get({ path: { pluginId: plugin.id }, token: org.member.token }), 200)
    expect(read.item.status).toBe("deleted")
    const update = await api.plugins.update({ path: { pluginId: plugin.id }, token: editor.token, payload: { name: "Changed" } })
    expect(update.status).toBe(409)
    expect(update.body).toEqual({ error: "plugin_deleted", message: "The plugin is deleted; restore it first." })
    expect(ok(await api.plugins.list({ token: org.member.token }), 200).items).toEqual([])
    expect(ok(await api.plugins.list({ query: { includeDeleted: "true" }, token: org.member.token }), 200).items.map((p) => p.id)).toEqual([plugin.id])
    expect(ok(await api.plugins.list({ query: { status: "deleted" }, token: org.member.token }), 200).items.map((p) => p.id)).toEqual([plugin.id])
    expect(ok(await api.plugins.list({ query: { status: "active" }, token: org.member.token }), 200).items).toEqual([])

    const restored = await api.plugins.restore({ path: { pluginId: plugin.id }, token: org.member.token })
    expect(restored.status).toBe(200)
    expect(ok(restored, 200).item).toMatchObject({ status: "active", deletedAt: null })
    // The creator's grant survived the round trip.
    expect(ok(await api.plugins.pluginListAccess({ path: { pluginId: plugin.id }, token: org.member.token }), 200).items).toHaveLength(2)
  })

  it("hold config objects: added by editors who can view them, listed in order with their objects, in the manifest", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const plugin = await newPlugin(org.admin.token, "Bundle")
    const mcp = await configObject(org.admin.token, { type: "mcp", title: "Search server", versions: 2 })
    const skill = await configObject(org.admin.token, { type: "skill", title: "Review" })
    const archived = await configObject(org.admin.token, { type: "agent", title: "Old agent", status: "archived" })
    const agent = await configObject(org.admin.token, { type: "agent", title: "Planner" })
    const deleted = await configObject(org.admin.token, { type: "skill", title: "Gone", status: "deleted" })
    const foreign = await configObject(other.token, { type: "skill", title: "Theirs" })

    const added = await api.plugins.addConfigObject({ path: { pluginId: plugin.id }, token: org.admin.token, payload: { configObjectId: mcp.id } })
    expect(added.status).toBe(201)
    expect(ok(added, 201).ok).toBe(true)
    expect(keys(ok(added, 201).item)).toEqual(membershipFields)
    expect(ok(added, 201).item).toMatchObject({
      pluginId: plugin.id,
      configObjectId: mcp.id,
      membershipSource: "manual",
      connectorMappingId: null,
      createdByOrgMembershipId: org.admin.membership.id,
      removedAt: null
    })
    expect(ok(added, 201).item.id).toMatch(/^pco_/)
    expect(mcp.title).toBe("Search server")
    expect(ok(added, 201).item.configObject).toMatchObject({ id: mcp.id, objectType: "mcp", title: "Search server" })
    expect(ok(added, 201).item.configObject.latestVersion).toMatchObject({ id: mcp.latestVersionId, number: 2 })
    for (const object of [skill, archived, agent]) {
      ok(await api.plugins.addConfigObject({ path: { pluginId: plugin.id }, token: org.admin.token, payload: { configObjectId: object.id } }), 201)
    }
    const readded = await api.plugins.addConfigObject({ path: { pluginId: plugin.id }, token: org.admin.token, payload: { configObjectId: mcp.id } })
    expect(readded.status).toBe(201)
    expect(ok(readded, 201).item.id).toBe(ok(added, 201).item.id)

    const refusedDeleted = await api.plugins.addConfigObject({ path: { pluginId: plugin.id }, token: org.admin.token, payload: { configObjectId: deleted.id } })
    expect(refusedDeleted.status).toBe(409)
    expect(refusedDeleted.body).toMatchObject({ error: "config_object_deleted" })
    const refusedForeign = await api.plugins.addConfigObject({ path: { pluginId: plugin.id }, token: org.admin.token, payload: { configObjectId: foreign.id } })
    expect(refusedForeign.status).toBe(404)
    expect(refusedForeign.body).toEqual({ error: "config_object_not_found", message: "Config object not found." })

    const read = ok(await api.plugins.get({ path: { pluginId: plugin.id }, token: org.admin.token }), 200).item
    expect(read.memberCount).toBe(4)
    // Active objects only, oldest membership first; grouped by type in type order.
    expect(read.extension.manifest.resources).toEqual([
      { configObjectId: mcp.id, objectType: "mcp", title: mcp.title, versionId: mcp.latestVersionId },
      { configObjectId: skill.id, objectType: "skill", title: skill.title, versionId: skill.latestVersionId },
      { configObjectId: agent.id, objectType: "agent", title: agent.title, versionId: agent.latestVersionId }
    ])
    expect(read.extension.manifest.contributions).toEqual([
      { objectType: "skill", configObjectIds: [skill.id] },
      { objectType: "agent", configObjectIds: [agent.id] },
      { objectType: "mcp", configObjectIds: [mcp.id] }
    ])

    const listed = await api.plugins.listConfigObjects({ path: { pluginId: plugin.id }, token: org.admin.token })
    expect(listed.status).toBe(200)
    expect(ok(listed, 200).nextCursor).toBeNull()
    expect(ok(listed, 200).items.map((m) => m.configObjectId)).toEqual([mcp.id, skill.id, archived.id, agent.id])
    expect(ok(listed, 200).items.map((m) => m.configObject.id)).toEqual([mcp.id, skill.id, archived.id, agent.id])
    expect(keys(ok(listed, 200).items[0])).toEqual(membershipFields)
    expect(ok(listed, 200).items[0]).toEqual(ok(added, 201).item)

    expect((await api.plugins.removeConfigObject({ path: { pluginId: plugin.id, configObjectId: skill.id }, token: org.admin.token })).status).toBe(204)
    const twice = await api.plugins.removeConfigObject({ path: { pluginId: plugin.id, configObjectId: skill.id }, token: org.admin.token })
    expect(twice.status).toBe(404)
    expect(twice.body).toEqual({ error: "plugin_membership_not_found", message: "The config object is not in this plugin." })
    expect((await api.plugins.removeConfigObject({ path: { pluginId: plugin.id, configObjectId: foreign.id }, token: org.admin.token })).status).toBe(404)
    const active = ok(await api.plugins.listConfigObjects({ path: { pluginId: plugin.id }, token: org.admin.token }), 200).items
    expect(active.map((m) => m.configObjectId)).toEqual([mcp.id, archived.id, agent.id])
    const all = ok(await api.plugins.listConfigObjects({ path: { pluginId: plugin.id }, query: { includeRemoved: "true" }, token: org.admin.token }), 200).items
    expect(all.map((m) => m.configObjectId)).toEqual([mcp.id, skill.id, archived.id, agent.id])
    expect(all[1].removedAt).not.toBeNull()
    const afterRemoval = ok(await api.plugins.get({ path: { pluginId: plugin.id }, token: org.admin.token }), 200).item
    expect(afterRemoval.memberCount).toBe(3)
    expect(afterRemoval.extension.manifest.contributions.map((c) => c.objectType)).toEqual(["agent", "mcp"])

    // A deleted plugin takes no new objects.
    ok(await api.plugins.delete({ path: { pluginId: plugin.id }, token: org.admin.token }), 200)
    const toDeleted = await api.plugins.addConfigObject({ path: { pluginId: plugin.id }, token: org.admin.token, payload: { configObjectId: skill.id } })
    expect(toDeleted.status).toBe(409)
    expect(toDeleted.body).toMatchObject({ error: "plugin_deleted" })
  })

  it("need editor access on the plugin and viewer access on the object to add it", async () => {
    const org = await Http.staffed(server.url)
    const plugin = await newPlugin(org.admin.token)
    const object = await configObject(org.admin.token, { type: "skill", title: "Private" })
    ok(await api.plugins.pluginGrant({ path: { pluginId: plugin.id }, token: org.admin.token, payload: { orgMembershipId: org.member.membership.id, role: "viewer" } }), 201)
    const asViewer = await api.plugins.addConfigObject({ path: { pluginId: plugin.id }, token: org.member.token, payload: { configObjectId: object.id } })
    expect(asViewer.status).toBe(403)
    expect(asViewer.body).toEqual({ reason: "insufficient_access", message: "Missing editor access for plugin." })
    ok(await api.plugins.pluginGrant({ path: { pluginId: plugin.id }, token: org.admin.token, payload: { orgMembershipId: org.member.membership.id, role: "editor" } }), 201)
    const unseen = await api.plugins.addConfigObject({ path: { pluginId: plugin.id }, token: org.member.token, payload: { configObjectId: object.id } })
    expect(unseen.status).toBe(403)
    expect(unseen.body).toEqual({ reason: "insufficient_access", message: "Missing viewer access for config object." })
    ok(await api.configObjects.configObjectGrant({ path: { configObjectId: object.id }, token: org.admin.token, payload: { orgMembershipId: org.member.membership.id, role: "viewer" } }), 201)
    ok(await api.plugins.addConfigObject({ path: { pluginId: plugin.id }, token: org.member.token, payload: { configObjectId: object.id } }), 201)
    const removeAsViewer = await Http.join(server.url, org.owner.token, "member", "Viewer")
    ok(await api.plugins.pluginGrant({ path: { pluginId: plugin.id }, token: org.admin.token, payload: { orgMembershipId: removeAsViewer.membership.id, role: "viewer" } }), 201)
    expect(ok(await api.plugins.listConfigObjects({ path: { pluginId: plugin.id }, token: removeAsViewer.token }), 200).items).toHaveLength(1)
    expect((await api.plugins.removeConfigObject({ path: { pluginId: plugin.id, configObjectId: object.id }, token: removeAsViewer.token })).status).toBe(403)
  })

  it("are viewable through a marketplace the member can view, until it is deleted or the plugin leaves it", async () => {
    const org = await Http.staffed(server.url)
    const plugin = await newPlugin(org.admin.token, "Shared")
    const market = await newMarketplace(org.admin.token)
    expect((await api.plugins.get({ path: { pluginId: plugin.id }, token: org.member.token })).status).toBe(403)
    ok(await api.marketplaces.marketplaceGrant({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { orgMembershipId: org.member.membership.id, role: "viewer" } }), 201)
    expect((await api.plugins.get({ path: { pluginId: plugin.id }, token: org.member.token })).status).toBe(403)

    ok(await api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { pluginId: plugin.id } }), 201)
    const seen = await api.plugins.get({ path: { pluginId: plugin.id }, token: org.member.token })
    expect(seen.status).toBe(200)
    expect(ok(seen, 200).item.marketplaces).toEqual([{ id: market.id, name: market.name }])
    expect(ok(await api.plugins.list({ token: org.member.token }), 200).items.map((p) => p.id)).toEqual([plugin.id])
    expect((await api.plugins.listConfigObjects({ path: { pluginId: plugin.id }, token: org.member.token })).status).toBe(200)
    // Viewing is all it gives.
    const update = await api.plugins.update({ path: { pluginId: plugin.id }, token: org.member.token, payload: { name: "Mine" } })
    expect(update.status).toBe(403)
    expect(update.body).toMatchObject({ reason: "insufficient_access" })
    expect((await api.plugins.pluginListAccess({ path: { pluginId: plugin.id }, token: org.member.token })).status).toBe(403)

    expect((await api.marketplaces.removePlugin({ path: { marketplaceId: market.id, pluginId: plugin.id }, token: org.admin.token })).status).toBe(204)
    expect((await api.plugins.get({ path: { pluginId: plugin.id }, token: org.member.token })).status).toBe(403)
    expect(ok(await api.plugins.list({ token: org.member.token }), 200).items).toEqual([])

    ok(await api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { pluginId: plugin.id } }), 201)
    expect((await api.plugins.get({ path: { pluginId: plugin.id }, token: org.member.token })).status).toBe(200)
    ok(await api.marketplaces.delete({ path: { marketplaceId: market.id }, token: org.admin.token }), 200)
    expect((await api.plugins.get({ path: { pluginId: plugin.id }, token: org.member.token })).status).toBe(403)
    expect(ok(await api.plugins.get({ path: { pluginId: plugin.id }, token: org.admin.token }), 200).item.marketplaces).toEqual([])
  })

  it("answer 404 for another organization's plugin, on every operation, and change nothing", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const plugin = await newPlugin(org.owner.token, "Ours")
    const object = await configObject(other.token, { type: "skill", title: "Theirs" })
    const notFound = { error: "plugin_not_found", message: "Plugin not found." }
    const calls = [
      api.plugins.get({ path: { pluginId: plugin.id }, token: other.token }),
      api.plugins.update({ path: { pluginId: plugin.id }, token: other.token, payload: { name: "Taken" } }),
      api.plugins.archive({ path: { pluginId: plugin.id }, token: other.token }),
      api.plugins.restore({ path: { pluginId: plugin.id }, token: other.token }),
      api.plugins.delete({ path: { pluginId: plugin.id }, token: other.token }),
      api.plugins.listConfigObjects({ path: { pluginId: plugin.id }, token: other.token }),
      api.plugins.addConfigObject({ path: { pluginId: plugin.id }, token: other.token, payload: { configObjectId: object.id } }),
      api.plugins.removeConfigObject({ path: { pluginId: plugin.id, configObjectId: object.id }, token: other.token }),
      api.plugins.pluginGrant({ path: { pluginId: plugin.id }, token: other.token, payload: { orgWide: true, role: "viewer" } }),
      api.plugins.pluginListAccess({ path: { pluginId: plugin.id }, token: other.token })
    ]
    for (const response of await Promise.all(calls)) {
      expect(response.status).toBe(404)
      expect(response.body).toEqual(notFound)
    }
    expect(ok(await api.plugins.get({ path: { pluginId: plugin.id }, token: org.owner.token }), 200).item).toEqual(plugin)
    expect(ok(await api.plugins.list({ token: other.token }), 200).items).toEqual([])
  })

  it("share through grants: upserted per member, team or organization, listed newest first, revoked softly", async () => {
    const org = await Http.staffed(server.url)
    const plugin = await newPlugin(org.member.token, "Granted")
    const colleague = await Http.join(server.url, org.owner.token, "member", "Colleague")
    const team = ok(await api.teams.create({ token: org.owner.token, payload: { name: "Crew", memberIds: [colleague.membership.id] } }), 201).team

    const orgWideByMember = await api.plugins.pluginGrant({ path: { pluginId: plugin.id }, token: org.member.token, payload: { orgWide: true, role: "viewer" } })
    expect(orgWideByMember.status).toBe(403)
    expect(orgWideByMember.body).toMatchObject({ reason: "insufficient_role" })

    const byTeam = await api.plugins.pluginGrant({ path: { pluginId: plugin.id }, token: org.member.token, payload: { teamId: team.id, role: "viewer" } })
    expect(byTeam.status).toBe(201)
    expect(ok(byTeam, 201).ok).toBe(true)
    const teamGrant = ok(byTeam, 201).item
    expect(keys(teamGrant)).toEqual(grantFields)
    expect(teamGrant).toMatchObject({ teamId: team.id, orgMembershipId: null, orgWide: false, role: "viewer", removedAt: null })
    expect(teamGrant.id).toMatch(/^pag_/)
    expect((await api.plugins.get({ path: { pluginId: plugin.id }, token: colleague.token })).status).toBe(200)
    expect((await api.plugins.update({ path: { pluginId: plugin.id }, token: colleague.token, payload: { name: "No" } })).status).toBe(403)

    const upgraded = ok(await api.plugins.pluginGrant({ path: { pluginId: plugin.id }, token: org.member.token, payload: { teamId: team.id, role: "editor" } }), 201)
    expect(upgraded.item).toMatchObject({ id: teamGrant.id, role: "editor" })
    expect((await api.plugins.update({ path: { pluginId: plugin.id }, token: colleague.token, payload: { name: "Renamed" } })).status).toBe(200)

    const orgWide = await api.plugins.pluginGrant({ path: { pluginId: plugin.id }, token: org.admin.token, payload: { orgWide: true, role: "viewer" } })
    expect(orgWide.status).toBe(201)
    const listed = ok(await api.plugins.pluginListAccess({ path: { pluginId: plugin.id }, token: org.member.token }), 200)
    expect(listed.nextCursor).toBeNull()
    expect(listed.items.map((g) => g.id)).toEqual([ok(orgWide, 201).item.id, teamGrant.id, expect.stringMatching(/^pag_/)])

    expect((await api.plugins.pluginRevoke({ path: { pluginId: plugin.id, grantId: teamGrant.id }, token: org.member.token })).status).toBe(204)
    expect((await api.plugins.pluginRevoke({ path: { pluginId: plugin.id, grantId: teamGrant.id }, token: org.member.token })).status).toBe(204)
    const remaining = ok(await api.plugins.pluginListAccess({ path: { pluginId: plugin.id }, token: org.member.token }), 200).items
    expect(remaining.map((g) => g.id)).not.toContain(teamGrant.id)
    const withRevoked = ok(await api.plugins.pluginListAccess({ path: { pluginId: plugin.id }, query: { includeRevoked: "true" }, token: org.member.token }), 200).items
    const revoked = withRevoked.find((g) => g.id === teamGrant.id)
    expect(revoked).toBeDefined()
    expect(revoked?.removedAt).not.toBeNull()
    // The org-wide viewer grant still lets the colleague read, not edit.
    expect((await api.plugins.get({ path: { pluginId: plugin.id }, token: colleague.token })).status).toBe(200)
    expect((await api.plugins.update({ path: { pluginId: plugin.id }, token: colleague.token, payload: { name: "Again" } })).status).toBe(403)
    const unknown = await api.plugins.pluginRevoke({ path: { pluginId: plugin.id, grantId: typeId("pag") }, token: org.member.token })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toMatchObject({ error: "access_grant_not_found" })
  })

  it("list by name with a keyset cursor that walks 160 plugins without gaps or duplicates while others are created", { timeout: 120_000 }, async () => {
    const org = await Http.staffed(server.url)
    const names = Array.from({ length: 160 }, (_, i) => `${i % 2 === 0 ? "p" : "P"}lugin ${String(i).padStart(3, "0")}`)
    await bulkPlugins(org.organizationId, org.member.membership.id, names)
    const seen: Array<{ id: string; name: string }> = []
    let cursor: string | null = null
    let inserted = 0
    do {
      const page = await api.plugins.list({ query: { limit: "7", ...(cursor ? { cursor } : {}) }, token: org.member.token })
      expect(page.status).toBe(200)
      seen.push(...ok(page, 200).items)
      cursor = ok(page, 200).nextCursor
      // Concurrent writers: plugins that sort anywhere, created between pages.
      await newPlugin(org.member.token, `plugin ${String(inserted * 7).padStart(3, "0")} extra`)
      inserted++
    } while (cursor)
    const ids = seen.map((p) => p.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(seen.filter((p) => !p.name.endsWith("extra")).map((p) => p.name)).toEqual(names)

    const filtered = ok(await api.plugins.list({ query: { q: "LUGIN 01", limit: "100" }, token: org.member.token }), 200)
    expect(filtered.items.map((p) => p.name).filter((name: string) => !name.endsWith("extra"))).toEqual(
      names.filter((name) => name.includes("lugin 01"))
    )
    const first = ok(await api.plugins.list({ query: { limit: "2" }, token: org.member.token }), 200)
    const otherFilters = await api.plugins.list({ query: { limit: "2", q: "plugin", cursor: first.nextCursor ?? "" }, token: org.member.token })
    expect(otherFilters.status).toBe(400)
    expect(invalid(otherFilters).details[0].path).toEqual(["cursor"])
  })

  it("list only the plugins of a marketplace with marketplaceId, and page a plugin's config objects", async () => {
    const org = await Http.staffed(server.url)
    const market = await newMarketplace(org.admin.token)
    const inside = await newPlugin(org.admin.token, "Inside")
    await newPlugin(org.admin.token, "Outside")
    ok(await api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { pluginId: inside.id } }), 201)
    const filtered = ok(await api.plugins.list({ query: { marketplaceId: market.id }, token: org.admin.token }), 200)
    expect(filtered.items.map((p) => p.id)).toEqual([inside.id])

    const objects = []
    for (let i = 0; i < 23; i++) objects.push(await configObject(org.admin.token, { type: i % 2 === 0 ? "skill" : "hook", title: `Object ${i}` }))
    for (const object of objects) {
      ok(await api.plugins.addConfigObject({ path: { pluginId: inside.id }, token: org.admin.token, payload: { configObjectId: object.id } }), 201)
    }
    const walked: Array<string> = []
    let cursor: string | null = null
    do {
      const page = await api.plugins.listConfigObjects({
        path: { pluginId: inside.id },
        query: { limit: "5", ...(cursor ? { cursor } : {}) },
        token: org.admin.token
      })
      expect(page.status).toBe(200)
      expect(ok(page, 200).items.length).toBeLessThanOrEqual(5)
      walked.push(...ok(page, 200).items.map((m) => m.configObject.id))
      cursor = ok(page, 200).nextCursor
    } while (cursor)
    expect(walked).toEqual(objects.map((o) => o.id))
  })
})

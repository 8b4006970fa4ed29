/**
 * The Plugins group through HTTP: the resource with its member count, marketplaces and manifest, names, soft
 * delete and restore, memberships of config objects, access (grants, through marketplaces, other organizations),
 * and keyset paging.
 *
 * Config objects are made through the Config objects group; only bulk rows for paging are written with SQL.
 */
import * as SqlClient from "effect/sql/SqlClient"
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

const { del, get, patch, post } = Http.verbs(() => server.url)
const sql = <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => server.sql(use)

/** Effect 4's `sql.insert` takes a non-empty array of rows. */
const nonEmpty = <A>(rows: ReadonlyArray<A>): Arr.NonEmptyReadonlyArray<A> => {
  if (!Arr.isReadonlyArrayNonEmpty(rows)) throw new Error("no rows to insert")
  return rows
}


const ok = Http.expectStatus

const typeId = (prefix: Parameters<typeof typeid>[0]) => typeid(prefix).toString()

const slug = (title: string) => title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")

/** What a config object of `type` titled `title` is made from. */
const sourceOf = (type: string, title: string, revision = 1): Record<string, unknown> => {
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
  input: { readonly type: string; readonly title: string; readonly status?: "active" | "archived" | "deleted"; readonly versions?: number }
): Promise<{ id: string; latestVersionId: string; title: string }> => {
  let item = ok("creating a config object", await post("/v1/config-objects", { token, body: { input: { objectType: input.type, ...sourceOf(input.type, input.title) } } }), 201).item
  for (let revision = 2; revision <= (input.versions ?? 1); revision++) {
    const version = ok("adding a version", await post(`/v1/config-objects/${item.id}/versions`, { token, body: { input: sourceOf(input.type, input.title, revision) } }), 201)
    item = { ...item, latestVersion: version.item.latestVersion ?? version.item }
  }
  if (input.status === "archived") ok("archiving", await post(`/v1/config-objects/${item.id}/archive`, { token }), 200)
  if (input.status === "deleted") ok("deleting", await del(`/v1/config-objects/${item.id}`, { token }), 200)
  const read = ok("reading", await get(`/v1/config-objects/${item.id}`, { token }), 200).item
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
  ok("creating a plugin", await post("/v1/plugins", { token, body: description === undefined ? { name } : { name, description } }), 201).item

const newMarketplace = async (token: string, name = `Market ${Math.random().toString(36).slice(2, 10)}`) =>
  ok("creating a marketplace", await post("/v1/marketplaces", { token, body: { name } }), 201).item

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
    const created = await post("/v1/plugins", { token: org.member.token, body: { name: "  Review kit ", description: "Code review helpers" } })
    expect(created.status).toBe(201)
    expect(created.body.ok).toBe(true)
    const plugin = created.body.item
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
    const grants = ok("listing grants", await get(`/v1/plugins/${plugin.id}/access`, { token: org.member.token }), 200)
    expect(grants.items).toHaveLength(1)
    expect(grants.items[0]).toMatchObject({ orgMembershipId: org.member.membership.id, role: "manager", removedAt: null })
    const read = await get(`/v1/plugins/${plugin.id}`, { token: org.member.token })
    expect(read.status).toBe(200)
    expect(read.body).toEqual({ item: plugin })
    expect((await get(`/v1/plugins/${plugin.id}`, { token: org.admin.token })).body).toEqual({ item: plugin })
    const other = await Http.join(server.url, org.owner.token, "member", "Other")
    const refused = await get(`/v1/plugins/${plugin.id}`, { token: other.token })
    expect(refused.status).toBe(403)
    expect(refused.body).toEqual({ reason: "insufficient_access", message: "Missing viewer access for plugin." })
    expect((await get("/v1/plugins", { token: other.token })).body.items).toEqual([])

    const updated = await patch(`/v1/plugins/${plugin.id}`, { token: org.member.token, body: { description: "Reviews" } })
    expect(updated.status).toBe(200)
    expect(updated.body.ok).toBe(true)
    expect(updated.body.item).toMatchObject({ name: "Review kit", description: "Reviews" })
    expect(updated.body.item.extension.manifest.description).toBe("Reviews")
    expect((await patch(`/v1/plugins/${plugin.id}`, { token: org.member.token, body: {} })).status).toBe(400)
  })

  it("answer 409 plugin_exists for a name another plugin of the organization has, whatever its case; deleted ones free theirs", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const first = await newPlugin(org.member.token, "Deploy")
    const duplicate = await post("/v1/plugins", { token: org.admin.token, body: { name: "DEPLOY" } })
    expect(duplicate.status).toBe(409)
    expect(duplicate.body).toEqual({ error: "plugin_exists", message: 'The organization already has a plugin named "DEPLOY".' })
    const second = await newPlugin(org.member.token, "Release")
    const renamed = await patch(`/v1/plugins/${second.id}`, { token: org.member.token, body: { name: "deploy" } })
    expect(renamed.status).toBe(409)
    expect(renamed.body.error).toBe("plugin_exists")
    expect((await get(`/v1/plugins/${second.id}`, { token: org.member.token })).body.item.name).toBe("Release")
    expect((await post("/v1/plugins", { token: other.token, body: { name: "Deploy" } })).status).toBe(201)

    // A deleted plugin's name is free again; restoring it then conflicts.
    ok("deleting", await del(`/v1/plugins/${first.id}`, { token: org.member.token }), 200)
    const reused = await newPlugin(org.member.token, "deploy")
    const restore = await post(`/v1/plugins/${first.id}/restore`, { token: org.member.token })
    expect(restore.status).toBe(409)
    expect(restore.body.error).toBe("plugin_exists")
    ok("deleting the new one", await del(`/v1/plugins/${reused.id}`, { token: org.member.token }), 200)
    expect((await post(`/v1/plugins/${first.id}/restore`, { token: org.member.token })).body.item.status).toBe("active")
  })

  it("are soft-deleted, archived and restored by managers; deleted ones stay readable and refuse changes", async () => {
    const org = await Http.staffed(server.url)
    const plugin = await newPlugin(org.member.token, "Lifecycle")
    const editor = await Http.join(server.url, org.owner.token, "member", "Editor")
    ok("granting editor", await post(`/v1/plugins/${plugin.id}/access`, { token: org.member.token, body: { orgMembershipId: editor.membership.id, role: "editor" } }), 201)
    for (const path of ["archive", "restore"]) {
      const refused = await post(`/v1/plugins/${plugin.id}/${path}`, { token: editor.token })
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual({ reason: "insufficient_access", message: "Missing manager access for plugin." })
    }
    expect((await del(`/v1/plugins/${plugin.id}`, { token: editor.token })).status).toBe(403)

    const archived = await post(`/v1/plugins/${plugin.id}/archive`, { token: org.member.token })
    expect(archived.status).toBe(200)
    expect(archived.body.item).toMatchObject({ status: "archived", deletedAt: null })
    expect(archived.body.item.extension.manifest.lifecycle.status).toBe("archived")
    expect((await get("/v1/plugins", { token: org.member.token })).body.items.map((p: any) => p.id)).toEqual([plugin.id])

    const deleted = await del(`/v1/plugins/${plugin.id}`, { token: org.member.token })
    expect(deleted.status).toBe(200)
    expect(deleted.body.ok).toBe(true)
    expect(deleted.body.item).toMatchObject({ status: "deleted" })
    expect(deleted.body.item.deletedAt).not.toBeNull()
    const again = await del(`/v1/plugins/${plugin.id}`, { token: org.member.token })
    expect(again.status).toBe(200)
    expect(again.body.item).toEqual(deleted.body.item)

    const read = await get(`/v1/plugins/${plugin.id}`, { token: org.member.token })
    expect(read.body.item.status).toBe("deleted")
    const update = await patch(`/v1/plugins/${plugin.id}`, { token: editor.token, body: { name: "Changed" } })
    expect(update.status).toBe(409)
    expect(update.body).toEqual({ error: "plugin_deleted", message: "The plugin is deleted; restore it first." })
    expect((await get("/v1/plugins", { token: org.member.token })).body.items).toEqual([])
    expect((await get("/v1/plugins?includeDeleted=true", { token: org.member.token })).body.items.map((p: any) => p.id)).toEqual([plugin.id])
    expect((await get("/v1/plugins?status=deleted", { token: org.member.token })).body.items.map((p: any) => p.id)).toEqual([plugin.id])
    expect((await get("/v1/plugins?status=active", { token: org.member.token })).body.items).toEqual([])

    const restored = await post(`/v1/plugins/${plugin.id}/restore`, { token: org.member.token })
    expect(restored.status).toBe(200)
    expect(restored.body.item).toMatchObject({ status: "active", deletedAt: null })
    // The creator's grant survived the round trip.
    expect((await get(`/v1/plugins/${plugin.id}/access`, { token: org.member.token })).body.items).toHaveLength(2)
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

    const added = await post(`/v1/plugins/${plugin.id}/config-objects`, { token: org.admin.token, body: { configObjectId: mcp.id } })
    expect(added.status).toBe(201)
    expect(added.body.ok).toBe(true)
    expect(keys(added.body.item)).toEqual(membershipFields)
    expect(added.body.item).toMatchObject({
      pluginId: plugin.id,
      configObjectId: mcp.id,
      membershipSource: "manual",
      connectorMappingId: null,
      createdByOrgMembershipId: org.admin.membership.id,
      removedAt: null
    })
    expect(added.body.item.id).toMatch(/^pco_/)
    expect(mcp.title).toBe("Search server")
    expect(added.body.item.configObject).toMatchObject({ id: mcp.id, objectType: "mcp", title: "Search server" })
    expect(added.body.item.configObject.latestVersion).toMatchObject({ id: mcp.latestVersionId, number: 2 })
    for (const object of [skill, archived, agent]) {
      ok("adding", await post(`/v1/plugins/${plugin.id}/config-objects`, { token: org.admin.token, body: { configObjectId: object.id } }), 201)
    }
    const readded = await post(`/v1/plugins/${plugin.id}/config-objects`, { token: org.admin.token, body: { configObjectId: mcp.id } })
    expect(readded.status).toBe(201)
    expect(readded.body.item.id).toBe(added.body.item.id)

    const refusedDeleted = await post(`/v1/plugins/${plugin.id}/config-objects`, { token: org.admin.token, body: { configObjectId: deleted.id } })
    expect(refusedDeleted.status).toBe(409)
    expect(refusedDeleted.body.error).toBe("config_object_deleted")
    const refusedForeign = await post(`/v1/plugins/${plugin.id}/config-objects`, { token: org.admin.token, body: { configObjectId: foreign.id } })
    expect(refusedForeign.status).toBe(404)
    expect(refusedForeign.body).toEqual({ error: "config_object_not_found", message: "Config object not found." })

    const read = (await get(`/v1/plugins/${plugin.id}`, { token: org.admin.token })).body.item
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

    const listed = await get(`/v1/plugins/${plugin.id}/config-objects`, { token: org.admin.token })
    expect(listed.status).toBe(200)
    expect(listed.body.nextCursor).toBeNull()
    expect(listed.body.items.map((m: any) => m.configObjectId)).toEqual([mcp.id, skill.id, archived.id, agent.id])
    expect(listed.body.items.map((m: any) => m.configObject.id)).toEqual([mcp.id, skill.id, archived.id, agent.id])
    expect(keys(listed.body.items[0])).toEqual(membershipFields)
    expect(listed.body.items[0]).toEqual(added.body.item)

    expect((await del(`/v1/plugins/${plugin.id}/config-objects/${skill.id}`, { token: org.admin.token })).status).toBe(204)
    const twice = await del(`/v1/plugins/${plugin.id}/config-objects/${skill.id}`, { token: org.admin.token })
    expect(twice.status).toBe(404)
    expect(twice.body).toEqual({ error: "plugin_membership_not_found", message: "The config object is not in this plugin." })
    expect((await del(`/v1/plugins/${plugin.id}/config-objects/${foreign.id}`, { token: org.admin.token })).status).toBe(404)
    const active = (await get(`/v1/plugins/${plugin.id}/config-objects`, { token: org.admin.token })).body.items
    expect(active.map((m: any) => m.configObjectId)).toEqual([mcp.id, archived.id, agent.id])
    const all = (await get(`/v1/plugins/${plugin.id}/config-objects?includeRemoved=true`, { token: org.admin.token })).body.items
    expect(all.map((m: any) => m.configObjectId)).toEqual([mcp.id, skill.id, archived.id, agent.id])
    expect(all[1].removedAt).not.toBeNull()
    const afterRemoval = (await get(`/v1/plugins/${plugin.id}`, { token: org.admin.token })).body.item
    expect(afterRemoval.memberCount).toBe(3)
    expect(afterRemoval.extension.manifest.contributions.map((c: any) => c.objectType)).toEqual(["agent", "mcp"])

    // A deleted plugin takes no new objects.
    ok("deleting", await del(`/v1/plugins/${plugin.id}`, { token: org.admin.token }), 200)
    const toDeleted = await post(`/v1/plugins/${plugin.id}/config-objects`, { token: org.admin.token, body: { configObjectId: skill.id } })
    expect(toDeleted.status).toBe(409)
    expect(toDeleted.body.error).toBe("plugin_deleted")
  })

  it("need editor access on the plugin and viewer access on the object to add it", async () => {
    const org = await Http.staffed(server.url)
    const plugin = await newPlugin(org.admin.token)
    const object = await configObject(org.admin.token, { type: "skill", title: "Private" })
    ok("granting viewer", await post(`/v1/plugins/${plugin.id}/access`, { token: org.admin.token, body: { orgMembershipId: org.member.membership.id, role: "viewer" } }), 201)
    const asViewer = await post(`/v1/plugins/${plugin.id}/config-objects`, { token: org.member.token, body: { configObjectId: object.id } })
    expect(asViewer.status).toBe(403)
    expect(asViewer.body).toEqual({ reason: "insufficient_access", message: "Missing editor access for plugin." })
    ok("granting editor", await post(`/v1/plugins/${plugin.id}/access`, { token: org.admin.token, body: { orgMembershipId: org.member.membership.id, role: "editor" } }), 201)
    const unseen = await post(`/v1/plugins/${plugin.id}/config-objects`, { token: org.member.token, body: { configObjectId: object.id } })
    expect(unseen.status).toBe(403)
    expect(unseen.body).toEqual({ reason: "insufficient_access", message: "Missing viewer access for config object." })
    ok("granting the object", await post(`/v1/config-objects/${object.id}/access`, { token: org.admin.token, body: { orgMembershipId: org.member.membership.id, role: "viewer" } }), 201)
    ok("adding", await post(`/v1/plugins/${plugin.id}/config-objects`, { token: org.member.token, body: { configObjectId: object.id } }), 201)
    const removeAsViewer = await Http.join(server.url, org.owner.token, "member", "Viewer")
    ok("granting viewer", await post(`/v1/plugins/${plugin.id}/access`, { token: org.admin.token, body: { orgMembershipId: removeAsViewer.membership.id, role: "viewer" } }), 201)
    expect((await get(`/v1/plugins/${plugin.id}/config-objects`, { token: removeAsViewer.token })).body.items).toHaveLength(1)
    expect((await del(`/v1/plugins/${plugin.id}/config-objects/${object.id}`, { token: removeAsViewer.token })).status).toBe(403)
  })

  it("are viewable through a marketplace the member can view, until it is deleted or the plugin leaves it", async () => {
    const org = await Http.staffed(server.url)
    const plugin = await newPlugin(org.admin.token, "Shared")
    const market = await newMarketplace(org.admin.token)
    expect((await get(`/v1/plugins/${plugin.id}`, { token: org.member.token })).status).toBe(403)
    ok("granting the marketplace", await post(`/v1/marketplaces/${market.id}/access`, { token: org.admin.token, body: { orgMembershipId: org.member.membership.id, role: "viewer" } }), 201)
    expect((await get(`/v1/plugins/${plugin.id}`, { token: org.member.token })).status).toBe(403)

    ok("listing", await post(`/v1/marketplaces/${market.id}/plugins`, { token: org.admin.token, body: { pluginId: plugin.id } }), 201)
    const seen = await get(`/v1/plugins/${plugin.id}`, { token: org.member.token })
    expect(seen.status).toBe(200)
    expect(seen.body.item.marketplaces).toEqual([{ id: market.id, name: market.name }])
    expect((await get("/v1/plugins", { token: org.member.token })).body.items.map((p: any) => p.id)).toEqual([plugin.id])
    expect((await get(`/v1/plugins/${plugin.id}/config-objects`, { token: org.member.token })).status).toBe(200)
    // Viewing is all it gives.
    const update = await patch(`/v1/plugins/${plugin.id}`, { token: org.member.token, body: { name: "Mine" } })
    expect(update.status).toBe(403)
    expect(update.body.reason).toBe("insufficient_access")
    expect((await get(`/v1/plugins/${plugin.id}/access`, { token: org.member.token })).status).toBe(403)

    expect((await del(`/v1/marketplaces/${market.id}/plugins/${plugin.id}`, { token: org.admin.token })).status).toBe(204)
    expect((await get(`/v1/plugins/${plugin.id}`, { token: org.member.token })).status).toBe(403)
    expect((await get("/v1/plugins", { token: org.member.token })).body.items).toEqual([])

    ok("listing again", await post(`/v1/marketplaces/${market.id}/plugins`, { token: org.admin.token, body: { pluginId: plugin.id } }), 201)
    expect((await get(`/v1/plugins/${plugin.id}`, { token: org.member.token })).status).toBe(200)
    ok("deleting the marketplace", await del(`/v1/marketplaces/${market.id}`, { token: org.admin.token }), 200)
    expect((await get(`/v1/plugins/${plugin.id}`, { token: org.member.token })).status).toBe(403)
    expect((await get(`/v1/plugins/${plugin.id}`, { token: org.admin.token })).body.item.marketplaces).toEqual([])
  })

  it("answer 404 for another organization's plugin, on every operation, and change nothing", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const plugin = await newPlugin(org.owner.token, "Ours")
    const object = await configObject(other.token, { type: "skill", title: "Theirs" })
    const notFound = { error: "plugin_not_found", message: "Plugin not found." }
    const calls = [
      get(`/v1/plugins/${plugin.id}`, { token: other.token }),
      patch(`/v1/plugins/${plugin.id}`, { token: other.token, body: { name: "Taken" } }),
      post(`/v1/plugins/${plugin.id}/archive`, { token: other.token }),
      post(`/v1/plugins/${plugin.id}/restore`, { token: other.token }),
      del(`/v1/plugins/${plugin.id}`, { token: other.token }),
      get(`/v1/plugins/${plugin.id}/config-objects`, { token: other.token }),
      post(`/v1/plugins/${plugin.id}/config-objects`, { token: other.token, body: { configObjectId: object.id } }),
      del(`/v1/plugins/${plugin.id}/config-objects/${object.id}`, { token: other.token }),
      post(`/v1/plugins/${plugin.id}/access`, { token: other.token, body: { orgWide: true, role: "viewer" } }),
      get(`/v1/plugins/${plugin.id}/access`, { token: other.token })
    ]
    for (const response of await Promise.all(calls)) {
      expect(response.status).toBe(404)
      expect(response.body).toEqual(notFound)
    }
    expect((await get(`/v1/plugins/${plugin.id}`, { token: org.owner.token })).body.item).toEqual(plugin)
    expect((await get("/v1/plugins", { token: other.token })).body.items).toEqual([])
  })

  it("share through grants: upserted per member, team or organization, listed newest first, revoked softly", async () => {
    const org = await Http.staffed(server.url)
    const plugin = await newPlugin(org.member.token, "Granted")
    const colleague = await Http.join(server.url, org.owner.token, "member", "Colleague")
    const team = ok("team", await post("/v1/teams", { token: org.owner.token, body: { name: "Crew", memberIds: [colleague.membership.id] } }), 201).team

    const orgWideByMember = await post(`/v1/plugins/${plugin.id}/access`, { token: org.member.token, body: { orgWide: true, role: "viewer" } })
    expect(orgWideByMember.status).toBe(403)
    expect(orgWideByMember.body.reason).toBe("insufficient_role")

    const byTeam = await post(`/v1/plugins/${plugin.id}/access`, { token: org.member.token, body: { teamId: team.id, role: "viewer" } })
    expect(byTeam.status).toBe(201)
    expect(byTeam.body.ok).toBe(true)
    expect(keys(byTeam.body.item)).toEqual(grantFields)
    expect(byTeam.body.item).toMatchObject({ teamId: team.id, orgMembershipId: null, orgWide: false, role: "viewer", removedAt: null })
    expect(byTeam.body.item.id).toMatch(/^pag_/)
    expect((await get(`/v1/plugins/${plugin.id}`, { token: colleague.token })).status).toBe(200)
    expect((await patch(`/v1/plugins/${plugin.id}`, { token: colleague.token, body: { name: "No" } })).status).toBe(403)

    const upgraded = await post(`/v1/plugins/${plugin.id}/access`, { token: org.member.token, body: { teamId: team.id, role: "editor" } })
    expect(upgraded.body.item).toMatchObject({ id: byTeam.body.item.id, role: "editor" })
    expect((await patch(`/v1/plugins/${plugin.id}`, { token: colleague.token, body: { name: "Renamed" } })).status).toBe(200)

    const orgWide = await post(`/v1/plugins/${plugin.id}/access`, { token: org.admin.token, body: { orgWide: true, role: "viewer" } })
    expect(orgWide.status).toBe(201)
    const listed = (await get(`/v1/plugins/${plugin.id}/access`, { token: org.member.token })).body
    expect(listed.nextCursor).toBeNull()
    expect(listed.items.map((g: any) => g.id)).toEqual([orgWide.body.item.id, byTeam.body.item.id, expect.stringMatching(/^pag_/)])

    expect((await del(`/v1/plugins/${plugin.id}/access/${byTeam.body.item.id}`, { token: org.member.token })).status).toBe(204)
    expect((await del(`/v1/plugins/${plugin.id}/access/${byTeam.body.item.id}`, { token: org.member.token })).status).toBe(204)
    const remaining = (await get(`/v1/plugins/${plugin.id}/access`, { token: org.member.token })).body.items
    expect(remaining.map((g: any) => g.id)).not.toContain(byTeam.body.item.id)
    const withRevoked = (await get(`/v1/plugins/${plugin.id}/access?includeRevoked=true`, { token: org.member.token })).body.items
    const revoked = withRevoked.find((g: any) => g.id === byTeam.body.item.id)
    expect(revoked.removedAt).not.toBeNull()
    // The org-wide viewer grant still lets the colleague read, not edit.
    expect((await get(`/v1/plugins/${plugin.id}`, { token: colleague.token })).status).toBe(200)
    expect((await patch(`/v1/plugins/${plugin.id}`, { token: colleague.token, body: { name: "Again" } })).status).toBe(403)
    const unknown = await del(`/v1/plugins/${plugin.id}/access/${typeId("pag")}`, { token: org.member.token })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toBe("access_grant_not_found")
  })

  it("list by name with a keyset cursor that walks 160 plugins without gaps or duplicates while others are created", { timeout: 120_000 }, async () => {
    const org = await Http.staffed(server.url)
    const names = Array.from({ length: 160 }, (_, i) => `${i % 2 === 0 ? "p" : "P"}lugin ${String(i).padStart(3, "0")}`)
    await bulkPlugins(org.organizationId, org.member.membership.id, names)
    const seen: Array<{ id: string; name: string }> = []
    let cursor: string | null = null
    let inserted = 0
    do {
      const page: Http.RawResponse = await get(`/v1/plugins?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { token: org.member.token })
      expect(page.status).toBe(200)
      seen.push(...page.body.items)
      cursor = page.body.nextCursor
      // Concurrent writers: plugins that sort anywhere, created between pages.
      await newPlugin(org.member.token, `plugin ${String(inserted * 7).padStart(3, "0")} extra`)
      inserted++
    } while (cursor)
    const ids = seen.map((p) => p.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(seen.filter((p) => !p.name.endsWith("extra")).map((p) => p.name)).toEqual(names)

    const filtered = await get("/v1/plugins?q=LUGIN%2001&limit=100", { token: org.member.token })
    expect(filtered.body.items.map((p: any) => p.name).filter((name: string) => !name.endsWith("extra"))).toEqual(
      names.filter((name) => name.includes("lugin 01"))
    )
    const first = await get("/v1/plugins?limit=2", { token: org.member.token })
    const otherFilters = await get(`/v1/plugins?limit=2&q=plugin&cursor=${encodeURIComponent(first.body.nextCursor)}`, { token: org.member.token })
    expect(otherFilters.status).toBe(400)
    expect(otherFilters.body.details[0].path).toEqual(["cursor"])
  })

  it("list only the plugins of a marketplace with marketplaceId, and page a plugin's config objects", async () => {
    const org = await Http.staffed(server.url)
    const market = await newMarketplace(org.admin.token)
    const inside = await newPlugin(org.admin.token, "Inside")
    await newPlugin(org.admin.token, "Outside")
    ok("listing", await post(`/v1/marketplaces/${market.id}/plugins`, { token: org.admin.token, body: { pluginId: inside.id } }), 201)
    const filtered = await get(`/v1/plugins?marketplaceId=${market.id}`, { token: org.admin.token })
    expect(filtered.body.items.map((p: any) => p.id)).toEqual([inside.id])

    const objects = []
    for (let i = 0; i < 23; i++) objects.push(await configObject(org.admin.token, { type: i % 2 === 0 ? "skill" : "hook", title: `Object ${i}` }))
    for (const object of objects) {
      ok("adding", await post(`/v1/plugins/${inside.id}/config-objects`, { token: org.admin.token, body: { configObjectId: object.id } }), 201)
    }
    const walked: Array<string> = []
    let cursor: string | null = null
    do {
      const page: Http.RawResponse = await get(
        `/v1/plugins/${inside.id}/config-objects?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        { token: org.admin.token }
      )
      expect(page.status).toBe(200)
      expect(page.body.items.length).toBeLessThanOrEqual(5)
      walked.push(...page.body.items.map((m: any) => m.configObject.id))
      cursor = page.body.nextCursor
    } while (cursor)
    expect(walked).toEqual(objects.map((o) => o.id))
  })
})

/**
 * The Marketplaces group through HTTP: the resource with `canDelete` and `pluginCount`, names, soft delete (refused
 * while a connector or the service lists plugins in it), plugin memberships, the resolved marketplace, access, and
 * keyset paging.
 *
 * Connector and system memberships are written with SQL on the server's own database (no endpoint writes them yet),
 * as are the bulk rows for paging; config objects are made through the Config objects group.
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

/** What a config object of `type` is made from. */
const sourceOf = (type: string): Record<string, unknown> => {
  const name = `${type}-${Math.random().toString(36).slice(2, 8)}`
  switch (type) {
    case "skill":
    case "agent":
    case "command":
      return { rawSourceText: `---\nname: ${name}\ndescription: A ${type}.\n---\n# ${name}\n` }
    case "mcp":
      return { normalizedPayloadJson: { mcpServers: { [name]: { url: "https://example.com/mcp" } } } }
    case "hook":
      return { normalizedPayloadJson: { name, on: ["pre_commit"] } }
    default:
      return { rawSourceText: name }
  }
}

/** A config object made through the API, then archived or deleted when asked. */
const configObject = async (token: string, type: string, status: "active" | "archived" | "deleted" = "active"): Promise<string> => {
  const item = ok("creating a config object", await post("/v1/config-objects", { token, body: { input: { objectType: type, ...sourceOf(type) } } }), 201).item
  if (status === "archived") ok("archiving", await post(`/v1/config-objects/${item.id}/archive`, { token }), 200)
  if (status === "deleted") ok("deleting", await del(`/v1/config-objects/${item.id}`, { token }), 200)
  return item.id
}

/** A membership a connector's sync or the service itself would write. */
const managedMembership = (organizationId: string, marketplaceId: string, pluginId: string, source: "connector" | "system") =>
  sql((sql) =>
    sql`INSERT INTO marketplace_plugins (id, organization_id, marketplace_id, plugin_id, membership_source, created_at)
        VALUES (${typeId("mkp")}, ${organizationId}, ${marketplaceId}, ${pluginId}, ${source}, ${new Date()})`
  )

const newPlugin = async (token: string, name = `Plugin ${Math.random().toString(36).slice(2, 10)}`) =>
  ok("creating a plugin", await post("/v1/plugins", { token, body: { name } }), 201).item

const newMarketplace = async (token: string, name = `Market ${Math.random().toString(36).slice(2, 10)}`) =>
  ok("creating a marketplace", await post("/v1/marketplaces", { token, body: { name } }), 201).item

const marketplaceFields = [
  "canDelete",
  "createdAt",
  "createdByOrgMembershipId",
  "deletedAt",
  "description",
  "id",
  "lastSyncError",
  "logoUrl",
  "name",
  "organizationId",
  "pluginCount",
  "staleSince",
  "status",
  "updatedAt"
]
const membershipFields = ["createdAt", "createdByOrgMembershipId", "id", "marketplaceId", "membershipSource", "plugin", "pluginId", "removedAt"]
const keys = (value: object) => Object.keys(value).sort()

describe("marketplaces", () => {
  it("are created by owners and admins, who then manage them; changed by editors", async () => {
    const org = await Http.staffed(server.url)
    const byMember = await post("/v1/marketplaces", { token: org.member.token, body: { name: "Mine" } })
    expect(byMember.status).toBe(403)
    expect(byMember.body.reason).toBe("insufficient_role")

    const created = await post("/v1/marketplaces", {
      token: org.admin.token,
      body: { name: " Engineering ", description: "Tools we trust", logoUrl: "https://example.com/logo.png" }
    })
    expect(created.status).toBe(201)
    expect(created.body.ok).toBe(true)
    const market = created.body.item
    expect(keys(market)).toEqual(marketplaceFields)
    expect(market.id).toMatch(/^mkt_[0-7][0-9a-z]{25}$/)
    expect(market).toMatchObject({
      organizationId: org.organizationId,
      name: "Engineering",
      description: "Tools we trust",
      logoUrl: "https://example.com/logo.png",
      status: "active",
      createdByOrgMembershipId: org.admin.membership.id,
      deletedAt: null,
      canDelete: true,
      pluginCount: 0,
      // Made by a person, not a connector: never stale.
      staleSince: null,
      lastSyncError: null
    })
    const read = await get(`/v1/marketplaces/${market.id}`, { token: org.admin.token })
    expect(read.status).toBe(200)
    expect(read.body).toEqual({ item: market })
    const grants = ok("grants", await get(`/v1/marketplaces/${market.id}/access`, { token: org.admin.token }), 200).items
    expect(grants).toEqual([expect.objectContaining({ orgMembershipId: org.admin.membership.id, role: "manager" })])
    expect(grants[0].id).toMatch(/^mag_/)

    const refused = await get(`/v1/marketplaces/${market.id}`, { token: org.member.token })
    expect(refused.status).toBe(403)
    expect(refused.body).toEqual({ reason: "insufficient_access", message: "Missing viewer access for marketplace." })
    expect((await get("/v1/marketplaces", { token: org.member.token })).body.items).toEqual([])
    ok("viewer", await post(`/v1/marketplaces/${market.id}/access`, { token: org.admin.token, body: { orgMembershipId: org.member.membership.id, role: "viewer" } }), 201)
    expect((await get("/v1/marketplaces", { token: org.member.token })).body.items).toEqual([market])
    const asViewer = await patch(`/v1/marketplaces/${market.id}`, { token: org.member.token, body: { name: "Nope" } })
    expect(asViewer.status).toBe(403)
    expect(asViewer.body).toEqual({ reason: "insufficient_access", message: "Missing editor access for marketplace." })
    ok("editor", await post(`/v1/marketplaces/${market.id}/access`, { token: org.admin.token, body: { orgMembershipId: org.member.membership.id, role: "editor" } }), 201)
    const updated = await patch(`/v1/marketplaces/${market.id}`, { token: org.member.token, body: { name: "Platform", logoUrl: null } })
    expect(updated.status).toBe(200)
    expect(updated.body.ok).toBe(true)
    expect(updated.body.item).toMatchObject({ name: "Platform", description: "Tools we trust", logoUrl: null })
    const relative = await patch(`/v1/marketplaces/${market.id}`, { token: org.member.token, body: { logoUrl: "/logos/p.png" } })
    expect(relative.body.item.logoUrl).toBe("/logos/p.png")
    expect((await patch(`/v1/marketplaces/${market.id}`, { token: org.member.token, body: { logoUrl: "http://insecure" } })).status).toBe(400)
    expect((await del(`/v1/marketplaces/${market.id}`, { token: org.member.token })).status).toBe(403)
  })

  it("answer 409 marketplace_exists for a name another marketplace of the organization has; deleted ones free theirs", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const first = await newMarketplace(org.admin.token, "Public")
    const duplicate = await post("/v1/marketplaces", { token: org.owner.token, body: { name: "PUBLIC" } })
    expect(duplicate.status).toBe(409)
    expect(duplicate.body).toEqual({ error: "marketplace_exists", message: 'The organization already has a marketplace named "PUBLIC".' })
    const second = await newMarketplace(org.admin.token, "Internal")
    const renamed = await patch(`/v1/marketplaces/${second.id}`, { token: org.admin.token, body: { name: "public" } })
    expect(renamed.status).toBe(409)
    expect(renamed.body.error).toBe("marketplace_exists")
    expect((await post("/v1/marketplaces", { token: other.token, body: { name: "Public" } })).status).toBe(201)
    ok("deleting", await del(`/v1/marketplaces/${first.id}`, { token: org.admin.token }), 200)
    expect((await post("/v1/marketplaces", { token: org.admin.token, body: { name: "public" } })).status).toBe(201)
  })

  it("are soft-deleted once; deleted ones stay readable and are listed only on request", async () => {
    const org = await Http.staffed(server.url)
    const market = await newMarketplace(org.admin.token, "Old")
    const deleted = await del(`/v1/marketplaces/${market.id}`, { token: org.admin.token })
    expect(deleted.status).toBe(200)
    expect(deleted.body.ok).toBe(true)
    expect(deleted.body.item).toMatchObject({ id: market.id, status: "deleted" })
    expect(deleted.body.item.deletedAt).not.toBeNull()
    const again = await del(`/v1/marketplaces/${market.id}`, { token: org.admin.token })
    expect(again.status).toBe(200)
    expect(again.body.item).toEqual(deleted.body.item)
    expect((await get(`/v1/marketplaces/${market.id}`, { token: org.admin.token })).body.item).toEqual(deleted.body.item)
    expect((await get("/v1/marketplaces", { token: org.admin.token })).body.items).toEqual([])
    expect((await get("/v1/marketplaces?includeDeleted=true", { token: org.admin.token })).body.items).toEqual([deleted.body.item])
    expect((await get("/v1/marketplaces?status=deleted", { token: org.admin.token })).body.items).toEqual([deleted.body.item])
  })

  it("are not deleted while a connector or the service lists plugins in them (canDelete false)", async () => {
    const org = await Http.staffed(server.url)
    const market = await newMarketplace(org.admin.token, "Synced")
    const synced = await newPlugin(org.admin.token, "Synced plugin")
    const builtIn = await newPlugin(org.admin.token, "Built-in plugin")
    const manual = await newPlugin(org.admin.token, "Manual plugin")
    ok("manual", await post(`/v1/marketplaces/${market.id}/plugins`, { token: org.admin.token, body: { pluginId: manual.id } }), 201)
    expect((await get(`/v1/marketplaces/${market.id}`, { token: org.admin.token })).body.item).toMatchObject({ canDelete: true, pluginCount: 1 })

    await managedMembership(org.organizationId, market.id, synced.id, "connector")
    await managedMembership(org.organizationId, market.id, builtIn.id, "system")
    const read = (await get(`/v1/marketplaces/${market.id}`, { token: org.admin.token })).body.item
    expect(read).toMatchObject({ canDelete: false, pluginCount: 3 })
    const refused = await del(`/v1/marketplaces/${market.id}`, { token: org.admin.token })
    expect(refused.status).toBe(409)
    expect(refused.body).toEqual({
      error: "managed_marketplace_cannot_be_deleted",
      message: "Built-in and connected marketplaces cannot be deleted here."
    })
    const listed = (await get(`/v1/marketplaces/${market.id}/plugins`, { token: org.admin.token })).body.items
    expect(listed.map((m: any) => [m.pluginId, m.membershipSource])).toEqual([
      [manual.id, "manual"],
      [synced.id, "connector"],
      [builtIn.id, "system"]
    ])

    // Removing the connector's entry is not enough while the service's remains.
    expect((await del(`/v1/marketplaces/${market.id}/plugins/${synced.id}`, { token: org.admin.token })).status).toBe(204)
    expect((await del(`/v1/marketplaces/${market.id}`, { token: org.admin.token })).status).toBe(409)
    expect((await del(`/v1/marketplaces/${market.id}/plugins/${builtIn.id}`, { token: org.admin.token })).status).toBe(204)
    expect((await get(`/v1/marketplaces/${market.id}`, { token: org.admin.token })).body.item).toMatchObject({ canDelete: true, pluginCount: 1 })
    const deleted = await del(`/v1/marketplaces/${market.id}`, { token: org.admin.token })
    expect(deleted.status).toBe(200)
    expect(deleted.body.item.status).toBe("deleted")
  })

  it("list plugins: added by editors who can view them, in the order added, re-added in place, removed softly", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const market = await newMarketplace(org.admin.token, "Store")
    const first = await newPlugin(org.admin.token, "Zeta")
    const second = await newPlugin(org.admin.token, "Alpha")
    const foreign = await newPlugin(other.token, "Foreign")

    const added = await post(`/v1/marketplaces/${market.id}/plugins`, { token: org.admin.token, body: { pluginId: first.id } })
    expect(added.status).toBe(201)
    expect(added.body.ok).toBe(true)
    expect(keys(added.body.item)).toEqual(membershipFields)
    expect(added.body.item).toMatchObject({
      marketplaceId: market.id,
      pluginId: first.id,
      membershipSource: "manual",
      createdByOrgMembershipId: org.admin.membership.id,
      removedAt: null
    })
    expect(added.body.item.id).toMatch(/^mkp_/)
    expect(added.body.item.plugin).toMatchObject({ id: first.id, name: "Zeta", marketplaces: [{ id: market.id, name: "Store" }] })
    ok("second", await post(`/v1/marketplaces/${market.id}/plugins`, { token: org.admin.token, body: { pluginId: second.id } }), 201)
    const readded = await post(`/v1/marketplaces/${market.id}/plugins`, { token: org.admin.token, body: { pluginId: first.id } })
    expect(readded.body.item.id).toBe(added.body.item.id)

    const listed = await get(`/v1/marketplaces/${market.id}/plugins`, { token: org.admin.token })
    expect(listed.status).toBe(200)
    expect(listed.body.nextCursor).toBeNull()
    expect(listed.body.items.map((m: any) => m.pluginId)).toEqual([first.id, second.id])
    expect(listed.body.items[0]).toEqual(added.body.item)
    expect((await get(`/v1/marketplaces/${market.id}`, { token: org.admin.token })).body.item.pluginCount).toBe(2)

    const foreignAdd = await post(`/v1/marketplaces/${market.id}/plugins`, { token: org.admin.token, body: { pluginId: foreign.id } })
    expect(foreignAdd.status).toBe(404)
    expect(foreignAdd.body).toEqual({ error: "plugin_not_found", message: "Plugin not found." })

    expect((await del(`/v1/marketplaces/${market.id}/plugins/${first.id}`, { token: org.admin.token })).status).toBe(204)
    const twice = await del(`/v1/marketplaces/${market.id}/plugins/${first.id}`, { token: org.admin.token })
    expect(twice.status).toBe(404)
    expect(twice.body).toEqual({ error: "marketplace_membership_not_found", message: "The plugin is not listed in this marketplace." })
    expect((await get(`/v1/marketplaces/${market.id}/plugins`, { token: org.admin.token })).body.items.map((m: any) => m.pluginId)).toEqual([second.id])
    const all = (await get(`/v1/marketplaces/${market.id}/plugins?includeRemoved=true`, { token: org.admin.token })).body.items
    expect(all.map((m: any) => m.pluginId)).toEqual([first.id, second.id])
    expect(all[0].removedAt).not.toBeNull()
    const back = await post(`/v1/marketplaces/${market.id}/plugins`, { token: org.admin.token, body: { pluginId: first.id } })
    expect(back.body.item).toMatchObject({ id: added.body.item.id, removedAt: null })

    // A deleted plugin is not counted, and cannot be added.
    ok("deleting", await del(`/v1/plugins/${second.id}`, { token: org.admin.token }), 200)
    expect((await get(`/v1/marketplaces/${market.id}`, { token: org.admin.token })).body.item.pluginCount).toBe(1)
    ok("removing", await del(`/v1/marketplaces/${market.id}/plugins/${second.id}`, { token: org.admin.token }), 204)
    const deletedAdd = await post(`/v1/marketplaces/${market.id}/plugins`, { token: org.admin.token, body: { pluginId: second.id } })
    expect(deletedAdd.status).toBe(409)
    expect(deletedAdd.body).toEqual({ error: "plugin_deleted", message: "The plugin is deleted; restore it first." })
  })

  it("need editor access on the marketplace and viewer access on the plugin to list it", async () => {
    const org = await Http.staffed(server.url)
    const market = await newMarketplace(org.admin.token)
    const plugin = await newPlugin(org.admin.token)
    const own = await newPlugin(org.member.token)
    ok("viewer", await post(`/v1/marketplaces/${market.id}/access`, { token: org.admin.token, body: { orgMembershipId: org.member.membership.id, role: "viewer" } }), 201)
    const asViewer = await post(`/v1/marketplaces/${market.id}/plugins`, { token: org.member.token, body: { pluginId: own.id } })
    expect(asViewer.status).toBe(403)
    expect(asViewer.body).toEqual({ reason: "insufficient_access", message: "Missing editor access for marketplace." })
    ok("editor", await post(`/v1/marketplaces/${market.id}/access`, { token: org.admin.token, body: { orgMembershipId: org.member.membership.id, role: "editor" } }), 201)
    const unseen = await post(`/v1/marketplaces/${market.id}/plugins`, { token: org.member.token, body: { pluginId: plugin.id } })
    expect(unseen.status).toBe(403)
    expect(unseen.body).toEqual({ reason: "insufficient_access", message: "Missing viewer access for plugin." })
    ok("own plugin", await post(`/v1/marketplaces/${market.id}/plugins`, { token: org.member.token, body: { pluginId: own.id } }), 201)
    expect((await get(`/v1/marketplaces/${market.id}/plugins`, { token: org.member.token })).body.items).toHaveLength(1)
  })

  it("resolve to their plugins (not deleted, by name) with component counts and cloud readiness", async () => {
    const org = await Http.staffed(server.url)
    const market = await newMarketplace(org.admin.token, "Resolved")
    const tools = await newPlugin(org.admin.token, "tools")
    const guide = await newPlugin(org.admin.token, "Guide")
    const gone = await newPlugin(org.admin.token, "Gone")
    const objects = {
      hook: await configObject(org.admin.token, "hook"),
      mcp: await configObject(org.admin.token, "mcp"),
      skill1: await configObject(org.admin.token, "skill"),
      skill2: await configObject(org.admin.token, "skill"),
      archivedAgent: await configObject(org.admin.token, "agent", "archived"),
      command: await configObject(org.admin.token, "command")
    }
    const put = async (pluginId: string, configObjectId: string) =>
      ok("adding", await post(`/v1/plugins/${pluginId}/config-objects`, { token: org.admin.token, body: { configObjectId } }), 201)
    await put(tools.id, objects.hook)
    await put(tools.id, objects.mcp)
    await put(tools.id, objects.archivedAgent)
    await put(guide.id, objects.skill1)
    await put(guide.id, objects.skill2)
    await put(guide.id, objects.command)
    await put(guide.id, objects.hook)
    for (const plugin of [tools, guide, gone]) {
      ok("listing", await post(`/v1/marketplaces/${market.id}/plugins`, { token: org.admin.token, body: { pluginId: plugin.id } }), 201)
    }
    ok("deleting", await del(`/v1/plugins/${gone.id}`, { token: org.admin.token }), 200)
    ok("viewer", await post(`/v1/marketplaces/${market.id}/access`, { token: org.admin.token, body: { orgMembershipId: org.member.membership.id, role: "viewer" } }), 201)

    const resolved = await get(`/v1/marketplaces/${market.id}/resolved`, { token: org.member.token })
    expect(resolved.status).toBe(200)
    expect(resolved.body.ok).toBe(true)
    expect(keys(resolved.body.item)).toEqual(["marketplace", "plugins", "source"])
    expect(resolved.body.item.source).toBeNull()
    expect(resolved.body.item.marketplace).toEqual((await get(`/v1/marketplaces/${market.id}`, { token: org.member.token })).body.item)
    expect(resolved.body.item.marketplace).toMatchObject({ pluginCount: 2, canDelete: true })
    const [first, second] = resolved.body.item.plugins
    expect(resolved.body.item.plugins).toHaveLength(2)
    expect(keys(first)).toEqual(["cloudReadiness", "componentCounts", "createdAt", "createdByOrgMembershipId", "deletedAt", "description", "extension", "id", "marketplaces", "memberCount", "name", "organizationId", "skippedFiles", "sourceMetadata", "status", "updatedAt"])
    expect(first).toMatchObject({ id: guide.id, componentCounts: { skill: 2, command: 1, hook: 1 }, cloudReadiness: { hasInstructional: true, connections: [] } })
    expect(second).toMatchObject({ id: tools.id, componentCounts: { hook: 1, mcp: 1 }, cloudReadiness: { hasInstructional: false } })
    // The mcp object's server, which no connection of the organization serves.
    expect(second.cloudReadiness.connections).toEqual([
      expect.objectContaining({ configObjectId: objects.mcp, id: null, url: "https://example.com/mcp", connectedForMe: false })
    ])
    const { cloudReadiness: _, componentCounts: __, ...plugin } = first
    expect(plugin).toEqual((await get(`/v1/plugins/${guide.id}`, { token: org.member.token })).body.item)
  })

  it("answer 404 for another organization's marketplace, on every operation", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const market = await newMarketplace(org.admin.token, "Ours")
    const plugin = await newPlugin(other.token)
    const notFound = { error: "marketplace_not_found", message: "Marketplace not found." }
    const calls = [
      get(`/v1/marketplaces/${market.id}`, { token: other.token }),
      patch(`/v1/marketplaces/${market.id}`, { token: other.token, body: { name: "Taken" } }),
      del(`/v1/marketplaces/${market.id}`, { token: other.token }),
      get(`/v1/marketplaces/${market.id}/plugins`, { token: other.token }),
      post(`/v1/marketplaces/${market.id}/plugins`, { token: other.token, body: { pluginId: plugin.id } }),
      del(`/v1/marketplaces/${market.id}/plugins/${plugin.id}`, { token: other.token }),
      get(`/v1/marketplaces/${market.id}/resolved`, { token: other.token }),
      post(`/v1/marketplaces/${market.id}/access`, { token: other.token, body: { orgWide: true, role: "viewer" } }),
      get(`/v1/marketplaces/${market.id}/access`, { token: other.token }),
      del(`/v1/marketplaces/${market.id}/access/${typeId("mag")}`, { token: other.token })
    ]
    for (const response of await Promise.all(calls)) {
      expect(response.status).toBe(404)
      expect(response.body).toEqual(notFound)
    }
    expect((await get(`/v1/marketplaces/${market.id}`, { token: org.admin.token })).body.item).toEqual(market)
  })

  it("share through grants: team and org-wide grants let members view, revoking twice keeps the record", async () => {
    const org = await Http.staffed(server.url)
    const market = await newMarketplace(org.admin.token, "Granted")
    const team = ok("team", await post("/v1/teams", { token: org.owner.token, body: { name: "Crew", memberIds: [org.member.membership.id] } }), 201).team
    const manager = await Http.join(server.url, org.owner.token, "member", "Manager")
    ok("manager", await post(`/v1/marketplaces/${market.id}/access`, { token: org.admin.token, body: { orgMembershipId: manager.membership.id, role: "manager" } }), 201)
    const orgWideByMember = await post(`/v1/marketplaces/${market.id}/access`, { token: manager.token, body: { orgWide: true, role: "viewer" } })
    expect(orgWideByMember.status).toBe(403)
    expect(orgWideByMember.body.reason).toBe("insufficient_role")

    const byTeam = await post(`/v1/marketplaces/${market.id}/access`, { token: manager.token, body: { teamId: team.id, role: "viewer" } })
    expect(byTeam.status).toBe(201)
    expect(byTeam.body.item).toMatchObject({ teamId: team.id, role: "viewer", removedAt: null })
    expect((await get(`/v1/marketplaces/${market.id}`, { token: org.member.token })).status).toBe(200)
    const upserted = await post(`/v1/marketplaces/${market.id}/access`, { token: manager.token, body: { teamId: team.id, role: "editor" } })
    expect(upserted.body.item).toMatchObject({ id: byTeam.body.item.id, role: "editor" })

    expect((await del(`/v1/marketplaces/${market.id}/access/${byTeam.body.item.id}`, { token: manager.token })).status).toBe(204)
    expect((await del(`/v1/marketplaces/${market.id}/access/${byTeam.body.item.id}`, { token: manager.token })).status).toBe(204)
    expect((await get(`/v1/marketplaces/${market.id}`, { token: org.member.token })).status).toBe(403)
    const withRevoked = (await get(`/v1/marketplaces/${market.id}/access?includeRevoked=true`, { token: manager.token })).body.items
    expect(withRevoked.find((g: any) => g.id === byTeam.body.item.id).removedAt).not.toBeNull()
    expect((await get(`/v1/marketplaces/${market.id}/access`, { token: manager.token })).body.items.map((g: any) => g.id)).not.toContain(byTeam.body.item.id)

    ok("org-wide", await post(`/v1/marketplaces/${market.id}/access`, { token: org.admin.token, body: { orgWide: true, role: "viewer" } }), 201)
    expect((await get(`/v1/marketplaces/${market.id}`, { token: org.member.token })).status).toBe(200)
    expect((await get(`/v1/marketplaces/${market.id}/access`, { token: org.member.token })).status).toBe(403)
  })

  it("page their plugins (150 memberships) and themselves with keyset cursors, without gaps or duplicates", { timeout: 120_000 }, async () => {
    const org = await Http.staffed(server.url)
    const market = await newMarketplace(org.admin.token, "Big")
    // 150 plugins listed a millisecond apart, some time ago, written in two statements.
    const plugins: Array<{ id: string }> = Array.from({ length: 150 }, () => ({ id: typeId("plg") }))
    const start = Date.now() - 60_000
    await sql((sql) =>
      Effect.andThen(
        sql`INSERT INTO plugins ${
          sql.insert(nonEmpty(plugins.map(({ id }, i) => ({
            id,
            organization_id: org.organizationId,
            name: `Plugin ${String(i).padStart(3, "0")}`,
            description: "",
            status: "active",
            created_at: new Date(start),
            updated_at: new Date(start)
          }))))
        }`,
        sql`INSERT INTO marketplace_plugins ${
          sql.insert(nonEmpty(plugins.map(({ id }, i) => ({
            id: typeId("mkp"),
            organization_id: org.organizationId,
            marketplace_id: market.id,
            plugin_id: id,
            membership_source: "manual",
            created_at: new Date(start + i)
          }))))
        }`
      )
    )
    const walked: Array<any> = []
    let cursor: string | null = null
    let extra = 0
    do {
      const page: Http.RawResponse = await get(
        `/v1/marketplaces/${market.id}/plugins?limit=9${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        { token: org.admin.token }
      )
      expect(page.status).toBe(200)
      walked.push(...page.body.items)
      cursor = page.body.nextCursor
      // Added while paging: they come after every earlier membership, so the walk ends with them.
      if (extra < 3) {
        const late = await newPlugin(org.admin.token, `Late ${extra++}`)
        plugins.push(late)
        ok("listing late", await post(`/v1/marketplaces/${market.id}/plugins`, { token: org.admin.token, body: { pluginId: late.id } }), 201)
      }
    } while (cursor)
    expect(walked.map((m) => m.pluginId)).toEqual(plugins.map((p) => p.id))
    expect(walked.every((m) => m.plugin.id === m.pluginId)).toBe(true)

    for (let i = 0; i < 23; i++) await newMarketplace(org.admin.token, `Market ${String(i).padStart(2, "0")}`)
    const names: Array<string> = []
    cursor = null
    do {
      const page: Http.RawResponse = await get(`/v1/marketplaces?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { token: org.admin.token })
      names.push(...page.body.items.map((m: any) => m.name))
      cursor = page.body.nextCursor
    } while (cursor)
    expect(names).toEqual(["Big", ...Array.from({ length: 23 }, (_, i) => `Market ${String(i).padStart(2, "0")}`)])
    expect((await get("/v1/marketplaces?q=ket%2001", { token: org.admin.token })).body.items.map((m: any) => m.name)).toEqual(["Market 01"])
  })
})

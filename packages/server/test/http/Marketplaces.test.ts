/**
 * The Marketplaces group through HTTP: the resource with `canDelete` and `pluginCount`, names, soft delete (refused
 * while a connector or the service lists plugins in it), plugin memberships, the resolved marketplace, access, and
 * keyset paging.
 *
 * Connector and system memberships are written with SQL on the server's own database (no endpoint writes them yet),
 * as are the bulk rows for paging; config objects are made through the Config objects group.
 */
import * as SqlClient from "effect/sql/SqlClient"
import type { ObjectType } from "@orgplane/schema"
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
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

const api = calls(() => server.url)
const sql = <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => server.sql(use)

/** Effect 4's `sql.insert` takes a non-empty array of rows. */
const nonEmpty = <A>(rows: ReadonlyArray<A>): Arr.NonEmptyReadonlyArray<A> => {
  if (!Arr.isReadonlyArrayNonEmpty(rows)) throw new Error("no rows to insert")
  return rows
}


const typeId = (prefix: Parameters<typeof typeid>[0]) => typeid(prefix).toString()

/** What a config object of `type` is made from. */
const sourceOf = (type: ObjectType): Record<string, unknown> => {
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
const configObject = async (token: string, type: ObjectType, status: "active" | "archived" | "deleted" = "active"): Promise<string> => {
  const item = ok(await api.configObjects.create({ token, payload: { input: { objectType: type, ...sourceOf(type) } } }), 201).item
  if (status === "archived") ok(await api.configObjects.archive({ path: { configObjectId: item.id }, token }), 200)
  if (status === "deleted") ok(await api.configObjects.delete({ path: { configObjectId: item.id }, token }), 200)
  return item.id
}

/** A membership a connector's sync or the service itself would write. */
const managedMembership = (organizationId: string, marketplaceId: string, pluginId: string, source: "connector" | "system") =>
  sql((sql) =>
    sql`INSERT INTO marketplace_plugins (id, organization_id, marketplace_id, plugin_id, membership_source, created_at)
        VALUES (${typeId("mkp")}, ${organizationId}, ${marketplaceId}, ${pluginId}, ${source}, ${new Date()})`
  )

const newPlugin = async (token: string, name = `Plugin ${Math.random().toString(36).slice(2, 10)}`) =>
  ok(await api.plugins.create({ token, payload: { name } }), 201).item

const newMarketplace = async (token: string, name = `Market ${Math.random().toString(36).slice(2, 10)}`) =>
  ok(await api.marketplaces.create({ token, payload: { name } }), 201).item

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
    const byMember = await api.marketplaces.create({ token: org.member.token, payload: { name: "Mine" } })
    expect(byMember.status).toBe(403)
    expect(byMember.body).toMatchObject({ reason: "insufficient_role" })

    const created = await api.marketplaces.create({ token: org.admin.token, payload: { name: " Engineering ", description: "Tools we trust", logoUrl: "https://example.com/logo.png" } })
    expect(created.status).toBe(201)
    expect(ok(created, 201).ok).toBe(true)
    const market = ok(created, 201).item
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
    const read = await api.marketplaces.get({ path: { marketplaceId: market.id }, token: org.admin.token })
    expect(read.status).toBe(200)
    expect(read.body).toEqual({ item: market })
    const grants = ok(await api.marketplaces.marketplaceListAccess({ path: { marketplaceId: market.id }, token: org.admin.token }), 200).items
    expect(grants).toEqual([expect.objectContaining({ orgMembershipId: org.admin.membership.id, role: "manager" })])
    expect(grants[0].id).toMatch(/^mag_/)

    const refused = await api.marketplaces.get({ path: { marketplaceId: market.id }, token: org.member.token })
    expect(refused.status).toBe(403)
    expect(refused.body).toEqual({ reason: "insufficient_access", message: "Missing viewer access for marketplace." })
    expect(ok(await api.marketplaces.list({ token: org.member.token }), 200).items).toEqual([])
    ok(await api.marketplaces.marketplaceGrant({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { orgMembershipId: org.member.membership.id, role: "viewer" } }), 201)
    expect(ok(await api.marketplaces.list({ token: org.member.token }), 200).items).toEqual([market])
    const asViewer = await api.marketplaces.update({ path: { marketplaceId: market.id }, token: org.member.token, payload: { name: "Nope" } })
    expect(asViewer.status).toBe(403)
    expect(asViewer.body).toEqual({ reason: "insufficient_access", message: "Missing editor access for marketplace." })
    ok(await api.marketplaces.marketplaceGrant({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { orgMembershipId: org.member.membership.id, role: "editor" } }), 201)
    const updated = await api.marketplaces.update({ path: { marketplaceId: market.id }, token: org.member.token, payload: { name: "Platform", logoUrl: null } })
    expect(updated.status).toBe(200)
    expect(ok(updated, 200).ok).toBe(true)
    expect(ok(updated, 200).item).toMatchObject({ name: "Platform", description: "Tools we trust", logoUrl: null })
    const relative = ok(await api.marketplaces.update({ path: { marketplaceId: market.id }, token: org.member.token, payload: { logoUrl: "/logos/p.png" } }), 200)
    expect(relative.item.logoUrl).toBe("/logos/p.png")
    expect((await api.marketplaces.update({ path: { marketplaceId: market.id }, token: org.member.token, payload: { logoUrl: "http://insecure" } })).status).toBe(400)
    expect((await api.marketplaces.delete({ path: { marketplaceId: market.id }, token: org.member.token })).status).toBe(403)
  })

  it("answer 409 marketplace_exists for a name another marketplace of the organization has; deleted ones free theirs", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const first = await newMarketplace(org.admin.token, "Public")
    const duplicate = await api.marketplaces.create({ token: org.owner.token, payload: { name: "PUBLIC" } })
    expect(duplicate.status).toBe(409)
    expect(duplicate.body).toEqual({ error: "marketplace_exists", message: 'The organization already has a marketplace named "PUBLIC".' })
    const second = await newMarketplace(org.admin.token, "Internal")
    const renamed = await api.marketplaces.update({ path: { marketplaceId: second.id }, token: org.admin.token, payload: { name: "public" } })
    expect(renamed.status).toBe(409)
    expect(renamed.body).toMatchObject({ error: "marketplace_exists" })
    expect((await api.marketplaces.create({ token: other.token, payload: { name: "Public" } })).status).toBe(201)
    ok(await api.marketplaces.delete({ path: { marketplaceId: first.id }, token: org.admin.token }), 200)
    expect((await api.marketplaces.create({ token: org.admin.token, payload: { name: "public" } })).status).toBe(201)
  })

  it("are soft-deleted once; deleted ones stay readable and are listed only on request", async () => {
    const org = await Http.staffed(server.url)
    const market = await newMarketplace(org.admin.token, "Old")
    const deleted = await api.marketplaces.delete({ path: { marketplaceId: market.id }, token: org.admin.token })
    expect(deleted.status).toBe(200)
    expect(ok(deleted, 200).ok).toBe(true)
    expect(ok(deleted, 200).item).toMatchObject({ id: market.id, status: "deleted" })
    expect(ok(deleted, 200).item.deletedAt).not.toBeNull()
    const again = await api.marketplaces.delete({ path: { marketplaceId: market.id }, token: org.admin.token })
    expect(again.status).toBe(200)
    expect(ok(again, 200).item).toEqual(ok(deleted, 200).item)
    expect(ok(await api.marketplaces.get({ path: { marketplaceId: market.id }, token: org.admin.token }), 200).item).toEqual(ok(deleted, 200).item)
    expect(ok(await api.marketplaces.list({ token: org.admin.token }), 200).items).toEqual([])
    expect(ok(await api.marketplaces.list({ query: { includeDeleted: "true" }, token: org.admin.token }), 200).items).toEqual([ok(deleted, 200).item])
    expect(ok(await api.marketplaces.list({ query: { status: "deleted" }, token: org.admin.token }), 200).items).toEqual([ok(deleted, 200).item])
  })

  it("are not deleted while a connector or the service lists plugins in them (canDelete false)", async () => {
    const org = await Http.staffed(server.url)
    const market = await newMarketplace(org.admin.token, "Synced")
    const synced = await newPlugin(org.admin.token, "Synced plugin")
    const builtIn = await newPlugin(org.admin.token, "Built-in plugin")
    const manual = await newPlugin(org.admin.token, "Manual plugin")
    ok(await api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { pluginId: manual.id } }), 201)
    expect(ok(await api.marketplaces.get({ path: { marketplaceId: market.id }, token: org.admin.token }), 200).item).toMatchObject({ canDelete: true, pluginCount: 1 })

    await managedMembership(org.organizationId, market.id, synced.id, "connector")
    await managedMembership(org.organizationId, market.id, builtIn.id, "system")
    const read = ok(await api.marketplaces.get({ path: { marketplaceId: market.id }, token: org.admin.token }), 200).item
    expect(read).toMatchObject({ canDelete: false, pluginCount: 3 })
    const refused = await api.marketplaces.delete({ path: { marketplaceId: market.id }, token: org.admin.token })
    expect(refused.status).toBe(409)
    expect(refused.body).toEqual({
      error: "managed_marketplace_cannot_be_deleted",
      message: "Built-in and connected marketplaces cannot be deleted here."
    })
    const listed = ok(await api.marketplaces.listPlugins({ path: { marketplaceId: market.id }, token: org.admin.token }), 200).items
    expect(listed.map((m) => [m.pluginId, m.membershipSource])).toEqual([
      [manual.id, "manual"],
      [synced.id, "connector"],
      [builtIn.id, "system"]
    ])

    // Removing the connector's entry is not enough while the service's remains.
    expect((await api.marketplaces.removePlugin({ path: { marketplaceId: market.id, pluginId: synced.id }, token: org.admin.token })).status).toBe(204)
    expect((await api.marketplaces.delete({ path: { marketplaceId: market.id }, token: org.admin.token })).status).toBe(409)
    expect((await api.marketplaces.removePlugin({ path: { marketplaceId: market.id, pluginId: builtIn.id }, token: org.admin.token })).status).toBe(204)
    expect(ok(await api.marketplaces.get({ path: { marketplaceId: market.id }, token: org.admin.token }), 200).item).toMatchObject({ canDelete: true, pluginCount: 1 })
    const deleted = await api.marketplaces.delete({ path: { marketplaceId: market.id }, token: org.admin.token })
    expect(deleted.status).toBe(200)
    expect(ok(deleted, 200).item.status).toBe("deleted")
  })

  it("list plugins: added by editors who can view them, in the order added, re-added in place, removed softly", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const market = await newMarketplace(org.admin.token, "Store")
    const first = await newPlugin(org.admin.token, "Zeta")
    const second = await newPlugin(org.admin.token, "Alpha")
    const foreign = await newPlugin(other.token, "Foreign")

    const added = await api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { pluginId: first.id } })
    expect(added.status).toBe(201)
    expect(ok(added, 201).ok).toBe(true)
    expect(keys(ok(added, 201).item)).toEqual(membershipFields)
    expect(ok(added, 201).item).toMatchObject({
      marketplaceId: market.id,
      pluginId: first.id,
      membershipSource: "manual",
      createdByOrgMembershipId: org.admin.membership.id,
      removedAt: null
    })
    expect(ok(added, 201).item.id).toMatch(/^mkp_/)
    expect(ok(added, 201).item.plugin).toMatchObject({ id: first.id, name: "Zeta", marketplaces: [{ id: market.id, name: "Store" }] })
    ok(await api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { pluginId: second.id } }), 201)
    const readded = ok(await api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { pluginId: first.id } }), 201)
    expect(readded.item.id).toBe(ok(added, 201).item.id)

    const listed = await api.marketplaces.listPlugins({ path: { marketplaceId: market.id }, token: org.admin.token })
    expect(listed.status).toBe(200)
    expect(ok(listed, 200).nextCursor).toBeNull()
    expect(ok(listed, 200).items.map((m) => m.pluginId)).toEqual([first.id, second.id])
    expect(ok(listed, 200).items[0]).toEqual(ok(added, 201).item)
    expect(ok(await api.marketplaces.get({ path: { marketplaceId: market.id }, token: org.admin.token }), 200).item.pluginCount).toBe(2)

    const foreignAdd = await api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { pluginId: foreign.id } })
    expect(foreignAdd.status).toBe(404)
    expect(foreignAdd.body).toEqual({ error: "plugin_not_found", message: "Plugin not found." })

    expect((await api.marketplaces.removePlugin({ path: { marketplaceId: market.id, pluginId: first.id }, token: org.admin.token })).status).toBe(204)
    const twice = await api.marketplaces.removePlugin({ path: { marketplaceId: market.id, pluginId: first.id }, token: org.admin.token })
    expect(twice.status).toBe(404)
    expect(twice.body).toEqual({ error: "marketplace_membership_not_found", message: "The plugin is not listed in this marketplace." })
    expect(ok(await api.marketplaces.listPlugins({ path: { marketplaceId: market.id }, token: org.admin.token }), 200).items.map((m) => m.pluginId)).toEqual([second.id])
    const all = ok(await api.marketplaces.listPlugins({ path: { marketplaceId: market.id }, query: { includeRemoved: "true" }, token: org.admin.token }), 200).items
    expect(all.map((m) => m.pluginId)).toEqual([first.id, second.id])
    expect(all[0].removedAt).not.toBeNull()
    const back = ok(await api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { pluginId: first.id } }), 201)
    expect(back.item).toMatchObject({ id: ok(added, 201).item.id, removedAt: null })

    // A deleted plugin is not counted, and cannot be added.
    ok(await api.plugins.delete({ path: { pluginId: second.id }, token: org.admin.token }), 200)
    expect(ok(await api.marketplaces.get({ path: { marketplaceId: market.id }, token: org.admin.token }), 200).item.pluginCount).toBe(1)
    ok(await api.marketplaces.removePlugin({ path: { marketplaceId: market.id, pluginId: second.id }, token: org.admin.token }), 204)
    const deletedAdd = await api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { pluginId: second.id } })
    expect(deletedAdd.status).toBe(409)
    expect(deletedAdd.body).toEqual({ error: "plugin_deleted", message: "The plugin is deleted; restore it first." })
  })

  it("need editor access on the marketplace and viewer access on the plugin to list it", async () => {
    const org = await Http.staffed(server.url)
    const market = await newMarketplace(org.admin.token)
    const plugin = await newPlugin(org.admin.token)
    const own = await newPlugin(org.member.token)
    ok(await api.marketplaces.marketplaceGrant({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { orgMembershipId: org.member.membership.id, role: "viewer" } }), 201)
    const asViewer = await api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: org.member.token, payload: { pluginId: own.id } })
    expect(asViewer.status).toBe(403)
    expect(asViewer.body).toEqual({ reason: "insufficient_access", message: "Missing editor access for marketplace." })
    ok(await api.marketplaces.marketplaceGrant({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { orgMembershipId: org.member.membership.id, role: "editor" } }), 201)
    const unseen = await api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: org.member.token, payload: { pluginId: plugin.id } })
    expect(unseen.status).toBe(403)
    expect(unseen.body).toEqual({ reason: "insufficient_access", message: "Missing viewer access for plugin." })
    ok(await api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: org.member.token, payload: { pluginId: own.id } }), 201)
    expect(ok(await api.marketplaces.listPlugins({ path: { marketplaceId: market.id }, token: org.member.token }), 200).items).toHaveLength(1)
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
      ok(await api.plugins.addConfigObject({ path: { pluginId }, token: org.admin.token, payload: { configObjectId } }), 201)
    await put(tools.id, objects.hook)
    await put(tools.id, objects.mcp)
    await put(tools.id, objects.archivedAgent)
    await put(guide.id, objects.skill1)
    await put(guide.id, objects.skill2)
    await put(guide.id, objects.command)
    await put(guide.id, objects.hook)
    for (const plugin of [tools, guide, gone]) {
      ok(await api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { pluginId: plugin.id } }), 201)
    }
    ok(await api.plugins.delete({ path: { pluginId: gone.id }, token: org.admin.token }), 200)
    ok(await api.marketplaces.marketplaceGrant({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { orgMembershipId: org.member.membership.id, role: "viewer" } }), 201)

    const resolved = await api.marketplaces.resolved({ path: { marketplaceId: market.id }, token: org.member.token })
    expect(resolved.status).toBe(200)
    expect(ok(resolved, 200).ok).toBe(true)
    expect(keys(ok(resolved, 200).item)).toEqual(["marketplace", "plugins", "source"])
    expect(ok(resolved, 200).item.source).toBeNull()
    expect(ok(resolved, 200).item.marketplace).toEqual(ok(await api.marketplaces.get({ path: { marketplaceId: market.id }, token: org.member.token }), 200).item)
    expect(ok(resolved, 200).item.marketplace).toMatchObject({ pluginCount: 2, canDelete: true })
    const [first, second] = ok(resolved, 200).item.plugins
    expect(ok(resolved, 200).item.plugins).toHaveLength(2)
    expect(keys(first)).toEqual(["cloudReadiness", "componentCounts", "createdAt", "createdByOrgMembershipId", "deletedAt", "description", "extension", "id", "marketplaces", "memberCount", "name", "organizationId", "skippedFiles", "sourceMetadata", "status", "updatedAt"])
    expect(first).toMatchObject({ id: guide.id, componentCounts: { skill: 2, command: 1, hook: 1 }, cloudReadiness: { hasInstructional: true, connections: [] } })
    expect(second).toMatchObject({ id: tools.id, componentCounts: { hook: 1, mcp: 1 }, cloudReadiness: { hasInstructional: false } })
    // The mcp object's server, which no connection of the organization serves.
    expect(second.cloudReadiness.connections).toEqual([
      expect.objectContaining({ configObjectId: objects.mcp, id: null, url: "https://example.com/mcp", connectedForMe: false })
    ])
    const { cloudReadiness: _, componentCounts: __, ...plugin } = first
    expect(plugin).toEqual(ok(await api.plugins.get({ path: { pluginId: guide.id }, token: org.member.token }), 200).item)
  })

  it("answer 404 for another organization's marketplace, on every operation", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const market = await newMarketplace(org.admin.token, "Ours")
    const plugin = await newPlugin(other.token)
    const notFound = { error: "marketplace_not_found", message: "Marketplace not found." }
    const calls = [
      api.marketplaces.get({ path: { marketplaceId: market.id }, token: other.token }),
      api.marketplaces.update({ path: { marketplaceId: market.id }, token: other.token, payload: { name: "Taken" } }),
      api.marketplaces.delete({ path: { marketplaceId: market.id }, token: other.token }),
      api.marketplaces.listPlugins({ path: { marketplaceId: market.id }, token: other.token }),
      api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: other.token, payload: { pluginId: plugin.id } }),
      api.marketplaces.removePlugin({ path: { marketplaceId: market.id, pluginId: plugin.id }, token: other.token }),
      api.marketplaces.resolved({ path: { marketplaceId: market.id }, token: other.token }),
      api.marketplaces.marketplaceGrant({ path: { marketplaceId: market.id }, token: other.token, payload: { orgWide: true, role: "viewer" } }),
      api.marketplaces.marketplaceListAccess({ path: { marketplaceId: market.id }, token: other.token }),
      api.marketplaces.marketplaceRevoke({ path: { marketplaceId: market.id, grantId: typeId("mag") }, token: other.token })
    ]
    for (const response of await Promise.all(calls)) {
      expect(response.status).toBe(404)
      expect(response.body).toEqual(notFound)
    }
    expect(ok(await api.marketplaces.get({ path: { marketplaceId: market.id }, token: org.admin.token }), 200).item).toEqual(market)
  })

  it("share through grants: team and org-wide grants let members view, revoking twice keeps the record", async () => {
    const org = await Http.staffed(server.url)
    const market = await newMarketplace(org.admin.token, "Granted")
    const team = ok(await api.teams.create({ token: org.owner.token, payload: { name: "Crew", memberIds: [org.member.membership.id] } }), 201).team
    const manager = await Http.join(server.url, org.owner.token, "member", "Manager")
    ok(await api.marketplaces.marketplaceGrant({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { orgMembershipId: manager.membership.id, role: "manager" } }), 201)
    const orgWideByMember = await api.marketplaces.marketplaceGrant({ path: { marketplaceId: market.id }, token: manager.token, payload: { orgWide: true, role: "viewer" } })
    expect(orgWideByMember.status).toBe(403)
    expect(orgWideByMember.body).toMatchObject({ reason: "insufficient_role" })

    const byTeam = await api.marketplaces.marketplaceGrant({ path: { marketplaceId: market.id }, token: manager.token, payload: { teamId: team.id, role: "viewer" } })
    expect(byTeam.status).toBe(201)
    expect(ok(byTeam, 201).item).toMatchObject({ teamId: team.id, role: "viewer", removedAt: null })
    expect((await api.marketplaces.get({ path: { marketplaceId: market.id }, token: org.member.token })).status).toBe(200)
    const upserted = ok(await api.marketplaces.marketplaceGrant({ path: { marketplaceId: market.id }, token: manager.token, payload: { teamId: team.id, role: "editor" } }), 201)
    expect(upserted.item).toMatchObject({ id: ok(byTeam, 201).item.id, role: "editor" })

    expect((await api.marketplaces.marketplaceRevoke({ path: { marketplaceId: market.id, grantId: ok(byTeam, 201).item.id }, token: manager.token })).status).toBe(204)
    expect((await api.marketplaces.marketplaceRevoke({ path: { marketplaceId: market.id, grantId: ok(byTeam, 201).item.id }, token: manager.token })).status).toBe(204)
    expect((await api.marketplaces.get({ path: { marketplaceId: market.id }, token: org.member.token })).status).toBe(403)
    const withRevoked = ok(await api.marketplaces.marketplaceListAccess({ path: { marketplaceId: market.id }, query: { includeRevoked: "true" }, token: manager.token }), 200).items
    expect(withRevoked.find((g) => g.id === ok(byTeam, 201).item.id)).toMatchObject({ removedAt: expect.any(String) })
    expect(ok(await api.marketplaces.marketplaceListAccess({ path: { marketplaceId: market.id }, token: manager.token }), 200).items.map((g) => g.id)).not.toContain(ok(byTeam, 201).item.id)

    ok(await api.marketplaces.marketplaceGrant({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { orgWide: true, role: "viewer" } }), 201)
    expect((await api.marketplaces.get({ path: { marketplaceId: market.id }, token: org.member.token })).status).toBe(200)
    expect((await api.marketplaces.marketplaceListAccess({ path: { marketplaceId: market.id }, token: org.member.token })).status).toBe(403)
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
    const walked: Array<{ readonly pluginId: string; readonly plugin: { readonly id: string } }> = []
    let cursor: string | null = null
    let extra = 0
    do {
      const page = await api.marketplaces.listPlugins({
        path: { marketplaceId: market.id },
        query: { limit: "9", ...(cursor ? { cursor } : {}) },
        token: org.admin.token
      })
      expect(page.status).toBe(200)
      walked.push(...ok(page, 200).items)
      cursor = ok(page, 200).nextCursor
      // Added while paging: they come after every earlier membership, so the walk ends with them.
      if (extra < 3) {
        const late = await newPlugin(org.admin.token, `Late ${extra++}`)
        plugins.push(late)
        ok(await api.marketplaces.addPlugin({ path: { marketplaceId: market.id }, token: org.admin.token, payload: { pluginId: late.id } }), 201)
      }
    } while (cursor)
    expect(walked.map((m) => m.pluginId)).toEqual(plugins.map((p) => p.id))
    expect(walked.every((m) => m.plugin.id === m.pluginId)).toBe(true)

    for (let i = 0; i < 23; i++) await newMarketplace(org.admin.token, `Market ${String(i).padStart(2, "0")}`)
    const names: Array<string> = []
    cursor = null
    do {
      const answer = await api.marketplaces.list({ query: { limit: "4", ...(cursor ? { cursor } : {}) }, token: org.admin.token })
      const page = ok(answer, 200)
      names.push(...page.items.map((m) => m.name))
      cursor = page.nextCursor
    } while (cursor)
    expect(names).toEqual(["Big", ...Array.from({ length: 23 }, (_, i) => `Market ${String(i).padStart(2, "0")}`)])
    expect(ok(await api.marketplaces.list({ query: { q: "ket 01" }, token: org.admin.token }), 200).items.map((m) => m.name)).toEqual(["Market 01"])
  })
})

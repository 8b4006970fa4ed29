/**
 * The connector groups through HTTP: accounts, instances (access, lifecycle, remove and what it deletes), targets,
 * mappings and their keyset list. Rows a sync would write (materialized config objects, plugins and marketplaces a
 * discovery apply created) are written with SQL on the server's own database.
 */
import type { ConnectorMapping, ConnectorMappingPage, CreateConnectorAccountRequest } from "@orgplane/schema"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as ConnectorWorld from "../support/ConnectorWorld.js"
import * as Effect from "effect/Effect"
import { typeid } from "typeid-js"
import { describe, expect, it } from "vitest"

const world = ConnectorWorld.forFile()
const { get, post, sql } = world
const { configObjects, connectorAccounts, connectorInstances, connectorMappings, connectorTargets, marketplaces, plugins } = calls(() => world.url)
const typeId = (prefix: Parameters<typeof typeid>[0]) => typeid(prefix).toString()
const unique = () => Math.random().toString(36).slice(2, 10)

const tokenAccountBody: typeof CreateConnectorAccountRequest.Encoded = { kind: "token", token: "ghp_secret123", accountLogin: "acme" }
const tokenAccount = async (token: string) =>
  ok(await connectorAccounts.create({ token, payload: tokenAccountBody }), 201).item

/** A token account's instance of acme/plugins, with one target (branch main). */
const instance = (token: string) => world.connect(token, { account: tokenAccountBody, remoteId: "acme/plugins" })

describe("connector accounts", () => {
  it("are connected by owners and admins; the token is stored encrypted and never returned", async () => {
    const org = await Http.staffed(world.url)
    const refused = await connectorAccounts.create({ token: org.member.token, payload: { kind: "token", token: "ghp_x" } })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ reason: "insufficient_role" })

    const created = await connectorAccounts.create({ token: org.admin.token, payload: { kind: "token", token: " ghp_secret123 ", displayName: "CI bot" } })
    expect(created.status).toBe(201)
    const account = ok(created, 201).item
    expect(account).toMatchObject({
      organizationId: org.organizationId,
      connectorType: "codehost",
      kind: "token",
      remoteId: null,
      displayName: "CI bot",
      status: "active",
      createdByOrgMembershipId: org.admin.membership.id
    })
    expect(account.id).toMatch(/^cac_/)
    expect(JSON.stringify(created.body)).not.toContain("ghp_secret123")
    const [stored] = await sql((sql) => sql<{ tokenCiphertext: string }>`SELECT token_ciphertext FROM connector_accounts WHERE organization_id = ${org.organizationId} AND id = ${account.id}`)
    expect(stored.tokenCiphertext).not.toContain("ghp_secret123")

    // Any member reads them.
    expect(ok(await connectorAccounts.list({ token: org.member.token }), 200).items).toEqual([account])
    expect(ok(await connectorAccounts.get({ token: org.member.token, path: { connectorAccountId: account.id } }), 200)).toEqual({ item: account })
    const other = await Http.owner(world.url, "Other")
    expect((await connectorAccounts.get({ token: other.token, path: { connectorAccountId: account.id } })).body).toEqual({
      error: "connector_account_not_found",
      message: "Connector account not found."
    })
  })

  it("record an app installation once per organization: a second is 409 connector_account_exists", async () => {
    const org = await Http.owner(world.url)
    const payload = { kind: "app_installation", installationId: 4242, accountLogin: "acme" } as const
    const first = ok(await connectorAccounts.create({ token: org.token, payload }), 201).item
    expect(first).toMatchObject({ kind: "app_installation", remoteId: "4242", externalAccountRef: "acme", displayName: "acme" })
    const again = await connectorAccounts.create({ token: org.token, payload })
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ error: "connector_account_exists" })
    // Another organization may connect the same installation.
    const other = await Http.owner(world.url, "Other")
    ok(await connectorAccounts.create({ token: other.token, payload }), 201)
  })

  it("refuse bad bodies with 400 naming every bad member", async () => {
    const org = await Http.owner(world.url)
    const bad = await post("/v1/connector-accounts", { token: org.token, body: { kind: "app_installation", installationId: -1, extra: true } })
    expect(bad.status).toBe(400)
    expect(invalid(bad).error).toBe("invalid_request")
    const noKind = await post("/v1/connector-accounts", { token: org.token, body: { token: "x" } })
    expect(noKind.status).toBe(400)
  })
})

describe("connector instances", () => {
  it("are created by owners and admins, who manage them; members need a grant", async () => {
    const org = await Http.staffed(world.url)
    const account = await tokenAccount(org.admin.token)
    const byMember = await connectorInstances.create({
      token: org.member.token,
      payload: { connectorAccountId: account.id, name: "Plugins", remoteId: "acme/plugins" }
    })
    expect(byMember.status).toBe(403)
    const created = await connectorInstances.create({
      token: org.admin.token,
      payload: { connectorAccountId: account.id, name: " Plugins ", remoteId: "acme/plugins", config: { autoImportNewPlugins: false, some_key: 1 } }
    })
    expect(created.status).toBe(201)
    const item = ok(created, 201).item
    expect(item).toMatchObject({
      organizationId: org.organizationId,
      connectorAccountId: account.id,
      connectorType: "codehost",
      remoteId: "acme/plugins",
      name: "Plugins",
      status: "active",
      instanceConfigJson: { autoImportNewPlugins: false, some_key: 1 },
      lastSyncedAt: null,
      lastSyncCursor: null,
      createdByOrgMembershipId: org.admin.membership.id
    })
    expect(item.id).toMatch(/^cin_/)
    const path = { connectorInstanceId: item.id }
    const grants = ok(await connectorInstances.connectorInstanceListAccess({ token: org.admin.token, path }), 200).items
    expect(grants).toEqual([expect.objectContaining({ orgMembershipId: org.admin.membership.id, role: "manager" })])
    expect(grants[0].id).toMatch(/^cia_/)

    // Names are unique, case-insensitively: 409, not 500.
    const clash = await connectorInstances.create({ token: org.admin.token, payload: { connectorAccountId: account.id, name: "PLUGINS", remoteId: "acme/other" } })
    expect(clash.status).toBe(409)
    expect(clash.body).toMatchObject({ error: "connector_instance_exists" })

    expect((await connectorInstances.get({ token: org.member.token, path })).status).toBe(403)
    expect(ok(await connectorInstances.list({ token: org.member.token }), 200).items).toEqual([])
    ok(await connectorInstances.connectorInstanceGrant({ token: org.admin.token, path, payload: { orgMembershipId: org.member.membership.id, role: "viewer" } }), 201)
    expect(ok(await connectorInstances.list({ token: org.member.token }), 200).items).toEqual([item])
    const asViewer = await connectorInstances.update({ token: org.member.token, path, payload: { name: "Mine" } })
    expect(asViewer.status).toBe(403)
    expect(asViewer.body).toEqual({ reason: "insufficient_access", message: "Missing editor access for connector instance." })

    const unknownAccount = await connectorInstances.create({
      token: org.admin.token,
      payload: { connectorAccountId: typeId("cac"), name: "X", remoteId: "acme/x" }
    })
    expect(unknownAccount.status).toBe(404)
    expect(unknownAccount.body).toMatchObject({ error: "connector_account_not_found" })
    const badRepo = await connectorInstances.create({ token: org.admin.token, payload: { connectorAccountId: account.id, name: "Y", remoteId: "not a repo" } })
    expect(badRepo.status).toBe(400)
    expect(invalid(badRepo).details[0].path).toEqual(["remoteId"])
  })

  it("PATCH changes remoteId, name and config (replaced whole); at least one is required; enable and disable set the status", async () => {
    const org = await Http.owner(world.url)
    const { instance: created } = await instance(org.token)
    const path = { connectorInstanceId: created.id }
    const empty = await connectorInstances.update({ token: org.token, path, payload: {} })
    expect(empty.status).toBe(400)
    expect(invalid(empty).details[0]).toMatchObject({ path: ["name"], message: "give at least one of remoteId, name or config" })
    const updated = ok(await connectorInstances.update({ token: org.token, path, payload: { config: { b: 2 } } }), 200)
    expect(updated).toEqual({ ok: true, item: expect.objectContaining({ instanceConfigJson: { b: 2 }, name: created.name }) })
    const renamed = ok(await connectorInstances.update({ token: org.token, path, payload: { name: "Renamed", remoteId: "acme/renamed" } }), 200).item
    expect(renamed).toMatchObject({ name: "Renamed", remoteId: "acme/renamed", instanceConfigJson: { b: 2 } })
    expect(ok(await connectorInstances.disable({ token: org.token, path }), 200).item.status).toBe("disabled")
    expect(ok(await connectorInstances.enable({ token: org.token, path }), 200).item.status).toBe("active")
    const other = await Http.owner(world.url, "Other")
    const foreign = await connectorInstances.enable({ token: other.token, path })
    expect(foreign.status).toBe(404)
    expect(foreign.body).toMatchObject({ error: "connector_instance_not_found" })
  })
})

describe("connector targets and mappings", () => {
  it("a target follows one branch; the same branch twice is 409; PATCH needs one member", async () => {
    const org = await Http.owner(world.url)
    const { instance: created, target } = await instance(org.token)
    expect(target).toMatchObject({
      connectorInstanceId: created.id,
      connectorType: "codehost",
      remoteId: "acme/plugins",
      targetKind: "repository_branch",
      externalTargetRef: "main",
      targetConfigJson: {}
    })
    const path = { connectorInstanceId: created.id }
    const again = await connectorInstances.createTarget({ token: org.token, path, payload: { externalTargetRef: "main" } })
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ error: "connector_target_exists" })
    const badBranch = await connectorInstances.createTarget({ token: org.token, path, payload: { externalTargetRef: "a..b" } })
    expect(badBranch.status).toBe(400)
    const dev = ok(await connectorInstances.createTarget({ token: org.token, path, payload: { externalTargetRef: "dev" } }), 201).item
    expect(ok(await connectorInstances.listTargets({ token: org.token, path }), 200).items.map((t) => t.id)).toEqual([target.id, dev.id])
    const devPath = { connectorTargetId: dev.id }
    expect((await connectorTargets.update({ token: org.token, path: devPath, payload: {} })).status).toBe(400)
    expect((await connectorTargets.update({ token: org.token, path: devPath, payload: { externalTargetRef: "main" } })).body).toMatchObject({ error: "connector_target_exists" })
    expect(ok(await connectorTargets.update({ token: org.token, path: devPath, payload: { externalTargetRef: "release" } }), 200).item.externalTargetRef).toBe("release")
    expect(ok(await connectorTargets.get({ token: org.token, path: devPath }), 200).item.externalTargetRef).toBe("release")
  })

  it("mappings are unique per target, selector and object type (409, not 500); a plugin needs editor access", async () => {
    const org = await Http.staffed(world.url)
    const { instance: created, target } = await instance(org.admin.token)
    const plugin = ok(await plugins.create({ token: org.owner.token, payload: { name: `P ${unique()}` } }), 201).item
    const path = { connectorTargetId: target.id }
    const mapping = ok(await connectorTargets.createMapping({
      token: org.admin.token,
      path,
      payload: { mappingKind: "path", selector: "skills/**", objectType: "skill", pluginId: plugin.id, autoAddToPlugin: true, config: { note: "x" } }
    }), 201).item
    expect(Object.keys(mapping).sort()).toEqual([
      "autoAddToPlugin", "connectorInstanceId", "connectorTargetId", "connectorType", "createdAt", "id", "mappingConfigJson",
      "mappingKind", "objectType", "pluginId", "remoteId", "selector", "updatedAt"
    ])
    expect(mapping).toMatchObject({
      connectorInstanceId: created.id,
      connectorTargetId: target.id,
      remoteId: null,
      mappingKind: "path",
      selector: "skills/**",
      objectType: "skill",
      pluginId: plugin.id,
      autoAddToPlugin: true,
      mappingConfigJson: { note: "x" }
    })
    const clash = await connectorTargets.createMapping({ token: org.admin.token, path, payload: { mappingKind: "api", selector: " skills/** ", objectType: "skill" } })
    expect(clash.status).toBe(409)
    expect(clash.body).toMatchObject({ error: "connector_mapping_exists" })
    const second = ok(await connectorTargets.createMapping({ token: org.admin.token, path, payload: { mappingKind: "path", selector: "skills/**", objectType: "agent" } }), 201).item
    expect(second.autoAddToPlugin).toBe(false)
    const secondPath = { connectorMappingId: second.id }
    expect((await connectorMappings.update({ token: org.admin.token, path: secondPath, payload: { objectType: "skill" } })).body).toMatchObject({ error: "connector_mapping_exists" })

    // A member with editor access on the instance but none on the plugin.
    ok(await connectorInstances.connectorInstanceGrant({ token: org.admin.token, path: { connectorInstanceId: created.id }, payload: { orgMembershipId: org.member.membership.id, role: "editor" } }), 201)
    const noPlugin = await connectorTargets.createMapping({ token: org.member.token, path, payload: { mappingKind: "path", selector: "agents/**", objectType: "agent", pluginId: plugin.id } })
    expect(noPlugin.status).toBe(403)
    expect(noPlugin.body).toMatchObject({ message: "Missing editor access for plugin." })
    const updated = ok(await connectorMappings.update({ token: org.member.token, path: secondPath, payload: { selector: "agents/**", config: null } }), 200).item
    expect(updated).toMatchObject({ selector: "agents/**", mappingConfigJson: null, mappingKind: "path" })
    expect(invalid(await connectorMappings.update({ token: org.member.token, path: secondPath, payload: {} })).details[0].path).toEqual(["selector"])
    expect((await connectorMappings.delete({ token: org.member.token, path: secondPath })).status).toBe(204)
    expect((await connectorMappings.get({ token: org.member.token, path: secondPath })).body).toMatchObject({ error: "connector_mapping_not_found" })
    const unknownPlugin = await connectorTargets.createMapping({ token: org.admin.token, path, payload: { mappingKind: "path", selector: "x", objectType: "tool", pluginId: typeId("plg") } })
    expect(unknownPlugin.body).toMatchObject({ error: "plugin_not_found" })
  })

  it("the mappings list filters, searches and pages by keyset; bad query values are 400; unknown or foreign targets 404", async () => {
    const org = await Http.owner(world.url)
    const { target } = await instance(org.token)
    const plugin = ok(await plugins.create({ token: org.token, payload: { name: `P ${unique()}` } }), 201).item
    const path = { connectorTargetId: target.id }
    const made: Array<typeof ConnectorMapping.Encoded> = []
    for (let i = 0; i < 7; i++) {
      made.push(ok(await connectorTargets.createMapping({
        token: org.token,
        path,
        payload: { mappingKind: i % 2 === 0 ? "path" : "custom", selector: `dir${i}/**`, objectType: i < 4 ? "skill" : "command", pluginId: i === 3 ? plugin.id : null }
      }), 201).item)
    }
    const all: Array<typeof ConnectorMapping.Encoded> = []
    let cursor: string | null = null
    do {
      const page: typeof ConnectorMappingPage.Encoded = ok(await connectorTargets.listMappings({ token: org.token, path, query: { limit: "3", ...(cursor ? { cursor } : {}) } }), 200)
      expect(page.items.length).toBeLessThanOrEqual(3)
      if (page.nextCursor !== null) expect(page.nextCursor.length).toBeLessThanOrEqual(255)
      all.push(...page.items)
      cursor = page.nextCursor
    } while (cursor)
    expect(all.map((m) => m.id)).toEqual([...made].reverse().map((m) => m.id))

    const list = async (query: string) =>
      Http.expectStatus<typeof ConnectorMappingPage.Encoded>(query, await get(`/v1/connector-targets/${target.id}/mappings?${query}`, { token: org.token }), 200).items.map((m) => m.selector)
    expect(await list("mappingKind=custom")).toEqual(["dir5/**", "dir3/**", "dir1/**"])
    expect(await list("objectType=command&mappingKind=path")).toEqual(["dir6/**", "dir4/**"])
    expect(await list(`pluginId=${plugin.id}`)).toEqual(["dir3/**"])
    expect(await list("q=DIR2")).toEqual(["dir2/**"])
    expect(await list("q=%25")).toEqual([])

    for (const query of ["limit=0", "limit=101", "limit=1.5", "mappingKind=file", "objectType=app", "pluginId=cob_1", `q=${"x".repeat(256)}`, `cursor=${"c".repeat(256)}`, "cursor=forged.cursor"]) {
      const bad = await get(`/v1/connector-targets/${target.id}/mappings?${query}`, { token: org.token })
      expect(bad.status, query).toBe(400)
      expect(invalid(bad).error).toBe("invalid_request")
    }
    // A cursor of other filters is refused.
    const first = ok(await connectorTargets.listMappings({ token: org.token, path, query: { limit: "1" } }), 200)
    if (first.nextCursor === null) throw new Error(`a page of one of seven mappings has no cursor: ${JSON.stringify(first)}`)
    expect((await connectorTargets.listMappings({ token: org.token, path, query: { limit: "1", objectType: "skill", cursor: first.nextCursor } })).status).toBe(400)

    const missing = await connectorTargets.listMappings({ token: org.token, path: { connectorTargetId: typeId("ctg") } })
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ error: "connector_target_not_found", message: "Connector target not found." })
    const other = await Http.owner(world.url, "Other")
    expect((await connectorTargets.listMappings({ token: other.token, path })).status).toBe(404)
    expect((await connectorTargets.listMappings({ path })).status).toBe(401)
    expect((await get(`/v1/connector-targets/not-an-id/mappings`, { token: org.token })).status).toBe(400)
  })
})

describe("removing a connector instance", () => {
  /** What a sync would have written: a config object of the instance, version 1, bound to a mapping, in a plugin. */
  const materialized = (organizationId: string, instanceId: string, targetId: string, mappingId: string, pluginId: string | null, path: string) =>
    sql((sql) =>
      Effect.gen(function*() {
        const id = typeId("cob")
        const at = new Date()
        yield* sql`INSERT INTO config_objects (id, organization_id, object_type, source_mode, status, title, description, search_text,
                     current_relative_path, connector_instance_id, created_at, updated_at)
                   VALUES (${id}, ${organizationId}, 'skill', 'connector', 'active', ${path}, '', ${path}, ${path}, ${instanceId}, ${at}, ${at})`
        yield* sql`INSERT INTO config_object_versions (id, organization_id, config_object_id, number, schema_version, parser_mode,
                     raw_source_text, created_via, is_deleted_version, created_at)
                   VALUES (${typeId("cov")}, ${organizationId}, ${id}, 1, '1', 'markdown', 'x', 'connector', false, ${at})`
        yield* sql`INSERT INTO connector_source_bindings (config_object_id, organization_id, connector_instance_id, connector_target_id,
                     connector_mapping_id, path, blob_sha, source_revision_ref, created_at, updated_at)
                   VALUES (${id}, ${organizationId}, ${instanceId}, ${targetId}, ${mappingId}, ${path}, 'abc', 'def', ${at}, ${at})`
        if (pluginId !== null) {
          yield* sql`INSERT INTO plugin_config_objects (id, organization_id, plugin_id, config_object_id, membership_source, connector_mapping_id, created_at)
                     VALUES (${typeId("pco")}, ${organizationId}, ${pluginId}, ${id}, 'connector', ${mappingId}, ${at})`
        }
        return id
      })
    )
  const tie = (table: "plugins" | "marketplaces", organizationId: string, id: string, instanceId: string) =>
    sql((sql) => sql`UPDATE ${sql(table)} SET connector_instance_id = ${instanceId} WHERE organization_id = ${organizationId} AND id = ${id}`)
  const exists = (table: string, organizationId: string, id: string) =>
    sql((sql) => sql`SELECT 1 FROM ${sql(table)} WHERE organization_id = ${organizationId} AND id = ${id}`).then((rows) => rows.length === 1)

  it("deletes its mappings and config objects, and the plugins and marketplaces it created that hold nothing else, in one transaction", async () => {
    const org = await Http.staffed(world.url)
    const { instance: created, target } = await instance(org.owner.token)
    const orgId = org.organizationId
    const newPlugin = async () => ok(await plugins.create({ token: org.owner.token, payload: { name: `P ${unique()}` } }), 201).item.id
    const tied = await newPlugin() // created by apply, holds only the instance's objects: deleted
    const tiedShared = await newPlugin() // created by apply, also holds a hand-made object: kept, untied
    const manual = await newPlugin() // made by people, mapped to: kept
    const mapping = async (selector: string, pluginId: string) =>
      ok(await connectorTargets.createMapping({ token: org.owner.token, path: { connectorTargetId: target.id }, payload: { mappingKind: "path", selector, objectType: "skill", pluginId } }), 201).item.id
    const [m1, m2, m3] = [await mapping("a/**", tied), await mapping("b/**", tiedShared), await mapping("c/**", manual)]
    await tie("plugins", orgId, tied, created.id)
    await tie("plugins", orgId, tiedShared, created.id)
    const objects = [
      await materialized(orgId, created.id, target.id, m1, tied, "a/SKILL.md"),
      await materialized(orgId, created.id, target.id, m2, tiedShared, "b/SKILL.md"),
      await materialized(orgId, created.id, target.id, m3, manual, "c/SKILL.md")
    ]
    const handMade = ok(await configObjects.create({
      token: org.owner.token,
      payload: { pluginIds: [tiedShared], input: { objectType: "context", rawSourceText: "kept" } }
    }), 201).item.id
    const market = ok(await marketplaces.create({ token: org.owner.token, payload: { name: `M ${unique()}` } }), 201).item.id
    const keptMarket = ok(await marketplaces.create({ token: org.owner.token, payload: { name: `K ${unique()}` } }), 201).item.id
    ok(await marketplaces.addPlugin({ token: org.owner.token, path: { marketplaceId: market }, payload: { pluginId: tied } }), 201)
    ok(await marketplaces.addPlugin({ token: org.owner.token, path: { marketplaceId: keptMarket }, payload: { pluginId: tiedShared } }), 201)
    await tie("marketplaces", orgId, market, created.id)
    await tie("marketplaces", orgId, keptMarket, created.id)

    // An editor may not remove: it needs manager access.
    const path = { connectorInstanceId: created.id }
    ok(await connectorInstances.connectorInstanceGrant({ token: org.owner.token, path, payload: { orgMembershipId: org.member.membership.id, role: "editor" } }), 201)
    expect((await connectorInstances.remove({ token: org.member.token, path })).status).toBe(403)

    const removed = ok(await connectorInstances.remove({ token: org.owner.token, path }), 200)
    expect(removed).toEqual({
      ok: true,
      item: {
        removedConnectorInstanceId: created.id,
        deletedConfigObjectCount: 3,
        deletedConnectorMappingCount: 3,
        deletedPluginCount: 1,
        deletedMarketplaceCount: 1
      }
    })
    for (const id of objects) expect(await exists("config_objects", orgId, id)).toBe(false)
    expect(await exists("config_objects", orgId, handMade)).toBe(true)
    expect(await exists("plugins", orgId, tied)).toBe(false)
    expect(await exists("plugins", orgId, tiedShared)).toBe(true)
    expect(await exists("plugins", orgId, manual)).toBe(true)
    expect(await exists("marketplaces", orgId, market)).toBe(false)
    expect(await exists("marketplaces", orgId, keptMarket)).toBe(true)
    expect(await exists("connector_targets", orgId, target.id)).toBe(false)
    const untied = await sql((sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM plugins WHERE organization_id = ${orgId} AND connector_instance_id IS NOT NULL`)
    expect(untied[0].n).toBe(0)
    expect(ok(await plugins.get({ token: org.owner.token, path: { pluginId: tiedShared } }), 200).item.memberCount).toBe(1)
    expect((await connectorInstances.get({ token: org.owner.token, path })).status).toBe(404)
    expect((await connectorInstances.remove({ token: org.owner.token, path })).status).toBe(404)
  })

  it("disconnecting an account removes all its instances the same way, then the account", async () => {
    const org = await Http.owner(world.url)
    const account = await tokenAccount(org.token)
    const ids: Array<string> = []
    for (const name of ["One", "Two"]) {
      const made = ok(await connectorInstances.create({ token: org.token, payload: { connectorAccountId: account.id, name: `${name} ${unique()}`, remoteId: "acme/x" } }), 201).item
      const target = ok(await connectorInstances.createTarget({ token: org.token, path: { connectorInstanceId: made.id }, payload: { externalTargetRef: "main" } }), 201).item
      const mapping = ok(await connectorTargets.createMapping({ token: org.token, path: { connectorTargetId: target.id }, payload: { mappingKind: "path", selector: "s/**", objectType: "skill" } }), 201).item
      await materialized(org.organization.id, made.id, target.id, mapping.id, null, "s/SKILL.md")
      ids.push(made.id)
    }
    const accountPath = { connectorAccountId: account.id }
    const result = ok(await connectorAccounts.disconnect({ token: org.token, path: accountPath, payload: { reason: "rotating" } }), 200)
    expect(result).toEqual({
      ok: true,
      item: {
        disconnectedAccountId: account.id,
        deletedConnectorInstanceCount: 2,
        deletedConfigObjectCount: 2,
        deletedConnectorMappingCount: 2,
        deletedPluginCount: 0,
        deletedMarketplaceCount: 0,
        reason: "rotating"
      }
    })
    for (const id of ids) expect((await connectorInstances.get({ token: org.token, path: { connectorInstanceId: id } })).status).toBe(404)
    expect((await connectorAccounts.get({ token: org.token, path: accountPath })).status).toBe(404)
    expect((await connectorAccounts.disconnect({ token: org.token, path: accountPath, payload: {} })).status).toBe(404)
  })
})

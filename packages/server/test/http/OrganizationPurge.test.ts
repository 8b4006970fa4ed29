/**
 * The purge (identity/OrganizationPurge.ts, docs/lifecycle.md), through HTTP and the job as it runs: an organization
 * with something in every area is deleted, the clock moves past its grace, the purge's loop runs on its own, and then
 * every tenant table of the database (read from the catalog here, not from the server's list) holds no row of it,
 * while a second organization's rows are all still there; what non-tenant tables kept of it is gone too, and the
 * operator organization's log records what was removed, per table. Unclaimed provisional workspaces expire and are
 * purged the same way; claimed ones stay.
 */
import * as FakeMcp from "../../../../packages/testkit/src/FakeMcp.js"
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Wait from "../../../../packages/testkit/src/Wait.js"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { typeid } from "typeid-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SyncEventsRepository } from "../../src/connectors/SyncEventsRepository.js"
import { allSecretColumns } from "../../src/platform/SecretColumns.js"

const clock = new TestServer.ShiftedClock()
let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
const fakes: Array<{ close: () => Promise<void> }> = []
beforeAll(async () => {
  server = await TestServer.startSharingDatabase({
    clock,
    outboundAllowPrivate: true,
    defaultPlan: "enterprise",
    // The loop runs often here; what makes work due is the clock.
    organizationPurgeInterval: "200 millis"
  })
}, 120_000)
afterAll(async () => {
  for (const fake of fakes) await fake.close()
  await server?.close()
})

const { get } = Http.verbs(() => server.url)
const {
  apiKeys, audit, auditStreams, bootstrap, configObjects, connectorAccounts, connectorInstances, desktopPolicies, invitations, llmProviders,
  marketplaces, mcpAuthorization, mcpConnections, members, memory, organizations, plugins, scimGroups, scimUsers, sso, suiteClients, teams,
  telemetry, templates, users, workerRuntime, workers
} = calls(() => server.url)
const DAY = 24 * 60 * 60 * 1000
const unique = () => Math.random().toString(36).slice(2, 10)

/** Every table with an `organization_id` column, from the catalog (partitions included, as tables of their own). */
const tenantTables = () =>
  server.sql((sql) =>
    Effect.map(
      sql<{ readonly name: string }>`/* instance-wide: the tenant tables, for the purge test */
        SELECT c.table_name AS name FROM information_schema.columns c
        JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
        WHERE c.column_name = 'organization_id' AND c.table_schema = current_schema()
        ORDER BY 1`,
      (rows) => rows.map((row) => row.name)
    )
  )

/** The organization's rows in every tenant table, by table (tables without any left out). */
const rowsOf = (organizationId: string) =>
  server.sql((sql) =>
    Effect.gen(function*() {
      const counts: Record<string, number> = {}
      for (const table of yield* Effect.promise(tenantTables)) {
        const [row] = yield* sql.unsafe<{ readonly count: number }>(
          `SELECT count(*)::int AS count FROM "${table}" WHERE organization_id = $1`,
          [organizationId]
        )
        if (row!.count > 0) counts[table] = row!.count
      }
      return counts
    })
  )

/** Something in every area, made through the API by a staffed organization's owner (a fresh sign-in). */
const populate = async (name: string) => {
  const org = await Http.staffed(server.url, name)
  const token = org.owner.token
  // People: teams, an invitation, API keys (one made with an Idempotency-Key, one made with the other).
  ok(await teams.create({ token, payload: { name: "Core", memberIds: [org.admin.membership.id, org.member.membership.id] } }), 201)
  ok(await invitations.create({ token, payload: { email: `invitee.${unique()}@example.com`, role: "member" } }), 201)
  const key = ok(await apiKeys.create({ token, payload: { name: "CI", scopes: ["apiKeys.manage", "teams.read"] }, headers: { "idempotency-key": `key-${unique()}` } }), 201).key
  ok(await apiKeys.create({ apiKey: key, payload: { name: "child", scopes: ["teams.read"] } }), 201)
  ok(await members.setDirectorySettings({ token, payload: { emailsVisibleToMembers: true } }), 200)
  // The catalog: a config object with two versions, a plugin holding it, a marketplace listing the plugin, grants.
  const object = ok(await configObjects.create({ token, payload: { input: { objectType: "custom", rawSourceText: "Hello\nbody" } } }), 201).item
  ok(await configObjects.createVersion({ token, path: { configObjectId: object.id }, payload: { input: { rawSourceText: "Hello again\nbody" } } }), 201)
  const plugin = ok(await plugins.create({ token, payload: { name: `Plugin ${unique()}` } }), 201).item
  ok(await plugins.addConfigObject({ token, path: { pluginId: plugin.id }, payload: { configObjectId: object.id } }), 201)
  const marketplace = ok(await marketplaces.create({ token, payload: { name: `Market ${unique()}` } }), 201).item
  ok(await marketplaces.addPlugin({ token, path: { marketplaceId: marketplace.id }, payload: { pluginId: plugin.id } }), 201)
  ok(await plugins.pluginGrant({ token, path: { pluginId: plugin.id }, payload: { orgWide: true, role: "viewer" } }), 201)
  ok(await configObjects.configObjectGrant({ token, path: { configObjectId: object.id }, payload: { orgMembershipId: org.member.membership.id, role: "editor" } }), 201)
  // Templates, memories, desktop policies, telemetry.
  ok(await templates.create({ token, payload: { name: `Template ${unique()}`, kind: "workspace", document: { a: 1 } } }), 201)
  ok(await memory.save({ token: org.member.token, payload: { content: "Prefers dark mode", tags: ["ui"], contexts: [{ snippet: "dark" }] } }), 201)
  ok(await desktopPolicies.create({ token, payload: { policyName: "Strict", policy: {} } }), 201)
  const startedAt = new Date(Date.now() - 60_000).toISOString()
  ok(await telemetry.ingest({ token: org.member.token, payload: { events: [{ type: "task.started", timestamp: startedAt, sessionId: "s-1", dimensions: [{ type: "project", label: "Website" }] }] } }), 204)
  // Workers: a worker, its heartbeat and instance (with its runtime's credential, encrypted).
  const worker = ok(await workers.register({ token, payload: { name: "Laptop", destination: "local" } }), 201)
  ok(await workerRuntime.heartbeat({ token: worker.token, payload: { openSessions: 1 } }), 200)
  ok(await workerRuntime.registerInstance({
    token: worker.token,
    payload: { provider: "static", status: "running", url: "http://127.0.0.1:9/runtime", credential: `rt_${unique()}` }
  }), 201)
  // Directories and sign-in: SCIM with a provisioned person and a group, SSO connections and a domain.
  const scim = await Http.scimDirectory(server.url, token)
  const directory = { connectionId: scim.connection.id }
  ok(await scimUsers.create({
    token: scim.token,
    path: directory,
    payload: { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: `dir.${unique()}@${name.toLowerCase()}.example`, active: true }
  }), 201)
  ok(await scimGroups.create({ token: scim.token, path: directory, payload: { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: "Engineering" } }), 201)
  ok(await sso.createConnection({
    token,
    payload: {
      kind: "oidc",
      name: "Okta",
      domains: [`${name.toLowerCase()}-${unique()}.example`],
      oidc: { issuer: "https://login.example", clientId: "orgplane", clientSecret: `sso-${unique()}` }
    }
  }), 201)
  ok(await sso.setPolicy({ token, payload: { requireSso: false } }), 200)
  // Third parties: MCP (an API key, and an OAuth flow's stored tokens), an LLM provider, a suite, GitHub.
  const mcp = await FakeMcp.start({ auth: "oauth" })
  fakes.push(mcp)
  const flowed = ok(await mcpConnections.create({ token, payload: { name: "Flowed", url: mcp.url, authType: "oauth" } }), 201).item
  const started = ok(await mcpAuthorization.connect({ token, path: { connectionId: flowed.id } }), 200)
  if (started.authorizeUrl === null) throw new Error("connecting gave no authorization URL")
  const approved = await fetch(started.authorizeUrl, { redirect: "manual" })
  const callback = new URL(approved.headers.get("location")!)
  // The callback as the provider's redirect names it, its query as it came.
  Http.expectStatus("the callback", await get(`${callback.pathname}${callback.search}`), 200)
  ok(await mcpConnections.mcpConnectionGrant({ token, path: { connectionId: flowed.id }, payload: { orgWide: true, role: "viewer" } }), 201)
  ok(await llmProviders.create({
    token,
    payload: {
      name: "Custom",
      apiStyle: "openai-compatible",
      baseUrl: "http://127.0.0.1:9/v1",
      models: [{ id: "model-1" }],
      apiKey: `sk-${unique()}`
    }
  }), 201)
  ok(await suiteClients.put({ token, path: { suite: "suite-a" }, payload: { clientId: "suite", clientSecret: `s-${unique()}`, features: ["mailDraft"] } }), 200)
  const account = ok(await connectorAccounts.create({ token, payload: { kind: "token", token: `ghp_${unique()}` } }), 201).item
  const instance = ok(await connectorInstances.create({ token, payload: { connectorAccountId: account.id, name: "Plugins", remoteId: "acme/plugins" } }), 201).item
  ok(await connectorInstances.createTarget({ token, path: { connectorInstanceId: instance.id }, payload: { externalTargetRef: "main" } }), 201)
  // The audit log: its settings and a stream (paused: nothing is sent).
  ok(await audit.setSettings({ token, payload: { retentionDays: 400 } }), 200)
  ok(await auditStreams.create({ token, payload: { url: "http://127.0.0.1:9/audit", status: "paused" } }), 201)
  return { ...org, key }
}

describe("the purge", { timeout: 300_000 }, () => {
  it("removes every row of a deleted organization from every tenant table once its grace is over, and nothing of another", async () => {
    const operator = await Http.operator(server.url, "Operations")
    const doomed = await populate("Doomed")
    const kept = await populate("Kept")
    // A provisional workspace nobody claims, and one whose owner claimed it.
    const unclaimed = ok(await bootstrap.workspace({ payload: { workspaceName: "Abandoned" } }), 201)
    const claimedWorkspace = ok(await bootstrap.workspace({ payload: { workspaceName: "Adopted" } }), 201)
    const adopter = await Http.signUp(server.url, "Adopter")
    const claimLink = claimedWorkspace.claimLinks[0]
    if (claimLink === undefined) throw new Error("the workspace came without a claim link")
    ok(await bootstrap.acceptClaim({ token: adopter.token, payload: { token: claimLink.token } }), 200)

    const before = { doomed: await rowsOf(doomed.organizationId), kept: await rowsOf(kept.organizationId) }
    // Something in every area, and every area is among the tables.
    const areas = [
      "memberships", "teams", "team_members", "invitations", "api_keys", "config_objects", "config_object_versions", "config_object_grants",
      "plugins", "plugin_config_objects", "plugin_grants", "marketplaces", "marketplace_plugins", "templates", "template_versions",
      "memories", "memory_contexts", "desktop_policies", "workers", "worker_tokens", "worker_heartbeats", "worker_instances", "scim_connections",
      "scim_tokens", "scim_users", "scim_groups", "scim_events", "sso_connections", "sso_connection_domains", "sso_domains", "sso_policies",
      "mcp_connections", "mcp_connection_grants", "llm_providers", "suite_clients", "connector_accounts", "connector_instances",
      "connector_targets", "audit_settings", "audit_streams", "audit_events", "telemetry_events", "telemetry_session_dimensions"
    ]
    expect(areas.filter((table) => !(table in before.doomed))).toEqual([])
    expect(Object.keys(before.kept).sort()).toEqual(Object.keys(before.doomed).sort())
    // Every encrypted column of an organization's is in a tenant table: the purge reaches every stored secret.
    const tables = await tenantTables()
    expect(allSecretColumns.filter((column) => (column as { readonly scope?: string }).scope !== "instance" && !tables.includes(column.table))).toEqual([])

    // A key of the other organization made in a session the deleted one's SSO signed in (its maker switched
    // organizations): written here, as an SSO sign-in through a real IdP would have recorded it.
    const [crossKey] = await server.sql((sql) =>
      sql<{ readonly id: string }>`UPDATE api_keys SET authenticated_organization_id = ${doomed.organizationId}
        WHERE organization_id = ${kept.organizationId}
          AND id = (SELECT id FROM api_keys WHERE organization_id = ${kept.organizationId} ORDER BY id LIMIT 1)
        RETURNING id`
    )

    const deleted = ok(await organizations.delete({ token: doomed.owner.token, payload: { confirmName: "Doomed" } }), 200).deletion
    for (const table of ["memberships", "teams", "api_keys", "config_object_versions", "scim_users", "mcp_connections", "workers"]) {
      expect([table, deleted.rows[table]]).toEqual([table, before.doomed[table]])
    }

    // Connector syncs: the recovery of queued syncs starts none of a deleted organization's. (Rows a sync would have
    // recorded, written here and removed at once: the recovery itself takes only those queued for over a minute.)
    const queued = await server.sql((sql) =>
      Effect.gen(function*() {
        const ids: Array<string> = []
        for (const organizationId of [doomed.organizationId, kept.organizationId]) {
          const [target] = yield* sql<{ readonly id: string; readonly connectorInstanceId: string }>`
            SELECT id, connector_instance_id FROM connector_targets WHERE organization_id = ${organizationId} LIMIT 1`
          const id = typeid("cse").toString()
          yield* sql`INSERT INTO connector_sync_events (id, organization_id, connector_instance_id, connector_target_id, event_type, status, summary_json, created_at)
                     VALUES (${id}, ${organizationId}, ${target!.connectorInstanceId}, ${target!.id}, 'manual', 'queued', '{}'::jsonb, now())`
          ids.push(id)
        }
        const events = yield* SyncEventsRepository
        const recoverable = yield* events.queuedBefore({ before: new Date(Date.now() + DAY), limit: 100 })
        yield* sql`DELETE FROM connector_sync_events WHERE organization_id = ${doomed.organizationId} AND id = ${ids[0]!}`
        yield* sql`DELETE FROM connector_sync_events WHERE organization_id = ${kept.organizationId} AND id = ${ids[1]!}`
        return recoverable.map((event) => event.organizationId)
      }).pipe(Effect.provide(SyncEventsRepository.layer), Effect.provideService(SqlClient.SqlClient, sql))
    )
    expect(queued).toContain(kept.organizationId)
    expect(queued).not.toContain(doomed.organizationId)

    // A week and a minute later, the loop finds it due and purges it; the unclaimed workspace expired meanwhile.
    clock.advance(7 * DAY + 60_000)
    const organizationRows = (id: string) =>
      server.sql((sql) => Effect.map(sql<{ readonly count: number }>`SELECT count(*)::int AS count FROM organizations WHERE id = ${id}`, ([row]) => row!.count))
    await Wait.until(async () => (await organizationRows(doomed.organizationId)) === 0, "the purge of the deleted organization", 60_000)
    await Wait.until(async () => (await organizationRows(unclaimed.organization.id)) === 0, "the purge of the unclaimed workspace", 60_000)

    expect(await rowsOf(doomed.organizationId)).toEqual({})
    expect(await rowsOf(unclaimed.organization.id)).toEqual({})
    const after = await rowsOf(kept.organizationId)
    // The other organization keeps every row (background work may have added some: a worker's offline transition).
    expect(Object.entries(before.kept).filter(([table, count]) => (after[table] ?? 0) < count)).toEqual([])
    expect(await organizationRows(kept.organizationId)).toBe(1)
    expect(await organizationRows(claimedWorkspace.organization.id)).toBe(1)
    // What other tables kept of it: no session acts in it or was made by its SSO, no rate-limit window names it.
    const leftovers = await server.sql((sql) =>
      sql<{ readonly sessions: number; readonly windows: number }>`SELECT
        (SELECT count(*)::int FROM sessions WHERE active_organization_id = ${doomed.organizationId} OR authenticated_organization_id = ${doomed.organizationId}) AS sessions,
        (SELECT count(*)::int FROM rate_limits WHERE strpos(key, ${doomed.organizationId}) > 0) AS windows`
    )
    expect(leftovers).toEqual([{ sessions: 0, windows: 0 }])
    // The other organization's key made in its SSO forgot it, and stays.
    expect(await server.sql((sql) =>
      sql`SELECT authenticated_organization_id FROM api_keys WHERE organization_id = ${kept.organizationId} AND id = ${crossKey!.id}`
    )).toEqual([{ authenticatedOrganizationId: null }])

    // Its people keep their accounts; the other organization serves as before.
    const signedIn = ok(await users.signIn({ payload: { email: doomed.owner.email, password: doomed.owner.password } }), 200)
    // A sign-in answers the session, not an organization: the session's organization is the one it acts in.
    expect(ok(await users.me({ token: signedIn.session.token }), 200).organization?.id ?? null).not.toBe(doomed.organizationId)
    const keptToken = ok(await users.signIn({ payload: { email: kept.owner.email, password: kept.owner.password } }), 200).session.token
    expect(ok(await organizations.get({ token: keptToken }), 200).organization).toMatchObject({ id: kept.organizationId, memberCount: 4 })
    ok(await teams.list({ apiKey: kept.key }), 200)

    // The operator's log keeps the record: what was removed, per table, and who deleted it.
    const operatorToken = ok(await users.signIn({ payload: { email: operator.email, password: operator.password } }), 200).session.token
    const records = ok(await audit.listEvents({ token: operatorToken, query: { action: "organization.purge" } }), 200).items
    const record = records.find((event) => event.targets.some((target) => target.id === doomed.organizationId))
    expect(record).toMatchObject({ actor: { type: "system", id: "system:organization-purge" }, outcome: "succeeded" })
    expect(record?.reason).toContain(`purged ${doomed.organizationId} ("Doomed")`)
    expect(record?.reason).toContain(`by ${doomed.owner.membership.id}`)
    expect(record?.reason).toContain(`memberships ${before.doomed["memberships"]}`)
    expect(record?.reason).toContain("organizations 1")
    const expired = records.find((event) => event.targets.some((target) => target.id === unclaimed.organization.id))
    expect(expired?.reason).toContain("by system:provisional-expiry")
  })
})

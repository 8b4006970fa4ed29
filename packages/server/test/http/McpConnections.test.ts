/**
 * External MCP connections over HTTP: create, read, update and delete with every validation rule (credential
 * modes, URL rules, the outbound guard with private destinations off, name clashes), the live `initialize` check
 * against real MCP fakes on 127.0.0.1 (success and each failure's diagnostic), secrets never answered, grants
 * (direct, team, organization-wide; owners and admins not exempt from `usable`), readiness for each state, tool
 * policy, the organization boundary and the cascade on delete.
 */
import {
  type CreateAccessGrantRequest,
  type CreateMcpConnectionRequest,
  ExternalMcpConnectionId,
  Membership,
  Organization,
  type Role,
  SessionId,
  User
} from "@orgplane/schema"
import type { MemberContext } from "@orgplane/schema"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { calls, invalid, ok, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as FakeMcp from "../../../../packages/testkit/src/FakeMcp.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Wait from "../../../../packages/testkit/src/Wait.js"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { Access, McpConnectionKind } from "../../src/access/Access.js"
import * as Principal from "../../src/platform/Principal.js"
import * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
let guarded: TestServer.RunningServer
let open: FakeMcp.FakeMcp
let keyed: FakeMcp.FakeMcp
const API_KEY = "sk-test-very-secret-key-123"

beforeAll(async () => {
  // The MCP fakes are on loopback: private destinations allowed. `guarded` keeps the guard on.
  server = await TestServer.startSharingDatabase({ outboundAllowPrivate: true })
  guarded = await TestServer.start({ outboundAllowPrivate: false })
  open = await FakeMcp.start()
  keyed = await FakeMcp.start({ auth: { apiKey: API_KEY } })
})
afterAll(async () => {
  await open?.close()
  await keyed?.close()
  await guarded?.close()
  await server?.close()
})

const { post } = Http.verbs(() => server.url)
const { audit, configObjects, marketplaces, mcpConnections, plugins, teams } = calls(() => server.url)
const sql = <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => server.sql(use)

const create = async (token: string, payload: typeof CreateMcpConnectionRequest.Encoded) => ok(await mcpConnections.create({ token, payload }), 201).item

const grant = async (token: string, id: string, to: Omit<typeof CreateAccessGrantRequest.Encoded, "role">) =>
  ok(await mcpConnections.mcpConnectionGrant({ token, path: { connectionId: id }, payload: { role: "viewer", ...to } }), 201).item

const usableIds = async (token: string) => ok(await mcpConnections.list({ token }), 200).items.map((item) => item.id)

/** The audit events of `action` about `targetId`, newest first. */
const auditEvents = async (token: string, action: string, targetId: string) => ok(await audit.listEvents({ token, query: { action, targetId } }), 200).items

/** A port nothing listens on. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const probe = Net.createServer()
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as Net.AddressInfo
      probe.close(() => resolve(port))
    })
  })

const unique = () => Math.random().toString(36).slice(2, 8)

describe("MCP connections", () => {
  it("are created after a live check (none and apikey), read, renamed, re-keyed and deleted", async () => {
    const org = await Http.staffed(server.url)
    const none = await create(org.owner.token, { name: "Docs", url: open.url, authType: "none" })
    expect(none.id).toMatch(/^emc_[0-9a-z]{26}$/)
    expect(none).toMatchObject({
      organizationId: org.organizationId,
      name: "Docs",
      url: open.url,
      authType: "none",
      credentialMode: "shared",
      connected: true,
      connectedForMe: true,
      // Nobody is granted a new connection, its creator included.
      ready: false,
      notReadyReason: 'You have not been granted access to "Docs".',
      credentialHealth: "ready",
      credentialHealthReason: null,
      needsReconnect: false,
      oauth: null,
      oauthClientRequired: false,
      toolPolicy: { allDisabled: false, disabledTools: [], updatedByOrgMembershipId: null, updatedAt: null },
      createdByOrgMembershipId: org.owner.membership.id
    })
    expect(none.connectedAt).not.toBeNull()
    expect(open.requests.some((r) => r.rpcMethod === "initialize")).toBe(true)
    const [created] = await auditEvents(org.owner.token, "mcp_connection.create", none.id)
    expect(created.targets).toEqual([{ type: "mcp_connection", id: none.id }])

    const keyedItem = await create(org.admin.token, { name: "Keyed", url: keyed.url, authType: "apikey", apiKey: API_KEY })
    expect(keyedItem).toMatchObject({ authType: "apikey", connected: true, credentialHealth: "ready" })
    expect(keyed.requests.some((r) => r.headers.authorization === `Bearer ${API_KEY}` && r.rpcMethod === "initialize")).toBe(true)

    const path = { connectionId: keyedItem.id }
    const got = await mcpConnections.get({ token: org.admin.token, path })
    expect(got.status).toBe(200)
    expect(got.body).toEqual({ ok: true, item: keyedItem })

    // Owners and admins see every connection in the manageable scope, oldest first, in pages.
    const first = ok(await mcpConnections.list({ token: org.owner.token, query: { scope: "manageable", limit: "1" } }), 200)
    expect(first.items.map((c) => c.id)).toEqual([none.id])
    const cursor = `${first.nextCursor}`
    const second = await mcpConnections.list({ token: org.owner.token, query: { scope: "manageable", limit: "1", cursor } })
    expect(second.body).toEqual({ items: [keyedItem], nextCursor: null })
    // The cursor is bound to the scope.
    expect((await mcpConnections.list({ token: org.owner.token, query: { limit: "1", cursor } })).status).toBe(400)

    const renamed = await mcpConnections.update({ token: org.owner.token, path, payload: { name: "Keyed renamed" } })
    expect(renamed.status).toBe(200)
    expect(ok(renamed, 200).item.name).toBe("Keyed renamed")

    // A new key is checked live before it is stored: a wrong one changes nothing.
    const wrong = await mcpConnections.update({ token: org.owner.token, path, payload: { apiKey: "wrong-key" } })
    expect(wrong.status).toBe(502)
    expect(refusal(wrong, 502)).toMatchObject({ error: "connection_validation_failed", diagnostic: { code: "MCP_HTTP_401" } })
    const rekeyed = await mcpConnections.update({ token: org.owner.token, path, payload: { apiKey: API_KEY } })
    expect(rekeyed.status).toBe(200)

    expect((await mcpConnections.delete({ token: org.owner.token, path })).status).toBe(204)
    const gone = await mcpConnections.get({ token: org.owner.token, path })
    expect(gone.status).toBe(404)
    expect(gone.body).toEqual({ error: "connection_not_found", message: "Unknown connection." })
    expect((await mcpConnections.delete({ token: org.owner.token, path })).status).toBe(404)
  })

  it("answer 502 with a diagnostic when the server does not initialize: wrong key, no MCP endpoint, nothing listening", async () => {
    const org = await Http.staffed(server.url)
    const wrongKey = await mcpConnections.create({
      token: org.owner.token,
      payload: { name: "Wrong key", url: keyed.url, authType: "apikey", apiKey: "not-the-key" },
      headers: { "x-request-id": "req-wrong-key" }
    })
    expect(wrongKey.status).toBe(502)
    expect(wrongKey.body).toMatchObject({
      error: "connection_validation_failed",
      message: 'Could not connect to "Wrong key": The MCP server refused the credential (HTTP 401).',
      diagnostic: {
        referenceId: "req-wrong-key",
        phase: "MCP_INITIALIZE",
        code: "MCP_HTTP_401",
        category: "oauth_resource_rejected",
        httpStatus: 401,
        outbound: { origin: keyed.origin }
      }
    })
    expect(wrongKey.text).not.toContain("not-the-key")

    const noEndpoint = await mcpConnections.create({
      token: org.owner.token,
      payload: { name: "No endpoint", url: `${open.origin}/nothing-here`, authType: "none" }
    })
    expect(noEndpoint.status).toBe(502)
    expect(refusal(noEndpoint, 502)).toMatchObject({
      diagnostic: { code: "MCP_HTTP_404", category: "endpoint_not_found", httpStatus: 404 },
      message: 'Could not connect to "No endpoint": No MCP endpoint at this URL (HTTP 404).'
    })
    expect(noEndpoint.text).not.toContain("nothing-here")

    const port = await closedPort()
    const unreachable = await mcpConnections.create({
      token: org.owner.token,
      payload: { name: "Down", url: `http://127.0.0.1:${port}/mcp`, authType: "none" }
    })
    expect(unreachable.status).toBe(502)
    const down = refusal(unreachable, 502)
    expect(down).toMatchObject({ error: "connection_validation_failed", diagnostic: { outbound: { origin: `http://127.0.0.1:${port}` } } })
    expect(down).not.toHaveProperty("diagnostic.httpStatus")

    // Nothing was stored.
    const all = ok(await mcpConnections.list({ token: org.owner.token, query: { scope: "manageable" } }), 200)
    expect(all.items).toEqual([])
  })

  it("check the credential rules and the URL, every bad member at once", async () => {
    const org = await Http.staffed(server.url)
    const bad = async (body: Record<string, unknown>) => {
      const answer = await post("/v1/mcp-connections", { token: org.owner.token, body })
      expect(answer.status, answer.text).toBe(400)
      const refused = invalid(answer)
      expect(refused.error).toBe("invalid_request")
      return refused.details.map((detail): [string, string] => [detail.path.join("."), detail.message])
    }
    expect(await bad({ name: "A", url: open.url, authType: "none", credentialMode: "per_member" })).toEqual([
      ["credentialMode", "`per_member` needs `authType: oauth` (each member connects their own account)"]
    ])
    expect(await bad({ name: "A", url: open.url, authType: "apikey" })).toEqual([["apiKey", "is required when `authType` is `apikey`"]])
    // Each `authType` is a member of the body's union, with its own credential members and no others.
    const noneMembers = "is unexpected, expected: \"name\" | \"url\" | \"authType\" | \"credentialMode\""
    expect(await bad({ name: "A", url: open.url, authType: "none", apiKey: "k", oauth: { clientId: "c" } })).toEqual([
      ["apiKey", noneMembers],
      ["oauth", noneMembers]
    ])
    expect(await bad({ name: "A", url: open.url, authType: "oauth", oauth: { clientSecret: "s" } })).toEqual([
      ["oauth.clientSecret", "needs a `clientId`"]
    ])
    // The schema's URL rules.
    const urls = [
      "ftp://example.com/mcp",
      "https://user:pw@example.com/mcp",
      "https://example.com/mcp#frag",
      "https://example.com/mcp?API_KEY=abc",
      `https://example.com/${"a".repeat(2050)}`,
      "not a url"
    ]
    for (const url of urls) {
      const details = await bad({ name: "A", url, authType: "oauth" })
      expect(details.map(([path]) => path), url).toEqual(["url"])
    }
    expect((await bad({ name: "A", url: "https://example.com/mcp?token=abc", authType: "oauth" }))[0][1]).toContain("`token`")
    expect(await bad({ name: " ", url: "https://example.com/mcp", authType: "none", extra: 1 })).toHaveLength(2)
    // An unknown `authType` is reported alone: which members are right depends on it.
    expect(await bad({ name: " ", url: "https://example.com/mcp", authType: "magic", extra: 1 })).toEqual([
      ["authType", "Expected \"none\" | \"apikey\" | \"oauth\", actual \"magic\""]
    ])

    // At least one change, and an empty oauth object is no change.
    const created = await create(org.owner.token, { name: "OAuth one", url: "https://mcp.example.com/mcp", authType: "oauth" })
    const path = { connectionId: created.id }
    const noChange = await mcpConnections.update({ token: org.owner.token, path, payload: {} })
    expect(noChange.status).toBe(400)
    const emptyOAuth = await mcpConnections.update({ token: org.owner.token, path, payload: { oauth: {} } })
    expect(invalid(emptyOAuth).details.map((d) => d.path.join("."))).toEqual(["oauth"])
    const keyOnOAuth = await mcpConnections.update({ token: org.owner.token, path, payload: { apiKey: "k" } })
    expect(invalid(keyOnOAuth).details.map((d) => d.path.join("."))).toEqual(["apiKey"])
  })

  it("refuse http and non-public hosts while private destinations are off", async () => {
    const owner = await Http.owner(guarded.url)
    const refused = async (url: string) => {
      const answer = await calls(guarded.url).mcpConnections.create({
        token: owner.token,
        payload: { name: `X ${unique()}`, url, authType: "oauth" }
      })
      expect(answer.status, answer.text).toBe(400)
      const [detail] = invalid(answer).details
      expect(detail?.path).toEqual(["url"])
      return detail?.message
    }
    expect(await refused("http://mcp.example.com/mcp")).toBe("The outbound URL is not allowed: https is required")
    expect(await refused("https://127.0.0.1:8443/mcp")).toMatch(/^The outbound URL is not allowed: 127\.0\.0\.1 is /)
    expect(await refused("https://[::1]/mcp")).toMatch(/^The outbound URL is not allowed: ::1 is /)
    expect(await refused("https://169.254.169.254/mcp")).toMatch(/^The outbound URL is not allowed: /)
    expect(await refused("https://localhost/mcp")).toMatch(/^The outbound URL is not allowed: localhost resolves to /)
    expect(await refused("https://nowhere.invalid/mcp")).toBe("The outbound URL is not allowed: nowhere.invalid could not be resolved")
    // A live check never ran: nothing reached the fake.
    const before = open.requests.length
    await calls(guarded.url).mcpConnections.create({ token: owner.token, payload: { name: "Loop", url: open.url, authType: "none" } })
    expect(open.requests.length).toBe(before)
    // A public address literal passes the guard (an OAuth connection contacts nothing when created).
    const publicOne = await calls(guarded.url).mcpConnections.create({
      token: owner.token,
      payload: { name: "Public", url: "https://93.184.215.14/mcp", authType: "oauth" }
    })
    expect(publicOne.status).toBe(201)
  })

  it("have names unique per organization ignoring case, on create and on rename", async () => {
    const org = await Http.staffed(server.url)
    await create(org.owner.token, { name: "Linear", url: "https://mcp.linear.app/mcp", authType: "oauth" })
    const clash = await mcpConnections.create({ token: org.owner.token, payload: { name: "LINEAR", url: "https://mcp.linear.app/mcp", authType: "oauth" } })
    expect(clash.status).toBe(409)
    expect(clash.body).toEqual({ error: "mcp_connection_exists", message: 'The organization already has an MCP connection named "LINEAR".' })
    const other = await create(org.owner.token, { name: "Notion", url: "https://mcp.notion.com/mcp", authType: "oauth" })
    const rename = await mcpConnections.update({ token: org.owner.token, path: { connectionId: other.id }, payload: { name: "linear" } })
    expect(rename.status).toBe(409)
    expect(refusal(rename, 409)).toMatchObject({ error: "mcp_connection_exists" })
    // Another organization may use the name.
    const elsewhere = await Http.owner(server.url, "Elsewhere")
    await create(elsewhere.token, { name: "linear", url: "https://mcp.linear.app/mcp", authType: "oauth" })
  })

  it("store OAuth settings without contacting anything, with a preset's default scopes, and never answer a secret", async () => {
    const org = await Http.staffed(server.url)
    const slack = await create(org.owner.token, {
      name: "Slack",
      url: "https://mcp.slack.com/mcp",
      authType: "oauth",
      credentialMode: "per_member",
      oauth: { clientId: "slack-client", clientSecret: "slack-secret-value-xyz" }
    })
    expect(slack).toMatchObject({
      authType: "oauth",
      credentialMode: "per_member",
      connected: false,
      connectedForMe: false,
      credentialHealth: "unknown",
      oauthClientRequired: true,
      oauth: {
        clientConfigured: true,
        clientId: "slack-client",
        registrationSource: "pre_registered",
        authorizationServerIssuer: null,
        grantedScopes: [],
        issuerReviewRequired: false
      }
    })
    expect(slack.oauth?.requestedScopes).toContain("search:read.public")
    expect(slack.oauth?.requestedScopes).toHaveLength(11)

    const linear = await create(org.owner.token, {
      name: "Linear",
      url: "https://mcp.linear.app/mcp",
      authType: "oauth",
      oauth: { authorizationServerIssuer: "https://auth.linear.app", requestedScopes: ["read", "write", "read"] }
    })
    expect(linear).toMatchObject({
      oauthClientRequired: false,
      oauth: { clientConfigured: false, clientId: null, registrationSource: null, authorizationServerIssuer: "https://auth.linear.app", requestedScopes: ["read", "write"] }
    })

    const updated = await mcpConnections.update({
      token: org.owner.token,
      path: { connectionId: linear.id },
      payload: { oauth: { clientId: "lin-client", clientSecret: "lin-secret-value-abc", requestedScopes: ["read"] } }
    })
    expect(ok(updated, 200).item.oauth).toMatchObject({ clientId: "lin-client", registrationSource: "pre_registered", requestedScopes: ["read"] })

    const keyedItem = await create(org.owner.token, { name: "Keyed", url: keyed.url, authType: "apikey", apiKey: API_KEY })
    // Every answer, every reader: no secret.
    const answers = [
      await mcpConnections.list({ token: org.owner.token, query: { scope: "manageable" } }),
      await mcpConnections.get({ token: org.admin.token, path: { connectionId: slack.id } }),
      await mcpConnections.get({ token: org.owner.token, path: { connectionId: keyedItem.id } }),
      updated
    ]
    for (const answer of answers) {
      for (const secret of [API_KEY, "slack-secret-value-xyz", "lin-secret-value-abc"]) expect(answer.text).not.toContain(secret)
    }
    // Stored encrypted.
    const stored = await sql((sql) => sql<{ apiKeyCiphertext: string | null; oauthClientSecretCiphertext: string | null }>`
      SELECT api_key_ciphertext, oauth_client_secret_ciphertext FROM mcp_connections WHERE organization_id = ${org.organizationId}`)
    for (const row of stored) {
      expect(row.apiKeyCiphertext ?? "").not.toContain(API_KEY)
      expect(row.oauthClientSecretCiphertext ?? "").not.toContain("secret-value")
    }
    expect(stored.filter((row) => row.apiKeyCiphertext !== null)).toHaveLength(1)
    expect(stored.filter((row) => row.oauthClientSecretCiphertext !== null)).toHaveLength(2)
  })

  it("are read by members a grant reaches (direct, team, organization-wide); owners and admins manage all but use only what is granted", async () => {
    const org = await Http.staffed(server.url)
    const connection = await create(org.owner.token, { name: "Docs", url: open.url, authType: "none" })
    const path = { connectionId: connection.id }

    // Without a grant: a member gets 404 as for a missing one, an empty usable list; scope=manageable is 403.
    const hidden = await mcpConnections.get({ token: org.member.token, path })
    expect(hidden.status).toBe(404)
    expect(refusal(hidden, 404)).toMatchObject({ error: "connection_not_found" })
    expect(await usableIds(org.member.token)).toEqual([])
    const manageable = await mcpConnections.list({ token: org.member.token, query: { scope: "manageable" } })
    expect(manageable.status).toBe(403)
    expect(refusal(manageable, 403)).toMatchObject({ reason: "insufficient_role" })
    // The admin sees it in manageable, but not as usable, and not ready.
    expect(await usableIds(org.admin.token)).toEqual([])
    const adminView = ok(await mcpConnections.get({ token: org.admin.token, path }), 200)
    expect(adminView.item).toMatchObject({ ready: false, notReadyReason: 'You have not been granted access to "Docs".' })

    // A direct grant.
    const direct = await grant(org.owner.token, connection.id, { orgMembershipId: org.member.membership.id })
    expect(direct.id).toMatch(/^emg_/)
    expect(await usableIds(org.member.token)).toEqual([connection.id])
    const memberView = ok(await mcpConnections.get({ token: org.member.token, path }), 200)
    expect(memberView.item).toMatchObject({ ready: true, notReadyReason: null, connectedForMe: true })
    // Members may not grant, change or delete.
    expect((await mcpConnections.mcpConnectionGrant({ token: org.member.token, path, payload: { role: "viewer", orgWide: true } })).status).toBe(403)
    expect((await mcpConnections.update({ token: org.member.token, path, payload: { name: "Mine" } })).status).toBe(403)
    expect((await mcpConnections.delete({ token: org.member.token, path })).status).toBe(403)
    expect((await mcpConnections.mcpConnectionListAccess({ token: org.member.token, path })).status).toBe(403)
    ok(await mcpConnections.mcpConnectionRevoke({ token: org.admin.token, path: { ...path, grantId: direct.id } }), 204)
    expect((await mcpConnections.get({ token: org.member.token, path })).status).toBe(404)

    // A team grant.
    const teamId = ok(await teams.create({ token: org.owner.token, payload: { name: "Tools", memberIds: [org.member.membership.id] } }), 201).team.id
    await grant(org.owner.token, connection.id, { teamId })
    expect(await usableIds(org.member.token)).toEqual([connection.id])
    expect(await usableIds(org.admin.token)).toEqual([])

    // An organization-wide grant reaches the admin too.
    await grant(org.owner.token, connection.id, { orgWide: true })
    expect(await usableIds(org.admin.token)).toEqual([connection.id])
    expect(ok(await mcpConnections.get({ token: org.admin.token, path }), 200).item.ready).toBe(true)
    const grants = ok(await mcpConnections.mcpConnectionListAccess({ token: org.admin.token, path }), 200)
    expect(grants.items).toHaveLength(2)
  })

  it("say why they are not ready: issuer review, per-member without the caller's token, shared not connected", async () => {
    const org = await Http.staffed(server.url)
    const perMember = await create(org.owner.token, {
      name: "Per member",
      url: "https://mcp.linear.app/mcp",
      authType: "oauth",
      credentialMode: "per_member"
    })
    const shared = await create(org.owner.token, { name: "Shared", url: "https://mcp.notion.com/mcp", authType: "oauth" })
    for (const id of [perMember.id, shared.id]) await grant(org.owner.token, id, { orgWide: true })

    const view = async (token: string, id: string) => ok(await mcpConnections.get({ token, path: { connectionId: id } }), 200).item
    expect(await view(org.member.token, perMember.id)).toMatchObject({
      ready: false,
      notReadyReason: "Connect your account before using this MCP's tools.",
      connected: false,
      connectedForMe: false
    })
    expect(await view(org.member.token, shared.id)).toMatchObject({
      ready: false,
      notReadyReason: "Connect this MCP before using its tools.",
      connected: false
    })

    // The member connects their own account (what the OAuth flow writes): ready for them, not for the admin.
    await sql((sql) => sql`
      INSERT INTO mcp_member_credentials (organization_id, mcp_connection_id, membership_id, access_token_ciphertext, connected_at, credential_health, updated_at)
      VALUES (${org.organizationId}, ${perMember.id}, ${org.member.membership.id}, 'ciphertext', now(), 'ready', now())`)
    expect(await view(org.member.token, perMember.id)).toMatchObject({ ready: true, connected: true, connectedForMe: true, credentialHealth: "ready" })
    expect(await view(org.admin.token, perMember.id)).toMatchObject({
      ready: false,
      connected: true,
      connectedForMe: false,
      notReadyReason: "Connect your account before using this MCP's tools."
    })
    // A shared token makes the shared one ready.
    await sql((sql) => sql`UPDATE mcp_connections SET access_token_ciphertext = 'ciphertext', connected_at = now()
      WHERE organization_id = ${org.organizationId} AND id = ${shared.id}`)
    expect(await view(org.member.token, shared.id)).toMatchObject({ ready: true, connected: true, connectedForMe: true })

    // An issuer review blocks everyone, first.
    await sql((sql) => sql`UPDATE mcp_connections SET oauth_issuer_review_required_at = now()
      WHERE organization_id = ${org.organizationId} AND id IN (${perMember.id}, ${shared.id})`)
    for (const id of [perMember.id, shared.id]) {
      expect(await view(org.member.token, id)).toMatchObject({
        ready: false,
        needsReconnect: true,
        notReadyReason: "An admin must review the connection's changed OAuth issuer before its tools can be used.",
        oauth: { issuerReviewRequired: true }
      })
    }

    // A new URL drops what was issued for the old server: shared tokens and members' credentials.
    const moved = await mcpConnections.update({ token: org.owner.token, path: { connectionId: perMember.id }, payload: { url: "https://mcp.linear.app/v2/mcp" } })
    expect(moved.status).toBe(200)
    expect(ok(moved, 200).item).toMatchObject({ connected: false, needsReconnect: false })
    expect(await view(org.member.token, perMember.id)).toMatchObject({ connectedForMe: false, notReadyReason: "Connect your account before using this MCP's tools." })
    const movedShared = await mcpConnections.update({ token: org.owner.token, path: { connectionId: shared.id }, payload: { url: "https://mcp.notion.com/v2" } })
    expect(ok(movedShared, 200).item).toMatchObject({ connected: false, notReadyReason: "Connect this MCP before using its tools." })
    const left = await sql((sql) => sql`SELECT count(*)::int AS n FROM mcp_member_credentials WHERE organization_id = ${org.organizationId}`)
    expect(left).toEqual([{ n: 0 }])
  })

  it("have a tool policy owners and admins read and set, recording who and when", async () => {
    const org = await Http.staffed(server.url)
    const connection = await create(org.owner.token, { name: "Tools", url: open.url, authType: "none" })
    const path = { connectionId: connection.id }
    expect((await mcpConnections.getToolPolicy({ token: org.admin.token, path })).body).toEqual({
      allDisabled: false,
      disabledTools: [],
      updatedByOrgMembershipId: null,
      updatedAt: null
    })
    const setAnswer = await mcpConnections.setToolPolicy({
      token: org.admin.token,
      path,
      payload: { allDisabled: false, disabledTools: ["delete_item", " echo ", "delete_item"] }
    })
    expect(setAnswer.status).toBe(200)
    const set = ok(setAnswer, 200)
    expect(set).toMatchObject({ allDisabled: false, disabledTools: ["delete_item", "echo"], updatedByOrgMembershipId: org.admin.membership.id })
    expect(Date.parse(`${set.updatedAt}`)).not.toBeNaN()
    expect((await mcpConnections.getToolPolicy({ token: org.owner.token, path })).body).toEqual(set)
    expect(ok(await mcpConnections.get({ token: org.owner.token, path }), 200).item.toolPolicy).toEqual(set)
    const all = await mcpConnections.setToolPolicy({ token: org.owner.token, path, payload: { allDisabled: true, disabledTools: [] } })
    expect(all.body).toMatchObject({ allDisabled: true, disabledTools: [], updatedByOrgMembershipId: org.owner.membership.id })
    // The audit log keeps each change of the policy, field by field.
    const [latest] = await auditEvents(org.owner.token, "mcp_connection.tool_policy.update", connection.id)
    expect(latest?.changes).toEqual({
      before: { allDisabled: false, disabledTools: ["delete_item", "echo"], updatedByOrgMembershipId: org.admin.membership.id },
      after: { allDisabled: true, disabledTools: [], updatedByOrgMembershipId: org.owner.membership.id },
      changedFields: ["allDisabled", "disabledTools", "updatedByOrgMembershipId"]
    })

    expect((await mcpConnections.getToolPolicy({ token: org.member.token, path })).status).toBe(403)
    expect((await mcpConnections.setToolPolicy({ token: org.member.token, path, payload: { allDisabled: true, disabledTools: [] } })).status).toBe(403)
    const badBody = await Http.request(server.url, "PUT", `/v1/mcp-connections/${connection.id}/tool-policy`, {
      token: org.owner.token,
      body: { allDisabled: "yes", disabledTools: [""] }
    })
    expect(badBody.status).toBe(400)
    expect(invalid(badBody).details).toHaveLength(2)
  })

  it("of another organization answer 404 like missing ones, and deleting one takes its grants and credentials", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const connection = await create(org.owner.token, { name: "Ours", url: open.url, authType: "none" })
    const path = { connectionId: connection.id }
    for (const answer of [
      await mcpConnections.get({ token: other.token, path }),
      await mcpConnections.update({ token: other.token, path, payload: { name: "Theirs" } }),
      await mcpConnections.delete({ token: other.token, path }),
      await mcpConnections.getToolPolicy({ token: other.token, path }),
      await mcpConnections.mcpConnectionListAccess({ token: other.token, path }),
      await mcpConnections.mcpConnectionGrant({ token: other.token, path, payload: { role: "viewer", orgWide: true } })
    ]) {
      expect(answer.status).toBe(404)
      expect(answer.body).toEqual({ error: "connection_not_found", message: "Unknown connection." })
    }
    expect(ok(await mcpConnections.list({ token: other.token, query: { scope: "manageable" } }), 200).items).toEqual([])
    expect((await mcpConnections.get({ token: org.owner.token, path: { connectionId: "emc_00000000000000000000000000" } })).status).toBe(404)
    expect((await mcpConnections.get({ token: org.owner.token, path: { connectionId: "not-an-id" } })).status).toBe(400)

    await grant(org.owner.token, connection.id, { orgMembershipId: org.member.membership.id })
    await sql((sql) => sql`
      INSERT INTO mcp_member_credentials (organization_id, mcp_connection_id, membership_id, access_token_ciphertext, updated_at)
      VALUES (${org.organizationId}, ${connection.id}, ${org.member.membership.id}, 'ciphertext', now())`)
    expect((await mcpConnections.delete({ token: org.admin.token, path })).status).toBe(204)
    const counts = await sql((sql) => sql`
      SELECT (SELECT count(*)::int FROM mcp_connection_grants WHERE organization_id = ${org.organizationId}) AS grants,
             (SELECT count(*)::int FROM mcp_member_credentials WHERE organization_id = ${org.organizationId}) AS credentials`)
    expect(counts).toEqual([{ grants: 0, credentials: 0 }])
  })

  it("fill a resolved marketplace's cloud readiness: each declared server matched to a connection by URL, for the caller", async () => {
    const org = await Http.staffed(server.url)
    const linear = await create(org.owner.token, { name: "Linear", url: "https://MCP.linear.app/mcp/", authType: "oauth", credentialMode: "per_member" })
    const slack = await create(org.owner.token, {
      name: "Slack",
      url: "https://mcp.slack.com/mcp",
      authType: "oauth",
      oauth: { clientId: "slack-client" }
    })
    await grant(org.owner.token, linear.id, { orgMembershipId: org.member.membership.id })
    const payload = {
      mcpServers: {
        linear: { url: "https://mcp.linear.app/mcp", authType: "oauth" },
        slack: { url: "https://mcp.slack.com/mcp/", authType: "apikey" },
        unknown: { url: "https://mcp.slack.com/other" },
        local: { command: "npx some-server" }
      }
    }
    const token = org.admin.token
    const object = ok(await configObjects.create({ token, payload: { input: { objectType: "mcp", normalizedPayloadJson: payload } } }), 201).item
    const plugin = ok(await plugins.create({ token, payload: { name: `Tools ${unique()}` } }), 201).item
    ok(await plugins.addConfigObject({ token, path: { pluginId: plugin.id }, payload: { configObjectId: object.id } }), 201)
    const market = ok(await marketplaces.create({ token, payload: { name: `Market ${unique()}` } }), 201).item
    const path = { marketplaceId: market.id }
    ok(await marketplaces.addPlugin({ token, path, payload: { pluginId: plugin.id } }), 201)
    ok(await marketplaces.marketplaceGrant({ token, path, payload: { orgWide: true, role: "viewer" } }), 201)

    const readiness = async (token: string) => ok(await marketplaces.resolved({ token, path }), 200).item.plugins[0]?.cloudReadiness.connections
    const base = { configObjectId: object.id, connectedForMe: false }
    // The admin sees every connection.
    expect(await readiness(org.admin.token)).toEqual([
      { ...base, id: linear.id, name: "Linear", serverName: "linear", url: "https://mcp.linear.app/mcp", authTypeMismatch: false, oauthClientConfigured: false, oauthClientRequired: false },
      { ...base, id: slack.id, name: "Slack", serverName: "slack", url: "https://mcp.slack.com/mcp/", authTypeMismatch: true, oauthClientConfigured: true, oauthClientRequired: true },
      { ...base, id: null, name: "unknown", serverName: "unknown", url: "https://mcp.slack.com/other", authTypeMismatch: false, oauthClientConfigured: false, oauthClientRequired: true }
    ])
    // The member only those granted to them; their own credential makes theirs connected.
    await sql((sql) => sql`
      INSERT INTO mcp_member_credentials (organization_id, mcp_connection_id, membership_id, access_token_ciphertext, updated_at)
      VALUES (${org.organizationId}, ${linear.id}, ${org.member.membership.id}, 'ciphertext', now())`)
    const forMember = await readiness(org.member.token)
    expect(forMember?.map((c) => [c.serverName, c.id, c.connectedForMe])).toEqual([
      ["linear", linear.id, true],
      ["slack", null, false],
      ["unknown", null, false]
    ])
  })

  it("refuse a change whose live check raced another change of the URL or key (409 mcp_connection_changed)", async () => {
    const org = await Http.staffed(server.url)
    const slow = await FakeMcp.start({ auth: { apiKey: API_KEY } })
    const fast = await FakeMcp.start({ auth: { apiKey: API_KEY } })
    try {
      const connection = await create(org.owner.token, { name: "Racy", url: slow.url, authType: "apikey", apiKey: API_KEY })
      let answer = () => {}
      slow.setMode({ _tag: "held", until: new Promise<void>((resolve) => (answer = resolve)) })
      const path = { connectionId: connection.id }
      // The re-key is checked against the slow server, held there; meanwhile the URL moves to the fast one.
      const seen = slow.requests.length
      const rekey = mcpConnections.update({ token: org.owner.token, path, payload: { apiKey: API_KEY } })
      await Wait.until(() => slow.requests.length > seen, "the re-key's live check")
      const moved = await mcpConnections.update({ token: org.admin.token, path, payload: { url: fast.url } })
      expect(moved.status, moved.text).toBe(200)
      answer()
      const raced = await rekey
      expect(raced.status, raced.text).toBe(409)
      expect(refusal(raced, 409)).toMatchObject({ error: "mcp_connection_changed" })
      expect(ok(await mcpConnections.get({ token: org.owner.token, path }), 200).item.url).toBe(fast.url)
    } finally {
      await slow.close()
      await fast.close()
    }
  })

  it("answer Access.requireUsable (the tool runner's check): 404 for a missing or foreign id, 403 naming the connection without a grant, whatever the role", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Foreign")
    const ours = await create(org.owner.token, { name: "Checked", url: "https://mcp.notion.com/mcp", authType: "oauth" })
    const theirs = await create(other.token, { name: "Theirs", url: "https://mcp.notion.com/mcp", authType: "oauth" })
    // The organization and its people as the API answered them, decoded into what authentication would resolve.
    const organization = Schema.decodeUnknownSync(Schema.toCodecJson(Organization))(org.owner.organization)
    const principal = (who: typeof org.member | typeof org.owner, role: Role): MemberContext => ({
      _tag: "Member",
      organization,
      membership: Schema.decodeUnknownSync(Schema.toCodecJson(Membership))({ ...who.membership, role }),
      user: Schema.decodeUnknownSync(Schema.toCodecJson(User))(who.user),
      credential: { _tag: "Session", sessionId: SessionId.make("ses_00000000000000000000000000"), ssoConnectionId: null, authenticatedAt: new Date() }
    })
    const check = (p: Principal.Principal, id: string) =>
      sql((client) =>
        Effect.result(
          Effect.flatMap(Effect.service(Access), (access) => access.requireUsable(p, McpConnectionKind, ExternalMcpConnectionId.make(id)))
        ).pipe(
          Effect.provide(Access.layer),
          Effect.provideService(SqlClient.SqlClient, client)
        )
      )
    const failure = (result: Awaited<ReturnType<typeof check>>) =>
      Result.isFailure(result)
        ? result.failure._tag === "NotFound"
          ? { error: result.failure.error, message: result.failure.message }
          : { reason: result.failure.reason, message: result.failure.message }
        : "passed"

    for (const [who, role] of [[org.member, "member"], [org.admin, "admin"], [org.owner, "owner"]] as const) {
      expect(failure(await check(principal(who, role), ours.id))).toMatchObject({
        reason: "insufficient_access",
        message: 'You have not been granted access to "Checked".'
      })
      expect(failure(await check(principal(who, role), theirs.id))).toMatchObject({ error: "connection_not_found", message: "Unknown connection." })
      expect(failure(await check(principal(who, role), "emc_00000000000000000000000000"))).toMatchObject({ error: "connection_not_found" })
    }
    const system = Principal.system("test", organization)
    expect(failure(await check(system, ours.id))).toBe("passed")

    const teamId = ok(await teams.create({ token: org.owner.token, payload: { name: `Usable ${unique()}`, memberIds: [org.admin.membership.id] } }), 201)
      .team.id
    await grant(org.owner.token, ours.id, { teamId })
    expect(failure(await check(principal(org.admin, "admin"), ours.id))).toBe("passed")
    expect(failure(await check(principal(org.owner, "owner"), ours.id))).toMatchObject({ reason: "insufficient_access" })
    await grant(org.owner.token, ours.id, { orgWide: true })
    expect(failure(await check(principal(org.member, "member"), ours.id))).toBe("passed")
  })
})

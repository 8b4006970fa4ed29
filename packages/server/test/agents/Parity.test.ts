/**
 * One authorization path: a sample of the API's operations (reads and writes of a dozen groups, taken from
 * `operationsOf(Api)`) run by each kind of caller (owner, admin, member, an API key scoped to a few actions, a
 * suspended member, a member whose password session an organization enforcing SSO refuses) once over HTTP and once
 * through `/mcp` (the MCP SDK's client, `call_operation`, destructive ones confirmed), each against fresh equivalent
 * resources: the same outcome (status, error and reason; a success's shape), and in the organization's audit log
 * exactly one event per successful write (channel `api` over HTTP, `mcp` through MCP) and, for a refusal, the
 * denial the handler records or nothing.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Catalog } from "@orgplane/mcp"
import { Api, type Operation, operationsOf, type SsoCallbackResult } from "@orgplane/schema"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as FakeDns from "../../../../packages/testkit/src/FakeDns.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as IdpOidc from "../../../../packages/testkit/src/IdpOidc.js"
import * as TestServer from "../support/HttpServer.js"

const SECRET = "oidc-client-secret-value"
const PASSWORD = "correct horse battery"

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
let dns: FakeDns.FakeDns
let idp: IdpOidc.IdpOidc
const url = () => server.url

let counter = 0
const unique = (prefix: string) => `${prefix} ${++counter} ${Math.random().toString(36).slice(2, 6)}`

/** An organization whose owner makes the resources each call acts on, and reads its audit log. */
interface Organization {
  readonly id: string
  readonly ownerToken: string
  readonly ownerMembershipId: string
}

/** Who calls: their credential over HTTP, and the headers that carry it to `/mcp`. */
interface Caller {
  readonly name: string
  readonly organization: Organization
  readonly http: { readonly token: string } | { readonly apiKey: string }
  readonly mcpHeaders: Record<string, string>
}

/** What a call came to: the API's answer (a success's shape, an error's code and reason), or a refusal before sending. */
type Outcome =
  | { readonly kind: "answered"; readonly status: number; readonly error?: string; readonly reason?: string; readonly shape?: unknown }
  | { readonly kind: "refused"; readonly by: "gate"; readonly status: number; readonly error?: string; readonly reason?: string }
  | { readonly kind: "hidden"; readonly message: string }
  | { readonly kind: "withheld"; readonly status: number; readonly message: string }

interface AuditEvent {
  readonly id: string
  readonly action: string
  readonly outcome: string
  readonly reason: string | null
  readonly via: { readonly channel: string }
}

const post = (path: string, token: string, body?: unknown) => Http.request(url(), "POST", path, { token, ...(body === undefined ? {} : { body }) })

const created = async <Body>(what: string, path: string, organization: Organization, body: unknown): Promise<Body> =>
  Http.expectStatus<Body>(what, await post(path, organization.ownerToken, body), 201)

const team = async (organization: Organization) =>
  (await created<{ team: { id: string } }>("team", "/v1/teams", organization, { name: unique("Team") })).team.id
const plugin = async (organization: Organization) =>
  (await created<{ item: { id: string } }>("plugin", "/v1/plugins", organization, { name: unique("Plugin") })).item.id
const marketplace = async (organization: Organization) =>
  (await created<{ item: { id: string } }>("marketplace", "/v1/marketplaces", organization, { name: unique("Market") })).item.id

/**
 * The sample: an operation id and what makes its arguments, against the caller's organization (resources made by its
 * owner, fresh for every call).
 */
const sample: ReadonlyArray<readonly [string, (organization: Organization) => Promise<Record<string, unknown>> | Record<string, unknown>]> = [
  ["users.me", () => ({})],
  ["roles.list", () => ({})],
  ["organizations.get", () => ({})],
  ["teams.list", () => ({})],
  ["teams.get", async (o) => ({ teamId: await team(o) })],
  ["teams.create", () => ({ name: unique("Made") })],
  ["teams.update", async (o) => ({ teamId: await team(o), name: unique("Renamed") })],
  ["teams.delete", async (o) => ({ teamId: await team(o) })],
  ["members.list", () => ({})],
  ["members.get", (o) => ({ memberId: o.ownerMembershipId })],
  ["members.changeRole", async (o) => ({ memberId: (await Http.join(url(), o.ownerToken, "member", "Promoted")).membership.id, role: "admin" })],
  ["invitations.list", () => ({})],
  ["invitations.create", () => ({ email: `invited.${++counter}.${Math.random().toString(36).slice(2, 8)}@example.com`, role: "member" })],
  ["invitations.cancel", async (o) => ({
    invitationId: (await created<{ invitation: { id: string } }>("invitation", "/v1/invitations", o, {
      email: `cancelled.${++counter}.${Math.random().toString(36).slice(2, 8)}@example.com`,
      role: "member"
    })).invitation.id
  })],
  ["apiKeys.list", () => ({})],
  ["apiKeys.create", () => ({ name: unique("Key") })],
  ["apiKeys.revoke", async (o) => ({ apiKeyId: (await created<{ apiKey: { id: string } }>("key", "/v1/api-keys", o, { name: unique("Doomed") })).apiKey.id })],
  ["configObjects.list", () => ({})],
  ["plugins.create", () => ({ name: unique("Plugin") })],
  ["plugins.update", async (o) => ({ pluginId: await plugin(o), description: "Updated" })],
  ["plugins.delete", async (o) => ({ pluginId: await plugin(o) })],
  ["plugins.pluginGrant", async (o) => ({ pluginId: await plugin(o), orgWide: true, role: "viewer" })],
  ["marketplaces.list", () => ({})],
  ["marketplaces.create", () => ({ name: unique("Market") })],
  ["marketplaces.addPlugin", async (o) => ({ marketplaceId: await marketplace(o), pluginId: await plugin(o) })],
  ["marketplaces.marketplaceListAccess", async (o) => ({ marketplaceId: await marketplace(o) })],
  ["desktopPolicies.list", () => ({})],
  ["desktopPolicies.create", () => ({ policyName: unique("Policy"), policy: {} })],
  ["memory.list", () => ({})],
  ["memory.save", () => ({ content: unique("Staging resets on Sundays") })],
  ["templates.list", () => ({})],
  ["templates.create", () => ({ name: unique("Template"), kind: "workspace", document: { a: 1 } })],
  ["audit.listEvents", () => ({ limit: 1, action: "team.create" })],
  ["audit.getSettings", () => ({})],
  ["audit.setSettings", () => ({ retentionDays: 365 })],
  ["sso.getPolicy", () => ({})],
  ["sso.listConnections", () => ({})],
  ["sso.setPolicy", () => ({ requireSso: false, ownersPasswordFallback: true })],
  ["mcpConnections.list", () => ({})],
  ["mcpDiscovery.presets", () => ({})],
  ["llmProviders.list", () => ({})],
  // Narrowed to one provider: the whole catalog (about 120,000 characters, not paged) is more than a tool answers.
  ["llmProviders.catalog", () => ({ provider: "anthropic" })]
]

const operations = new Map(operationsOf(Api).map((operation) => [operation.id, operation]))

/** A value's shape: keys and the kinds of their values, two levels down (ids, names and counts differ). */
const shape = (value: unknown, depth = 0): unknown => {
  if (value === null) return "null"
  if (Array.isArray(value)) return depth >= 2 ? "array" : value.length === 0 ? [] : [shape(value[0], depth + 1)]
  if (typeof value === "object") {
    if (depth >= 2) return "object"
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, shape((value as Record<string, unknown>)[key], depth + 1)]))
  }
  return typeof value
}

const answered = (status: number, body: unknown): Outcome => {
  if (status >= 200 && status < 300) return { kind: "answered", status, shape: shape(body ?? null) }
  const error = body as { error?: string; reason?: string } | null
  return { kind: "answered", status, ...(error?.error === undefined ? {} : { error: error.error }), ...(error?.reason === undefined ? {} : { reason: error.reason }) }
}

/** The operation over HTTP, its arguments laid out by the operation's own description (path, query, body). */
const viaHttp = async (caller: Caller, operation: Operation, args: Record<string, unknown>): Promise<Outcome> => {
  let path = operation.path
  for (const name of operation.pathParameters) path = path.replace(`:${name}`, encodeURIComponent(String(args[name])))
  const query = new URLSearchParams()
  for (const name of operation.queryParameters) if (args[name] !== undefined) query.set(name, String(args[name]))
  const body = operation.bodyMembers === undefined
    ? undefined
    : Object.fromEntries(operation.bodyMembers.filter((name) => args[name] !== undefined).map((name) => [name, args[name]]))
  const search = query.size === 0 ? "" : `?${query}`
  const response = await Http.request(url(), operation.method, `${path}${search}`, { ...caller.http, ...(body === undefined ? {} : { body }) })
  return answered(response.status, response.body)
}

/** A tool's answer: its structured content, or the data of its error (the JSON of its text). */
const callTool = async (client: Client, args: Record<string, unknown>) => {
  const result = await client.callTool({ name: "call_operation", arguments: args })
  const content = result.content as Array<{ type: string; text?: string }>
  const text = content[0]?.text ?? ""
  if (result.isError !== true) return { isError: false as const, data: result.structuredContent as { status: number; body: unknown } }
  const data = text.startsWith("{") ? JSON.parse(text) as { message: string; status?: number; body?: unknown; confirmation?: string } : { message: text }
  return { isError: true as const, data }
}

/** An MCP connection for each caller, or the gate's refusal of their credential. */
const connections = new Map<string, { readonly client: Client } | { readonly refused: Outcome }>()

const connect = async (caller: Caller) => {
  const initialize = await Http.request(url(), "POST", "/mcp", {
    headers: { accept: "application/json, text/event-stream", ...caller.mcpHeaders },
    body: { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } } }
  })
  if (initialize.status !== 200) {
    const error = initialize.body as { error?: string; reason?: string } | undefined
    connections.set(caller.name, {
      refused: { kind: "refused", by: "gate", status: initialize.status, ...(error?.error === undefined ? {} : { error: error.error }), ...(error?.reason === undefined ? {} : { reason: error.reason }) }
    })
    return
  }
  const client = new Client({ name: "orgplane-parity", version: "0.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", url()), { requestInit: { headers: caller.mcpHeaders } }))
  connections.set(caller.name, { client })
}

/** The operation through `/mcp`: `call_operation`, and for a destructive one the confirmation it answers, sent back. */
const viaMcp = async (caller: Caller, operation: Operation, args: Record<string, unknown>): Promise<Outcome> => {
  const connection = connections.get(caller.name)!
  if ("refused" in connection) return connection.refused
  let result = await callTool(connection.client, { name: operation.id, arguments: args })
  if (operation.destructive && !result.isError) throw new Error(`${operation.id} as ${caller.name}: executed without a confirmation`)
  if (result.isError && operation.destructive && "confirmation" in result.data && typeof result.data.confirmation === "string") {
    result = await callTool(connection.client, { name: operation.id, arguments: args, confirmation: result.data.confirmation })
  }
  if (!result.isError) return answered(result.data.status, result.data.body)
  if ("status" in result.data && typeof result.data.status === "number") {
    // A success the tool does not pass on (an answer over its size limit) is no success.
    if (result.data.status < 300) return { kind: "withheld", status: result.data.status, message: result.data.message }
    return answered(result.data.status, result.data.body)
  }
  return { kind: "hidden", message: result.data.message }
}

/** The organization's audit log followed oldest first from `from` (its oldest event without one): what came since, and the cursor after it. */
const auditCursor = async (organization: Organization, from?: string): Promise<{ cursor: string; events: Array<AuditEvent> }> => {
  const events: Array<AuditEvent> = []
  let cursor = from
  for (;;) {
    const page = Http.expectStatus<{ items: Array<AuditEvent>; nextCursor: string }>(
      "audit",
      await Http.request(url(), "GET", `/v1/audit/events?order=asc&limit=100${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`, { token: organization.ownerToken }),
      200
    )
    events.push(...page.items)
    cursor = page.nextCursor
    if (page.items.length < 100) return { cursor, events }
  }
}

/**
 * Where each organization's audit log was last read to. A followed log's page carries the cursor it was given when
 * nothing came since, so each read starts there rather than paging the whole log again from its oldest event.
 */
const auditRead = new Map<string, string>()

/** The organization's audit events since its log was last read (all of them the first time). */
const auditSince = async (organization: Organization) => {
  const { cursor, events } = await auditCursor(organization, auditRead.get(organization.id))
  auditRead.set(organization.id, cursor)
  return events
}

/** An account at the IdP (its login hint is the email). */
let subjects = 0
const account = (email: string) => {
  idp.addAccount(email, { sub: `sub-${++subjects}`, email, email_verified: true, name: `Person ${subjects}` })
  return email
}

/**
 * An enterprise organization enforcing SSO for its domain (an active OIDC connection to the loopback IdP, the domain
 * verified), and a member of that domain who accepted an invitation with a password: their password session.
 */
const enforcingOrganization = async () => {
  const domain = `corp-${Math.random().toString(36).slice(2, 8)}.test`
  const email = account(`owner@${domain}`)
  const signedUp = Http.expectStatus<{ session: { token: string } }>("owner", await Http.request(url(), "POST", "/v1/auth/sign-up", { body: { email, password: PASSWORD, name: "Owner" } }), 201)
  const token = signedUp.session.token
  const made = Http.expectStatus<{ organization: { id: string }; membership: { id: string } }>("organization", await post("/v1/organizations", token, { name: `Org ${domain}` }), 201)
  const connection = Http.expectStatus<{ connection: { id: string } }>("connection", await post("/v1/sso/connections", token, {
    kind: "oidc",
    name: "Loopback IdP",
    domains: [domain],
    oidc: { issuer: idp.issuer, clientId: "orgplane", clientSecret: SECRET }
  }), 201).connection.id
  const record = Http.expectStatus<{ verification: { recordName: string; recordValue: string } }>("verification", await post(`/v1/sso/request-domain-verification?domain=${domain}`, token), 200).verification
  dns.setTxt(record.recordName, [record.recordValue])
  Http.expectStatus("verify", await post(`/v1/sso/verify-domain?domain=${domain}`, token), 200)
  const started = Http.expectStatus<{ authorizationUrl: string }>("test", await post(`/v1/sso/connections/${connection}/tests`, token), 201)
  const callback = await idp.signIn(started.authorizationUrl)
  expect(Http.expectStatus<typeof SsoCallbackResult.Encoded>("test callback", await Http.request(callback.url, "GET", ""), 200).test?.status).toBe("succeeded")
  Http.expectStatus("activate", await post(`/v1/sso/connections/${connection}/activate`, token), 200)
  const bob = account(`bob@${domain}`)
  const invitation = Http.expectStatus<{ inviteToken: string }>("invite", await post("/v1/invitations", token, { email: bob, role: "member" }), 201)
  const accepted = Http.expectStatus<{ session: { token: string } }>("accept", await Http.request(url(), "POST", "/v1/invitations/accept", {
    body: { token: invitation.inviteToken, signUp: { name: "Bob", password: PASSWORD } }
  }), 200)
  Http.expectStatus("enforce", await Http.request(url(), "PUT", "/v1/sso/policy", { token, body: { requireSso: true } }), 200)
  const organization: Organization = { id: made.organization.id, ownerToken: token, ownerMembershipId: made.membership.id }
  return { organization, passwordSession: accepted.session.token }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** The actions the scoped API key may take (its maker, the owner, may take every one). */
const keyScopes: ReadonlyArray<string> = ["teams.read", "teams.manage", "members.read", "memory.use", "catalog.read"]

let callers: Array<Caller> = []
beforeAll(async () => {
  dns = await FakeDns.start()
  server = await TestServer.startSharingDatabase({ mcp: true, defaultPlan: "enterprise", dnsServers: dns.address, outboundAllowPrivate: true })
  idp = await IdpOidc.start({
    clients: [{ client_id: "orgplane", client_secret: SECRET, redirect_uris: [`${server.url}/v1/sso/oidc/callback`] }]
  })
  const staffed = await Http.staffed(server.url)
  const acme: Organization = { id: staffed.organizationId, ownerToken: staffed.owner.token, ownerMembershipId: staffed.owner.membership.id }
  const key = Http.expectStatus<{ key: string }>("scoped key", await post("/v1/api-keys", acme.ownerToken, {
    name: "CI",
    scopes: keyScopes
  }), 201).key
  const suspended = await Http.join(server.url, acme.ownerToken, "member", "Suspended")
  // The trigger only: what a directory's deactivation writes on the membership (SCIM's own tests cover the way there).
  await server.sql((sql) => sql`UPDATE memberships SET suspended_at = now() WHERE organization_id = ${acme.id} AND id = ${suspended.membership.id}`)
  const enforcing = await enforcingOrganization()
  callers = [
    { name: "owner", organization: acme, http: { token: staffed.owner.token }, mcpHeaders: bearer(staffed.owner.token) },
    { name: "admin", organization: acme, http: { token: staffed.admin.token }, mcpHeaders: bearer(staffed.admin.token) },
    { name: "member", organization: acme, http: { token: staffed.member.token }, mcpHeaders: bearer(staffed.member.token) },
    { name: "scoped key", organization: acme, http: { apiKey: key }, mcpHeaders: bearer(key) },
    { name: "suspended member", organization: acme, http: { token: suspended.token }, mcpHeaders: bearer(suspended.token) },
    { name: "SSO-enforced member", organization: enforcing.organization, http: { token: enforcing.passwordSession }, mcpHeaders: bearer(enforcing.passwordSession) }
  ]
  for (const caller of callers) await connect(caller)
}, 120_000)
afterAll(async () => {
  for (const connection of connections.values()) if ("client" in connection) await connection.client.close()
  await server?.close()
  await idp?.close()
  await dns?.stop()
})

/**
 * The operations `find_operations` lists to a caller, every page of it: what the catalog says they may take.
 */
const listed = async (caller: Caller): Promise<ReadonlySet<string> | undefined> => {
  const connection = connections.get(caller.name)!
  if ("refused" in connection) return undefined
  const names = new Set<string>()
  let cursor: string | null = null
  do {
    const result = await connection.client.callTool({ name: "find_operations", arguments: { limit: 50, ...(cursor === null ? {} : { cursor }) } })
    const page = result.structuredContent as { operations: Array<{ name: string }>; nextCursor: string | null }
    for (const operation of page.operations) names.add(operation.name)
    cursor = page.nextCursor
  } while (cursor !== null)
  return names
}

interface Row {
  readonly operation: string
  readonly caller: string
  readonly http: Outcome
  readonly mcp: Outcome
  readonly httpEvents: ReadonlyArray<AuditEvent>
  readonly mcpEvents: ReadonlyArray<AuditEvent>
}

const isSuccess = (outcome: Outcome) => outcome.kind === "answered" && outcome.status >= 200 && outcome.status < 300
const code = (outcome: Outcome & { readonly status: number }) =>
  `${outcome.status} ${"reason" in outcome && outcome.reason !== undefined ? outcome.reason : "error" in outcome && outcome.error !== undefined ? outcome.error : ""}`.trim()

describe("HTTP and MCP parity", { timeout: 180_000 }, () => {
  it("gives every caller the same outcome and the same audit trail for each operation on both paths", async ({ annotate }) => {
    const groups = new Set(sample.map(([id]) => operations.get(id)?.group))
    expect(groups.size).toBeGreaterThanOrEqual(10)
    const catalogs = new Map<string, ReadonlySet<string> | undefined>()
    for (const caller of callers) catalogs.set(caller.name, await listed(caller))
    const rows: Array<Row> = []
    for (const [id, prepare] of sample) {
      const operation = operations.get(id)
      expect(operation, id).toBeDefined()
      for (const caller of callers) {
        const run = async (path: typeof viaHttp) => {
          const args = await prepare(caller.organization)
          // What preparing recorded is passed over: the events read after the call are the call's alone.
          await auditSince(caller.organization)
          const outcome = await path(caller, operation!, args)
          const events = await auditSince(caller.organization)
          return { outcome, events }
        }
        const http = await run(viaHttp)
        const mcp = await run(viaMcp)
        rows.push({ operation: id, caller: caller.name, http: http.outcome, mcp: mcp.outcome, httpEvents: http.events, mcpEvents: mcp.events })
      }
    }

    const failures: Array<string> = []
    const tally = new Map<string, number>()
    const count = (key: string) => tally.set(key, (tally.get(key) ?? 0) + 1)
    for (const row of rows) {
      const operation = operations.get(row.operation)!
      const where = `${row.operation} as ${row.caller}`
      const { http, mcp } = row
      if (http.kind !== "answered") throw new Error(`${where}: HTTP always answers`)
      const catalog = catalogs.get(row.caller)
      const denials = (events: ReadonlyArray<AuditEvent>) => events.filter((event) => event.outcome === "denied")
      if (mcp.kind === "hidden") {
        // The server decides every call: call_operation sends whatever served operation it is asked for, so the API
        // refuses it as over HTTP (and records its denial). A call refused before it was sent breaks that.
        failures.push(`${where}: MCP refused before sending (${mcp.message}), HTTP answered ${JSON.stringify(http)}`)
      } else if (mcp.kind === "withheld") {
        failures.push(`${where}: HTTP ${JSON.stringify(http)} but MCP withheld the answer (${mcp.message})`)
      } else {
        const comparable = mcp.kind === "refused" ? { kind: "answered", status: mcp.status, error: mcp.error, reason: mcp.reason } : mcp
        if (JSON.stringify(comparable) !== JSON.stringify(http)) failures.push(`${where}: HTTP ${JSON.stringify(http)} but MCP ${JSON.stringify(mcp)}`)
        if (!isSuccess(http)) count(`${code(http)} over HTTP; through MCP ${mcp.kind === "refused" ? "at /mcp's gate" : "the same answer"}`)
        // The lists leave out only what the caller can never take: what succeeds is listed (what is listed may still
        // be refused, for what only the server knows: a suspension, an SSO requirement, a resource's grants).
        if (catalog !== undefined && isSuccess(http) && catalog.has(row.operation) !== true) failures.push(`${where}: it succeeds, but find_operations does not list it`)
        // An operation checking one action is listed exactly when the policy table allows it (one checking several
        // is listed for any of them: which it needs depends on the arguments, plugins.pluginGrant's org-wide share).
        if (catalog !== undefined && operation.requires.length === 1 && catalog.has(row.operation) && http.status === 403 && (http.reason === "insufficient_role" || http.reason === "insufficient_scope")) {
          failures.push(`${where}: find_operations lists it, but the policy table refuses it (${http.reason})`)
        }
        if (JSON.stringify(denials(row.httpEvents).map((event) => event.reason)) !== JSON.stringify(denials(row.mcpEvents).map((event) => event.reason))) {
          failures.push(`${where}: denials over HTTP ${JSON.stringify(row.httpEvents)}, through MCP ${JSON.stringify(row.mcpEvents)}`)
        }
      }
      // The audit trail: one succeeded event of the operation's action per successful write, on the path's channel;
      // a read nothing; a refusal nothing, or the one denial its handler records, with the refusal's reason.
      for (const [channel, outcome, events] of [["api", http, row.httpEvents], ["mcp", mcp, row.mcpEvents]] as const) {
        const summary = JSON.stringify(events.map((event) => [event.action, event.outcome, event.reason, event.via.channel]))
        if (isSuccess(outcome) && operation.audit !== undefined) {
          const [event] = events
          if (events.length !== 1 || event!.action !== operation.audit || event!.outcome !== "succeeded" || event!.via.channel !== channel) {
            failures.push(`${where} (${channel}): expected one ${operation.audit} event on channel ${channel}, got ${summary}`)
          }
        } else if (isSuccess(outcome)) {
          if (events.length !== 0) failures.push(`${where} (${channel}): a read recorded ${summary}`)
        } else if (events.length > 0) {
          const [event] = events
          const reason = "reason" in outcome ? outcome.reason : undefined
          if (events.length !== 1 || event!.outcome !== "denied" || event!.via.channel !== channel || event!.reason !== reason) {
            failures.push(`${where} (${channel}): a refusal recorded ${summary}`)
          }
        }
      }
    }
    const writes = sample.filter(([id]) => !operations.get(id)!.readOnly).length
    const successes = rows.filter((row) => isSuccess(row.http)).length
    const succeededFor = (caller: string) => rows.filter((row) => row.caller === caller && isSuccess(row.http)).map((row) => row.operation)
    // The sample is sound (the owner takes every operation of it), and each caller is who it claims to be.
    expect(succeededFor("owner")).toEqual(sample.map(([id]) => id))
    expect(succeededFor("admin").length).toBeLessThan(sample.length)
    expect(succeededFor("member").length).toBeLessThan(succeededFor("admin").length)
    const outsideScopes = succeededFor("scoped key").filter((id) => {
      const requires = operations.get(id)!.requires
      return requires.length > 0 && !requires.some((action) => keyScopes.includes(action))
    })
    expect(outsideScopes).toEqual([])
    // Outside an organization's routes only: who one is, and the roles there are.
    expect(succeededFor("suspended member")).toEqual(["users.me", "roles.list"])
    expect(succeededFor("SSO-enforced member")).toEqual(["users.me", "roles.list"])
    const summary =
      `${sample.length} operations (${writes} writes, ${sample.length - writes} reads) of ${groups.size} groups × ${callers.length} callers = ${rows.length} cases, ` +
      `each over HTTP and through MCP: ${successes} succeeded on both, ${rows.length - successes} refused on both ` +
      `(succeeded: ${callers.map((caller) => `${caller.name} ${succeededFor(caller.name).length}`).join(", ")}):\n` +
      [...tally].sort(([a], [b]) => a.localeCompare(b)).map(([key, n]) => `  ${n} × ${key}`).join("\n")
    // Written past the console (which the suite shows only for failed tests): the sample's size is one of its results.
    process.stdout.write(`HTTP and MCP parity: ${summary}\n`)
    await annotate(summary)
    expect(failures).toEqual([])
  })

  it("lists to each caller exactly the operations whose actions GET /v1/me says its credential may take, and none only a session may call to a key: one rule, a key made before scopes included", async () => {
    const acme = callers[0]!.organization
    // A key made before keys had scopes takes its maker's whole role, the actions only a naming scope grants included.
    const made = Http.expectStatus<{ key: string; apiKey: { id: string } }>("key", await post("/v1/api-keys", acme.ownerToken, { name: unique("Before scopes") }), 201)
    await server.sql((sql) => sql`UPDATE api_keys SET scopes = NULL WHERE organization_id = ${acme.id} AND id = ${made.apiKey.id}`)
    const beforeScopes: Caller = { name: "key made before scopes", organization: acme, http: { apiKey: made.key }, mcpHeaders: bearer(made.key) }
    await connect(beforeScopes)
    for (const caller of [...callers.filter((caller) => caller.name !== "suspended member" && caller.name !== "SSO-enforced member"), beforeScopes]) {
      const me = Http.expectStatus<{ credential: { type: string; actions: Array<string> } }>("me", await Http.request(url(), "GET", "/v1/me", caller.http), 200)
      const actions = new Set(me.credential.actions)
      const expected = Catalog.served()
        // What only a session may call is no key's (the server refuses it 403 session_required).
        .filter((operation) => !(operation.sessionOnly && me.credential.type === "api_key"))
        .filter((operation) => operation.requires.length === 0 || operation.requires.some((action) => actions.has(action)))
        .map((operation) => operation.id)
        .sort()
      expect([...(await listed(caller)) ?? []].sort(), caller.name).toEqual(expected)
    }
    // The server runs what only a naming scope grants for this key, and the catalog shows it.
    const keyMade = await Http.request(url(), "POST", "/v1/api-keys", { apiKey: made.key, body: { name: unique("Made by a pre-scope key") } })
    expect(keyMade.status, keyMade.text).toBe(201)
    expect((await listed(beforeScopes))?.has("apiKeys.create")).toBe(true)
  })
})

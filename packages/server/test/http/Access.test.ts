/**
 * Who may do what, endpoint by endpoint: the role matrix of the Members, Roles, Teams, Invitations and API Keys
 * groups as their OpenAPI descriptions document it, and the organization boundary (another organization's ids
 * answer 404 and change nothing).
 */
import { type Action, Actions, Policy, Roles } from "@orgplane/schema"
import * as Schema from "effect/Schema"
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
const call = (method: Method, path: string, options: Http.Options = {}) => Http.request(server.url, method, path, options)
const api = calls(() => server.url)

type Org = Awaited<ReturnType<typeof Http.staffed>>
type Role = "owner" | "admin" | "member"
const roles: ReadonlyArray<Role> = ["owner", "admin", "member"]

const unique = () => Math.random().toString(36).slice(2, 10)

// Fresh targets, made by the organization's owner ---------------------------------------------------------------

const freshMember = (org: Org) => Http.join(server.url, org.owner.token, "member", "Target")
const freshAdmin = (org: Org) => Http.join(server.url, org.owner.token, "admin", "Target")
const freshCoOwner = async (org: Org) => {
  const joined = await freshMember(org)
  ok(await api.members.changeRole({ token: org.owner.token, path: { memberId: joined.membership.id }, payload: { role: "owner" } }), 200)
  return joined
}
const freshTeam = async (org: Org, memberIds: ReadonlyArray<string> = []): Promise<{ id: string; name: string }> =>
  ok(await api.teams.create({ token: org.owner.token, payload: { name: `Team ${unique()}`, memberIds } }), 201).team
const freshInvitation = async (org: Org): Promise<{ id: string }> =>
  ok(await api.invitations.create({ token: org.owner.token, payload: { email: `invitee.${unique()}@example.com`, role: "member" } }), 201).invitation
const freshApiKey = async (org: Org): Promise<{ id: string }> =>
  ok(await api.apiKeys.create({ token: org.owner.token, payload: { name: `key ${unique()}` } }), 201).apiKey

/** A worker the organization's member registered, with one heartbeat of its runtime. */
const freshMembersWorker = async (org: Org): Promise<{ id: string }> => {
  const { token, worker } = ok(await api.workers.register({ token: org.member.token, payload: { name: `Worker ${unique()}`, destination: "local" } }), 201)
  ok(await api.workerRuntime.heartbeat({ token, payload: { openSessions: 1 } }), 200)
  return worker
}
/** A template of `who` (the owner by default), shared with nobody. */
const freshTemplate = async (org: Org, who: Role = "owner"): Promise<{ id: string }> =>
  ok(await api.templates.create({ token: org[who].token, payload: { name: `Template ${unique()}`, kind: "workspace", document: { a: 1 } } }), 201).template

/** An `oauth` MCP connection, granted to the whole organization (so members see it too). */
const MCP_URL = "https://93.184.215.14/mcp"
const freshMcpConnection = async (org: Org): Promise<{ id: string }> => {
  const { item } = ok(await api.mcpConnections.create({ token: org.owner.token, payload: { name: `MCP ${unique()}`, url: MCP_URL, authType: "oauth" } }), 201)
  ok(await api.mcpConnections.mcpConnectionGrant({ token: org.owner.token, path: { connectionId: item.id }, payload: { orgWide: true, role: "viewer" } }), 201)
  return item
}

/** An LLM provider with a credential (a public IP literal base URL: nothing is contacted), granted as `grant` says. */
const freshLlmProvider = async (org: Org, grant: "orgWide" | "none" = "orgWide"): Promise<{ id: string }> => {
  const { item } = ok(await api.llmProviders.create({
    token: org.owner.token,
    payload: { name: `LLM ${unique()}`, apiStyle: "openai-compatible", baseUrl: "https://93.184.215.14/v1", models: [{ id: "m" }], apiKey: "sk-matrix" }
  }), 201)
  if (grant === "orgWide") {
    ok(await api.llmProviders.llmProviderGrant({ token: org.owner.token, path: { llmProviderId: item.id }, payload: { orgWide: true, role: "viewer" } }), 201)
  }
  return item
}

// Part 1: the role matrix ----------------------------------------------------------------------------------------

interface Request {
  readonly method: Method
  readonly path: string
  readonly body?: unknown
}

interface CaseOf {
  readonly name: string
  /** Each role runs on its own freshly staffed organization, for cases that change who owns or belongs to it. */
  readonly fresh?: boolean
  readonly expect: Readonly<Record<Role, number>>
}

/** A case whose request needs nothing made first. */
interface PlainCase extends CaseOf {
  readonly setup?: undefined
  readonly request: (org: Org, ctx: undefined, role: Role) => Request
}

/** A case whose target `setup` makes, once per role, so that no case depends on another. */
interface SetupCase<Ctx> extends CaseOf {
  readonly setup: (org: Org) => Promise<Ctx>
  readonly request: (org: Org, ctx: Ctx, role: Role) => Request
}

/** A case as the matrix runs it: `prepare` makes its target in `org` and gives the request each role sends there. */
interface Case extends CaseOf {
  readonly prepare: (org: Org) => Promise<(role: Role) => Request>
}

function matrixCase(c: PlainCase): Case
function matrixCase<Ctx>(c: SetupCase<Ctx>): Case
function matrixCase<Ctx>(c: PlainCase | SetupCase<Ctx>): Case {
  return {
    name: c.name,
    ...(c.fresh === undefined ? {} : { fresh: c.fresh }),
    expect: c.expect,
    prepare: async (org) => {
      if (c.setup === undefined) return (role) => c.request(org, undefined, role)
      const ctx = await c.setup(org)
      return (role) => c.request(org, ctx, role)
    }
  }
}

const everyone = { owner: 200, admin: 200, member: 200 } as const
const managers = { owner: 200, admin: 200, member: 403 } as const
const managersCreate = { owner: 201, admin: 201, member: 403 } as const
const managersNoContent = { owner: 204, admin: 204, member: 403 } as const
const ownersOnly = { owner: 200, admin: 403, member: 403 } as const

const matrix: ReadonlyArray<Case> = [
  // The organization itself
  matrixCase({
    name: "GET /v1/organization",
    request: () => ({ method: "GET", path: "/v1/organization" }),
    expect: everyone
  }),
  matrixCase({
    name: "PATCH /v1/organization",
    request: (_, __, role) => ({ method: "PATCH", path: "/v1/organization", body: { metadata: { changedBy: role } } }),
    expect: managers
  }),
  matrixCase({
    name: "DELETE /v1/organization",
    fresh: true,
    request: () => ({ method: "DELETE", path: "/v1/organization", body: { confirmName: "Fresh" } }),
    expect: ownersOnly
  }),
  // Members
  matrixCase({
    name: "GET /v1/members",
    request: () => ({ method: "GET", path: "/v1/members" }),
    expect: everyone
  }),
  matrixCase({
    name: "GET /v1/members/:id",
    request: (org) => ({ method: "GET", path: `/v1/members/${org.admin.membership.id}` }),
    expect: everyone
  }),
  matrixCase({
    name: "PATCH /v1/members/:id a member to admin",
    setup: freshMember,
    request: (_, target) => ({ method: "PATCH", path: `/v1/members/${target.membership.id}`, body: { role: "admin" } }),
    expect: managers
  }),
  matrixCase({
    name: "PATCH /v1/members/:id an admin to member",
    setup: freshAdmin,
    request: (_, target) => ({ method: "PATCH", path: `/v1/members/${target.membership.id}`, body: { role: "member" } }),
    expect: managers
  }),
  matrixCase({
    name: "PATCH /v1/members/:id a member to owner",
    setup: freshMember,
    request: (_, target) => ({ method: "PATCH", path: `/v1/members/${target.membership.id}`, body: { role: "owner" } }),
    expect: ownersOnly
  }),
  matrixCase({
    name: "PATCH /v1/members/:id another owner to admin",
    setup: freshCoOwner,
    request: (_, target) => ({ method: "PATCH", path: `/v1/members/${target.membership.id}`, body: { role: "admin" } }),
    expect: ownersOnly
  }),
  matrixCase({
    name: "PATCH /v1/members/:id the last owner to admin",
    fresh: true,
    request: (org) => ({ method: "PATCH", path: `/v1/members/${org.owner.membership.id}`, body: { role: "admin" } }),
    expect: { owner: 409, admin: 403, member: 403 }
  }),
  matrixCase({
    name: "DELETE /v1/members/:id a member",
    setup: freshMember,
    request: (_, target) => ({ method: "DELETE", path: `/v1/members/${target.membership.id}` }),
    expect: managersNoContent
  }),
  matrixCase({
    name: "DELETE /v1/members/:id an admin",
    setup: freshAdmin,
    request: (_, target) => ({ method: "DELETE", path: `/v1/members/${target.membership.id}` }),
    expect: managersNoContent
  }),
  matrixCase({
    name: "DELETE /v1/members/:id another owner",
    setup: freshCoOwner,
    request: (_, target) => ({ method: "DELETE", path: `/v1/members/${target.membership.id}` }),
    expect: { owner: 204, admin: 403, member: 403 }
  }),
  matrixCase({
    name: "DELETE /v1/members/:id the (last) owner",
    fresh: true,
    request: (org) => ({ method: "DELETE", path: `/v1/members/${org.owner.membership.id}` }),
    expect: { owner: 409, admin: 403, member: 403 }
  }),
  matrixCase({
    name: "DELETE /v1/members/:id themselves (leave)",
    fresh: true,
    request: (org, _, role) => ({ method: "DELETE", path: `/v1/members/${org[role].membership.id}` }),
    expect: { owner: 409, admin: 204, member: 204 }
  }),
  matrixCase({
    name: "POST /v1/members/:id/transfer-ownership to an admin",
    fresh: true,
    setup: freshAdmin,
    request: (_, target) => ({ method: "POST", path: `/v1/members/${target.membership.id}/transfer-ownership` }),
    expect: ownersOnly
  }),
  // Roles
  matrixCase({
    name: "GET /v1/roles",
    request: () => ({ method: "GET", path: "/v1/roles" }),
    expect: everyone
  }),
  // Teams
  matrixCase({
    name: "POST /v1/teams",
    request: (org) => ({ method: "POST", path: "/v1/teams", body: { name: `Team ${unique()}`, memberIds: [org.member.membership.id] } }),
    expect: managersCreate
  }),
  matrixCase({
    name: "GET /v1/teams",
    request: () => ({ method: "GET", path: "/v1/teams" }),
    expect: everyone
  }),
  matrixCase({
    name: "GET /v1/teams/:id",
    setup: (org) => freshTeam(org, [org.member.membership.id]),
    request: (_, team) => ({ method: "GET", path: `/v1/teams/${team.id}` }),
    expect: everyone
  }),
  matrixCase({
    name: "PATCH /v1/teams/:id rename",
    setup: (org) => freshTeam(org),
    request: (_, team) => ({ method: "PATCH", path: `/v1/teams/${team.id}`, body: { name: `Renamed ${unique()}` } }),
    expect: managers
  }),
  matrixCase({
    name: "PATCH /v1/teams/:id replace members",
    setup: (org) => freshTeam(org, [org.member.membership.id]),
    request: (org, team) => ({ method: "PATCH", path: `/v1/teams/${team.id}`, body: { memberIds: [org.admin.membership.id] } }),
    expect: managers
  }),
  matrixCase({
    name: "POST /v1/teams/:id/members",
    setup: (org) => freshTeam(org),
    request: (org, team) => ({ method: "POST", path: `/v1/teams/${team.id}/members`, body: { memberIds: [org.member.membership.id] } }),
    expect: managers
  }),
  matrixCase({
    name: "DELETE /v1/teams/:id/members/:memberId",
    setup: (org) => freshTeam(org, [org.member.membership.id]),
    request: (org, team) => ({ method: "DELETE", path: `/v1/teams/${team.id}/members/${org.member.membership.id}` }),
    expect: managersNoContent
  }),
  matrixCase({
    name: "DELETE /v1/teams/:id",
    setup: (org) => freshTeam(org, [org.member.membership.id]),
    request: (_, team) => ({ method: "DELETE", path: `/v1/teams/${team.id}` }),
    expect: managersNoContent
  }),
  // Invitations
  matrixCase({
    name: "POST /v1/invitations as member",
    request: () => ({ method: "POST", path: "/v1/invitations", body: { email: `invitee.${unique()}@example.com`, role: "member" } }),
    expect: managersCreate
  }),
  matrixCase({
    name: "POST /v1/invitations as admin",
    request: () => ({ method: "POST", path: "/v1/invitations", body: { email: `invitee.${unique()}@example.com`, role: "admin" } }),
    expect: managersCreate
  }),
  matrixCase({
    name: "GET /v1/invitations",
    request: () => ({ method: "GET", path: "/v1/invitations" }),
    expect: managers
  }),
  matrixCase({
    name: "GET /v1/invitations/:id",
    setup: freshInvitation,
    request: (_, invitation) => ({ method: "GET", path: `/v1/invitations/${invitation.id}` }),
    expect: managers
  }),
  matrixCase({
    name: "POST /v1/invitations/:id/cancel",
    setup: freshInvitation,
    request: (_, invitation) => ({ method: "POST", path: `/v1/invitations/${invitation.id}/cancel` }),
    expect: managers
  }),
  // API keys
  matrixCase({
    name: "POST /v1/api-keys",
    request: () => ({ method: "POST", path: "/v1/api-keys", body: { name: `key ${unique()}` } }),
    expect: managersCreate
  }),
  matrixCase({
    name: "GET /v1/api-keys",
    request: () => ({ method: "GET", path: "/v1/api-keys" }),
    expect: managers
  }),
  matrixCase({
    name: "DELETE /v1/api-keys/:id",
    setup: freshApiKey,
    request: (_, key) => ({ method: "DELETE", path: `/v1/api-keys/${key.id}` }),
    expect: managersNoContent
  }),
  // Capability passthroughs: the suites' clients are for managers; a member's own connection and the capabilities for
  // everyone (no client configured here: the capability answers every role needs_connection, past the role check).
  matrixCase({
    name: "PUT /v1/capabilities/:suite/client",
    request: () => ({ method: "PUT", path: "/v1/capabilities/suite-b/client", body: { clientId: "client", features: ["calendarWrite"] } }),
    expect: managers
  }),
  matrixCase({
    name: "GET /v1/capabilities/:suite/connection",
    request: () => ({ method: "GET", path: "/v1/capabilities/suite-a/connection" }),
    expect: everyone
  }),
  matrixCase({
    name: "DELETE /v1/capabilities/:suite/connection",
    request: () => ({ method: "DELETE", path: "/v1/capabilities/suite-a/connection" }),
    expect: everyone
  }),
  matrixCase({
    name: "POST /v1/capabilities/suite-a/mail-drafts",
    request: () => ({ method: "POST", path: "/v1/capabilities/suite-a/mail-drafts", body: { to: ["ada@example.com"], subject: "s" } }),
    expect: { owner: 409, admin: 409, member: 409 }
  }),
  // MCP discovery (a query that is not usable: answered without probing anything)
  matrixCase({
    name: "POST /v1/mcp-connections/resolve",
    request: () => ({ method: "POST", path: "/v1/mcp-connections/resolve", body: { query: "!!!" } }),
    expect: managers
  }),
  matrixCase({
    name: "GET /v1/mcp-connections/presets",
    request: () => ({ method: "GET", path: "/v1/mcp-connections/presets" }),
    expect: everyone
  }),
  // Workers and their activity (the member's own worker: its creator, owners and admins read the activity)
  matrixCase({
    name: "GET /v1/workers",
    request: () => ({ method: "GET", path: "/v1/workers" }),
    expect: everyone
  }),
  matrixCase({
    name: "GET /v1/workers/:id/activity of the member's worker",
    setup: freshMembersWorker,
    request: (_, worker) => ({ method: "GET", path: `/v1/workers/${worker.id}/activity` }),
    expect: everyone
  }),
  // MCP connections (OAuth ones: created without reaching the server; a public IP literal needs no DNS)
  matrixCase({
    name: "POST /v1/mcp-connections",
    request: () => ({ method: "POST", path: "/v1/mcp-connections", body: { name: `MCP ${unique()}`, url: MCP_URL, authType: "oauth" } }),
    expect: managersCreate
  }),
  matrixCase({
    name: "GET /v1/mcp-connections",
    request: () => ({ method: "GET", path: "/v1/mcp-connections" }),
    expect: everyone
  }),
  matrixCase({
    name: "GET /v1/mcp-connections?scope=manageable",
    request: () => ({ method: "GET", path: "/v1/mcp-connections?scope=manageable" }),
    expect: managers
  }),
  matrixCase({
    name: "PATCH /v1/mcp-connections/:connectionId",
    setup: freshMcpConnection,
    request: (_, connection) => ({ method: "PATCH", path: `/v1/mcp-connections/${connection.id}`, body: { name: `MCP ${unique()}` } }),
    expect: managers
  }),
  matrixCase({
    name: "DELETE /v1/mcp-connections/:connectionId",
    setup: freshMcpConnection,
    request: (_, connection) => ({ method: "DELETE", path: `/v1/mcp-connections/${connection.id}` }),
    expect: managersNoContent
  }),
  matrixCase({
    name: "POST /v1/mcp-connections/:connectionId/access",
    setup: freshMcpConnection,
    request: (_, connection) => ({ method: "POST", path: `/v1/mcp-connections/${connection.id}/access`, body: { orgWide: true, role: "viewer" } }),
    expect: managersCreate
  }),
  // Templates: any member creates; the creator, owners and admins change and delete; a template nobody shared with a
  // member answers them 404 like a missing one.
  matrixCase({
    name: "POST /v1/templates",
    request: () => ({ method: "POST", path: "/v1/templates", body: { name: `Template ${unique()}`, kind: "workspace", document: {} } }),
    expect: { owner: 201, admin: 201, member: 201 }
  }),
  matrixCase({
    name: "GET /v1/templates",
    request: () => ({ method: "GET", path: "/v1/templates" }),
    expect: everyone
  }),
  matrixCase({
    name: "GET /v1/templates/:templateId the owner's",
    setup: (org) => freshTemplate(org),
    request: (_, template) => ({ method: "GET", path: `/v1/templates/${template.id}` }),
    expect: { owner: 200, admin: 200, member: 404 }
  }),
  matrixCase({
    name: "PATCH /v1/templates/:templateId the owner's",
    setup: (org) => freshTemplate(org),
    request: (_, template) => ({ method: "PATCH", path: `/v1/templates/${template.id}`, body: { document: { a: 2 } } }),
    expect: { owner: 200, admin: 200, member: 404 }
  }),
  matrixCase({
    name: "PATCH /v1/templates/:templateId a member's",
    setup: (org) => freshTemplate(org, "member"),
    request: (_, template) => ({ method: "PATCH", path: `/v1/templates/${template.id}`, body: { name: `Renamed ${unique()}` } }),
    expect: everyone
  }),
  matrixCase({
    name: "DELETE /v1/templates/:templateId the owner's",
    setup: (org) => freshTemplate(org),
    request: (_, template) => ({ method: "DELETE", path: `/v1/templates/${template.id}` }),
    expect: { owner: 204, admin: 204, member: 404 }
  }),
  matrixCase({
    name: "DELETE /v1/templates/:templateId a member's",
    setup: (org) => freshTemplate(org, "member"),
    request: (_, template) => ({ method: "DELETE", path: `/v1/templates/${template.id}` }),
    expect: { owner: 204, admin: 204, member: 204 }
  }),
  matrixCase({
    name: "POST /v1/templates/:templateId/access to the admin, on a member's",
    setup: (org) => freshTemplate(org, "member"),
    request: (org, template) => ({
      method: "POST",
      path: `/v1/templates/${template.id}/access`,
      body: { orgMembershipId: org.admin.membership.id, role: "viewer" }
    }),
    expect: { owner: 201, admin: 201, member: 201 }
  }),
  matrixCase({
    name: "POST /v1/templates/:templateId/access on the owner's",
    setup: (org) => freshTemplate(org),
    request: (org, template) => ({
      method: "POST",
      path: `/v1/templates/${template.id}/access`,
      body: { orgMembershipId: org.member.membership.id, role: "viewer" }
    }),
    expect: { owner: 201, admin: 201, member: 404 }
  }),
  // LLM providers: owners and admins register and manage them; members use the ones granted to them.
  matrixCase({
    name: "GET /v1/llm-provider-catalog",
    request: () => ({ method: "GET", path: "/v1/llm-provider-catalog?provider=openai" }),
    expect: everyone
  }),
  matrixCase({
    name: "POST /v1/llm-providers",
    request: () => ({
      method: "POST",
      path: "/v1/llm-providers",
      body: { name: `LLM ${unique()}`, catalogProviderId: "anthropic", models: [{ id: "claude-sonnet-4-5" }] }
    }),
    expect: managersCreate
  }),
  matrixCase({
    name: "GET /v1/llm-providers",
    request: () => ({ method: "GET", path: "/v1/llm-providers" }),
    expect: everyone
  }),
  matrixCase({
    name: "GET /v1/llm-providers?scope=manageable",
    request: () => ({ method: "GET", path: "/v1/llm-providers?scope=manageable" }),
    expect: everyone
  }),
  matrixCase({
    name: "GET /v1/llm-providers/:llmProviderId (granted to the organization)",
    setup: freshLlmProvider,
    request: (_, provider) => ({ method: "GET", path: `/v1/llm-providers/${provider.id}` }),
    expect: everyone
  }),
  matrixCase({
    name: "GET /v1/llm-providers/:llmProviderId/connect (granted to the organization)",
    setup: freshLlmProvider,
    request: (_, provider) => ({ method: "GET", path: `/v1/llm-providers/${provider.id}/connect` }),
    expect: everyone
  }),
  matrixCase({
    name: "PUT /v1/llm-providers/:llmProviderId/credential (not granted)",
    setup: (org) => freshLlmProvider(org, "none"),
    request: (_, provider) => ({ method: "PUT", path: `/v1/llm-providers/${provider.id}/credential`, body: { type: "api_key", apiKey: "sk-new" } }),
    expect: { owner: 200, admin: 200, member: 404 }
  }),
  matrixCase({
    name: "DELETE /v1/llm-providers/:llmProviderId (not granted)",
    setup: (org) => freshLlmProvider(org, "none"),
    request: (_, provider) => ({ method: "DELETE", path: `/v1/llm-providers/${provider.id}` }),
    expect: { owner: 204, admin: 204, member: 404 }
  })
]

/** Whether a value of the OpenAPI document is a JSON object; `objectAt` insists on one. */
const isObject = (value: unknown): value is Readonly<Record<string, unknown>> => typeof value === "object" && value !== null && !Array.isArray(value)
const objectAt = (value: unknown, what: string): Readonly<Record<string, unknown>> => {
  if (!isObject(value)) throw new Error(`${what}: not an object`)
  return value
}
/** An operation's documented policy actions: names of the policy table, or a failure naming the one that is not. */
const decodeNames = Schema.decodeUnknownSync(Schema.Array(Schema.String))
const isAction = (name: string): name is Action => Actions.some((action) => action === name)
const actionsOf = (value: unknown, what: string): ReadonlyArray<Action> =>
  decodeNames(value).map((name) => {
    if (!isAction(name)) throw new Error(`${what}: ${name} is no action of the policy table`)
    return name
  })

/** The OpenAPI operations (method, path pattern, documented policy actions), to hold the matrix to the document. */
let operations: ReadonlyArray<{ readonly method: string; readonly pattern: RegExp; readonly id: string; readonly actions?: ReadonlyArray<Action> }>
const operationOf = (method: string, path: string) => {
  const found = operations.find((operation) => operation.method === method && operation.pattern.test(path.split("?")[0]))
  if (found === undefined) throw new Error(`no operation for ${method} ${path}`)
  return found
}

describe("the role matrix", () => {
  let shared: Org
  beforeAll(async () => {
    shared = await Http.staffed(server.url, "Shared")
    const document = objectAt((await call("GET", "/openapi.json")).body, "the OpenAPI document")
    operations = Object.entries(objectAt(document["paths"], "its paths")).flatMap(([path, methods]) =>
      Object.entries(objectAt(methods, path)).flatMap(([method, operation]) => {
        // A path item's other members (parameters, a summary) are no operations.
        if (!isObject(operation)) return []
        const operationId = operation["operationId"]
        const actions = operation["x-orgplane-actions"]
        return [{
          method: method.toUpperCase(),
          pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`),
          id: typeof operationId === "string" ? operationId : "",
          ...(actions === undefined ? {} : { actions: actionsOf(actions, `${method} ${path}`) })
        }]
      })
    )
  })

  it("documents the policy actions of every operation that acts in an organization", () => {
    const organizationGroups = /^(organizations|members|teams|invitations|apiKeys|admin|suiteClients|suiteConnections|capabilities|templates|scimConnections)\./
    // Creating an organization acts in none yet: any signed-in person may.
    const publicOperations = ["invitations.accept", "invitations.preview", "suiteConnections.callback", "organizations.create"]
    const undocumented = operations.filter((operation) =>
      organizationGroups.test(operation.id) && !publicOperations.includes(operation.id) && operation.actions === undefined
    )
    expect(undocumented.map((operation) => operation.id)).toEqual([])
  })

  it.each(matrix.map((c) => [c.name, c] as const))("%s", async (name, c) => {
    const orgs = c.fresh
      ? await Promise.all(roles.map(() => Http.staffed(server.url, "Fresh")))
      : roles.map(() => shared)
    const requests = await Promise.all(orgs.map((org) => c.prepare(org)))
    const actual: Array<[string, Role, number]> = []
    const forbidden: Array<[string, Role, unknown]> = []
    for (const [i, role] of roles.entries()) {
      const org = orgs[i]
      const { method, path, body } = requests[i](role)
      const response = await call(method, path, { token: org[role].token, body })
      actual.push([name, role, response.status])
      if (response.status === 403) forbidden.push([name, role, response.body])
    }
    expect(actual).toEqual(roles.map((role) => [name, role, c.expect[role]]))
    // What the document says agrees: no role below the lowest one its policy actions name gets through, and when
    // it names a single action, every role from that one up gets past the role check.
    const { method, path } = requests[0]("owner")
    const documented = operationOf(method, path).actions
    if (documented !== undefined) {
      const lowest = Math.min(...documented.map((action) => Roles.indexOf(Policy[action].role)))
      for (const [, role, status] of actual) {
        if (Roles.indexOf(role) < lowest) expect([name, role, status]).toEqual([name, role, 403])
        else if (documented.length === 1) expect([name, role, status]).not.toEqual([name, role, 403])
      }
    }
    for (const [, role, body] of forbidden) {
      expect([name, role, body]).toEqual([name, role, { reason: "insufficient_role", message: expect.any(String) }])
    }
  })
})

// Part 2: the organization boundary ------------------------------------------------------------------------------

describe("the organization boundary", () => {
  let a: Org
  let b: Org
  let aTeam: { id: string }
  let aInvitation: { id: string }
  let aCanceled: { id: string }
  let aRemoved: { membership: { id: string } }
  let aKey: { id: string }
  let bTeam: { id: string }
  let bKey: string
  let aIds: Set<string>
  /** A as its owner reads it before B tries anything; every case checks that A still reads the same afterwards. */
  let baseline: Awaited<ReturnType<typeof snapshotA>>

  beforeAll(async () => {
    ;[a, b] = await Promise.all([Http.staffed(server.url, "Alpha"), Http.staffed(server.url, "Beta")])
    aTeam = await freshTeam(a, [a.admin.membership.id, a.member.membership.id])
    aInvitation = await freshInvitation(a)
    aCanceled = await freshInvitation(a)
    ok(await api.invitations.cancel({ token: a.owner.token, path: { invitationId: aCanceled.id } }), 200)
    aRemoved = await freshMember(a)
    ok(await api.members.remove({ token: a.owner.token, path: { memberId: aRemoved.membership.id } }), 204)
    aKey = await freshApiKey(a)
    bTeam = await freshTeam(b, [b.member.membership.id])
    bKey = ok(await api.apiKeys.create({ token: b.owner.token, payload: { name: "B script", scopes: Actions } }), 201).key
    aIds = new Set([
      a.organizationId,
      a.owner.membership.id,
      a.admin.membership.id,
      a.member.membership.id,
      aRemoved.membership.id,
      aTeam.id,
      aInvitation.id,
      aCanceled.id,
      aKey.id
    ])
    baseline = await snapshotA()
  })

  /** Everything of A that B's calls aim at, as A's owner reads it. */
  const snapshotA = async () => {
    const token = a.owner.token
    const [owner, admin, member, members, team, teams, invitations, apiKeys] = await Promise.all([
      api.members.get({ token, path: { memberId: a.owner.membership.id } }).then((answer) => ok(answer, 200)),
      api.members.get({ token, path: { memberId: a.admin.membership.id } }).then((answer) => ok(answer, 200)),
      api.members.get({ token, path: { memberId: a.member.membership.id } }).then((answer) => ok(answer, 200)),
      api.members.list({ token, query: { includeRemoved: "true" } }).then((answer) => ok(answer, 200)),
      api.teams.get({ token, path: { teamId: aTeam.id } }).then((answer) => ok(answer, 200)),
      api.teams.list({ token }).then((answer) => ok(answer, 200)),
      api.invitations.list({ token }).then((answer) => ok(answer, 200)),
      api.apiKeys.list({ token }).then((answer) => ok(answer, 200))
    ])
    return { owner, admin, member, members, team, teams, invitations, apiKeys }
  }

  /** What the tenancy check reads of a list's items, whatever the list: each one's id, and its organization's when it has one. */
  const decodeListed = Schema.decodeUnknownSync(Schema.Struct({
    items: Schema.Array(Schema.Struct({ id: Schema.String, organizationId: Schema.optionalKey(Schema.Unknown) }))
  }))

  /** A `{ token }` or `{ apiKey }` of B's owner. */
  const credentials = [
    ["B's owner session", () => ({ token: b.owner.token })],
    ["B's API key", () => ({ apiKey: bKey })]
  ] as const

  interface BoundaryCase {
    readonly name: string
    readonly request: () => Request
    readonly error: "member_not_found" | "team_not_found" | "invitation_not_found"
    /** What of B must be unchanged afterwards, read as B's owner. */
    readonly unchangedInB?: () => string
  }

  const aIdCases: ReadonlyArray<BoundaryCase> = [
    { name: "GET /v1/members/:A's member", request: () => ({ method: "GET", path: `/v1/members/${a.member.membership.id}` }), error: "member_not_found" },
    {
      name: "PATCH /v1/members/:A's member",
      request: () => ({ method: "PATCH", path: `/v1/members/${a.member.membership.id}`, body: { role: "admin" } }),
      error: "member_not_found"
    },
    {
      name: "PATCH /v1/members/:A's owner",
      request: () => ({ method: "PATCH", path: `/v1/members/${a.owner.membership.id}`, body: { role: "member" } }),
      error: "member_not_found"
    },
    { name: "DELETE /v1/members/:A's member", request: () => ({ method: "DELETE", path: `/v1/members/${a.member.membership.id}` }), error: "member_not_found" },
    { name: "DELETE /v1/members/:A's owner", request: () => ({ method: "DELETE", path: `/v1/members/${a.owner.membership.id}` }), error: "member_not_found" },
    {
      name: "POST /v1/members/:A's admin/transfer-ownership",
      request: () => ({ method: "POST", path: `/v1/members/${a.admin.membership.id}/transfer-ownership` }),
      error: "member_not_found"
    },
    { name: "GET /v1/teams/:A's team", request: () => ({ method: "GET", path: `/v1/teams/${aTeam.id}` }), error: "team_not_found" },
    {
      name: "PATCH /v1/teams/:A's team rename",
      request: () => ({ method: "PATCH", path: `/v1/teams/${aTeam.id}`, body: { name: `Hijacked ${unique()}` } }),
      error: "team_not_found"
    },
    {
      name: "PATCH /v1/teams/:A's team with B's members",
      request: () => ({ method: "PATCH", path: `/v1/teams/${aTeam.id}`, body: { memberIds: [b.member.membership.id] } }),
      error: "team_not_found"
    },
    {
      name: "POST /v1/teams/:A's team/members with B's members",
      request: () => ({ method: "POST", path: `/v1/teams/${aTeam.id}/members`, body: { memberIds: [b.member.membership.id] } }),
      error: "team_not_found"
    },
    {
      name: "DELETE /v1/teams/:A's team/members/:A's member",
      request: () => ({ method: "DELETE", path: `/v1/teams/${aTeam.id}/members/${a.member.membership.id}` }),
      error: "team_not_found"
    },
    { name: "DELETE /v1/teams/:A's team", request: () => ({ method: "DELETE", path: `/v1/teams/${aTeam.id}` }), error: "team_not_found" },
    {
      name: "POST /v1/invitations/:A's invitation/cancel",
      request: () => ({ method: "POST", path: `/v1/invitations/${aInvitation.id}/cancel` }),
      error: "invitation_not_found"
    },
    // B's own team, with A's member ids
    {
      name: "POST /v1/teams with A's members",
      request: () => ({ method: "POST", path: "/v1/teams", body: { name: "Smuggled", memberIds: [b.member.membership.id, a.member.membership.id] } }),
      error: "member_not_found",
      unchangedInB: () => "/v1/teams"
    },
    {
      name: "PATCH /v1/teams/:B's team with A's members",
      request: () => ({ method: "PATCH", path: `/v1/teams/${bTeam.id}`, body: { memberIds: [a.member.membership.id] } }),
      error: "member_not_found",
      unchangedInB: () => `/v1/teams/${bTeam.id}`
    },
    {
      name: "POST /v1/teams/:B's team/members with A's members",
      request: () => ({ method: "POST", path: `/v1/teams/${bTeam.id}/members`, body: { memberIds: [b.admin.membership.id, a.member.membership.id] } }),
      error: "member_not_found",
      unchangedInB: () => `/v1/teams/${bTeam.id}`
    },
    {
      name: "DELETE /v1/teams/:B's team/members/:A's member",
      request: () => ({ method: "DELETE", path: `/v1/teams/${bTeam.id}/members/${a.member.membership.id}` }),
      error: "member_not_found",
      unchangedInB: () => `/v1/teams/${bTeam.id}`
    }
  ]

  for (const [credential, as] of credentials) {
    it.each(aIdCases.map((c) => [c.name, c] as const))(`%s with ${credential} answers 404 and changes nothing`, async (name, c) => {
      const inB = c.unchangedInB?.()
      const beforeB = inB === undefined ? undefined : await call("GET", inB, { token: b.owner.token })
      const { method, path, body } = c.request()
      const response = await call(method, path, { ...as(), body })
      expect([name, credential, response.status, response.body]).toEqual([
        name,
        credential,
        404,
        { error: c.error, message: expect.any(String) }
      ])
      expect(await snapshotA()).toEqual(baseline)
      if (inB !== undefined) {
        const afterB = await call("GET", inB, { token: b.owner.token })
        expect([name, afterB.status, afterB.body]).toEqual([name, beforeB!.status, beforeB!.body])
      }
    })

    it(`lists of B never contain anything of A, read with ${credential}`, async () => {
      const lists = [
        "/v1/members",
        "/v1/members?includeRemoved=true",
        "/v1/members?role=owner",
        `/v1/members?q=${encodeURIComponent(a.member.email)}`,
        "/v1/teams",
        "/v1/teams?q=Team",
        "/v1/invitations",
        "/v1/invitations?status=pending",
        "/v1/invitations?status=canceled",
        "/v1/api-keys"
      ]
      for (const path of lists) {
        const response = await call("GET", path, as())
        expect([path, response.status]).toEqual([path, 200])
        const items = decodeListed(response.body).items
        const leaked = items.filter((item) => aIds.has(item.id) || (item.organizationId !== undefined && item.organizationId !== b.organizationId))
        expect([path, leaked]).toEqual([path, []])
      }
      const members = ok(await api.members.list({ ...as(), query: { includeRemoved: "true" } }), 200)
      expect(members.items.map((m) => m.id)).toEqual([b.owner.membership.id, b.admin.membership.id, b.member.membership.id])
      const teams = ok(await api.teams.list(as()), 200)
      expect(teams.items.map((t) => t.id)).toEqual([bTeam.id])
      const invitations = ok(await api.invitations.list(as()), 200)
      expect(invitations.items.every((i) => i.organizationId === b.organizationId)).toBe(true)
      expect(invitations.items.map((i) => i.id)).not.toContain(aInvitation.id)
    })
  }

  it("A's lists and resources are A's alone after all of B's attempts", async () => {
    const now = await snapshotA()
    expect(now).toEqual(baseline)
    expect(now.members.items.map((m) => m.id)).toEqual([
      a.owner.membership.id,
      a.admin.membership.id,
      a.member.membership.id,
      aRemoved.membership.id
    ])
    expect(now.owner.member.role).toBe("owner")
    expect(now.admin.member.role).toBe("admin")
    expect(now.member.member).toMatchObject({ role: "member", removedAt: null })
    expect(now.team.team.memberIds).toEqual([a.admin.membership.id, a.member.membership.id])
    expect(now.teams.items.map((t) => t.id)).toEqual([aTeam.id])
    expect(now.invitations.items.find((i) => i.id === aInvitation.id)?.status).toBe("pending")
  })
})

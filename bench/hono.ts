/**
 * A second yardstick for `pnpm bench --requests` (requests.ts): the five endpoints as a small team would write them
 * with a popular minimal stack, Hono (on `@hono/node-server`) + zod + `pg` (pool of 10). It runs orgplane's own
 * statements (statements.ts, shared with the baseline) with the same parameters, in orgplane's order and
 * transactions, and validates what orgplane validates with schemas: the query and the body of each request with zod,
 * and every row it reads (a schema per statement), before building the same JSON as orgplane. Between it and the
 * baseline is what a router, a Request/Response adapter and runtime validation cost; between it and orgplane, what
 * orgplane adds on top (Effect, its schemas, the per-request log line). Served by child.ts; started by run.ts.
 */
import { getRequestListener, type HttpBindings } from "@hono/node-server"
import { type Context, Hono } from "hono"
import pg from "pg"
import { z } from "zod"
import { serve } from "./child.js"
import * as S from "./statements.js"

const databaseUrl = process.env.DATABASE_URL
if (databaseUrl === undefined || databaseUrl.trim() === "") throw new Error("hono: DATABASE_URL is required")
const pool = new pg.Pool({ connectionString: databaseUrl, max: S.POOL_SIZE })

// Schemas ----------------------------------------------------------------------------------------------------------

const Id = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-z]{26}$`))
const Role = z.enum(["owner", "admin", "member"])

/** The caller columns both authentications read (MembershipsRepository's callerColumns) and what SSO enforcement reads. */
const CallerColumns = {
  user_id: Id("usr"),
  user_email: z.string(),
  user_name: z.string(),
  user_created_at: z.date(),
  membership_id: Id("om").nullable(),
  organization_id: Id("org").nullable(),
  role: Role.nullable(),
  membership_created_at: z.date().nullable(),
  organization_name: z.string().nullable(),
  organization_plan: z.string().nullable(),
  organization_provisional: z.boolean().nullable(),
  organization_created_at: z.date().nullable(),
  sso_connection_id: z.string().nullable(),
  authenticated_organization_id: z.string().nullable(),
  require_sso: z.boolean().nullable(),
  owners_password_fallback: z.boolean().nullable(),
  managed_by: z.string().nullable()
}

const SessionCaller = z.object({
  session_id: Id("ses"),
  session_created_at: z.date(),
  session_last_used_at: z.date().nullable(),
  ...CallerColumns
})

const ApiKeyCaller = z.object({
  api_key_id: Id("apk"),
  key_organization_id: Id("org"),
  last_used_at: z.date().nullable(),
  scopes: z.string().nullable(),
  ...CallerColumns
})
type Caller = z.infer<typeof SessionCaller> | z.infer<typeof ApiKeyCaller>

const MemberRow = z.object({
  id: Id("om"),
  organization_id: Id("org"),
  user_id: Id("usr").nullable(),
  name: z.string().nullable(),
  email: z.string().nullable(),
  role: Role,
  created_at: z.date(),
  removed_at: z.date().nullable(),
  suspended_at: z.date().nullable()
})
type MemberRow = z.infer<typeof MemberRow>

const LockedMember = MemberRow.extend({ owners: z.number().int() })

const ApiKeyRow = z.object({
  id: Id("apk"),
  organization_id: Id("org"),
  membership_id: Id("om"),
  name: z.string(),
  prefix: z.string(),
  key_hash: z.string(),
  created_at: z.date(),
  expires_at: z.date().nullable(),
  last_used_at: z.date().nullable(),
  scopes: z.string().nullable(),
  parent_api_key_id: Id("apk").nullable()
}).passthrough()

const TeamRow = z.object({
  id: Id("tem"),
  organization_id: Id("org"),
  name: z.string(),
  created_by_org_membership_id: Id("om").nullable(),
  external_key: z.string().nullable(),
  scim_connection_id: z.string().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
  member_ids: z.array(Id("om"))
})

const Standing = z.object({ role: Role.nullable(), person: z.boolean(), credential: z.boolean() })

const PageQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(50), cursor: z.undefined() })
const MembersQuery = PageQuery.extend({ q: z.undefined() })
const CreateTeam = z.object({
  name: z.string().trim().min(1).max(255),
  memberIds: z.array(Id("om")).max(500).optional(),
  externalKey: z.string().trim().min(1).max(255).optional()
})
const ChangeRole = z.object({ role: Role })
const MemberIdParam = Id("om")

// Requests ---------------------------------------------------------------------------------------------------------

type App = { Bindings: HttpBindings }
type C = Context<App>

class Failure extends Error {
  constructor(readonly status: 400 | 401 | 403 | 404 | 409, readonly body: unknown) {
    super(`HTTP ${status}`)
  }
}

const unauthorized = () => new Failure(401, { error: "unauthorized", message: "Authentication required." })
const invalid = (error: z.ZodError) => new Failure(400, { error: "invalid_request", details: error.issues.map((issue) => ({ path: issue.path, message: issue.message })) })

const parse = <T extends z.ZodTypeAny>(schema: T, value: unknown): z.infer<T> => {
  const result = schema.safeParse(value)
  if (!result.success) throw invalid(result.error)
  return result.data
}

/** A row read from the database, checked against its statement's schema (a mismatch is the server's fault: 500). */
const row = <T extends z.ZodTypeAny>(schema: T, value: unknown): z.infer<T> => schema.parse(value)

const cursorKey = S.cursorKeyOf(pool)

const touch = S.toucher(pool)

/** The caller of a session (`authorization: Bearer`) or an API key (`x-api-key`), one statement. */
const authenticate = async (c: C): Promise<Caller> => {
  const at = new Date()
  const authorization = c.req.header("authorization") ?? ""
  if (/^bearer /i.test(authorization)) {
    const token = authorization.slice(7).trim()
    if (token === "") throw unauthorized()
    const found = (await pool.query(S.run(S.sessionCaller, [S.hashToken(token), at, new Date(at.getTime() - S.SESSION_IDLE_MILLIS)]))).rows[0]
    if (found === undefined) throw unauthorized()
    const caller = row(SessionCaller, found)
    touch(caller.session_id, caller.session_last_used_at ?? caller.session_created_at, at, S.run(S.touchSession, [at, caller.session_id]))
    return caller
  }
  const value = c.req.header("x-api-key")?.trim() ?? ""
  if (value === "") throw unauthorized()
  const found = (await pool.query(S.run(S.apiKeyCaller, [S.hashToken(value), at]))).rows[0]
  if (found === undefined) throw unauthorized()
  const caller = row(ApiKeyCaller, found)
  touch(caller.api_key_id, caller.last_used_at, at, S.run(S.touchApiKey, [at, caller.key_organization_id, caller.api_key_id]))
  return caller
}

/** A caller acting as a member of its organization, admitted by its SSO policy, allowed `action` (role, and a key's scopes). */
const memberAllowed = async (c: C, action: S.Action) => {
  const caller = await authenticate(c)
  if (caller.membership_id === null || caller.organization_id === null || caller.role === null) {
    throw new Failure(404, { error: "organization_not_found", message: "Organization not found." })
  }
  if (caller.require_sso === true) throw new Failure(403, { error: "sso_required", message: "This organization requires single sign-on." })
  if (!S.can(caller, action)) throw new Failure(403, { reason: "scopes" in caller && S.roleAllows(caller.role, action) ? "insufficient_scope" : "insufficient_role" })
  return { ...caller, membership_id: caller.membership_id, organization_id: caller.organization_id, role: caller.role }
}

const member = (m: MemberRow) => ({
  id: m.id,
  organizationId: m.organization_id,
  userId: m.user_id,
  name: m.name,
  email: m.email,
  role: m.role,
  createdAt: m.created_at,
  removedAt: m.removed_at,
  suspendedAt: m.suspended_at
})

/** The caller's audit actor, as orgplane's AuditRecorder draws it: the person with their session, or the API key. */
const actorOf = (caller: Caller & { readonly membership_id: string }) => ({
  type: "api_key_id" in caller ? "api_key" as const : "user" as const,
  id: "api_key_id" in caller ? caller.api_key_id : caller.user_id,
  membershipId: caller.membership_id,
  label: `${caller.user_name} <${caller.user_email}>`,
  credentialId: "api_key_id" in caller ? caller.api_key_id : caller.session_id
})

/** `work` in a transaction, then the check at commit of the caller's authority (Authority.ts); a refusal rolls it back. */
const transaction = <A>(caller: Caller, granted: ReadonlyArray<S.Action>, work: (client: pg.PoolClient) => Promise<A>) =>
  S.inTransaction(pool, async (client) => {
    const result = await work(client)
    const refused = S.judge(row(Standing, (await client.query(S.standing(caller, new Date()))).rows[0]), granted)
    if (refused !== undefined) throw new Failure(refused[0] === 401 ? 401 : 403, refused[1])
    return result
  })

const body = async (c: C) => {
  try {
    return await c.req.json()
  } catch {
    throw new Failure(400, { error: "invalid_request", details: [{ path: [], message: "not JSON" }] })
  }
}

const app = new Hono<App>()

app.get("/v1/me", async (c) => {
  const caller = await authenticate(c)
  return c.json(S.meBody(caller))
})

app.get("/v1/members", async (c) => {
  const query = parse(MembersQuery, c.req.query())
  const caller = await memberAllowed(c, "members.read")
  const rows = (await pool.query(S.run(S.listMembers, [caller.organization_id, query.limit + 1]))).rows.map((r) => row(MemberRow, r))
  const items = rows.slice(0, query.limit).map(member)
  const last = items[items.length - 1]
  const search = new URL(c.req.url).searchParams
  return c.json({ items, nextCursor: rows.length > query.limit ? S.signCursor(await cursorKey(), "members", search, [last!.id]) : null })
})

app.get("/v1/api-keys", async (c) => {
  const query = parse(PageQuery, c.req.query())
  const caller = await memberAllowed(c, "apiKeys.manage")
  const rows = (await pool.query(S.run(S.listApiKeys, [caller.organization_id, query.limit + 1]))).rows.map((r) => row(ApiKeyRow, r))
  const items = rows.slice(0, query.limit).map(S.apiKeyBody)
  const last = items[items.length - 1]
  const search = new URL(c.req.url).searchParams
  return c.json({ items, nextCursor: rows.length > query.limit ? S.signCursor(await cursorKey(), "api-keys", search, [last!.id]) : null })
})

app.post("/v1/teams", async (c) => {
  const request = parse(CreateTeam, await body(c))
  const caller = await memberAllowed(c, "teams.manage")
  if (request.memberIds !== undefined || request.externalKey !== undefined) throw new Failure(400, { error: "invalid_request", details: [] })
  const id = S.makeId("tem")
  const at = new Date()
  const team = await transaction(caller, ["teams.manage"], async (client) => {
    await client.query(S.run(S.insertTeam, [id, caller.organization_id, request.name, caller.membership_id, null, null, at, at]))
    const t = row(TeamRow, (await client.query(S.run(S.selectTeam, [caller.organization_id, id]))).rows[0])
    await client.query(S.run(S.insertAuditEvent, S.auditParameters({
      organizationId: caller.organization_id,
      action: "team.create",
      category: "change",
      actor: actorOf(caller),
      ip: c.env.incoming.socket.remoteAddress ?? null,
      userAgent: c.req.header("user-agent") ?? null,
      targets: [{ type: "team", id }]
    })))
    return t
  })
  return c.json({
    team: {
      id: team.id,
      organizationId: team.organization_id,
      name: team.name,
      memberIds: team.member_ids,
      createdByOrgMembershipId: team.created_by_org_membership_id,
      externalKey: team.external_key,
      scimConnectionId: team.scim_connection_id,
      createdAt: team.created_at,
      updatedAt: team.updated_at
    }
  }, 201)
})

app.patch("/v1/members/:memberId", async (c) => {
  const memberId = parse(MemberIdParam, c.req.param("memberId"))
  const { role } = parse(ChangeRole, await body(c))
  const caller = await memberAllowed(c, "members.changeRole")
  const organizationId = caller.organization_id
  const changed = await transaction(caller, ["members.changeRole"], async (client) => {
    await client.query(S.run(S.lockOrganization, [organizationId]))
    const rows = (await client.query(S.run(S.lockedMembers, [organizationId, organizationId, caller.membership_id, memberId]))).rows.map((r) => row(LockedMember, r))
    const self = rows.find((m) => m.id === caller.membership_id)
    const target = rows.find((m) => m.id === memberId)
    if (self === undefined || target === undefined) throw new Failure(404, { error: "member_not_found", message: "Member not found." })
    const manages = self.role === "owner" || self.role === "admin"
    if (!manages || ((target.role === "owner" || role === "owner") && self.role !== "owner")) throw new Failure(403, { reason: "insufficient_role" })
    if (target.role === role) return target
    if (target.role === "owner" && target.owners <= 1) throw new Failure(409, { error: "last_owner" })
    await client.query(S.run(S.changeRole, [role, new Date(), organizationId, memberId]))
    await client.query(S.run(S.insertAuditEvent, S.auditParameters({
      organizationId,
      action: "member.role.update",
      category: "change",
      actor: actorOf(caller),
      ip: c.env.incoming.socket.remoteAddress ?? null,
      userAgent: c.req.header("user-agent") ?? null,
      targets: [{ type: "member", id: memberId }],
      changes: { before: { role: target.role }, after: { role }, changedFields: ["role"] }
    })))
    return { ...target, role }
  })
  return c.json({ member: member(changed) })
})

app.notFound((c) => c.json({ error: "not_found" }, 404))
app.onError((error, c) => {
  if (error instanceof Failure) return c.json(error.body as object, error.status)
  console.error(error)
  return c.json({ error: "internal" }, 500)
})

await serve(getRequestListener(app.fetch), () => pool.end())

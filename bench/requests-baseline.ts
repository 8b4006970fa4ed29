/**
 * The baseline's answers to `pnpm bench --requests` (requests.ts), routed from baseline.ts when the harness starts it
 * with ORGPLANE_BENCH_REQUESTS=1: hand-written `node:http` + `pg` code running orgplane's own statements
 * (statements.ts) with the same parameters, in orgplane's order and transactions, the audit event's INSERT last
 * before COMMIT, and answering the same JSON, byte for byte. No schema checks beyond what the statements need, no
 * framework, no log line: what is left between it and orgplane is orgplane's own cost. Imports no orgplane code.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type pg from "pg"
import { objectOrUndefined } from "./json.js"
import { type Row, text, textOrNull } from "./rows.js"
import * as S from "./statements.js"


const json = (response: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  response.end(text)
}

const unauthorized = { error: "unauthorized", message: "Authentication required." }

const readBody = async (request: IncomingMessage): Promise<Readonly<Record<string, unknown>> | undefined> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  try {
    return objectOrUndefined(JSON.parse(Buffer.concat(chunks).toString("utf8")))
  } catch {
    return undefined
  }
}

const limitOf = (query: URLSearchParams) => {
  const text = query.get("limit")
  const limit = text === null ? 50 : Number(text)
  return Number.isInteger(limit) && limit >= 1 && limit <= 100 ? limit : undefined
}

const member = (row: Row, role: string = text(row.role)) => ({
  id: row.id,
  organizationId: row.organization_id,
  userId: row.user_id,
  name: row.name,
  email: row.email,
  role,
  createdAt: row.created_at,
  removedAt: row.removed_at,
  suspendedAt: row.suspended_at
})

export const requestRoutes = (pool: pg.Pool) => {
  const cursorKey = S.cursorKeyOf(pool)
  const touch = S.toucher(pool)

  /** The caller of a session (`authorization: Bearer`) or an API key (`x-api-key`), one statement; undefined: 401. */
  const authenticate = async (request: IncomingMessage): Promise<Row | undefined> => {
    const authorization = request.headers.authorization ?? ""
    const at = new Date()
    if (/^bearer /i.test(authorization)) {
      const token = authorization.slice(7).trim()
      if (token === "") return undefined
      const caller = (await pool.query(S.run(S.sessionCaller, [S.hashToken(token), at, new Date(at.getTime() - S.SESSION_IDLE_MILLIS)]))).rows[0]
      if (caller !== undefined) touch(caller.session_id, caller.session_last_used_at ?? caller.session_created_at, at, S.run(S.touchSession, [at, caller.session_id]))
      return caller
    }
    const value = request.headers["x-api-key"]
    if (typeof value !== "string" || value.trim() === "") return undefined
    const caller = (await pool.query(S.run(S.apiKeyCaller, [S.hashToken(value.trim()), at]))).rows[0]
    if (caller !== undefined) touch(caller.api_key_id, caller.last_used_at, at, S.run(S.touchApiKey, [at, caller.key_organization_id, caller.api_key_id]))
    return caller
  }

  /** A caller acting as a member of its organization, admitted by its SSO policy (none here: admitted), allowed `action`. */
  const refusal = (caller: Row, action?: S.Action): readonly [number, unknown] | undefined =>
    caller.membership_id === null
      ? [404, { error: "organization_not_found", message: "Organization not found." }]
      : caller.require_sso === true
      ? [403, { error: "sso_required", message: "This organization requires single sign-on." }]
      : action !== undefined && !S.can({ role: caller.role, scopes: caller.scopes }, action)
      ? [403, { reason: caller.scopes !== undefined && S.roleAllows(text(caller.role), action) ? "insufficient_scope" : "insufficient_role" }]
      : undefined

  const me = async (request: IncomingMessage, response: ServerResponse) => {
    const caller = await authenticate(request)
    if (caller === undefined) return json(response, 401, unauthorized)
    return json(response, 200, S.meBody(caller))
  }

  const members = async (request: IncomingMessage, response: ServerResponse, query: URLSearchParams) => {
    const caller = await authenticate(request)
    if (caller === undefined) return json(response, 401, unauthorized)
    const refused = refusal(caller, "members.read")
    if (refused !== undefined) return json(response, ...refused)
    const limit = limitOf(query)
    if (limit === undefined || query.has("q") || query.has("cursor")) return json(response, 400, { error: "invalid_request" })
    const rows = (await pool.query(S.run(S.listMembers, [caller.organization_id, limit + 1]))).rows
    const items = rows.slice(0, limit).map((row) => member(row))
    const last = items[items.length - 1]
    return json(response, 200, { items, nextCursor: rows.length > limit ? S.signCursor(await cursorKey(), "members", query, [text(last!.id)]) : null })
  }

  const apiKeys = async (request: IncomingMessage, response: ServerResponse, query: URLSearchParams) => {
    const caller = await authenticate(request)
    if (caller === undefined) return json(response, 401, unauthorized)
    const refused = refusal(caller, "apiKeys.manage")
    if (refused !== undefined) return json(response, ...refused)
    const limit = limitOf(query)
    if (limit === undefined || query.has("cursor")) return json(response, 400, { error: "invalid_request" })
    const rows = (await pool.query(S.run(S.listApiKeys, [caller.organization_id, limit + 1]))).rows
    const items = rows.slice(0, limit).map(S.apiKeyBody)
    const last = items[items.length - 1]
    return json(response, 200, { items, nextCursor: rows.length > limit ? S.signCursor(await cursorKey(), "api-keys", query, [last!.id]) : null })
  }

  /** The caller's audit actor, as orgplane's AuditRecorder draws it: the person with their session, or the API key. */
  const actorOf = (caller: Row) => ({
    type: caller.api_key_id === undefined ? "user" as const : "api_key" as const,
    id: text(caller.api_key_id ?? caller.user_id),
    membershipId: textOrNull(caller.membership_id),
    label: `${text(caller.user_name)} <${text(caller.user_email)}>`,
    credentialId: textOrNull(caller.api_key_id ?? caller.session_id)
  })

  /**
   * `work` in a transaction on one connection, then the check at commit of the caller's authority (its standing read
   * again under lock, judged against the actions `granted`): COMMIT when it holds and the work answered a success,
   * ROLLBACK otherwise or when it throws.
   */
  const transaction = async <A>(caller: Row, granted: ReadonlyArray<S.Action>, work: (client: pg.PoolClient) => Promise<readonly [number, A]>) => {
    const client = await pool.connect()
    try {
      await client.query(S.run("BEGIN"))
      let answer: readonly [number, unknown] = await work(client)
      if (answer[0] < 300) answer = S.judge((await client.query(S.standing(caller, new Date()))).rows[0], granted) ?? answer
      await client.query(S.run(answer[0] < 300 ? "COMMIT" : "ROLLBACK"))
      return answer
    } catch (error) {
      await client.query(S.run("ROLLBACK")).catch(() => undefined)
      throw error
    } finally {
      client.release()
    }
  }

  const createTeam = async (request: IncomingMessage, response: ServerResponse) => {
    const body = await readBody(request)
    const caller = await authenticate(request)
    if (caller === undefined) return json(response, 401, unauthorized)
    const refused = refusal(caller, "teams.manage")
    if (refused !== undefined) return json(response, ...refused)
    const name = typeof body?.name === "string" ? body.name.trim() : ""
    if (name === "" || name.length > 255 || body?.memberIds !== undefined || body?.externalKey !== undefined) {
      return json(response, 400, { error: "invalid_request" })
    }
    const organizationId = caller.organization_id as string
    const id = S.makeId("tem")
    const at = new Date()
    const [status, answer] = await transaction(caller, ["teams.manage"], async (client) => {
      await client.query(S.run(S.insertTeam, [id, organizationId, name, caller.membership_id, null, null, at, at]))
      const [row] = (await client.query(S.run(S.selectTeam, [organizationId, id]))).rows
      await client.query(S.run(S.insertAuditEvent, S.auditParameters({
        organizationId,
        action: "team.create",
        category: "change",
        actor: actorOf(caller),
        ip: request.socket.remoteAddress ?? null,
        userAgent: request.headers["user-agent"] ?? null,
        targets: [{ type: "team", id }]
      })))
      return [201, {
        team: {
          id: row.id,
          organizationId: row.organization_id,
          name: row.name,
          memberIds: row.member_ids,
          createdByOrgMembershipId: row.created_by_org_membership_id,
          externalKey: row.external_key,
          scimConnectionId: row.scim_connection_id,
          createdAt: row.created_at,
          updatedAt: row.updated_at
        }
      }] as const
    })
    return json(response, status, answer)
  }

  const changeMemberRole = async (request: IncomingMessage, response: ServerResponse, memberId: string) => {
    const body = await readBody(request)
    const caller = await authenticate(request)
    if (caller === undefined) return json(response, 401, unauthorized)
    const refused = refusal(caller, "members.changeRole")
    if (refused !== undefined) return json(response, ...refused)
    const role = body?.role
    if (role !== "owner" && role !== "admin" && role !== "member") return json(response, 400, { error: "invalid_request" })
    const organizationId = caller.organization_id as string
    const [status, answer] = await transaction<unknown>(caller, ["members.changeRole"], async (client) => {
      await client.query(S.run(S.lockOrganization, [organizationId]))
      const rows = (await client.query(S.run(S.lockedMembers, [organizationId, organizationId, caller.membership_id, memberId]))).rows
      const self = rows.find((row) => row.id === caller.membership_id)
      const target = rows.find((row) => row.id === memberId)
      if (self === undefined || target === undefined) return [404, { error: "member_not_found", message: "Member not found." }]
      const manages = self.role === "owner" || self.role === "admin"
      if (!manages || ((target.role === "owner" || role === "owner") && self.role !== "owner")) return [403, { reason: "insufficient_role" }]
      if (target.role === role) return [200, { member: member(target) }]
      if (target.role === "owner" && target.owners <= 1) return [409, { error: "last_owner" }]
      await client.query(S.run(S.changeRole, [role, new Date(), organizationId, memberId]))
      await client.query(S.run(S.insertAuditEvent, S.auditParameters({
        organizationId,
        action: "member.role.update",
        category: "change",
        actor: actorOf(caller),
        ip: request.socket.remoteAddress ?? null,
        userAgent: request.headers["user-agent"] ?? null,
        targets: [{ type: "member", id: memberId }],
        changes: { before: { role: target.role }, after: { role }, changedFields: ["role"] }
      })))
      return [200, { member: member(target, role) }]
    })
    return json(response, status, answer)
  }

  /** Answers the request when it is one of the five; false otherwise. */
  return async (request: IncomingMessage, response: ServerResponse, url: URL): Promise<boolean> => {
    const path = url.pathname
    if (request.method === "GET") {
      if (path === "/v1/me") return me(request, response).then(() => true)
      if (path === "/v1/members") return members(request, response, url.searchParams).then(() => true)
      if (path === "/v1/api-keys") return apiKeys(request, response, url.searchParams).then(() => true)
    } else if (request.method === "POST" && path === "/v1/teams") {
      return createTeam(request, response).then(() => true)
    } else if (request.method === "PATCH") {
      const match = /^\/v1\/members\/([^/]+)$/.exec(path)
      if (match !== null) return changeMemberRole(request, response, decodeURIComponent(match[1]!)).then(() => true)
    }
    return false
  }
}

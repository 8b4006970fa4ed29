/**
 * The yardstick: what hand-written code costs for the benchmarked reads. A minimal `node:http` + `pg` server (pool of
 * 10) over the database at DATABASE_URL that orgplane seeded, one statement per authentication and one per list,
 * answering the same JSON as orgplane. Imports no orgplane code on purpose. Uses only columns that exist since the
 * first two migrations, so it reads databases of older checkouts too. Served by child.ts.
 */
import { createHash } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import pg from "pg"
import { serve } from "./child.js"

const databaseUrl = process.env.DATABASE_URL
if (databaseUrl === undefined || databaseUrl.trim() === "") throw new Error("baseline: DATABASE_URL is required")
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 })

type Row = Record<string, any>

// The caller's user, organization and membership, in one statement per kind of credential. A session lands on its
// active organization, else on the oldest active membership; an API key is pinned to its own membership.
const principalColumns = `
  u.id AS user_id, u.email AS user_email, u.name AS user_name, u.created_at AS user_created_at,
  o.id AS org_id, o.name AS org_name, o.plan AS org_plan, o.provisional AS org_provisional, o.created_at AS org_created_at,
  m.id AS m_id, m.organization_id AS m_organization_id, m.user_id AS m_user_id, m.role AS m_role, m.created_at AS m_created_at`

const bySession = `
  SELECT ${principalColumns}
  FROM sessions s
  JOIN users u ON u.id = s.user_id
  LEFT JOIN LATERAL (
    SELECT * FROM memberships
    WHERE user_id = s.user_id AND removed_at IS NULL
    ORDER BY (organization_id = s.active_organization_id) DESC NULLS LAST, id
    LIMIT 1
  ) m ON true
  LEFT JOIN organizations o ON o.id = m.organization_id
  WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`

const byApiKey = `
  SELECT ${principalColumns}
  FROM api_keys k
  JOIN memberships m ON m.id = k.membership_id AND m.organization_id = k.organization_id AND m.removed_at IS NULL
  JOIN users u ON u.id = m.user_id
  JOIN organizations o ON o.id = k.organization_id
  WHERE k.key_hash = $1 AND (k.expires_at IS NULL OR k.expires_at > now())`

const hash = (secret: string) => createHash("sha256").update(secret).digest("hex")

const authenticate = async (request: IncomingMessage): Promise<Row | undefined> => {
  const authorization = request.headers.authorization ?? ""
  if (/^bearer /i.test(authorization)) {
    const token = authorization.slice(7).trim()
    return token === "" ? undefined : (await pool.query(bySession, [hash(token)])).rows[0]
  }
  const key = request.headers["x-api-key"]
  if (typeof key !== "string" || key.trim() === "") return undefined
  return (await pool.query(byApiKey, [hash(key.trim())])).rows[0]
}

const me = (row: Row) => ({
  user: { id: row.user_id, email: row.user_email, name: row.user_name, createdAt: row.user_created_at },
  organization: row.org_id === null
    ? null
    : { id: row.org_id, name: row.org_name, plan: row.org_plan, provisional: row.org_provisional, createdAt: row.org_created_at },
  membership: row.m_id === null
    ? null
    : { id: row.m_id, organizationId: row.m_organization_id, userId: row.m_user_id, role: row.m_role, createdAt: row.m_created_at }
})

const limitOf = (url: URL) => {
  const limit = Number(url.searchParams.get("limit") ?? 50)
  return Number.isInteger(limit) && limit >= 1 && limit <= 100 ? limit : 50
}

/** `{ items, nextCursor }` from `limit + 1` rows; the cursor encodes the last item's sort key as orgplane does. */
const page = <A>(rows: ReadonlyArray<A>, limit: number, key: (item: A) => ReadonlyArray<string>) => {
  const items = rows.slice(0, limit)
  const last = items[items.length - 1]
  return {
    items,
    nextCursor: rows.length > limit ? Buffer.from(JSON.stringify(key(last))).toString("base64url") : null
  }
}

const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

const members = async (organizationId: string, url: URL) => {
  const limit = limitOf(url)
  const q = url.searchParams.get("q")?.trim()
  const { rows } = await pool.query(
    `SELECT m.id, m.organization_id AS "organizationId", m.user_id AS "userId", u.name, u.email, m.role,
            m.created_at AS "createdAt", m.removed_at AS "removedAt"
     FROM memberships m LEFT JOIN users u ON u.id = m.user_id
     WHERE m.organization_id = $1 AND m.removed_at IS NULL
       ${q ? "AND (u.name ILIKE $3 OR u.email ILIKE $3)" : ""}
     ORDER BY m.id LIMIT $2`,
    q ? [organizationId, limit + 1, likePattern(q)] : [organizationId, limit + 1]
  )
  return page(rows, limit, (member) => [member.id])
}

const teams = async (organizationId: string, url: URL) => {
  const limit = limitOf(url)
  const { rows } = await pool.query(
    `SELECT t.id, t.organization_id AS "organizationId", t.name,
            ARRAY(SELECT membership_id FROM team_members WHERE team_id = t.id ORDER BY membership_id) AS "memberIds",
            t.created_by_membership_id AS "createdByOrgMembershipId", t.created_at AS "createdAt", t.updated_at AS "updatedAt"
     FROM teams t WHERE t.organization_id = $1 ORDER BY lower(t.name), t.id LIMIT $2`,
    [organizationId, limit + 1]
  )
  return page(rows, limit, (team) => [team.name, team.id])
}

const apiKeys = async (organizationId: string, url: URL) => {
  const limit = limitOf(url)
  const { rows } = await pool.query(
    `SELECT id, name, prefix, membership_id AS "createdByOrgMembershipId", created_at AS "createdAt",
            expires_at AS "expiresAt", last_used_at AS "lastUsedAt"
     FROM api_keys WHERE organization_id = $1 ORDER BY id DESC LIMIT $2`,
    [organizationId, limit + 1]
  )
  return page(rows, limit, (key) => [key.id])
}

const lists: Record<string, (organizationId: string, url: URL) => Promise<unknown>> = {
  "/v1/members": members,
  "/v1/teams": teams,
  "/v1/api-keys": apiKeys
}

const send = (response: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  response.end(text)
}

const handle = async (request: IncomingMessage, response: ServerResponse) => {
  const url = new URL(request.url ?? "/", "http://localhost")
  if (request.method !== "GET") return send(response, 405, { error: "method_not_allowed" })
  if (url.pathname === "/health") return send(response, 200, { ok: true, version: process.env.ORGPLANE_VERSION ?? "baseline" })
  const list = lists[url.pathname]
  if (url.pathname !== "/v1/me" && list === undefined) return send(response, 404, { error: "not_found" })
  const principal = await authenticate(request)
  if (principal === undefined) return send(response, 401, { error: "unauthorized" })
  if (list === undefined) return send(response, 200, me(principal))
  if (principal.org_id === null) return send(response, 404, { error: "organization_not_found" })
  return send(response, 200, await list(principal.org_id, url))
}

await serve((request, response) => {
  handle(request, response).catch((error) => {
    console.error(error)
    if (!response.headersSent) send(response, 500, { error: "internal" })
    else response.destroy()
  })
}, () => pool.end())

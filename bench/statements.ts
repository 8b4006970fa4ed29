/**
 * orgplane's SQL on the request path measured by `pnpm bench --requests` (requests.ts), as it reaches the database:
 * copied from the server's repositories (identity/SessionsRepository.ts, identity/ApiKeysRepository.ts,
 * members/MembershipsRepository.ts, teams/TeamsRepository.ts, platform/AuditRecorder.ts) and checked against
 * Postgres's statement log of orgplane answering each request (`log_statement = 'all'`), whitespace and the `true`s
 * of filters left out included. The baseline (requests-baseline.ts, routed from baseline.ts) and the Hono server
 * (hono.ts) run these texts with the same parameters, in orgplane's order and transactions. Imports no orgplane code.
 */
import { createHash, createHmac } from "node:crypto"
import type { Pool, PoolClient, QueryConfig } from "pg"

import { insertAuditEvent } from "./audit-baseline.js"

export { auditParameters, insertAuditEvent } from "./audit-baseline.js"

/** sha256 hex of a session token or an API key, as orgplane's Crypto.hashToken. */
export const hashToken = (secret: string) => createHash("sha256").update(secret).digest("hex")

/** SessionsRepository.resolve: `$1` the token's hash, `$2` now. */
export const sessionCaller = `SELECT s.id AS session_id, u.id AS user_id, u.email AS user_email, u.name AS user_name, u.created_at AS user_created_at,
      m.id AS membership_id, m.organization_id, m.role, m.created_at AS membership_created_at,
      o.name AS organization_name, o.plan AS organization_plan, o.provisional AS organization_provisional,
      o.created_at AS organization_created_at, s.sso_connection_id, s.authenticated_organization_id, p.require_sso, p.owners_password_fallback,
      CASE WHEN p.require_sso THEN (SELECT cd.connection_id FROM sso_connection_domains cd
       WHERE cd.organization_id = m.organization_id AND cd.active AND cd.domain = lower(substring(u.email from '@([^@]*)$'))
       LIMIT 1) END AS managed_by
            FROM sessions s
            JOIN users u ON u.id = s.user_id
            LEFT JOIN LATERAL (
              SELECT * FROM memberships
              WHERE user_id = s.user_id AND removed_at IS NULL AND suspended_at IS NULL
              ORDER BY (organization_id IS NOT DISTINCT FROM s.active_organization_id) DESC, id
              LIMIT 1
            ) m ON true
            LEFT JOIN organizations o ON o.id = m.organization_id
            LEFT JOIN sso_policies p ON p.organization_id = m.organization_id
            WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2`

/** ApiKeysRepository.resolve: `$1` the key's hash, `$2` now. */
export const apiKeyCaller = `SELECT k.id AS api_key_id, k.organization_id AS key_organization_id, k.last_used_at, u.id AS user_id, u.email AS user_email, u.name AS user_name, u.created_at AS user_created_at,
      m.id AS membership_id, m.organization_id, m.role, m.created_at AS membership_created_at,
      o.name AS organization_name, o.plan AS organization_plan, o.provisional AS organization_provisional,
      o.created_at AS organization_created_at
            FROM api_keys k
            JOIN memberships m ON m.organization_id = k.organization_id AND m.id = k.membership_id
                               AND m.removed_at IS NULL AND m.suspended_at IS NULL AND m.user_id IS NOT NULL
            JOIN users u ON u.id = m.user_id
            JOIN organizations o ON o.id = k.organization_id
            WHERE k.key_hash = $1 AND (k.expires_at IS NULL OR k.expires_at > $2)`

/**
 * ApiKeysRepository.touch: `$1` now, `$2` the organization, `$3` the key. Off the request path (the response does
 * not wait for it), at most once a minute per key (Authentication.ts's TOUCH_INTERVAL_MILLIS).
 */
export const touchApiKey = `UPDATE api_keys SET last_used_at = $1 WHERE organization_id = $2 AND id = $3`
export const TOUCH_INTERVAL_MILLIS = 60_000

/** MembershipsRepository's list without a search nor a cursor: `$1` the organization, `$2` the page size + 1. */
export const listMembers =
  `SELECT m.id, m.organization_id, m.user_id, u.name, u.email, m.role, m.created_at, m.removed_at, m.suspended_at FROM memberships m LEFT JOIN users u ON u.id = m.user_id WHERE (m.organization_id = $1 AND m.removed_at IS NULL AND true AND true AND true) ORDER BY m.id ASC LIMIT $2`

/** ApiKeysRepository.listRows without a cursor: `$1` the organization, `$2` the page size + 1. */
export const listApiKeys = `SELECT * FROM api_keys WHERE organization_id = $1 AND true
            ORDER BY id DESC LIMIT $2`

/** TeamsRepository's insert (`sql.insert(row)`), in the transaction of `POST /v1/teams`. */
export const insertTeam =
  `INSERT INTO teams ("id","organization_id","name","created_by_membership_id","external_key","scim_connection_id","created_at","updated_at") VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`

/** TeamsRepository's read of one team with its members: `$1` the organization, `$2` the team. */
export const selectTeam = `
      SELECT t.id, t.organization_id, t.name, t.created_by_membership_id AS created_by_org_membership_id,
             t.external_key, t.scim_connection_id, t.created_at, t.updated_at,
             ARRAY(SELECT tm.membership_id FROM team_members tm
                   WHERE tm.organization_id = t.organization_id AND tm.team_id = t.id ORDER BY tm.membership_id) AS member_ids
      FROM teams t WHERE t.organization_id = $1 AND t.id = $2`

/** Members.withLock, first: the organization's row, so that changes of its members (and its last owner) serialize. */
export const lockOrganization = `SELECT id FROM organizations WHERE id = $1 FOR UPDATE`

/** Members.withLock, then: the caller's and the target's memberships, with the number of owners (`$1`, `$2` the organization). */
export const lockedMembers = `
            SELECT m.id, m.organization_id, m.user_id, u.name, u.email, m.role, m.created_at, m.removed_at, m.suspended_at,
                   (SELECT count(*)::int FROM memberships o
                    WHERE o.organization_id = $1 AND o.role = 'owner' AND o.removed_at IS NULL) AS owners
            FROM memberships m LEFT JOIN users u ON u.id = m.user_id
            WHERE m.organization_id = $2 AND m.id IN ($3, $4) AND m.removed_at IS NULL`

/** MembershipsRepository.changeRole: `$1` the role, `$2` now, `$3` the organization, `$4` the membership. */
export const changeRole = `UPDATE memberships SET role = $1, updated_at = $2
            WHERE organization_id = $3 AND id = $4`

/** A time-ordered id as orgplane's `makeId(prefix)`: 10 characters of milliseconds, 16 random, Crockford base32. */
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
export const makeId = (prefix: string) => {
  let time = Date.now()
  let head = ""
  for (let i = 0; i < 10; i++) {
    head = ALPHABET[time % 32] + head
    time = Math.floor(time / 32)
  }
  const random = new Uint8Array(16)
  crypto.getRandomValues(random)
  return `${prefix}_${head}${Array.from(random, (byte) => ALPHABET[byte & 31]).join("")}`
}

// Cursors as orgplane's Keyset makes them: base64url(the sort key's parts joined with NUL) "." base64url(MAC), the MAC
// an HMAC-SHA256 (first 16 bytes) under the instance's cursor key of the list's name, its filters and the payload.

/** The instance's cursor key (base64 in `value`): read once, at start, as orgplane reads it. */
export const cursorKey = `SELECT value FROM instance_settings WHERE key = 'cursor_key'`

/** The filters a cursor is bound to: the query without its position and page size (booleans as orgplane decodes them). */
const bindingOf = (query: URLSearchParams) =>
  JSON.stringify(
    [...query]
      .filter(([name]) => name !== "cursor" && name !== "limit")
      .map(([name, value]) => [name, value === "true" ? true : value === "false" ? false : value])
      .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0))
  )

/** The cursor after the sort key `parts` of list `list` read with `query`. */
export const signCursor = (key: Buffer, list: string, query: URLSearchParams, parts: ReadonlyArray<string>) => {
  const payload = Buffer.from(parts.join("\u0000"), "utf8").toString("base64url")
  const mac = createHmac("sha256", key).update(`${list}\n${bindingOf(query)}\n${payload}`).digest().subarray(0, 16)
  return `${payload}.${mac.toString("base64url")}`
}

/**
 * What orgplane runs for each endpoint of requests.ts, in order (as `pnpm bench --requests --check-sql` sees it on
 * the wire); the API key's last use (`touchApiKey`) is written off the request path, once a minute, and not listed.
 */
export const expected: Record<string, ReadonlyArray<string>> = {
  me: [sessionCaller],
  members: [sessionCaller, listMembers],
  "api-keys": [apiKeyCaller, listApiKeys],
  teams: [sessionCaller, "BEGIN", insertTeam, selectTeam, insertAuditEvent, "COMMIT"],
  role: [sessionCaller, "BEGIN", lockOrganization, lockedMembers, changeRole, insertAuditEvent, "COMMIT"]
}

/**
 * The baseline and Hono prepare each statement once per connection and run it by name, as orgplane does since it
 * prepares its statements (`--check-sql` says whether the server measured does); ORGPLANE_BENCH_PREPARED=0, for an
 * older checkout: unnamed statements, parsed and planned on every run.
 */
export const PREPARED = process.env.ORGPLANE_BENCH_PREPARED !== "0"

const names = new Map<string, string>()

/** A statement as `pg`'s query config: named (prepared once per connection) unless ORGPLANE_BENCH_PREPARED=0. */
export const run = (text: string): QueryConfig => {
  if (!PREPARED) return { text }
  let name = names.get(text)
  if (name === undefined) names.set(text, name = `bench_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`)
  return { name, text }
}

/** The caller's row of `sessionCaller` as orgplane answers `GET /v1/me` (the organization and membership null without one). */
export const meBody = (caller: { readonly [column: string]: unknown }) => ({
  user: { id: caller.user_id, email: caller.user_email, name: caller.user_name, createdAt: caller.user_created_at },
  organization: caller.membership_id === null ? null : {
    id: caller.organization_id,
    name: caller.organization_name,
    plan: caller.organization_plan,
    provisional: caller.organization_provisional,
    createdAt: caller.organization_created_at
  },
  membership: caller.membership_id === null ? null : {
    id: caller.membership_id,
    organizationId: caller.organization_id,
    userId: caller.user_id,
    role: caller.role,
    createdAt: caller.membership_created_at
  }
})

/** `work` in one transaction on one connection of `pool`: COMMIT after it, ROLLBACK when it throws. */
export const inTransaction = async <A>(pool: Pool, work: (client: PoolClient) => Promise<A>) => {
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    const result = await work(client)
    await client.query("COMMIT")
    return result
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}

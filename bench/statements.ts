/**
 * orgplane's SQL on the request path measured by `pnpm bench --requests` (requests.ts), as it reaches the database,
 * byte for byte: copied from what orgplane sends (identity/SessionsRepository.ts, identity/ApiKeysRepository.ts,
 * identity/MembershipsRepository.ts, members/MembershipsRepository.ts, teams/TeamsRepository.ts,
 * platform/AuditRecorder.ts, the check at commit of platform/Authority.ts), and held to it on the wire by
 * `pnpm bench --requests --verify` (sql-trace.ts: every server's statements, parameter types and protocol messages
 * for one request of each endpoint, against orgplane's). The baseline (requests-baseline.ts, routed from baseline.ts)
 * and the Hono server (hono.ts) run these texts with the same parameters, in orgplane's order and transactions, and
 * prepare them as `@effect/sql-pg` 4 does (`run`). Imports no orgplane code.
 */
import { createDecipheriv, createHash, createHmac } from "node:crypto"
import pg, { type Pool, type PoolClient, type QueryConfig } from "pg"

import { insertAuditEvent } from "./audit-baseline.js"

export { auditParameters, insertAuditEvent } from "./audit-baseline.js"

/** sha256 hex of a session token or an API key, as orgplane's Crypto.hashToken. */
export const hashToken = (secret: string) => createHash("sha256").update(secret).digest("hex")

/** orgplane's pool: ORGPLANE_DB_POOL_SIZE, 10 by default (platform/Config.ts). */
export const POOL_SIZE = Number(process.env.ORGPLANE_DB_POOL_SIZE ?? 10)

/** A session is refused once unused this long (ORGPLANE_SESSION_IDLE_TIMEOUT, 7 days by default). */
export const SESSION_IDLE_MILLIS = 7 * 24 * 3600 * 1000

/** SessionsRepository.resolve: `$1` the token's hash, `$2` now, `$3` now less the idle timeout. */
export const sessionCaller = `SELECT s.id AS session_id, s.created_at AS session_created_at, s.last_used_at AS session_last_used_at,
              u.id AS user_id, u.email AS user_email, u.name AS user_name, u.created_at AS user_created_at,
      m.id AS membership_id, m.organization_id, m.role, m.created_at AS membership_created_at,
      o.name AS organization_name, o.plan AS organization_plan, o.provisional AS organization_provisional,
      o.created_at AS organization_created_at, "s".sso_connection_id, "s".authenticated_organization_id, p.require_sso, p.owners_password_fallback,
      CASE WHEN p.require_sso THEN (SELECT cd.connection_id FROM sso_connection_domains cd
       WHERE cd.organization_id = m.organization_id AND cd.active AND cd.domain = lower(substring(u.email from '@([^@]*)$'))
       LIMIT 1) END AS managed_by
            FROM sessions s
            JOIN users u ON u.id = s.user_id AND u.disabled_at IS NULL AND u.deleted_at IS NULL
            LEFT JOIN LATERAL (
              SELECT mm.* FROM memberships mm JOIN organizations mo ON mo.id = mm.organization_id AND mo.deleted_at IS NULL
              WHERE mm.user_id = s.user_id AND mm.removed_at IS NULL AND mm.suspended_at IS NULL
              ORDER BY (mm.organization_id IS NOT DISTINCT FROM s.active_organization_id) DESC, mm.id
              LIMIT 1
            ) m ON true
            LEFT JOIN organizations o ON o.id = m.organization_id
            LEFT JOIN sso_policies p ON p.organization_id = m.organization_id
            WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2 AND COALESCE(s.last_used_at, s.created_at) > $3`

/** ApiKeysRepository.resolve: `$1` the key's hash, `$2` now. */
export const apiKeyCaller = `SELECT k.id AS api_key_id, k.organization_id AS key_organization_id, k.last_used_at, k.scopes, u.id AS user_id, u.email AS user_email, u.name AS user_name, u.created_at AS user_created_at,
      m.id AS membership_id, m.organization_id, m.role, m.created_at AS membership_created_at,
      o.name AS organization_name, o.plan AS organization_plan, o.provisional AS organization_provisional,
      o.created_at AS organization_created_at,
                   "k".sso_connection_id, "k".authenticated_organization_id, p.require_sso, p.owners_password_fallback,
      CASE WHEN p.require_sso THEN (SELECT cd.connection_id FROM sso_connection_domains cd
       WHERE cd.organization_id = k.organization_id AND cd.active AND cd.domain = lower(substring(u.email from '@([^@]*)$'))
       LIMIT 1) END AS managed_by
            FROM api_keys k
            JOIN memberships m ON m.organization_id = k.organization_id AND m.id = k.membership_id
                               AND m.removed_at IS NULL AND m.suspended_at IS NULL AND m.user_id IS NOT NULL
            JOIN users u ON u.id = m.user_id AND u.disabled_at IS NULL AND u.deleted_at IS NULL
            JOIN organizations o ON o.id = k.organization_id AND o.deleted_at IS NULL
            LEFT JOIN sso_policies p ON p.organization_id = k.organization_id
            WHERE k.key_hash = $1 AND (k.expires_at IS NULL OR k.expires_at > $2)`

/**
 * The credential's last use (Authentication.ts's touches): off the request path (the response does not wait for it),
 * at most once a minute per credential. `$1` now, then the session, or the key's organization and id.
 */
export const touchSession = `UPDATE sessions SET last_used_at = $1 WHERE id = $2 AND revoked_at IS NULL`
export const touchApiKey = `UPDATE api_keys SET last_used_at = $1 WHERE organization_id = $2 AND id = $3`
export const TOUCH_INTERVAL_MILLIS = 60_000

/**
 * Records a credential's last use as `Authentication.ts` does: off the request path, at most once a minute per
 * credential (the time it last recorded, kept per process, or the row's own if later).
 */
export const toucher = (pool: Pool) => {
  const touched = new Map<string, number>()
  return (id: string, lastUsed: Date | null, at: Date, write: QueryConfig) => {
    const last = Math.max(lastUsed?.getTime() ?? 0, touched.get(id) ?? 0)
    if (at.getTime() - last <= TOUCH_INTERVAL_MILLIS) return
    touched.set(id, at.getTime())
    pool.query(write).catch((error) => console.error(error))
  }
}

/** MembershipsRepository's list without a search nor a cursor: `$1` the organization, `$2` the page size + 1. */
export const listMembers = `SELECT m.id, m.organization_id, m.user_id, u.name, u.email, m.role, m.created_at, m.removed_at, m.suspended_at FROM memberships m LEFT JOIN users u ON u.id = m.user_id WHERE (m.organization_id = $1 AND m.removed_at IS NULL AND true AND true AND true) ORDER BY m.id ASC LIMIT $2`

/** ApiKeysRepository.listRows without a cursor: `$1` the organization, `$2` the page size + 1. */
export const listApiKeys = `SELECT * FROM api_keys WHERE organization_id = $1 AND true
            ORDER BY id DESC LIMIT $2`

/** TeamsRepository's insert (`sql.insert(row)`), in the transaction of `POST /v1/teams`. */
export const insertTeam = `INSERT INTO teams ("id","organization_id","name","created_by_membership_id","external_key","scim_connection_id","created_at","updated_at") VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`

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

/**
 * The check at commit of every write (platform/Authority.ts, MembershipsRepository.standing), last before COMMIT: the
 * caller's role (FOR SHARE), person and session (FOR SHARE) read again. `$1` the organization, `$2` the membership,
 * `$3` the person, `$4` the session, `$5` now.
 */
export const sessionStanding = `SELECT (SELECT m.role FROM memberships m
           WHERE m.organization_id = $1 AND m.id = $2 AND m.removed_at IS NULL AND m.suspended_at IS NULL
           FOR SHARE) AS role,
          EXISTS (SELECT 1 FROM users u WHERE u.id = $3 AND u.disabled_at IS NULL AND u.deleted_at IS NULL FOR SHARE) AS person,
          EXISTS (SELECT 1 FROM sessions s
                      WHERE s.id = $4 AND s.revoked_at IS NULL AND s.expires_at > $5
                      FOR SHARE) AS credential`

/** The same for an API key (FOR KEY SHARE): `$1` the organization, `$2` the membership, `$3` the person, `$4` the organization, `$5` the key, `$6` the membership, `$7` now. */
export const apiKeyStanding = `SELECT (SELECT m.role FROM memberships m
           WHERE m.organization_id = $1 AND m.id = $2 AND m.removed_at IS NULL AND m.suspended_at IS NULL
           FOR SHARE) AS role,
          EXISTS (SELECT 1 FROM users u WHERE u.id = $3 AND u.disabled_at IS NULL AND u.deleted_at IS NULL FOR SHARE) AS person,
          EXISTS (SELECT 1 FROM api_keys k
                      WHERE k.organization_id = $4 AND k.id = $5
                        AND k.membership_id = $6 AND (k.expires_at IS NULL OR k.expires_at > $7)
                      FOR KEY SHARE) AS credential`

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

// The cursor key as orgplane keeps it (platform/InstanceSecrets.ts): encrypted in `instance_secrets` with the
// instance's encryption key (ORGPLANE_ENCRYPTION_KEYS, AES-256-GCM, `v2:<kid>:<iv>:<tag>:<ciphertext>`, bound to its
// place), read and opened once at start. Cursors as orgplane's Keyset makes them: base64url(the sort key's parts
// joined with NUL) "." base64url(MAC), the MAC an HMAC-SHA256 (first 16 bytes) under the cursor key of the list's
// name, its filters and the payload.

/** The stored cursor key. */
export const cursorKey = `SELECT ciphertext FROM instance_secrets WHERE name = $1`

/** The cursor key opened with the keys of ORGPLANE_ENCRYPTION_KEYS (`kid:base64,...`), as Crypto.ts's keyring opens it. */
export const openCursorKey = (ciphertext: string, keys: string = process.env.ORGPLANE_ENCRYPTION_KEYS ?? ""): Buffer => {
  const [version, kid, iv, tag, body] = ciphertext.split(":")
  const entry = keys.split(",").map((part) => part.trim()).find((part) => part.slice(0, part.indexOf(":")) === kid)
  if (version !== "v2" || entry === undefined || iv === undefined || tag === undefined || body === undefined) {
    throw new Error(`the cursor key is not a v2 ciphertext of a key in ORGPLANE_ENCRYPTION_KEYS (${version}:${kid})`)
  }
  const decipher = createDecipheriv("aes-256-gcm", Buffer.from(entry.slice(entry.indexOf(":") + 1), "base64"), Buffer.from(iv, "base64url"))
  decipher.setAAD(Buffer.from(JSON.stringify(["orgplane-secret", "v2", "instance_secrets", "ciphertext", "", "cursor_key"]), "utf8"))
  decipher.setAuthTag(Buffer.from(tag, "base64url"))
  return Buffer.from(Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8"), "base64")
}

/** Reads and opens the cursor key once (orgplane reads it at start; the baselines may start before it has migrated). */
export const cursorKeyOf = (pool: Pool) => {
  let key: Promise<Buffer> | undefined
  return () => key ??= pool.query(cursorKey, ["cursor_key"]).then((result) => openCursorKey(result.rows[0].ciphertext))
}

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
 * What orgplane runs for each endpoint of requests.ts, in order (as `--verify` sees it on the wire); the credential's
 * last use (`touchSession`, `touchApiKey`) is written off the request path, once a minute, and not listed.
 */
export const expected: Record<string, ReadonlyArray<string>> = {
  me: [sessionCaller],
  members: [sessionCaller, listMembers],
  "api-keys": [sessionCaller, listApiKeys],
  teams: [sessionCaller, "BEGIN", insertTeam, selectTeam, insertAuditEvent, sessionStanding, "COMMIT"],
  role: [sessionCaller, "BEGIN", lockOrganization, lockedMembers, changeRole, insertAuditEvent, sessionStanding, "COMMIT"],
  "me:key": [apiKeyCaller],
  "members:key": [apiKeyCaller, listMembers],
  "api-keys:key": [apiKeyCaller, listApiKeys],
  "teams:key": [apiKeyCaller, "BEGIN", insertTeam, selectTeam, insertAuditEvent, apiKeyStanding, "COMMIT"],
  "role:key": [apiKeyCaller, "BEGIN", lockOrganization, lockedMembers, changeRole, insertAuditEvent, apiKeyStanding, "COMMIT"]
}

/**
 * The parameter types `@effect/sql-pg` 4 names in a statement's Parse (PgConnection.ts's inferParameter): a string,
 * null or undefined untyped (0: the backend infers it from the statement), a boolean `bool`, an integer `int4` (`int8`
 * past 32 bits), another number `float8`, a Date `timestamptz`.
 */
const oidOf = (value: unknown): number =>
  value === null || value === undefined || typeof value === "string"
    ? 0
    : typeof value === "boolean"
    ? 16
    : typeof value === "number"
    ? Number.isInteger(value) ? (value >= -2147483648 && value <= 2147483647 ? 23 : 20) : 701
    : value instanceof Date
    ? 1184
    : 0

/** The statement names this process gave, by text. */
const names = new Map<string, string>()

/**
 * A statement as `pg` runs it the way `@effect/sql-pg` 4 does: named, so that it is parsed and planned once per
 * connection and bound by name after that (BEGIN and COMMIT too: its `prepareTransactionControls`), its Parse naming
 * the parameter types `@effect/sql-pg` infers from the values. `pg` takes a Parse's types from the query's `types`,
 * where it also looks for its row parsers: an array of the OIDs that carries `pg-types`' `getTypeParser`.
 * What is left between the two on the wire: `pg` sends a Describe of the portal with every run (a RowDescription back),
 * `@effect/sql-pg` only with the Parse; `--verify` prints both.
 */
export const run = (text: string, params: ReadonlyArray<unknown> = []): QueryConfig => {
  let name = names.get(text)
  if (name === undefined) names.set(text, name = `bench_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`)
  const types = Object.assign(params.map(oidOf), { getTypeParser: pg.types.getTypeParser })
  // `types` is read by pg as its parsers and by pg-protocol as the Parse's OIDs; QueryConfig types it as the former.
  return { name, text, values: [...params], types }
}

/** A key's scopes as orgplane answers them (stored space-separated; null: its role alone). */
const scopesOf = (stored: unknown) => stored === null ? null : String(stored).split(" ").filter((scope) => scope !== "")

/** The caller's row (of either credential's statement) as orgplane answers `GET /v1/me`. */
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
  },
  // What authenticated the request (Accounts.ts's `me`): the session, or the key with its scopes; never narrowed here.
  credential: typeof caller.api_key_id === "string"
    ? { type: "api_key", id: caller.api_key_id, scopes: scopesOf(caller.scopes), readOnly: false, actions: actionsOf(caller.role, scopesOf(caller.scopes)) }
    : { type: "session", id: caller.session_id, scopes: null, readOnly: false, actions: actionsOf(caller.role, null) }
})

/**
 * The policy table, each action with its lowest role in the table's order, as the harness passes it
 * (`ORGPLANE_BENCH_POLICY`, run.ts, from @orgplane/schema's `Policy`): what `GET /v1/me`'s `credential.actions` is
 * computed from, as orgplane's `credentialAllows` computes it.
 */
const policyTable = (() => {
  const parsed: unknown = JSON.parse(process.env.ORGPLANE_BENCH_POLICY ?? "[]")
  const rows = Array.isArray(parsed) ? parsed : []
  return rows.flatMap((row: unknown) =>
    Array.isArray(row) && typeof row[0] === "string" && typeof row[1] === "string" ? [[row[0], row[1]] as const] : []
  )
})()

/** A role's actions, the same for every session of it (and every key made before scopes). */
const roleActions = new Map<string, ReadonlyArray<string>>()

/** The actions a credential may take: its role's, within its scopes when it has any; none without an organization. */
const actionsOf = (role: unknown, scopes: ReadonlyArray<string> | null): ReadonlyArray<string> => {
  if (typeof role !== "string") return []
  const rank = RANK[role] ?? 0
  if (scopes === null) {
    let found = roleActions.get(role)
    if (found === undefined) roleActions.set(role, found = policyTable.filter(([, lowest]) => rank >= (RANK[lowest] ?? 99)).map(([action]) => action))
    return found
  }
  return policyTable.filter(([action, lowest]) => rank >= (RANK[lowest] ?? 99) && scopes.includes(action)).map(([action]) => action)
}

/** The role each action needs (schema/Policy.ts), for the actions of these endpoints. */
export const ACTION_ROLE = {
  "members.read": "member",
  "members.changeRole": "admin",
  "teams.manage": "admin",
  "apiKeys.manage": "admin"
} as const
export type Action = keyof typeof ACTION_ROLE

const RANK: Record<string, number> = { member: 1, admin: 2, owner: 3 }

/** Whether `role` allows `action` (Policy.ts's `allows`). */
export const roleAllows = (role: string | null, action: Action) => role !== null && (RANK[role] ?? 0) >= RANK[ACTION_ROLE[action]]!

/** Whether a caller (either credential's row) may take `action`: its role, and a key's scopes (a space-separated list; null: its role alone). */
export const can = (caller: { readonly role: unknown; readonly scopes?: unknown }, action: Action) =>
  roleAllows(typeof caller.role === "string" ? caller.role : null, action) &&
  (caller.scopes === undefined || caller.scopes === null || String(caller.scopes).split(" ").includes(action))

/**
 * The check at commit's statement and parameters for a caller of either credential (Authority.ts): the session's or
 * the key's standing, then the judgement: undefined when the write may commit, else the status and body of the refusal.
 */
export const standing = (caller: { readonly [column: string]: unknown }, at: Date): QueryConfig =>
  caller.api_key_id === undefined
    ? run(sessionStanding, [caller.organization_id, caller.membership_id, caller.user_id, caller.session_id, at])
    : run(apiKeyStanding, [caller.organization_id, caller.membership_id, caller.user_id, caller.organization_id, caller.api_key_id, caller.membership_id, at])

export const judge = (row: { readonly role: string | null; readonly person: boolean; readonly credential: boolean } | undefined, granted: ReadonlyArray<Action>): readonly [number, unknown] | undefined => {
  if (row === undefined || !(row.person && row.credential)) return [401, { error: "unauthorized", reason: "credential_revoked" }]
  if (row.role === null) return [403, { reason: "membership_removed" }]
  for (const action of granted) if (!roleAllows(row.role, action)) return [403, { reason: "insufficient_role" }]
  return undefined
}

/** `work` in one transaction on one connection of `pool`, BEGIN and COMMIT prepared as orgplane's: COMMIT after it, ROLLBACK when it throws. */
export const inTransaction = async <A>(pool: Pool, work: (client: PoolClient) => Promise<A>) => {
  const client = await pool.connect()
  try {
    await client.query(run("BEGIN"))
    const result = await work(client)
    await client.query(run("COMMIT"))
    return result
  } catch (error) {
    await client.query(run("ROLLBACK")).catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}

/** A row of `listApiKeys` as orgplane answers it (ApiKeysRepository's toApiKey; the scopes stored space-separated). */
export const apiKeyBody = (row: { readonly [column: string]: unknown }) => ({
  id: String(row.id),
  name: row.name,
  prefix: row.prefix,
  createdByOrgMembershipId: row.membership_id,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  lastUsedAt: row.last_used_at,
  scopes: scopesOf(row.scopes),
  parentApiKeyId: row.parent_api_key_id
})

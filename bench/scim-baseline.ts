/**
 * The baseline's SCIM routes (bench/scim.ts measures them beside orgplane's): under `/scim/v2/{connectionId}`, a
 * token authenticated by its hash in one statement, then orgplane's own statements, copied from its repositories
 * (packages/server/src/scim/*Repository.ts, Filter.ts, DirectoryEvents.ts, identity's and teams' repositories) and
 * run in the same order with the same parameters: `GET /Users` (a `userName eq` or `externalId eq` filter, or none,
 * with `startIndex` and `count`), `POST /Users` and `POST /Groups` (members inline), each write one transaction with
 * its event row and, last before COMMIT, the audit event orgplane's AuditRecorder writes for it (audit-baseline.ts:
 * `scim.user.provision` or `scim.group.provision`, actor the connection, credential the token, targets the connection
 * and, for a group, the group made; bench/scim.ts checks the shapes agree). It reads only what the bench sends (no schema checks, no other filters, no PATCH); it answers
 * the same JSON. Imports no orgplane code.
 */
import { createHash, randomBytes, scrypt } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import type pg from "pg"
import { auditParameters, insertAuditEvent } from "./audit-baseline.js"
import { date, object, type Row, text } from "./rows.js"
import { inTransaction } from "./statements.js"

type Reply = readonly [status: number, body: unknown]

export const UserSchema = "urn:ietf:params:scim:schemas:core:2.0:User"
export const EnterpriseUserSchema = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
export const GroupSchema = "urn:ietf:params:scim:schemas:core:2.0:Group"
const ListResponse = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
const ErrorSchema = "urn:ietf:params:scim:api:messages:2.0:Error"

/** The cost the benchmarked orgplane hashes passwords with (bench/server.ts's `passwordCost`). */
const PASSWORD_COST = 10

const userColumns = `u.organization_id, u.membership_id, u.connection_id, u.user_id, u.user_name, u.external_id, u.active,
  u.display_name, u.emails, u.resource, u.version, u.created_at, u.updated_at`

/**
 * orgplane's page of Users (UsersRepository.list) with the condition Filter.ts makes of `userName eq` (the
 * case-insensitive `lower(u.user_name)`) or `externalId eq` (case-exact), or none (`true`). Parameters: organization,
 * connection, the value (when filtered), offset, limit.
 */
export const userListStatement = (filter: "userName" | "externalId" | undefined) => {
  const condition = filter === "userName" ? "lower(u.user_name) = $3" : filter === "externalId" ? "u.external_id = $3" : "true"
  const [offset, limit] = filter === undefined ? ["$3", "$4"] : ["$4", "$5"]
  return `SELECT ${userColumns}, count(*) OVER ()::int AS total FROM scim_users u
          WHERE u.organization_id = $1 AND u.connection_id = $2
          AND u.deleted_at IS NULL AND (${condition}) ORDER BY u.created_at, u.membership_id OFFSET ${offset} LIMIT ${limit}`
}

/** ProtocolAuthentication.ts's one statement. */
const byToken = `
  SELECT t.id, t.organization_id, t.connection_id, t.last_used_at, o.plan
  FROM scim_tokens t JOIN organizations o ON o.id = t.organization_id
  WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > $2)`

/** Ids as orgplane makes them: a prefix and 26 base32 characters (random here, not time-ordered). */
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
const newId = (prefix: string) => {
  const bytes = randomBytes(25)
  return `${prefix}_0${Array.from(bytes, (byte) => ALPHABET[byte & 31]).join("")}`
}

const scimError = (status: number, detail: string, scimType?: string): Reply =>
  [status, { schemas: [ErrorSchema], status: String(status), ...(scimType === undefined ? {} : { scimType }), detail }]

const toScimUser = (row: Row, base: string) => {
  const { [EnterpriseUserSchema]: enterprise, ...core } = object(row.resource)
  return {
    schemas: enterprise === undefined ? [UserSchema] : [UserSchema, EnterpriseUserSchema],
    id: row.membership_id,
    ...(row.external_id === null ? {} : { externalId: row.external_id }),
    userName: row.user_name,
    ...core,
    active: row.active,
    ...(enterprise === undefined ? {} : { [EnterpriseUserSchema]: enterprise }),
    meta: {
      resourceType: "User",
      created: date(row.created_at).toISOString(),
      lastModified: date(row.updated_at).toISOString(),
      location: `${base}/Users/${row.membership_id}`,
      version: `W/"${row.version}"`
    }
  }
}

/** The filters the bench sends: `userName eq "…"` or `externalId eq "…"` (quotes escaped as JSON). */
const readFilter = (text: string | null): { readonly on: "userName" | "externalId"; readonly value: string } | undefined | "other" => {
  if (text === null) return undefined
  const match = /^\s*(userName|externalId)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i.exec(text)
  if (match === null) return "other"
  return { on: match[1]!.toLowerCase() === "username" ? "userName" : "externalId", value: JSON.parse(`"${match[2]}"`) }
}

const integer = (text: string | null, fallback: number, minimum: number, maximum: number) => {
  if (text === null || text === "") return fallback
  const value = Number(text)
  return Number.isInteger(value) ? Math.min(Math.max(value, minimum), maximum) : undefined
}

export const scimRoutes = (pool: pg.Pool) => {
  const hashPassword = (password: string) =>
    new Promise<string>((resolve, reject) => {
      const salt = randomBytes(16)
      const N = 2 ** PASSWORD_COST
      scrypt(password.normalize("NFKC"), salt, 32, { N, r: 8, p: 1, maxmem: 256 * N * 8 + 1024 * 1024 }, (error, hash) =>
        error === null
          ? resolve(["scrypt", PASSWORD_COST, 8, 1, salt.toString("base64"), hash.toString("base64")].join("$"))
          : reject(error))
    })

  /** One hash for every account made without a password, drawn once, as orgplane's Crypto.unusablePasswordHash. */
  let unusable: Promise<string> | undefined
  const unusablePasswordHash = () => (unusable ??= hashPassword(`unusable_${randomBytes(32).toString("base64url")}`))

  /** One transaction on one connection of the pool; rolled back when `body` throws. */
  const transaction = <A>(body: (client: pg.PoolClient) => Promise<A>) => inTransaction(pool, body)


  /** DirectoryEvents.record: the event row and the connection's health, in the write's transaction. */
  const recordEvent = async (
    client: pg.PoolClient,
    caller: Row,
    request: { readonly method: string; readonly path: string; readonly resourceType: string },
    status: number,
    resourceId: string
  ) => {
    const at = new Date()
    await client.query(
      `INSERT INTO scim_events (id, organization_id, connection_id, token_id, method, path, resource_type,
         resource_id, status, scim_type, detail, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [newId("sce"), caller.organization_id, caller.connection_id, caller.id, request.method, request.path, request.resourceType,
        resourceId, status, null, null, at]
    )
    await client.query(
      `UPDATE scim_connections SET last_success_at = $1, failures_since_success = 0 WHERE organization_id = $2 AND id = $3`,
      [at, caller.organization_id, caller.connection_id]
    )
  }

  /** How the request came in, as the audit event says it. */
  interface Via {
    readonly ip: string | null
    readonly userAgent: string | null
  }

  /** The audit event of a directory's write (platform/AuditRecorder.ts), in its transaction, before COMMIT. */
  const recordAudit = (client: pg.PoolClient, caller: Row, via: Via, action: string, ...made: ReadonlyArray<{ readonly type: string; readonly id: string }>) =>
    client.query(insertAuditEvent, auditParameters({
      organizationId: text(caller.organization_id),
      action,
      category: "change",
      actor: { type: "scim", id: text(caller.connection_id), membershipId: null, label: null, credentialId: text(caller.id) },
      ip: via.ip,
      userAgent: via.userAgent,
      targets: [{ type: "scim_connection", id: text(caller.connection_id) }, ...made]
    }))

  const listUsers = async (caller: Row, url: URL, base: string): Promise<Reply> => {
    const filter = readFilter(url.searchParams.get("filter"))
    if (filter === "other") return scimError(400, "The baseline reads only userName eq and externalId eq.", "invalidFilter")
    const startIndex = integer(url.searchParams.get("startIndex"), 1, 1, Number.MAX_SAFE_INTEGER)
    const count = integer(url.searchParams.get("count"), 100, 0, 1000)
    if (startIndex === undefined || count === undefined || count === 0) return scimError(400, "startIndex and count must be integers.", "invalidValue")
    const value = filter === undefined ? [] : [filter.on === "userName" ? filter.value.toLowerCase() : filter.value]
    const { rows } = await pool.query(
      userListStatement(filter?.on),
      [caller.organization_id, caller.connection_id, ...value, startIndex - 1, count]
    )
    let total = rows[0]?.total ?? 0
    if (rows.length === 0 && startIndex > 1) {
      const counted = await pool.query(
        `SELECT count(*)::int AS total FROM scim_users u WHERE u.organization_id = $1 AND u.connection_id = $2
           AND u.deleted_at IS NULL AND (${filter === undefined ? "true" : filter.on === "userName" ? "lower(u.user_name) = $3" : "u.external_id = $3"})`,
        [caller.organization_id, caller.connection_id, ...value]
      )
      total = counted.rows[0].total
    }
    return [200, {
      schemas: [ListResponse],
      totalResults: total,
      startIndex,
      itemsPerPage: rows.length,
      Resources: rows.map((row) => toScimUser(row, base))
    }]
  }

  /** Users.create: the person found by email or made, a membership, the SCIM User and the event, under the lock. */
  const createUser = async (caller: Row, body: Row, base: string, path: string, via: Via): Promise<Reply> => {
    const userName = body.userName
    if (typeof userName !== "string" || userName.trim() === "") return scimError(400, "userName is required.", "invalidValue")
    const externalId = typeof body.externalId === "string" && body.externalId !== "" ? body.externalId : null
    const emails = Array.isArray(body.emails) ? body.emails : []
    const email = (emails.find((item: Row) => item.primary === true) ?? emails[0])?.value ?? userName
    const active = body.active !== false
    const resource: Record<string, unknown> = {}
    for (const key of ["name", "displayName", "title", "emails", EnterpriseUserSchema]) if (body[key] !== undefined) resource[key] = body[key]
    const name = String(body.displayName ?? email).slice(0, 200)
    const { organization_id: organizationId, connection_id: connectionId } = caller
    const passwordHash = await unusablePasswordHash()
    return transaction(async (client): Promise<Reply> => {
      const connection = await client.query(`SELECT default_role FROM scim_connections WHERE organization_id = $1 AND id = $2`, [organizationId, connectionId])
      if (connection.rows.length === 0) return scimError(404, "No such SCIM connection.")
      await client.query(`SELECT id FROM organizations WHERE id = $1 FOR UPDATE`, [organizationId])
      const clash = await client.query(
        `SELECT u.membership_id, u.user_name, u.external_id FROM scim_users u
         WHERE u.organization_id = $1 AND u.connection_id = $2 AND u.deleted_at IS NULL
           AND (lower(u.user_name) = $3 ${externalId === null ? "" : "OR u.external_id = $4"}) LIMIT 1`,
        [organizationId, connectionId, userName.toLowerCase(), ...(externalId === null ? [] : [externalId])]
      )
      if (clash.rows.length > 0) return scimError(409, "A User of this connection has this userName or externalId.", "uniqueness")
      const at = new Date()
      let userId = (await client.query(`SELECT * FROM users WHERE lower(email) = lower($1)`, [email])).rows[0]?.id as string | undefined
      if (userId === undefined) {
        userId = newId("usr")
        await client.query(
          `INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)`,
          [userId, email, name, passwordHash, at, at]
        )
      }
      const existing = await client.query(
        `SELECT m.id, m.role FROM memberships m LEFT JOIN users u ON u.id = m.user_id
         WHERE m.organization_id = $1 AND m.user_id = $2 AND m.removed_at IS NULL`,
        [organizationId, userId]
      )
      if (existing.rows.length > 0) return scimError(409, `${email} is already a member (the baseline links no one).`, "uniqueness")
      const membershipId = newId("om")
      await client.query(
        `INSERT INTO memberships (id, organization_id, user_id, role, created_at, updated_at, removed_at, suspended_at)
         VALUES ($1, $2, $3, $4, $5, $5, NULL, NULL)`,
        [membershipId, organizationId, userId, connection.rows[0].default_role, at]
      )
      // DirectoryMembers.restore, as orgplane runs it for an active User: the lock again, then the (no-op) restore.
      await client.query(`SELECT id FROM organizations WHERE id = $1 FOR UPDATE`, [organizationId])
      await client.query(
        `UPDATE memberships SET suspended_at = NULL, updated_at = $1 WHERE organization_id = $2 AND id = $3 AND removed_at IS NULL RETURNING id`,
        [at, organizationId, membershipId]
      )
      const inserted = await client.query(
        `INSERT INTO scim_users (organization_id, membership_id, connection_id, user_id, user_name, external_id, active,
           display_name, emails, resource, version, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, 1, $11, $11)
         RETURNING ${userColumns.replace(/u\./g, "")}`,
        [organizationId, membershipId, connectionId, userId, userName, externalId, active,
          typeof body.displayName === "string" ? body.displayName : null, JSON.stringify(emails), JSON.stringify(resource), at]
      )
      await recordEvent(client, caller, { method: "POST", path, resourceType: "User" }, 201, membershipId)
      // As orgplane's: its event of a provisioned User names the connection, the member and the person.
      await recordAudit(client, caller, via, "scim.user.provision", { type: "member", id: membershipId }, { type: "user", id: userId })
      return [201, toScimUser(inserted.rows[0], base)]
    })
  }

  const groupColumns = `g.id, g.organization_id, g.connection_id, g.display_name, g.external_id, g.team_id, g.version,
    g.created_at, g.updated_at`

  /** GroupsRepository's members as JSON: `[{value, display}]` in id order. */
  const groupMembers = `SELECT (SELECT coalesce(json_agg(json_build_object('value', gm.membership_id,
      'display', coalesce(u.display_name, u.user_name)) ORDER BY gm.membership_id), '[]')::text
    FROM scim_group_members gm
    JOIN scim_users u ON u.organization_id = gm.organization_id AND u.membership_id = gm.membership_id
    WHERE gm.organization_id = g.organization_id AND gm.group_id = g.id) AS members FROM scim_groups g
    WHERE g.organization_id = $1 AND g.connection_id = $2 AND g.id = $3`

  /**
   * Groups.create in mode create_teams, without role rules (the bench's connection has none): the group and its
   * members, a team of the group's name (the first free one) with its active members, the event.
   */
  const createGroup = async (caller: Row, body: Row, base: string, path: string, via: Via): Promise<Reply> => {
    const displayName = body.displayName
    if (typeof displayName !== "string" || displayName.trim() === "") return scimError(400, "displayName is required.", "invalidValue")
    const externalId = typeof body.externalId === "string" && body.externalId !== "" ? body.externalId : null
    const memberIds = [...new Set((Array.isArray(body.members) ? body.members : []).map((member: Row) => String(member.value)))]
    const { organization_id: organizationId, connection_id: connectionId } = caller
    return transaction(async (client): Promise<Reply> => {
      const connection = await client.query(
        `SELECT c.group_mapping_mode, c.default_role, c.role_rules::text AS role_rules FROM scim_connections c
         WHERE c.organization_id = $1 AND c.id = $2`,
        [organizationId, connectionId]
      )
      if (connection.rows.length === 0) return scimError(404, "No such SCIM connection.")
      if (connection.rows[0].group_mapping_mode !== "create_teams") return scimError(400, "The baseline only creates teams.")
      if (memberIds.length > 0) {
        const missing = await client.query(
          `SELECT k AS id FROM unnest($1::text[]) AS k
           EXCEPT
           SELECT u.membership_id FROM scim_users u
           WHERE u.organization_id = $2 AND u.membership_id = ANY($1::text[]) AND u.connection_id = $3 AND u.deleted_at IS NULL
           ORDER BY id`,
          [memberIds, organizationId, connectionId]
        )
        if (missing.rows.length > 0) return scimError(400, `members: ${missing.rows[0].id} is not a User of this SCIM connection.`, "invalidValue")
      }
      const id = newId("scg")
      const at = new Date()
      await client.query(
        `INSERT INTO scim_groups (id, organization_id, connection_id, display_name, external_id, team_id, version, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, NULL, 1, $6, $6)`,
        [id, organizationId, connectionId, displayName, externalId, at]
      )
      if (memberIds.length > 0) {
        await client.query(
          `INSERT INTO scim_group_members (organization_id, group_id, membership_id, created_at)
           SELECT $1, $2, m, $3 FROM unnest($4::text[]) AS m ON CONFLICT DO NOTHING`,
          [organizationId, id, at, memberIds]
        )
      }
      const scoped = [organizationId, connectionId, id]
      await client.query(`SELECT ${groupColumns} FROM scim_groups g WHERE g.organization_id = $1 AND g.connection_id = $2 AND g.id = $3`, scoped)
      // DirectoryTeams.create: the first free name of the candidates, then the team.
      const candidates = [displayName, `${displayName} (SCIM)`, ...Array.from({ length: 18 }, (_, i) => `${displayName} (SCIM ${i + 2})`)]
      const taken = new Set((await client.query(
        `SELECT lower(t.name) AS name FROM teams t WHERE t.organization_id = $1 AND lower(t.name) = ANY($2::text[]) AND t.id IS DISTINCT FROM $3`,
        [organizationId, candidates.map((candidate) => candidate.toLowerCase()), null]
      )).rows.map((row) => row.name))
      const teamName = candidates.find((candidate) => !taken.has(candidate.toLowerCase()))!
      const teamId = newId("tem")
      await client.query(
        `INSERT INTO teams (id, organization_id, name, created_by_membership_id, created_at, updated_at, scim_connection_id)
         VALUES ($1, $2, $3, NULL, $4, $4, $5)`,
        [teamId, organizationId, teamName, at, connectionId]
      )
      // TeamSync.syncMembers: the team holds the group's active members.
      const active = (await client.query(
        `SELECT gm.membership_id FROM scim_group_members gm
         JOIN scim_users u ON u.organization_id = gm.organization_id AND u.membership_id = gm.membership_id
         JOIN memberships m ON m.organization_id = gm.organization_id AND m.id = gm.membership_id
         WHERE gm.organization_id = $1 AND gm.group_id = $2 AND u.connection_id = $3
           AND u.active AND u.deleted_at IS NULL AND m.removed_at IS NULL AND m.suspended_at IS NULL
         ORDER BY gm.membership_id`,
        [organizationId, id, connectionId]
      )).rows.map((row) => row.membership_id as string)
      await client.query(
        `DELETE FROM team_members WHERE organization_id = $1 AND team_id = $2 AND membership_id NOT IN (SELECT k FROM unnest($3::text[]) AS k)`,
        [organizationId, teamId, active]
      )
      if (active.length > 0) {
        await client.query(
          `INSERT INTO team_members (organization_id, team_id, membership_id, created_at)
           SELECT $1, $2, m, $3 FROM unnest($4::text[]) AS m ON CONFLICT DO NOTHING`,
          [organizationId, teamId, at, active]
        )
      }
      await client.query(`UPDATE teams SET updated_at = $1 WHERE organization_id = $2 AND id = $3`, [at, organizationId, teamId])
      await client.query(`UPDATE scim_groups SET team_id = $1 WHERE organization_id = $2 AND connection_id = $3 AND id = $4`, [teamId, ...scoped])
      // Groups.read: the row and its members, as the answer.
      const [row] = (await client.query(`SELECT ${groupColumns} FROM scim_groups g WHERE g.organization_id = $1 AND g.connection_id = $2 AND g.id = $3`, scoped)).rows
      const members = JSON.parse((await client.query(groupMembers, scoped)).rows[0].members) as Array<Row>
      await recordEvent(client, caller, { method: "POST", path, resourceType: "Group" }, 201, id)
      await recordAudit(client, caller, via, "scim.group.provision", { type: "scim_group", id })
      return [201, {
        schemas: [GroupSchema],
        id: row.id,
        ...(row.external_id === null ? {} : { externalId: row.external_id }),
        displayName: row.display_name,
        members: members.map((member) => ({ ...member, $ref: `${base}/Users/${member.value}` })),
        meta: {
          resourceType: "Group",
          created: date(row.created_at).toISOString(),
          lastModified: date(row.updated_at).toISOString(),
          location: `${base}/Groups/${row.id}`,
          version: `W/"${row.version}"`
        }
      }]
    })
  }

  const readBody = async (request: IncomingMessage) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      return typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Row) : undefined
    } catch {
      return undefined
    }
  }

  const send = (response: ServerResponse, [status, body]: Reply) => {
    const text = JSON.stringify(body)
    response.writeHead(status, { "content-type": "application/scim+json", "content-length": Buffer.byteLength(text) })
    response.end(text)
  }

  /** Answers a request under `/scim/v2/`; false for any other path. */
  return async (request: IncomingMessage, response: ServerResponse, url: URL): Promise<boolean> => {
    const match = /^\/scim\/v2\/([^/]+)\/(Users|Groups)$/.exec(url.pathname)
    if (match === null) return false
    const [, connectionId, resource] = match
    const body = request.method === "POST" ? await readBody(request) : undefined
    const authorization = request.headers.authorization ?? ""
    const token = /^bearer /i.test(authorization) ? authorization.slice(7).trim() : ""
    const [caller] = token === ""
      ? []
      : (await pool.query(byToken, [createHash("sha256").update(token).digest("hex"), new Date()])).rows
    if (caller === undefined || caller.connection_id !== decodeURIComponent(connectionId!)) {
      send(response, scimError(401, "A valid SCIM token of this connection is required."))
      return true
    }
    if (caller.plan !== "enterprise") {
      send(response, scimError(403, "The organization's plan no longer includes directory provisioning (SCIM)."))
      return true
    }
    const base = `http://${request.headers.host}/scim/v2/${connectionId}`
    const via: Via = { ip: request.socket.remoteAddress ?? null, userAgent: request.headers["user-agent"] ?? null }
    if (request.method === "GET" && resource === "Users") send(response, await listUsers(caller, url, base))
    else if (request.method === "POST" && body === undefined) send(response, scimError(400, "The body must be a JSON object.", "invalidSyntax"))
    else if (request.method === "POST" && resource === "Users") send(response, await createUser(caller, body!, base, url.pathname, via))
    else if (request.method === "POST") send(response, await createGroup(caller, body!, base, url.pathname, via))
    else send(response, scimError(405, "The baseline answers GET /Users, POST /Users and POST /Groups."))
    return true
  }
}

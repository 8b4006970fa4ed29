/**
 * The yardstick: what hand-written code costs for the benchmarked reads. A minimal `node:http` + `pg` server (pool of
 * 10) over the database at DATABASE_URL that orgplane seeded, one statement per authentication and one per list,
 * answering the same JSON as orgplane. Imports no orgplane code on purpose. The people reads use only columns that
 * exist since the first two migrations, so it reads databases of older checkouts too; the catalog reads run
 * orgplane's own statements (copied from the server's repositories), one after the other as orgplane runs them;
 * so do the SCIM routes (scim-baseline.ts). Served by child.ts.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import pg from "pg"
import { auditParameters, insertAuditEvent } from "./audit-baseline.js"
import { serve } from "./child.js"
import { requestRoutes } from "./requests-baseline.js"
import { type Row, text, textOrNull } from "./rows.js"
import { scimRoutes } from "./scim-baseline.js"

const databaseUrl = process.env.DATABASE_URL
if (databaseUrl === undefined || databaseUrl.trim() === "") throw new Error("baseline: DATABASE_URL is required")
const pool = new pg.Pool({ connectionString: databaseUrl, max: Number(process.env.ORGPLANE_DB_POOL_SIZE ?? 10) })


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

// Cursors as orgplane's Keyset makes them: base64url(the sort key's parts joined with NUL) "." base64url(MAC), the MAC
// an HMAC-SHA256 (first 16 bytes) under the instance's cursor key of the list's name, its filters and the payload.
let cursorKey: Promise<Buffer> | undefined
const keyOfCursors = () =>
  cursorKey ??= pool.query(`SELECT value FROM instance_settings WHERE key = 'cursor_key'`).then((result) =>
    Buffer.from(result.rows[0].value, "base64")
  )

/** The filters a cursor is bound to: the query without its position and page size (booleans as orgplane decodes them). */
const bindingOf = (url: URL) =>
  JSON.stringify(
    [...url.searchParams]
      .filter(([name]) => name !== "cursor" && name !== "limit")
      .map(([name, value]) => [name, value === "true" ? true : value === "false" ? false : value])
      .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0))
  )

const mac = (key: Buffer, list: string, url: URL, payload: string) =>
  createHmac("sha256", key).update(`${list}\n${bindingOf(url)}\n${payload}`).digest().subarray(0, 16)

const signCursor = async (list: string, url: URL, parts: ReadonlyArray<string>) => {
  const payload = Buffer.from(parts.join("\u0000"), "utf8").toString("base64url")
  return `${payload}.${mac(await keyOfCursors(), list, url, payload).toString("base64url")}`
}

class BadCursor extends Error {}

/** The sort key of `url`'s cursor, checked; undefined without one. */
const readCursor = async (list: string, url: URL, parts: number): Promise<ReadonlyArray<string> | undefined> => {
  const cursor = url.searchParams.get("cursor")
  if (cursor === null) return undefined
  const dot = cursor.lastIndexOf(".")
  const payload = cursor.slice(0, Math.max(dot, 0))
  const signature = Buffer.from(cursor.slice(dot + 1), "base64url")
  const expected = mac(await keyOfCursors(), list, url, payload)
  if (dot <= 0 || signature.length !== expected.length || !timingSafeEqual(signature, expected)) throw new BadCursor()
  const values = Buffer.from(payload, "base64url").toString("utf8").split("\u0000")
  if (values.length !== parts) throw new BadCursor()
  return values
}

/** `{ items, nextCursor }` from `limit + 1` rows; the cursor signs the last item's sort key as orgplane does. */
const page = async <A>(rows: ReadonlyArray<A>, limit: number, list: string, url: URL, key: (item: A) => ReadonlyArray<string>) => {
  const items = rows.slice(0, limit)
  const last = items[items.length - 1]
  return { items, nextCursor: rows.length > limit ? await signCursor(list, url, key(last!)) : null }
}

const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

const members = async (organizationId: string, url: URL) => {
  const limit = limitOf(url)
  const q = url.searchParams.get("q")?.trim()
  const { rows } = await pool.query(
    `SELECT m.id, m.organization_id AS "organizationId", m.user_id AS "userId", u.name, u.email, m.role,
            m.created_at AS "createdAt", m.removed_at AS "removedAt", m.suspended_at AS "suspendedAt"
     FROM memberships m LEFT JOIN users u ON u.id = m.user_id
     WHERE m.organization_id = $1 AND m.removed_at IS NULL
       ${q ? "AND (u.name ILIKE $3 OR u.email ILIKE $3)" : ""}
     ORDER BY m.id LIMIT $2`,
    q ? [organizationId, limit + 1, likePattern(q)] : [organizationId, limit + 1]
  )
  return page(rows, limit, "members", url, (member) => [member.id])
}

const teams = async (organizationId: string, url: URL) => {
  const limit = limitOf(url)
  const { rows } = await pool.query(
    `SELECT t.id, t.organization_id AS "organizationId", t.name,
            ARRAY(SELECT membership_id FROM team_members WHERE team_id = t.id ORDER BY membership_id) AS "memberIds",
            t.created_by_membership_id AS "createdByOrgMembershipId", t.external_key AS "externalKey",
            t.scim_connection_id AS "scimConnectionId", t.created_at AS "createdAt", t.updated_at AS "updatedAt"
     FROM teams t WHERE t.organization_id = $1 ORDER BY lower(t.name), t.id LIMIT $2`,
    [organizationId, limit + 1]
  )
  return page(rows, limit, "teams", url, (team) => [team.name, team.id])
}

const apiKeys = async (organizationId: string, url: URL) => {
  const limit = limitOf(url)
  const { rows } = await pool.query(
    `SELECT id, name, prefix, membership_id AS "createdByOrgMembershipId", created_at AS "createdAt",
            expires_at AS "expiresAt", last_used_at AS "lastUsedAt"
     FROM api_keys WHERE organization_id = $1 ORDER BY id DESC LIMIT $2`,
    [organizationId, limit + 1]
  )
  return page(rows, limit, "api-keys", url, (key) => [key.id])
}

// The catalog ------------------------------------------------------------------------------------------------------
// orgplane's statements for GET /v1/plugins/{id} and GET /v1/plugins/{id}/config-objects, as its repositories and
// its Access module build them (packages/server/src/catalog/PluginsRepository.ts, ConfigObjectsRepository.ts,
// Access.ts), with the same parameters.

/** The caller's role on plugin row `alias` (0 none .. 3 manager): 3 for owners and admins, else from the grants. */
const pluginRank = (alias: string, restricted: boolean, me: () => string) => {
  if (!restricted) return "3"
  const applying = (grants: string, column: string, row: string) =>
    `${grants} g
          WHERE g.organization_id = ${row}.organization_id AND g.${column} = ${row}.id
            AND g.removed_at IS NULL
            AND (g.org_wide OR g.membership_id = ${me()}
                 OR g.team_id IN (SELECT tm.team_id FROM team_members tm
                                  WHERE tm.organization_id = g.organization_id AND tm.membership_id = ${me()}))`
  const grants = `(SELECT max(CASE g.role WHEN 'manager' THEN 3 WHEN 'editor' THEN 2 ELSE 1 END) FROM ${applying("plugin_grants", "plugin_id", alias)})`
  const viaMarketplace = `EXISTS (SELECT 1 FROM marketplace_plugins vmp
                  JOIN marketplaces vm ON vm.organization_id = vmp.organization_id AND vm.id = vmp.marketplace_id
                  WHERE vmp.organization_id = ${alias}.organization_id AND vmp.plugin_id = ${alias}.id
                    AND vmp.removed_at IS NULL AND vm.deleted_at IS NULL AND EXISTS (SELECT 1 FROM ${applying("marketplace_grants", "marketplace_id", "vm")}))`
  return `COALESCE(${grants}, CASE WHEN ${viaMarketplace} THEN 1 ELSE 0 END)`
}

/** Numbered placeholders for one statement's parameters, in the order the statement's text asks for them. */
const parameters = () => {
  const values: Array<unknown> = []
  return { values, add: (value: unknown) => `$${values.push(value)}` }
}

/** orgplane's plugin columns; one plugin's organization and id are bound as values in its subqueries, as orgplane does. */
const pluginColumns = (org: string, id: string) => `p.id, p.organization_id, p.name, p.description, p.status,
      p.created_by_membership_id AS created_by_org_membership_id, p.created_at, p.updated_at, p.deleted_at,
      (SELECT count(*)::int FROM plugin_config_objects pm
       WHERE pm.organization_id = ${org} AND pm.plugin_id = ${id} AND pm.removed_at IS NULL) AS member_count,
      COALESCE((SELECT json_agg(json_build_array(pk.id, pk.name) ORDER BY lower(pk.name), pk.id)
                FROM marketplace_plugins pkm
                JOIN marketplaces pk ON pk.organization_id = pkm.organization_id AND pk.id = pkm.marketplace_id
                WHERE pkm.organization_id = ${org} AND pkm.plugin_id = ${id}
                  AND pkm.removed_at IS NULL AND pk.deleted_at IS NULL), '[]'::json) AS marketplace_refs,
      COALESCE((SELECT json_agg(json_build_array(pc.id, pc.object_type, pc.title, pcv.id) ORDER BY pcm.created_at, pcm.id)
                FROM plugin_config_objects pcm
                JOIN config_objects pc ON pc.organization_id = pcm.organization_id AND pc.id = pcm.config_object_id
                JOIN LATERAL (SELECT lv.id FROM config_object_versions lv
                              WHERE lv.organization_id = pc.organization_id AND lv.config_object_id = pc.id
                              ORDER BY lv.number DESC LIMIT 1) pcv ON true
                WHERE pcm.organization_id = ${org} AND pcm.plugin_id = ${id}
                  AND pcm.removed_at IS NULL AND pc.status = 'active'), '[]'::json) AS resources,
      p.source_metadata::text AS source_metadata,
      COALESCE((SELECT json_agg(json_build_array(sk.path, sk.reason) ORDER BY sk.path)
                FROM (SELECT sf.path, sf.reason FROM connector_skipped_files sf
                      JOIN connector_mappings sm ON sm.organization_id = sf.organization_id AND sm.id = sf.connector_mapping_id
                      WHERE sf.organization_id = ${org} AND sm.organization_id = ${org}
                        AND sm.plugin_id = ${id}
                      ORDER BY sf.path LIMIT 100) sk), '[]'::json) AS skipped_files`

const OBJECT_TYPES = ["skill", "agent", "command", "tool", "mcp", "hook", "context", "custom"]

/** The plugin resource, members in orgplane's order. */
const toPlugin = (row: Row) => {
  const resources = (row.resources as Array<[string, string, string, string]>).map(([configObjectId, objectType, title, versionId]) => ({
    configObjectId,
    objectType,
    title,
    versionId
  }))
  const contributions = OBJECT_TYPES.flatMap((objectType) => {
    const configObjectIds = resources.filter((resource) => resource.objectType === objectType).map((resource) => resource.configObjectId)
    return configObjectIds.length === 0 ? [] : [{ objectType, configObjectIds }]
  })
  const { description, id, name, status } = row
  return {
    id,
    organizationId: row.organization_id,
    name,
    description,
    status,
    createdByOrgMembershipId: row.created_by_org_membership_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
    memberCount: row.member_count,
    sourceMetadata: row.source_metadata === null ? null : JSON.parse(row.source_metadata as string),
    skippedFiles: (row.skipped_files as Array<[string, string]>).map(([path, reason]) => ({ path, reason })),
    marketplaces: (row.marketplace_refs as Array<[string, string]>).map(([id, name]) => ({ id, name })),
    extension: {
      id,
      name,
      description,
      manifest: {
        schemaVersion: 1,
        id,
        name,
        description,
        source: { trusted: true, reference: `orgplane:plugin/${id}` },
        resources,
        contributions,
        setup: {},
        lifecycle: { status, updatedAt: row.updated_at }
      }
    }
  }
}

type Reply = readonly [status: number, body: unknown]

const pluginNotFound: Reply = [404, { error: "plugin_not_found", message: "Plugin not found." }]
const noViewer: Reply = [403, { reason: "insufficient_access", message: "Missing viewer access for plugin." }]

/** Whether the principal's grants decide (plain members), rather than their role (owners and admins manage all). */
const restricted = (principal: Row) => principal.m_role === "member"

/** GET /v1/plugins/{id}: one statement, the plugin with the caller's rank on it. */
const plugin = async (principal: Row, pluginId: string): Promise<Reply> => {
  const { add, values } = parameters()
  const rank = pluginRank("p", restricted(principal), () => add(principal.m_id))
  const columns = pluginColumns(add(principal.org_id), add(pluginId))
  const text = `SELECT ${rank} AS rank, ${columns} FROM plugins p WHERE p.organization_id = ${add(principal.org_id)} AND p.id = ${add(pluginId)}`
  const [row] = (await pool.query(text, values)).rows
  if (row === undefined) return pluginNotFound
  return row.rank >= 1 ? [200, { item: toPlugin(row) }] : noViewer
}

const versionColumns = `v.id AS v_id, v.config_object_id AS v_config_object_id, v.number AS v_number,
        v.schema_version AS v_schema_version, v.parser_mode AS v_parser_mode,
        v.normalized_payload_json::text AS v_normalized_payload_json, v.raw_source_text AS v_raw_source_text,
        v.metadata::text AS v_metadata, v.created_via AS v_created_via,
        v.created_by_membership_id AS v_created_by_org_membership_id,
        v.connector_sync_event_id AS v_connector_sync_event_id, v.source_revision_ref AS v_source_revision_ref,
        v.is_deleted_version AS v_is_deleted_version, v.created_at AS v_created_at`

const selectConfigObjects = `
      SELECT c.id, c.organization_id, c.object_type, c.source_mode, c.status, c.title, c.description, c.search_text,
             c.current_file_name, c.current_file_extension, c.current_relative_path,
             c.created_by_membership_id AS created_by_org_membership_id, c.connector_instance_id,
             c.created_at, c.updated_at, c.deleted_at, ${versionColumns}
      FROM config_objects c
      JOIN LATERAL (
        SELECT * FROM config_object_versions lv
        WHERE lv.organization_id = c.organization_id AND lv.config_object_id = c.id
        ORDER BY lv.number DESC LIMIT 1
      ) v ON true`

const json = (text: string | null) => (text === null ? null : JSON.parse(text))

const toConfigObject = (row: Row) => ({
  id: row.id,
  organizationId: row.organization_id,
  objectType: row.object_type,
  sourceMode: row.source_mode,
  status: row.status,
  title: row.title,
  description: row.description,
  searchText: row.search_text,
  currentFileName: row.current_file_name,
  currentFileExtension: row.current_file_extension,
  currentRelativePath: row.current_relative_path,
  createdByOrgMembershipId: row.created_by_org_membership_id,
  connectorInstanceId: row.connector_instance_id,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  deletedAt: row.deleted_at,
  latestVersion: {
    id: row.v_id,
    configObjectId: row.v_config_object_id,
    number: row.v_number,
    schemaVersion: row.v_schema_version,
    parserMode: row.v_parser_mode,
    normalizedPayloadJson: json(textOrNull(row.v_normalized_payload_json)),
    rawSourceText: row.v_raw_source_text,
    metadata: json(textOrNull(row.v_metadata)),
    createdVia: row.v_created_via,
    createdByOrgMembershipId: row.v_created_by_org_membership_id,
    connectorSyncEventId: row.v_connector_sync_event_id,
    sourceRevisionRef: row.v_source_revision_ref,
    isDeletedVersion: row.v_is_deleted_version,
    createdAt: row.v_created_at
  }
})

/**
 * GET /v1/plugins/{id}/config-objects: three statements, as orgplane runs them: the caller's rank on the plugin,
 * a page of memberships in the order they were added, and their config objects with their latest versions.
 */
const pluginConfigObjects = async (principal: Row, pluginId: string, url: URL): Promise<Reply> => {
  const organizationId = principal.org_id as string
  const check = parameters()
  const rank = pluginRank("r", restricted(principal), () => check.add(principal.m_id))
  const [found] = (await pool.query(
    `SELECT ${rank} AS rank FROM plugins r
              WHERE r.organization_id = ${check.add(organizationId)} AND r.id = ${check.add(pluginId)}
              `,
    check.values
  )).rows
  if (found === undefined) return pluginNotFound
  if (found.rank < 1) return noViewer

  const limit = limitOf(url)
  const after = await readCursor("plugin_config_objects", url, 2)
  const includeRemoved = url.searchParams.get("includeRemoved") === "true"
  const list = parameters()
  const conditions = [
    `pc.organization_id = ${list.add(organizationId)}`,
    `pc.plugin_id = ${list.add(pluginId)}`,
    includeRemoved ? "true" : "pc.removed_at IS NULL",
    after === undefined ? "true" : `(pc.created_at, pc.id) > (${list.add(after[0])}, ${list.add(after[1])})`
  ]
  const memberships = (await pool.query(
    `SELECT pc.id, pc.plugin_id, pc.config_object_id, pc.membership_source, pc.connector_mapping_id,
      pc.created_by_membership_id AS created_by_org_membership_id, pc.created_at, pc.removed_at FROM plugin_config_objects pc WHERE (${
      conditions.join(" AND ")
    }) ORDER BY pc.created_at ASC, pc.id ASC LIMIT ${list.add(limit + 1)}`,
    list.values
  )).rows
  const onPage = memberships.slice(0, limit)

  const ids = [...new Set(onPage.map((row) => row.config_object_id as string))]
  const objects = new Map<string, unknown>()
  if (ids.length > 0) {
    const many = parameters()
    const text = `${selectConfigObjects} WHERE c.organization_id = ${many.add(organizationId)} AND c.id IN (${ids.map(many.add).join(",")})`
    for (const row of (await pool.query(text, many.values)).rows) objects.set(row.id, toConfigObject(row))
  }
  const items = onPage.map((row) => ({
    id: row.id,
    pluginId: row.plugin_id,
    configObjectId: row.config_object_id,
    membershipSource: row.membership_source,
    connectorMappingId: row.connector_mapping_id,
    createdByOrgMembershipId: row.created_by_org_membership_id,
    createdAt: row.created_at,
    removedAt: row.removed_at,
    configObject: objects.get(row.config_object_id)
  }))
  const last = onPage[onPage.length - 1]
  return [200, {
    items,
    nextCursor: memberships.length > limit ? await signCursor("plugin_config_objects", url, [last.created_at.toISOString(), last.id]) : null
  }]
}

// The memory bank: orgplane's search statement (memory/MemoryRepository.ts) with its query rewriting (memory/Memory.ts).

/** Each word or "quoted phrase" may match on its own: joined with `or` for websearch_to_tsquery. */
const anyWordQuery = (text: string) =>
  (text.match(/"[^"]*"|[^\s"]+/g) ?? [])
    .map((token) => token.startsWith("\"") ? token : token.replace(/^-+/, ""))
    .filter((token) => token !== "" && token !== "\"\"" && token.toLowerCase() !== "or")
    .join(" or ")

const memorySearch = async (principal: Row, url: URL): Promise<Reply> => {
  const q = (url.searchParams.get("q") ?? "").trim()
  const limit = Number(url.searchParams.get("limit") ?? 20)
  if (q === "" || q.length > 512 || !Number.isInteger(limit) || limit < 1 || limit > 50) return [400, { error: "invalid_request" }]
  const text = anyWordQuery(q)
  if (text === "") return [200, { results: [] }]
  const { rows } = await pool.query(
    `SELECT m.id, m.content, m.tags, m.source, m.scope, m.created_at, m.updated_at, ts_rank_cd(m.search, q.query, 32)::float8 AS score
     FROM memories m CROSS JOIN (SELECT websearch_to_tsquery('english'::regconfig, $1) AS query) q
     WHERE m.organization_id = $2 AND m.user_id = $3 AND m.search @@ q.query
     ORDER BY score DESC, m.created_at DESC, m.id DESC
     LIMIT $4`,
    [text, principal.org_id, principal.user_id, limit]
  )
  return [200, {
    results: rows.map((row) => ({
      id: row.id,
      content: row.content,
      tags: row.tags,
      source: row.source,
      scope: row.scope,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      score: row.score
    }))
  }]
}

// Routing ---------------------------------------------------------------------------------------------------------

const lists: Record<string, (organizationId: string, url: URL) => Promise<unknown>> = {
  "/v1/members": members,
  "/v1/teams": teams,
  "/v1/api-keys": apiKeys
}

/** Reads of one resource in the caller's organization, by path. */
const resources: ReadonlyArray<readonly [RegExp, (principal: Row, match: RegExpExecArray, url: URL) => Promise<Reply>]> = [
  [/^\/v1\/plugins\/([^/]+)$/, (principal, match) => plugin(principal, match[1]!)],
  [/^\/v1\/plugins\/([^/]+)\/config-objects$/, (principal, match, url) => pluginConfigObjects(principal, match[1]!, url)],
  [/^\/v1\/memory\/search$/, (principal, _, url) => memorySearch(principal, url)]
]

const send = (response: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  response.end(text)
}

// Telemetry ingest (bench/telemetry.ts): the same authentication, filtering and one multi-row INSERT as orgplane's,
// without its schema checks or dimensions, to show what the framework costs on a write path.
const TELEMETRY_TYPES = new Set(["user.active", "session.active", "session.started", "session.ended", "task.started", "task.completed", "task.failed"])
const insertEvents = `
  INSERT INTO telemetry_events (organization_id, id, membership_id, user_id, event_type, occurred_at, source,
                                session_id, duration_ms, success, received_at)
  SELECT $1, e.id, $2, $3, e.event_type, e.occurred_at, e.source, e.session_id, e.duration_ms, e.success, now()
  FROM jsonb_to_recordset($4::jsonb)
    AS e(id text, event_type text, occurred_at timestamptz, source text, session_id text, duration_ms integer, success boolean)`
let telemetrySequence = 0

const ingest = async (request: IncomingMessage, response: ServerResponse) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const principal = await authenticate(request)
  if (principal === undefined) return send(response, 401, { error: "unauthorized" })
  let body: unknown
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
  } catch {
    return send(response, 400, { error: "invalid_request", details: [] })
  }
  const events: unknown = typeof body === "object" && body !== null && "events" in body ? body.events : undefined
  if (!Array.isArray(events) || events.length < 1 || events.length > 50) {
    return send(response, 400, { error: "invalid_request", details: [{ message: "1 to 50 events", path: ["events"] }] })
  }
  const sent = events.filter((event: unknown): event is Readonly<Record<string, unknown>> => typeof event === "object" && event !== null)
  const rows = sent.filter((event) => typeof event.type === "string" && TELEMETRY_TYPES.has(event.type)).map((event) => ({
    id: `tev_baseline${(++telemetrySequence).toString(36).padStart(14, "0")}`,
    event_type: event.type,
    occurred_at: new Date(String(event.timestamp)).toISOString(),
    source: event.source === "app" || event.source === "worker" ? event.source : null,
    session_id: event.sessionId ?? null,
    duration_ms: event.durationMs ?? null,
    success: event.success ?? null
  }))
  if (rows.length > 0) await pool.query(insertEvents, [principal.org_id, principal.m_id, principal.user_id, JSON.stringify(rows)])
  response.writeHead(204)
  response.end()
}

// A team renamed (bench/audit.ts): orgplane's statements of `PATCH /v1/teams/{id}` with a name (teams/Teams.ts's
// `change`, TeamsRepository's statements) in one transaction, the audit event's INSERT last before COMMIT as
// orgplane's AuditRecorder writes it; with `x-bench-audit: off` (sent by the harness to this server only) the same
// transaction without that INSERT, to show what the INSERT costs at the database. orgplane has no such switch.
const teamColumns = `t.id, t.organization_id, t.name, t.created_by_membership_id, t.external_key, t.scim_connection_id,
  t.created_at, t.updated_at,
  ARRAY(SELECT tm.membership_id FROM team_members tm
        WHERE tm.organization_id = t.organization_id AND tm.team_id = t.id ORDER BY tm.membership_id) AS member_ids`

const byApiKeyWithId = byApiKey.replace("SELECT ", "SELECT k.id AS key_id, ")

const renameTeam = async (request: IncomingMessage, response: ServerResponse, teamId: string) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const key = request.headers["x-api-key"]
  const principal = typeof key === "string" && key.trim() !== "" ? (await pool.query(byApiKeyWithId, [hash(key.trim())])).rows[0] : undefined
  if (principal === undefined) return send(response, 401, { error: "unauthorized" })
  if (principal.m_role !== "owner" && principal.m_role !== "admin") return send(response, 403, { reason: "insufficient_role" })
  let name: unknown
  try {
    name = JSON.parse(Buffer.concat(chunks).toString("utf8")).name
  } catch {
    name = undefined
  }
  if (typeof name !== "string" || name.trim() === "") return send(response, 400, { error: "invalid_request" })
  const audited = request.headers["x-bench-audit"] !== "off"
  const organizationId = principal.org_id as string
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    const scoped = [organizationId, teamId]
    const locked = await client.query(`SELECT id FROM teams WHERE organization_id = $1 AND id = $2 FOR UPDATE`, scoped)
    if (locked.rows.length === 0) {
      await client.query("ROLLBACK")
      return send(response, 404, { error: "team_not_found" })
    }
    await client.query(`SELECT scim_connection_id FROM teams WHERE organization_id = $1 AND id = $2`, scoped)
    // The team as it was, for the event's changes (orgplane reads it under the lock too).
    const [was] = (await client.query(`SELECT ${teamColumns} FROM teams t WHERE t.organization_id = $1 AND t.id = $2`, scoped)).rows
    const at = new Date()
    await client.query(`UPDATE teams SET name = $1, updated_at = $2 WHERE organization_id = $3 AND id = $4`, [name, at, ...scoped])
    await client.query(`UPDATE teams SET updated_at = $1 WHERE organization_id = $2 AND id = $3`, [at, ...scoped])
    const [row] = (await client.query(`SELECT ${teamColumns} FROM teams t WHERE t.organization_id = $1 AND t.id = $2`, scoped)).rows
    if (audited) {
      await client.query(insertAuditEvent, auditParameters({
        organizationId,
        action: "team.update",
        category: "change",
        actor: {
          type: "api_key",
          id: principal.key_id,
          membershipId: principal.m_id,
          label: `${principal.user_name} <${principal.user_email}>`,
          credentialId: principal.key_id
        },
        ip: request.socket.remoteAddress ?? null,
        userAgent: request.headers["user-agent"] ?? null,
        targets: [{ type: "team", id: teamId }],
        ...(was.name === row.name ? {} : { changes: { before: { name: was.name }, after: { name: row.name }, changedFields: ["name"] } })
      }))
    }
    await client.query("COMMIT")
    return send(response, 200, {
      team: {
        id: row.id,
        organizationId: row.organization_id,
        name: row.name,
        memberIds: row.member_ids,
        createdByOrgMembershipId: row.created_by_membership_id,
        externalKey: row.external_key,
        scimConnectionId: row.scim_connection_id,
        createdAt: row.created_at,
        updatedAt: row.updated_at
      }
    })
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}

// SCIM (bench/scim.ts): its own routes and authentication, in scim-baseline.ts.
const scim = scimRoutes(pool)

// The request path (bench/requests.ts): orgplane's own statements for its five endpoints, in requests-baseline.ts.
const requestPath = process.env.ORGPLANE_BENCH_REQUESTS === "1" ? requestRoutes(pool) : undefined

const handle = async (request: IncomingMessage, response: ServerResponse) => {
  const url = new URL(request.url ?? "/", "http://localhost")
  if (requestPath !== undefined && await requestPath(request, response, url)) return
  if (request.method === "POST" && url.pathname === "/v1/telemetry/ingest") return ingest(request, response)
  if (url.pathname.startsWith("/scim/v2/") && await scim(request, response, url)) return
  const team = request.method === "PATCH" ? /^\/v1\/teams\/([^/]+)$/.exec(url.pathname) : null
  if (team !== null) return renameTeam(request, response, decodeURIComponent(team[1]!))
  if (request.method !== "GET") return send(response, 405, { error: "method_not_allowed" })
  if (url.pathname === "/health") return send(response, 200, { ok: true, version: process.env.ORGPLANE_VERSION ?? "baseline" })
  const list = lists[url.pathname]
  let resource: readonly [(typeof resources)[number][1], RegExpExecArray] | undefined
  for (const [pattern, read] of resources) {
    const match = pattern.exec(url.pathname)
    if (match !== null) resource = [read, match]
  }
  if (url.pathname !== "/v1/me" && list === undefined && resource === undefined) return send(response, 404, { error: "not_found" })
  const principal = await authenticate(request)
  if (principal === undefined) return send(response, 401, { error: "unauthorized" })
  if (url.pathname === "/v1/me") return send(response, 200, me(principal))
  if (principal.org_id === null) return send(response, 404, { error: "organization_not_found" })
  try {
    if (resource !== undefined) {
      const [status, body] = await resource[0](principal, resource[1], url)
      return send(response, status, body)
    }
    return send(response, 200, await list!(text(principal.org_id), url))
  } catch (error) {
    if (error instanceof BadCursor) return send(response, 400, { error: "invalid_request", message: "bad cursor" })
    throw error
  }
}

await serve((request, response) => {
  handle(request, response).catch((error) => {
    console.error(error)
    if (!response.headersSent) send(response, 500, { error: "internal" })
    else response.destroy()
  })
}, () => pool.end())

/**
 * The audit log section of `pnpm bench` (`--audit` or ORGPLANE_BENCH_AUDIT=1):
 *
 * - The cost of auditing on a mutating request: `PATCH /v1/teams/{id}` renaming a team (one audit event per
 *   request, written in the change's transaction). orgplane has no switch to turn auditing off, and gets none for
 *   a benchmark; beside it the baseline (baseline.ts) runs orgplane's statements of the same rename in one
 *   transaction twice: with the audit event's INSERT (orgplane's statement) and without it (`x-bench-audit: off`).
 * - The list over ORGPLANE_BENCH_AUDIT_EVENTS events of one organization (default 1,000,000), seeded with SQL on the
 *   server's own connection over the last 300 days (its monthly partitions made first, as the server makes them):
 *   `GET /v1/audit/events?limit=50`, its first page and a page 90% in, oldest first, and filtered by an action
 *   family, an actor, a target; then the plan of each list statement (`EXPLAIN ANALYZE`, which index).
 * - The export of all of them, NDJSON and CSV: events/s and the server's peak RSS while it streams.
 *
 * Started by run.ts with its servers; prints figures, asserts nothing.
 */
// The catalog from the schema's source (the root package does not depend on @orgplane/schema).
import { AuditActions } from "../packages/schema/src/AuditCatalog.js"
import { createHmac, randomBytes } from "node:crypto"
import { type Agent, request as httpRequest } from "node:http"
import { load, ok, percentile, request } from "./http.js"

interface Target {
  readonly name: string
  readonly url: string
  /** CPU time (user + system) the server process has used so far, in microseconds. */
  readonly cpu: () => Promise<number | undefined>
}

interface Orgplane extends Target {
  readonly rss: () => Promise<number | undefined>
  /** The V8 heap in use, in bytes. */
  readonly heap: () => Promise<number | undefined>
  readonly sql: (text: string, params: ReadonlyArray<unknown>) => Promise<number>
  readonly query: (text: string, params: ReadonlyArray<unknown>) => Promise<ReadonlyArray<Record<string, unknown>>>
}

const count = (text: string | undefined, fallback: number) => {
  const value = Number(text)
  return text !== undefined && text.trim() !== "" && Number.isInteger(value) && value >= 0 ? value : fallback
}

/** Events seeded; 0: only the writes are measured (no seeding, no list, no export). */
export const EVENTS = count(process.env.ORGPLANE_BENCH_AUDIT_EVENTS, 1_000_000)
const BATCH = 25_000
const DAYS = 300
const PAGE = 50
/** Teams renamed in turn, so that concurrent requests seldom wait for the same team's lock. */
const TEAMS = 32
/** Seeded people (actors and targets): the owner's key and session act too. */
const PEOPLE = 1000
const ACTORS = 20

// ---------------------------------------------------------------------------------------------------------------
// Measurement.

interface Figures {
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
  readonly cpuPerRequest: number | undefined
}

const run = async (target: Target, count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<Figures> => {
  const cpuBefore = await target.cpu()
  const { latencies, seconds } = await load(count, concurrency, task)
  const cpuAfter = await target.cpu()
  return {
    perSecond: count / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuPerRequest: cpuBefore === undefined || cpuAfter === undefined ? undefined : (cpuAfter - cpuBefore) / count
  }
}

const number = (value: number | undefined, digits: number, width: number) => (value === undefined ? "" : value.toFixed(digits)).padStart(width)
const figures = (f: Figures | undefined) =>
  f === undefined ? "".padStart(35) : `${number(f.perSecond, 0, 8)} ${number(f.p50, 2, 8)} ${number(f.p99, 2, 8)} ${number(f.cpuPerRequest, 0, 8)}`
const LABEL = 54
const header = "   req/s   p50 ms   p99 ms   cpu µs"

// ---------------------------------------------------------------------------------------------------------------
// Seeding.

/** An id of the prefix made from a row number: `<prefix>_01jbench` and 18 digits (26 base32 characters). */
const id = (prefix: string, n: string) => `'${prefix}_01jbench' || lpad((${n})::text, 18, '0')`

/** `audit_events_pYYYYMM` for [YYYY-MM-01, next month) in UTC: MonthlyPartitions.create's statement. */
const partitionStatement = (month: number) => {
  const start = (m: number) => new Date(Date.UTC(Math.floor(m / 12), m % 12, 1)).toISOString()
  const name = `audit_events_p${Math.floor(month / 12)}${String((month % 12) + 1).padStart(2, "0")}`
  return `CREATE TABLE IF NOT EXISTS ${name} PARTITION OF audit_events FOR VALUES FROM ('${start(month)}') TO ('${start(month + 1)}')`
}

const monthOf = (date: Date) => date.getUTCFullYear() * 12 + date.getUTCMonth()

/**
 * The catalog's actions, weighted as a busy organization's log would be: the people, teams, sessions and keys,
 * catalog and connector changes often; SSO, SCIM settings and the rest seldom. Each action once per `weight`.
 */
const weightOf = (action: string) =>
  /^(session|member|team|config_object|plugin|connector_mapping|scim\.user|memory|mcp_connection\.tool)/.test(action)
    ? 8
    : /^(api_key|invitation|marketplace|access|connector|template|llm_provider\.credential|worker)/.test(action)
    ? 3
    : 1

/**
 * The families this organization never used (no mail or calendar capabilities): a filter on one of them finds
 * nothing, the worst case of a family's filter.
 */
const UNUSED = /^(capability|suite_connection|suite_client)\./

const weightedActions = () =>
  Object.entries(AuditActions).filter(([action]) => !UNUSED.test(action)).flatMap(([action, rule]) => Array.from({ length: weightOf(action) }, () => [action, rule.category] as const))

interface Organization {
  readonly organizationId: string
  readonly key: string
  readonly teamIds: ReadonlyArray<string>
}

interface AuditSeeded {
  /** An actor of about 1 in ACTORS events, and a target (a member) of about 1 in PEOPLE. */
  readonly actorId: string
  readonly targetId: string
  /** A team, target of 1 in 150 events. */
  readonly hotTargetId: string
  /** A member no event names (a target never acted on). */
  readonly quietTargetId: string
}

/** An owner's organization with its API key and the teams the writes rename, over HTTP. */
const organize = async (agent: Agent, orgplane: Orgplane): Promise<Organization> => {
  const email = `audit.owner.${randomBytes(4).toString("hex")}@example.com`
  const signedUp = await ok("sign-up", request(agent, orgplane.url, "POST", "/v1/auth/sign-up", {}, { email, password: "correct horse battery", name: "Audit owner" }))
  const auth = { authorization: `Bearer ${signedUp.session.token}` }
  const organizationId = (await ok("organization", request(agent, orgplane.url, "POST", "/v1/organizations", auth, { name: "Audit bench" }))).organization.id as string
  const key = (await ok("API key", request(agent, orgplane.url, "POST", "/v1/api-keys", auth, { name: "bench" }))).key as string
  const teamIds: Array<string> = []
  for (let t = 0; t < TEAMS; t++) {
    teamIds.push((await ok("team", request(agent, orgplane.url, "POST", "/v1/teams", { "x-api-key": key }, { name: `Audit team ${t}` }))).team.id)
  }
  return { organizationId, key, teamIds }
}

/** EVENTS events of the organization, with SQL on the server's own connection. */
const seed = async (orgplane: Orgplane, organizationId: string): Promise<AuditSeeded> => {
  const started = performance.now()

  // The months of the last DAYS days, made as the server makes them (it makes the current one and two ahead).
  const now = new Date()
  for (let month = monthOf(new Date(now.getTime() - (DAYS + 1) * 86_400_000)); month <= monthOf(now); month++) {
    await orgplane.sql(partitionStatement(month), [])
  }
  const actions = weightedActions()
  process.stdout.write(`seeding the audit log: ${EVENTS} events of one organization over ${DAYS} days, ${actions.length} weighted actions of ${
    Object.keys(AuditActions).length
  }:`)
  // Event i (1 = newest): its instant spread evenly over DAYS days (milliseconds, as the server writes them), an
  // action of the weighted catalog, an actor of ACTORS people (user, API key, SCIM, worker, system ones), one or two
  // targets: a member of PEOPLE and, for some, a team; 3% denied; a few addresses and agents.
  for (let from = 1; from <= EVENTS; from += BATCH) {
    const to = Math.min(EVENTS, from + BATCH - 1)
    await orgplane.sql(
      `WITH rows AS (
         SELECT i, (i * 7919) % $4::int AS a, (i * 31 + i / 7) % ${ACTORS} AS actor, (i * 104729) % ${PEOPLE} AS person
         FROM generate_series($1::bigint, $2::bigint) AS i),
       events AS (
         SELECT i, ($5::text[])[(1 + a)::int] AS action, ($6::text[])[(1 + a)::int] AS category, actor, person,
                CASE WHEN actor < 12 THEN 'user' WHEN actor < 16 THEN 'api_key' WHEN actor < 18 THEN 'scim'
                     WHEN actor < 19 THEN 'worker' ELSE 'system' END AS actor_type,
                jsonb_build_array(jsonb_build_object('type', 'member', 'id', ${id("om", "person + 1")}))
                  || CASE WHEN i % 3 = 0 THEN jsonb_build_array(jsonb_build_object('type', 'team', 'id', ${id("tem", "i % 50 + 1")}))
                          ELSE '[]'::jsonb END AS targets
         FROM rows)
       INSERT INTO audit_events (organization_id, id, occurred_at, action, category, outcome, actor_type, actor_id,
         actor_membership_id, actor_label, credential_id, sso_connection_id, ip, user_agent, targets, target_ids, reason, request_id)
       SELECT $3, ${id("aev", "i")},
              date_trunc('milliseconds', $7::timestamptz - (i::float8 / $8::int) * interval '${DAYS} days'),
              action, category, CASE WHEN i % 33 = 0 THEN 'denied' ELSE 'succeeded' END, actor_type,
              CASE actor_type WHEN 'user' THEN ${id("usr", "actor + 1")} WHEN 'api_key' THEN ${id("apk", "actor + 1")}
                   WHEN 'scim' THEN ${id("scc", "actor + 1")} WHEN 'worker' THEN ${id("wrk", "actor + 1")}
                   ELSE 'system:' || CASE WHEN i % 2 = 0 THEN 'connector-sync' ELSE 'audit-retention' END END,
              CASE WHEN actor_type IN ('user', 'api_key') THEN ${id("om", "actor + 1")} END,
              CASE WHEN actor_type IN ('user', 'api_key') THEN 'Person ' || actor || ' <person' || actor || '@bench.example.com>' END,
              CASE actor_type WHEN 'user' THEN ${id("ses", "i % 500 + 1")} WHEN 'api_key' THEN ${id("apk", "actor + 1")}
                   WHEN 'scim' THEN ${id("sct", "actor + 1")} WHEN 'worker' THEN ${id("wkt", "actor + 1")} END,
              NULL,
              CASE WHEN actor_type IN ('user', 'api_key', 'scim') THEN '10.0.' || (actor % 4) || '.' || (i % 250 + 1) END,
              CASE actor_type WHEN 'user' THEN 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Safari/605.1.15'
                   WHEN 'api_key' THEN 'orgplane-cli/1.4.0 node/22' WHEN 'scim' THEN 'Okta SCIM Client 1.0.0' END,
              targets, ARRAY(SELECT t ->> 'id' FROM jsonb_array_elements(targets) t),
              CASE WHEN i % 33 = 0 THEN 'insufficient_role' END,
              CASE WHEN actor_type <> 'system' THEN md5(i::text)::uuid::text END
       FROM events RETURNING 1`,
      [from, to, organizationId, actions.length, actions.map(([action]) => action), actions.map(([, category]) => category), now.toISOString(), EVENTS]
    )
    process.stdout.write(` ${to}`)
  }
  // As autovacuum would have by now (this dev Postgres runs with autovacuum off): statistics, and a VACUUM, which an
  // insert-only table gets too (autovacuum_vacuum_insert_threshold): the visibility map, and the GIN index's
  // pending list merged (unmerged, every target filter reads it whole, a few MB per partition).
  await orgplane.sql("VACUUM ANALYZE audit_events", [])
  process.stdout.write(` (${((performance.now() - started) / 1000).toFixed(1)} s)\n`)
  return {
    actorId: `usr_01jbench${"3".padStart(18, "0")}`,
    targetId: `om_01jbench${"42".padStart(18, "0")}`,
    hotTargetId: `tem_01jbench${"7".padStart(18, "0")}`,
    quietTargetId: `om_01jbench${String(PEOPLE + 1).padStart(18, "0")}`
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The list statement (audit/AuditRepository.ts), for its plans.

const columns = `e.id, e.organization_id, e.occurred_at, e.action, e.category, e.outcome,
  json_build_object('type', e.actor_type, 'id', e.actor_id, 'membershipId', e.actor_membership_id, 'label', e.actor_label)::text AS actor,
  json_build_object('credentialId', e.credential_id, 'ssoConnectionId', e.sso_connection_id, 'ip', e.ip, 'userAgent', e.user_agent)::text AS via,
  e.targets::text AS targets, e.reason, e.request_id`

const listStatement = (where: string, after: string, order: "ASC" | "DESC") =>
  `SELECT ${columns} FROM audit_events e WHERE e.organization_id = $1 AND ${where} AND ${after}
   ORDER BY e.occurred_at ${order}, e.id ${order} LIMIT 51`

/** A cursor as the server signs it (platform/Keyset.ts): the sort key's parts, HMAC-SHA256 of list, filters, payload. */
const signCursor = (key: Buffer, binding: string, occurredAt: string, eventId: string) => {
  const payload = Buffer.from(`${occurredAt}\u0000${eventId}`, "utf8").toString("base64url")
  const signature = createHmac("sha256", key).update(`audit-events\n${binding}\n${payload}`).digest().subarray(0, 16).toString("base64url")
  return `${payload}.${signature}`
}

// ---------------------------------------------------------------------------------------------------------------

export const measure = async (options: {
  readonly agent: Agent
  readonly orgplane: Orgplane
  readonly baseline: Target | undefined
  readonly requests: number
  readonly concurrency: number
}) => {
  const { agent, baseline, concurrency, orgplane, requests } = options
  const warmUp = Math.min(requests, Math.max(concurrency * 10, Math.round(requests / 10)))
  const organization = await organize(agent, orgplane)
  const key = { "x-api-key": organization.key }
  // An older checkout (ORGPLANE_BENCH_ROOT) without the audit log: its writes only, beside the baseline's without.
  const audited = (await request(agent, orgplane.url, "GET", "/v1/audit/events?limit=1", key)).status === 200
  if (!audited) console.log("this checkout has no audit log (GET /v1/audit/events is not 200): the writes only, without an audit INSERT")
  const seeded = audited && EVENTS > 0 ? await seed(orgplane, organization.organizationId) : undefined
  const rssAfterSeeding = await orgplane.rss()

  // 1. The cost of auditing on a mutating request.
  console.log(
    `\n${requests} requests a row after ${warmUp} to warm up, ${concurrency} keep-alive connections, the owner's API key;` +
      ` latency in ms; cpu: the server's own CPU time per request, in µs`
  )
  console.log(`${"request".padEnd(LABEL)} | ${header}`)
  console.log(`${"-".repeat(LABEL)}-+-${"-".repeat(header.length)}`)
  let round = 0
  const rename = (target: Target, audit: "on" | "off") => async () => {
    const r = round++
    const teamId = organization.teamIds[r % TEAMS]!
    const reply = await request(agent, target.url, "PATCH", `/v1/teams/${teamId}`, { ...key, ...(audit === "off" ? { "x-bench-audit": "off" } : {}) }, {
      name: `Audit team ${r % TEAMS} (${target.name} ${audit} ${r})`
    })
    if (reply.status !== 200) throw new Error(`${target.name}: PATCH /v1/teams/${teamId}: HTTP ${reply.status} ${reply.text.slice(0, 300)}`)
  }
  const mutations: Array<[string, Target, "on" | "off"]> = [
    [audited ? "orgplane (audited, always)" : "orgplane (no audit log)", orgplane, "on"],
    ...(baseline === undefined ? [] : [
      ...(audited ? [["baseline, with the audit INSERT", baseline, "on"]] : []),
      ["baseline, without it", baseline, "off"]
    ] as Array<[string, Target, "on" | "off"]>)
  ]
  const teamUpdates = async () =>
    audited
      ? Number((await orgplane.query(
        `SELECT count(*)::int AS n FROM audit_events WHERE organization_id = $1 AND action = 'team.update'`,
        [organization.organizationId]
      ))[0]!.n)
      : 0
  const renamed = new Map<string, Figures>()
  const eventsBefore = await teamUpdates()
  for (const [label, target, audit] of mutations) {
    await run(target, warmUp, concurrency, rename(target, audit))
    const measured = await run(target, requests, concurrency, rename(target, audit))
    renamed.set(label, measured)
    console.log(`${`PATCH /v1/teams/{id}: ${label}`.padEnd(LABEL)} | ${figures(measured)}`)
  }
  if (audited) {
    const written = (await teamUpdates()) - eventsBefore
    const expected = (warmUp + requests) * (baseline === undefined ? 1 : 2)
    console.log(`team.update events written during the renames: ${written} (expected ${expected}: one per audited request)`)
  }
  const withInsert = renamed.get("baseline, with the audit INSERT")
  const without = renamed.get("baseline, without it")
  const ours = renamed.get("orgplane (audited, always)")
  if (ours !== undefined && withInsert !== undefined && without !== undefined) {
    const ms = (f: Figures) => 1000 / f.perSecond
    console.log(
      `the audit INSERT at the database (baseline): p50 +${(withInsert.p50 - without.p50).toFixed(2)} ms, ` +
        `${((withInsert.p50 / without.p50 - 1) * 100).toFixed(0)}% of p50; throughput ${((1 - withInsert.perSecond / without.perSecond) * 100).toFixed(0)}% lower` +
        ` (${(ms(withInsert) - ms(without)).toFixed(2)} ms a request at this concurrency); baseline CPU +${
          ((withInsert.cpuPerRequest ?? 0) - (without.cpuPerRequest ?? 0)).toFixed(0)
        } µs a request`
    )
    console.log(
      `orgplane / baseline with the INSERT: req/s ${(ours.perSecond / withInsert.perSecond).toFixed(2)}, p50 ${(ours.p50 / withInsert.p50).toFixed(2)}, ` +
        `CPU ${((ours.cpuPerRequest ?? 0) / (withInsert.cpuPerRequest ?? 1)).toFixed(2)}`
    )
  }

  if (seeded === undefined) return
  const { organizationId } = organization

  // 2. The list over the seeded events.
  const [instance] = await orgplane.query(`SELECT value FROM instance_settings WHERE key = 'cursor_key'`, [])
  const cursorKey = Buffer.from(String(instance!.value), "base64")
  const list = "/v1/audit/events?limit=50"
  const first = await ok("list", request(agent, orgplane.url, "GET", list, key))
  const firstLast = first.items[PAGE - 1]
  // The harness signs cursors as the server does; checked against the server's own first cursor.
  if (signCursor(cursorKey, "[]", firstLast.occurredAt, firstLast.id) !== first.nextCursor) {
    throw new Error("the harness's cursor differs from the server's: cannot make a deep cursor")
  }
  const total = Number((await orgplane.query(`SELECT count(*)::int AS n FROM audit_events WHERE organization_id = $1`, [organizationId]))[0]!.n)
  const deepPage = Math.max(2, Math.floor((total * 0.9) / PAGE))
  const [before] = await orgplane.query(
    `SELECT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, id FROM audit_events
     WHERE organization_id = $1 ORDER BY occurred_at DESC, id DESC OFFSET $2 LIMIT 1`,
    [organizationId, (deepPage - 1) * PAGE - 1]
  )
  const deepCursor = signCursor(cursorKey, "[]", String(before!.at), String(before!.id))
  const filtered = (name: string, value: string) => `${list}&${name}=${encodeURIComponent(value)}`
  const lists: ReadonlyArray<readonly [string, string, string]> = [
    [`GET /v1/audit/events p.1`, list, "first"],
    [`GET /v1/audit/events p.${deepPage}`, `${list}&cursor=${encodeURIComponent(deepCursor)}`, "deep"],
    [`GET /v1/audit/events order=asc p.1`, `${list}&order=asc`, "asc"],
    [`GET /v1/audit/events action=member.*`, filtered("action", "member.*"), "action"],
    [`GET /v1/audit/events action=sso.connection.*`, filtered("action", "sso.connection.*"), "rare action"],
    [`GET /v1/audit/events action=capability.* (none)`, filtered("action", "capability.*"), "no action"],
    [`GET /v1/audit/events action=member.role.update`, filtered("action", "member.role.update"), "exact action"],
    [`GET /v1/audit/events actorId=usr_… (1 in ${ACTORS})`, filtered("actorId", seeded.actorId), "actor"],
    [`GET /v1/audit/events targetId=om_… (1 in ${PEOPLE})`, filtered("targetId", seeded.targetId), "target"],
    [`GET /v1/audit/events targetId=tem_… (1 in 150)`, filtered("targetId", seeded.hotTargetId), "hot target"],
    [`GET /v1/audit/events targetId=om_… (none)`, filtered("targetId", seeded.quietTargetId), "no target"]
  ]
  console.log(`\nthe list over ${total} events of one organization, ${PAGE} a page (${requests} requests a row after ${warmUp}):`)
  console.log(`${"request".padEnd(LABEL)} | ${header}  items`)
  console.log(`${"-".repeat(LABEL)}-+-${"-".repeat(header.length)}-------`)
  const listed = new Map<string, Figures>()
  for (const [label, path, name] of lists) {
    const check = await ok(label, request(agent, orgplane.url, "GET", path, key))
    const get = async () => {
      const reply = await request(agent, orgplane.url, "GET", path, key)
      if (reply.status !== 200) throw new Error(`GET ${path}: HTTP ${reply.status} ${reply.text.slice(0, 300)}`)
    }
    await run(orgplane, warmUp, concurrency, get)
    const measured = await run(orgplane, requests, concurrency, get)
    listed.set(name, measured)
    console.log(`${label.padEnd(LABEL)} | ${figures(measured)} ${String(check.items.length).padStart(6)}`)
  }
  const firstFigures = listed.get("first")!
  const deepFigures = listed.get("deep")!
  console.log(
    `p.${deepPage} / p.1: median latency ${(deepFigures.p50 / firstFigures.p50).toFixed(2)}, req/s ${(deepFigures.perSecond / firstFigures.perSecond).toFixed(2)}` +
      (firstFigures.cpuPerRequest !== undefined && deepFigures.cpuPerRequest !== undefined
        ? `, server CPU per request ${(deepFigures.cpuPerRequest / firstFigures.cpuPerRequest).toFixed(2)}`
        : "")
  )

  // The plans: orgplane's list statement with each case's condition, on its own connection.
  const at = String(before!.at)
  const plans: ReadonlyArray<readonly [string, string, ReadonlyArray<unknown>, string, "ASC" | "DESC"]> = [
    ["p.1", "true", [], "true", "DESC"],
    [`p.${deepPage}`, "true", [at, String(before!.id)], "(e.occurred_at, e.id) < ($2::timestamptz, $3)", "DESC"],
    ["order=asc p.1", "true", [], "true", "ASC"],
    ["action=member.*", "e.action LIKE $2", ["member.%"], "true", "DESC"],
    ["action=sso.connection.*", "e.action LIKE $2", ["sso.connection.%"], "true", "DESC"],
    ["action=capability.* (none)", "e.action LIKE $2", ["capability.%"], "true", "DESC"],
    ["action=member.role.update", "e.action = $2", ["member.role.update"], "true", "DESC"],
    ["actorId", "e.actor_id = $2", [seeded.actorId], "true", "DESC"],
    ["targetId (1 in 1000)", "e.target_ids @> ARRAY[$2]::text[]", [seeded.targetId], "true", "DESC"],
    ["targetId (1 in 150)", "e.target_ids @> ARRAY[$2]::text[]", [seeded.hotTargetId], "true", "DESC"],
    ["targetId (none)", "e.target_ids @> ARRAY[$2]::text[]", [seeded.quietTargetId], "true", "DESC"]
  ]
  console.log(`\nplans of the list statement (EXPLAIN ANALYZE; the indexes it used, its time at the database):`)
  for (const [label, where, params, after, order] of plans) {
    const rows = await orgplane.query(`EXPLAIN (ANALYZE, BUFFERS) ${listStatement(where, after, order)}`, [organizationId, ...params])
    const text = rows.map((row) => String(Object.values(row)[0])).join("\n")
    const indexes = [...new Set([...text.matchAll(/(?:Index Scan(?: Backward)? using|Index Only Scan(?: Backward)? using|Bitmap Index Scan on) (\S+)/g)]
      .map((match) => match[1]!.replace(/^audit_events_p\d{6}_/, "…_")))]
    // Seq scans of partitions that held rows (an empty month ahead is scanned sequentially, at no cost).
    const seqScans = [...text.matchAll(/Seq Scan on (\S+) \S+\s+\(cost=[^)]*\) \(actual time=[^ ]+ rows=(\d+) loops=\d+\)(?:\n\s+Filter: [^\n]+\n\s+Rows Removed by Filter: (\d+))?/g)]
      .filter((match) => Number(match[2]) + Number(match[3] ?? 0) > 0)
      .map((match) => Number(match[2]) + Number(match[3] ?? 0))
    const time = /Execution Time: ([\d.]+) ms/.exec(text)?.[1]
    const removed = [...text.matchAll(/Rows Removed by (?:Filter|Index Recheck): (\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0)
    const sort = /Sort Method: ([^\n]+)/.exec(text)?.[1]
    console.log(
      `  ${label.padEnd(28)} ${(time === undefined ? "?" : `${time} ms`).padStart(11)}  ${indexes.join(", ")}` +
        `${seqScans.length > 0 ? `; seq scans of ${seqScans.length} partitions (${seqScans.reduce((a, b) => a + b, 0)} rows)` : ""}` +
        `${removed > 0 ? `; rows read and filtered out: ${removed}` : ""}${sort === undefined ? "" : `; sort: ${sort.trim()}`}`
    )
    if (process.env.ORGPLANE_BENCH_AUDIT_PLANS === "1") console.log(text.replace(/^/gm, "      "))
  }

  // 3. The export of everything, each format once, the server's RSS sampled while it streams.
  console.log(`\nexport of all ${total}+ events (the stream read as it arrives; RSS and V8 heap in use sampled every 100 ms):`)
  console.log(`${"format".padEnd(10)} | ${"events".padStart(9)} ${"MB".padStart(7)} ${"seconds".padStart(8)} ${"events/s".padStart(9)} ${"cpu µs/event".padStart(12)} ${
    "RSS before".padStart(11)
  } ${"peak RSS".padStart(9)} ${"heap before".padStart(12)} ${"peak heap".padStart(10)}`)
  for (const format of ["ndjson", "csv"] as const) {
    const rssBefore = await orgplane.rss()
    const heapBefore = await orgplane.heap()
    let peak = rssBefore ?? 0
    let peakHeap = heapBefore ?? 0
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, (await orgplane.rss()) ?? 0)
        peakHeap = Math.max(peakHeap, (await orgplane.heap()) ?? 0)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    })()
    const cpuBefore = await orgplane.cpu()
    const started = performance.now()
    const { bytes, lines, status } = await new Promise<{ bytes: number; lines: number; status: number }>((resolve, reject) => {
      const req = httpRequest(new URL(`/v1/audit/export?format=${format}`, orgplane.url), { method: "GET", agent, headers: key }, (res) => {
        let bytes = 0
        let lines = 0
        res.on("data", (chunk: Buffer) => {
          bytes += chunk.length
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++
        })
        res.on("end", () => resolve({ bytes, lines, status: res.statusCode ?? 0 }))
        res.on("error", reject)
      })
      req.on("error", reject)
      req.end()
    })
    const seconds = (performance.now() - started) / 1000
    const cpuAfter = await orgplane.cpu()
    sampling = false
    await sampler
    if (status !== 200) throw new Error(`export ${format}: HTTP ${status}`)
    const events = format === "csv" ? lines - 1 : lines
    console.log(
      `${format.padEnd(10)} | ${String(events).padStart(9)} ${(bytes / 1e6).toFixed(0).padStart(7)} ${seconds.toFixed(1).padStart(8)} ${
        (events / seconds).toFixed(0).padStart(9)
      } ${(cpuBefore === undefined || cpuAfter === undefined ? "" : ((cpuAfter - cpuBefore) / events).toFixed(1)).padStart(12)} ${
        `${Math.round((rssBefore ?? 0) / 1e6)} MB`.padStart(11)
      } ${`${Math.round(peak / 1e6)} MB`.padStart(9)} ${`${Math.round((heapBefore ?? 0) / 1e6)} MB`.padStart(12)} ${
        `${Math.round(peakHeap / 1e6)} MB`.padStart(10)
      }`
    )
  }
  console.log(`orgplane RSS after seeding: ${Math.round((rssAfterSeeding ?? 0) / 1e6)} MB; at the end: ${Math.round(((await orgplane.rss()) ?? 0) / 1e6)} MB`)
}

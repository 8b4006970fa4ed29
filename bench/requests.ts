/**
 * The request path section of `pnpm bench` (`--requests` or ORGPLANE_BENCH_REQUESTS=1): the per-request cost of
 * orgplane on its hottest small endpoints, against servers doing the same SQL on the same database without it:
 *
 * - Five endpoints, each with the owner's session and with the owner's scoped API key: `GET /v1/me`,
 *   `GET /v1/members?limit=50` (a page of an organization of 200 members), `GET /v1/api-keys`, `POST /v1/teams` (a new
 *   team, a unique name each time), `PATCH /v1/members/{id}` (a role change, members in turn, each flipped between
 *   admin and member, so concurrent requests rarely wait for the same row).
 * - Servers: orgplane (server.ts), the raw node:http + pg baseline (baseline.ts, requests-baseline.ts) and Hono + zod +
 *   pg (hono.ts), both sending orgplane's statements (statements.ts); on the embedded database orgplane only.
 * - First (Postgres), `prepare` seeds and verifies on the wire that the baselines send what orgplane sends
 *   (`verifyStatements`); then `measure`: interleaved rounds (each endpoint on every server in turn, the first server
 *   rotating), `--duration` seconds each (default 8), `--rounds` (default 3), ORGPLANE_BENCH_CONCURRENCY keep-alive
 *   connections (default 32), after a warm-up; the medians over the rounds of req/s, p50, the server's CPU per request
 *   and the share of its CPU time spent in garbage collection, and issue 59's targets beside them.
 *
 * Started by run.ts with its servers; prints figures, asserts nothing but that the baselines match (verify).
 */
import { randomBytes } from "node:crypto"
import { Agent, request as httpRequest } from "node:http"
import { firstDifference } from "./difference.js"
import { loadFor, ok, percentile, request } from "./http.js"
import type { SqlTrace, Statement } from "./sql-trace.js"
import * as Statements from "./statements.js"

/** What a server reports over the IPC channel (child.ts): CPU time used so far (µs), GC time so far (ms). */
export interface Usage {
  readonly cpuMicros?: number
  readonly gcMillis?: number
  readonly rss?: number
  readonly heapUsed?: number
  readonly heapTotal?: number
  /** Memory of C++ objects bound to JS ones (Buffers among them), and of ArrayBuffers alone (process.memoryUsage). */
  readonly external?: number
  readonly arrayBuffers?: number
}

export interface Target {
  readonly name: string
  readonly url: string
  readonly usage: () => Promise<Usage | undefined>
  /** Starts the server's sampling heap profiler (child.ts). */
  readonly allocationStart?: (() => Promise<void>) | undefined
  /** Stops it: the bytes allocated since the start (an estimate from the samples). */
  readonly allocationStop?: (() => Promise<number | undefined>) | undefined
}

/** Bytes `target` allocates per request of `endpoint`, over one window of `seconds` (its sampling heap profiler). */
export const allocationPerRequest = async (agent: Agent, target: Target, endpoint: Endpoint, seconds: number, concurrency: number, counter: { next: number }) => {
  if (target.allocationStart === undefined || target.allocationStop === undefined) return undefined
  await target.allocationStart()
  const figures = await measureOnce(agent, target, endpoint, seconds, concurrency, counter)
  const bytes = await target.allocationStop()
  return bytes === undefined ? undefined : bytes / Math.max(1, figures.perSecond * seconds)
}

export interface Orgplane extends Target {
  /** A statement on the server's own database connection (bulk seeding). */
  readonly sql: (text: string, params: ReadonlyArray<unknown>) => Promise<number>
}

/** Only these endpoints (ids, comma-separated: me, members, api-keys, teams, role, and the same with `:key`); all when unset. */
const ONLY = (process.env.ORGPLANE_BENCH_ENDPOINTS ?? "").split(",").map((id) => id.trim()).filter((id) => id !== "")
const MEMBERS = 200
/** The bench's API key's scopes: reading members, changing roles, managing teams and keys. */
export const KEY_SCOPES = ["members.read", "members.readDirectory", "members.changeRole", "teams.read", "teams.manage", "apiKeys.manage"]
const PASSWORD = "correct horse battery"

export interface Seeded {
  readonly token: string
  readonly key: string
  /** The 199 members other than the owner. */
  readonly memberIds: ReadonlyArray<string>
}

/** An id of the prefix made from a row number: `<prefix>_01jbench` and 18 digits (26 base32 characters). */
const id = (prefix: string, n: string) => `'${prefix}_01jbench' || lpad((${n})::text, 18, '0')`

/**
 * The owner over the API (sign-up, organization, API key), then 199 people and their memberships with SQL on the
 * server's own connection (the rows invitations would make; 199 sign-ups' password hashing would take longer than
 * the measurement).
 */
const seed = async (agent: Agent, orgplane: Orgplane): Promise<Seeded> => {
  const started = performance.now()
  const base = orgplane.url
  const tag = randomBytes(4).toString("hex")
  const signedUp = await ok("sign-up", request(agent, base, "POST", "/v1/auth/sign-up", {}, { email: `owner.${tag}@example.com`, password: PASSWORD, name: "Owner" }))
  const token = signedUp.session.token as string
  const auth = { authorization: `Bearer ${token}` }
  const organizationId = (await ok("organization", request(agent, base, "POST", "/v1/organizations", auth, { name: "Bench" }))).organization.id as string
  // A key with the scopes its five endpoints need (a key made without scopes takes no guarded action: 403).
  const key = (await ok("API key", request(agent, base, "POST", "/v1/api-keys", auth, { name: "bench", scopes: KEY_SCOPES }))).key as string
  await orgplane.sql(
    `INSERT INTO users (id, email, name, password_hash, created_at, updated_at)
     SELECT ${id("usr", "n")}, 'person.' || n || '.${tag}@example.com', 'Person ' || n, 'x', now(), now()
     FROM generate_series(1, $1::int) AS n RETURNING 1`,
    [MEMBERS - 1]
  )
  await orgplane.sql(
    `INSERT INTO memberships (id, organization_id, user_id, role, created_at, updated_at)
     SELECT ${id("om", "n")}, $2, ${id("usr", "n")}, 'member', now() + n * interval '1 millisecond', now()
     FROM generate_series(1, $1::int) AS n RETURNING 1`,
    [MEMBERS - 1, organizationId]
  )
  const memberIds = Array.from({ length: MEMBERS - 1 }, (_, n) => `om_01jbench${String(n + 1).padStart(18, "0")}`)
  console.log(`seeded: an owner with a session and an API key, ${MEMBERS} members (${((performance.now() - started) / 1000).toFixed(1)} s)`)
  return { token, key, memberIds }
}

export interface Endpoint {
  /** Its name in ORGPLANE_BENCH_ENDPOINTS. */
  readonly id: string
  readonly label: string
  readonly write: boolean
  /** The i-th request (i counts across servers and rounds, so that writes never repeat). */
  readonly send: (agent: Agent, base: string, i: number) => ReturnType<typeof request>
  /** Whether its bodies carry fresh ids and times (writes): compared by shape, not byte for byte. */
  readonly fresh?: boolean
}

/** The credentials each endpoint is sent with: the owner's session, and the owner's scoped API key. */
export const CREDENTIALS = ["session", "key"] as const
export type Credential = typeof CREDENTIALS[number]

export const endpoints = (seeded: Seeded): ReadonlyArray<Endpoint> => {
  const headers: Record<Credential, Record<string, string>> = {
    session: { authorization: `Bearer ${seeded.token}` },
    key: { "x-api-key": seeded.key }
  }
  const run = Date.now().toString(36)
  // Role changes: the session's in the first half of the members, the key's in the second, so that neither finds a
  // member already at the role it sets (which would answer without writing).
  const half = Math.floor(seeded.memberIds.length / 2)
  const membersOf: Record<Credential, ReadonlyArray<string>> = { session: seeded.memberIds.slice(0, half), key: seeded.memberIds.slice(half, 2 * half) }
  const suffix: Record<Credential, string> = { session: "", key: ":key" }
  const by: Record<Credential, string> = { session: "session", key: "API key" }
  return CREDENTIALS.flatMap((credential): ReadonlyArray<Endpoint> => {
    const auth = headers[credential]
    const members = membersOf[credential]
    return [
      { id: `me${suffix[credential]}`, label: `GET /v1/me (${by[credential]})`, write: false, send: (agent, base) => request(agent, base, "GET", "/v1/me", auth) },
      {
        id: `members${suffix[credential]}`,
        label: `GET /v1/members 50 of 200 (${by[credential]})`,
        write: false,
        send: (agent, base) => request(agent, base, "GET", "/v1/members?limit=50", auth)
      },
      { id: `api-keys${suffix[credential]}`, label: `GET /v1/api-keys (${by[credential]})`, write: false, send: (agent, base) => request(agent, base, "GET", "/v1/api-keys", auth) },
      {
        id: `teams${suffix[credential]}`,
        label: `POST /v1/teams (${by[credential]})`,
        write: true,
        fresh: true,
        send: (agent, base, i) => request(agent, base, "POST", "/v1/teams", auth, { name: `Team ${run}-${credential}-${i}` })
      },
      {
        id: `role${suffix[credential]}`,
        label: `PATCH /v1/members/{id} role (${by[credential]})`,
        write: true,
        fresh: true,
        // Members in turn; each one's role flips on each pass (admin, member, admin, ...).
        send: (agent, base, i) =>
          request(agent, base, "PATCH", `/v1/members/${members[i % members.length]}`, auth, {
            role: Math.floor(i / members.length) % 2 === 0 ? "admin" : "member"
          })
      }
    ]
  })
}

export interface Figures {
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
  /** The server's CPU time per request, µs. */
  readonly cpu: number | undefined
  /** GC time over CPU time in the window, %. */
  readonly gc: number | undefined
}

/** The largest resident set each server reported after a measurement, in bytes. */
const peakRss = new Map<string, number>()

/** One measurement: `endpoint` on `target` from `concurrency` connections for `seconds`. */
export const measureOnce = async (agent: Agent, target: Target, endpoint: Endpoint, seconds: number, concurrency: number, counter: { next: number }): Promise<Figures> => {
  const before = await target.usage()
  const { count, latencies, seconds: wall } = await loadFor(seconds, concurrency, async () => {
    const i = counter.next++
    const reply = await endpoint.send(agent, target.url, i)
    if (reply.status < 200 || reply.status >= 300) throw new Error(`${endpoint.label} on ${target.name}: HTTP ${reply.status} ${reply.text.slice(0, 300)}`)
  })
  const after = await target.usage()
  if (after?.rss !== undefined) peakRss.set(target.name, Math.max(peakRss.get(target.name) ?? 0, after.rss))
  const cpuMicros = before?.cpuMicros === undefined || after?.cpuMicros === undefined ? undefined : after.cpuMicros - before.cpuMicros
  const gcMillis = before?.gcMillis === undefined || after?.gcMillis === undefined ? undefined : after.gcMillis - before.gcMillis
  return {
    perSecond: count / wall,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpu: cpuMicros === undefined || count === 0 ? undefined : cpuMicros / count,
    gc: cpuMicros === undefined || gcMillis === undefined || cpuMicros === 0 ? undefined : (100 * gcMillis * 1000) / cpuMicros
  }
}

export const median = (values: ReadonlyArray<number | undefined>) => {
  const known = values.filter((value): value is number => value !== undefined).sort((a, b) => a - b)
  if (known.length === 0) return undefined
  const middle = Math.floor(known.length / 2)
  return known.length % 2 === 1 ? known[middle] : (known[middle - 1]! + known[middle]!) / 2
}

/** Ids, times and generated names replaced, so that two writes' bodies can be compared by shape. */
const shape = (text: string) =>
  text
    .replace(/"(\d{4}-\d\d-\d\dT[^"]*)"/g, "\"<time>\"")
    .replace(/"([a-z]{2,4})_[0-9a-z]{26}"/g, (_, prefix) => `"${prefix}_<id>"`)
    .replace(/"Team [0-9a-z]+-[a-z]+-\d+"/g, "\"Team <n>\"")
    .replace(/"Person \d+"/g, "\"Person <n>\"")
    .replace(/"person\.\d+\./g, "\"person.<n>.")

/**
 * Each server's answer to the same request, against orgplane's: byte for byte (writes: by shape, ids, times and the
 * people's names aside, since each write acts on another member); the differences, in words.
 */
export const compare = async (agent: Agent, targets: ReadonlyArray<Target>, endpoint: Endpoint, counter: { next: number }) => {
  const [orgplane, ...others] = targets
  const differences: Array<string> = []
  if (orgplane === undefined || others.length === 0) return differences
  const ours = await endpoint.send(agent, orgplane.url, counter.next++)
  for (const other of others) {
    const theirs = await endpoint.send(agent, other.url, counter.next++)
    const [a, b] = endpoint.fresh === true ? [shape(ours.text), shape(theirs.text)] : [ours.text, theirs.text]
    if (ours.status !== theirs.status) {
      differences.push(`${other.name} answers ${endpoint.label} with ${theirs.status}, orgplane with ${ours.status}: ${theirs.text.slice(0, 200)}`)
    } else if (a !== b) {
      let difference: string | undefined
      try {
        difference = firstDifference(JSON.parse(a), JSON.parse(b))
      } catch {
        difference = undefined
      }
      differences.push(
        `${other.name} differs on ${endpoint.label}: ${difference ?? "same JSON, other key order or spacing"}\n` +
          `  orgplane: ${a.slice(0, 300)}\n  ${other.name}: ${b.slice(0, 300)}`
      )
    }
  }
  return differences
}

/** The server's own background work (its cluster runner, instance-wide jobs), which shares its connections. */
const background = (text: string) => /orgplane_cluster|cluster_|FROM pg_locks WHERE locktype = 'advisory'|^\s*\/\* instance-wide/.test(text)

/** A credential's last use, written off the request path at most once a minute: not counted against a request. */
const touches = new Set([Statements.touchSession, Statements.touchApiKey])

/**
 * The statements a server ran for one request: those seen from `from` on, without its background work (single
 * statements, and the transactions around one: BEGIN ... COMMIT on one connection) and the credentials' touches.
 */
const requestStatements = (seen: ReadonlyArray<Statement>) => {
  const dropped = new Set<number>()
  const open = new Map<number, Array<number>>()
  for (const [i, statement] of seen.entries()) {
    const text = statement.text.trim().toUpperCase()
    if (text === "BEGIN") open.set(statement.connection, [i])
    else open.get(statement.connection)?.push(i)
    if (background(statement.text)) {
      dropped.add(i)
      for (const j of open.get(statement.connection) ?? []) dropped.add(j)
    }
    if (text === "COMMIT" || text === "ROLLBACK") {
      const block = open.get(statement.connection) ?? []
      if (block.some((j) => dropped.has(j))) for (const j of block) dropped.add(j)
      open.delete(statement.connection)
    }
  }
  return seen.filter((statement, i) => !dropped.has(i) && !touches.has(statement.text))
}

/** What `--verify` found: the statements per request of each server and endpoint, by endpoint id then server name. */
export type StatementCounts = ReadonlyMap<string, ReadonlyMap<string, number>>

/** The statements per request orgplane sent before issue 59's work (statements.ts's lists at 2026-11-27, a4044e3f): the target is not to send more. */
const TODAY: Record<string, number> = { me: 1, members: 2, "api-keys": 2, teams: 7, role: 8 }

const show = (statement: Statement | undefined) =>
  statement === undefined ? "(none)" : `${statement.named ? "named" : "unnamed"} [${statement.types.join(",")}] ${statement.messages || "-"} ${statement.text.replace(/\s+/g, " ").trim().slice(0, 300)}`

/**
 * `--verify`: each server runs on its own proxy (sql-trace.ts); one request of each endpoint is sent to each, a
 * quiet moment before and after, and what each ran for it is compared with orgplane's, statement by statement:
 * the text byte for byte, whether it ran by name (prepared once per connection) or unnamed, the parameter types of
 * its Parse, and their number; orgplane's texts are also held to statements.ts's lists. The frontend messages of
 * each statement's cycle are printed beside (`pg` sends a Describe with every run, `@effect/sql-pg` only with the
 * Parse: not counted as a difference). The answers are compared too (compare). Any difference fails the run.
 */
const verifyStatements = async (
  agent: Agent,
  servers: ReadonlyArray<{ readonly target: Target; readonly trace: SqlTrace }>,
  list: ReadonlyArray<Endpoint>,
  counters: ReadonlyArray<{ next: number }>
): Promise<StatementCounts> => {
  console.log(`\nverify: one request of each endpoint to each server, their statements seen on the wire (sql-trace.ts) against orgplane's`)
  const failures: Array<string> = []
  const counts = new Map<string, Map<string, number>>()
  const messages = new Map<string, Set<string>>()
  for (const [e, endpoint] of list.entries()) {
    const ran = new Map<string, ReadonlyArray<Statement>>()
    for (const { target, trace } of servers) {
      // The first request after a quiet moment, so that nothing of the one before is still arriving.
      await new Promise((resolve) => setTimeout(resolve, 300))
      const from = trace.statements.length
      const reply = await endpoint.send(agent, target.url, counters[e]!.next++)
      if (reply.status < 200 || reply.status >= 300) failures.push(`${endpoint.label} on ${target.name}: HTTP ${reply.status} ${reply.text.slice(0, 300)}`)
      await new Promise((resolve) => setTimeout(resolve, 300))
      const statements = requestStatements(trace.statements.slice(from))
      ran.set(target.name, statements)
      counts.set(endpoint.id, (counts.get(endpoint.id) ?? new Map()).set(target.name, statements.length))
      for (const statement of statements) messages.set(target.name, (messages.get(target.name) ?? new Set()).add(statement.messages))
    }
    const ours = ran.get("orgplane") ?? []
    const wanted = Statements.expected[endpoint.id] ?? []
    const line: Array<string> = []
    const check = (name: string, theirs: ReadonlyArray<string | Statement>, same: (a: Statement, b: string | Statement) => boolean) => {
      const at = Array.from({ length: Math.max(ours.length, theirs.length) }, (_, i) => i).find((i) =>
        ours[i] === undefined || theirs[i] === undefined || !same(ours[i]!, theirs[i]!)
      )
      if (at === undefined) return line.push(`${name} same`)
      line.push(`${name} DIFFERS`)
      const other = theirs[at]
      failures.push(
        `${endpoint.label}: ${name} differs from orgplane at statement ${at + 1} (orgplane ran ${ours.length}, ${name} ${theirs.length}):\n` +
          `    orgplane: ${show(ours[at])}\n    ${name}: ${typeof other === "string" ? other.replace(/\s+/g, " ").slice(0, 300) : show(other)}\n` +
          `    orgplane ran, in order:\n${ours.map((statement, i) => `      ${i + 1}. ${show(statement).slice(0, 200)}`).join("\n")}`
      )
    }
    check("statements.ts", wanted, (a, b) => a.text === b)
    for (const { target } of servers.slice(1)) {
      check(target.name, ran.get(target.name) ?? [], (a, b) =>
        typeof b !== "string" && a.text === b.text && a.named === b.named && a.types.join(",") === b.types.join(","))
    }
    for (const difference of await compare(agent, servers.map(({ target }) => target), endpoint, counters[e]!)) failures.push(difference)
    const perServer = servers.map(({ target }) => `${target.name} ${counts.get(endpoint.id)?.get(target.name) ?? "-"}`).join(", ")
    console.log(`  ${endpoint.label.padEnd(44)} ${perServer} statements; ${line.join(", ")}`)
  }
  for (const { target } of servers) console.log(`  ${target.name} sends per statement: ${[...(messages.get(target.name) ?? [])].join(" ")}`)
  if (failures.length > 0) {
    throw new Error(`verify: ${failures.length} difference(s); statements.ts, requests-baseline.ts and hono.ts are to follow what orgplane does now:\n${failures.join("\n")}`)
  }
  console.log("verify: the baseline and Hono run what orgplane runs, statement by statement, and answer the same")
  return counts
}

// ---------------------------------------------------------------------------------------------------------------
// Output.

export const num = (value: number | undefined, digits: number, width: number) => (value === undefined ? "-" : value.toFixed(digits)).padStart(width)

const mark = (good: boolean | undefined) => (good === undefined ? "-" : good ? "met" : "NOT MET")

/** Seconds a measurement lasts (`--duration`), rounds (`--rounds`), connections (ORGPLANE_BENCH_CONCURRENCY). */
export interface Method {
  readonly seconds: number
  readonly rounds: number
  readonly concurrency: number
}

export const DEFAULT_METHOD: Method = { seconds: 8, rounds: 3, concurrency: 32 }

/** The bench's organization, its owner's session and key, and each endpoint's request counter (writes never repeat). */
export interface Prepared {
  readonly seeded: Seeded
  readonly counters: ReadonlyArray<{ next: number }>
  readonly statements: StatementCounts | undefined
}

const listOf = (seeded: Seeded) => {
  const list = endpoints(seeded).filter((endpoint) => ONLY.length === 0 || ONLY.includes(endpoint.id))
  if (list.length === 0) throw new Error(`ORGPLANE_BENCH_ENDPOINTS=${ONLY.join(",")} names none of ${endpoints(seeded).map((endpoint) => endpoint.id).join(", ")}`)
  return list
}

/**
 * Seeds the organization on `orgplane` and, when the servers run on proxies (`traces`, Postgres), verifies the
 * baselines against it (`verifyStatements`); otherwise compares the answers only.
 */
export const prepare = async (options: {
  readonly orgplane: Orgplane
  readonly others: ReadonlyArray<Target>
  readonly traces?: ReadonlyArray<SqlTrace> | undefined
}): Promise<Prepared> => {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 })
  try {
    const seeded = await seed(agent, options.orgplane)
    const list = listOf(seeded)
    const counters = list.map(() => ({ next: 0 }))
    const targets = [options.orgplane, ...options.others]
    // A read once on every server first: what a first request starts (the credential's last use, recorded off the
    // request path) is then done before what is compared.
    for (const [e, endpoint] of list.entries()) {
      if (!endpoint.write) for (const target of targets) await endpoint.send(agent, target.url, counters[e]!.next++)
    }
    await new Promise((resolve) => setTimeout(resolve, 300))
    if (options.traces !== undefined) {
      const servers = targets.map((target, i) => ({ target, trace: options.traces![i]! }))
      return { seeded, counters, statements: await verifyStatements(agent, servers, list, counters) }
    }
    // One endpoint after the other: a role change between two servers' answers to the members page would differ.
    for (const [e, endpoint] of list.entries()) {
      for (const difference of await compare(agent, targets, endpoint, counters[e]!)) process.stderr.write(`warning: ${difference}\n`)
    }
    return { seeded, counters, statements: undefined }
  } finally {
    agent.destroy()
  }
}

/** The issue's targets. */
const TARGETS = { raw: 0.7, hono: 1.0, cpu: 2, gc: 3, allocation: 2 }

export const measure = async (options: {
  readonly orgplane: Target
  readonly baseline: Target | undefined
  readonly hono: Target | undefined
  readonly prepared: Prepared
  readonly method: Method
}) => {
  const { concurrency, rounds, seconds } = options.method
  const { counters, seeded, statements } = options.prepared
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  try {
    const targets = [options.orgplane, options.baseline, options.hono].filter((target): target is Target => target !== undefined)
    const list = listOf(seeded)

    const warmUp = Math.max(1, Math.min(3, seconds / 2))
    process.stdout.write(`warm-up: ${warmUp} s per endpoint and server`)
    for (const [e, endpoint] of list.entries()) {
      for (const target of targets) await measureOnce(agent, target, endpoint, warmUp, concurrency, counters[e]!)
    }
    process.stdout.write("\n")

    const runs = list.map(() => targets.map((): Array<Figures> => []))
    const started = performance.now()
    for (let round = 0; round < rounds; round++) {
      process.stdout.write(`${round === 0 ? "rounds:" : ""} ${round + 1}`)
      for (const [e, endpoint] of list.entries()) {
        for (let k = 0; k < targets.length; k++) {
          const t = (k + round) % targets.length
          runs[e]![t]!.push(await measureOnce(agent, targets[t]!, endpoint, seconds, concurrency, counters[e]!))
        }
      }
    }
    process.stdout.write(` (${((performance.now() - started) / 1000).toFixed(0)} s)\n`)
    // Allocation apart from the CPU figures: the profiler's sampling costs some CPU of its own.
    const allocated = list.map(() => targets.map((): number | undefined => undefined))
    for (const [e, endpoint] of list.entries()) {
      for (const [t, target] of targets.entries()) {
        allocated[e]![t] = await allocationPerRequest(agent, target, endpoint, seconds, concurrency, counters[e]!)
      }
    }

    const medians = runs.map((byTarget) =>
      byTarget.map((figures): Figures => ({
        perSecond: median(figures.map((f) => f.perSecond))!,
        p50: median(figures.map((f) => f.p50))!,
        p99: median(figures.map((f) => f.p99))!,
        cpu: median(figures.map((f) => f.cpu)),
        gc: median(figures.map((f) => f.gc))
      }))
    )
    console.log(
      `\n${rounds} interleaved rounds of ${seconds} s per endpoint and server (the first server rotating), ${concurrency} keep-alive connections,` +
        ` after ${warmUp} s to warm up; medians over the rounds. cpu: the server process's CPU time per request; gc: its GC time / CPU time`
    )
    const width = Math.max(...list.map((endpoint) => endpoint.label.length))
    console.log(`\n${"".padEnd(width)} | ${targets.map((target) => `${target.name.padStart(8)} req/s  p50 ms  cpu µs   gc %  KB/req`).join(" | ")} | req/s by round`)
    for (const [e, endpoint] of list.entries()) {
      const cells = targets.map((_, t) => {
        const m = medians[e]![t]!
        const bytes = allocated[e]![t]
        return `${num(m.perSecond, 0, 14)} ${num(m.p50, 2, 7)} ${num(m.cpu, 0, 7)} ${num(m.gc, 1, 6)} ${num(bytes === undefined ? undefined : bytes / 1024, 1, 7)}`
      })
      console.log(`${endpoint.label.padEnd(width)} | ${cells.join(" | ")} | ${targets.map((_, t) => runs[e]![t]!.map((f) => f.perSecond.toFixed(0)).join(" ")).join(" / ")}`)
    }
    console.log(`\nresident memory, the largest read after a measurement: ${
      targets.map((target) => `${target.name} ${num(peakRss.has(target.name) ? peakRss.get(target.name)! / 1048576 : undefined, 0, 0)} MB`).join(", ")
    }`)

    /**
     * orgplane's figure over another server's, the median of the rounds' ratios: in one round the servers ran one
     * after the other, so a ratio within a round is less moved by the machine's load drifting between rounds.
     */
    const paired = (e: number, name: string, figure: (f: Figures) => number | undefined) => {
      const t = targets.findIndex((target) => target.name === name)
      if (t < 0) return undefined
      const ours = runs[e]![0]!
      return median(runs[e]![t]!.map((theirs, round) => {
        const a = figure(ours[round]!)
        const b = figure(theirs)
        return a === undefined || b === undefined || b === 0 ? undefined : a / b
      }))
    }
    const cell = (value: number | undefined, digits: number, good: (value: number) => boolean, suffix = "") =>
      `${value === undefined ? "-" : `${value.toFixed(digits)}${suffix}`} ${mark(value === undefined ? undefined : good(value))}`
    console.log(`\nissue 59's targets (ratios: the median of the ${rounds} rounds' paired ratios; statements per request as --verify saw them, orgplane / raw / Hono, and before the work)`)
    const header = ["endpoint", `req/s ÷ raw (≥ ${TARGETS.raw})`, `÷ Hono (≥ ${TARGETS.hono.toFixed(1)})`, `CPU/request ÷ raw (≤ ${TARGETS.cpu})`, `GC (< ${TARGETS.gc}%)`, `bytes/request ÷ raw (≤ ${TARGETS.allocation})`, "statements/request (not above before)"]
    console.log(`| ${header.join(" | ")} |\n|${header.map(() => " --- ").join("|")}|`)
    for (const [e, endpoint] of list.entries()) {
      const ours = medians[e]![0]!
      const raw = medians[e]![targets.findIndex((target) => target.name === "baseline")]
      const cpu = paired(e, "baseline", (f) => f.cpu)
      const counted = statements?.get(endpoint.id)
      const before = TODAY[endpoint.id.replace(/:key$/, "")]
      const ourCount = counted?.get("orgplane")
      const rawIndex = targets.findIndex((target) => target.name === "baseline")
      const ourBytes = allocated[e]![0]
      const rawBytes = rawIndex < 0 ? undefined : allocated[e]![rawIndex]
      const bytes = ourBytes === undefined || rawBytes === undefined || rawBytes === 0 ? undefined : ourBytes / rawBytes
      const statementCell = counted === undefined
        ? "-"
        : `${[...counted.values()].join(" / ")} (before ${before ?? "-"}) ${mark(ourCount === undefined || before === undefined ? undefined : ourCount <= before)}`
      console.log(
        `| ${endpoint.label} | ${cell(paired(e, "baseline", (f) => f.perSecond), 2, (v) => v >= TARGETS.raw)} | ${cell(paired(e, "hono", (f) => f.perSecond), 2, (v) => v >= TARGETS.hono)}` +
          ` | ${cell(cpu, 2, (v) => v <= TARGETS.cpu)}${ours.cpu === undefined || raw?.cpu === undefined ? "" : ` (${ours.cpu.toFixed(0)} against ${raw.cpu.toFixed(0)} µs)`}` +
          ` | ${cell(ours.gc, 1, (v) => v < TARGETS.gc, "%")}` +
          ` | ${cell(bytes, 2, (v) => v <= TARGETS.allocation)}${ourBytes === undefined || rawBytes === undefined ? "" : ` (${(ourBytes / 1024).toFixed(1)} against ${(rawBytes / 1024).toFixed(1)} KB)`}` +
          ` | ${statementCell} |`
      )
    }
  } finally {
    agent.destroy()
  }
}

/**
 * `--tracing`: the same endpoints on orgplane three times, each server exporting its spans to a loopback OTLP
 * receiver or not: tracing off (the default), sampled at 1% and at 100% (`OTEL_TRACES_SAMPLER=traceidratio`).
 * Interleaved rounds as `measure`; beside each figure its ratio to tracing off, and the spans the receiver took.
 */
export const measureTracing = async (options: {
  readonly variants: ReadonlyArray<Target>
  readonly prepared: Prepared
  readonly method: Method
  /** The spans each variant sent so far (by its service name), forgetting them (the receiver keeps every span). */
  readonly received: () => ReadonlyMap<string, number>
}) => {
  const { concurrency, rounds, seconds } = options.method
  const { counters, seeded } = options.prepared
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  try {
    const list = listOf(seeded)
    const warmUp = Math.max(1, Math.min(3, seconds / 2))
    for (const [e, endpoint] of list.entries()) {
      for (const target of options.variants) await measureOnce(agent, target, endpoint, warmUp, concurrency, counters[e]!)
    }
    options.received()
    const runs = list.map(() => options.variants.map((): Array<Figures> => []))
    const spans = options.variants.map(() => 0)
    const requests = options.variants.map(() => 0)
    for (let round = 0; round < rounds; round++) {
      for (const [e, endpoint] of list.entries()) {
        for (let k = 0; k < options.variants.length; k++) {
          const t = (k + round) % options.variants.length
          const figures = await measureOnce(agent, options.variants[t]!, endpoint, seconds, concurrency, counters[e]!)
          runs[e]![t]!.push(figures)
          requests[t] = requests[t]! + figures.perSecond * seconds
        }
      }
    }
    // The exporters send in batches, every few seconds: a moment for the last ones.
    await new Promise((resolve) => setTimeout(resolve, 6000))
    const received = options.received()
    options.variants.forEach((target, t) => (spans[t] = received.get(target.name) ?? 0))
    console.log(
      `\ntracing: ${rounds} interleaved rounds of ${seconds} s per endpoint and server, ${concurrency} connections; medians; ` +
        `÷ off: req/s against tracing off`
    )
    const width = Math.max(...list.map((endpoint) => endpoint.label.length))
    console.log(`${"".padEnd(width)} | ${options.variants.map((target) => `${target.name.padStart(6)} req/s  cpu µs  gc %  ÷ off`).join(" | ")}`)
    for (const [e, endpoint] of list.entries()) {
      const medians = runs[e]!.map((figures) => ({
        perSecond: median(figures.map((f) => f.perSecond))!,
        cpu: median(figures.map((f) => f.cpu)),
        gc: median(figures.map((f) => f.gc))
      }))
      const off = medians[0]!
      const cells = medians.map((m) =>
        `${num(m.perSecond, 0, 12)} ${num(m.cpu, 0, 7)} ${num(m.gc, 1, 5)} ${num(m.perSecond / off.perSecond, 2, 6)}`
      )
      console.log(`${endpoint.label.padEnd(width)} | ${cells.join(" | ")}`)
    }
    console.log(`spans received: ${options.variants.map((target, t) => `${target.name} ${spans[t]} (${(spans[t]! / Math.max(1, requests[t]!)).toFixed(2)} a request)`).join(", ")}`)
  } finally {
    agent.destroy()
  }
}

/** The bytes of the body `path` answers with these headers, as sent (before any decoding). */
const sentBytes = (base: string, path: string, headers: Record<string, string>) =>
  new Promise<number>((resolve, reject) => {
    httpRequest(new URL(path, base), { headers }, (res) => {
      let bytes = 0
      res.on("data", (chunk: Buffer) => (bytes += chunk.length)).on("end", () => resolve(bytes))
      res.on("error", reject)
    }).on("error", reject).end()
  })

/**
 * `--compression`: orgplane alone, `GET /v1/me` (a small answer: sent as it is whatever the client takes) and
 * `GET /v1/members?limit=50` (a page of 50 members), each asked with no `Accept-Encoding`, with `gzip` and with `br`
 * (platform/Compression.ts). Interleaved rounds as `measure`; medians of req/s and the server's CPU per request,
 * the bytes of the body as sent, and the CPU beside the same request asked uncompressed.
 */
export const measureCompression = async (options: { readonly orgplane: Target; readonly prepared: Prepared; readonly method: Method }) => {
  const { concurrency, rounds, seconds } = options.method
  const { seeded } = options.prepared
  const auth = { authorization: `Bearer ${seeded.token}` }
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  const codings = [undefined, "gzip", "br"] as const
  const paths = [["GET /v1/me", "/v1/me"], ["GET /v1/members 50 of 200", "/v1/members?limit=50"]] as const
  const rows = paths.flatMap(([label, path]) =>
    codings.map((coding) => {
      const headers: Record<string, string> = coding === undefined ? auth : { ...auth, "accept-encoding": coding }
      const endpoint: Endpoint = {
        id: `${path}:${coding ?? "identity"}`,
        label: `${label}, ${coding === undefined ? "no Accept-Encoding" : `Accept-Encoding: ${coding}`}`,
        write: false,
        send: (agent, base) => request(agent, base, "GET", path, headers)
      }
      return { endpoint, path, headers }
    })
  )
  try {
    const counter = { next: 0 }
    const warmUp = Math.max(1, Math.min(3, seconds / 2))
    for (const row of rows) await measureOnce(agent, options.orgplane, row.endpoint, warmUp, concurrency, counter)
    const runs = rows.map((): Array<Figures> => [])
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < rows.length; k++) {
        const r = (k + round) % rows.length
        runs[r]!.push(await measureOnce(agent, options.orgplane, rows[r]!.endpoint, seconds, concurrency, counter))
      }
    }
    const bytes = await Promise.all(rows.map((row) => sentBytes(options.orgplane.url, row.path, row.headers)))
    console.log(
      `\ncompression: ${rounds} interleaved rounds of ${seconds} s per row, ${concurrency} connections; medians; ` +
        `÷ plain: the server's CPU per request against the same request with no Accept-Encoding`
    )
    const width = Math.max(...rows.map((row) => row.endpoint.label.length))
    console.log(`${"".padEnd(width)} |  req/s  cpu µs   bytes  ÷ plain`)
    const cpus = runs.map((figures) => median(figures.map((f) => f.cpu)))
    rows.forEach((row, r) => {
      const plain = cpus[r - (r % codings.length)]
      const cpu = cpus[r]
      console.log(
        `${row.endpoint.label.padEnd(width)} | ${num(median(runs[r]!.map((f) => f.perSecond)), 0, 6)} ${num(cpu, 0, 7)} ${String(bytes[r]).padStart(7)} ${
          num(cpu === undefined || plain === undefined ? undefined : cpu / plain, 2, 8)
        }`
      )
    })
  } finally {
    agent.destroy()
  }
}

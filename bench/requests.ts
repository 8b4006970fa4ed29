/**
 * The request path section of `pnpm bench` (`--requests [n]` or ORGPLANE_BENCH_REQUESTS=1): the per-request cost of
 * orgplane on its hottest small endpoints, against servers doing the same SQL on the same database with no framework:
 *
 * - Reads: `GET /v1/me` (a session), `GET /v1/members?limit=50` (a page of an organization of 200 members),
 *   `GET /v1/api-keys` (an API key).
 * - Writes: `POST /v1/teams` (a new team, a unique name each time), `PATCH /v1/members/{id}` (a role change, members
 *   in turn, each flipped between admin and member, so concurrent requests rarely wait for the same row).
 * - Servers: orgplane (server.ts), the node:http + pg baseline (baseline.ts) and, when started, Hono + zod + pg
 *   (hono.ts); on the embedded database orgplane only.
 * - Method: [n] requests (default 300) per endpoint and server in each of ROUNDS interleaved rounds (round r runs
 *   each endpoint on every server in turn, the first server rotating with r), from ORGPLANE_BENCH_CONCURRENCY
 *   keep-alive connections (default 32), after a warm-up; the figure is the median over the rounds of req/s, p50,
 *   p99, the server's CPU per request, and the share of its CPU time spent in garbage collection.
 *
 * Quick by design (no catalog): the engineer tuning the request path runs it again and again. Started by run.ts with
 * its servers; prints figures, asserts nothing.
 */
import { randomBytes } from "node:crypto"
import { Agent } from "node:http"
import { firstDifference } from "./difference.js"
import { load, ok, request } from "./http.js"
import type { SqlTrace } from "./sql-trace.js"
import * as Statements from "./statements.js"

/** What a server reports over the IPC channel (child.ts): CPU time used so far (µs), GC time so far (ms). */
interface Usage {
  readonly cpuMicros?: number
  readonly gcMillis?: number
  readonly rss?: number
}

export interface Target {
  readonly name: string
  readonly url: string
  readonly usage: () => Promise<Usage | undefined>
}

export interface Orgplane extends Target {
  /** A statement on the server's own database connection (bulk seeding). */
  readonly sql: (text: string, params: ReadonlyArray<unknown>) => Promise<number>
}

export const DEFAULT_REQUESTS = 300
export const DEFAULT_CONCURRENCY = 32
const ROUNDS = 5
/** Only these endpoints (ids, comma-separated: me, members, api-keys, teams, role); all when unset. */
const ONLY = (process.env.ORGPLANE_BENCH_ENDPOINTS ?? "").split(",").map((id) => id.trim()).filter((id) => id !== "")
const MEMBERS = 200
const PASSWORD = "correct horse battery"

interface Seeded {
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
  const key = (await ok("API key", request(agent, base, "POST", "/v1/api-keys", auth, { name: "bench" }))).key as string
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

interface Endpoint {
  /** Its name in ORGPLANE_BENCH_ENDPOINTS. */
  readonly id: string
  readonly label: string
  readonly write: boolean
  /** The i-th request (i counts across servers and rounds, so that writes never repeat). */
  readonly send: (agent: Agent, base: string, i: number) => ReturnType<typeof request>
  /** Whether its bodies carry fresh ids and times (writes): compared by shape, not byte for byte. */
  readonly fresh?: boolean
}

const endpoints = (seeded: Seeded): ReadonlyArray<Endpoint> => {
  const session = { authorization: `Bearer ${seeded.token}` }
  const apiKey = { "x-api-key": seeded.key }
  const run = Date.now().toString(36)
  const members = seeded.memberIds
  return [
    { id: "me", label: "GET /v1/me", write: false, send: (agent, base) => request(agent, base, "GET", "/v1/me", session) },
    { id: "members", label: "GET /v1/members?limit=50", write: false, send: (agent, base) => request(agent, base, "GET", "/v1/members?limit=50", session) },
    { id: "api-keys", label: "GET /v1/api-keys (API key)", write: false, send: (agent, base) => request(agent, base, "GET", "/v1/api-keys", apiKey) },
    {
      id: "teams",
      label: "POST /v1/teams",
      write: true,
      fresh: true,
      send: (agent, base, i) => request(agent, base, "POST", "/v1/teams", session, { name: `Team ${run}-${i}` })
    },
    {
      id: "role",
      label: "PATCH /v1/members/{id} role",
      write: true,
      fresh: true,
      // Members in turn; each one's role flips on each pass (admin, member, admin, ...).
      send: (agent, base, i) =>
        request(agent, base, "PATCH", `/v1/members/${members[i % members.length]}`, session, {
          role: Math.floor(i / members.length) % 2 === 0 ? "admin" : "member"
        })
    }
  ]
}

interface Figures {
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

const measureOnce = async (agent: Agent, target: Target, endpoint: Endpoint, count: number, concurrency: number, counter: { next: number }): Promise<Figures> => {
  const before = await target.usage()
  const { latencies, seconds } = await load(count, concurrency, async () => {
    const i = counter.next++
    const reply = await endpoint.send(agent, target.url, i)
    if (reply.status < 200 || reply.status >= 300) throw new Error(`${endpoint.label} on ${target.name}: HTTP ${reply.status} ${reply.text.slice(0, 300)}`)
  })
  const after = await target.usage()
  if (after?.rss !== undefined) peakRss.set(target.name, Math.max(peakRss.get(target.name) ?? 0, after.rss))
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!
  const cpuMicros = before?.cpuMicros === undefined || after?.cpuMicros === undefined ? undefined : after.cpuMicros - before.cpuMicros
  const gcMillis = before?.gcMillis === undefined || after?.gcMillis === undefined ? undefined : after.gcMillis - before.gcMillis
  return {
    perSecond: count / seconds,
    p50: at(0.5),
    p99: at(0.99),
    cpu: cpuMicros === undefined ? undefined : cpuMicros / count,
    gc: cpuMicros === undefined || gcMillis === undefined || cpuMicros === 0 ? undefined : (100 * gcMillis * 1000) / cpuMicros
  }
}

const median = (values: ReadonlyArray<number | undefined>) => {
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
    .replace(/"Team [0-9a-z]+-\d+"/g, "\"Team <n>\"")
    .replace(/"Person \d+"/g, "\"Person <n>\"")
    .replace(/"person\.\d+\./g, "\"person.<n>.")

/**
 * Each server's answer to the same request, against orgplane's: byte for byte (writes: by shape, ids, times and the
 * people's names aside, since each write acts on another member); warns on a difference.
 */
const compare = async (agent: Agent, targets: ReadonlyArray<Target>, endpoint: Endpoint, counter: { next: number }) => {
  const [orgplane, ...others] = targets
  if (orgplane === undefined || others.length === 0) return
  // A read once on every server first: what a first request starts (an API key's last use, recorded off the
  // request path) is then done before the answers compared.
  if (endpoint.write !== true) {
    for (const target of targets) await endpoint.send(agent, target.url, counter.next++)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const ours = await endpoint.send(agent, orgplane.url, counter.next++)
  for (const other of others) {
    const theirs = await endpoint.send(agent, other.url, counter.next++)
    const [a, b] = endpoint.fresh === true ? [shape(ours.text), shape(theirs.text)] : [ours.text, theirs.text]
    if (ours.status !== theirs.status) {
      process.stderr.write(`warning: ${other.name} answers ${endpoint.label} with ${theirs.status}, orgplane with ${ours.status}: ${theirs.text.slice(0, 200)}\n`)
    } else if (a !== b) {
      let difference: string | undefined
      try {
        difference = firstDifference(JSON.parse(a), JSON.parse(b))
      } catch {
        difference = undefined
      }
      process.stderr.write(
        `warning: ${other.name} differs on ${endpoint.label}: ${difference ?? "same JSON, other key order or spacing"}\n` +
          `  orgplane: ${a.slice(0, 300)}\n  ${other.name}: ${b.slice(0, 300)}\n`
      )
    }
  }
}

/** A statement's text with its whitespace collapsed, for comparing texts laid out differently. */
const squeeze = (text: string) => text.replace(/\s+/g, " ").trim()

/** The server's own background work (its cluster runner, instance-wide jobs), which shares its connections. */
const background = (text: string) => /orgplane_cluster|cluster_|^\s*\/\* instance-wide/.test(text)

/**
 * `--check-sql`: one request of each endpoint to orgplane, whose database connection runs through `trace`, and the
 * statements it sent against the copy the baseline and Hono run (statements.ts's `expected`). Background work is
 * left out: its single statements, and its transactions (BEGIN ... COMMIT on one connection around one of them).
 */
const checkStatements = async (agent: Agent, orgplane: Target, trace: SqlTrace, list: ReadonlyArray<Endpoint>) => {
  console.log(`\norgplane's statements, seen on its database connection, against statements.ts:`)
  let differences = 0
  /** Whether orgplane ran its statements by name (prepared once per connection), unnamed, or both. */
  const runBy = new Set<boolean>()
  for (const [e, endpoint] of list.entries()) {
    // The first request after a quiet moment, so that nothing of the one before is still arriving.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const from = trace.statements.length
    // Request e of the endpoint: for the role change, member e made admin (all are members until then).
    const reply = await endpoint.send(agent, orgplane.url, e)
    if (reply.status < 200 || reply.status >= 300) throw new Error(`${endpoint.label}: HTTP ${reply.status} ${reply.text.slice(0, 300)}`)
    await new Promise((resolve) => setTimeout(resolve, 300))
    const seen = trace.statements.slice(from)
    const dropped = new Set<number>()
    const open = new Map<number, Array<number>>()
    for (const [i, statement] of seen.entries()) {
      const text = squeeze(statement.text).toUpperCase()
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
    const kept = seen.filter((statement, i) => !dropped.has(i) && squeeze(statement.text) !== squeeze(Statements.touchApiKey))
    for (const statement of kept) if (squeeze(statement.text).toUpperCase() !== "BEGIN" && squeeze(statement.text).toUpperCase() !== "COMMIT") runBy.add(statement.named)
    const ran = kept.map((statement) => statement.text)
    const wanted = Statements.expected[endpoint.id] ?? []
    const at = Array.from({ length: Math.max(ran.length, wanted.length) }, (_, i) => i).find((i) => squeeze(ran[i] ?? "") !== squeeze(wanted[i] ?? ""))
    if (at === undefined) {
      console.log(`  ${endpoint.label.padEnd(34)} same ${ran.length} statements`)
    } else {
      differences++
      const show = (text: string | undefined) => (text === undefined ? "(none)" : squeeze(text).slice(0, 400))
      console.log(`  ${endpoint.label.padEnd(34)} DIFFERS at statement ${at + 1} of ${ran.length} (statements.ts has ${wanted.length}):`)
      console.log(`    orgplane:      ${show(ran[at])}\n    statements.ts: ${show(wanted[at])}`)
      console.log(`    orgplane ran, in order:\n${ran.map((text, i) => `      ${i + 1}. ${squeeze(text).slice(0, 160)}`).join("\n")}`)
    }
  }
  const prepares = runBy.has(true) && !runBy.has(false)
  console.log(
    `orgplane runs them ${runBy.has(true) ? (runBy.has(false) ? "some by name (prepared), some unnamed" : "by name: prepared once per connection") : "unnamed: parsed on every run"}` +
      ` (the baseline and Hono run them ${Statements.PREPARED ? "by name" : "unnamed"}${
        prepares === Statements.PREPARED ? ": alike" : `: measure with ORGPLANE_BENCH_PREPARED=${prepares ? 1 : 0}`
      })`
  )
  console.log(
    differences === 0
      ? "the baseline and Hono run what orgplane runs"
      : `${differences} endpoint(s) differ: update statements.ts (and requests-baseline.ts, hono.ts) to what orgplane runs now`
  )
}

// ---------------------------------------------------------------------------------------------------------------
// Output.

const num = (value: number | undefined, digits: number, width: number) => (value === undefined ? "-" : value.toFixed(digits)).padStart(width)
const LABEL = 12
const HEADER = `${"server".padEnd(LABEL)} | ${"req/s".padStart(7)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"cpu µs".padStart(7)} ${"gc %".padStart(6)} | req/s by round`

const mark = (good: boolean | undefined) => (good === undefined ? "  -  " : good ? " ok  " : "MISS ")

/** The issue's figures on the embedded database before this work (req/s); the target is twice them. */
const EMBEDDED_BEFORE: Record<string, number> = {
  "GET /v1/me": 394,
  "GET /v1/members?limit=50": 178,
  "GET /v1/api-keys (API key)": 323
}

export const measure = async (options: {
  readonly orgplane: Orgplane
  readonly baseline: Target | undefined
  readonly hono: Target | undefined
  readonly requests: number
  readonly concurrency: number
  /** `--check-sql`: orgplane's database connection runs through this proxy; check its statements, measure nothing. */
  readonly trace?: SqlTrace | undefined
}) => {
  const { concurrency, requests } = options
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  try {
    const seeded = await seed(agent, options.orgplane)
    const targets = [options.orgplane, options.baseline, options.hono].filter((target): target is Target => target !== undefined)
    const list = endpoints(seeded).filter((endpoint) => ONLY.length === 0 || ONLY.includes(endpoint.id))
    if (list.length === 0) throw new Error(`ORGPLANE_BENCH_ENDPOINTS=${ONLY.join(",")} names none of me, members, api-keys, teams, role`)
    if (options.trace !== undefined) return await checkStatements(agent, options.orgplane, options.trace, list)
    const counters = list.map(() => ({ next: 0 }))
    for (const [e, endpoint] of list.entries()) await compare(agent, targets, endpoint, counters[e]!)

    const warmUp = Math.max(concurrency * 5, Math.round(requests / 2))
    process.stdout.write(`warm-up: ${warmUp} requests per endpoint and server`)
    for (const [e, endpoint] of list.entries()) {
      for (const target of targets) await measureOnce(agent, target, endpoint, warmUp, concurrency, counters[e]!)
    }
    process.stdout.write("\n")

    const runs = list.map(() => targets.map((): Array<Figures> => []))
    const started = performance.now()
    for (let round = 0; round < ROUNDS; round++) {
      process.stdout.write(`${round === 0 ? "rounds:" : ""} ${round + 1}`)
      for (const [e, endpoint] of list.entries()) {
        for (let k = 0; k < targets.length; k++) {
          const t = (k + round) % targets.length
          runs[e]![t]!.push(await measureOnce(agent, targets[t]!, endpoint, requests, concurrency, counters[e]!))
        }
      }
    }
    process.stdout.write(` (${((performance.now() - started) / 1000).toFixed(0)} s)\n`)

    console.log(
      `\n${requests} requests per endpoint and server in each of ${ROUNDS} interleaved rounds, ${concurrency} keep-alive connections,` +
        ` after ${warmUp} to warm up; medians over the rounds. cpu: the server's CPU time per request; gc: its GC time / CPU time`
    )
    const medians = runs.map((byTarget) =>
      byTarget.map((figures): Figures => ({
        perSecond: median(figures.map((f) => f.perSecond))!,
        p50: median(figures.map((f) => f.p50))!,
        p99: median(figures.map((f) => f.p99))!,
        cpu: median(figures.map((f) => f.cpu)),
        gc: median(figures.map((f) => f.gc))
      }))
    )
    for (const [e, endpoint] of list.entries()) {
      console.log(`\n${endpoint.label}\n${HEADER}`)
      for (const [t, target] of targets.entries()) {
        const m = medians[e]![t]!
        console.log(
          `${target.name.padEnd(LABEL)} | ${num(m.perSecond, 0, 7)} ${num(m.p50, 2, 8)} ${num(m.p99, 2, 8)} ${num(m.cpu, 0, 7)} ${num(m.gc, 1, 6)} | ${
            runs[e]![t]!.map((f) => f.perSecond.toFixed(0)).join(" ")
          }`
        )
      }
    }

    console.log(`\nresident memory, the largest read after a measurement: ${
      targets.map((target) => `${target.name} ${num(peakRss.has(target.name) ? peakRss.get(target.name)! / 1048576 : undefined, 0, 0)} MB`).join(", ")
    }`)

    // The issue's targets.
    const at = (e: number, name: string) => {
      const t = targets.findIndex((target) => target.name === name)
      return t < 0 ? undefined : medians[e]![t]
    }
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
    if (options.baseline !== undefined) {
      console.log(`\ntargets: the ratios are the median of the ${ROUNDS} rounds' ratios (servers side by side in each round)`)
      console.log(`${"".padEnd(34)} | orgplane/baseline req/s >= 0.7 | orgplane/baseline cpu <= 2 | orgplane/hono req/s >= 1 | orgplane gc < 3%`)
      for (const [e, endpoint] of list.entries()) {
        const ours = at(e, "orgplane")!
        const vsBaseline = paired(e, "baseline", (f) => f.perSecond)
        const cpu = paired(e, "baseline", (f) => f.cpu)
        const vsHono = paired(e, "hono", (f) => f.perSecond)
        console.log(
          `${endpoint.label.padEnd(34)} | ${num(vsBaseline, 2, 24)} ${mark(vsBaseline === undefined ? undefined : vsBaseline >= 0.7)}` +
            ` | ${num(cpu, 2, 20)} ${mark(cpu === undefined ? undefined : cpu <= 2)}` +
            ` | ${num(vsHono, 2, 18)} ${mark(vsHono === undefined ? undefined : vsHono >= 1)}` +
            ` | ${num(ours.gc, 1, 9)}% ${mark(ours.gc === undefined ? undefined : ours.gc < 3)}`
        )
      }
    } else {
      // The embedded database: the issue's figures before (req/s), the target twice them, and the GC share.
      console.log(`\n${"targets (embedded database)".padEnd(34)} | orgplane req/s >= 2 × before | orgplane gc < 3%`)
      for (const [e, endpoint] of list.entries()) {
        const ours = at(e, "orgplane")!
        const before = EMBEDDED_BEFORE[endpoint.label]
        const versus = before === undefined ? "" : `${(ours.perSecond / before).toFixed(2)} × ${before} `
        console.log(
          `${endpoint.label.padEnd(34)} | ${versus.padStart(22)} ${mark(before === undefined ? undefined : ours.perSecond >= 2 * before)}` +
            ` | ${num(ours.gc, 1, 9)}% ${mark(ours.gc === undefined ? undefined : ours.gc < 3)}`
        )
      }
    }
  } finally {
    agent.destroy()
  }
}

/**
 * Benchmarks: throughput and latency of a few hot endpoints of an orgplane server running in its own process, beside
 * a minimal `node:http` + `pg` baseline (baseline.ts) answering the same reads from the same database. Prints
 * figures; asserts nothing. Run `pnpm bench --help` for the options.
 */
// The policy table from the schema's source (the root package does not depend on @orgplane/schema).
import { Actions, Policy } from "../packages/schema/src/Policy.js"
import { FakeGitHub, GitRepo, OtlpReceiver } from "@orgplane/testkit"
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { Agent } from "node:http"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import pg from "pg"
import * as Audit from "./audit.js"
import * as Document from "./document.js"
import { measureCli } from "./cli.js"
import { firstDifference } from "./difference.js"
import * as EffectFloor from "./effect-floor.js"
import * as Layers from "./layers.js"
import * as Footprint from "./footprint.js"
import { request } from "./http.js"
import * as Memory from "./memory.js"
import { measurePlanning } from "./planning.js"
import * as Requests from "./requests.js"
import * as Scim from "./scim.js"
import { BENCH_SETUP_TOKEN } from "./setup-token.js"
import * as SqlTrace from "./sql-trace.js"
import * as Startup from "./startup.js"
import * as Telemetry from "./telemetry.js"

const usage = `Usage: pnpm bench [requests]

Starts the orgplane server in a child process, seeds an organization of 200 members in 20 teams over HTTP, and a
catalog: a plugin of 50 config objects listed in 3 marketplaces, and a plugin of 10,000 config objects; then sends
[requests] (default 2000) requests per endpoint after a short warm-up, from N keep-alive connections, and prints
req/s, p50 and p99 beside a minimal node:http + pg server doing the same SQL (bench/baseline.ts), the ratios that
matter (plugin reads against the baseline, a deep page against the first), and the resident memory of each server.

Environment:
  DATABASE_URL                 Postgres to run on. A fresh database is created there and dropped afterwards.
                               Unset: the embedded database, and no baseline (its one connection belongs to orgplane).
  ORGPLANE_BENCH_ROOT          Checkout whose server is measured (default: this repository), e.g. an older worktree.
  ORGPLANE_BENCH_CONCURRENCY   Concurrent connections (default 8).
  ORGPLANE_BENCH_MEMBERSHIPS   Config objects in the large plugin (default 10000), read 50 a page; the deep page is
                               page 150 (or the last full page of a smaller plugin).
  ORGPLANE_BENCH_MAPPINGS      Connector mappings of one target (default 100000), inserted with SQL through the
                               server's own database connection; their list is read 100 a page, first and ~90% in.
  ORGPLANE_BENCH_REPO_FILES    Files of the repository discovered through a fake GitHub (default 20000).
  ORGPLANE_BENCH_NODE_ARGS     Extra Node flags for the orgplane server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  ORGPLANE_BENCH_ALLOCATION_PROFILES=<folder>
                               Where each server writes the sampling heap profile of every allocation window of
                               --requests and --layers (child.ts; DevTools' Memory tab loads them).
  ORGPLANE_BENCH_MEMORY=1      Or --memory: only the memory bank section (bench/memory.ts): seed memories with SQL,
                               measure GET /v1/memory/search for random people and queries.
  ORGPLANE_BENCH_MEMORIES      Memories seeded for it (default 1000000), of ORGPLANE_BENCH_MEMORY_USERS people
                               (default 10000) of one organization.
  ORGPLANE_BENCH_TELEMETRY     1 (or the --telemetry flag): measure telemetry ingest only (bench/telemetry.ts):
                               events per second in batches of 50, [requests] requests, beside the baseline's INSERT.
  ORGPLANE_BENCH_SCIM=1        Or --scim: only directory provisioning (bench/scim.ts): ORGPLANE_BENCH_SCIM_USERS Users
                               (default 10000) by POST /Users, ORGPLANE_BENCH_SCIM_GROUPS groups (default 200) of 50
                               by POST /Groups, and [requests] (here default 500) filtered lookups a row, after the
                               first 1000 Users and at the full size, beside the baseline's same statements.
  ORGPLANE_BENCH_DOCUMENT=1    Or --document: only organization as code (bench/document.ts): the export, plans and the
                               apply of 1,000 changes in an organization of ORGPLANE_BENCH_DOCUMENT_MEMBERS members
                               (default 10000), ORGPLANE_BENCH_DOCUMENT_TEAMS teams (default 1000) and
                               ORGPLANE_BENCH_DOCUMENT_CATALOG plugins and marketplaces (default 2000) and
                               ORGPLANE_BENCH_DOCUMENT_OBJECTS config objects (default 2000) seeded with SQL.
  ORGPLANE_BENCH_AUDIT=1       Or --audit: only the audit log (bench/audit.ts): [requests] PATCH /v1/teams/{id} (one
                               event each) beside the baseline's same transaction with and without the audit INSERT;
                               ORGPLANE_BENCH_AUDIT_EVENTS events (default 1000000; 0: the writes only) of one
                               organization seeded with SQL over 300 days, GET /v1/audit/events first and 90% deep,
                               filtered, with the plans; the export of all of them as NDJSON and CSV (events/s, peak
                               RSS). A checkout without the audit log (ORGPLANE_BENCH_ROOT): its writes only.
                               ORGPLANE_BENCH_AUDIT_PLANS=1 prints the plans whole.
  ORGPLANE_BENCH_REQUESTS=1    Or --requests: only the request path (bench/requests.ts): GET /v1/me, /v1/members,
                               /v1/api-keys, POST /v1/teams, PATCH /v1/members/{id}, each with a session and with a
                               scoped API key, beside the raw node:http + pg baseline and Hono + zod + pg sending
                               orgplane's statements (checked on the wire first, Postgres); --rounds=N interleaved
                               rounds (default 3) of --duration=S seconds (default 8), 32 connections unless
                               ORGPLANE_BENCH_CONCURRENCY; medians, and issue 59's targets beside them.
                               ORGPLANE_BENCH_ENDPOINTS=me,members:key,...: only some of them.
                               --requests --verify (or --check-sql; Postgres): only the check on the wire.
  ORGPLANE_BENCH_FOOTPRINT=1   Or --footprint: memory and idle CPU (bench/footprint.ts) of orgplane, raw and Hono, one
                               at a time: idle CPU over --idle-cpu=S s (20), RSS idle, --load=S s (60) of GET /v1/me
                               at ORGPLANE_BENCH_FOOTPRINT_CONNECTIONS (100), peak RSS, --idle=S s (60), RSS after;
                               the idle CPU window after --settle=S s (40: the collection after seeding's load).
  ORGPLANE_BENCH_FLOOR=1       Or --floor: Effect's floor (bench/effect-floor.ts): a minimal HttpApi answering a page of
                               50 members (no database), with a plain schema and with orgplane's MemberPage, beside
                               a raw node:http server; --rounds=N of --duration=S s; req/s and CPU per request.
  ORGPLANE_BENCH_TRACING=1     Or --tracing (Postgres): the request path's endpoints on orgplane alone, three servers:
                               tracing off (the default), and exporting spans to a loopback OTLP receiver sampled at
                               1% and at 100% (OTEL_TRACES_SAMPLER=traceidratio); --rounds=N of --duration=S s.
  ORGPLANE_BENCH_LAYERS=1      Or --layers (Postgres): the request path's bill by layer (bench/layers.ts): one orgplane
                               server with every step, one leaving out each step of the server's platform/Ablation.ts,
                               one without the edge, one without any (4 at a time), and the raw baseline; GET /v1/me,
                               GET /v1/members and POST /v1/teams (ORGPLANE_BENCH_ENDPOINTS for others); --rounds=N
                               (3) of --duration=S s (3); CPU µs and KB allocated per request that each step costs.
  ORGPLANE_BENCH_COMPRESSION=1 Or --compression: orgplane alone, seeded as for --requests: GET /v1/me (small) and a
                               page of 50 members, each with no Accept-Encoding, with gzip and with br; req/s, CPU per
                               request and bytes sent; --rounds=N of --duration=S s.
  --issue-59                   --requests, --footprint, --startup, --floor and --tracing one after the other: issue
                               59's figures.
  ORGPLANE_BENCH_CLI=1         Or --cli: only the built CLI's start (bench/cli.ts; run \`pnpm build\` first): --help
                               and --version cold, [requests] (here default 10) runs each beside \`node -e 0\`, and
                               \`teams list --json\` to its first byte against a server it starts.
  ORGPLANE_BENCH_STARTUP=1     Or --startup: only start-up (bench/startup.ts): the time from spawning orgplane serve
                               to the first 200 from GET /health, [requests] starts a case (here default 5): Postgres
                               (DATABASE_URL, migrated), a reopened embedded folder, --data memory; as pnpm start
                               runs it and, when packages/cli/dist is built, through the built CLI.
`

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  process.stdout.write(usage)
  process.exit(0)
}

const positive = (text: string | undefined, fallback: number, what: string) => {
  if (text === undefined || text.trim() === "") return fallback
  const value = Number(text)
  if (!Number.isInteger(value) || value < 1) {
    process.stderr.write(`${what} must be a positive integer, got "${text}"\n\n${usage}`)
    process.exit(2)
  }
  return value
}

const REQUESTS_ARGUMENT = process.argv.slice(2).find((arg) => !arg.startsWith("-"))
const REQUESTS = positive(REQUESTS_ARGUMENT, 2000, "requests")
const CONCURRENCY = positive(process.env.ORGPLANE_BENCH_CONCURRENCY, 8, "ORGPLANE_BENCH_CONCURRENCY")
const MEMBERSHIPS = positive(process.env.ORGPLANE_BENCH_MEMBERSHIPS, 10_000, "ORGPLANE_BENCH_MEMBERSHIPS")
const MAPPINGS = positive(process.env.ORGPLANE_BENCH_MAPPINGS, 100_000, "ORGPLANE_BENCH_MAPPINGS")
const REPO_FILES = positive(process.env.ORGPLANE_BENCH_REPO_FILES, 20_000, "ORGPLANE_BENCH_REPO_FILES")
/** The mappings list is walked and read 100 a page; the deep page starts about 90% in. */
const MAPPINGS_PAGE = 100
const MAPPINGS_DEEP_PAGE = Math.max(1, Math.floor((MAPPINGS * 0.9) / MAPPINGS_PAGE))
/** The large plugin's config-objects list is read 50 at a time; the deep page is this one (1-based). */
const PAGE_SIZE = 50
const DEEP_PAGE = Math.max(1, Math.min(150, Math.floor(MEMBERSHIPS / PAGE_SIZE)))
const WARM_UP = Math.min(REQUESTS, Math.max(CONCURRENCY * 10, Math.round(REQUESTS / 10)))
const HERE = import.meta.dirname
const ROOT = Path.resolve(process.env.ORGPLANE_BENCH_ROOT ?? Path.join(HERE, ".."))
const DATABASE_URL = process.env.DATABASE_URL?.trim() || undefined
/** Extra Node flags for the orgplane server, for example `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it. */
const NODE_ARGS = (process.env.ORGPLANE_BENCH_NODE_ARGS ?? "").split(" ").filter((flag) => flag !== "")
/** Only the memory bank section (bench/memory.ts) instead of the default run. */
const MEMORY = process.argv.includes("--memory") || process.env.ORGPLANE_BENCH_MEMORY === "1"
const TELEMETRY = process.argv.includes("--telemetry") || process.env.ORGPLANE_BENCH_TELEMETRY === "1"
const SCIM = process.argv.includes("--scim") || process.env.ORGPLANE_BENCH_SCIM === "1"
const AUDIT = process.argv.includes("--audit") || process.env.ORGPLANE_BENCH_AUDIT === "1"
const DOCUMENT = process.argv.includes("--document") || process.env.ORGPLANE_BENCH_DOCUMENT === "1"
/** Memory and idle CPU of the three servers (bench/footprint.ts), on the request path's organization. */
const FOOTPRINT = process.argv.includes("--footprint") || process.env.ORGPLANE_BENCH_FOOTPRINT === "1"
const REQUEST_PATH = process.argv.includes("--requests") || process.env.ORGPLANE_BENCH_REQUESTS === "1"
/** With --requests on Postgres: only the check that the baselines send what orgplane sends (`--check-sql`: the same). */
const VERIFY_ONLY = REQUEST_PATH && (process.argv.includes("--verify") || process.argv.includes("--check-sql"))
/** `--name=N`: a positive number (seconds may be fractional). */
const optionOf = (name: string, fallback: number) => {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`))
  if (given === undefined) return fallback
  const value = Number(given.slice(name.length + 3))
  if (!(value > 0)) {
    process.stderr.write(`--${name} must be a positive number, got "${given}"\n\n${usage}`)
    process.exit(2)
  }
  return value
}
const CLI = process.argv.includes("--cli") || process.env.ORGPLANE_BENCH_CLI === "1"
/** Effect's floor in isolation (bench/effect-floor.ts): a minimal HttpApi beside a raw node:http server, no database. */
const FLOOR = process.argv.includes("--floor") || process.env.ORGPLANE_BENCH_FLOOR === "1"
const TRACING = process.argv.includes("--tracing") || process.env.ORGPLANE_BENCH_TRACING === "1"
/** Compressed answers (platform/Compression.ts): their cost beside the same answers sent as they are. */
const COMPRESSION = process.argv.includes("--compression") || process.env.ORGPLANE_BENCH_COMPRESSION === "1"
/** Every part of issue 59's figures, one after the other, each in its own run of this script. */
const ISSUE_59 = process.argv.includes("--issue-59")
const LAYERS = process.argv.includes("--layers") || process.env.ORGPLANE_BENCH_LAYERS === "1"
const STARTUP = process.argv.includes("--startup") || process.env.ORGPLANE_BENCH_STARTUP === "1"

// HTTP: keep-alive connections, one pool for both servers (the agent keeps one pool per origin).
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })

// ---------------------------------------------------------------------------------------------------------------
// Children: each server in its own process, killed on every way out.

interface Server {
  readonly name: string
  readonly url: string
  readonly rss: () => Promise<number | undefined>
  /** The V8 heap in use (`process.memoryUsage().heapUsed`), in bytes. */
  readonly heap: () => Promise<number | undefined>
  /** CPU time (user + system) the server process has used so far, in microseconds. */
  readonly cpu: () => Promise<number | undefined>
  /** CPU time used so far (µs), time spent in GC so far (ms) and memory, read together. */
  readonly usage: () => Promise<Requests.Usage | undefined>
  /** Runs a statement on the server's own database connection (see server.ts); the number of rows it returned. */
  readonly sql: (text: string, params: ReadonlyArray<unknown>) => Promise<number>
  /** The same, answering the rows themselves: for small results (an EXPLAIN). */
  readonly query: (text: string, params: ReadonlyArray<unknown>) => Promise<ReadonlyArray<Record<string, unknown>>>
  /** Starts its sampling heap profiler (child.ts). */
  readonly allocationStart: () => Promise<void>
  /** Stops it: the bytes allocated since the start. */
  readonly allocationStop: () => Promise<number | undefined>
  /** Stops it (SIGTERM, then SIGKILL after 3 s). */
  readonly stop: () => Promise<void>
}

const children = new Set<ChildProcess>()
/** Per-request log lines the orgplane server wrote (it logs as in production: JSON, one line per request). */
let requestLines = 0
/** Servers that died, to explain the failed requests that follow. */
const exits: Array<string> = []

/** The policy table, each action with its lowest role, for the baselines' `GET /v1/me` (statements.ts). */
const policyTable = JSON.stringify(Actions.map((action) => [action, Policy[action].role]))

const startServer = (name: string, script: string, cwd: string, env: NodeJS.ProcessEnv) =>
  new Promise<Server>((resolve, reject) => {
    const extra = name === "orgplane" ? NODE_ARGS : []
    const child = spawn(process.execPath, [...extra, "--conditions=@orgplane/source", "--import", "tsx", Path.join(HERE, script)], {
      cwd,
      env: { ...env, ORGPLANE_BENCH_POLICY: policyTable },
      stdio: ["ignore", "pipe", "inherit", "ipc"]
    })
    children.add(child)
    let stopped = false
    child.once("exit", (code, signal) => {
      children.delete(child)
      if (!stopped) exits.push(`${name} server exited (${signal ?? code})`)
      reject(new Error(`${name} server exited (${signal ?? code}) before listening`))
    })
    child.once("error", reject)
    let buffered = ""
    let url: string | undefined
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk
      let newline: number
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline)
        buffered = buffered.slice(newline + 1)
        if (url === undefined && line.startsWith("{\"url\"")) {
          url = JSON.parse(line).url as string
          resolve({
            name,
            url,
            rss: () => usageOf(child).then((usage) => usage?.rss),
            heap: () => usageOf(child).then((usage) => usage?.heapUsed),
            cpu: () => usageOf(child).then((usage) => usage?.cpuMicros),
            usage: () => usageOf(child),
            sql: (text, params) => sqlOf(child, text, params, false).then((answer) => answer.sqlRows),
            query: (text, params) => sqlOf(child, text, params, true).then((answer) => answer.rows ?? []),
            allocationStart: () => replyOf(child, "allocation-start", "allocation").then(() => undefined),
            allocationStop: () => replyOf(child, "allocation-stop", "allocatedBytes").then((reply) => typeof reply === "number" ? reply : undefined),
            stop: () => {
              stopped = true
              return stopChild(child)
            }
          })
        } else if (line.includes(`"message":"request"`)) {
          // The server's one line per request, as a collector would take it: read, not echoed.
          requestLines++
        } else if (line.trim() !== "") {
          process.stderr.write(`[${name}] ${line}\n`)
        }
      }
    })
  })

/** The child's resident set size and CPU time used so far, as it reports them over the IPC channel. */
const usageOf = (child: ChildProcess) =>
  new Promise<Requests.Usage | undefined>((resolve) => {
    if (!child.connected) return resolve(undefined)
    const timer = setTimeout(() => resolve(undefined), 2000)
    child.once("message", (message: Requests.Usage) => {
      clearTimeout(timer)
      resolve(message)
    })
    child.send("rss")
  })

/** The value of `field` in the child's next message that has it, after sending `message` (undefined after 10 s). */
const replyOf = (child: ChildProcess, message: string, field: string) =>
  new Promise<unknown>((resolve) => {
    if (!child.connected) return resolve(undefined)
    const timer = setTimeout(() => done(undefined), 10_000)
    const onMessage = (reply: unknown) => {
      if (typeof reply === "object" && reply !== null && field in reply) done(Reflect.get(reply, field))
    }
    const done = (value: unknown) => {
      clearTimeout(timer)
      child.off("message", onMessage)
      resolve(value)
    }
    child.on("message", onMessage)
    child.send(message)
  })

interface SqlAnswer {
  readonly sqlRows: number
  readonly rows?: ReadonlyArray<Record<string, unknown>>
}

/**
 * A statement run by the child on its database, with its rows when `rows` (else their number only); one at a time
 * (the answer is the next `sqlRows`/`sqlError`).
 */
const sqlOf = (child: ChildProcess, text: string, params: ReadonlyArray<unknown>, rows: boolean) =>
  new Promise<SqlAnswer>((resolve, reject) => {
    if (!child.connected) return reject(new Error("the server's IPC channel is closed"))
    const onMessage = (message: { sqlRows?: number; sqlError?: string; rows?: ReadonlyArray<Record<string, unknown>> }) => {
      if (message.sqlRows === undefined && message.sqlError === undefined) return
      child.off("message", onMessage)
      if (message.sqlError !== undefined) reject(new Error(message.sqlError))
      else resolve({ sqlRows: message.sqlRows!, ...(message.rows === undefined ? {} : { rows: message.rows }) })
    }
    child.on("message", onMessage)
    child.send({ sql: text, params, ...(rows ? { rows: true } : {}) })
  })

const stopChild = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
    setTimeout(() => child.kill("SIGKILL"), 3000).unref()
  })

// A fresh Postgres database for this run (the baseline must read what orgplane seeded), dropped at the end.
let database: { readonly name: string; readonly url: string } | undefined

const admin = async <A>(use: (client: pg.Client) => Promise<A>) => {
  const client = new pg.Client({ connectionString: DATABASE_URL })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

const createDatabase = async (url: string) => {
  const name = `orgplane_bench_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`
  await admin((client) => client.query(`CREATE DATABASE ${name}`))
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  database = { name, url: parsed.toString() }
  return database.url
}

// The fake GitHub the server reads repositories from (ORGPLANE_CODEHOST_API_URL), and its git repositories.
let github: FakeGitHub.FakeGitHub | undefined
const gitRepos: Array<GitRepo.GitRepo> = []

let cleaning: Promise<void> | undefined
const cleanup = () =>
  cleaning ??= (async () => {
    agent.destroy()
    await Promise.all([...children].map(stopChild))
    await github?.close()
    await Promise.all(gitRepos.map((repo) => repo.remove()))
    if (database !== undefined) {
      const name = database.name
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch((error) =>
        process.stderr.write(`could not drop database ${name}: ${error}\n`)
      )
    }
  })()

for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  process.on(signal, () => {
    process.stderr.write(`\n${signal}: stopping the servers\n`)
    void cleanup().finally(() => process.exit(code))
  })
}
// Last resort on an abrupt exit: no async work is possible here, but the children must not outlive us.
process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL")
})

// ---------------------------------------------------------------------------------------------------------------
// HTTP.

interface Credentials {
  readonly token?: string | undefined
  readonly key?: string | undefined
}

/** A request over the harness's agent, with a bearer token or an API key (http.ts's `request`). */
const send = (base: string, method: string, path: string, credentials: Credentials = {}, body?: unknown) =>
  request(agent, base, method, path, {
    ...(credentials.token === undefined ? {} : { authorization: `Bearer ${credentials.token}` }),
    ...(credentials.key === undefined ? {} : { "x-api-key": credentials.key })
  }, body)

/** A request that must succeed, its JSON body parsed. */
const call = async (base: string, method: string, path: string, credentials: Credentials = {}, body?: unknown) => {
  const reply = await send(base, method, path, credentials, body)
  if (reply.status < 200 || reply.status >= 300) throw new Error(`${method} ${path}: HTTP ${reply.status} ${reply.text}`)
  return reply.text === "" ? undefined : JSON.parse(reply.text)
}

// ---------------------------------------------------------------------------------------------------------------
// Seeding, over the public API only, so that any checkout's server can be seeded.

interface Seeded {
  readonly token: string
  readonly key: string
  readonly memberIds: ReadonlyArray<string>
  /** A plain member (role member) of the first team, and that team. */
  readonly member: { readonly token: string; readonly teamId: string }
  /** Undefined when the server measured has no catalog (an older checkout). */
  readonly catalog: Catalog | undefined
  /** Undefined when the server measured has no connectors, or cannot be seeded in bulk (an older checkout). */
  readonly connectors: Connectors | undefined
}

/** What the people seeding made, which the catalog and connectors seeding build on. */
type People = Omit<Seeded, "catalog" | "connectors">

interface Catalog {
  /** 50 config objects of every type, listed in 3 marketplaces. */
  readonly pluginId: string
  /** MEMBERSHIPS config objects. */
  readonly largePluginId: string
  /** The cursor that reads page DEEP_PAGE of the large plugin's config objects, PAGE_SIZE at a time. */
  readonly deepCursor: string | undefined
}

const PASSWORD = "correct horse battery"
const email = (name: string) => `${name.toLowerCase().replace(/[^a-z0-9]+/g, ".")}.${randomBytes(4).toString("hex")}@example.com`

/** Runs `task(0 .. count - 1)`, `concurrency` at a time; `progress` hears every `every` completions. */
const inParallel = async (count: number, concurrency: number, task: (i: number) => Promise<void>, progress?: (done: number) => void, every = 1000) => {
  let next = 0
  let done = 0
  await Promise.all(Array.from({ length: Math.min(count, concurrency) }, async () => {
    while (next < count) {
      await task(next++)
      done++
      if (progress !== undefined && (done % every === 0 || done === count)) progress(done)
    }
  }))
}

const seed = async (base: string): Promise<People> => {
  const started = performance.now()
  process.stdout.write("seeding: owner")
  const signedUp = await call(base, "POST", "/v1/auth/sign-up", {}, { email: email("Owner"), password: PASSWORD, name: "Owner" })
  const token = signedUp.session.token as string
  await call(base, "POST", "/v1/organizations", { token }, { name: "Bench" })
  const key = (await call(base, "POST", "/v1/api-keys", { token }, { name: "bench", scopes: ["apiKeys.manage"] })).key as string
  process.stdout.write(", members")
  const memberIds: Array<string> = []
  let memberToken = ""
  for (let i = 0; i < 199; i++) {
    const name = `Person ${i}`
    const invited = await call(base, "POST", "/v1/invitations", { token }, { email: email(name), role: "member" })
    const accepted = await call(base, "POST", "/v1/invitations/accept", {}, {
      token: invited.inviteToken,
      signUp: { name, password: PASSWORD }
    })
    memberIds.push(accepted.membership.id)
    if (i === 0) memberToken = accepted.session.token
    if ((i + 1) % 50 === 0 || i === 198) process.stdout.write(` ${i + 1}`)
  }
  process.stdout.write(", teams")
  const teamIds: Array<string> = []
  for (let t = 0; t < 20; t++) {
    const created = await call(base, "POST", "/v1/teams", { token }, { name: `Team ${t}`, memberIds: memberIds.filter((_, i) => i % 20 === t) })
    teamIds.push(created.team.id)
  }
  process.stdout.write(` 20 (${((performance.now() - started) / 1000).toFixed(1)} s)\n`)
  return { token, key, memberIds, member: { token: memberToken, teamId: teamIds[0] } }
}

const OBJECT_TYPES = ["skill", "agent", "command", "tool", "mcp", "hook", "context", "custom"] as const

/** A source its type's parser accepts, of a realistic size. */
const sourceOf = (type: (typeof OBJECT_TYPES)[number], i: number) => {
  const prose = `Benchmark ${type} number ${i}: a paragraph of instructions, as config objects usually carry.\n`.repeat(8)
  switch (type) {
    case "skill":
      return { objectType: type, rawSourceText: `---\nname: bench-skill-${i}\ndescription: Benchmark skill ${i}.\n---\n${prose}` }
    case "agent":
    case "command":
      return { objectType: type, rawSourceText: `---\nname: bench-${type}-${i}\ndescription: Benchmark ${type} ${i}.\n---\n${prose}` }
    case "mcp":
      return { objectType: type, rawSourceText: JSON.stringify({ mcpServers: { [`bench-${i}`]: { url: `https://mcp.example.com/${i}` } } }) }
    case "hook":
      return { objectType: type, rawSourceText: JSON.stringify({ event: "PreToolUse", matcher: "Bash", command: `echo ${i}` }) }
    default:
      return { objectType: type, rawSourceText: `Bench ${type} ${i}\n${prose}` }
  }
}

/**
 * The catalog, over the public API: a plugin of 50 config objects (every type) listed in 3 marketplaces, and a plugin
 * of MEMBERSHIPS config objects (created over HTTP, 16 at a time, each added to the plugin as it is created); the
 * member's team is granted viewer on both, so the member reads them through the access SQL. Undefined when the
 * server has no catalog.
 */
const seedCatalog = async (base: string, seeded: People): Promise<Catalog | undefined> => {
  const probe = await send(base, "GET", "/v1/plugins?limit=1", { key: seeded.key })
  if (probe.status !== 200) {
    console.log(`catalog: skipped (GET /v1/plugins answered ${probe.status}: this checkout has no catalog)`)
    return undefined
  }
  const started = performance.now()
  const owner = { token: seeded.token }
  process.stdout.write("seeding the catalog: plugin of 50")
  const pluginId = (await call(base, "POST", "/v1/plugins", owner, { name: "Bench plugin", description: "50 config objects in 3 marketplaces" }))
    .item.id as string
  await inParallel(50, 8, async (i) => {
    await call(base, "POST", "/v1/config-objects", owner, { input: sourceOf(OBJECT_TYPES[i % OBJECT_TYPES.length], i), pluginIds: [pluginId] })
  })
  for (let m = 0; m < 3; m++) {
    const marketplace = await call(base, "POST", "/v1/marketplaces", owner, { name: `Bench marketplace ${m}`, description: `Marketplace ${m}` })
    await call(base, "POST", `/v1/marketplaces/${marketplace.item.id}/plugins`, owner, { pluginId })
  }
  process.stdout.write(`, 3 marketplaces, plugin of ${MEMBERSHIPS}:`)
  const largePluginId = (await call(base, "POST", "/v1/plugins", owner, { name: "Bench large plugin" })).item.id as string
  await inParallel(MEMBERSHIPS, 16, async (i) => {
    await call(base, "POST", "/v1/config-objects", owner, {
      input: { objectType: "context", rawSourceText: `Context ${i}\nShared context for the benchmark.` },
      pluginIds: [largePluginId]
    })
  }, (done) => process.stdout.write(` ${done}`), MEMBERSHIPS >= 5000 ? 2500 : 1000)
  for (const id of [pluginId, largePluginId]) {
    await call(base, "POST", `/v1/plugins/${id}/access`, owner, { teamId: seeded.member.teamId, role: "viewer" })
  }
  // The deep cursor: walk the pages before it, as a client would.
  let deepCursor: string | undefined
  for (let page = 1; page < DEEP_PAGE; page++) {
    const query = deepCursor === undefined ? "" : `&cursor=${encodeURIComponent(deepCursor)}`
    const listed = await call(base, "GET", `/v1/plugins/${largePluginId}/config-objects?limit=${PAGE_SIZE}${query}`, { key: seeded.key })
    if (listed.nextCursor === null) throw new Error(`the large plugin has only ${page} pages of ${PAGE_SIZE}`)
    deepCursor = listed.nextCursor
  }
  process.stdout.write(
    `, cursor of page ${DEEP_PAGE} of ${Math.ceil(MEMBERSHIPS / PAGE_SIZE)} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`
  )
  return { pluginId, largePluginId, deepCursor }
}

/** What the connectors bench reads: a target of MAPPINGS mappings, and an instance of a REPO_FILES-file repository. */
interface Connectors {
  readonly targetId: string
  /** The cursor of the page that starts about 90% into the mappings, MAPPINGS_PAGE at a time. */
  readonly deepCursor: string | undefined
  readonly largeInstanceId: string
}

const GITHUB_TOKEN = `ghp_bench_${randomBytes(12).toString("hex")}`

/** The repository discovery scans: REPO_FILES files in nested folders, and one plugin manifest at the root. */
const seedRepository = async (fake: FakeGitHub.FakeGitHub) => {
  const started = performance.now()
  process.stdout.write(`seeding a git repository of ${REPO_FILES} files`)
  const repo = await GitRepo.withFiles({
    ...GitRepo.manyFiles(REPO_FILES - 1),
    ".claude-plugin/plugin.json": JSON.stringify({ name: "bench-plugin", description: "A large repository." })
  })
  gitRepos.push(repo)
  fake.addRepository("bench/large", repo)
  fake.addRepository("bench/mapped", repo)
  fake.addToken(GITHUB_TOKEN, ["bench/large", "bench/mapped"])
  process.stdout.write(` (${((performance.now() - started) / 1000).toFixed(1)} s)\n`)
}

/**
 * A token account on the fake GitHub, two instances with a `main` target, and MAPPINGS mappings on one target,
 * inserted in one statement on the server's database connection (not over HTTP: that would take hours). The deep
 * cursor comes from walking the list once, MAPPINGS_PAGE at a time. Undefined when the server has no connectors or
 * cannot run the statement (an older checkout).
 */
const seedConnectors = async (server: Server, seeded: People): Promise<Connectors | undefined> => {
  const base = server.url
  const probe = await send(base, "GET", "/v1/connector-accounts?limit=1", { key: seeded.key })
  if (probe.status !== 200) {
    console.log(`connectors: skipped (GET /v1/connector-accounts answered ${probe.status}: this checkout has no connectors)`)
    return undefined
  }
  const started = performance.now()
  const owner = { token: seeded.token }
  process.stdout.write(`seeding connectors: account, instances, ${MAPPINGS} mappings`)
  const account = (await call(base, "POST", "/v1/connector-accounts", owner, { kind: "token", token: GITHUB_TOKEN })).item.id as string
  const instance = async (name: string, repository: string) => {
    const created = (await call(base, "POST", "/v1/connector-instances", owner, { connectorAccountId: account, remoteId: repository, name })).item.id as string
    const target = (await call(base, "POST", `/v1/connector-instances/${created}/targets`, owner, { externalTargetRef: "main" })).item.id as string
    return { instanceId: created, targetId: target }
  }
  const mapped = await instance("Bench mapped", "bench/mapped")
  const large = await instance("Bench large", "bench/large")
  // Ids are TypeIDs: `cmp_` and 26 base32 characters, here `01jbench` and the row number; one row per file path.
  const inserted = await server.sql(
    `INSERT INTO connector_mappings (id, organization_id, connector_instance_id, connector_target_id, connector_type,
       remote_id, mapping_kind, selector, object_type, plugin_id, auto_add_to_plugin, mapping_config_json, created_at, updated_at)
     SELECT 'cmp_01jbench' || lpad(n::text, 18, '0'), t.organization_id, t.connector_instance_id, t.id, t.connector_type,
       t.remote_id, 'path', 'files/file-' || n || '.md', 'skill', NULL, false, NULL,
       now() - n * interval '1 second', now() - n * interval '1 second'
     FROM connector_targets t CROSS JOIN generate_series(1, $2::int) AS n
     WHERE t.id = $1 AND t.organization_id = (SELECT organization_id FROM connector_targets WHERE id = $1)
     RETURNING 1`,
    [mapped.targetId, MAPPINGS]
  ).catch((error: Error) => {
    process.stdout.write("\n")
    console.log(`connectors: mappings skipped (${error.message})`)
    return undefined
  })
  let deepCursor: string | undefined
  if (inserted !== undefined) {
    process.stdout.write(`: ${inserted} inserted, walking ${MAPPINGS_DEEP_PAGE - 1} pages`)
    for (let page = 1; page < MAPPINGS_DEEP_PAGE; page++) {
      const query = deepCursor === undefined ? "" : `&cursor=${encodeURIComponent(deepCursor)}`
      const listed = await call(base, "GET", `/v1/connector-targets/${mapped.targetId}/mappings?limit=${MAPPINGS_PAGE}${query}`, { key: seeded.key })
      if (listed.nextCursor === null) throw new Error(`the target has only ${page} pages of ${MAPPINGS_PAGE} mappings`)
      deepCursor = listed.nextCursor
    }
  }
  process.stdout.write(` (${((performance.now() - started) / 1000).toFixed(1)} s)\n`)
  return inserted === undefined ? undefined : { targetId: mapped.targetId, deepCursor, largeInstanceId: large.instanceId }
}

/**
 * Discovery of the REPO_FILES-file repository: the first call reads the whole tree and the manifests from the fake
 * GitHub; later calls at the same commit read only the branch head (the result is kept per commit).
 */
const measureDiscovery = async (base: string, key: string, instanceId: string) => {
  const path = `/v1/connector-instances/${instanceId}/discovery`
  const started = performance.now()
  const first = await send(base, "GET", path, { key })
  const cold = performance.now() - started
  if (first.status !== 200) {
    console.log(`\ndiscovery: skipped (GET discovery answered ${first.status}: ${first.text.slice(0, 120)})`)
    return
  }
  const scanned = JSON.parse(first.text).item.treeSummary.scannedEntryCount as number
  const again: Array<number> = []
  for (let i = 0; i < 20; i++) {
    const at = performance.now()
    const reply = await send(base, "GET", path, { key })
    if (reply.status !== 200) throw new Error(`GET discovery: HTTP ${reply.status} ${reply.text.slice(0, 300)}`)
    again.push(performance.now() - at)
  }
  again.sort((a, b) => a - b)
  console.log(`\ndiscovery of ${REPO_FILES} files (${scanned} entries scanned, fake GitHub on loopback):`)
  console.log(`  first, reading the tree and manifests   ${cold.toFixed(0).padStart(8)} ms`)
  console.log(`  again at the same commit, median of 20  ${again[10]!.toFixed(1).padStart(8)} ms`)
}

// ---------------------------------------------------------------------------------------------------------------
// Endpoints and measurement.

interface Endpoint {
  readonly label: string
  readonly method: "GET" | "PATCH"
  readonly path: (round: number) => string
  /** Fixed, or chosen per request (the memory searches act as a different person each time). */
  readonly credentials: Credentials | ((round: number) => Credentials)
  readonly body?: (round: number) => unknown
  /** Whether the baseline implements it. */
  readonly baseline: boolean
  /** Names the figures for the ratios printed after the table. */
  readonly id?: string
}

const endpoints = (seeded: Seeded): ReadonlyArray<Endpoint> => {
  const key = { key: seeded.key }
  const get = (label: string, path: string, credentials: Credentials = key, id?: string): Endpoint => ({
    label,
    method: "GET",
    path: () => path,
    credentials,
    baseline: true,
    ...(id === undefined ? {} : { id })
  })
  const member = { token: seeded.member.token }
  const catalog = seeded.catalog
  // As the owner (no access SQL: owners manage everything) and as a plain member whose team has a viewer grant.
  const catalogReads = catalog === undefined ? [] : [
    get("GET /v1/plugins/{id}", `/v1/plugins/${catalog.pluginId}`, key, "plugin"),
    get("GET /v1/plugins/{id} (member)", `/v1/plugins/${catalog.pluginId}`, member, "plugin member"),
    ...([["", key, ""], [" (member)", member, " member"]] as const).flatMap(([suffix, credentials, id]) => {
      const list = `/v1/plugins/${catalog.largePluginId}/config-objects?limit=${PAGE_SIZE}`
      return [
        get(`GET plugin objects p.1${suffix}`, list, credentials, `first${id}`),
        ...(catalog.deepCursor === undefined ? [] : [
          get(`GET plugin objects p.${DEEP_PAGE}${suffix}`, `${list}&cursor=${encodeURIComponent(catalog.deepCursor)}`, credentials, `deep${id}`)
        ])
      ]
    })
  ]
  const connectors = seeded.connectors
  const mappings = connectors === undefined ? [] : (() => {
    const list = `/v1/connector-targets/${connectors.targetId}/mappings?limit=${MAPPINGS_PAGE}`
    const page = (label: string, path: string, id: string): Endpoint => ({ ...get(label, path, key, id), baseline: false })
    return [
      page("GET target mappings p.1", list, "mappings first"),
      ...(connectors.deepCursor === undefined ? [] : [
        page(`GET target mappings p.${MAPPINGS_DEEP_PAGE}`, `${list}&cursor=${encodeURIComponent(connectors.deepCursor)}`, "mappings deep")
      ])
    ]
  })()
  return [
    get("GET /health", "/health", {}),
    get("GET /v1/me (session)", "/v1/me", { token: seeded.token }),
    get("GET /v1/me (API key)", "/v1/me"),
    get("GET /v1/api-keys", "/v1/api-keys?limit=20"),
    get("GET /v1/members (50 of 200)", "/v1/members?limit=50"),
    get("GET /v1/members?q=", "/v1/members?q=person%2019"),
    get("GET /v1/teams (20 teams)", "/v1/teams"),
    ...catalogReads,
    ...mappings,
    // Last: it turns members into admins and back, the catalog's plain member among them.
    {
      label: "PATCH /v1/members/{id} role",
      method: "PATCH",
      path: (round) => `/v1/members/${seeded.memberIds[round % seeded.memberIds.length]}`,
      credentials: key,
      body: (round) => ({ role: Math.floor(round / seeded.memberIds.length) % 2 === 0 ? "admin" : "member" }),
      baseline: false
    }
  ]
}

interface Figures {
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
  /** Server CPU time per request, in microseconds: steadier than req/s on a shared machine. */
  readonly cpuPerRequest: number | undefined
}

const credentialsOf = (endpoint: Endpoint, round: number) =>
  typeof endpoint.credentials === "function" ? endpoint.credentials(round) : endpoint.credentials

/** `count` requests from CONCURRENCY workers; latencies in milliseconds. */
const load = async (base: string, endpoint: Endpoint, count: number, rounds: { next: number }) => {
  const latencies: Array<number> = []
  let sent = 0
  const worker = async () => {
    while (sent < count) {
      sent++
      const round = rounds.next++
      const started = performance.now()
      const reply = await send(base, endpoint.method, endpoint.path(round), credentialsOf(endpoint, round), endpoint.body?.(round))
      latencies.push(performance.now() - started)
      if (reply.status < 200 || reply.status >= 300) {
        throw new Error(`${endpoint.label} on ${base}: HTTP ${reply.status} ${reply.text.slice(0, 300)}`)
      }
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  return { latencies, seconds: (performance.now() - started) / 1000 }
}

const measure = async (server: Server, endpoint: Endpoint): Promise<Figures> => {
  const rounds = { next: 0 }
  await load(server.url, endpoint, WARM_UP, rounds)
  const cpuBefore = await server.cpu()
  const { latencies, seconds } = await load(server.url, endpoint, REQUESTS, rounds)
  const cpuAfter = await server.cpu()
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]
  const cpuPerRequest = cpuBefore === undefined || cpuAfter === undefined ? undefined : (cpuAfter - cpuBefore) / latencies.length
  return { perSecond: latencies.length / seconds, p50: at(0.5), p99: at(0.99), cpuPerRequest }
}

// The yardstick only means something if it answers the same thing: compare one reply of each, keys in any order.
const compare = async (orgplane: Server, baseline: Server, endpoint: Endpoint) => {
  const path = endpoint.path(0)
  const ours = await call(orgplane.url, endpoint.method, path, credentialsOf(endpoint, 0))
  const theirs = await call(baseline.url, endpoint.method, path, credentialsOf(endpoint, 0))
  const difference = firstDifference(ours, theirs)
  if (difference !== undefined) process.stderr.write(`warning: baseline differs on ${endpoint.label}: ${difference}\n`)
}

// ---------------------------------------------------------------------------------------------------------------
// Output.

const number = (value: number | undefined, digits: number, width: number) =>
  (value === undefined ? "" : value.toFixed(digits)).padStart(width)
const figures = (f: Figures | undefined) =>
  `${number(f?.perSecond, 0, 8)} ${number(f?.p50, 2, 8)} ${number(f?.p99, 2, 8)} ${number(f?.cpuPerRequest, 0, 8)}`
const LABEL = 34
const megabytes = (bytes: number | undefined) => (bytes === undefined ? "" : `${Math.round(bytes / 1e6)} MB`).padStart(12)

const ratio = (a: Figures | undefined, b: Figures | undefined) =>
  a === undefined || b === undefined ? "   -" : (a.perSecond / b.perSecond).toFixed(2).padStart(4)

/** The two comparisons the catalog is held to: a plugin read against the baseline, a deep page against the first. */
const printRatios = (measured: ReadonlyMap<string, { readonly ours: Figures; readonly theirs: Figures | undefined }>) => {
  const first = measured.get("mappings first")?.ours
  const deep = measured.get("mappings deep")?.ours
  if (first !== undefined && deep !== undefined) {
    console.log(
      `\nmappings of one target (${MAPPINGS}), median latency: p.1 ${first.p50.toFixed(2)} ms, p.${MAPPINGS_DEEP_PAGE} ${
        deep.p50.toFixed(2)
      } ms; p.${MAPPINGS_DEEP_PAGE} / p.1 = ${(deep.p50 / first.p50).toFixed(2)}`
    )
    if (first.cpuPerRequest !== undefined && deep.cpuPerRequest !== undefined) {
      // Steadier than latency on a shared machine.
      console.log(`  server CPU per request: p.1 ${first.cpuPerRequest.toFixed(0)} µs, p.${MAPPINGS_DEEP_PAGE} ${deep.cpuPerRequest.toFixed(0)} µs; ratio ${(deep.cpuPerRequest / first.cpuPerRequest).toFixed(2)}`)
    }
  }
  if (!measured.has("plugin")) return
  console.log(`\n${"ratios of req/s".padEnd(LABEL)} | ${"owner".padStart(8)} ${"member".padStart(8)}`)
  const row = (label: string, owner: string, member: string) => console.log(`${label.padEnd(LABEL)} | ${owner.padStart(8)} ${member.padStart(8)}`)
  const get = (id: string) => measured.get(id)
  const withBaseline = get("plugin")?.theirs !== undefined
  if (withBaseline) {
    row("GET /v1/plugins/{id} vs baseline", ratio(get("plugin")?.ours, get("plugin")?.theirs), ratio(get("plugin member")?.ours, get("plugin member")?.theirs))
  }
  if (measured.has("deep")) {
    row(`p.${DEEP_PAGE} / p.1, orgplane`, ratio(get("deep")?.ours, get("first")?.ours), ratio(get("deep member")?.ours, get("first member")?.ours))
    if (withBaseline) {
      row(`p.${DEEP_PAGE} / p.1, baseline`, ratio(get("deep")?.theirs, get("first")?.theirs), ratio(get("deep member")?.theirs, get("first member")?.theirs))
    }
  }
}

const describeRoot = () => {
  try {
    const commit = execFileSync("git", ["-C", ROOT, "log", "-1", "--format=%h %s"], { encoding: "utf8" }).trim()
    return `${ROOT} (${commit.length > 70 ? `${commit.slice(0, 67)}...` : commit})`
  } catch {
    return ROOT
  }
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * `--requests`: on Postgres, the three servers first run on proxies (sql-trace.ts) for the check that the baselines
 * send what orgplane sends (requests.ts's `prepare`, which fails the run on a difference); then, unless `--verify`,
 * they are started again without the proxies and measured. On the embedded database, orgplane alone.
 */
const requestPath = async (env: NodeJS.ProcessEnv, databaseUrl: string | undefined) => {
  const method: Requests.Method = {
    seconds: optionOf("duration", Requests.DEFAULT_METHOD.seconds),
    rounds: Math.round(optionOf("rounds", Requests.DEFAULT_METHOD.rounds)),
    concurrency: process.env.ORGPLANE_BENCH_CONCURRENCY === undefined ? Requests.DEFAULT_METHOD.concurrency : CONCURRENCY
  }
  const servers = [["orgplane", "server.ts", ROOT], ["baseline", "baseline.ts", Path.join(HERE, "..")], ["hono", "hono.ts", Path.join(HERE, "..")]] as const
  if (databaseUrl === undefined) {
    console.log("baseline and Hono: skipped (the embedded database has one connection, owned by the orgplane process); set DATABASE_URL to compare")
    const orgplane = await startServer("orgplane", "server.ts", ROOT, env)
    const prepared = await Requests.prepare({ orgplane, others: [] })
    return VERIFY_ONLY ? undefined : Requests.measure({ orgplane, baseline: undefined, hono: undefined, prepared, method })
  }
  const traces = await Promise.all(servers.map(() => SqlTrace.start(databaseUrl)))
  // orgplane first: it migrates the database the others read.
  const tracedOrgplane = await startServer("orgplane", "server.ts", ROOT, { ...env, DATABASE_URL: traces[0]!.url })
  const traced = await Promise.all(servers.slice(1).map(([name, script, cwd], i) => startServer(name, script, cwd, { ...env, DATABASE_URL: traces[i + 1]!.url })))
  const prepared = await Requests.prepare({ orgplane: tracedOrgplane, others: traced, traces })
  if (VERIFY_ONLY) return
  await Promise.all([tracedOrgplane, ...traced].map((server) => server.stop()))
  await Promise.all(traces.map((trace) => trace.close()))
  const [orgplane, baseline, hono] = await Promise.all(servers.map(([name, script, cwd]) => startServer(name, script, cwd, env)))
  return Requests.measure({ orgplane: orgplane!, baseline, hono, prepared, method })
}

/**
 * `--layers`: the request path's bill by layer (layers.ts): orgplane servers each leaving out steps of the request
 * path (ORGPLANE_BENCH_LEAVE_OUT, server.ts), beside the raw baseline, on one Postgres database.
 */
const layers = async (env: NodeJS.ProcessEnv, databaseUrl: string | undefined) => {
  if (databaseUrl === undefined) throw new Error("--layers runs many servers on one database: set DATABASE_URL (Postgres)")
  const ablation: unknown = await import(pathToFileURL(Path.join(ROOT, "packages/server/src/platform/Ablation.ts")).href)
  const steps: unknown = typeof ablation === "object" && ablation !== null ? Reflect.get(ablation, "steps") : undefined
  if (!Array.isArray(steps) || !steps.every((step) => typeof step === "string")) throw new Error("--layers: the server has no platform/Ablation.ts steps")
  const method: Requests.Method = {
    seconds: optionOf("duration", 3),
    rounds: Math.round(optionOf("rounds", 3)),
    concurrency: process.env.ORGPLANE_BENCH_CONCURRENCY === undefined ? Requests.DEFAULT_METHOD.concurrency : CONCURRENCY
  }
  // full first: it migrates the database the others use.
  const full = await startServer("full", "server.ts", ROOT, env)
  const raw = await startServer("raw", "baseline.ts", Path.join(HERE, ".."), env)
  const prepared = await Requests.prepare({ orgplane: full, others: [raw] })
  const only = (process.env.ORGPLANE_BENCH_ENDPOINTS ?? "").split(",").map((id) => id.trim()).filter((id) => id !== "")
  const endpoints = Layers.endpointsOf(prepared.seeded, only.length > 0 ? only : Layers.DEFAULT_ENDPOINTS)
  const counters = endpoints.map(() => ({ next: 1_000_000 }))
  const all = Layers.variants(steps)
  const batches: Array<Layers.Batch> = []
  for (let from = 0; from < all.length; from += Layers.BATCH) {
    const batch = all.slice(from, from + Layers.BATCH)
    process.stderr.write(`--layers: batch ${from / Layers.BATCH + 1} of ${Math.ceil(all.length / Layers.BATCH)}: ${batch.map((variant) => variant.name).join(", ")}\n`)
    const ablated = await Promise.all(batch.map((variant) =>
      startServer(variant.name, "server.ts", ROOT, { ...env, ORGPLANE_BENCH_LEAVE_OUT: variant.leftOut.join(",") })
    ))
    try {
      batches.push(await Layers.measureBatch({ full, ablated, raw, endpoints, counters, method }))
    } finally {
      await Promise.all(ablated.map((server) => server.stop()))
    }
  }
  Layers.print(batches, endpoints, method)
}

/** `--compression`: orgplane alone, seeded as for --requests, then requests.ts's `measureCompression`. */
const compression = async (env: NodeJS.ProcessEnv) => {
  const orgplane = await startServer("orgplane", "server.ts", ROOT, env)
  const prepared = await Requests.prepare({ orgplane, others: [] })
  return Requests.measureCompression({
    orgplane,
    prepared,
    method: {
      seconds: optionOf("duration", Requests.DEFAULT_METHOD.seconds),
      rounds: Math.round(optionOf("rounds", Requests.DEFAULT_METHOD.rounds)),
      concurrency: process.env.ORGPLANE_BENCH_CONCURRENCY === undefined ? Requests.DEFAULT_METHOD.concurrency : CONCURRENCY
    }
  })
}

/** `--footprint`: the three servers (orgplane alone on the embedded database), seeded as for --requests, then footprint.ts. */
const footprint = async (env: NodeJS.ProcessEnv, databaseUrl: string | undefined) => {
  const orgplane = await startServer("orgplane", "server.ts", ROOT, env)
  const others = databaseUrl === undefined
    ? []
    : await Promise.all([startServer("baseline", "baseline.ts", Path.join(HERE, ".."), env), startServer("hono", "hono.ts", Path.join(HERE, ".."), env)])
  const prepared = await Requests.prepare({ orgplane, others })
  return Footprint.measure([orgplane, ...others], prepared.seeded, {
    loadSeconds: optionOf("load", Footprint.DEFAULTS.loadSeconds),
    idleSeconds: optionOf("idle", Footprint.DEFAULTS.idleSeconds),
    idleCpuSeconds: optionOf("idle-cpu", Footprint.DEFAULTS.idleCpuSeconds),
    settleSeconds: optionOf("settle", Footprint.DEFAULTS.settleSeconds),
    connections: positive(process.env.ORGPLANE_BENCH_FOOTPRINT_CONNECTIONS, Footprint.DEFAULTS.connections, "ORGPLANE_BENCH_FOOTPRINT_CONNECTIONS")
  })
}

/**
 * `--tracing`: three orgplane servers on one Postgres database, tracing off, and exporting to a loopback OTLP
 * receiver (the testkit's) sampled at 1% and at 100%; requests.ts's `measureTracing`.
 */
const tracing = async (env: NodeJS.ProcessEnv, databaseUrl: string | undefined) => {
  if (databaseUrl === undefined) throw new Error("--tracing runs three servers on one database: set DATABASE_URL (Postgres)")
  const receiver = await OtlpReceiver.start()
  try {
    // Each variant under its own service name, so that the spans received are counted by their sender.
    const exporting = (name: string, ratio: string) => ({
      ...env,
      OTEL_SERVICE_NAME: name,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_TRACES_SAMPLER: "traceidratio",
      OTEL_TRACES_SAMPLER_ARG: ratio
    })
    // One after the other: the first migrates the database the others use.
    const off = await startServer("off", "server.ts", ROOT, env)
    const one = await startServer("1%", "server.ts", ROOT, exporting("1%", "0.01"))
    const all = await startServer("100%", "server.ts", ROOT, exporting("100%", "1"))
    const prepared = await Requests.prepare({ orgplane: off, others: [one, all] })
    await Requests.measureTracing({
      variants: [off, one, all],
      prepared,
      method: {
        seconds: optionOf("duration", Requests.DEFAULT_METHOD.seconds),
        rounds: Math.round(optionOf("rounds", Requests.DEFAULT_METHOD.rounds)),
        concurrency: process.env.ORGPLANE_BENCH_CONCURRENCY === undefined ? Requests.DEFAULT_METHOD.concurrency : CONCURRENCY
      },
      received: () => {
        const counts = new Map<string, number>()
        for (const span of receiver.spans) {
          const name = String(span.resource["service.name"])
          counts.set(name, (counts.get(name) ?? 0) + 1)
        }
        receiver.clear()
        return counts
      }
    })
  } finally {
    await receiver.close()
  }
}

const main = async () => {
  console.log(`orgplane: ${describeRoot()}`)
  // The CLI's own server and processes: none of the servers below.
  if (CLI) return measureCli(REQUESTS_ARGUMENT === undefined ? 10 : REQUESTS)
  console.log(`database: ${DATABASE_URL === undefined ? "embedded (PGlite)" : "Postgres at DATABASE_URL"}`)
  const databaseUrl = DATABASE_URL === undefined ? undefined : await createDatabase(DATABASE_URL)
  const { DATABASE_URL: _, ...inherited } = process.env
  github = await FakeGitHub.start()
  const env = {
    ...inherited,
    ORGPLANE_CODEHOST_API_URL: github.url,
    ORGPLANE_BENCH_ROOT: ROOT,
    ORGPLANE_VERSION: "bench",
    ORGPLANE_LOG_FORMAT: inherited.ORGPLANE_LOG_FORMAT ?? "json",
    // The cluster runner's port: a free one, so that a bench runs beside another server on this host (Postgres only).
    ORGPLANE_CLUSTER_PORT: inherited.ORGPLANE_CLUSTER_PORT ?? "0",
    ORGPLANE_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString("base64")}`,
    // The SCIM section makes its organization the operator (to set its plan) with it.
    ORGPLANE_SETUP_TOKEN: BENCH_SETUP_TOKEN,
    // Seeding the memory bank runs batches of 25,000 INSERTs with their text-search documents on the server's own
    // connection; the default 10 seconds a statement is too short for them on a busy machine. Reads are unaffected.
    // So do the audit log's batches of 25,000 events with their five indexes.
    ...(MEMORY || AUDIT ? { ORGPLANE_DB_STATEMENT_TIMEOUT: "10 minutes" } : {}),
    // The baseline answers the request path's endpoints with orgplane's own statements (requests-baseline.ts).
    ...(REQUEST_PATH || FOOTPRINT || LAYERS ? { ORGPLANE_BENCH_REQUESTS: "1" } : {}),
    ...(databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl })
  }
  if (LAYERS) return layers(env, databaseUrl)
  if (REQUEST_PATH) return requestPath(env, databaseUrl)
  if (TRACING) return tracing(env, databaseUrl)
  if (COMPRESSION) return compression(env)
  if (FOOTPRINT) return footprint(env, databaseUrl)
  const [orgplane, baseline] = await Promise.all([
    startServer("orgplane", "server.ts", ROOT, env),
    databaseUrl === undefined ? undefined : startServer("baseline", "baseline.ts", Path.join(HERE, ".."), env)
  ])
  if (baseline === undefined) {
    console.log("baseline: skipped (the embedded database has one connection, owned by the orgplane process); set DATABASE_URL to compare")
  }
  if (TELEMETRY) return Telemetry.measure({ agent, orgplane, baseline, requests: REQUESTS, concurrency: CONCURRENCY })
  if (AUDIT) return Audit.measure({ agent, orgplane, baseline, requests: REQUESTS, concurrency: CONCURRENCY })
  if (DOCUMENT) return Document.measure({ agent, orgplane })
  if (SCIM) {
    // Lookups a row: a few hundred by default, not the 2000 requests of the other sections.
    const lookups = REQUESTS_ARGUMENT === undefined ? 500 : REQUESTS
    return Scim.measure({ agent, orgplane, baseline, lookups, concurrency: CONCURRENCY })
  }
  const rssAtStart = await orgplane.rss()
  let seeded: Seeded | undefined
  let list: ReadonlyArray<Endpoint>
  if (MEMORY) {
    list = [Memory.searchEndpoint(await Memory.seedMemories({ sql: orgplane.sql, call, base: orgplane.url }))]
  } else {
    const people = await seed(orgplane.url)
    const catalog = await seedCatalog(orgplane.url, people)
    await seedRepository(github)
    seeded = { ...people, catalog, connectors: await seedConnectors(orgplane, people) }
    list = endpoints(seeded)
  }
  if (baseline !== undefined) {
    for (const endpoint of list) if (endpoint.baseline) await compare(orgplane, baseline, endpoint)
  }
  const rssBefore = [await orgplane.rss(), await baseline?.rss()]

  console.log(
    `\n${REQUESTS} requests per endpoint after ${WARM_UP} to warm up, ${CONCURRENCY} keep-alive connections; latency in ms;` +
      ` cpu: the server's own CPU time per request, in µs\n`
  )
  const header = "req/s      p50      p99   cpu µs"
  console.log(`${"".padEnd(LABEL)} | ${"orgplane".padEnd(header.length)} | baseline (node:http + pg)`)
  console.log(`${"endpoint".padEnd(LABEL)} | ${header.padStart(35)} | ${header.padStart(35)}`)
  console.log(`${"-".repeat(LABEL)}-+-${"-".repeat(35)}-+-${"-".repeat(35)}`)
  const measured = new Map<string, { readonly ours: Figures; readonly theirs: Figures | undefined }>()
  for (const endpoint of list) {
    const ours = await measure(orgplane, endpoint)
    const theirs = baseline !== undefined && endpoint.baseline ? await measure(baseline, endpoint) : undefined
    console.log(`${endpoint.label.padEnd(LABEL)} | ${figures(ours)} | ${figures(theirs)}`)
    if (endpoint.id !== undefined) measured.set(endpoint.id, { ours, theirs })
  }
  printRatios(measured)
  if (seeded?.connectors !== undefined) await measureDiscovery(orgplane.url, seeded.key, seeded.connectors.largeInstanceId)
  await measurePlanning()

  const rssAfter = [await orgplane.rss(), await baseline?.rss()]
  console.log(`\n${"server RSS".padEnd(LABEL)} |     at start  before load   after load`)
  console.log(`${"orgplane".padEnd(LABEL)} | ${megabytes(rssAtStart)} ${megabytes(rssBefore[0])} ${megabytes(rssAfter[0])}`)
  if (baseline !== undefined) {
    console.log(`${"baseline".padEnd(LABEL)} | ${"".padStart(12)} ${megabytes(rssBefore[1])} ${megabytes(rssAfter[1])}`)
  }
  if (requestLines > 0) console.log(`\norgplane wrote ${requestLines} per-request log lines (JSON, read and counted here)`)
}

/**
 * `--issue-59`: the request path, the footprint, start-up and Effect's floor, each a run of this script with the
 * options given (`--duration=`, `--rounds=`, `--load=`, `--idle=`, `--idle-cpu=`; start-up takes [requests] starts).
 */
const issue59 = () => {
  const passed = process.argv.slice(2).filter((arg) => arg !== "--issue-59")
  for (const part of ["--requests", "--footprint", "--startup", "--floor", "--tracing"]) {
    console.log(`\n=== pnpm bench ${part} ${passed.join(" ")}`)
    const { status } = spawnSync(process.execPath, [...process.execArgv, import.meta.filename, part, ...passed], { stdio: "inherit" })
    if (status !== 0) process.exitCode = 1
  }
}

try {
  if (ISSUE_59) issue59()
  else if (FLOOR) {
    await EffectFloor.measure({
      seconds: optionOf("duration", 8),
      rounds: Math.round(optionOf("rounds", 3)),
      concurrency: process.env.ORGPLANE_BENCH_CONCURRENCY === undefined ? 32 : CONCURRENCY
    })
  } else if (STARTUP) await Startup.measure({ root: ROOT, runs: positive(REQUESTS_ARGUMENT, 5, "starts"), databaseUrl: DATABASE_URL })
  else await main()
} catch (error) {
  // Once interrupted, the failures of requests to the stopped servers are expected.
  if (cleaning === undefined) {
    // A dead server shows first as a failed request; give its exit a moment to be seen, it is the real cause.
    await new Promise((resolve) => setTimeout(resolve, 200))
    const message = error instanceof Error ? error.message : String(error)
    process.stderr.write(`\nbench failed: ${[message, ...exits].join("; ")}\n`)
  }
  process.exitCode = 1
} finally {
  await cleanup()
}

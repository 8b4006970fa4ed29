/**
 * The memory bank section of `pnpm bench` (run with `--memory` or `ORGPLANE_BENCH_MEMORY=1`): seeds
 * ORGPLANE_BENCH_MEMORIES memories (default 1,000,000) of ORGPLANE_BENCH_MEMORY_USERS people (default 10,000) of one
 * organization with SQL on the server's own database connection (INSERT ... SELECT generate_series, in batches),
 * then measures `GET /v1/memory/search` for random people and queries. The text comes from a deterministic generator:
 * sentences of words drawn, skewed towards the common ones, from a vocabulary of a few hundred, plus up to 3 tags.
 */
import { textAt } from "./json.js"

export interface MemorySeeded {
  /** Session tokens of the first people (the searches pick one per request). */
  readonly tokens: ReadonlyArray<string>
  readonly memories: number
  readonly users: number
}

/** What the harness (run.ts) lends this section. */
export interface Harness {
  readonly sql: (text: string, params: ReadonlyArray<unknown>) => Promise<number>
  readonly call: (base: string, method: string, path: string, credentials?: { readonly token?: string }, body?: unknown) => Promise<unknown>
  readonly base: string
}

const positive = (text: string | undefined, fallback: number) => {
  const value = Number(text)
  return text !== undefined && text.trim() !== "" && Number.isInteger(value) && value >= 1 ? value : fallback
}

export const MEMORIES = positive(process.env.ORGPLANE_BENCH_MEMORIES, 1_000_000)
export const USERS = Math.min(positive(process.env.ORGPLANE_BENCH_MEMORY_USERS, 10_000), MEMORIES)
/** People whose sessions the searches use. */
const SEARCHERS = Math.min(1000, USERS)
const BATCH = 25_000

// A working vocabulary: what people ask a chat assistant to remember at work.
const VOCABULARY = (`
deploy deployment release staging production cluster kubernetes docker container image registry pipeline build test
review merge branch commit rollback incident outage alert pager oncall runbook postmortem latency throughput database
postgres migration index query backup restore replica schema table column cache redis queue kafka worker cron job
api endpoint client server gateway proxy certificate domain dns ssl token secret vault password rotation access role
permission team manager engineer designer product roadmap quarter sprint planning standup retro demo meeting calendar
monday tuesday wednesday thursday friday morning afternoon weekly monthly deadline launch customer contract invoice
budget forecast report dashboard metric analytics experiment feature flag rollout beta feedback survey interview
hiring onboarding laptop vpn wifi office remote travel expense reimbursement vacation holiday policy compliance audit
security privacy gdpr retention encryption key license vendor procurement support ticket escalation priority bug fix
regression performance memory cpu disk network bandwidth region zone failover scaling autoscaler cost billing usage
python typescript rust golang java kotlin swift react vue svelte node deno bun webpack vite eslint prettier vitest
jest playwright cypress terraform ansible helm grafana prometheus datadog sentry pagerduty slack email jira linear
notion figma github gitlab bitbucket confluence docs wiki readme changelog version semver tag hotfix patch minor major
prefers likes dislikes always never usually avoid remember note important reminder decision agreed approved blocked
waiting pending done owner contact lead alice bob carol dave erin frank grace heidi ivan judy mallory oscar peggy
trent victor walter design system component button color palette font spacing layout mobile desktop tablet browser
chrome firefox safari accessibility contrast keyboard shortcut theme dark light mode editor vim emacs vscode terminal
shell bash zsh alias script makefile config yaml json toml env variable flag option default timeout retry backoff
`).split(/\s+/).filter((word) => word !== "")

const TAGS = ["work", "personal", "infra", "frontend", "backend", "people", "process", "security", "tooling", "customer", "travel", "finance"]

/** A deterministic pseudo-random number in [0, 1) for row `i` and slot `k`, in SQL (no extension needed). */
const unit = (i: string, k: string) => `((((${i})::bigint * 2654435761 + (${k})::bigint * 40503 + (${i})::bigint * (${k})::bigint * 97) % 1000003)::float8 / 1000003)`

/** An id of the prefix made from a row number: `<prefix>_01jbench` and 18 digits (26 base32 characters). */
const id = (prefix: string, n: string) => `'${prefix}_01jbench' || lpad((${n})::text, 18, '0')`

/** sha256 hex, as the server hashes session tokens. */
const tokenOf = (n: number) => `ops_bench_memory_${n}`

export const seedMemories = async (harness: Harness): Promise<MemorySeeded> => {
  const started = performance.now()
  const seconds = () => ((performance.now() - started) / 1000).toFixed(1)
  process.stdout.write(`seeding the memory bank: ${USERS} people`)
  const signedUp = await harness.call(harness.base, "POST", "/v1/auth/sign-up", {}, {
    email: `memory.owner.${Date.now()}@example.com`,
    password: "correct horse battery",
    name: "Memory owner"
  })
  const token = textAt(signedUp, "session", "token")
  const organizationId = textAt(await harness.call(harness.base, "POST", "/v1/organizations", { token }, { name: "Memory bench" }), "organization", "id")
  await harness.sql(
    `INSERT INTO users (id, email, name, password_hash, created_at, updated_at)
     SELECT ${id("usr", "n")}, 'memory.' || n || '@bench.example.com', 'Person ' || n, 'x', now(), now()
     FROM generate_series(1, $1::int) AS n RETURNING 1`,
    [USERS]
  )
  await harness.sql(
    `INSERT INTO memberships (id, organization_id, user_id, role, created_at, updated_at)
     SELECT ${id("om", "n")}, $2, ${id("usr", "n")}, 'member', now(), now()
     FROM generate_series(1, $1::int) AS n RETURNING 1`,
    [USERS, organizationId]
  )
  await harness.sql(
    `INSERT INTO sessions (id, user_id, token_hash, active_organization_id, created_at, expires_at)
     SELECT ${id("ses", "n")}, ${id("usr", "n")}, encode(sha256(convert_to('ops_bench_memory_' || n, 'UTF8')), 'hex'), $2,
            now(), now() + interval '1 day'
     FROM generate_series(1, $1::int) AS n RETURNING 1`,
    [SEARCHERS, organizationId]
  )
  process.stdout.write(`, ${MEMORIES} memories:`)
  const words = VOCABULARY.length
  for (let from = 1; from <= MEMORIES; from += BATCH) {
    const to = Math.min(MEMORIES, from + BATCH - 1)
    // Person of row i: i % USERS + 1; 6 to 30 words each, skewed towards the start of the vocabulary (x^2).
    await harness.sql(
      `WITH rows AS (
         SELECT i, (i % $3::int) + 1 AS person,
                array_to_string(ARRAY(
                  SELECT ($4::text[])[1 + floor(${unit("i", "k")} ^ 2 * $5::int)::int]
                  FROM generate_series(1, 6 + i % 25) AS k), ' ') AS content,
                ARRAY(SELECT DISTINCT ($6::text[])[1 + floor(${unit("i", "100 + t")} * 12)::int] FROM generate_series(1, i % 4) AS t) AS tags
         FROM generate_series($1::int, $2::int) AS i)
       INSERT INTO memories (organization_id, id, user_id, membership_id, content, tags, source, scope, search, created_at, updated_at)
       SELECT $7, ${id("mem", "i")}, ${id("usr", "person")}, ${id("om", "person")}, initcap(content) || '.', tags, 'chat', 'user',
              setweight(to_tsvector('english'::regconfig, content), 'A') ||
                setweight(to_tsvector('english'::regconfig, array_to_string(tags, ' ')), 'B'),
              now() - i * interval '1 second', now() - i * interval '1 second'
       FROM rows RETURNING 1`,
      [from, to, USERS, VOCABULARY, words, TAGS, organizationId]
    )
    process.stdout.write(` ${to}`)
  }
  await harness.sql("ANALYZE memories", [])
  process.stdout.write(` (${seconds()} s; ${Math.round(MEMORIES / USERS)} per person, searches by ${SEARCHERS} of them)\n`)
  return { tokens: Array.from({ length: SEARCHERS }, (_, n) => tokenOf(n + 1)), memories: MEMORIES, users: USERS }
}

/** A query of 1 to 3 words, some of them common, some rare, phrased as people ask. */
const queryOf = (round: number) => {
  const pick = (k: number) => VOCABULARY[Math.floor(((round * 7919 + k * 104729) % 1000003) / 1000003 * VOCABULARY.length)]!
  const count = 1 + (round % 3)
  const terms = Array.from({ length: count }, (_, k) => pick(k + 1))
  return round % 4 === 0 ? `what did I note about ${terms.join(" ")}` : terms.join(" ")
}

/** The searches: a person and a query per request, both chosen by the round. */
export const searchEndpoint = (seeded: MemorySeeded) => ({
  label: "GET /v1/memory/search",
  method: "GET" as const,
  path: (round: number) => `/v1/memory/search?q=${encodeURIComponent(queryOf(round))}&limit=20`,
  credentials: (round: number) => ({ token: seeded.tokens[(round * 31) % seeded.tokens.length]! }),
  baseline: true,
  id: "memory search"
})

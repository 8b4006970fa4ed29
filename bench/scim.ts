/**
 * The SCIM section of `pnpm bench` (`--scim` or ORGPLANE_BENCH_SCIM=1): directory provisioning on one organization
 * of the enterprise plan, through the SCIM API only, as a directory would: ORGPLANE_BENCH_SCIM_USERS Users (default
 * 10,000) by `POST /Users`, then ORGPLANE_BENCH_SCIM_GROUPS groups (default 200) of 50 members by `POST /Groups`
 * with their members inline, and the filtered lookups directories make (`userName eq`, `externalId eq`) and a deep
 * `startIndex` page, after the first 1,000 Users and at the full size. Beside each figure, the baseline
 * (scim-baseline.ts) runs the same statements. Then the plan of the lookup at the full size. Started by run.ts;
 * prints figures, asserts nothing.
 */
import { randomBytes } from "node:crypto"
import { BENCH_SETUP_TOKEN } from "./setup-token.js"
import { type Agent, request as httpRequest } from "node:http"
import { load, ok, percentile, type Reply } from "./http.js"
import { firstDifference } from "./difference.js"
import { EnterpriseUserSchema, GroupSchema, UserSchema, userListStatement } from "./scim-baseline.js"

interface Target {
  readonly name: string
  readonly url: string
  /** CPU time (user + system) the server process has used so far, in microseconds. */
  readonly cpu: () => Promise<number | undefined>
}

interface Orgplane extends Target {
  /** A statement on the server's own database connection (an ANALYZE); the number of rows it answered. */
  readonly sql: (text: string, params: ReadonlyArray<unknown>) => Promise<number>
  /** The same, answering its rows (an EXPLAIN). */
  readonly query: (text: string, params: ReadonlyArray<unknown>) => Promise<ReadonlyArray<Record<string, unknown>>>
}

const positive = (text: string | undefined, fallback: number) => {
  const value = Number(text)
  return text !== undefined && text.trim() !== "" && Number.isInteger(value) && value >= 1 ? value : fallback
}

export const USERS = positive(process.env.ORGPLANE_BENCH_SCIM_USERS, 10_000)
export const GROUPS = positive(process.env.ORGPLANE_BENCH_SCIM_GROUPS, 200)
const GROUP_SIZE = Math.min(50, USERS)
/** The small size the lookups are measured at first, to show they stay flat as Users grow. */
const SMALL = Math.min(1000, USERS)
const PAGE = 100

const request = (agent: Agent, base: string, method: string, path: string, bearer?: string, body?: unknown) =>
  new Promise<Reply>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const scim = path.startsWith("/scim/")
    const headers: Record<string, string> = {
      ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
      ...(scim ? { accept: "application/scim+json" } : {}),
      ...(payload === undefined
        ? {}
        : { "content-type": scim ? "application/scim+json" : "application/json", "content-length": String(Buffer.byteLength(payload)) })
    }
    const req = httpRequest(new URL(path, base), { method, agent, headers }, (res) => {
      let text = ""
      res.setEncoding("utf8").on("data", (chunk) => (text += chunk)).on("end", () => resolve({ status: res.statusCode ?? 0, text }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(payload)
  })


// ---------------------------------------------------------------------------------------------------------------
// What a directory sends.

/** The i-th person of a directory (`prefix` tells the two directories' people apart), as Okta sends a User. */
const userOf = (prefix: string, i: number) => {
  const email = `${prefix}.person${i}@scim-bench.example`
  return {
    schemas: [UserSchema, EnterpriseUserSchema],
    userName: email,
    externalId: externalIdOf(prefix, i),
    name: { givenName: "Person", familyName: `${prefix.toUpperCase()}${i}` },
    displayName: `Person ${prefix.toUpperCase()}${i}`,
    emails: [{ value: email, type: "work", primary: true }],
    active: true,
    [EnterpriseUserSchema]: { department: `Department ${i % 40}` }
  }
}

/** An Okta-like externalId: `00u` and 17 characters. */
const externalIdOf = (prefix: string, i: number) => `00u${prefix}${i.toString(36).padStart(16 - prefix.length, "0")}`

/** Group g holds people g·50 … g·50 + 49 (modulo the Users), so 200 groups of 50 cover 10,000 people once. */
const groupOf = (prefix: string, g: number, memberIds: ReadonlyArray<string>) => ({
  schemas: [GroupSchema],
  displayName: `${prefix === "a" ? "Directory" : "Baseline"} group ${g}`,
  externalId: `00g${prefix}${g.toString(36).padStart(16 - prefix.length, "0")}`,
  members: Array.from({ length: GROUP_SIZE }, (_, k) => ({ value: memberIds[(g * GROUP_SIZE + k) % memberIds.length]! }))
})

// ---------------------------------------------------------------------------------------------------------------
// Measurement.

interface Figures {
  readonly perSecond: number
  readonly p50: number
  readonly p95: number
  /** The server's CPU time per request, in microseconds: steadier than latency on a shared machine. */
  readonly cpuPerRequest: number | undefined
}

/** Requests `task(0 .. count - 1)` from `concurrency` workers; figures over all of them. */
const run = async (target: Target, count: number, concurrency: number, task: (i: number) => Promise<void>, progress?: (done: number) => void) => {
  const cpuBefore = await target.cpu()
  const { latencies, seconds } = await load(count, concurrency, task, progress)
  const cpuAfter = await target.cpu()
  return {
    perSecond: count / seconds,
    p50: percentile(latencies, 0.5),
    p95: percentile(latencies, 0.95),
    cpuPerRequest: cpuBefore === undefined || cpuAfter === undefined ? undefined : (cpuAfter - cpuBefore) / count
  } satisfies Figures
}

/** A deterministic sequence of people for the lookups, the same for both servers. */
const picks = (seed: number, count: number, size: number) => {
  let state = seed >>> 0
  return Array.from({ length: count }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state % size
  })
}

// The yardstick only means something if it answers the same thing: compare one answer of each, each server's own
// address read as the same.
const normalized = (target: Target, text: string) => JSON.parse(text.split(target.url).join("http://server"))

const compareAnswers = (what: string, ours: { target: Target; text: string }, theirs: { target: Target; text: string }) => {
  const difference = firstDifference(normalized(ours.target, ours.text), normalized(theirs.target, theirs.text))
  if (difference !== undefined) process.stderr.write(`warning: baseline differs on ${what}: ${difference}\n`)
}

// ---------------------------------------------------------------------------------------------------------------

interface Directory {
  readonly connectionId: string
  readonly token: string
  /** The SCIM id of each person provisioned so far, by index. */
  readonly ids: Array<string>
  /** The answer to the first POST /Users. */
  firstUser?: string
}

const number = (value: number | undefined, digits: number, width: number) =>
  (value === undefined ? "" : value.toFixed(digits)).padStart(width)
const figures = (f: Figures | undefined) =>
  f === undefined ? "".padStart(35) : `${number(f.perSecond, 0, 8)} ${number(f.p50, 2, 8)} ${number(f.p95, 2, 8)} ${number(f.cpuPerRequest, 0, 8)}`
const LABEL = 40

export const measure = async (options: {
  readonly agent: Agent
  readonly orgplane: Orgplane
  readonly baseline: Target | undefined
  readonly lookups: number
  readonly concurrency: number
}) => {
  const { agent, baseline, concurrency, lookups, orgplane } = options
  const started = performance.now()
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`

  // An owner, the organization (made the instance's operator with the setup token run.ts gave the server, so that
  // its owners may set its plan), the enterprise plan, and two connections: the directory orgplane serves, and the one the baseline writes to (so that
  // both write the same rows in the same organization; the lookups of both read the first one).
  const email = `scim.owner.${randomBytes(4).toString("hex")}@example.com`
  const signedUp = await ok("sign-up", request(agent, orgplane.url, "POST", "/v1/auth/sign-up", undefined, { email, password: "correct horse battery", name: "Owner" }))
  const session = signedUp.session.token as string
  const organizationId = (await ok("organization", request(agent, orgplane.url, "POST", "/v1/organizations", session, { name: "SCIM bench" }))).organization.id as string
  await ok("operator", request(agent, orgplane.url, "POST", "/v1/admin/operator", session, { setupToken: BENCH_SETUP_TOKEN }))
  const plan = await request(agent, orgplane.url, "PATCH", `/v1/admin/organizations/${organizationId}/plan`, session, { plan: "enterprise" })
  if (plan.status !== 200) {
    console.log(`\nscim: skipped (setting the enterprise plan answered ${plan.status}: ${plan.text.slice(0, 160)})`)
    return
  }
  const directory = async (name: string): Promise<Directory | undefined> => {
    const created = await request(agent, orgplane.url, "POST", "/v1/scim/connections", session, { name, groupMappingMode: "create_teams" })
    if (created.status !== 201) {
      console.log(`\nscim: skipped (POST /v1/scim/connections answered ${created.status}: this checkout has no SCIM management API)`)
      return undefined
    }
    const connectionId = JSON.parse(created.text).connection.id as string
    const token = (await ok("SCIM token", request(agent, orgplane.url, "POST", `/v1/scim/connections/${connectionId}/tokens`, session, { name: "bench" }))).token as string
    return { connectionId, token, ids: [] }
  }
  const ours = await directory("Okta")
  if (ours === undefined) return
  const theirs = baseline === undefined ? undefined : await directory("Baseline directory")

  console.log(
    `\nSCIM provisioning: ${USERS} Users by POST /Users, ${GROUPS} groups of ${GROUP_SIZE} members by POST /Groups with their` +
      ` members inline (mode create_teams), ${concurrency} connections; lookups ${lookups} a row of random existing Users` +
      ` (the same for both servers); latency in ms, cpu: the server's own CPU time per request, in µs`
  )

  /** People `from .. to - 1` of the directory provisioned through `target`, their ids kept. */
  const provision = (target: Target, into: Directory, prefix: string, from: number, to: number) =>
    run(target, to - from, concurrency, async (k) => {
      const i = from + k
      const reply = await request(agent, target.url, "POST", `/scim/v2/${into.connectionId}/Users`, into.token, userOf(prefix, i))
      if (reply.status !== 201) throw new Error(`${target.name}: POST /Users #${i}: HTTP ${reply.status} ${reply.text.slice(0, 300)}`)
      into.ids[i] = JSON.parse(reply.text).id
      if (i === 0) into.firstUser = reply.text
    }, (done) => process.stdout.write(` ${from + done}`))

  const provisioned: Array<{ label: string; ours: Figures; theirs: Figures | undefined }> = []
  const provisionBoth = async (from: number, to: number) => {
    if (to <= from) return
    process.stdout.write(`provisioning Users ${from + 1}-${to}: orgplane`)
    const ourFigures = await provision(orgplane, ours, "a", from, to)
    let theirFigures: Figures | undefined
    if (baseline !== undefined && theirs !== undefined) {
      process.stdout.write(`; baseline`)
      theirFigures = await provision(baseline, theirs, "b", from, to)
    }
    process.stdout.write(` (${elapsed()})\n`)
    provisioned.push({ label: `POST /Users (Users ${from + 1}-${to})`, ours: ourFigures, theirs: theirFigures })
  }

  // The baseline's writes must store what orgplane's would: orgplane reads back the first User the baseline made.
  const checkBaselineUser = async () => {
    if (baseline === undefined || theirs?.firstUser === undefined) return
    const read = await request(agent, orgplane.url, "GET", `/scim/v2/${theirs.connectionId}/Users/${theirs.ids[0]}`, theirs.token)
    compareAnswers("POST /Users (its User as orgplane reads it)", { target: orgplane, text: read.text }, { target: baseline, text: theirs.firstUser })
  }

  // And the audit event orgplane writes for each write, which the baseline writes too (scim-baseline.ts): one each, of
  // the same shape (the ids, instants and request ids aside), read from the log of both connections.
  const checkAuditEvents = async (action: string, count: number) => {
    if (baseline === undefined || theirs === undefined) return
    const shapes: Array<Record<string, unknown> | undefined> = []
    // One after the other: the server answers its statements over IPC one at a time.
    for (const directory of [ours, theirs]) {
      const rows = await orgplane.query(
        `SELECT count(*) OVER ()::int AS n, category, outcome, actor_type, actor_id = $3 AS actor_is_connection,
                actor_membership_id, actor_label, credential_id IS NOT NULL AS has_credential, ip IS NOT NULL AS has_ip,
                user_agent IS NOT NULL AS has_agent, request_id IS NOT NULL AS has_request_id,
                ARRAY(SELECT t ->> 'type' FROM jsonb_array_elements(targets) t ORDER BY 1) AS target_types
         FROM audit_events WHERE organization_id = $1 AND action = $2 AND actor_id = $3 LIMIT 1`,
        [organizationId, action, directory.connectionId]
      ).catch(() => [])
      shapes.push(rows[0])
    }
    const [a, b] = shapes
    if (a === undefined) return // a checkout without the audit log
    if (Number(b?.n) !== count || Number(a.n) !== count) {
      process.stderr.write(`warning: ${action} events: orgplane ${a.n}, baseline ${b?.n ?? 0}, expected ${count} each\n`)
    }
    const difference = firstDifference({ ...a, n: 0 }, { ...b, n: 0 })
    if (difference !== undefined) process.stderr.write(`warning: the baseline's ${action} event differs from orgplane's: ${difference}\n`)
  }

  type Lookup = { readonly label: string; readonly path: (i: number) => string }
  const lookupsAt = (size: number): ReadonlyArray<Lookup> => {
    const list = `/scim/v2/${ours.connectionId}/Users`
    const filtered = (filter: string) => `${list}?filter=${encodeURIComponent(filter)}`
    return [
      { label: `userName eq, ${size} Users`, path: (i) => filtered(`userName eq "${userOf("a", i).userName}"`) },
      { label: `externalId eq, ${size} Users`, path: (i) => filtered(`externalId eq "${externalIdOf("a", i)}"`) },
      ...(size > PAGE ? [{ label: `startIndex=${size - PAGE + 1}&count=${PAGE}`, path: () => `${list}?startIndex=${size - PAGE + 1}&count=${PAGE}` }] : [])
    ]
  }

  const looked: Array<{ label: string; ours: Figures; theirs: Figures | undefined }> = []
  const lookUp = async (size: number) => {
    for (const [n, lookup] of lookupsAt(size).entries()) {
      const people = picks(1000 + n, lookups, size)
      const warmUp = Math.min(lookups, Math.max(concurrency * 5, Math.round(lookups / 10)))
      const measured = async (target: Target) => {
        const get = async (i: number) => {
          const reply = await request(agent, target.url, "GET", lookup.path(i), ours.token)
          if (reply.status !== 200) throw new Error(`${target.name}: GET ${lookup.path(i)}: HTTP ${reply.status} ${reply.text.slice(0, 300)}`)
          const answer = JSON.parse(reply.text)
          const expected = lookup.label.includes("eq") ? 1 : PAGE
          if (answer.Resources.length !== expected) throw new Error(`${target.name}: GET ${lookup.path(i)}: ${answer.Resources.length} Users, expected ${expected}`)
        }
        await run(target, warmUp, concurrency, (k) => get(people[k % lookups]!))
        return run(target, lookups, concurrency, (k) => get(people[k]!))
      }
      if (baseline !== undefined) {
        const path = lookup.path(people[0]!)
        const [a, b] = await Promise.all([orgplane, baseline].map((target) => request(agent, target.url, "GET", path, ours.token)))
        compareAnswers(`GET ${lookup.label}`, { target: orgplane, text: a!.text }, { target: baseline, text: b!.text })
      }
      looked.push({ label: lookup.label, ours: await measured(orgplane), theirs: baseline === undefined ? undefined : await measured(baseline) })
    }
  }

  /** The plan of orgplane's lookup of the last User provisioned, as the database's statistics are now. */
  const planOf = async (on: "userName" | "externalId", size: number) => {
    const value = on === "userName" ? userOf("a", size - 1).userName.toLowerCase() : externalIdOf("a", size - 1)
    const rows = await orgplane.query(
      `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${userListStatement(on)}`,
      [organizationId, ours.connectionId, value, 0, PAGE]
    ).catch((error: Error) => [{ plan: `(EXPLAIN failed: ${error.message})` }])
    const plan = rows.map((row) => String(Object.values(row)[0]))
    const index = on === "userName" ? "scim_users_user_name_key" : "scim_users_external_id_key"
    return { plan, index, backed: plan.some((line) => line.includes(index)) }
  }
  const autovacuum = await orgplane.query("SHOW autovacuum", []).then((rows) => String(Object.values(rows[0] ?? {})[0]), () => "unknown")

  // Statistics: the lookups are measured as a server whose autovacuum keeps them current would run them (this dev
  // Postgres may have it off), so each lookup phase starts with an ANALYZE, as memory.ts does after its seeding. The
  // plan before the first one is printed: a table never analyzed is planned as if it were nearly empty.
  const analyze = () => orgplane.sql("ANALYZE", [])

  await provisionBoth(0, SMALL)
  await checkBaselineUser()
  await checkAuditEvents("scim.user.provision", SMALL)
  const unanalyzed = await planOf("userName", SMALL)
  await analyze()
  process.stdout.write(`lookups at ${SMALL} Users`)
  await lookUp(SMALL)
  process.stdout.write(` (${elapsed()})\n`)
  await provisionBoth(SMALL, USERS)
  if (USERS > SMALL) {
    await analyze()
    process.stdout.write(`lookups at ${USERS} Users`)
    await lookUp(USERS)
    process.stdout.write(` (${elapsed()})\n`)
  }

  // Groups: each POST carries its 50 members; the team follows in the same transaction.
  process.stdout.write(`provisioning ${GROUPS} groups: orgplane`)
  const groupsOf = async (target: Target, into: Directory, prefix: string) => {
    let first: string | undefined
    const figures = await run(target, GROUPS, concurrency, async (g) => {
      const reply = await request(agent, target.url, "POST", `/scim/v2/${into.connectionId}/Groups`, into.token, groupOf(prefix, g, into.ids))
      if (reply.status !== 201) throw new Error(`${target.name}: POST /Groups #${g}: HTTP ${reply.status} ${reply.text.slice(0, 300)}`)
      if (g === 0) first = reply.text
    })
    return { figures, first }
  }
  const ourGroups = await groupsOf(orgplane, ours, "a")
  let theirGroups: Awaited<ReturnType<typeof groupsOf>> | undefined
  if (baseline !== undefined && theirs !== undefined) {
    process.stdout.write("; baseline")
    theirGroups = await groupsOf(baseline, theirs, "b")
    // The baseline's first group, as orgplane reads it back.
    const made = JSON.parse(theirGroups.first!)
    const read = await request(agent, orgplane.url, "GET", `/scim/v2/${theirs.connectionId}/Groups/${made.id}`, theirs.token)
    compareAnswers("POST /Groups (its group as orgplane reads it)", { target: orgplane, text: read.text }, { target: baseline, text: theirGroups.first! })
    await checkAuditEvents("scim.group.provision", GROUPS)
  }
  process.stdout.write(` (${elapsed()})\n`)

  // The table.
  const header = "per s   p50 ms   p95 ms   cpu µs"
  console.log(`\n${"".padEnd(LABEL)} | ${"orgplane".padEnd(35)} | baseline (node:http + pg)`)
  console.log(`${"request".padEnd(LABEL)} | ${header.padStart(35)} | ${header.padStart(35)}`)
  console.log(`${"-".repeat(LABEL)}-+-${"-".repeat(35)}-+-${"-".repeat(35)}`)
  const row = (label: string, a: Figures, b: Figures | undefined) => console.log(`${label.padEnd(LABEL)} | ${figures(a)} | ${figures(b)}`)
  for (const line of provisioned) row(line.label, line.ours, line.theirs)
  row(`POST /Groups (${GROUP_SIZE} members)`, ourGroups.figures, theirGroups?.figures)
  for (const line of looked) row(`GET /Users ${line.label}`, line.ours, line.theirs)

  // Users/s over the whole run, and how the lookups grew from the small size to the full one.
  const overall = (side: "ours" | "theirs") => {
    const parts = provisioned.map((line) => line[side])
    if (parts.some((part) => part === undefined)) return undefined
    return USERS / parts.reduce((seconds, part, k) => seconds + (k === 0 ? SMALL : USERS - SMALL) / part!.perSecond, 0)
  }
  const [ourRate, theirRate] = [overall("ours"), overall("theirs")]
  console.log(
    `\n${USERS} Users: orgplane ${ourRate!.toFixed(0)} Users/s${theirRate === undefined ? "" : `, baseline ${theirRate.toFixed(0)} Users/s`};` +
      ` ${GROUPS} groups: orgplane ${ourGroups.figures.perSecond.toFixed(1)} groups/s` +
      `${theirGroups === undefined ? "" : `, baseline ${theirGroups.figures.perSecond.toFixed(1)} groups/s`}`
  )
  if (USERS > SMALL) {
    for (const on of ["userName eq", "externalId eq"]) {
      const [small, full] = looked.filter((line) => line.label.startsWith(on))
      const growth = (side: "ours" | "theirs", of: "p50" | "cpuPerRequest") => {
        const [a, b] = [small?.[side]?.[of], full?.[side]?.[of]]
        return a === undefined || b === undefined ? "-" : (b / a).toFixed(2)
      }
      console.log(
        `${on}, at ${USERS} / at ${SMALL} Users (flat: near 1): median orgplane ${growth("ours", "p50")}, baseline ${growth("theirs", "p50")};` +
          ` cpu per request orgplane ${growth("ours", "cpuPerRequest")}, baseline ${growth("theirs", "cpuPerRequest")}`
      )
    }
  }

  // The plans of the lookups at the full size, and before the first ANALYZE.
  for (const on of ["userName", "externalId"] as const) {
    const { backed, index, plan } = await planOf(on, USERS)
    if (on === "userName") console.log(`\nEXPLAIN ANALYZE of GET /Users?filter=userName eq "…" at ${USERS} Users:\n${plan.map((line) => `  ${line}`).join("\n")}`)
    console.log(`${on} eq index-backed (${index}): ${backed ? "yes" : "no"}`)
  }
  console.log(
    `before the first ANALYZE (autovacuum ${autovacuum}), at ${SMALL} Users: userName eq index-backed: ${unanalyzed.backed ? "yes" : "no"}` +
      (unanalyzed.backed ? "" : ` (${unanalyzed.plan.filter((line) => /Scan|Removed/.test(line)).map((line) => line.trim()).join("; ")})`)
  )
}

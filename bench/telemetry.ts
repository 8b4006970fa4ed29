/**
 * The telemetry ingest benchmark (`pnpm bench --telemetry` or ORGPLANE_BENCH_TELEMETRY=1): events per second posted
 * to `POST /v1/telemetry/ingest` in batches of 50 over keep-alive connections, with an API key as the desktop app
 * or a worker would, beside the baseline (bench/baseline.ts) doing the same authentication and the same one
 * multi-row INSERT. Started by run.ts with its servers; prints figures, asserts nothing.
 */
import { randomBytes } from "node:crypto"
import { type Agent, request as httpRequest } from "node:http"
import { load as runTasks, ok, percentile } from "./http.js"

interface Target {
  readonly name: string
  readonly url: string
  /** CPU time (user + system) the server process has used so far, in microseconds. */
  readonly cpu: () => Promise<number | undefined>
}

export const BATCH = 50

const TYPES = ["session.active", "task.started", "task.completed", "task.failed", "user.active"]

const post = (agent: Agent, base: string, path: string, headers: Record<string, string>, body: string) =>
  new Promise<{ readonly status: number; readonly text: string }>((resolve, reject) => {
    const request = httpRequest(new URL(path, base), {
      method: "POST",
      agent,
      headers: { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }
    }, (response) => {
      let text = ""
      response.setEncoding("utf8").on("data", (chunk) => (text += chunk)).on("end", () => resolve({ status: response.statusCode ?? 0, text }))
    })
    request.on("error", reject)
    request.end(body)
  })


/** A batch of 50 events of the last hour, each of a session with two dimensions on a third of them. */
const batch = (index: number) =>
  JSON.stringify({
    events: Array.from({ length: BATCH }, (_, i) => ({
      type: TYPES[(index + i) % TYPES.length],
      timestamp: new Date(Date.now() - ((index * BATCH + i) % 3_600_000)).toISOString(),
      source: i % 2 === 0 ? "app" : "worker",
      sessionId: `bench-session-${index % 100}`,
      durationMs: (index * 7 + i * 13) % 100_000,
      success: i % 5 !== 0,
      ...(i % 3 === 0 ? { dimensions: [{ type: "project", label: `Project ${i % 10}` }, { type: "model", label: "Model", value: "model-1" }] } : {})
    }))
  })

const load = async (agent: Agent, target: Target, apiKey: string, requests: number, concurrency: number) => {
  const bodies = Array.from({ length: 64 }, (_, index) => batch(index))
  const cpuBefore = await target.cpu()
  const { latencies, seconds } = await runTasks(requests, concurrency, async (index) => {
    const { status, text } = await post(agent, target.url, "/v1/telemetry/ingest", { "x-api-key": apiKey }, bodies[index % bodies.length]!)
    if (status !== 204) throw new Error(`${target.name}: ingest answered ${status} ${text.slice(0, 200)}`)
  })
  const cpuAfter = await target.cpu()
  return {
    requests: requests / seconds,
    events: (requests * BATCH) / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuPerEvent: cpuBefore === undefined || cpuAfter === undefined ? undefined : (cpuAfter - cpuBefore) / (requests * BATCH)
  }
}

type Figures = Awaited<ReturnType<typeof load>>

const show = (figures: Figures | undefined) =>
  figures === undefined
    ? "—"
    : `${figures.events.toFixed(0).padStart(9)} ${figures.requests.toFixed(0).padStart(7)} ${figures.p50.toFixed(1).padStart(7)} ${
      figures.p99.toFixed(1).padStart(7)
    } ${figures.cpuPerEvent === undefined ? "      —" : figures.cpuPerEvent.toFixed(1).padStart(7)}`

/** Signs up an owner with an organization and an API key on `orgplane`, then measures both servers. */
export const measure = async (options: {
  readonly agent: Agent
  readonly orgplane: Target
  readonly baseline: Target | undefined
  readonly requests: number
  readonly concurrency: number
}) => {
  const { agent, concurrency, orgplane, requests } = options
  const email = `telemetry.${randomBytes(4).toString("hex")}@example.com`
  const signedUp = await ok("sign-up", post(agent, orgplane.url, "/v1/auth/sign-up", {}, JSON.stringify({ email, password: "correct horse battery", name: "Bench" })))
  const auth = { authorization: `Bearer ${signedUp.session.token}` }
  await ok("organization", post(agent, orgplane.url, "/v1/organizations", auth, JSON.stringify({ name: "Telemetry bench" })))
  const apiKey = (await ok("API key", post(agent, orgplane.url, "/v1/api-keys", auth, JSON.stringify({ name: "bench" })))).key as string

  const warmUp = Math.min(requests, Math.max(concurrency * 10, Math.round(requests / 10)))
  console.log(`\ntelemetry ingest: ${requests} requests of ${BATCH} events after ${warmUp} to warm up, ${concurrency} keep-alive connections, an API key`)
  console.log(`${"server".padEnd(10)} | ${"events/s".padStart(9)} ${"req/s".padStart(7)} ${"p50 ms".padStart(7)} ${"p99 ms".padStart(7)} ${"cpu µs/event".padStart(7)}`)
  for (const target of [orgplane, options.baseline]) {
    if (target === undefined) {
      console.log(`${"baseline".padEnd(10)} | skipped (set DATABASE_URL to compare)`)
      continue
    }
    await load(agent, target, apiKey, warmUp, concurrency)
    console.log(`${target.name.padEnd(10)} | ${show(await load(agent, target, apiKey, requests, concurrency))}`)
  }
}

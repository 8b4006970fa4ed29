/**
 * Memory and idle CPU (`pnpm bench --footprint`, Postgres): for orgplane, the raw node:http + pg baseline and Hono +
 * zod + pg, one server at a time while the others idle, on the organization requests.ts seeds:
 *
 * - idle CPU: the server's CPU time over `--idle-cpu=S` seconds (default 20) of nothing, in ms per second, after
 *   `--settle=S` seconds (default 40) in which orgplane collects the heap grown while seeding (`ORGPLANE_MEMORY_RELEASE`);
 * - idle RSS and V8 heap in use, before;
 * - `--load=S` seconds (default 60) of `GET /v1/me` with the owner's session from ORGPLANE_BENCH_FOOTPRINT_CONNECTIONS
 *   keep-alive connections (default 100), the resident set read every 500 ms: its peak;
 * - then `--idle=S` seconds (default 60) of nothing, and the RSS and heap after.
 *
 * Beside them issue 59's targets: RSS after the idle ≤ 1.2× the RSS before the load, the peak ≤ 1.5× raw's peak,
 * idle CPU < 1 ms a second. With the RSS, what `process.memoryUsage()` says lives outside the V8 heap (`external`,
 * ArrayBuffers among it), to see where memory that is not given back is held. Prints figures; asserts nothing.
 */
import { Agent } from "node:http"
import { loadFor, request } from "./http.js"
import type { Seeded, Target, Usage } from "./requests.js"

export interface Options {
  readonly loadSeconds: number
  readonly idleSeconds: number
  readonly idleCpuSeconds: number
  /**
   * Seconds of nothing before the idle CPU window: seeding is a load, and orgplane collects its heap once a load has
   * passed (`ORGPLANE_MEMORY_RELEASE`, 30 s after it); the window measures the idle that follows, not that collection.
   */
  readonly settleSeconds: number
  readonly connections: number
}

export const DEFAULTS: Options = { loadSeconds: 60, idleSeconds: 60, idleCpuSeconds: 20, settleSeconds: 40, connections: 100 }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const mb = (bytes: number | undefined) => (bytes === undefined ? "-" : (bytes / 1048576).toFixed(0))

interface Footprint {
  readonly name: string
  readonly idleCpu: number | undefined
  readonly before: Usage | undefined
  readonly peak: number
  readonly peakUsage: Usage | undefined
  readonly after: Usage | undefined
  readonly perSecond: number
}

const measureOne = async (target: Target, seeded: Seeded, options: Options): Promise<Footprint> => {
  process.stdout.write(`${target.name}: settle ${options.settleSeconds} s, idle ${options.idleCpuSeconds} s`)
  await sleep(options.settleSeconds * 1000)
  const cpuFrom = await target.usage()
  const idleFrom = performance.now()
  await sleep(options.idleCpuSeconds * 1000)
  const cpuTo = await target.usage()
  const idleCpu = cpuFrom?.cpuMicros === undefined || cpuTo?.cpuMicros === undefined
    ? undefined
    : (cpuTo.cpuMicros - cpuFrom.cpuMicros) / 1000 / ((performance.now() - idleFrom) / 1000)
  const before = await target.usage()

  process.stdout.write(`, load ${options.loadSeconds} s`)
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections })
  let peak = before?.rss ?? 0
  let peakUsage = before
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      const usage = await target.usage()
      if (usage?.rss !== undefined && usage.rss > peak) {
        peak = usage.rss
        peakUsage = usage
      }
      await sleep(500)
    }
  })()
  const headers = { authorization: `Bearer ${seeded.token}` }
  const { count, seconds } = await loadFor(options.loadSeconds, options.connections, async () => {
    const reply = await request(agent, target.url, "GET", "/v1/me", headers)
    if (reply.status !== 200) throw new Error(`GET /v1/me on ${target.name}: HTTP ${reply.status} ${reply.text.slice(0, 200)}`)
  })
  sampling = false
  await sampler
  const end = await target.usage()
  if (end?.rss !== undefined && end.rss > peak) {
    peak = end.rss
    peakUsage = end
  }
  // Idle means no connection held open either, as after clients leave.
  agent.destroy()

  process.stdout.write(`, idle ${options.idleSeconds} s\n`)
  await sleep(options.idleSeconds * 1000)
  const after = await target.usage()
  return { name: target.name, idleCpu, before, peak, peakUsage, after, perSecond: count / seconds }
}

const mark = (good: boolean | undefined) => (good === undefined ? "-" : good ? "met" : "NOT MET")

export const measure = async (targets: ReadonlyArray<Target>, seeded: Seeded, options: Options) => {
  console.log(
    `\nmemory: one server at a time (the others idle): ${options.settleSeconds} s to settle, idle CPU over ${options.idleCpuSeconds} s, then ${options.loadSeconds} s of GET /v1/me` +
      ` (session) at ${options.connections} connections, then ${options.idleSeconds} s idle; RSS read from the server every 500 ms`
  )
  const results: Array<Footprint> = []
  for (const target of targets) results.push(await measureOne(target, seeded, options))
  const raw = results.find((result) => result.name === "baseline")
  console.log(`\n| server | idle CPU (< 1 ms/s) | RSS idle before | peak RSS (≤ 1.5× raw's) | RSS after ${options.idleSeconds} s idle (≤ 1.2× before) | V8 heap used before / peak / after | external (ArrayBuffers) after | req/s under load |`)
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |")
  for (const result of results) {
    const before = result.before?.rss
    const after = result.after?.rss
    const afterRatio = before === undefined || after === undefined ? undefined : after / before
    const peakRatio = raw === undefined || raw.peak === 0 ? undefined : result.peak / raw.peak
    console.log(
      `| ${result.name} | ${result.idleCpu === undefined ? "-" : result.idleCpu.toFixed(2)} ms/s ${mark(result.idleCpu === undefined ? undefined : result.idleCpu < 1)}` +
        ` | ${mb(before)} MB | ${mb(result.peak)} MB (${peakRatio === undefined ? "-" : `${peakRatio.toFixed(2)}×`}) ${mark(peakRatio === undefined ? undefined : peakRatio <= 1.5)}` +
        ` | ${mb(after)} MB (${afterRatio === undefined ? "-" : `${afterRatio.toFixed(2)}×`}) ${mark(afterRatio === undefined ? undefined : afterRatio <= 1.2)}` +
        ` | ${mb(result.before?.heapUsed)} / ${mb(result.peakUsage?.heapUsed)} / ${mb(result.after?.heapUsed)} MB` +
        ` | ${mb(result.after?.external)} (${mb(result.after?.arrayBuffers)}) MB | ${result.perSecond.toFixed(0)} |`
    )
  }
}

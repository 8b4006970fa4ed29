/**
 * The per-layer bill of the request path (`pnpm bench --layers`, Postgres): what each step a request passes costs in
 * CPU and in bytes allocated, found by ablation. One orgplane server serves with every step ("full"); beside it, one
 * server per step of the server's platform/Ablation.ts with that step left out, one with every step of the request
 * edge left out ("no edge") and one with every step left out ("none"), and the raw node:http + pg baseline doing the
 * same SQL. All on one seeded organization (requests.ts's `prepare`; every server's answers compared with full's).
 *
 * The ablated servers run a few at a time (a batch; Postgres's 100 connections do not hold sixteen pools), beside
 * full and raw, which run throughout. Each batch is measured in interleaved rounds (each server in turn, the first
 * rotating, `--duration` seconds each, `--rounds`), medians; a step's cost is its batch's full less its server, so
 * that a drift of the machine between batches does not enter it. What no ablation reaches (the socket and parsing,
 * routing, authentication, the handler and its SQL, encoding, Effect's runtime) is "none" less raw.
 *
 * Bytes allocated: V8's sampling heap profiler in each server (child.ts), collected objects included, over one window
 * of `--duration` seconds per endpoint and server after the batch's rounds.
 *
 * Endpoints: `GET /v1/me`, `GET /v1/members?limit=50` and `POST /v1/teams` with the owner's session
 * (ORGPLANE_BENCH_ENDPOINTS chooses others of requests.ts's). The read rows of a step only writes pass (authority,
 * audit, idempotency) show the method's noise.
 */
import { Agent } from "node:http"
import * as Requests from "./requests.js"

export interface Variant {
  readonly name: string
  /** The steps it leaves out (ORGPLANE_BENCH_LEAVE_OUT). */
  readonly leftOut: ReadonlyArray<string>
}

/** The steps of the request edge (platform/Ablation.ts), as opposed to each handler's. */
const EDGE = ["trace", "log", "databaseWait", "headers", "errors", "guard", "idempotencyEdge"]

/** The ablated servers: each step alone, the edge's steps, every step. */
export const variants = (steps: ReadonlyArray<string>): ReadonlyArray<Variant> => [
  ...steps.map((step) => ({ name: step, leftOut: [step] })),
  { name: "no edge", leftOut: steps.filter((step) => EDGE.includes(step)) },
  { name: "none", leftOut: [...steps] }
]

/** Ablated servers at a time, beside full and raw: six orgplane pools of 10 and raw's within Postgres's 100. */
export const BATCH = 4

export const DEFAULT_ENDPOINTS = ["me", "members", "teams"]

/** A server's medians on each endpoint (in the order of the endpoints). */
interface Row {
  readonly name: string
  readonly cpu: ReadonlyArray<number | undefined>
  readonly allocated: ReadonlyArray<number | undefined>
}

/** A batch's figures: full's, raw's, and each ablated server's. */
export interface Batch {
  readonly full: Row
  readonly raw: Row
  readonly ablated: ReadonlyArray<Row>
}

export const endpointsOf = (seeded: Requests.Seeded, ids: ReadonlyArray<string>) => {
  const all = Requests.endpoints(seeded)
  return ids.map((id) => {
    const found = all.find((endpoint) => endpoint.id === id)
    if (found === undefined) throw new Error(`--layers: no endpoint ${id} (${all.map((endpoint) => endpoint.id).join(", ")})`)
    return found
  })
}

/** One batch: `ablated` beside `full` and `raw`, answers compared first, then measured. */
export const measureBatch = async (options: {
  readonly full: Requests.Target
  readonly ablated: ReadonlyArray<Requests.Target>
  readonly raw: Requests.Target
  readonly endpoints: ReadonlyArray<Requests.Endpoint>
  /** One per endpoint: the count its requests go on from (writes never repeat). */
  readonly counters: ReadonlyArray<{ next: number }>
  readonly method: Requests.Method
}): Promise<Batch> => {
  const { concurrency, rounds, seconds } = options.method
  const { counters, endpoints } = options
  const servers = [options.full, ...options.ablated]
  const targets: ReadonlyArray<Requests.Target> = [...servers, options.raw]
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  const cpu = endpoints.map(() => targets.map((): Array<number> => []))
  const allocated = endpoints.map(() => servers.map((): number | undefined => undefined))
  try {
    for (const [e, endpoint] of endpoints.entries()) {
      const differences = await Requests.compare(agent, targets, endpoint, counters[e]!)
      if (differences.length > 0) throw new Error(`--layers: the servers answer differently:\n${differences.join("\n")}`)
    }
    const warmUp = Math.max(1, Math.min(3, seconds / 2))
    for (const [e, endpoint] of endpoints.entries()) {
      for (const target of targets) await Requests.measureOnce(agent, target, endpoint, warmUp, concurrency, counters[e]!)
    }
    for (let round = 0; round < rounds; round++) {
      for (const [e, endpoint] of endpoints.entries()) {
        for (let k = 0; k < targets.length; k++) {
          const t = (k + round) % targets.length
          const figures = await Requests.measureOnce(agent, targets[t]!, endpoint, seconds, concurrency, counters[e]!)
          if (figures.cpu !== undefined) cpu[e]![t]!.push(figures.cpu)
        }
      }
    }
    // Allocation apart from the CPU figures: the profiler's sampling costs some CPU of its own.
    for (const [e, endpoint] of endpoints.entries()) {
      for (const [t, server] of servers.entries()) {
        allocated[e]![t] = await Requests.allocationPerRequest(agent, server, endpoint, seconds, concurrency, counters[e]!)
      }
    }
  } finally {
    agent.destroy()
  }
  const rowOf = (t: number, name: string): Row => ({
    name,
    cpu: endpoints.map((_, e) => Requests.median(cpu[e]![t]!)),
    allocated: endpoints.map((_, e) => allocated[e]![t])
  })
  return {
    full: rowOf(0, options.full.name),
    ablated: options.ablated.map((server, i) => rowOf(i + 1, server.name)),
    raw: rowOf(targets.length - 1, options.raw.name)
  }
}

const less = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a - b)

/** The bill: a row per step (what leaving it out saved in its batch), full's, none's and raw's. */
export const print = (batches: ReadonlyArray<Batch>, endpoints: ReadonlyArray<Requests.Endpoint>, method: Requests.Method) => {
  const e = endpoints.map((_, i) => i)
  const kb = (bytes: number | undefined) => (bytes === undefined ? "-" : (bytes / 1024).toFixed(1))
  const cell = (cpu: number | undefined, bytes: number | undefined) => `${Requests.num(cpu, 0, 6)} µs ${kb(bytes).padStart(7)} KB`
  const medianOf = (pick: (batch: Batch) => number | undefined) => Requests.median(batches.map(pick))
  console.log(
    `\nthe request path's bill by layer: ${batches.length} batches of ${BATCH} ablated servers beside full and raw, ` +
      `${method.rounds} interleaved rounds of ${method.seconds} s per endpoint and server, ${method.concurrency} connections; medians. ` +
      `cpu: the server's CPU µs per request; KB: allocated per request; a step's row: what leaving it out saves (its batch's full less its server)`
  )
  const line = (label: string, cells: ReadonlyArray<string>) => console.log(`${label.padEnd(18)} | ${cells.map((text) => text.padStart(24)).join(" | ")}`)
  line("", endpoints.map((endpoint) => endpoint.label.replace(/ \(session\)$/, "")))
  line("full", e.map((i) => cell(medianOf((batch) => batch.full.cpu[i]), medianOf((batch) => batch.full.allocated[i]))))
  let none: Row | undefined
  let noneBatch: Batch | undefined
  for (const batch of batches) {
    for (const row of batch.ablated) {
      if (row.name === "none") {
        none = row
        noneBatch = batch
      }
      line(`- ${row.name}`, e.map((i) => cell(less(batch.full.cpu[i], row.cpu[i]), less(batch.full.allocated[i], row.allocated[i]))))
    }
  }
  if (none !== undefined && noneBatch !== undefined) {
    line("none", e.map((i) => cell(none.cpu[i], none.allocated[i])))
    line("raw", e.map((i) => cell(noneBatch.raw.cpu[i], undefined)))
    line("none - raw", e.map((i) => cell(less(none.cpu[i], noneBatch.raw.cpu[i]), undefined)))
  }
  line("full ÷ raw", e.map((i) => {
    const ratio = Requests.median(batches.map((batch) => {
      const full = batch.full.cpu[i]
      const raw = batch.raw.cpu[i]
      return full === undefined || raw === undefined ? undefined : full / raw
    }))
    return ratio === undefined ? "-" : `${ratio.toFixed(2)}×`
  }))
  console.log(
    `(- step: full less the server without it, in the same batch; "no edge" and "none" leave out several; none - raw: what ` +
      `no ablation reaches. A step only writes pass shows on reads the method's noise.)`
  )
}

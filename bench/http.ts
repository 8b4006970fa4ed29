/**
 * The small HTTP helpers the bench sections share: one request over a keep-alive agent, a request that must
 * succeed, a load loop of `count` tasks over `concurrency` workers, and a percentile of sorted latencies.
 */
import { type Agent, request as httpRequest } from "node:http"

export interface Reply {
  readonly status: number
  readonly text: string
}

/** One request; `body` is sent as JSON. Resolves with the status and the body's text, whatever the status. */
export const request = (agent: Agent, base: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
  new Promise<Reply>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const req = httpRequest(new URL(path, base), {
      method,
      agent,
      headers: {
        ...headers,
        ...(payload === undefined ? {} : { "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) })
      }
    }, (res) => {
      let text = ""
      res.setEncoding("utf8").on("data", (chunk) => (text += chunk)).on("end", () => resolve({ status: res.statusCode ?? 0, text }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(payload)
  })

/** A reply that must be a success (2xx), its JSON body parsed (undefined when empty). */
export const ok = async (what: string, reply: Promise<Reply>) => {
  const { status, text } = await reply
  if (status < 200 || status >= 300) throw new Error(`${what}: HTTP ${status} ${text.slice(0, 300)}`)
  return text === "" ? undefined : JSON.parse(text)
}

/** The value at quantile `p` (0..1) of ascending `sorted`; 0 when empty. */
export const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0

/**
 * Runs `task(0 .. count - 1)` from `concurrency` workers, each starting the next task when its last one ends;
 * the latency of each task in ms (ascending) and the wall time of all, in seconds. `progress` hears every
 * 1000th completion.
 */
export const load = async (count: number, concurrency: number, task: (i: number) => Promise<void>, progress?: (done: number) => void) => {
  const latencies: Array<number> = []
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) {
      const i = next++
      const at = performance.now()
      await task(i)
      latencies.push(performance.now() - at)
      if (progress !== undefined && latencies.length % 1000 === 0) progress(latencies.length)
    }
  }))
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return { latencies, seconds }
}

/**
 * Runs `task(0, 1, ...)` from `concurrency` workers for `seconds` (each starting the next task when its last one
 * ends, none started after the time is up): the number done, the latency of each in ms (ascending) and the wall time
 * of all, in seconds.
 */
export const loadFor = async (seconds: number, concurrency: number, task: (i: number) => Promise<void>) => {
  const latencies: Array<number> = []
  let next = 0
  const started = performance.now()
  const until = started + seconds * 1000
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < until) {
      const i = next++
      const at = performance.now()
      await task(i)
      latencies.push(performance.now() - at)
    }
  }))
  const wall = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return { count: latencies.length, latencies, seconds: wall }
}

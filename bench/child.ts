/**
 * The side of run.ts's protocol that both benchmarked servers share: serve on a free loopback port, print
 * `{"url": ...}` on stdout, answer `"rss"` (with the V8 heap in use, the CPU time used so far and the time spent in GC) and `{sql, params, rows?}` (a statement on the
 * server's database, for bulk seeding or an EXPLAIN) over the IPC channel, and stop when told to or when the harness goes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import * as Fs from "node:fs"
import { Session } from "node:inspector/promises"
import * as Path from "node:path"
import { PerformanceObserver } from "node:perf_hooks"

/** Time spent in garbage collection since start, ms: the durations of V8's 'gc' performance entries, summed. */
let gcMillis = 0
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMillis += entry.duration
}).observe({ entryTypes: ["gc"] })

/** A FiberFailure's Cause (ManagedRuntime.runPromise rejects with one); a failure's error is its `error`. */
const fiberFailureCause = Symbol.for("effect/Runtime/FiberFailure/Cause")

/** An error's message with its causes' (an SqlError's is generic; the database's reason is its cause's). */
const describeError = (error: unknown): string => {
  const parts: Array<string> = []
  const member = (at: unknown, key: PropertyKey): unknown => (typeof at === "object" && at !== null ? Reflect.get(at, key) : undefined)
  const next = (at: unknown): unknown => member(member(at, fiberFailureCause), "error") ?? member(at, "cause")
  for (let at: unknown = error, depth = 0; at !== undefined && at !== null && depth < 5; at = next(at), depth++) {
    const message = typeof at === "object" && at !== null && "message" in at ? String(at.message) : String(at)
    if (!parts.includes(message)) parts.push(message)
  }
  return parts.join(": ")
}

/**
 * V8's sampling heap profiler over a window (`"allocation-start"`, then `"allocation-stop"`): the bytes allocated in it,
 * collected objects included, estimated from the samples (each stands for about `interval` bytes). With
 * ORGPLANE_BENCH_ALLOCATION_PROFILES=<folder>, each window's profile is written there too.
 */
const allocation = (() => {
  const interval = 4096
  let session: Session | undefined
  return {
    start: async () => {
      session = new Session()
      session.connect()
      await session.post("HeapProfiler.startSampling", {
        samplingInterval: interval,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true
      })
    },
    stop: async (): Promise<number> => {
      if (session === undefined) return Number.NaN
      const { profile } = await session.post("HeapProfiler.stopSampling")
      session.disconnect()
      session = undefined
      // Kept for a look in DevTools (Memory, "Load profile"), named by the server's script and process.
      const folder = process.env.ORGPLANE_BENCH_ALLOCATION_PROFILES
      if (folder !== undefined && folder !== "") {
        Fs.mkdirSync(folder, { recursive: true })
        const name = `${Path.basename(process.argv[1] ?? "server", ".ts")}-${process.pid}-${Date.now()}.heapprofile`
        Fs.writeFileSync(Path.join(folder, name), JSON.stringify(profile))
      }
      let bytes = 0
      const walk = (node: typeof profile.head) => {
        bytes += node.selfSize
        for (const child of node.children) walk(child)
      }
      walk(profile.head)
      return bytes
    }
  }
})()

export const serve = async (
  listener: (request: IncomingMessage, response: ServerResponse) => void,
  dispose: () => Promise<unknown>,
  /** Runs a statement on the server's own database connection, for bulk seeding (`{sql, params}` over IPC). */
  sql?: (text: string, params: ReadonlyArray<unknown>) => Promise<ReadonlyArray<unknown>>
) => {
  const server = createServer(listener)
  // The load generator keeps its connections between phases; do not drop them after Node's default 5 s.
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("expected a TCP address")
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`)

  let stopping = false
  const stop = () => {
    if (stopping) return
    stopping = true
    server.closeAllConnections()
    server.close()
    void dispose().finally(() => process.exit(0))
    // A database that does not answer must not keep the process alive.
    setTimeout(() => process.exit(0), 3000).unref()
  }
  process.on("SIGTERM", stop)
  process.on("message", (message: unknown) => {
    if (message === "rss") {
      const cpu = process.cpuUsage()
      const memory = process.memoryUsage()
      process.send?.({
        rss: memory.rss,
        heapUsed: memory.heapUsed,
        heapTotal: memory.heapTotal,
        external: memory.external,
        arrayBuffers: memory.arrayBuffers,
        cpuMicros: cpu.user + cpu.system,
        gcMillis
      })
    } else if (message === "allocation-start") {
      void allocation.start().then(() => process.send?.({ allocation: "started" }))
    } else if (message === "allocation-stop") {
      void allocation.stop().then((allocatedBytes) => process.send?.({ allocatedBytes }))
    } else if (typeof message === "object" && message !== null && "sql" in message) {
      const { params, rows: withRows, sql: text } = message as {
        readonly sql: string
        readonly params: ReadonlyArray<unknown>
        /** Answer the rows too (a small result, such as an EXPLAIN), not only their number. */
        readonly rows?: boolean
      }
      const reply = sql === undefined
        ? Promise.resolve({ sqlError: "this server cannot run SQL for the harness" })
        : sql(text, params).then(
          (rows) => (withRows === true ? { sqlRows: rows.length, rows } : { sqlRows: rows.length }),
          // An SqlError's message is generic ("Failed to execute statement"); the database's reason is in its cause,
          // which a FiberFailure (ManagedRuntime.runPromise's rejection) carries in its pretty-printed message's lines.
          (error) => ({ sqlError: describeError(error) })
        )
      void reply.then((answer) => process.send?.(answer))
    }
  })
  // The IPC channel closes when the harness exits, even when it is killed: do not outlive it.
  process.on("disconnect", stop)
}

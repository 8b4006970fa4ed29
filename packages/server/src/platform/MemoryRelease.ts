/**
 * Gives memory back once a load has passed.
 *
 * Under load V8 grows its heap (the old generation to 250 MB at 100 connections on `/v1/me`) and keeps what it grew
 * when the load stops: its memory reducer waits for a quiet mutator, and the durable engine's and the audit streams'
 * polls allocate a little every second, so it never sees one. Measured: 60 s after the load the heap held 57 MB of
 * live objects in 325 MB committed, 566 MB resident; one full collection brought the process to 184 MB resident,
 * below its idle size before the load (325 MB).
 *
 * So this watches the process's CPU time every few seconds, off the request path: after a busy stretch (a window
 * at 10% of a core or more), once six windows in a row are quiet (30 s under 2%), it runs one full collection. Nothing
 * runs while the server is idle or busy; a collection of a heap this size takes tens of milliseconds, once per load.
 *
 * Off unless `ORGPLANE_MEMORY_RELEASE=true`: on a quiet machine a server with it on answered `GET /v1/me` at 908 µs
 * of CPU a request against 745 for one with it off (medians of 8 interleaved rounds), though neither had collected
 * yet; reaching the collector (below) looks to be the cost, not the collection. Until that is understood, a process
 * keeps its peak by default, as Node does, and an operator who prefers the memory turns this on.
 *
 * The collector is reached as Jest reaches it for its heap reports, the first time one is due: `--expose-gc` set at
 * run time makes new V8 contexts carry `gc`, and one such context hands it over; the host's own global scope is left
 * as it was.
 */
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as V8 from "node:v8"
import * as Vm from "node:vm"

/** The documented environment variable, for `serve --help` and the README. */
export const environment = [
  ["ORGPLANE_MEMORY_RELEASE", "false", "true: once a load has passed (a busy stretch, then 30 quiet seconds), run one full garbage collection so that the heap grown for it is given back. Off, the process keeps its peak, as Node does."]
] as const

/** How often the CPU time is read, and the shares of a core that make a window busy or quiet. */
export const window = Duration.seconds(5)
const busyShare = 0.1
const quietShare = 0.02
/** Quiet windows after a busy stretch before collecting. */
// 30 s, not less: a collection leaves V8 to grow its young generation and warm up again, measured at up to 20% more
// CPU a request for the minute after it on a shared machine, so gaps between bursts of requests must not trigger one.
const quietWindows = 6

/** One window's verdict from the CPU time it used. */
export type Load = "busy" | "quiet" | "between"

export const loadOf = (cpuMicros: number, windowMillis: number): Load => {
  const share = cpuMicros / 1000 / windowMillis
  return share >= busyShare ? "busy" : share < quietShare ? "quiet" : "between"
}

/** Where the watcher stands: whether a load has passed since the last collection, and the quiet windows since. */
export interface State {
  readonly loaded: boolean
  readonly quiet: number
}

export const initial: State = { loaded: false, quiet: 0 }

/** The next state after a window, and whether to collect now. */
export const step = (state: State, load: Load): readonly [State, boolean] => {
  if (load === "busy") return [{ loaded: true, quiet: 0 }, false]
  if (!state.loaded) return [state, false]
  const quiet = load === "quiet" ? state.quiet + 1 : 0
  return quiet >= quietWindows ? [initial, true] : [{ loaded: true, quiet }, false]
}

/** V8's full collection, or undefined when this runtime will not hand it over. */
export const collector = (): (() => void) | undefined => {
  const own: unknown = Reflect.get(globalThis, "gc")
  if (typeof own === "function") return () => own()
  try {
    V8.setFlagsFromString("--expose-gc")
    const gc: unknown = Vm.runInNewContext("gc")
    return typeof gc === "function" ? () => gc() : undefined
  } catch {
    return undefined
  }
}

const megabytes = (bytes: number) => Math.round(bytes / 1_048_576)

/** The watcher, for the life of the layer when turned on; it stops if the runtime has no collector to give. */
export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const enabled = yield* Config.Boolean("ORGPLANE_MEMORY_RELEASE").pipe(Config.withDefault(false))
  if (!enabled) return
  // Reached the first time a collection is due, not before (see above).
  let collect: (() => void) | undefined | null = null
  const windowMillis = Duration.toMillis(window)
  let state = initial
  let last = process.cpuUsage()
  const check = Effect.gen(function*() {
    const used = process.cpuUsage(last)
    last = process.cpuUsage()
    const [next, now] = step(state, loadOf(used.user + used.system, windowMillis))
    state = next
    if (!now) return
    if (collect === null) collect = collector()
    if (collect === undefined) return yield* Effect.interrupt
    const before = process.memoryUsage()
    const startedAt = performance.now()
    collect()
    const after = process.memoryUsage()
    yield* Effect.logDebug(
      `Load passed: collected the heap in ${Math.round(performance.now() - startedAt)} ms, ${megabytes(before.heapTotal)} → ${megabytes(after.heapTotal)} MB committed (${megabytes(after.heapUsed)} MB live)`
    )
  })
  yield* Effect.forkScoped(Effect.repeat(check, Schedule.spaced(window)))
}))

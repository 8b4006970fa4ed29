/**
 * Effect runtime steps a request costs (`pnpm bench:ops [path] [requests] [bearer|apikey]`): the server in this process
 * (`makeNodeListener`, on DATABASE_URL or a throwaway embedded database), an owner signed up with an organization and
 * an API key, 50 requests to warm up, then `requests` (default 200) of `GET path` one at a time (another method and a
 * body with ORGPLANE_OPS_METHOD and ORGPLANE_OPS_BODY), while every
 * instruction the fiber runtime evaluates is counted: by kind (Success, OnSuccess, WithRuntime, ...), by the code
 * behind it (the function it runs, located through the inspector) and by file, and the size of the context each saw.
 *
 * Unlike CPU time, the count is exact and the same on a busy machine: a change to the request path shows in it at
 * once. It counts what Effect does, not what it costs: a step that copies a context or sets a FiberRef costs more
 * than one that succeeds with a value. Set ORGPLANE_LOG_LEVEL=none to leave the request log line out, TOP for the
 * number of functions listed (default 70). ORGPLANE_OPS_CPU=1 counts nothing and prints this process's CPU time per
 * request instead (server and client together, three rounds): enough to compare two paths of one server.
 */
import { Effect } from "effect"
import * as Http from "node:http"
import * as Inspector from "node:inspector"
import { makeNodeListener } from "../packages/server/src/index.js"

const [path = "/v1/me", nArg = "200", how = "bearer"] = process.argv.slice(2)
const n = Number(nArg)
const database = process.env.DATABASE_URL?.trim() ? { databaseUrl: process.env.DATABASE_URL.trim() } : { dataDir: "memory" }
const { listener, dispose } = await makeNodeListener({ ...database, passwordCost: 10, logFormat: "json" })
const server = Http.createServer(listener)
await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
const base = `http://127.0.0.1:${(server.address() as any).port}`
const post = async (p: string, headers: Record<string, string>, body: unknown) => {
  const res = await fetch(base + p, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })
  if (!res.ok) throw new Error(`${p} ${res.status} ${await res.text()}`)
  return res.json() as any
}
const tag = Math.random().toString(16).slice(2)
const su = await post("/v1/auth/sign-up", {}, { email: `o.${tag}@example.com`, password: "correct horse battery", name: "O" })
const auth = { authorization: `Bearer ${su.session.token}` }
await post("/v1/organizations", auth, { name: "Ops" })
const key = (await post("/v1/api-keys", auth, { name: "k" })).key
const headers = how === "apikey" ? { "x-api-key": key } : auth
const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
/** `ORGPLANE_OPS_METHOD` (default GET) and `ORGPLANE_OPS_BODY`, a JSON body in which `{i}` becomes the request's number. */
const method = process.env.ORGPLANE_OPS_METHOD ?? "GET"
const body = process.env.ORGPLANE_OPS_BODY
let sent = 0
const get = () => new Promise<void>((resolve, reject) => {
  const text = body?.replaceAll("{i}", String(sent++))
  const request = Http.request(base + path, { agent, method, headers: text === undefined ? headers : { ...headers, "content-type": "application/json" } }, (res) => {
    res.resume()
    res.on("end", () => res.statusCode! >= 200 && res.statusCode! < 300 ? resolve() : reject(new Error(String(res.statusCode))))
  }).on("error", reject)
  request.end(text)
})
for (let i = 0; i < 50; i++) await get()

const fiber = Effect.runSync(Effect.withFiberRuntime((f) => Effect.succeed(f)))
const proto = Object.getPrototypeOf(fiber)
const counts = new Map<string, number>()
const fnCounts = new Map<Function, { op: string; count: number }>()
let total = 0, on = false
const sizes = new Map<number, number>()
const ops = ["Sync", "OnSuccess", "OnFailure", "OnSuccessAndFailure", "WithRuntime", "Async", "Success", "Failure", "Iterator", "UpdateRuntimeFlags", "Commit", "Tag", "Left", "Right", "Some", "None", "While", "Yield", "RevertFlags"]
for (const op of ops) {
  const orig = proto[op]
  if (typeof orig !== "function") continue
  proto[op] = function (this: any, cur: any) {
    if (on) {
      total++
      const size = this.currentContext?.unsafeMap?.size ?? 0
      sizes.set(size, (sizes.get(size) ?? 0) + 1)
      counts.set(op, (counts.get(op) ?? 0) + 1)
      const f = op === "Commit" ? cur.commit : (cur.effect_instruction_i1 ?? cur.effect_instruction_i0)
      const fn = typeof f === "function" ? f : op === "Commit" ? cur.constructor : undefined
      if (fn) { const e = fnCounts.get(fn) ?? { op, count: 0 }; e.count++; fnCounts.set(fn, e) }
    }
    return orig.call(this, cur)
  }
}
if (process.env.ORGPLANE_OPS_CPU === "1") {
  // This process's CPU time per request (server and client both), without counting: to compare two paths.
  for (let round = 0; round < 3; round++) {
    const cpu = process.cpuUsage()
    for (let i = 0; i < n; i++) await get()
    const used = process.cpuUsage(cpu)
    console.log(`cpu per request (server and client): ${((used.user + used.system) / n).toFixed(0)} µs`)
  }
  server.close(); agent.destroy(); await dispose(); process.exit(0)
}
on = true
for (let i = 0; i < n; i++) await get()
on = false
console.log(`ops per request: ${(total / n).toFixed(1)}`)
console.log("context sizes seen by ops:", [...sizes].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k}:${(v / n).toFixed(0)}`).join(" "))
for (const [op, c] of [...counts].sort((a, b) => b[1] - a[1])) console.log(op.padEnd(20), (c / n).toFixed(1))
const session = new Inspector.Session(); session.connect()
const call = (method: string, params: any) => { let out: any; session.post(method, params, (e, r) => { if (e) throw e; out = r }); return out }
const scripts = new Map<string, string>()
session.on("Debugger.scriptParsed", (m: any) => scripts.set(m.params.scriptId, m.params.url))
call("Debugger.enable", {})
;(globalThis as any).__fn = undefined
const where = (fn: Function) => {
  ;(globalThis as any).__fn = fn
  const { result } = call("Runtime.evaluate", { expression: "globalThis.__fn" })
  const props = call("Runtime.getProperties", { objectId: result.objectId, ownProperties: true })
  const loc = props.internalProperties?.find((p: any) => p.name === "[[FunctionLocation]]")?.value?.value
  if (!loc) return "(native)"
  const url = (scripts.get(loc.scriptId) ?? "?").replace(/.*node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, "").replace(/^file:\/\/\/work\/main\//, "")
  return `${url}:${loc.lineNumber + 1}`
}
const byLoc = new Map<string, number>()
for (const [fn, { op, count }] of fnCounts) { const k = `${op} ${fn.name || "anon"} ${where(fn)}`; byLoc.set(k, (byLoc.get(k) ?? 0) + count) }
const byFile = new Map<string, number>()
for (const [k, c] of byLoc) { const f = k.split(" ")[2]!.replace(/:\d+$/, ""); byFile.set(f, (byFile.get(f) ?? 0) + c) }
console.log("\n-- by file")
for (const [k, c] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log((c / n).toFixed(1).padStart(7), k)
console.log("\n-- by function")
for (const [k, c] of [...byLoc].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 70))) console.log((c / n).toFixed(1).padStart(7), k)
server.close(); agent.destroy(); await dispose(); process.exit(0)

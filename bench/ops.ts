/**
 * Effect runtime steps a request costs (`pnpm bench:ops [path] [requests] [bearer|apikey]`): the server in this process
 * (`makeNodeListener`, on DATABASE_URL or a throwaway embedded database), an owner signed up with an organization and
 * an API key, 50 requests to warm up, then `requests` (default 200) of `GET path` one at a time (another method, a
 * body and more headers with ORGPLANE_OPS_METHOD, ORGPLANE_OPS_BODY and ORGPLANE_OPS_HEADERS), while every
 * primitive the fiber runtime evaluates is counted: by kind (Success, OnSuccess, WithFiber, ...), by the code behind
 * it (the function it runs, located through the inspector) and by file.
 *
 * Unlike CPU time, the count is exact and the same on a busy machine: a change to the request path shows in it at
 * once. It counts what Effect does, not what it costs: a step that copies a context costs more than one that
 * succeeds with a value. Set ORGPLANE_LOG_LEVEL=none to leave the request log line out, TOP for the
 * number of functions listed (default 70). ORGPLANE_OPS_CPU=1 counts nothing and prints this process's CPU time per
 * request instead (server and client together, three rounds): enough to compare two paths of one server.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { randomBytes } from "node:crypto"
import { Agent, createServer } from "node:http"
import * as Inspector from "node:inspector"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { makeNodeListener } from "../packages/server/src/index.js"
import { ok, request } from "./http.js"

const [path = "/v1/me", requestsArg = "200", credential = "bearer"] = process.argv.slice(2)
const requests = Number(requestsArg)
// On Postgres the server needs its encryption key (the environment's, or one for this run).
const database = process.env.DATABASE_URL?.trim()
  ? { databaseUrl: process.env.DATABASE_URL.trim(), encryptionKeys: process.env.ORGPLANE_ENCRYPTION_KEYS ?? `ops:${randomBytes(32).toString("base64")}` }
  : { dataDir: "memory" }
// A benchmark makes far more accounts, keys and invitations from loopback than the quotas let one person make.
const unlimited = { signUpsPerHour: 1_000_000, organizationsPerUser: 1_000_000, apiKeysPerMember: 1_000_000, pendingInvitationsPerOrganization: 1_000_000 }
const { listener, dispose } = await makeNodeListener({ ...database, ...unlimited, passwordCost: 10, logFormat: "json" })
const server = createServer(listener)
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
const agent = new Agent({ keepAlive: true, maxSockets: 1 })

const tag = Math.random().toString(16).slice(2)
const signedUp = await ok("sign-up", request(agent, base, "POST", "/v1/auth/sign-up", {}, { email: `o.${tag}@example.com`, password: "correct horse battery", name: "O" }))
const auth = { authorization: `Bearer ${signedUp.session.token}` }
await ok("organization", request(agent, base, "POST", "/v1/organizations", auth, { name: "Ops" }))
const key = (await ok("API key", request(agent, base, "POST", "/v1/api-keys", auth, { name: "k" }))).key as string
const headers = credential === "apikey" ? { "x-api-key": key } : auth

/**
 * `ORGPLANE_OPS_METHOD` (default GET), `ORGPLANE_OPS_BODY`, a JSON body, and `ORGPLANE_OPS_HEADERS`, a JSON object
 * of headers (`{"idempotency-key":"k{i}"}`), in which `{i}` becomes the request's number.
 */
const method = process.env.ORGPLANE_OPS_METHOD ?? "GET"
const body = process.env.ORGPLANE_OPS_BODY
const extraHeaders = process.env.ORGPLANE_OPS_HEADERS
let sent = 0
const send = () => {
  const i = String(sent++)
  const fill = (json: string) => JSON.parse(json.replaceAll("{i}", i))
  const sentHeaders = extraHeaders === undefined ? headers : { ...headers, ...fill(extraHeaders) }
  return ok(`${method} ${path}`, request(agent, base, method, path, sentHeaders, body === undefined ? undefined : fill(body)))
}
const stop = async () => {
  server.close()
  agent.destroy()
  await dispose()
  process.exit(0)
}
for (let i = 0; i < 50; i++) await send()

if (process.env.ORGPLANE_OPS_CPU === "1") {
  // This process's CPU time per request (server and client both), nothing counted: to compare two paths.
  for (let round = 0; round < 3; round++) {
    const cpu = process.cpuUsage()
    for (let i = 0; i < requests; i++) await send()
    const used = process.cpuUsage(cpu)
    console.log(`cpu per request (server and client): ${((used.user + used.system) / requests).toFixed(0)} µs`)
  }
  await stop()
}

// Every primitive effect has an evaluation method on its prototype, which the fiber's run loop calls
// (`current[evaluate](fiber)`, Effect 4's internal/core.ts): the prototypes of the kinds below, reached through one
// value of each, get that method wrapped to count. A kind no sample reaches is not counted.
const samples: ReadonlyArray<unknown> = [
  Effect.succeed(1), Effect.fail(1), Effect.sync(() => 1), Effect.suspend(() => Effect.void), Effect.yieldNow,
  Effect.flatMap(Effect.void, () => Effect.void), Effect.catchCause(Effect.void, () => Effect.void),
  Effect.matchCauseEffect(Effect.void, { onFailure: () => Effect.void, onSuccess: () => Effect.void }),
  Effect.onExit(Effect.void, () => Effect.void), Effect.uninterruptible(Effect.void), Effect.callback<void>(() => {}),
  Effect.withFiber(() => Effect.void), Effect.gen(function*() {}), Effect.whileLoop({ while: () => false, body: () => Effect.void, step: () => {} }),
  Exit.succeed(1), Exit.fail(1), Option.some(1), Option.none()
]
const identifierKey = (proto: object) => Object.keys(proto).find((key) => key.endsWith("/identifier"))
const byKind = new Map<string, number>()
const byFunction = new Map<Function, { kind: string; count: number }>()
let total = 0
let counting = false
const wrapped = new Set<object>()
for (const sample of samples) {
  const proto: Record<string, unknown> | null = Object.getPrototypeOf(sample)
  if (proto === null || wrapped.has(proto)) continue
  const evaluateKey = Object.keys(proto).find((key) => key.endsWith("/evaluate"))
  const argsKey = Object.keys(sample as object).find((key) => key.endsWith("/args"))
  const idKey = identifierKey(proto)
  if (evaluateKey === undefined) continue
  const evaluate = proto[evaluateKey]
  if (typeof evaluate !== "function") continue
  wrapped.add(proto)
  const kind = String(idKey === undefined ? proto["_tag"] ?? "?" : proto[idKey])
  proto[evaluateKey] = function(this: Record<string, unknown>, fiber: unknown) {
    if (counting) {
      total++
      byKind.set(kind, (byKind.get(kind) ?? 0) + 1)
      // The code the primitive runs: its thunk, or the continuation among its arguments.
      const held = argsKey === undefined ? undefined : this[argsKey]
      const fn = typeof held === "function" ? held : Array.isArray(held) ? held.find((item) => typeof item === "function") : undefined
      if (fn !== undefined) {
        const entry = byFunction.get(fn) ?? { kind, count: 0 }
        entry.count++
        byFunction.set(fn, entry)
      }
    }
    return evaluate.call(this, fiber)
  }
}
counting = true
for (let i = 0; i < requests; i++) await send()
counting = false

const perRequest = (count: number) => (count / requests).toFixed(1).padStart(7)
console.log(`ops per request: ${(total / requests).toFixed(1)}`)
for (const [kind, count] of [...byKind].sort((a, b) => b[1] - a[1])) console.log(kind.padEnd(20), (count / requests).toFixed(1))

// Where each function is defined, asked of the inspector (synchronous within this thread).
const session = new Inspector.Session()
session.connect()
/** The inspector's answer to `post`, which it gives synchronously within this thread. */
const answered = <A>(post: (callback: (error: Error | null, result: A) => void) => void): A => {
  let answer: { readonly value: A } | undefined
  post((error, result) => {
    if (error) throw error
    answer = { value: result }
  })
  if (answer === undefined) throw new Error("the inspector did not answer synchronously")
  return answer.value
}
const scripts = new Map<string, string>()
session.on("Debugger.scriptParsed", (message) => scripts.set(message.params.scriptId, message.params.url))
answered<object>((callback) => session.post("Debugger.enable", callback))
const root = pathToFileURL(Path.join(import.meta.dirname, "..")).href + "/"
/** A function's location as the inspector describes it (`[[FunctionLocation]]`). */
const isLocation = (value: unknown): value is Inspector.Debugger.Location =>
  typeof value === "object" && value !== null && "scriptId" in value && typeof value.scriptId === "string" &&
  "lineNumber" in value && typeof value.lineNumber === "number"
const located = (fn: Function) => {
  Reflect.set(globalThis, "__opsFunction", fn)
  const { result } = answered<Inspector.Runtime.EvaluateReturnType>((callback) =>
    session.post("Runtime.evaluate", { expression: "globalThis.__opsFunction" }, callback)
  )
  const objectId = result.objectId
  if (objectId === undefined) return "(native)"
  const properties = answered<Inspector.Runtime.GetPropertiesReturnType>((callback) =>
    session.post("Runtime.getProperties", { objectId, ownProperties: true }, callback)
  )
  const location: unknown = properties.internalProperties?.find((property) => property.name === "[[FunctionLocation]]")?.value?.value
  if (!isLocation(location)) return "(native)"
  const url = (scripts.get(location.scriptId) ?? "?").replace(/.*node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, "").replace(root, "")
  return `${url}:${location.lineNumber + 1}`
}
const byLocation = new Map<string, number>()
const byFile = new Map<string, number>()
for (const [fn, { count, kind }] of byFunction) {
  const where = located(fn)
  const key = `${kind} ${fn.name || "anon"} ${where}`
  byLocation.set(key, (byLocation.get(key) ?? 0) + count)
  const file = where.replace(/:\d+$/, "")
  byFile.set(file, (byFile.get(file) ?? 0) + count)
}
console.log("\n-- by file")
for (const [file, count] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(perRequest(count), file)
console.log("\n-- by function")
for (const [key, count] of [...byLocation].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 70))) console.log(perRequest(count), key)
await stop()

/**
 * The workers area's services and repositories on a fresh migrated database (the embedded one, or Postgres with
 * DATABASE_URL): registering, reading, changing, deleting and rotating the token of a worker as its creator or
 * another member; the runtime's side (its instance, the upgrade forwarded to a real runtime on loopback,
 * packages/testkit's FakeWorkerRuntime); the worker-token standing the middleware's layer provides; heartbeats, transitions, the
 * offline check and the activity feed; and the runtime client's pure parts (a runtime's answer, a runtime's URL).
 */
import { describe, expect, it, layer } from "@effect/vitest"
import {
  HeartbeatRequest,
  RegisterInstanceRequest,
  RuntimeUrl,
  type WorkerCaller
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import * as FakeWorkerRuntime from "../../../packages/testkit/src/FakeWorkerRuntime.js"
import { WorkerTokenStanding } from "../src/platform/Authority.js"
import * as Config from "../src/platform/Config.js"
import { Crypto, make as makeCrypto, parseKeys } from "../src/platform/Crypto.js"
import { IdGenerator } from "../src/platform/Ids.js"
import * as Outbound from "../src/platform/Outbound.js"
import { RateLimiter } from "../src/platform/RateLimiter.js"
import { Activity, detectOffline } from "../src/workers/Activity.js"
import * as ActivityConfig from "../src/workers/ActivityConfig.js"
import * as Authentication from "../src/workers/Authentication.js"
import { endpoint, readAnswer, Runtime } from "../src/workers/Runtime.js"
import * as RuntimeConfig from "../src/workers/RuntimeConfig.js"
import { Workers } from "../src/workers/Workers.js"
import { WorkersRepository } from "../src/workers/WorkersRepository.js"
import * as Db from "./support/IdentityDatabase.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const cryptoLayer = Layer.effect(Crypto, makeCrypto({ passwordCost: 10, keys: parseKeys(`k1:${NodeCrypto.randomBytes(32).toString("base64")}`) }))

const platform = Layer.mergeAll(
  Db.layer,
  IdGenerator.layer,
  cryptoLayer,
  Config.layer({ outboundAllowPrivate: true }),
  Outbound.layer({ allowPrivate: true }),
  RuntimeConfig.layer({ workerRuntimeTimeout: "2 seconds" }),
  ActivityConfig.layer({ workerHeartbeatInterval: "30 seconds", workerOfflineAfter: "3 minutes", workerHeartbeatsPerMinute: 5 })
)

const testLayer = Layer.mergeAll(Workers.layer, Activity.layer, Authentication.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(WorkersRepository.layer, Runtime.layer, RateLimiter.layer)),
  Layer.provideMerge(platform)
)

const registerInstance = Schema.decodeUnknownSync(RegisterInstanceRequest)
const heartbeatOf = Schema.decodeUnknownSync(HeartbeatRequest)

/** A member and an owner of one organization, seeded, and a worker the member registered with its token. */
const staffed = Effect.gen(function*() {
  const organization = Members.organization()
  const member = Members.member(organization, "member")
  const other = Members.member(organization, "member")
  const owner = Members.member(organization, "owner")
  yield* Members.seed(member, other, owner)
  const workers = yield* Workers
  const registered = yield* workers.register(member, { name: "Laptop worker", destination: "local" })
  return { organization, member, other, owner, ...registered }
})

/** The worker a token belongs to, as the middleware resolves it. */
const callerOf = (token: string) =>
  Effect.gen(function*() {
    const crypto = yield* Crypto
    const found = yield* (yield* WorkersRepository).resolveToken({ tokenHash: crypto.hashToken(token) })
    return found._tag === "Some" ? found.value satisfies WorkerCaller : undefined
  })

layer(testLayer, { timeout: 120_000, excludeTestServices: true })(`workers on ${TestDatabase.kind}`, (it) => {
  it.effect("registers a worker with a token shown once; every member reads it, isMine for its creator", () =>
    Effect.gen(function*() {
      const workers = yield* Workers
      const { member, other, token, worker } = yield* staffed
      expect(token).toMatch(/^opw_/)
      expect(worker).toMatchObject({ name: "Laptop worker", destination: "local", status: "provisioning", isMine: true, connectivity: "offline" })
      expect((yield* workers.get(other, worker.id)).worker).toMatchObject({ id: worker.id, isMine: false })
      expect((yield* workers.list(member, { mine: "true" })).items.map((w) => w.id)).toEqual([worker.id])
      expect((yield* workers.list(other, { mine: "true" })).items).toEqual([])
      expect((yield* workers.list(other, {})).items.map((w) => w.id)).toEqual([worker.id])
      for (const id of ["not-a-worker", "wrk_01h455vb4pex5vsknk084sn02q"]) {
        expect(yield* Effect.flip(workers.get(member, id))).toMatchObject({ _tag: "NotFound", error: "worker_not_found", message: "Worker not found." })
      }
    }))

  it.effect("lets the creator, owners and admins change, rotate and delete it; another member gets 403 insufficient_access", () =>
    Effect.gen(function*() {
      const workers = yield* Workers
      const { member, organization, other, owner, token, worker } = yield* staffed
      expect(yield* Effect.flip(workers.update(other, worker.id, { name: "Mine now" }))).toMatchObject({
        _tag: "Forbidden",
        reason: "insufficient_access",
        message: "Only the worker's creator, owners and admins may change, delete, rotate the token of or upgrade it."
      })
      const updated = yield* workers.update(member, worker.id, { name: "Renamed", description: "", workspacePath: "/work" })
      expect(updated.worker).toMatchObject({ name: "Renamed", description: null, workspacePath: "/work" })
      const rotated = yield* workers.rotateToken(owner, worker.id)
      expect(rotated.token).toMatch(/^opw_/)
      expect(yield* callerOf(token)).toBeUndefined()
      const caller = yield* callerOf(rotated.token)
      expect(caller).toMatchObject({ organizationId: organization.id, workerId: worker.id })
      const standing = yield* WorkerTokenStanding
      if (caller === undefined) return expect.unreachable()
      expect(yield* standing(caller, new Date())).toBe(true)
      yield* workers.remove(member, worker.id)
      expect(yield* standing(caller, new Date())).toBe(false)
      expect(yield* callerOf(rotated.token)).toBeUndefined()
      expect(yield* Effect.flip(workers.get(owner, worker.id))).toMatchObject({ error: "worker_not_found" })
      expect(yield* Effect.flip(workers.remove(owner, worker.id))).toMatchObject({ error: "worker_not_found" })
    }))

  it.effect("forwards an upgrade to the runtime of the latest instance with its credential, and reads its answer", () =>
    Effect.gen(function*() {
      const workers = yield* Workers
      const { member, other, token, worker } = yield* staffed
      const caller = yield* callerOf(token)
      if (caller === undefined) return expect.unreachable()
      expect(yield* Effect.flip(workers.upgradeRuntime(member, worker.id, { version: "1" }))).toMatchObject({
        _tag: "Conflict",
        error: "worker_runtime_unavailable",
        message: "The worker has no instance yet: start its runtime with the worker's token, and retry once it has registered its instance."
      })
      const runtime = yield* Effect.acquireRelease(Effect.promise(() => FakeWorkerRuntime.start()), (fake) => Effect.promise(() => fake.close()))
      yield* workers.registerInstance(caller, registerInstance({ provider: "local", status: "running" }))
      expect(yield* Effect.flip(workers.upgradeRuntime(member, worker.id, {}))).toMatchObject({ error: "worker_runtime_unavailable" })
      const { instance } = yield* workers.registerInstance(caller, registerInstance({ provider: "local", status: "running", url: runtime.url, credential: runtime.credential }))
      expect(instance).toMatchObject({ provider: "local", status: "running", url: runtime.url })
      expect((yield* workers.get(member, worker.id)).instance).toMatchObject({ url: runtime.url })
      expect(yield* Effect.flip(workers.upgradeRuntime(other, worker.id, {}))).toMatchObject({ reason: "insufficient_access" })
      const answer = yield* workers.upgradeRuntime(member, worker.id, { version: "2026.11.2" })
      expect(answer).toEqual({ status: 200, body: { ok: true, upgraded: true, requested: { version: "2026.11.2" } } })
      expect(runtime.requests.at(-1)).toMatchObject({ method: "POST", path: "/runtime/upgrade", body: JSON.stringify({ version: "2026.11.2" }) })
      expect(runtime.requests.at(-1)?.headers["authorization"]).toBe(`Bearer ${runtime.credential}`)
      runtime.setMode({ _tag: "text", text: "Bad Gateway" })
      expect((yield* workers.upgradeRuntime(member, worker.id, {})).body).toEqual({ message: "Bad Gateway" })
      yield* Effect.promise(() => runtime.close())
      expect(yield* Effect.flip(workers.upgradeRuntime(member, worker.id, {}))).toMatchObject({ _tag: "WorkerRuntimeError" })
    }).pipe(Effect.scoped))

  it.effect("applies heartbeats in sentAt order, records transitions, and the offline check marks silent workers once", () =>
    Effect.gen(function*() {
      const activity = yield* Activity
      const { member, other, owner, token, worker } = yield* staffed
      const caller = yield* callerOf(token)
      if (caller === undefined) return expect.unreachable()
      const at = (offsetSeconds: number) => new Date(Date.now() + offsetSeconds * 1000).toISOString()
      const first = yield* activity.heartbeat(caller, heartbeatOf({ sentAt: at(-10), active: true, openSessions: 2, imageVersion: "1.0" }))
      expect(first).toMatchObject({ applied: true, workerId: worker.id, connectivity: "online", openSessions: 2, heartbeatIntervalSeconds: 30 })
      const late = yield* activity.heartbeat(caller, heartbeatOf({ sentAt: at(-20), openSessions: 9 }))
      expect(late).toMatchObject({ applied: false, connectivity: "online", openSessions: 2 })
      expect(yield* Effect.flip(activity.heartbeat(caller, heartbeatOf({ sentAt: at(600) })))).toMatchObject({
        _tag: "InvalidRequest",
        details: [{ path: ["sentAt"], message: "is more than 5 minutes ahead of the server's clock: check the runtime's clock" }]
      })
      expect((yield* (yield* Workers).get(owner, worker.id)).worker).toMatchObject({ status: "online", imageVersion: "1.0", openSessions: 2 })
      // Four minutes of silence: marked offline once, whichever process checks.
      const later = new Date(Date.now() + 4 * 60_000)
      expect(yield* detectOffline({ now: later, offlineAfter: "3 minutes" })).toBe(1)
      expect(yield* detectOffline({ now: later, offlineAfter: "3 minutes" })).toBe(0)
      const feed = yield* activity.list(owner, worker.id, {})
      expect(feed.items.map((entry) => entry.kind)).toEqual(["transition", "heartbeat", "transition"])
      expect(feed.items[0]).toMatchObject({ from: "online", to: "offline", cause: "no_heartbeat" })
      expect(feed.items[2]).toMatchObject({ from: "offline", to: "online", cause: "heartbeat" })
      expect((yield* activity.list(member, worker.id, { kind: "heartbeat" })).items.map((entry) => entry.kind)).toEqual(["heartbeat"])
      expect(yield* Effect.flip(activity.list(other, worker.id, {}))).toMatchObject({
        reason: "insufficient_access",
        message: "Only the worker's creator, owners and admins may read its activity."
      })
      // Two counted so far (a refused sentAt is refused before it counts); the fifth of the minute is the last allowed.
      for (let n = 0; n < 3; n++) yield* activity.heartbeat(caller, heartbeatOf({}))
      expect(yield* Effect.flip(activity.heartbeat(caller, heartbeatOf({})))).toMatchObject({ _tag: "RateLimited" })
      const sql = yield* SqlClient.SqlClient
      expect((yield* sql`SELECT 1 FROM worker_heartbeats WHERE worker_id = ${worker.id}`).length).toBe(4)
    }))
})

describe("a runtime's answer", () => {
  it("is its JSON as sent, any JSON value included", () => {
    const bytes = (text: string) => new TextEncoder().encode(text)
    expect(readAnswer(bytes("{\"ok\":true}"))).toEqual({ ok: true })
    expect(readAnswer(bytes("[1,2]"))).toEqual([1, 2])
    expect(readAnswer(bytes("false"))).toBe(false)
    expect(readAnswer(bytes("null"))).toBeNull()
  })

  it("is {message} for text that is not JSON, cut at 2000 characters", () => {
    const bytes = (text: string) => new TextEncoder().encode(text)
    expect(readAnswer(bytes("Bad Gateway"))).toEqual({ message: "Bad Gateway" })
    const long = readAnswer(bytes("x".repeat(5000))) as { message: string }
    expect(long.message).toBe(`${"x".repeat(2000)}…`)
  })

  it("is null when empty or only white space", () => {
    const bytes = (text: string) => new TextEncoder().encode(text)
    expect(readAnswer(new Uint8Array(0))).toBeNull()
    expect(readAnswer(bytes(" \n"))).toBeNull()
  })
})

describe("a runtime's URL", () => {
  it("gets the operation's path after its own, without doubled slashes", () => {
    expect(endpoint("https://w.example.com", "/runtime/upgrade")).toBe("https://w.example.com/runtime/upgrade")
    expect(endpoint("https://w.example.com/base//", "/runtime/upgrade")).toBe("https://w.example.com/base/runtime/upgrade")
  })

  it("is http(s) without credentials, query or fragment", () => {
    const valid = Schema.is(RuntimeUrl)
    expect(valid("http://127.0.0.1:4000")).toBe(true)
    expect(valid("https://w.example.com/base/")).toBe(true)
    for (const url of ["file:///etc/passwd", "https://a:b@w.example.com", "https://w.example.com/?", "https://w.example.com/#", "//w.example.com", ""]) {
      expect(valid(url)).toBe(false)
    }
  })
})

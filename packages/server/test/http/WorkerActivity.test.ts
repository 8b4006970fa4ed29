/**
 * Worker activity over HTTP and the client: the heartbeat's new fields, ordering by `sentAt` (a late heartbeat changes
 * nothing, also when heartbeats race), the clock-skew bound, connectivity derived on read as the server's clock moves,
 * the last 100 heartbeats, the per-worker rate limit, online/offline transitions recorded once by the offline check,
 * the activity feed's paging, who may read it, and bad input.
 */
import { createClient, OrgplaneError } from "@orgplane/client"
import type { HeartbeatRequest, WorkerActivityEntry, WorkerActivityPage, WorkerActivityQuery } from "@orgplane/schema"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { IdGenerator } from "../../src/platform/Ids.js"
import { detectOffline } from "../../src/workers/Activity.js"

const clock = new TestServer.ShiftedClock()
let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  server = await TestServer.startSharingDatabase({ clock })
})
afterAll(() => server.close())

const { get, post } = Http.verbs(() => server.url)
const { workerActivity, workerRuntime, workers } = calls(() => server.url)

type Org = Awaited<ReturnType<typeof Http.staffed>>
type Entry = typeof WorkerActivityEntry.Encoded

const register = async (org: Org) =>
  ok(await workers.register({ token: org.member.token, payload: { name: "Laptop worker", destination: "local" } }), 201)

const beat = (token: string, payload: typeof HeartbeatRequest.Encoded = {}) => workerRuntime.heartbeat({ token, payload })

/** A heartbeat with a body the API cannot type (bad on purpose). */
const rawBeat = (token: string, body: Record<string, unknown>) => post("/v1/worker-runtime/heartbeat", { token, body })

const worker = async (org: Org, id: string) => ok(await workers.get({ token: org.owner.token, path: { id } }), 200).worker

const activity = async (org: Org, id: string, query: typeof WorkerActivityQuery.Encoded = {}) =>
  ok(await workerActivity.list({ token: org.owner.token, path: { id }, query }), 200)

/** A heartbeat entry's sentAt (a transition has none). */
const sentAtOf = (entry: Entry) => (entry.kind === "heartbeat" ? entry.sentAt : undefined)

/** The server's clock now, as an ISO string `offsetSeconds` from now. */
const serverTime = (offsetSeconds = 0) => new Date(clock.currentTimeMillisUnsafe() + offsetSeconds * 1000).toISOString()

/** One run of the offline check at the server's time, on the server's database. */
const runOfflineCheck = () =>
  server.sql((sql) =>
    detectOffline({ now: new Date(clock.currentTimeMillisUnsafe()), offlineAfter: "3 minutes" }).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.provide(IdGenerator.layer)
    )
  )

describe("a heartbeat", () => {
  it("records sentAt, activity and open sessions, and answers what it did", async () => {
    const org = await Http.staffed(server.url)
    const { token, worker: registered } = await register(org)
    const sentAt = serverTime(-2)
    const lastActivityAt = serverTime(-10)
    const answer = await beat(token, { sentAt, active: true, lastActivityAt, openSessions: 3, imageVersion: "2.1.0" })
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({
      applied: true,
      workerId: registered.id,
      connectivity: "online",
      lastHeartbeatAt: sentAt,
      lastActiveAt: lastActivityAt,
      openSessions: 3,
      heartbeatIntervalSeconds: 30
    })
    const read = await worker(org, registered.id)
    expect(read).toMatchObject({
      status: "online",
      connectivity: "online",
      imageVersion: "2.1.0",
      lastHeartbeatAt: sentAt,
      lastActiveAt: lastActivityAt,
      openSessions: 3
    })
    expect(Date.parse(read.lastSeenAt ?? "")).toBeGreaterThanOrEqual(Date.parse(sentAt))
    // The list shows the same.
    const listed = ok(await workers.list({ token: org.owner.token }), 200)
    expect(listed.items.find((w) => w.id === registered.id)).toEqual(read)

    const [entry] = (await activity(org, registered.id, { kind: "heartbeat" })).items
    expect(entry).toEqual({
      kind: "heartbeat",
      id: expect.stringMatching(/^whb_/),
      at: read.lastSeenAt,
      sentAt,
      status: "online",
      active: true,
      lastActivityAt,
      openSessions: 3,
      imageVersion: "2.1.0"
    })
  })

  it("from an old runtime (no sentAt, no new fields) still works: the time of arrival is its sentAt", async () => {
    const org = await Http.staffed(server.url)
    const { token, worker: registered } = await register(org)
    const answer = await beat(token, { status: "online", active: true })
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ applied: true, openSessions: null })
    const read = await worker(org, registered.id)
    expect(read.lastHeartbeatAt).toBe(read.lastSeenAt)
    expect(read.lastActiveAt).toBe(read.lastSeenAt)
    expect(read.openSessions).toBeNull()
    // Without sentAt, a newer one is applied (the server's clock moved on).
    clock.advance("1 second")
    expect(ok(await beat(token, {}), 200).applied).toBe(true)
  })

  it("older than the last one (by sentAt) changes nothing, and says so", async () => {
    const org = await Http.staffed(server.url)
    const { token, worker: registered } = await register(org)
    const newest = serverTime(-5)
    expect(ok(await beat(token, { sentAt: newest, openSessions: 4, imageVersion: "1.0.0", active: true }), 200).applied).toBe(true)
    const before = await worker(org, registered.id)
    const feedBefore = await activity(org, registered.id)

    clock.advance("2 seconds")
    for (const sentAt of [serverTime(-60), newest]) {
      const late = await beat(token, { sentAt, openSessions: 9, imageVersion: "0.9.0", status: "error", active: true, lastActivityAt: sentAt })
      expect(late.status).toBe(200)
      expect(late.body).toEqual({
        applied: false,
        workerId: registered.id,
        connectivity: "online",
        lastHeartbeatAt: newest,
        lastActiveAt: newest,
        openSessions: 4,
        heartbeatIntervalSeconds: 30
      })
    }
    expect(await worker(org, registered.id)).toEqual(before)
    expect(await activity(org, registered.id)).toEqual(feedBefore)
  })

  it("more than 5 minutes ahead of the server's clock is refused; a lastActivityAt after sentAt too", async () => {
    const org = await Http.staffed(server.url)
    const { token, worker: registered } = await register(org)
    const ahead = await beat(token, { sentAt: serverTime(5 * 60 + 30) })
    expect(ahead.status).toBe(400)
    expect(ahead.body).toEqual({
      error: "invalid_request",
      details: [{ path: ["sentAt"], message: expect.stringContaining("more than 5 minutes ahead of the server's clock") }]
    })
    const activityAfter = await beat(token, { sentAt: serverTime(-10), lastActivityAt: serverTime(-5) })
    expect(activityAfter.status).toBe(400)
    expect(invalid(activityAfter).details).toEqual([{ path: ["lastActivityAt"], message: "must not be after sentAt" }])
    expect((await worker(org, registered.id)).lastHeartbeatAt).toBeNull()
    // Within the bound (a runtime's clock a little ahead) is fine; so is a sentAt far in the past.
    expect((await beat(token, { sentAt: serverTime(4 * 60) })).status).toBe(200)
  })

  it("checks every field: 400 with each bad one, nothing recorded", async () => {
    const org = await Http.staffed(server.url)
    const { token, worker: registered } = await register(org)
    const bad = await rawBeat(token, { sentAt: "yesterday", lastActivityAt: 5, openSessions: -1, active: "yes", extra: true })
    expect(bad.status).toBe(400)
    expect(invalid(bad).details.map((d) => d.path[0]).sort()).toEqual(["active", "extra", "lastActivityAt", "openSessions", "sentAt"])
    for (const openSessions of [1.5, 1_000_001, "2"]) {
      const refused = await rawBeat(token, { openSessions })
      expect(refused.status).toBe(400)
      expect(invalid(refused).details[0]?.path).toEqual(["openSessions"])
    }
    expect((await worker(org, registered.id)).lastHeartbeatAt).toBeNull()
  })

  it("is rate-limited per worker: 429 with Retry-After past 12 a minute; another worker is not affected", async () => {
    const org = await Http.staffed(server.url)
    const first = await register(org)
    const second = await register(org)
    for (let i = 0; i < 12; i++) expect((await beat(first.token, { sentAt: serverTime(-60 + i) })).status).toBe(200)
    const limited = await beat(first.token, {})
    expect(limited.status).toBe(429)
    expect(limited.body).toEqual({ error: "rate_limited", message: expect.stringContaining("heartbeats of this worker") })
    const retryAfter = Number(limited.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect((await beat(second.token, {})).status).toBe(200)

    // Through the client: a typed RateLimited error (no retries here).
    const client = createClient({ baseUrl: server.url, token: first.token, maxRetries: 0 })
    try {
      const refused = await client.workerRuntime.heartbeat({ payload: {} }).catch((error) => error)
      expect(refused).toBeInstanceOf(OrgplaneError)
      expect([refused.status, refused.code]).toEqual([429, "rate_limited"])
    } finally {
      await client.close()
    }
    // A minute later the worker may beat again.
    clock.advance("61 seconds")
    expect((await beat(first.token, {})).status).toBe(200)
  })
})

describe("heartbeats racing", () => {
  it("leave the newest sentAt, whatever order they arrive and commit in", async () => {
    const org = await Http.staffed(server.url)
    const { token, worker: registered } = await register(org)
    const times = Array.from({ length: 10 }, (_, i) => serverTime(-100 + i * 7))
    const shuffled = [...times].sort(() => Math.random() - 0.5)
    const answers = await Promise.all(shuffled.map((sentAt, i) => beat(token, { sentAt, openSessions: i, active: true })))
    expect(answers.map((answer) => answer.status)).toEqual(times.map(() => 200))
    const newest = times[times.length - 1]
    const read = await worker(org, registered.id)
    expect(read.lastHeartbeatAt).toBe(newest)
    expect(read.lastActiveAt).toBe(newest)
    // The open sessions are the newest heartbeat's.
    expect(read.openSessions).toBe(shuffled.indexOf(newest))
    // What was recorded is exactly the heartbeats answered `applied`, the newest among them. (The feed is in order of
    // arrival, which is not the order the heartbeats committed in: that one is not observable here.)
    const recorded = (await activity(org, registered.id, { kind: "heartbeat" })).items.map(sentAtOf)
    const answeredApplied = shuffled.filter((_, i) => ok(answers[i]!, 200).applied)
    expect([...recorded].sort()).toEqual([...answeredApplied].sort())
    expect(recorded).toContain(newest)
  })
})

describe("a worker's connectivity", () => {
  it("is online within two intervals, stale until 3 minutes, then offline, from when the last heartbeat arrived", async () => {
    const org = await Http.staffed(server.url)
    const { token, worker: registered } = await register(org)
    expect(await worker(org, registered.id)).toMatchObject({ status: "provisioning", connectivity: "offline", lastSeenAt: null })
    // A runtime whose clock is 2 minutes behind is online all the same: the time of arrival counts.
    expect(ok(await beat(token, { sentAt: serverTime(-120) }), 200).connectivity).toBe("online")
    clock.advance("59 seconds")
    expect(await worker(org, registered.id)).toMatchObject({ status: "online", connectivity: "online" })
    clock.advance("2 seconds")
    expect(await worker(org, registered.id)).toMatchObject({ status: "online", connectivity: "stale" })
    clock.advance("118 seconds")
    expect(await worker(org, registered.id)).toMatchObject({ status: "online", connectivity: "stale" })
    clock.advance("2 seconds")
    expect(await worker(org, registered.id)).toMatchObject({ status: "offline", connectivity: "offline" })
    expect((await beat(token, {})).status).toBe(200)
    expect(await worker(org, registered.id)).toMatchObject({ status: "online", connectivity: "online" })
  })
})

describe("transitions", () => {
  it("to offline are recorded once by the offline check, however often it runs; to online by the heartbeat that brings it back", async () => {
    const org = await Http.staffed(server.url)
    const { token, worker: registered } = await register(org)
    expect((await beat(token, {})).status).toBe(200)
    const seen = (await worker(org, registered.id)).lastSeenAt
    expect((await activity(org, registered.id, { kind: "transition" })).items).toEqual([
      { kind: "transition", id: expect.stringMatching(/^wae_/), at: seen, from: "offline", to: "online", cause: "heartbeat", recordedAt: seen }
    ])

    clock.advance("3 minutes")
    clock.advance("5 seconds")
    // The server's own minutely check may run too; between them, one transition.
    await runOfflineCheck()
    expect(await runOfflineCheck()).toBe(0)
    const [offline] = (await activity(org, registered.id, { kind: "transition" })).items
    expect(offline).toMatchObject({ from: "online", to: "offline", cause: "no_heartbeat", at: new Date(Date.parse(seen ?? "") + 180_000).toISOString() })
    expect((await activity(org, registered.id, { kind: "transition" })).items).toHaveLength(2)

    expect((await beat(token, {})).status).toBe(200)
    const back = (await worker(org, registered.id)).lastSeenAt
    const transitions = (await activity(org, registered.id, { kind: "transition" })).items
    expect(transitions.map((t) => (t.kind === "transition" ? [t.from, t.to, t.cause] : [t.kind]))).toEqual([
      ["offline", "online", "heartbeat"],
      ["online", "offline", "no_heartbeat"],
      ["offline", "online", "heartbeat"]
    ])
    expect(transitions[0]?.at).toBe(back)
    // Another heartbeat while online records none.
    clock.advance("10 seconds")
    expect((await beat(token, {})).status).toBe(200)
    expect((await activity(org, registered.id, { kind: "transition" })).items).toHaveLength(3)
    expect(await runOfflineCheck()).toBe(0)
  })
})

describe("the activity feed", () => {
  it("keeps the last 100 heartbeats, newest first, with the transitions, in pages", async () => {
    const org = await Http.staffed(server.url)
    const { token, worker: registered } = await register(org)
    const sent: Array<string> = []
    for (let i = 0; i < 103; i++) {
      // 10 seconds apart: within the rate limit's minute and always online.
      clock.advance("10 seconds")
      const sentAt = serverTime()
      sent.push(sentAt)
      expect((await beat(token, { sentAt })).status).toBe(200)
    }
    const heartbeats: Array<Entry> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: typeof WorkerActivityPage.Encoded = await activity(org, registered.id, {
        kind: "heartbeat",
        limit: "30",
        ...(cursor === null ? {} : { cursor })
      })
      heartbeats.push(...page.items)
      cursor = page.nextCursor
      pages++
    } while (cursor !== null)
    expect(pages).toBe(4)
    expect(heartbeats.map(sentAtOf)).toEqual(sent.slice(3).reverse())
    const rows = await server.sql((sql) => sql`SELECT count(*)::int AS n FROM worker_heartbeats WHERE organization_id = ${org.organizationId} AND worker_id = ${registered.id}`)
    expect(rows[0]).toEqual({ n: 100 })

    // Both kinds together: the first heartbeat's transition is the oldest entry left... after the trimmed heartbeats.
    const all = await activity(org, registered.id, { limit: "100" })
    expect(all.items.filter((entry) => entry.kind === "heartbeat")).toHaveLength(100)
    expect(all.nextCursor).not.toBeNull()
    const rest = await activity(org, registered.id, { limit: "100", cursor: String(all.nextCursor) })
    expect(rest).toEqual({ items: [expect.objectContaining({ kind: "transition", to: "online" })], nextCursor: null })

    // A cursor belongs to its filters.
    const first = await activity(org, registered.id, { kind: "heartbeat", limit: "1" })
    const mismatched = await workerActivity.list({
      token: org.owner.token,
      path: { id: registered.id },
      query: { kind: "transition", cursor: String(first.nextCursor) }
    })
    expect(mismatched.status).toBe(400)
    expect(invalid(mismatched).details[0]?.path).toEqual(["cursor"])
  })

  it("is read by the worker's creator, owners and admins; another member gets 403, another organization 404", async () => {
    const org = await Http.staffed(server.url)
    const { token, worker: registered } = await register(org)
    expect((await beat(token, {})).status).toBe(200)
    const path = `/v1/workers/${registered.id}/activity`
    for (const reader of [org.member, org.admin, org.owner]) expect((await get(path, { token: reader.token })).status).toBe(200)
    const stranger = await Http.join(server.url, org.owner.token, "member", "Stranger")
    const refused = await get(path, { token: stranger.token })
    expect(refused.status).toBe(403)
    expect(refused.body).toEqual({ reason: "insufficient_access", message: expect.stringContaining("creator, owners and admins") })

    const other = await Http.staffed(server.url, "Other")
    const foreign = await get(path, { token: other.owner.token })
    expect(foreign.status).toBe(404)
    expect(foreign.body).toEqual({ error: "worker_not_found", message: "Worker not found." })
    for (const id of ["not-a-worker", "wrk_01h455vb4pex5vsknk084sn02q"]) {
      expect((await get(`/v1/workers/${id}/activity`, { token: org.owner.token })).body).toMatchObject({ error: "worker_not_found" })
    }
    expect((await get(path)).status).toBe(401)

    // Bad queries are 400 with each bad parameter.
    const bad = await get(`${path}?kind=sometimes&limit=0`, { token: org.owner.token })
    expect(bad.status).toBe(400)
    expect(invalid(bad).details.map((d) => d.path[0]).sort()).toEqual(["kind", "limit"])
    expect((await get(`${path}?cursor=made-up`, { token: org.owner.token })).status).toBe(400)

    // The client reads the same feed, dates as Dates.
    const client = createClient({ baseUrl: server.url, token: org.member.token })
    try {
      const page = await client.workerActivity.list({ path: { id: registered.id }, urlParams: { kind: "heartbeat" } })
      expect(page.items).toHaveLength(1)
      expect(page.items[0].at).toBeInstanceOf(Date)
      const forbidden = await createClient({ baseUrl: server.url, token: stranger.token }).workerActivity
        .list({ path: { id: registered.id }, urlParams: {} })
        .catch((error) => error)
      expect([forbidden.status, forbidden.code]).toEqual([403, "insufficient_access"])
    } finally {
      await client.close()
    }

    // A deleted worker has no activity to read.
    expect((await Http.request(server.url, "DELETE", `/v1/workers/${registered.id}`, { token: org.member.token })).status).toBe(204)
    expect((await get(path, { token: org.owner.token })).status).toBe(404)
  })
})

/**
 * Audit log streaming through HTTP, against a real receiver on loopback (testkit's AuditReceiver, which checks
 * signatures with the client's `verifyAuditStreamSignature`: test/support/AuditReceiver.ts): the secret shown once, signed batches in order and
 * each event once, a receiver answering 503 and then down until 8 attempts failed (real time, about 6 s: the backoff
 * doubles from 0.1 s to its 1-second cap),
 * secret rotation, the test ping, tenancy, roles, the limit, the outbound guard with private destinations off, and
 * (Postgres only: it needs a second connection) an event committed late by a slow transaction, still sent in order.
 */
import { verifyAuditStreamSignature } from "@orgplane/client"
import * as FakeAuditReceiver from "../support/AuditReceiver.js"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import * as Wait from "../../../../packages/testkit/src/Wait.js"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
let receiver: FakeAuditReceiver.FakeAuditReceiver
let org: Awaited<ReturnType<typeof Http.staffed>>
let other: Awaited<ReturnType<typeof Http.staffed>>
let streamId: string
let secret: string

beforeAll(async () => {
  receiver = await FakeAuditReceiver.start()
  // The receiver is on loopback: private destinations allowed. Short polls and backoff keep the file's time modest.
  server = await TestServer.startSharingDatabase({
    outboundAllowPrivate: true,
    auditStreamPollInterval: "250 millis",
    auditStreamSettle: "1 second",
    auditStreamBackoffBase: "100 millis",
    auditStreamBackoffCap: "1 second",
    auditStreamTimeout: "3 seconds"
  })
  org = await Http.staffed(server.url, "Streamed")
  other = await Http.staffed(server.url, "Elsewhere")
})
afterAll(async () => {
  await server?.close()
  await receiver?.close()
})

const { del, get, patch, post } = Http.verbs(() => server.url)
const { audit, auditStreams, teams: teamsApi } = calls(() => server.url)

type Event = FakeAuditReceiver.ReceivedDelivery["events"][number]

/** Every event the receiver acknowledged (answered 200) on this organization's stream's path, in the order received. */
const acknowledged = (path = "/ingest"): Array<Event> =>
  receiver.deliveries.filter((delivery) => delivery.status === 200 && delivery.path === path).flatMap((delivery) => [...delivery.events])

const streamOf = async (token = org.owner.token) => ok(await auditStreams.get({ token, path: { streamId } }), 200).stream

const makeTeams = async (prefix: string, count: number) => {
  const ids: Array<string> = []
  for (let i = 0; i < count; i++) {
    ids.push(ok(await teamsApi.create({ token: org.owner.token, payload: { name: `${prefix} ${i}` } }), 201).team.id)
  }
  return ids
}

/** The ids of the organization's `team.create` events whose target is one of `teamIds`, oldest first, as the API lists them. */
const eventIdsFor = async (teamIds: ReadonlyArray<string>): Promise<Array<string>> => {
  const page = ok(await audit.listEvents({ token: org.owner.token, query: { action: "team.create", order: "asc", limit: "100" } }), 200)
  return page.items.filter((event) => teamIds.some((id) => id === event.targets[0]?.id)).map((event) => event.id)
}

/** The time an API timestamp names; NaN when there is none, so every comparison with it fails. */
const timeOf = (at: string | null): number => (at === null ? Number.NaN : new Date(at).getTime())

const inOrder = (events: ReadonlyArray<Event>) =>
  events.every((event, i) => i === 0 || events[i - 1]!.occurredAt < event.occurredAt || (events[i - 1]!.occurredAt === event.occurredAt && events[i - 1]!.id < event.id))

describe("streaming the audit log", () => {
  it("creates a stream whose secret is shown once, in the answer, and never again", async () => {
    const created = await auditStreams.create({ token: org.owner.token, payload: { url: `${receiver.url}/ingest`, description: "SIEM" } })
    expect(created.status).toBe(201)
    expect(created.headers.get("cache-control")).toBe("no-store")
    const made = ok(created, 201)
    secret = made.secret
    streamId = made.stream.id
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    expect(streamId).toMatch(/^ast_[0-9a-z]{26}$/)
    expect(made.stream).toMatchObject({
      organizationId: org.organizationId,
      url: `${receiver.url}/ingest`,
      description: "SIEM",
      status: "active",
      delivery: { lastDeliveredEventId: null, consecutiveFailures: 0, lastError: null },
      createdByOrgMembershipId: org.owner.membership.id
    })
    receiver.setSecrets(secret)

    const read = await auditStreams.get({ token: org.owner.token, path: { streamId } })
    const listed = await auditStreams.list({ token: org.owner.token })
    expect([read.status, listed.status]).toEqual([200, 200])
    expect(ok(listed, 200).items.map((stream) => stream.id)).toEqual([streamId])
    expect(read.text).not.toContain(secret)
    expect(listed.text).not.toContain(secret)
    expect(Object.keys(ok(read, 200).stream)).not.toContain("secret")
  })

  it("delivers signed batches of the organization's events, in order, each once, as the API shows them", async () => {
    const teams = await makeTeams("Ordered", 12)
    const expected = await eventIdsFor(teams)
    expect(expected).toHaveLength(12)
    await Wait.until(() => expected.every((id) => acknowledged().some((event) => event.id === id)), "the teams' events delivered", 30_000)

    const deliveries = receiver.deliveries.filter((delivery) => delivery.status === 200)
    expect(deliveries.length).toBeGreaterThan(0)
    expect(deliveries.every((delivery) => delivery.verified && delivery.path === "/ingest" && delivery.contentType === "application/json")).toBe(true)
    expect(deliveries.every((delivery) => /^asd_[0-9a-z]{26}$/.test(delivery.deliveryId ?? ""))).toBe(true)
    expect(new Set(deliveries.map((delivery) => delivery.deliveryId)).size).toBe(deliveries.length)
    const events = acknowledged()
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length)
    expect(inOrder(events)).toBe(true)
    // The stream's own creation is the first event it carries: events from its creation on.
    expect(events[0]).toMatchObject({ action: "audit.stream.create", targets: [{ type: "audit_stream", id: expect.stringMatching(/^ast_/) }] })
    expect(events.filter((event) => expected.includes(event.id)).map((event) => event.id)).toEqual(expected)
    // Each event exactly as `GET /v1/audit/events/{eventId}` answers it.
    const sample = events.find((event) => event.id === expected[3])!
    expect(sample).toEqual(ok(await audit.getEvent({ token: org.owner.token, path: { eventId: sample.id } }), 200).event)
    // The signature is over the raw body with the timestamp it names: another body, or another secret, does not verify.
    const first = deliveries[0]!
    expect(await verifyAuditStreamSignature(secret, first.signature, first.body, 10 ** 9)).toBe(true)
    expect(await verifyAuditStreamSignature(secret, first.signature, `${first.body} `, 10 ** 9)).toBe(false)
    expect(await verifyAuditStreamSignature(`${secret}x`, first.signature, first.body, 10 ** 9)).toBe(false)
    // Replay-proof: the same delivery presented ten minutes later is refused.
    const t = Number(/t=(\d+)/.exec(first.signature!)![1])
    expect(await verifyAuditStreamSignature(secret, first.signature, first.body, 300, (t + 600) * 1000)).toBe(false)

    const stream = await streamOf()
    expect(stream.delivery.consecutiveFailures).toBe(0)
    expect(stream.delivery.lastSuccessAt).not.toBeNull()
    expect(stream.delivery.lastDeliveredEventId).toBe(events.at(-1)!.id)
  })

  it("sends each organization's events to its own streams only, and answers 404 for this organization's stream to another", async () => {
    // The other organization streams to the same receiver, on another path, with its own secret.
    const theirs = ok(await auditStreams.create({ token: other.owner.token, payload: { url: `${receiver.url}/other` } }), 201)
    receiver.setSecrets(secret, theirs.secret)
    const foreign = ok(await teamsApi.create({ token: other.owner.token, payload: { name: "Foreign" } }), 201).team.id
    const marker = await makeTeams("After foreign", 1)
    const [markerEvent] = await eventIdsFor(marker)
    await Wait.until(() => acknowledged().some((event) => event.id === markerEvent), "the marker event delivered", 30_000)
    await Wait.until(() => acknowledged("/other").some((event) => event.action === "team.create"), "the other organization's team event delivered", 30_000)
    const ours = receiver.deliveries.filter((delivery) => delivery.path === "/ingest").flatMap((delivery) => delivery.events)
    const elsewhere = receiver.deliveries.filter((delivery) => delivery.path === "/other").flatMap((delivery) => delivery.events)
    expect(ours.every((event) => event.organizationId === org.organizationId)).toBe(true)
    expect(elsewhere.length).toBeGreaterThan(0)
    expect(elsewhere.every((event) => event.organizationId === other.organizationId)).toBe(true)
    expect(ours.some((event) => event.id === markerEvent)).toBe(true)
    expect(elsewhere.map((event) => event.action)).toEqual(["audit.stream.create", "team.create"])
    expect(JSON.stringify(ours)).not.toContain(foreign)
    expect((await del(`/v1/audit/streams/${theirs.stream.id}`, { token: other.owner.token })).status).toBe(204)
    expect((await get(`/v1/audit/streams/${theirs.stream.id}`, { token: org.owner.token })).status).toBe(404)
    receiver.setSecrets(secret)

    const path = { streamId }
    for (const response of [
      await auditStreams.get({ token: other.owner.token, path }),
      await auditStreams.update({ token: other.owner.token, path, payload: { status: "paused" } }),
      await auditStreams.rotateSecret({ token: other.owner.token, path }),
      await auditStreams.test({ token: other.owner.token, path }),
      await auditStreams.delete({ token: other.owner.token, path })
    ]) {
      expect(response.status).toBe(404)
      expect(response.body).toMatchObject({ error: "audit_stream_not_found" })
    }
    expect(ok(await auditStreams.list({ token: other.owner.token }), 200).items).toEqual([])
    expect((await streamOf()).status).toBe("active")
  })

  it("lets admins read streams but not manage them (the refusal recorded as denied); members do neither", async () => {
    expect((await get(`/v1/audit/streams/${streamId}`, { token: org.admin.token })).status).toBe(200)
    expect((await get("/v1/audit/streams", { token: org.admin.token })).status).toBe(200)
    const refused = await auditStreams.create({ token: org.admin.token, payload: { url: `${receiver.url}/admin` } })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ reason: "insufficient_role" })
    expect((await patch(`/v1/audit/streams/${streamId}`, { token: org.admin.token, body: { status: "paused" } })).status).toBe(403)
    expect((await get("/v1/audit/streams", { token: org.member.token })).status).toBe(403)
    const denied = ok(await audit.listEvents({ token: org.owner.token, query: { action: "audit.stream.create", outcome: "denied" } }), 200)
    expect(denied.items[0]).toMatchObject({ outcome: "denied", reason: "insufficient_role", actor: { id: org.admin.user.id } })
  })

  it("sends a signed ping on test, and reports what the endpoint answered without changing the delivery status", async () => {
    const before = await streamOf()
    const pinged = ok(await auditStreams.test({ token: org.owner.token, path: { streamId } }), 200)
    expect(pinged).toMatchObject({ delivered: true, status: 200, error: null })
    const ping = receiver.deliveries.find((delivery) => delivery.deliveryId === pinged.deliveryId)!
    expect([ping.verified, JSON.parse(ping.body)]).toEqual([true, { events: [], test: true }])

    receiver.failWith(503)
    const failed = ok(await auditStreams.test({ token: org.owner.token, path: { streamId } }), 200)
    receiver.recover()
    expect(failed).toMatchObject({ delivered: false, status: 503, error: "HTTP 503" })
    const after = await streamOf()
    expect(after.delivery.consecutiveFailures).toBe(0)
    expect(after.delivery.lastDeliveredEventId === before.delivery.lastDeliveredEventId || after.delivery.lastError === null).toBe(true)
    const [event] = ok(await audit.listEvents({ token: org.owner.token, query: { action: "audit.stream.test" } }), 200).items
    expect(event).toMatchObject({ category: "execution", targets: [{ type: "audit_stream", id: streamId }] })
  })

  it("signs with the new secret alone once it is rotated", async () => {
    const rotated = ok(await auditStreams.rotateSecret({ token: org.owner.token, path: { streamId } }), 200)
    expect(rotated.secret).toMatch(/^whsec_/)
    expect(rotated.secret).not.toBe(secret)
    const old = secret
    secret = rotated.secret
    receiver.setSecrets(secret)
    const marker = await eventIdsFor(await makeTeams("Rotated", 1))
    await Wait.until(() => acknowledged().some((event) => event.id === marker[0]), "an event signed with the new secret", 30_000)
    const delivery = receiver.deliveries.find((delivery) => delivery.events.some((event) => event.id === marker[0]))!
    expect(delivery.verified).toBe(true)
    expect(await verifyAuditStreamSignature(old, delivery.signature, delivery.body, 10 ** 9)).toBe(false)
  })

  it.runIf(TestDatabase.onPostgres)("on Postgres: holds delivery behind a slow transaction, so its older event is sent before newer ones", async () => {
    // An event stamped inside a transaction that stays open for 4 seconds (beyond the 1 s settle window) while a newer
    // event commits at once: without the horizon the newer one would be sent first and the cursor would pass the other.
    const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
    const heldId = `aev_01${Array.from({ length: 24 }, () => alphabet[Math.floor(Math.random() * 32)]).join("")}`
    const held = server.sql((sql) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO audit_events (organization_id, id, occurred_at, action, category, outcome, actor_type, actor_id)
                   VALUES (${org.organizationId}, ${heldId}, ${new Date()}, 'team.update', 'change', 'succeeded', 'system', 'system:slow-test')`
        yield* Effect.sleep("4 seconds")
      }))
    )
    await new Promise((resolve) => setTimeout(resolve, 300))
    const [newer] = await eventIdsFor(await makeTeams("After the slow one", 1))
    await held
    await Wait.until(() => [heldId, newer].every((id) => acknowledged().some((event) => event.id === id)), "both events delivered", 30_000)
    const ids = acknowledged().map((event) => event.id)
    expect(ids.indexOf(heldId)).toBeLessThan(ids.indexOf(newer!))
    expect(inOrder(acknowledged())).toBe(true)
  })

  it("keeps events across a receiver answering 503 and then down until the backoff is at its cap, and delivers each once, in order, when it is back", async () => {
    const countBefore = receiver.deliveries.length
    receiver.failWith(503)
    const during503 = await makeTeams("While failing", 3)
    await Wait.until(() => receiver.deliveries.slice(countBefore).filter((delivery) => delivery.status === 503 && delivery.path === "/ingest").length >= 2, "two refused attempts", 30_000)
    const refused = receiver.deliveries.slice(countBefore).filter((delivery) => delivery.status === 503 && delivery.path === "/ingest")
    // A retried batch keeps its delivery id.
    expect(refused[1]!.deliveryId).toBe(refused[0]!.deliveryId)
    const failing = await streamOf(org.admin.token)
    expect(failing.delivery.consecutiveFailures).toBeGreaterThanOrEqual(1)
    expect(failing.delivery.lastError).toBe("HTTP 503")

    await receiver.stop()
    receiver.recover()
    const outage = Date.now()
    const whileDown = await makeTeams("While down", 4)
    // Down until the stream has failed 8 times in a row: the backoff doubles from 0.1 s to the 1 s cap.
    let down = await streamOf(org.admin.token)
    while (down.delivery.consecutiveFailures < 8) {
      if (Date.now() - outage > 90_000) throw new Error(`8 failures not reached in 90 s: ${JSON.stringify(down.delivery)}`)
      await new Promise((resolve) => setTimeout(resolve, 250))
      down = await streamOf(org.admin.token)
    }
    expect(down.delivery.lastError).toMatch(/^network: /)
    // Not one attempt per poll (every 250 ms here, 8 of them in 2 s): the waits grew (0.1 + 0.2 + 0.4 + 0.8 s, then
    // 1 s each), to the cap and no further.
    expect(Date.now() - outage).toBeGreaterThanOrEqual(4_000)
    const wait = timeOf(down.delivery.nextAttemptAt) - timeOf(down.delivery.lastAttemptAt)
    expect(wait).toBeGreaterThanOrEqual(800)
    expect(wait).toBeLessThanOrEqual(1_000)

    await receiver.start()
    const expected = await eventIdsFor([...during503, ...whileDown])
    expect(expected).toHaveLength(7)
    await Wait.until(() => expected.every((id) => acknowledged().some((event) => event.id === id)), "the events delivered after the outage", 30_000)
    const events = acknowledged()
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length)
    expect(inOrder(events)).toBe(true)
    expect(events.filter((event) => expected.includes(event.id)).map((event) => event.id)).toEqual(expected)
    // The batch refused with 503 was finally acknowledged under its own delivery id.
    expect(receiver.deliveries.some((delivery) => delivery.status === 200 && delivery.deliveryId === refused[0]!.deliveryId)).toBe(true)
    // And nothing was acknowledged while the receiver failed: every attempt in the outage was refused or never arrived.
    expect(receiver.deliveries.slice(countBefore).filter((delivery) => delivery.deliveryId === refused[0]!.deliveryId).map((delivery) => delivery.status).at(-1)).toBe(200)
    const recovered = await streamOf()
    expect(recovered.delivery).toMatchObject({ consecutiveFailures: 0, lastError: null })
    expect(timeOf(recovered.delivery.lastSuccessAt)).toBeGreaterThan(timeOf(down.delivery.lastAttemptAt))
  }, 150_000)

  it("pauses and resumes where it stopped", async () => {
    const paused = ok(await auditStreams.update({ token: org.owner.token, path: { streamId }, payload: { status: "paused" } }), 200)
    expect(paused.stream).toMatchObject({ status: "paused", delivery: { nextAttemptAt: null } })
    const count = receiver.deliveries.length
    const teams = await makeTeams("While paused", 2)
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    expect(receiver.deliveries.length).toBe(count)
    Http.expectStatus("resume", await patch(`/v1/audit/streams/${streamId}`, { token: org.owner.token, body: { status: "active" } }), 200)
    const expected = await eventIdsFor(teams)
    await Wait.until(() => expected.every((id) => acknowledged().some((event) => event.id === id)), "the paused events delivered", 30_000)
    expect(inOrder(acknowledged())).toBe(true)
  })

  it("never puts a stream's secret in the audit log", async () => {
    const exported = await get("/v1/audit/export?format=ndjson", { token: org.owner.token })
    expect(exported.status).toBe(200)
    expect(exported.text).toContain("audit.stream.secret.rotate")
    expect(exported.text).not.toContain(secret)
    expect(exported.text).not.toContain("whsec_")
  })

  it("refuses bad input with 400 and a sixth stream with 409", async () => {
    for (const body of [{ url: "ftp://example.com/x" }, { url: "https://user:pw@example.com/x" }, {}, { url: `${receiver.url}/x`, extra: 1 }]) {
      const response = await post("/v1/audit/streams", { token: org.owner.token, body })
      expect(invalid(response).error).toBe("invalid_request")
    }
    expect((await patch(`/v1/audit/streams/${streamId}`, { token: org.owner.token, body: {} })).status).toBe(400)
    // Paused, so they send nothing to the receiver.
    const extra: Array<string> = []
    for (let i = 0; i < 4; i++) {
      extra.push(ok(await auditStreams.create({ token: org.owner.token, payload: { url: `${receiver.url}/extra`, status: "paused" } }), 201).stream.id)
    }
    const sixth = await auditStreams.create({ token: org.owner.token, payload: { url: `${receiver.url}/extra`, status: "paused" } })
    expect(sixth.status).toBe(409)
    expect(sixth.body).toMatchObject({ error: "audit_stream_limit_reached" })
    for (const id of extra) expect((await del(`/v1/audit/streams/${id}`, { token: org.owner.token })).status).toBe(204)
    expect((await get(`/v1/audit/streams/${extra[0]}`, { token: org.owner.token })).status).toBe(404)
  })
})

describe("the outbound guard, with private destinations off", () => {
  let guarded: TestServer.RunningServer
  beforeAll(async () => {
    guarded = await TestServer.start({ outboundAllowPrivate: false })
  })
  afterAll(() => guarded?.close())

  it("refuses http and non-public endpoints when a stream is created or changed", async () => {
    const owner = await Http.owner(guarded.url, "Guarded")
    const guardedStreams = calls(guarded.url).auditStreams
    const refused = async (url: string) => {
      const response = await guardedStreams.create({ token: owner.token, payload: { url } })
      expect(response.status).toBe(400)
      const [detail] = invalid(response).details
      expect(detail?.path).toEqual(["url"])
      return detail?.message
    }
    expect(await refused(`${receiver.url}/ingest`)).toMatch(/^The outbound URL is not allowed: https is required/)
    expect(await refused("https://127.0.0.1:8443/ingest")).toMatch(/^The outbound URL is not allowed: 127\.0\.0\.1 is /)
    expect(await refused("https://10.1.2.3/ingest")).toMatch(/^The outbound URL is not allowed: 10\.1\.2\.3 is /)
    expect(await refused("https://[::1]/ingest")).toMatch(/^The outbound URL is not allowed: /)
    expect(ok(await guardedStreams.list({ token: owner.token }), 200).items).toEqual([])
    // A public address passes (paused: nothing is sent from here); moving it to a private one is refused the same way.
    const made = ok(await guardedStreams.create({ token: owner.token, payload: { url: "https://93.184.216.34/ingest", status: "paused" } }), 201)
    const moved = await guardedStreams.update({ token: owner.token, path: { streamId: made.stream.id }, payload: { url: "https://192.168.1.20/ingest" } })
    expect(moved.status).toBe(400)
    const [detail] = invalid(moved).details
    expect(detail?.path).toEqual(["url"])
    expect(detail?.message).toMatch(/^The outbound URL is not allowed: 192\.168\.1\.20 is /)
  })
})

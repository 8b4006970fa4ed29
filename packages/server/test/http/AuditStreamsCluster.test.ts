/**
 * Audit streams across server processes on one Postgres database (Postgres only: the embedded database is one
 * process's). Two servers, both runners of the durable engine, write events and deliver one stream: every event
 * reaches the receiver exactly once, in order, whichever server wrote it, and no batch is sent by both.
 */
import * as FakeAuditReceiver from "../support/AuditReceiver.js"
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Databases from "../support/TestDatabase.js"
import * as Wait from "../../../../packages/testkit/src/Wait.js"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../src/platform/Database.js"
import { testTuning } from "../durable/runner.js"

/** One key for both servers: a secret one server encrypted, the other decrypts. */
const keys = `test:${randomBytes(32).toString("base64")}`

let receiver: FakeAuditReceiver.FakeAuditReceiver
const cleanup: Array<() => Promise<void>> = []
beforeAll(async () => {
  if (!Databases.onPostgres) return
  receiver = await FakeAuditReceiver.start()
  cleanup.push(() => receiver.close())
}, 60_000)
afterAll(async () => {
  for (const step of cleanup.reverse()) await step()
}, 60_000)

const freshDatabaseUrl = async () => {
  const base = Databases.postgresUrl
  if (base === undefined) throw new Error("needs DATABASE_URL")
  const scope = Scope.makeUnsafe()
  const url = await Effect.runPromise(Scope.provide(scope)(Databases.freshPostgres(base)))
  cleanup.push(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  return url
}

const serverOn = async (url: string) => {
  const server = await TestServer.start({
    database: Database.layerUrl(Redacted.make(url), { maxConnections: 4 }),
    encryptionKeys: keys,
    durable: { sharding: testTuning, cluster: { port: 0 } },
    outboundAllowPrivate: true,
    auditStreamPollInterval: "200 millis",
    auditStreamSettle: "1 second"
  })
  cleanup.push(() => server.close())
  return server
}

describe.skipIf(!Databases.onPostgres)("audit streams across server processes (Postgres)", () => {
  it("two servers deliver one stream: every event once, in order, no batch sent twice", async () => {
    const url = await freshDatabaseUrl()
    const a = await serverOn(url)
    const b = await serverOn(url)
    const org = await Http.staffed(a.url, "Clustered")
    const onA = calls(a.url)
    const onB = calls(b.url)
    const created = ok(await onA.auditStreams.create({ token: org.owner.token, payload: { url: `${receiver.url}/cluster` } }), 201)
    receiver.setSecrets(created.secret)
    // Forty changes, through both servers at once.
    const teams = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      (i % 2 === 0 ? onA : onB).teams.create({ token: org.owner.token, payload: { name: `Team ${i}` } })))
    expect(teams.every((answer) => answer.status === 201)).toBe(true)
    const listed = ok(await onB.audit.listEvents({ token: org.owner.token, query: { order: "asc", limit: "100" } }), 200).items
    // A stream carries the events from its own creation on.
    const from = listed.findIndex((event) => event.action === "audit.stream.create")
    const expected = listed.slice(from).map((event) => event.id)
    expect(expected.length).toBe(41)

    const received = () => receiver.deliveries.filter((delivery) => delivery.path === "/cluster" && delivery.status === 200)
    await Wait.until(() => received().flatMap((delivery) => delivery.events).length >= expected.length, "every event delivered", 60_000)
    // A moment more: a second sender, if there were one, would have sent by now.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const deliveries = received()
    expect(deliveries.every((delivery) => delivery.verified)).toBe(true)
    const ids = deliveries.flatMap((delivery) => delivery.events.map((event) => event.id))
    expect(ids.slice(0, expected.length)).toEqual(expected)
    expect(new Set(ids).size).toBe(ids.length)
    expect(new Set(deliveries.map((delivery) => delivery.deliveryId)).size).toBe(deliveries.length)
    const stream = ok(await onB.auditStreams.get({ token: org.owner.token, path: { streamId: created.stream.id } }), 200).stream
    expect(stream.delivery.consecutiveFailures).toBe(0)
  }, 120_000)
})

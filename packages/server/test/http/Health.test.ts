/**
 * The health probes through HTTP: `/health/live`, `/health/started` and `/health/ready` on a healthy server, on one
 * whose database is down or hangs (a proxy in front of it: `HttpDatabase.behindProxy`), on a database that lacks a
 * migration of this build, and under a host's mount. Every answer of a test server is held to the OpenAPI document
 * (`support/Contract.ts`), the 503 bodies included; the mount's host is not watched, so its bodies are checked here.
 */
import { makeNodeListener } from "../../src/Server.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as Wait from "../../../../packages/testkit/src/Wait.js"
import * as TestDatabase from "../support/HttpDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const allUp = {
  status: "up",
  checks: [
    { name: "database", status: "up" },
    { name: "migrations", status: "up" },
    { name: "durable_engine", status: "up" }
  ]
}

/** The durable engine starts in the background once the server listens: `/health/started` says when it is up. */
const started = (url: string) =>
  Wait.until(async () => (await Http.request(url, "GET", "/health/started")).status === 200, "the durable engine to start")

describe("the health probes", () => {
  it("answer 200 on a healthy server: live with no checks, started with the durable engine, ready with all three", async () => {
    const server = await TestServer.start()
    cleanups.push(server.close)

    const live = await Http.request(server.url, "GET", "/health/live")
    expect(live.status, live.text).toBe(200)
    expect(live.body).toEqual({ status: "up", checks: [] })

    await started(server.url)
    const start = await Http.request(server.url, "GET", "/health/started")
    expect(start.body).toEqual({ status: "up", checks: [{ name: "durable_engine", status: "up" }] })

    const ready = await Http.request(server.url, "GET", "/health/ready")
    expect(ready.status, ready.text).toBe(200)
    expect(ready.body).toEqual(allUp)

    // Beside them, /health and /ready answer as they always have.
    expect((await Http.request(server.url, "GET", "/health")).body).toMatchObject({ ok: true })
    expect((await Http.request(server.url, "GET", "/ready")).body).toEqual({ ok: true, checks: { database: "ok" } })
  })

  it("ready answers 503 when the database is down, naming it; live and started stay 200; back up, ready is 200 again", async () => {
    const database = await TestDatabase.behindProxy({ connectTimeout: "1 second", statementTimeout: "1 second" })
    cleanups.push(database.close)
    const server = await TestServer.start({ database: database.layer })
    cleanups.push(server.close)
    await started(server.url)
    expect((await Http.request(server.url, "GET", "/health/ready")).status).toBe(200)

    await database.proxy.down()
    const ready = await Http.request(server.url, "GET", "/health/ready")
    expect(ready.status, ready.text).toBe(503)
    expect(ready.body).toEqual({
      status: "down",
      checks: [
        { name: "database", status: "down", data: { reason: "unavailable" } },
        { name: "migrations", status: "down", data: { reason: "not_checked" } },
        { name: "durable_engine", status: "up" }
      ]
    })
    // A fixed reason, never the driver's words nor the database's address.
    expect(ready.text).not.toContain("127.0.0.1")
    expect((await Http.request(server.url, "GET", "/health/live")).status).toBe(200)
    expect((await Http.request(server.url, "GET", "/health/started")).status).toBe(200)

    await database.proxy.up()
    await Wait.until(async () => (await Http.request(server.url, "GET", "/health/ready")).status === 200, "the server to be ready again")
    expect((await Http.request(server.url, "GET", "/health/ready")).body).toEqual(allUp)
  })

  it("ready answers 503 with `timeout` at its own deadline when the database hangs, while live answers 200", async () => {
    // Long database timeouts: only the probe's own deadline can answer.
    const database = await TestDatabase.behindProxy({ connectTimeout: "10 minutes", statementTimeout: "10 minutes" })
    cleanups.push(database.close)
    const server = await TestServer.start({ database: database.layer })
    cleanups.push(server.close)
    await started(server.url)

    database.proxy.pause()
    const ready = await Http.request(server.url, "GET", "/health/ready")
    expect(ready.status, ready.text).toBe(503)
    expect(ready.body).toMatchObject({ status: "down", checks: [{ name: "database", status: "down", data: { reason: "timeout" } }, { name: "migrations", data: { reason: "not_checked" } }, { name: "durable_engine", status: "up" }] })
    expect((await Http.request(server.url, "GET", "/health/live")).body).toEqual({ status: "up", checks: [] })
    database.proxy.resume()
  })

  it("ready answers 503 `pending` while a migration of this build is not applied to the database", async () => {
    const server = await TestServer.startSharingDatabase()
    cleanups.push(server.close)
    await started(server.url)
    const [latest] = await server.sql((sql) => sql<{ id: number; name: string }>`DELETE FROM orgplane_migrations WHERE id = (SELECT max(id) FROM orgplane_migrations) RETURNING id, name`)

    const ready = await Http.request(server.url, "GET", "/health/ready")
    expect(ready.status, ready.text).toBe(503)
    expect(ready.body).toEqual({
      status: "down",
      checks: [
        { name: "database", status: "up" },
        { name: "migrations", status: "down", data: { reason: "pending" } },
        { name: "durable_engine", status: "up" }
      ]
    })

    await server.sql((sql) => sql`INSERT INTO orgplane_migrations (id, name) VALUES (${latest!.id}, ${latest!.name})`)
    expect((await Http.request(server.url, "GET", "/health/ready")).body).toEqual(allUp)
  })

  it("answer under a host's mount as at the root (the host strips the mount, as the README's embedding does)", async () => {
    const orgplane = await makeNodeListener({ ...TestServer.testSettings, database: TestDatabase.layer, basePath: "/orgplane" })
    const host = createServer((request, response) => {
      request.url = (request.url ?? "/").slice("/orgplane".length) || "/"
      orgplane.listener(request, response)
    })
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve))
    cleanups.push(async () => {
      host.closeAllConnections()
      await new Promise<void>((resolve) => host.close(() => resolve()))
      await orgplane.dispose()
    })
    const url = `http://127.0.0.1:${(host.address() as AddressInfo).port}`

    expect((await Http.request(url, "GET", "/orgplane/health/live")).body).toEqual({ status: "up", checks: [] })
    await Wait.until(async () => (await Http.request(url, "GET", "/orgplane/health/started")).status === 200, "the durable engine to start")
    const ready = await Http.request(url, "GET", "/orgplane/health/ready")
    expect(ready.status, ready.text).toBe(200)
    expect(ready.body).toEqual(allUp)
  })
})

/**
 * Safe retries of writes: `Idempotency-Key` over HTTP (replay, a reused key, a key in use, kept 4xx, 5xx not kept,
 * the credential's scope, expiry, a bad key), and a write whose COMMIT answer is lost, cut by the database proxy:
 * answered after all, resumed by the real client's retry, or reported lost by another process.
 */
import { SqlClient } from "@effect/sql"
import { createClient } from "@orgplane/client"
import { Api, idempotentOperations } from "@orgplane/schema"
import { FakeWorkerRuntime, Http, TestDatabase, TestServer } from "@orgplane/testkit"
import { Effect, HashMap, Logger } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import * as IdempotencyKeys from "../src/platform/IdempotencyKeys.js"

const clock = new TestServer.ShiftedClock()
let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
let runtime: FakeWorkerRuntime.FakeWorkerRuntime
beforeAll(async () => {
  // The worker runtime (a fake on loopback: private mode) holds a request open for as long as a test needs.
  server = await TestServer.startSharingDatabase({ clock, workerRuntimeTimeout: "2 seconds", outboundAllowPrivate: true })
  runtime = await FakeWorkerRuntime.start()
})
afterAll(async () => {
  await runtime.close()
  await server.close()
})

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const { del, get, patch, post } = Http.verbs(() => server.url)

const keyed = (key: string) => ({ "idempotency-key": key })

const replayed = (response: Http.RawResponse) => response.headers.get("idempotent-replayed")

const teamNames = async (baseUrl: string, token: string) =>
  (await Http.request(baseUrl, "GET", "/v1/teams", { token })).body.items.map((team: { name: string }) => team.name).sort()

describe("a write with an Idempotency-Key", () => {
  it("is answered again, byte for byte, with Idempotent-Replayed, and makes its change once", async () => {
    const org = await Http.owner(server.url)
    const first = await post("/v1/teams", { token: org.token, body: { name: "Platform" }, headers: keyed("create-platform") })
    expect(first.status).toBe(201)
    expect(replayed(first)).toBeNull()
    const again = await post("/v1/teams", { token: org.token, body: { name: "Platform" }, headers: keyed("create-platform") })
    expect(again.status).toBe(201)
    expect(again.text).toBe(first.text)
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"))
    expect(replayed(again)).toBe("true")
    expect(await teamNames(server.url, org.token)).toEqual(["Platform"])

    // A change and a removal too: without its key, the second DELETE would be a 404.
    const teamId = first.body.team.id
    const renamed = await patch(`/v1/teams/${teamId}`, { token: org.token, body: { name: "Infra" }, headers: keyed("rename") })
    const renamedAgain = await patch(`/v1/teams/${teamId}`, { token: org.token, body: { name: "Infra" }, headers: keyed("rename") })
    expect([renamed.status, renamedAgain.text, replayed(renamedAgain)]).toEqual([200, renamed.text, "true"])
    const removed = await del(`/v1/teams/${teamId}`, { token: org.token, headers: keyed("remove") })
    const removedAgain = await del(`/v1/teams/${teamId}`, { token: org.token, headers: keyed("remove") })
    expect([removed.status, removedAgain.status, removedAgain.text, replayed(removedAgain)]).toEqual([204, 204, "", "true"])
    expect((await del(`/v1/teams/${teamId}`, { token: org.token })).status).toBe(404)
  })

  it("keeps an answer carrying a secret shown once sealed, and shows it again only to the same credential", async () => {
    const org = await Http.owner(server.url)
    const created = await post("/v1/api-keys", { token: org.token, body: { name: "nightly-release-pipeline" }, headers: keyed("ci-key") })
    expect(created.status).toBe(201)
    const again = await post("/v1/api-keys", { token: org.token, body: { name: "nightly-release-pipeline" }, headers: keyed("ci-key") })
    expect(again.body.key).toBe(created.body.key)
    const kept = await server.sql((sql) => sql<{ response: string }>`SELECT response FROM idempotency_keys WHERE key = 'ci-key'`)
    expect(kept).toHaveLength(1)
    expect(kept[0]!.response).not.toContain(created.body.key)
    // A name long enough that random ciphertext never spells it by chance.
    expect(kept[0]!.response).not.toContain("nightly-release-pipeline")
    expect((await get("/v1/api-keys", { token: org.token })).body.items).toHaveLength(1)
  })

  it("refuses the same key for another request with 422 idempotency_key_reused, changing nothing", async () => {
    const org = await Http.owner(server.url)
    const first = await post("/v1/teams", { token: org.token, body: { name: "One" }, headers: keyed("k-reused") })
    expect(first.status).toBe(201)
    const otherBody = await post("/v1/teams", { token: org.token, body: { name: "Two" }, headers: keyed("k-reused") })
    expect(otherBody.status).toBe(422)
    expect(otherBody.body).toEqual({ error: "idempotency_key_reused", message: expect.stringContaining("another request") })
    const otherPath = await patch(`/v1/teams/${first.body.team.id}`, { token: org.token, body: { name: "One" }, headers: keyed("k-reused") })
    expect(otherPath.status).toBe(422)
    const otherQuery = await post("/v1/teams?x=1", { token: org.token, body: { name: "One" }, headers: keyed("k-reused") })
    expect(otherQuery.status).toBe(422)
    expect(await teamNames(server.url, org.token)).toEqual(["One"])
  })

  it("keeps the operation's own 4xx answer: the retry answers it again even once it would succeed", async () => {
    const org = await Http.owner(server.url)
    const existing = Http.expectStatus("create", await post("/v1/teams", { token: org.token, body: { name: "Dup" } }), 201)
    const taken = await post("/v1/teams", { token: org.token, body: { name: "Dup" }, headers: keyed("k-conflict") })
    expect(taken.status).toBe(409)
    expect(taken.body.error).toBe("team_exists")
    expect((await del(`/v1/teams/${existing.team.id}`, { token: org.token })).status).toBe(204)
    const again = await post("/v1/teams", { token: org.token, body: { name: "Dup" }, headers: keyed("k-conflict") })
    expect([again.status, again.text, replayed(again)]).toEqual([409, taken.text, "true"])
    expect(await teamNames(server.url, org.token)).toEqual([])
  })

  it("answers 409 idempotency_key_in_use while the first request runs, and a retry runs again after a 5xx", async () => {
    const org = await Http.owner(server.url)
    const registered = Http.expectStatus<{ worker: { id: string }; token: string }>(
      "register",
      await post("/v1/workers", { token: org.token, body: { name: "Box", destination: "local" } }),
      201
    )
    const instance = { provider: "static", status: "running", url: runtime.url, credential: runtime.credential }
    Http.expectStatus("instance", await post("/v1/worker-runtime/instance", { token: registered.token, body: instance }), 201)
    const upgrade = `/v1/workers/${registered.worker.id}/runtime/upgrade`
    const seen = runtime.requests.length

    // The runtime holds the first upgrade open until the server gives up on it (2 seconds): 502, not kept.
    runtime.setMode({ _tag: "hang" })
    const first = post(upgrade, { token: org.token, body: { version: "2" }, headers: keyed("k-upgrade") })
    while (runtime.requests.length === seen) await new Promise((resolve) => setTimeout(resolve, 10))
    const during = await post(upgrade, { token: org.token, body: { version: "2" }, headers: keyed("k-upgrade") })
    expect(during.status).toBe(409)
    expect(during.body).toEqual({ error: "idempotency_key_in_use", message: expect.any(String) })
    expect(during.headers.get("retry-after")).toBe("1")
    // The request is checked first: another body is 422 even while the key is in use.
    expect((await post(upgrade, { token: org.token, body: { version: "3" }, headers: keyed("k-upgrade") })).status).toBe(422)
    expect((await first).status).toBe(502)

    runtime.setMode({ _tag: "ok" })
    const retried = await post(upgrade, { token: org.token, body: { version: "2" }, headers: keyed("k-upgrade") })
    expect(retried.status).toBe(200)
    expect(replayed(retried)).toBeNull()
    expect(runtime.requests.length - seen).toBe(2)
  })

  it("is scoped by the credential: another member's, or another session's, same key is a key of its own", async () => {
    const org = await Http.staffed(server.url)
    const mine = await post("/v1/teams", { token: org.owner.token, body: { name: "Mine" }, headers: keyed("k-shared") })
    expect(mine.status).toBe(201)
    const theirs = await post("/v1/teams", { token: org.admin.token, body: { name: "Theirs" }, headers: keyed("k-shared") })
    expect(theirs.status).toBe(201)
    // The same person signed in again: the same key and body run anew (and find the team the first run made).
    const signedIn = Http.expectStatus(
      "sign-in",
      await post("/v1/auth/sign-in", { body: { email: org.owner.email, password: org.owner.password } }),
      200
    )
    const otherSession = await post("/v1/teams", { token: signedIn.session.token, body: { name: "Mine" }, headers: keyed("k-shared") })
    expect(otherSession.status).toBe(409)
    expect(replayed(otherSession)).toBeNull()
    const ownerAgain = await post("/v1/teams", { token: org.owner.token, body: { name: "Mine" }, headers: keyed("k-shared") })
    expect([ownerAgain.status, ownerAgain.text]).toEqual([201, mine.text])
  })

  it("is ignored by operations open to anonymous callers, and by reads", async () => {
    const email = `anonymous.${Math.random().toString(36).slice(2)}@example.com`
    const body = { email, password: "correct horse battery", name: "Anon" }
    const signedUp = await post("/v1/auth/sign-up", { body, headers: keyed("k-signup") })
    expect(signedUp.status).toBe(201)
    const again = await post("/v1/auth/sign-up", { body, headers: keyed("k-signup") })
    expect([again.status, again.body.error, replayed(again)]).toEqual([409, "email_taken", null])
    const bad = await post("/v1/auth/sign-in", { body: { email, password: body.password }, headers: keyed("") })
    expect(bad.status).toBe(200)
    expect((await get("/v1/me", { token: signedUp.body.session.token, headers: keyed("\t") })).status).toBe(200)
  })

  it("must be 1 to 255 printable ASCII characters, else 400 on the header", async () => {
    const org = await Http.owner(server.url)
    for (const key of ["", "x".repeat(256), "tab\there", "caf\u00e9"]) {
      const refused = await post("/v1/teams", { token: org.token, body: { name: "T" }, headers: keyed(key) })
      expect(refused.status, JSON.stringify(key)).toBe(400)
      expect(refused.body.details).toEqual([{ message: "Must be 1 to 255 printable ASCII characters.", path: ["idempotency-key"] }])
    }
    expect((await post("/v1/teams", { token: org.token, body: { name: "T" }, headers: keyed("x".repeat(255)) })).status).toBe(201)
  })

  it("lives 24 hours: an older key is a new one, and the hourly job deletes it", async () => {
    const org = await Http.owner(server.url)
    expect((await post("/v1/teams", { token: org.token, body: { name: "Old" }, headers: keyed("k-expiry") })).status).toBe(201)
    clock.advance("23 hours")
    expect((await post("/v1/teams", { token: org.token, body: { name: "New" }, headers: keyed("k-expiry") })).status).toBe(422)
    clock.advance("1 hour")
    const later = await post("/v1/teams", { token: org.token, body: { name: "New" }, headers: keyed("k-expiry") })
    expect([later.status, replayed(later)]).toEqual([201, null])
    expect(await teamNames(server.url, org.token)).toEqual(["New", "Old"])

    const count = (key: string) =>
      server.sql((sql) => Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = ${key}`, (rows) => rows[0]!.n))
    expect((await post("/v1/teams", { token: org.token, body: { name: "Fresh" }, headers: keyed("k-fresh") })).status).toBe(201)
    // The job's statement, an hour on. The server's own cron (at :41 on the moved clock) may have run it first: what
    // is asserted is what is left, whoever deleted it.
    await server.sql((sql) =>
      IdempotencyKeys.deleteExpired({ now: new Date(clock.unsafeCurrentTimeMillis() + 3_600_000) }).pipe(
        Effect.provideService(SqlClient.SqlClient, sql)
      )
    )
    // Every other test's keys are a day old by now; k-expiry was made anew an hour ago, k-fresh just now.
    expect([await count("k-reused"), await count("k-expiry"), await count("k-fresh")]).toEqual([0, 1, 1])
  })
})

describe("the OpenAPI document", () => {
  it("documents the Idempotency-Key on exactly the operations that take it, with their 409 and 422", async () => {
    const document = (await get("/openapi.json")).body
    const { ids } = idempotentOperations(Api)
    const operations = Object.values<Record<string, any>>(document.paths).flatMap((item) => Object.values<any>(item))
    const documented = operations.filter((operation) =>
      (operation.parameters ?? []).some((parameter: any) => parameter.name === "Idempotency-Key" && parameter.in === "header")
    )
    expect(documented.map((operation) => operation.operationId).sort()).toEqual([...ids].sort())
    for (const id of ["users.signIn", "users.signUp", "bootstrap.workspace", "invitations.accept", "teams.list"]) expect(ids.has(id), id).toBe(false)
    for (const id of ["teams.create", "teams.delete", "apiKeys.create", "workers.upgradeRuntime"]) expect(ids.has(id), id).toBe(true)
    const reused = operations.filter((operation) => operation.responses["422"] !== undefined).map((operation) => operation.operationId)
    expect(reused.sort()).toEqual([...ids].sort())
    const create = operations.find((operation) => operation.operationId === "teams.create")
    expect(create.responses["201"].headers["Idempotent-Replayed"]).toBeDefined()
    expect(JSON.stringify(create.responses["409"])).toContain("IdempotencyConflict")
    const signIn = operations.find((operation) => operation.operationId === "users.signIn")
    expect(JSON.stringify(signIn.responses)).not.toContain("Idempotency")
  })
})

/** Resolves when the server logs a request line with `status` (the log line is written as the answer goes out). */
const answered = (status: number) => {
  let resolve: () => void = () => {}
  const seen = new Promise<void>((done) => (resolve = done))
  const logger = Logger.make(({ annotations, message }) => {
    const text = (Array.isArray(message) ? message : [message]).map(String).join(" ")
    if (text === "request" && HashMap.get(annotations, "status").pipe((found) => found._tag === "Some" && found.value === status)) resolve()
  })
  return { logger, seen }
}

/** A server on a database behind a proxy; closed with it after the test. */
const behindProxy = async (options: TestServer.Options = {}) => {
  const database = await TestDatabase.behindProxy({ connectTimeout: "1 second", statementTimeout: "2 seconds" })
  cleanups.push(database.close)
  const start = async (more: TestServer.Options = {}) => {
    const started = await TestServer.start({ database: database.layer, ...options, ...more })
    cleanups.push(started.close)
    return started
  }
  return { proxy: database.proxy, start }
}

/** The team creation's COMMIT, forwarded, then its connection cut: the database commits, the server never hears so. */
const lostCommit = { statement: /^\s*COMMIT\b/i, after: /INSERT INTO teams\b/i }

describe("a write whose answer is lost", () => {
  it("a 5xx is not kept: the key is released and the retry runs anew", async () => {
    const { proxy, start } = await behindProxy()
    const running = await start()
    const org = await Http.owner(running.url)
    // The INSERT never reaches the database: the transaction is lost with its connection.
    const cut = proxy.cutAt({ statement: /INSERT INTO teams\b/i, forward: false })
    const failed = await Http.request(running.url, "POST", "/v1/teams", { token: org.token, body: { name: "A" }, headers: keyed("k-503") })
    await cut
    expect(failed.status).toBe(503)
    const retried = await Http.request(running.url, "POST", "/v1/teams", { token: org.token, body: { name: "A" }, headers: keyed("k-503") })
    expect([retried.status, replayed(retried)]).toEqual([201, null])
    expect(await teamNames(running.url, org.token)).toEqual(["A"])
  })

  it("with the database still there: the server asks the key's row on another connection, and answers 201 at once", async () => {
    const { proxy, start } = await behindProxy()
    const running = await start()
    const org = await Http.owner(running.url)
    // No retries: the first answer must be the success.
    const client = createClient({ baseUrl: running.url, token: org.token, maxRetries: 0 })
    cleanups.push(() => client.close())
    const cut = proxy.cutAt(lostCommit)
    const created = await client.teams.create({ payload: { name: "Platform" } })
    await cut
    expect(created.team.name).toBe("Platform")
    expect(await teamNames(running.url, org.token)).toEqual(["Platform"])
  })

  it("with the database gone right after COMMIT: 503, and the client's retry is answered from this process's memory", async () => {
    const log = answered(503)
    const { proxy, start } = await behindProxy({ logger: log.logger })
    const running = await start()
    const org = await Http.owner(running.url)
    const client = createClient({ baseUrl: running.url, token: org.token, retryDelay: 1, maxRetries: 2 })
    cleanups.push(() => client.close())
    void proxy.cutAt({ ...lostCommit, down: true })
    // The client waits the 503's Retry-After (5 seconds) before retrying; the database is back by then.
    void log.seen.then(() => proxy.up())
    const created = await client.teams.create({ payload: { name: "Platform" } })
    expect(created.team.name).toBe("Platform")
    expect(await teamNames(running.url, org.token)).toEqual(["Platform"])
  })

  it("another process cannot give the lost answer: 409 while the first's lease runs, then idempotency_response_lost", async () => {
    const processClock = new TestServer.ShiftedClock()
    const { proxy, start } = await behindProxy({ clock: processClock })
    const first = await start()
    const org = await Http.owner(first.url)
    void proxy.cutAt({ ...lostCommit, down: true })
    const lost = await Http.request(first.url, "POST", "/v1/teams", { token: org.token, body: { name: "A" }, headers: keyed("k-lost") })
    expect(lost.status).toBe(503)
    await first.close()
    await proxy.up()

    const second = await start()
    const retry = () => Http.request(second.url, "POST", "/v1/teams", { token: org.token, body: { name: "A" }, headers: keyed("k-lost") })
    expect((await retry()).body.error).toBe("idempotency_key_in_use")
    processClock.advance("61 seconds")
    const gone = await retry()
    expect(gone.status).toBe(409)
    expect(gone.body).toEqual({ error: "idempotency_response_lost", message: expect.stringContaining("read the resource") })
    expect(await teamNames(second.url, org.token)).toEqual(["A"])
  })
})

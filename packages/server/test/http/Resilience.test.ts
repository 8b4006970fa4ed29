/**
 * The server when its database fails: down, hung, or losing transactions to concurrent ones. The retry policy's
 * delays are read by stepping it (`Schedule.toStep`, `Random.withSeed`), and the driver's error at `reason.cause`
 * (an SqlError's `cause` is its classified reason). One test is skipped (its comment says why).
 */
import * as SqlClient from "effect/sql/SqlClient"
import { isSqlError } from "effect/sql/SqlError"
import { describe, expect, it, layer } from "@effect/vitest"
import { ServiceUnavailable } from "@orgplane/schema"
import * as Database from "../../src/platform/Database.js"
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as Wait from "../../../../packages/testkit/src/Wait.js"
import * as TestDatabase from "../support/HttpDatabase.js"
import type * as DatabaseProxy from "../support/DatabaseProxy.js"
import * as TestServer from "../support/HttpServer.js"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as References from "effect/References"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/testing/TestClock"
import { afterEach } from "vitest"
import { DatabaseStatus } from "../../src/platform/DatabaseStatus.js"
import { readyDeadline } from "../../src/system/Health.js"
import { readiness } from "../../src/system/Http.js"
import { classify, concurrencyMessage, orUnavailable, retryPolicy, transaction, transactionAttempts } from "../../src/platform/Sql.js"

const postgres = Effect.runSync(Effect.orDie(TestDatabase.postgresUrl))

const behindProxy = TestDatabase.behindProxy

/** Everything a server logs, for tests that count lines. */
const capture = () => {
  const lines: Array<{ readonly level: string; readonly message: string; readonly inRequest: boolean }> = []
  const logger = Logger.make(({ fiber, logLevel, message }) => {
    lines.push({
      level: logLevel.toUpperCase(),
      message: (Array.isArray(message) ? message : [message]).map(String).join(" "),
      inRequest: "requestId" in fiber.getRef(References.CurrentLogAnnotations)
    })
  })
  return { lines, logger }
}

const expectUnavailable = (response: Http.RawResponse) => {
  expect(response.status, response.text).toBe(503)
  expect(response.body).toEqual({ error: "service_unavailable", message: expect.any(String) })
  expect(response.headers.get("retry-after")).toBe("5")
}

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A test server on a proxied database; closed, with the database, after the test. */
const serverBehindProxy = async (timeouts: Database.Timeouts, options: TestServer.Options = {}) => {
  const database = await behindProxy(timeouts)
  cleanups.push(database.close)
  const server = await TestServer.start({ database: database.layer, ...options })
  cleanups.push(server.close)
  return { server, proxy: database.proxy }
}

/**
 * Once the database is reachable again, the server says so on `/ready` (its pool reconnects: on a busy machine that
 * can take longer than one request's connect timeout), within 20 seconds.
 */
const backUp = (url: string) =>
  Wait.until(async () => (await Http.request(url, "GET", "/ready")).status === 200, "the server to be ready again")

describe("when the database is down", () => {
  // A database that is down refuses connections at once, so the connect timeout does not shape these answers: it is
  // long enough for the server's start on a cold or loaded machine (1 s was not, run alone or under load).
  it("sign-in and /v1/me answer 503 service_unavailable with Retry-After, /health stays 200; back up, 200 again", async () => {
    const { proxy, server } = await serverBehindProxy({ connectTimeout: "5 seconds", statementTimeout: "1 second" })
    const user = await Http.signUp(server.url)
    const signIn = { body: { email: user.email, password: user.password } }

    await proxy.down()
    expectUnavailable(await Http.request(server.url, "POST", "/v1/auth/sign-in", signIn))
    expectUnavailable(await Http.request(server.url, "GET", "/v1/me", { token: user.token }))
    expect((await Http.request(server.url, "GET", "/health")).status).toBe(200)

    await proxy.up()
    await backUp(server.url)
    expect((await Http.request(server.url, "GET", "/v1/me", { token: user.token })).status).toBe(200)
    expect((await Http.request(server.url, "POST", "/v1/auth/sign-in", signIn)).status).toBe(200)
  })
})

describe("a directory's SCIM write when the database is down", () => {
  it("answers a SCIM 503 with Retry-After, which Okta and Entra retry; back up, the retry succeeds", async () => {
    const { proxy, server } = await serverBehindProxy(
      { connectTimeout: "5 seconds", statementTimeout: "1 second" },
      { defaultPlan: "enterprise" }
    )
    const owner = await Http.owner(server.url)
    const directory = await Http.scimDirectory(server.url, owner.token)
    const create = () =>
      Http.request(server.url, "POST", `${directory.base}/Users`, {
        token: directory.token,
        headers: { "content-type": "application/scim+json" },
        body: { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: "pat@corp.example" }
      })

    await proxy.down()
    const refused = await create()
    expect(refused.status, refused.text).toBe(503)
    expect(refused.headers.get("content-type")).toContain("application/scim+json")
    expect(refused.headers.get("retry-after")).toBe("5")
    expect(refused.body).toMatchObject({ schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: "503" })

    await proxy.up()
    await backUp(server.url)
    expect((await create()).status).toBe(201)
  })
})

describe("when the database hangs", () => {
  it("a request answers 503 once the database timeouts expire instead of hanging, and /ready answers 503", async () => {
    const { proxy, server } = await serverBehindProxy({ connectTimeout: "1 second", statementTimeout: "1 second" })
    const user = await Http.signUp(server.url)

    proxy.pause()
    expectUnavailable(await Http.request(server.url, "GET", "/v1/me", { token: user.token }))
    expectUnavailable(await Http.request(server.url, "POST", "/v1/auth/sign-in", { body: { email: user.email, password: user.password } }))
    const ready = await Http.request(server.url, "GET", "/ready")
    expectUnavailable(ready)
    expect(ready.body).toMatchObject({ message: "The database does not answer." })

    proxy.resume()
    expect((await Http.request(server.url, "GET", "/v1/me", { token: user.token })).status).toBe(200)
  })

  it("/ready answers at its own 2-second deadline even when the database's own timeouts are long", async () => {
    // With 10-minute timeouts only /ready's own deadline can answer during the test, and its log line says so.
    const log = capture()
    const { proxy, server } = await serverBehindProxy({ connectTimeout: "10 minutes", statementTimeout: "10 minutes" }, { logger: log.logger })
    expect((await Http.request(server.url, "GET", "/ready")).status).toBe(200)

    proxy.pause()
    expectUnavailable(await Http.request(server.url, "GET", "/ready"))
    expect(log.lines.filter((line) => line.level === "WARN").map((line) => line.message)).toContain(`The database is unavailable: no answer within 2s`)
    proxy.resume()
  })

  it.effect("/ready does not wait for the stuck check's interruption (a cancel, which needs the hung database too)", () =>
    Effect.gen(function*() {
      const status = yield* DatabaseStatus
      // A check that never answers and whose interruption never ends either.
      const stuck = Effect.onInterrupt(Effect.never, () => Effect.never)
      const answering = yield* Effect.forkChild(Effect.flip(readiness(stuck, status)))
      yield* TestClock.adjust(Duration.millis(Duration.toMillis(readyDeadline) - 1))
      expect(Option.isNone(Option.fromUndefinedOr(answering.pollUnsafe()))).toBe(true)
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* Fiber.join(answering)).toEqual(new ServiceUnavailable({ message: "The database does not answer." }))
    }).pipe(Effect.provide(DatabaseStatus.layer), Effect.provide(Logger.layer([]))))
})

describe("when the database stops in the middle of requests (SIGSTOP)", () => {
  // Both timeouts 3 seconds: a request waits on its database at most 4 seconds without an answer (Database.patience),
  // whatever it waits for in a row. The margin is generous, for a loaded machine: 2 seconds past the bound, which
  // is still short of the 7 to 8 seconds a write with an Idempotency-Key took when each wait had a timeout of its own.
  const timeouts = { connectTimeout: "3 seconds", statementTimeout: "3 seconds" } as const
  const bound = Duration.toMillis(Database.patience(Duration.seconds(3), Duration.seconds(3)))
  const margin = 2_000
  const timed = async (request: () => Promise<Http.RawResponse>) => {
    const startedAt = performance.now()
    const response = await request()
    return { response, took: performance.now() - startedAt }
  }

  it("a write with an Idempotency-Key stopped at its INSERT answers 503 within the bound (not after a second wait to release its key); continued, its retry makes the team once", async () => {
    const { proxy, server } = await serverBehindProxy(timeouts)
    const owner = await Http.owner(server.url)
    const create = () =>
      Http.request(server.url, "POST", "/v1/teams", { token: owner.token, headers: { "idempotency-key": "k-stopped" }, body: { name: "Stopped" } })
    const frozen = proxy.freeze({ at: /INSERT INTO teams\b/i })
    const { response, took } = await timed(create)
    await frozen
    expectUnavailable(response)
    expect(took).toBeGreaterThanOrEqual(bound - 1_000)
    expect(took).toBeLessThan(bound + margin)

    // The database continues: the INSERT it got runs in a transaction that never commits (its connection is gone).
    proxy.resume()
    await backUp(server.url)
    const retried = await create()
    expect(retried.status, retried.text).toBe(201)
    const again = await create()
    expect([again.status, again.text, again.headers.get("idempotent-replayed")]).toEqual([201, retried.text, "true"])
    const teams = ok(await calls(server.url).teams.list({ token: owner.token }), 200)
    expect(teams.items.map((team) => team.name)).toEqual(["Stopped"])
  })

  it("every request of a burst larger than the pool answers 503 within the bound, waiting for a connection or for an answer", async () => {
    const { proxy, server } = await serverBehindProxy(timeouts)
    const user = await Http.signUp(server.url)
    await proxy.freeze()
    const answers = await Promise.all(Array.from({ length: 8 }, () => timed(() => Http.request(server.url, "GET", "/v1/me", { token: user.token }))))
    for (const { response } of answers) expectUnavailable(response)
    expect(Math.max(...answers.map(({ took }) => took))).toBeLessThan(bound + margin)
    proxy.resume()
    await backUp(server.url)
    expect((await Http.request(server.url, "GET", "/v1/me", { token: user.token })).status).toBe(200)
  })
})

describe("a transaction cut short by a hung database", () => {
  it("leaves no transaction open on its connection for the next user", async () => {
    // One connection, so that the next statement gets the very connection the transaction had.
    const database = await behindProxy({ connectTimeout: "300 millis", statementTimeout: "300 millis", maxConnections: 1 })
    cleanups.push(database.close)
    await Effect.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      database.proxy.pause()
      expect(yield* Effect.flip(transaction(sql`SELECT 1`))).toBeInstanceOf(ServiceUnavailable)
      // The BEGIN the database gets late must not leave the connection inside a transaction whose ROLLBACK timed out.
      database.proxy.resume()
      // Inside a transaction every statement sees its transaction id; statements of their own each get a new one.
      const [before] = yield* sql<{ id: string }>`SELECT txid_current()::text AS id`
      const [after] = yield* sql<{ id: string }>`SELECT txid_current()::text AS id`
      expect(after!.id).not.toBe(before!.id)
    }).pipe(Effect.provide(database.layer)))
  })
})

describe("an outage", () => {
  it("is logged once: one WARN for many failing requests, one INFO when the database answers again", async () => {
    const log = capture()
    const { proxy, server } = await serverBehindProxy({ connectTimeout: "1 second", statementTimeout: "1 second" }, { logger: log.logger })
    const user = await Http.signUp(server.url)
    log.lines.length = 0

    await proxy.down()
    expectUnavailable(await Http.request(server.url, "POST", "/v1/auth/sign-in", { body: { email: user.email, password: user.password } }))
    expectUnavailable(await Http.request(server.url, "GET", "/v1/me", { token: user.token }))
    expectUnavailable(await Http.request(server.url, "POST", "/v1/auth/sign-up", { body: { email: "x@example.com", password: "correct horse battery", name: "X" } }))
    expectUnavailable(await Http.request(server.url, "GET", "/ready"))
    // Each request still has its own line (INFO for a 503): the outage itself is told once, by whoever met it first.
    // (The durable engine's background work, its storage polls and its scheduled jobs' start, says when its own
    // attempts fail, outside any request, and more so on a loaded machine: not what this test counts.)
    const background = (line: { readonly message: string; readonly inRequest: boolean }) =>
      !line.inRequest && !line.message.startsWith("The database is unavailable")
    const warnings = log.lines.filter((line) => line.level === "WARN" && !background(line))
    expect(warnings).toHaveLength(1)
    // The cause is told: a refused connection, or, when a pooled connection was open as the proxy went down, its end
    // (in @effect/sql-pg 4's words, "Connection closed"; pg's were "Connection terminated unexpectedly"), or its reset
    // when the statement reached the socket before its close was read (a statement's fiber starts at once).
    expect(warnings[0]!.message).toMatch(/^The database is unavailable: .*(ECONNREFUSED|ECONNRESET|Connection closed)/)
    expect(warnings[0]!.message).not.toContain("\n    at ")
    expect(log.lines.filter((line) => line.level === "ERROR" && !background(line))).toEqual([])

    await proxy.up()
    expect((await Http.request(server.url, "GET", "/ready")).status).toBe(200)
    expect((await Http.signUp(server.url)).token).toBeTypeOf("string")
    const notes = log.lines.filter((line) => line.level === "INFO" && line.message !== "request")
    expect(notes.map((line) => line.message)).toEqual(["The database is available again"])
    expect(log.lines.filter((line) => line.level === "WARN" && !background(line))).toHaveLength(1)
  })
})

/** A real error of the given SQLSTATE, raised by the database itself. */
const raise = (code: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DO $$ BEGIN RAISE EXCEPTION 'raised %', '${code}' USING ERRCODE = '${code}'; END $$`))

/** The SqlError a failed or died effect carries. */
const sqlErrorOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) throw new Error("expected a failure")
    const found = exit.cause.reasons.map((reason) => reason._tag === "Fail" ? reason.error : reason._tag === "Die" ? reason.defect : undefined).find(isSqlError)
    if (found === undefined) throw new Error(`expected a SqlError, got ${Cause.pretty(exit.cause)}`)
    return found
  })

layer(TestDatabase.layer, { timeout: 60_000, excludeTestServices: true })("transactions", (it) => {
  it.effect("retry a serialization failure (40001): two failures, then success on the third attempt", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      let attempts = 0
      const result = yield* transaction(
        Effect.suspend(() => ++attempts <= 2 ? raise("40001") : sql<{ n: number }>`SELECT 1 AS n`)
      )
      expect(result).toEqual([{ n: 1 }])
      expect(attempts).toBe(3)
    }))

  it.effect("give up on a deadlock (40P01) after the bounded attempts with ServiceUnavailable", () =>
    Effect.gen(function*() {
      let attempts = 0
      const error = yield* Effect.flip(transaction(Effect.suspend(() => (attempts++, raise("40P01")))))
      expect(error).toBeInstanceOf(ServiceUnavailable)
      expect(error.message).toBe(concurrencyMessage)
      expect(attempts).toBe(transactionAttempts)
    }))

  it.effect("retry a conflict that a repository turned into a defect (Effect.orDie), as today's repositories do", () =>
    Effect.gen(function*() {
      let attempts = 0
      yield* transaction(Effect.suspend(() => ++attempts === 1 ? Effect.orDie(raise("40P01")) : Effect.void))
      expect(attempts).toBe(2)
    }))

  it.effect("do not retry a bug: a syntax error is a defect after one attempt", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      let attempts = 0
      const exit = yield* Effect.exit(transaction(Effect.suspend(() => (attempts++, sql`SELEC 1`))))
      expect(attempts).toBe(1)
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
    }))

  it.effect("leave the retry to the outermost: a nested transaction does not start over on its own", () =>
    Effect.gen(function*() {
      let outer = 0
      let nested = 0
      yield* transaction(
        Effect.gen(function*() {
          outer++
          yield* transaction(Effect.suspend(() => ++nested === 1 ? raise("40001") : Effect.void))
        })
      )
      // Retrying by itself, the savepoint would have run twice inside one outer attempt.
      expect({ outer, nested }).toEqual({ outer: 2, nested: 2 })
    }))

  it.effect("a conflict in a read inside a transaction restarts the transaction too", () =>
    Effect.gen(function*() {
      let attempts = 0
      yield* transaction(orUnavailable(Effect.suspend(() => ++attempts === 1 ? raise("40001") : Effect.void)))
      expect(attempts).toBe(2)
    }))

  it.effect("wait 20, 40, 80 ms between attempts, each ±20%", () =>
    Effect.gen(function*() {
      const step = yield* Schedule.toStep(retryPolicy)
      const delays: Array<Duration.Duration> = []
      for (const input of [1, 2, 3, 4, 5]) {
        const next = yield* Effect.exit(step(0, input))
        if (Exit.isFailure(next)) break
        delays.push(next.value[1])
      }
      const millis = delays.map(Duration.toMillis)
      // One delay before each attempt after the first (Schedule.run adds the final output, when it is done).
      millis.slice(0, transactionAttempts - 1).forEach((delay, i) => {
        expect(delay).toBeGreaterThanOrEqual(20 * 2 ** i * 0.8)
        expect(delay).toBeLessThanOrEqual(20 * 2 ** i * 1.2)
      })
    }).pipe(Random.withSeed(42)))
})

layer(TestDatabase.layer, { timeout: 60_000, excludeTestServices: true })("classify, over errors from a real database", (it) => {
  it.effect("a serialization failure or a deadlock is a concurrency conflict", () =>
    Effect.gen(function*() {
      expect(classify(yield* sqlErrorOf(raise("40001")))).toBe("concurrency")
      expect(classify(yield* sqlErrorOf(raise("40P01")))).toBe("concurrency")
    }))

  it.effect("a shutdown, a cancel, a connection exception or exhausted resources mean unavailable", () =>
    Effect.gen(function*() {
      for (const code of ["57P01", "57P02", "57P03", "57014", "08006", "53300"]) {
        expect(classify(yield* sqlErrorOf(raise(code))), code).toBe("unavailable")
      }
    }))

  it.effect("a syntax error, a unique violation or a custom error are bugs", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      expect(classify(yield* sqlErrorOf(sql`SELEC 1`))).toBe("bug")
      yield* sql`CREATE TEMPORARY TABLE test_classify_probe (id int PRIMARY KEY)`
      yield* sql`INSERT INTO test_classify_probe VALUES (1)`
      expect(classify(yield* sqlErrorOf(sql`INSERT INTO test_classify_probe VALUES (1)`))).toBe("bug")
      expect(classify(yield* sqlErrorOf(raise("P0001")))).toBe("bug")
    }))
})

describe("classify, over connection failures", () => {
  /** The error of `use` on a client through a proxy (short timeouts), after `before` did its harm. */
  const through = async (
    before: (proxy: DatabaseProxy.DatabaseProxy) => Promise<void> | void,
    use: (sql: SqlClient.SqlClient, proxy: DatabaseProxy.DatabaseProxy) => Effect.Effect<unknown, unknown, Scope.Scope>
  ) => {
    const database = await behindProxy({ connectTimeout: "300 millis", statementTimeout: "300 millis" })
    try {
      return await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function*() {
            const context = yield* Layer.build(database.layer)
            const sql = Context.get(context, SqlClient.SqlClient)
            yield* Effect.promise(async () => before(database.proxy))
            return yield* sqlErrorOf(use(sql, database.proxy))
          })
        )
      )
    } finally {
      await database.close()
    }
  }

  it("a refused connection is unavailable", async () => {
    const database = await behindProxy({ connectTimeout: "300 millis", statementTimeout: "300 millis" })
    try {
      await database.proxy.down()
      const error = await Effect.runPromise(sqlErrorOf(Effect.scoped(Layer.build(database.layer))))
      expect(error.reason.cause).toMatchObject({ code: "ECONNREFUSED" })
      expect(classify(error)).toBe("unavailable")
    } finally {
      await database.close()
    }
  })

  it("a query without an answer (read timeout) is unavailable", async () => {
    const error = await through((proxy) => proxy.pause(), (sql) => sql`SELECT 1`)
    expect(String(error.cause)).toContain("Query read timeout")
    expect(classify(error)).toBe("unavailable")
  })

  // The driver words a connection lost during a query "Connection closed" (a ConnectionError whose cause is
  // `Error: Connection closed`).
  it("a connection lost during a query is unavailable", async () => {
    const error = await through(
      (proxy) => proxy.pause(),
      (sql, proxy) =>
        Effect.andThen(
          Effect.forkChild(Effect.andThen(Effect.sleep("100 millis"), Effect.promise(() => proxy.down()))),
          sql`SELECT 1`
        )
    )
    expect(error.reason._tag).toBe("ConnectionError")
    expect(String(error.cause)).toContain("Connection closed")
    expect(classify(error)).toBe("unavailable")
  })

  it("no free connection in the pool within the connect timeout is unavailable", async () => {
    const error = await through(() => {}, (sql) =>
      Effect.gen(function*() {
        // Hold every connection of the pool (one on the embedded database, four on Postgres).
        for (let i = 0; i < (Option.isSome(postgres) ? 4 : 1); i++) yield* sql.reserve
        return yield* sql`SELECT 1`
      }))
    expect(String(error.cause)).toContain("timeout exceeded when trying to connect")
    expect(classify(error)).toBe("unavailable")
  })
})

describe.runIf(Option.isSome(postgres))("on Postgres (needs a server-side statement timeout and real concurrency: Postgres only)", () => {
  layer(TestDatabase.layer, { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("a statement that runs past the statement timeout (57014) is unavailable", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const error = yield* sqlErrorOf(sql.withTransaction(Effect.andThen(sql`SET LOCAL statement_timeout = '100ms'`, sql`SELECT pg_sleep(2)`)))
        const cause: unknown = error.reason.cause
        expect(typeof cause === "object" && cause !== null ? Reflect.get(cause, "code") : undefined).toBe("57014")
        expect(classify(error)).toBe("unavailable")
      }))

    it.effect("two transactions that deadlock both complete, the loser retried", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE test_deadlock_probe (id int PRIMARY KEY, n int NOT NULL)`
        yield* sql`INSERT INTO test_deadlock_probe VALUES (1, 0), (2, 0)`
        const firstLocked = yield* Deferred.make<void>()
        const secondLocked = yield* Deferred.make<void>()
        let attempts = 0
        // Each locks its first row, waits until the other holds its own, then wants the other's: a deadlock on the
        // first attempt (later attempts find the latches open and run through).
        const crossing = (from: number, to: number, locked: Deferred.Deferred<void>, other: Deferred.Deferred<void>) =>
          transaction(
            Effect.gen(function*() {
              attempts++
              yield* sql`UPDATE test_deadlock_probe SET n = n + 1 WHERE id = ${from}`
              yield* Deferred.succeed(locked, undefined)
              yield* Deferred.await(other)
              yield* sql`UPDATE test_deadlock_probe SET n = n + 1 WHERE id = ${to}`
            })
          )
        yield* Effect.all([crossing(1, 2, firstLocked, secondLocked), crossing(2, 1, secondLocked, firstLocked)], {
          concurrency: 2
        })
        expect(attempts).toBe(3)
        expect(yield* sql<{ id: number; n: number }>`SELECT id, n FROM test_deadlock_probe ORDER BY id`).toEqual([{ id: 1, n: 2 }, { id: 2, n: 2 }])
      }))
  })
})

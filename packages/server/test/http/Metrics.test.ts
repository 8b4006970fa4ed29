/**
 * `/metrics` through HTTP: an unknown route when metrics are off; 401 without or with a wrong token; with the token,
 * a scrape that a Prometheus text-format parser reads, whose request histogram counts exactly the requests sent, by
 * operation, method and status class, whose sign-in counters move on failed and successful sign-ins, and which
 * holds none of the secrets and personal values the test used; the management listener; start-up refusals naming
 * their variable; and every metric the shipped Grafana dashboard and Prometheus rules select present in a real
 * scrape, so they cannot drift from the server.
 */
import * as MachineId from "effect/cluster/MachineId"
import * as Snowflake from "effect/cluster/Snowflake"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import fc from "fast-check"
import * as Fs from "node:fs/promises"
import { createServer as createHttpServer } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Yaml from "yaml"
import { freePort } from "../../../../packages/testkit/src/FreePort.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as Wait from "../../../../packages/testkit/src/Wait.js"
import * as Metrics from "../../src/platform/Metrics.js"
import { makeNodeListener } from "../../src/Server.js"
import * as FakeAuditReceiver from "../support/AuditReceiver.js"
import * as TestDatabase from "../support/HttpDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import * as Prometheus from "../support/PrometheusText.js"

const token = `metrics-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`
const duration = Metrics.names.requestDuration
const signIns = Metrics.names.signInEvents

let off: TestServer.RunningServer
let on: TestServer.RunningServer
beforeAll(async () => {
  off = await TestServer.start()
  on = await TestServer.start({ metricsToken: token })
})
afterAll(async () => {
  await off?.close()
  await on?.close()
})

const scrapeOf = async (url: string, bearer: string | undefined = token) => {
  const response = await Http.request(url, "GET", "/metrics", bearer === undefined ? {} : { token: bearer })
  expect(response.status, response.text).toBe(200)
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
  return { text: response.text, families: await Prometheus.parse(response.text) }
}

const scrape = async (url = on.url) => (await scrapeOf(url)).families

describe("/metrics", () => {
  it("is an unknown route (404) when metrics are off", async () => {
    const response = await Http.request(off.url, "GET", "/metrics", { token })
    expect(response.status, response.text).toBe(404)
    expect(response.body).toMatchObject({ error: "not_found" })
  })

  it("answers 401, as the server answers any refused credential, without the token or with a wrong one", async () => {
    const none = await Http.request(on.url, "GET", "/metrics")
    expect(none.status).toBe(401)
    expect(none.body).toMatchObject({ error: "unauthorized", reason: "credentials_missing" })
    expect(none.headers.get("www-authenticate")).toBe(`Bearer realm="orgplane"`)

    const wrong = await Http.request(on.url, "GET", "/metrics", { token: `${token}x` })
    expect(wrong.status).toBe(401)
    expect(wrong.body).toMatchObject({ error: "unauthorized", reason: "metrics_token_refused", message: expect.stringContaining("metrics token") })
    expect(wrong.headers.get("www-authenticate")).toBe(`Bearer realm="orgplane", error="invalid_token"`)

    const otherScheme = await Http.request(on.url, "GET", "/metrics", { headers: { authorization: `Basic ${Buffer.from(`x:${token}`).toString("base64")}` } })
    expect(otherScheme.status).toBe(401)
    // Neither refusal says anything of the token.
    expect(none.text + wrong.text).not.toContain(token)
  })

  it("counts exactly the requests sent, by operation, method and status class; an unknown path under one label", async () => {
    const before = await scrape()
    const health = { operation: "system.health", method: "GET", status_class: "2xx" }
    const unknown = { operation: "unknown", method: "GET", status_class: "4xx" }
    const refused = { operation: "users.signIn", method: "POST", status_class: "4xx" }
    for (let i = 0; i < 7; i++) expect((await Http.request(on.url, "GET", "/health")).status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await Http.request(on.url, "GET", `/no/such/path/${i}`)).status).toBe(404)
    expect((await Http.request(on.url, "POST", "/v1/auth/sign-in", { body: {} })).status).toBe(400)
    const scimUsers = "/scim/v2/scim_01h0000000000000000000000/Users"
    const directory = await Http.request(on.url, "GET", scimUsers)
    const after = await scrape()

    expect(Prometheus.valueOf(after, duration, health) - Prometheus.valueOf(before, duration, health)).toBe(7)
    expect(Prometheus.valueOf(after, duration, unknown) - Prometheus.valueOf(before, duration, unknown)).toBe(3)
    expect(Prometheus.valueOf(after, duration, refused) - Prometheus.valueOf(before, duration, refused)).toBe(1)
    // A SCIM request, by operation and exact status.
    const scim = { operation: "scimUsers.list", status: String(directory.status) }
    expect(directory.status).toBe(401)
    expect(Prometheus.valueOf(after, Metrics.names.scimRequests, scim) - Prometheus.valueOf(before, Metrics.names.scimRequests, scim)).toBe(1)
    // The raw paths are nowhere.
    expect(after[duration]?.type).toBe("histogram")
    expect(JSON.stringify(after[duration])).not.toContain("/no/such/path")
    expect(JSON.stringify(after)).not.toContain("scim_01h0000000000000000000000")
    // The SLO buckets, 5 ms to 10 s, then +Inf: the total.
    const buckets = Prometheus.bucketsOf(after, duration, health)!
    const bounds = Object.keys(buckets).map((bound) => bound === "+Inf" ? Number.POSITIVE_INFINITY : Number(bound))
    expect(bounds.sort((a, b) => a - b)).toEqual([...Metrics.durationBuckets, Number.POSITIVE_INFINITY])
    expect(buckets["+Inf"]).toBe(Prometheus.valueOf(after, duration, health))
    // Requests in flight: this scrape's own.
    expect(Prometheus.valueOf(after, Metrics.names.activeRequests, {})).toBe(1)
  })

  it("counts sign-ins by method and outcome: a wrong password, a right one, an API key and an unknown key", async () => {
    const owner = await Http.owner(on.url)
    const { key } = Http.expectStatus<{ key: string }>(
      "create API key",
      await Http.request(on.url, "POST", "/v1/api-keys", { token: owner.token, body: { name: "scraper test" } }),
      201
    )
    const before = await scrape()
    expect((await Http.request(on.url, "POST", "/v1/auth/sign-in", { body: { email: owner.email, password: `${owner.password}!` } })).status).toBe(401)
    expect((await Http.request(on.url, "POST", "/v1/auth/sign-in", { body: { email: owner.email, password: owner.password } })).status).toBe(200)
    expect((await Http.request(on.url, "GET", "/v1/me", { apiKey: key })).status).toBe(200)
    expect((await Http.request(on.url, "GET", "/v1/me", { apiKey: `${key.slice(0, -4)}abcd` })).status).toBe(401)
    const after = await scrape()
    const moved = (labels: Record<string, string>) => Prometheus.valueOf(after, signIns, labels) - Prometheus.valueOf(before, signIns, labels)
    expect(moved({ method: "password", outcome: "invalid_credentials" })).toBe(1)
    expect(moved({ method: "password", outcome: "success" })).toBe(1)
    expect(moved({ method: "api_key", outcome: "success" })).toBe(1)
    expect(moved({ method: "api_key", outcome: "api_key_unknown" })).toBe(1)
    expect(after[signIns]?.type).toBe("counter")
  })

  it("holds no password, token, API key, email, name or person's id used against it", async () => {
    const localPart = fc.stringMatching(/^[a-z][a-z0-9]{7,14}$/)
    const password = fc.stringMatching(/^[A-Za-z0-9!#%&*+=?@^_~-]{12,32}$/)
    await fc.assert(
      fc.asyncProperty(localPart, password, fc.stringMatching(/^[A-Z][a-z]{4,12}$/), async (local, secret, name) => {
        const email = `${local}@metrics-test.example`
        const signedUp = Http.expectStatus<{ user: { id: string }; session: { token: string } }>(
          "sign-up",
          await Http.request(on.url, "POST", "/v1/auth/sign-up", { body: { email, password: secret, name } }),
          201
        )
        await Http.request(on.url, "POST", "/v1/auth/sign-in", { body: { email, password: `${secret}x` } })
        const signedIn = Http.expectStatus<{ session: { token: string } }>(
          "sign-in",
          await Http.request(on.url, "POST", "/v1/auth/sign-in", { body: { email, password: secret } }),
          200
        )
        await Http.request(on.url, "GET", "/v1/me", { token: signedIn.session.token })
        await Http.request(on.url, "GET", `/v1/me?email=${encodeURIComponent(email)}&token=${signedIn.session.token}`, { apiKey: `opk_${secret}` })
        const { text } = await scrapeOf(on.url)
        for (const value of [email, local, secret, name, signedUp.user.id, signedUp.session.token, signedIn.session.token, token]) {
          expect(text, `the scrape shows ${value}`).not.toContain(value)
        }
      }),
      { numRuns: 4 }
    )
  })

  it("reports the database and, once the durable engine runs, its jobs and the audit streams", async () => {
    await Wait.until(async () => (await Http.request(on.url, "GET", "/health/started")).status === 200, "the durable engine to start")
    // Scrapes before the engine made its tables may have failed to read them (counted); from now on none does.
    const earlier = await scrape()
    const families = await scrape()
    expect(Prometheus.valueOf(families, Metrics.names.statementDuration, { outcome: "success" })).toBeGreaterThan(0)
    expect(Prometheus.valueOf(families, Metrics.names.connectionWait, {})).toBeGreaterThan(0)
    expect(Prometheus.valueOf(families, Metrics.names.connectionsMax, {})).toBeGreaterThanOrEqual(1)
    expect(Prometheus.sample(families, Metrics.names.connectionsInUse, {})).toBeDefined()
    expect(Prometheus.sample(families, Metrics.names.durablePending, {})).toBeDefined()
    expect(Prometheus.sample(families, Metrics.names.durableOldestPendingAge, {})).toBeDefined()
    expect(Prometheus.valueOf(families, Metrics.names.durableFailed, {})).toBe(0)
    expect(Prometheus.valueOf(families, Metrics.names.auditStreams, { status: "active", failing: "false" })).toBe(0)
    expect(Prometheus.valueOf(families, Metrics.names.auditStreamLag, {})).toBe(0)
    // Both scrape-time reads succeeded.
    for (const source of ["durable", "audit_streams"]) {
      const errors = (scrape: Prometheus.Scrape) => Prometheus.valueOf(scrape, Metrics.names.collectErrors, { source })
      expect(errors(families) - errors(earlier), source).toBe(0)
    }
  })
})

describe("the metrics listener (ORGPLANE_METRICS_PORT)", () => {
  it("serves /metrics on its own port, not on the server's; with the token when one is set", async () => {
    const port = await freePort()
    const server = await TestServer.start({ metricsPort: port })
    try {
      const management = `http://127.0.0.1:${port}`
      expect((await Http.request(server.url, "GET", "/health")).status).toBe(200)
      const { families } = await scrapeOf(management, undefined)
      // The server's requests are measured; the listener's own scrapes are not among them.
      expect(Prometheus.valueOf(families, duration, { operation: "system.health", method: "GET", status_class: "2xx" })).toBe(1)
      expect((await Http.request(server.url, "GET", "/metrics")).status).toBe(404)
      expect((await Http.request(management, "GET", "/v1/me")).status).toBe(404)
    } finally {
      await server.close()
    }

    const guardedPort = await freePort()
    const guarded = await TestServer.start({ metricsPort: guardedPort, metricsToken: token })
    try {
      const management = `http://127.0.0.1:${guardedPort}`
      expect((await Http.request(management, "GET", "/metrics")).status).toBe(401)
      await scrapeOf(management, token)
    } finally {
      await guarded.close()
    }
  })
})

describe("durable jobs in /metrics", () => {
  it("count the due, unprocessed messages, the oldest one's age and the failures of the last hour, from the tables", async () => {
    const server = await TestServer.startSharingDatabase({ metricsToken: token })
    try {
      await Wait.until(async () => (await Http.request(server.url, "GET", "/health/started")).status === 200, "the durable engine to start")
      const before = await scrape(server.url)
      const snowflake = (at: number, sequence: number) => Snowflake.make({ timestamp: at, machineId: MachineId.make(0), sequence }).toString()
      const tenMinutesAgo = Date.now() - 600_000
      // A shard no runner owns: the engine never takes these, so they stay as written.
      await server.sql((sql) =>
        sql`INSERT INTO orgplane_cluster_messages (id, message_id, shard_id, entity_type, entity_id, kind, tag, payload, headers, processed, request_id)
            VALUES (${snowflake(tenMinutesAgo, 1)}::bigint, 'metrics-test-1', 'metrics-test:1', 'MetricsTest', 'one', 0, 'Run', '{}', '{}', false, ${snowflake(tenMinutesAgo, 1)}::bigint),
                   (${snowflake(Date.now(), 2)}::bigint, 'metrics-test-2', 'metrics-test:1', 'MetricsTest', 'two', 0, 'Run', '{}', '{}', false, ${snowflake(Date.now(), 2)}::bigint),
                   (${snowflake(Date.now(), 3)}::bigint, 'metrics-test-3', 'metrics-test:1', 'MetricsTest', 'three', 0, 'Run', '{}', '{}', true, ${snowflake(Date.now(), 3)}::bigint)`
      )
      await server.sql((sql) =>
        sql`INSERT INTO orgplane_cluster_replies (id, kind, request_id, payload)
            VALUES (${snowflake(Date.now(), 4)}::bigint, 0, ${snowflake(Date.now(), 3)}::bigint, ${JSON.stringify({ _tag: "Failure", cause: [{ _tag: "Fail", error: "boom" }] })}),
                   (${snowflake(Date.now(), 5)}::bigint, 0, ${snowflake(Date.now(), 2)}::bigint, ${JSON.stringify({ _tag: "Success", value: null })}),
                   (${snowflake(Date.now() - 7_200_000, 6)}::bigint, 0, ${snowflake(tenMinutesAgo, 1)}::bigint, ${JSON.stringify({ _tag: "Failure", cause: [] })})`
      )
      const after = await scrape(server.url)
      expect(Prometheus.valueOf(after, Metrics.names.durablePending, {}) - Prometheus.valueOf(before, Metrics.names.durablePending, {})).toBe(2)
      const age = Prometheus.valueOf(after, Metrics.names.durableOldestPendingAge, {})
      expect(age).toBeGreaterThanOrEqual(600)
      expect(age).toBeLessThan(700)
      // The failure of two hours ago is not counted, nor the success.
      expect(Prometheus.valueOf(after, Metrics.names.durableFailed, {}) - Prometheus.valueOf(before, Metrics.names.durableFailed, {})).toBe(1)
    } finally {
      await server.close()
    }
  })
})

describe("audit streams in /metrics", () => {
  it("report a failing stream and its growing lag, and a lag of 0 once it has delivered", async () => {
    const receiver = await FakeAuditReceiver.start()
    const server = await TestServer.start({
      metricsToken: token,
      outboundAllowPrivate: true,
      auditStreamPollInterval: "250 millis",
      auditStreamSettle: "1 second",
      auditStreamBackoffBase: "500 millis",
      auditStreamBackoffCap: "1 second"
    })
    try {
      const org = await Http.staffed(server.url, "Streamed")
      const nowhere = `http://127.0.0.1:${await freePort()}/ingest`
      const created = Http.expectStatus<{ stream: { id: string }; secret: string }>(
        "stream",
        await Http.request(server.url, "POST", "/v1/audit/streams", { token: org.owner.token, body: { url: nowhere } }),
        201
      )
      const started = Date.now()
      await Http.request(server.url, "POST", "/v1/teams", { token: org.owner.token, body: { name: "Audited" } })
      const failing = { status: "active", failing: "true" }
      let scraped = await scrape(server.url)
      await Wait.until(async () => {
        scraped = await scrape(server.url)
        return Prometheus.valueOf(scraped, Metrics.names.auditStreams, failing) === 1 && Prometheus.valueOf(scraped, Metrics.names.auditStreamLag, {}) >= 2
      }, "the stream to fail and lag 2 seconds")
      const lag = Prometheus.valueOf(scraped, Metrics.names.auditStreamLag, {})
      expect(lag).toBeLessThanOrEqual((Date.now() - started) / 1000 + 5)

      // Pointed at a receiver that answers, it delivers and catches up.
      receiver.setSecrets(created.secret)
      const moved = await Http.request(server.url, "PATCH", `/v1/audit/streams/${created.stream.id}`, { token: org.owner.token, body: { url: `${receiver.url}/ingest` } })
      expect(moved.status, moved.text).toBe(200)
      await Wait.until(async () => {
        scraped = await scrape(server.url)
        return Prometheus.valueOf(scraped, Metrics.names.auditStreamLag, {}) === 0
      }, "the stream to catch up")
      expect(Prometheus.valueOf(scraped, Metrics.names.auditStreams, { status: "active", failing: "false" })).toBe(1)
    } finally {
      await server.close()
      await receiver.close()
    }
  })
})

describe("an embedding host (makeNodeListener)", () => {
  it("serves /metrics under its mount with the token, measuring the requests it hands over", async () => {
    const orgplane = await makeNodeListener({ ...TestServer.testSettings, database: TestDatabase.layer, metricsToken: token })
    const host = createHttpServer((request, response) => {
      request.url = (request.url ?? "/").slice("/orgplane".length) || "/"
      orgplane.listener(request, response)
    })
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve))
    try {
      const address = host.address()
      const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
      expect((await Http.request(url, "GET", "/orgplane/metrics")).status).toBe(401)
      for (let i = 0; i < 2; i++) expect((await Http.request(url, "GET", "/orgplane/health")).status).toBe(200)
      const scraped = await Http.request(url, "GET", "/orgplane/metrics", { token })
      expect(scraped.status, scraped.text).toBe(200)
      const families = await Prometheus.parse(scraped.text)
      expect(Prometheus.valueOf(families, duration, { operation: "system.health", method: "GET", status_class: "2xx" })).toBe(2)
    } finally {
      host.closeAllConnections()
      await new Promise<void>((resolve) => host.close(() => resolve()))
      await orgplane.dispose()
    }
  })
})

describe("the metrics settings", () => {
  const read = (env: Record<string, string>) =>
    Effect.runPromise(
      Effect.result(Metrics.settings()).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))
    )

  it("are off by default, and refuse a bad value naming its variable", async () => {
    const defaults = await read({})
    expect(Result.isSuccess(defaults) && Metrics.placement(defaults.success)).toBe("off")
    const onPort = await read({ ORGPLANE_METRICS_PORT: "9300" })
    expect(Result.isSuccess(onPort) && Metrics.placement(onPort.success)).toBe("management")
    const refusals: Array<readonly [Record<string, string>, string]> = [
      [{ ORGPLANE_METRICS_TOKEN: "short" }, "ORGPLANE_METRICS_TOKEN"],
      [{ ORGPLANE_METRICS_PORT: "metrics" }, "ORGPLANE_METRICS_PORT"],
      [{ ORGPLANE_METRICS_PORT: "70000" }, "ORGPLANE_METRICS_PORT"],
      [{ ORGPLANE_METRICS_PORT: "9300", ORGPLANE_METRICS_HOST: "0.0.0.0" }, "ORGPLANE_METRICS_HOST"],
      [{ ORGPLANE_METRICS_ORGANIZATION_LABELS: "perhaps" }, "ORGPLANE_METRICS_ORGANIZATION_LABELS"]
    ]
    for (const [env, variable] of refusals) {
      const result = await read(env)
      expect(Result.isFailure(result) ? result.failure.message : "accepted", JSON.stringify(env)).toContain(variable)
    }
    // A public listener with a token is fine.
    const publicWithToken = await read({ ORGPLANE_METRICS_PORT: "9300", ORGPLANE_METRICS_HOST: "0.0.0.0", ORGPLANE_METRICS_TOKEN: token })
    expect(Result.isSuccess(publicWithToken)).toBe(true)
  })

  it("stop the server from starting when refused", async () => {
    await expect(TestServer.start({ metricsToken: "too-short" })).rejects.toThrow(/ORGPLANE_METRICS_TOKEN/)
  })
})

describe("the shipped dashboard and rules", () => {
  const root = new URL("../../../../", import.meta.url)

  /** Every `expr` of a JSON or YAML document, wherever it is. */
  const expressions = (node: unknown, found: Array<string> = []): Array<string> => {
    if (Array.isArray(node)) for (const item of node) expressions(item, found)
    else if (typeof node === "object" && node !== null) {
      for (const [key, value] of Object.entries(node)) {
        if (key === "expr" && typeof value === "string") found.push(value)
        else expressions(value, found)
      }
    }
    return found
  }

  it("select only metrics a real scrape has (or the rules record), in PromQL that parses", async () => {
    // One SCIM request, so the SCIM counter has a series (it has none until a directory calls).
    await Http.request(on.url, "GET", "/scim/v2/scim_01h0000000000000000000000/Users")
    const { families } = await scrapeOf(on.url)
    const scraped = Prometheus.sampleNames(families)

    const rules = Yaml.parse(await Fs.readFile(new URL("docs/prometheus/orgplane-rules.yml", root), "utf8"))
    const dashboard: unknown = JSON.parse(await Fs.readFile(new URL("docs/grafana/orgplane.json", root), "utf8"))
    const recorded = new Set<string>()
    const groups: unknown = rules?.groups
    expect(Array.isArray(groups) && groups.length).toBeGreaterThan(0)
    for (const group of Array.isArray(groups) ? groups : []) {
      for (const rule of group.rules) {
        expect(typeof rule.expr, JSON.stringify(rule)).toBe("string")
        expect(typeof rule.record === "string" || typeof rule.alert === "string", JSON.stringify(rule)).toBe(true)
        if (typeof rule.record === "string") recorded.add(rule.record)
      }
    }

    const all = [...expressions(rules), ...expressions(dashboard)]
    expect(all.length).toBeGreaterThan(30)
    const unknown: Array<string> = []
    for (const expression of all) {
      const { error, names } = Prometheus.selectedNames(expression)
      expect(error).toBeUndefined()
      expect(names.length, expression).toBeGreaterThan(0)
      for (const name of names) if (!scraped.has(name) && !recorded.has(name)) unknown.push(`${name} (in ${expression.trim()})`)
    }
    expect(unknown).toEqual([])
    // Every family the server exports is one the dashboard or the rules show.
    const used = new Set(all.flatMap((expression) => Prometheus.selectedNames(expression).names))
    const unshown = Object.keys(families).filter((name) =>
      !used.has(name) && !used.has(`${name}_count`) && !used.has(`${name}_bucket`))
    expect(unshown).toEqual([])
  })
})

/**
 * Traces through HTTP, into a loopback OTLP receiver (testkit's OtlpReceiver) as a collector would get them: a
 * request's span named by its operation (never its URL) with its SQL statements and outbound calls under it, the
 * organization it acted in, a client's `traceparent` ignored unless trusted, the sampler's word, an unknown sampler
 * refused at start, the JSON log line carrying the exported trace's id, and no secret (token, password, API key,
 * an email bound to a statement) anywhere in what is exported.
 */
import { apiOf } from "@orgplane/schema"
import * as Connectors from "../../../../packages/testkit/src/Connectors.js"
import * as FakeGitHub from "../../../../packages/testkit/src/FakeGitHub.js"
import * as FakeLlmProvider from "../../../../packages/testkit/src/FakeLlmProvider.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as OtlpReceiver from "../../../../packages/testkit/src/OtlpReceiver.js"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import * as Server from "../../src/Server.js"
import * as HttpErrors from "../../src/platform/HttpErrors.js"
import { jsonLogger } from "../../src/platform/RequestLog.js"
import * as Tracing from "../../src/platform/Tracing.js"
import * as TestServer from "../support/HttpServer.js"
import * as TestDatabase from "../support/TestDatabase.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let receiver: OtlpReceiver.OtlpReceiver
let provider: FakeLlmProvider.FakeLlmProvider
let github: FakeGitHub.FakeGitHub
const servers: Array<{ readonly url: string; readonly close: () => Promise<void> }> = []

/** Every JSON line the default server logs. */
const lines: Array<string> = []
const logger = Logger.make((options) => {
  lines.push(jsonLogger.log(options))
})

/**
 * A standalone server (`Server.layer`) whose environment has these variables and the receiver as its collector;
 * `instance` tells its spans from the other servers' (`service.instance.id`). With `logger`, its entries go there.
 */
const startWith = async (instance: string, environment: Record<string, string>, logger?: Logger.Logger<unknown, unknown>) => {
  const env: Record<string, string> = {
    ...Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined)),
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: "50",
    OTEL_RESOURCE_ATTRIBUTES: `service.instance.id=${instance}`,
    ...environment
  }
  const settings = {
    ...TestServer.testSettings,
    outboundAllowPrivate: true,
    codehostApiUrl: github.url,
    database: Layer.unwrap(TestDatabase.layer({ migrated: true }))
  }
  const served = Server.layer(logger === undefined ? settings : { ...settings, logLevel: "debug" })
  const runtime = ManagedRuntime.make(
    (logger === undefined ? served : Layer.provide(served, Logger.layer([logger]))).pipe(
      Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))
    )
  )
  const address = await runtime.runPromise(Effect.map(Effect.service(HttpServer.HttpServer), (server) => server.address)).catch(async (error: unknown) => {
    await runtime.dispose()
    throw error
  })
  const server = { url: HttpServer.formatAddress(address).replace(/\/$/, ""), close: () => runtime.dispose() }
  servers.push(server)
  return server
}

let server: { readonly url: string }

beforeAll(async () => {
  receiver = await OtlpReceiver.start()
  provider = await FakeLlmProvider.start({ style: "openai", models: ["gpt-4o"] })
  github = await FakeGitHub.start()
  server = await startWith("default", {}, logger)
})
afterAll(async () => {
  for (const running of servers) await running.close()
  await provider?.close()
  await github?.close()
  await receiver?.close()
})

const { get, post } = Http.verbs(() => server.url)

const of = (instance: string) => (spans: ReadonlyArray<OtlpReceiver.ReceivedSpan>) =>
  spans.filter((span) => span.resource["service.instance.id"] === instance)

/** The server span of the request answered with this `x-request-id`'s log line… found by its route and a marker. */
const requestSpan = async (instance: string, what: string, matches: (span: OtlpReceiver.ReceivedSpan) => boolean) => {
  const spans = await receiver.waitFor(what, (all) => of(instance)(all).some((span) => span.kind === "server" && matches(span)))
  return of(instance)(spans).find((span) => span.kind === "server" && matches(span))!
}

/** The spans of a trace once its root's descendants stopped arriving (they end before it, or just after). */
const traceOf = async (root: OtlpReceiver.ReceivedSpan, needed: (spans: ReadonlyArray<OtlpReceiver.ReceivedSpan>) => boolean) => {
  const spans = await receiver.waitFor(`the spans of ${root.name}`, (all) => needed(all.filter((span) => span.traceId === root.traceId)))
  return spans.filter((span) => span.traceId === root.traceId)
}

/** Whether `span` descends from `ancestor` in `spans`. */
const descends = (spans: ReadonlyArray<OtlpReceiver.ReceivedSpan>, span: OtlpReceiver.ReceivedSpan, ancestor: OtlpReceiver.ReceivedSpan) => {
  const byId = new Map(spans.map((each) => [each.spanId, each]))
  let current: OtlpReceiver.ReceivedSpan | undefined = span
  for (let hops = 0; current !== undefined && hops < 100; hops++) {
    if (current.parentSpanId === ancestor.spanId) return true
    current = current.parentSpanId === undefined ? undefined : byId.get(current.parentSpanId)
  }
  return false
}

const traceparent = (traceId: string, spanId: string) => `00-${traceId}-${spanId}-01`

describe("traces", () => {
  it("names a request's span by its operation, with its method, route, status and organization, its SQL statements under it", async () => {
    const owner = await Http.owner(server.url, "Traced")
    const teamName = `team-${Math.random().toString(36).slice(2, 10)}`
    Http.expectStatus("team", await post("/v1/teams", { token: owner.token, body: { name: teamName } }), 201)
    const listed = await get(`/v1/teams?limit=5`, { token: owner.token })
    expect(listed.status).toBe(200)
    const span = await requestSpan("default", "the list's span", (each) => each.attributes["http.route"] === "/v1/teams" && each.attributes["http.request.method"] === "GET")
    expect(span.name).toBe("teams.list")
    expect(span.parentSpanId).toBeUndefined()
    expect(span.attributes).toMatchObject({
      "http.request.method": "GET",
      "http.route": "/v1/teams",
      "http.response.status_code": 200,
      "orgplane.organization_id": owner.organization.id
    })
    expect(span.status.code).not.toBe("error")
    expect(span.resource).toMatchObject({ "service.name": "orgplane" })
    const trace = await traceOf(span, (spans) => spans.some((each) => typeof each.attributes["db.query.text"] === "string"))
    const statements = trace.filter((each) => typeof each.attributes["db.query.text"] === "string")
    expect(statements.length).toBeGreaterThan(0)
    // Every span of the trace hangs under the request's: the statements (inside the services' spans) included.
    for (const each of trace.filter((other) => other !== span)) expect([each.name, descends(trace, each, span)]).toEqual([each.name, true])
    expect(statements.some((each) => String(each.attributes["db.query.text"]).includes("organization_id"))).toBe(true)
    // The team's name was a parameter of the insert: the statement's text has a placeholder, never the value.
    expect(JSON.stringify(receiver.spans)).not.toContain(teamName)
  })

  it("names an unknown route's span with one fixed name, whatever the URL", async () => {
    const marker = `nowhere-${Math.random().toString(36).slice(2, 10)}`
    expect((await get(`/v1/${marker}/x?token=${marker}`)).status).toBe(404)
    const span = await requestSpan("default", "the unknown route's span", (each) => each.attributes["http.response.status_code"] === 404 && each.name === "unknown route")
    expect(span.attributes["http.route"]).toBeUndefined()
    expect(JSON.stringify(receiver.spans)).not.toContain(marker)
  })

  it("ignores a client's traceparent by default: the request starts its own trace", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
    const answered = await Http.request(server.url, "GET", "/health/live", { headers: { traceparent: traceparent(traceId, "00f067aa0ba902b7") } })
    expect(answered.status).toBe(200)
    const span = await requestSpan("default", "the probe's span", (each) => each.attributes["http.route"] === "/health/live")
    expect(span.traceId).not.toBe(traceId)
    expect(span.parentSpanId).toBeUndefined()
    expect(receiver.spans.some((each) => each.traceId === traceId)).toBe(false)
  })

  it("adopts a client's traceparent when ORGPLANE_TRACE_TRUST_REMOTE is set", async () => {
    const trusting = await startWith("trusting", { ORGPLANE_TRACE_TRUST_REMOTE: "true" })
    const traceId = "0af7651916cd43dd8448eb211c80319c"
    const answered = await Http.request(trusting.url, "GET", "/health/live", { headers: { traceparent: traceparent(traceId, "b7ad6b7169203331") } })
    expect(answered.status).toBe(200)
    const span = await requestSpan("trusting", "the trusted probe's span", (each) => each.attributes["http.route"] === "/health/live")
    expect([span.traceId, span.parentSpanId]).toEqual([traceId, "b7ad6b7169203331"])
  })

  it("exports nothing with OTEL_TRACES_SAMPLER=always_off", async () => {
    const silent = await startWith("silent", { OTEL_TRACES_SAMPLER: "always_off" })
    const owner = await Http.owner(silent.url, "Unsampled")
    expect((await Http.request(silent.url, "GET", "/v1/teams", { token: owner.token })).status).toBe(200)
    // Closing the server flushes its exporter: whatever it would have sent is sent by now.
    await silent.close()
    servers.splice(servers.indexOf(silent), 1)
    expect(of("silent")(receiver.spans)).toEqual([])
  })

  it("refuses to start with a sampler it does not know, naming the variable", async () => {
    await expect(startWith("refused", { OTEL_TRACES_SAMPLER: "sometimes" })).rejects.toThrow(/OTEL_TRACES_SAMPLER/)
  })

  it("puts an outbound call under the request that made it, the call carrying the trace as its traceparent", async () => {
    const org = await Http.staffed(server.url, "Outbound")
    const created = Http.expectStatus<{ item: { id: string } }>(
      "provider",
      await post("/v1/llm-providers", {
        token: org.owner.token,
        body: { name: "Fake", catalogProviderId: "openai", baseUrl: provider.baseUrl, models: [{ id: "gpt-4o" }], apiKey: provider.apiKey }
      }),
      201
    ).item
    const tested = await post(`/v1/llm-providers/${created.id}/test`, { token: org.owner.token })
    expect(tested.status).toBe(200)
    const span = await requestSpan("default", "the test action's span", (each) => each.attributes["http.route"] === "/v1/llm-providers/:llmProviderId/test")
    const trace = await traceOf(span, (spans) => spans.some((each) => each.name === "Outbound GET"))
    const call = trace.find((each) => each.name === "Outbound GET")!
    expect(call.kind).toBe("client")
    expect(descends(trace, call, span)).toBe(true)
    expect(call.attributes).toMatchObject({ "http.request.method": "GET", "server.address": "127.0.0.1", "http.response.status_code": 200 })
    expect(Object.keys(call.attributes).filter((key) => key.startsWith("url.") && key !== "url.scheme")).toEqual([])
    const sent = provider.requests.filter((request) => request.path.startsWith("/v1/models")).at(-1)!
    expect(sent.headers["traceparent"]).toBe(traceparent(span.traceId, call.spanId))
  })

  it("puts a durable job's workflow and activities in the trace of the request that started it", async () => {
    const durable = await startWith("durable", {})
    const followed = await Connectors.followRepository({ url: durable.url, github, files: { "skills/traced/SKILL.md": "---\nname: traced\ndescription: Traced\n---\nbody\n" } })
    try {
      const sync = await Http.request(durable.url, "POST", `/v1/connector-instances/${followed.instance.id}/sync`, { token: followed.token })
      const events = Http.expectStatus<{ items: Array<{ id: string }> }>("sync", sync, 202).items
      for (const event of events) expect((await Connectors.settled(durable.url, followed.token, event.id)).status).toBe("completed")
      // The workflow's own span ends after its activities (the engine holds its run a while): stopping flushes it.
      await durable.close()
      servers.splice(servers.indexOf(durable), 1)
      const span = await requestSpan("durable", "the sync request's span", (each) => each.attributes["http.route"] === "/v1/connector-instances/:connectorInstanceId/sync")
      const trace = receiver.spans.filter((each) => each.traceId === span.traceId)
      const activities = trace.filter((each) => each.name.startsWith("ConnectorSync/"))
      expect(activities.map((each) => each.name)).toContain("ConnectorSync/finish")
      for (const activity of activities) expect([activity.name, descends(trace, activity, span)]).toEqual([activity.name, true])
      // The calls to the code host, inside the activities, without its token.
      expect(trace.some((each) => each.name === "Outbound GET" && activities.some((activity) => descends(trace, each, activity)))).toBe(true)
      expect(JSON.stringify(receiver.spans)).not.toContain(followed.githubToken)
    } finally {
      await followed.repo.remove()
    }
  })

  it("says at start where traces are exported and where /metrics is served", async () => {
    const messages = (logged: ReadonlyArray<string>) => logged.map((line) => String(JSON.parse(line).message))
    const listening = messages(lines).findIndex((message) => message.startsWith("Listening on "))
    expect(messages(lines).slice(listening, listening + 2)).toEqual([
      `Listening on ${server.url} (API reference: ${server.url}/docs)`,
      `Traces exported over OTLP to ${receiver.url}/v1/traces (http/json)`
    ])
    const own: Array<string> = []
    const metered = await startWith("metered", { ORGPLANE_METRICS_TOKEN: "metrics-token-0123456789", OTEL_TRACES_EXPORTER: "none" }, Logger.make((options) => {
      own.push(jsonLogger.log(options))
    }))
    const announced = messages(own)
    expect(announced).toContain(`Metrics on ${metered.url}/metrics, behind ORGPLANE_METRICS_TOKEN`)
    expect(announced.filter((message) => message.startsWith("Traces exported"))).toEqual([])
  })

  it("writes the request's trace and span ids in its JSON log line", async () => {
    const marker = Math.random().toString(36).slice(2, 10)
    const answered = await Http.request(server.url, "GET", "/health/live", { headers: { "x-request-id": `traced-${marker}` } })
    expect(answered.status).toBe(200)
    const line = JSON.parse(lines.find((each) => each.includes(`traced-${marker}`))!) as { trace_id?: string; span_id?: string; message: string }
    expect(line.message).toBe("request")
    const span = await requestSpan("default", "the logged probe's span", (each) => each.spanId === line.span_id)
    expect([line.trace_id, span.attributes["http.route"]]).toEqual([span.traceId, "/health/live"])
  })

  it("marks the span of a 5xx answer as an error", async () => {
    class Failing extends HttpApiGroup.make("failing").add(HttpApiEndpoint.get("fail", "/fail")) {}
    const FailingApi = apiOf(Failing)
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_RESOURCE_ATTRIBUTES: "service.instance.id=failing" }
    const web = HttpRouter.toWebHandler(
      HttpApiBuilder.layer(FailingApi).pipe(
        Layer.provide(HttpApiBuilder.group(FailingApi, "failing", (handlers) => handlers.handle("fail", () => Effect.die(new Error("the handler broke"))))),
        Layer.provide(HttpErrors.layerFor(FailingApi)),
        Layer.provide(HttpServer.layerServices),
        // Merged: the edge (the router's global middleware) runs in the handler's context.
        Layer.provideMerge(Tracing.layer(false).pipe(Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))))),
        Layer.provideMerge(Logger.layer([]))
      ),
      { disableLogger: true }
    )
    try {
      expect((await web.handler(new Request("http://localhost/fail"))).status).toBe(500)
      const span = await requestSpan("failing", "the failing request's span", (each) => each.name === "failing.fail")
      expect([span.attributes["http.response.status_code"], span.status.code]).toEqual([500, "error"])
    } finally {
      await web.dispose()
    }
  })

  it("never exports a secret: a token, a password, an API key, an email bound to a statement", async () => {
    const user = await Http.signUp(server.url, "Secretive")
    Http.expectStatus("sign-in", await post("/v1/auth/sign-in", { body: { email: user.email, password: user.password } }), 200)
    const wrong = "not-the-password-5b1e"
    expect((await post("/v1/auth/sign-in", { body: { email: user.email, password: wrong } })).status).toBe(401)
    const organization = Http.expectStatus<{ organization: { id: string } }>("organization", await post("/v1/organizations", { token: user.token, body: { name: "Secrets" } }), 201)
    const key = Http.expectStatus<{ key: string }>("API key", await post("/v1/api-keys", { token: user.token, body: { name: "ci" } }), 201).key
    expect((await get("/v1/me", { apiKey: key })).status).toBe(200)
    expect((await get("/v1/me", { token: `${user.token}x` })).status).toBe(401)
    await requestSpan("default", "the API key's request", (each) =>
      each.attributes["http.route"] === "/v1/me" && each.attributes["orgplane.organization_id"] === organization.organization.id)
    await requestSpan("default", "the refused token's request", (each) => each.attributes["http.route"] === "/v1/me" && each.attributes["http.response.status_code"] === 401)
    const exported = receiver.requests.map((request) => request.body).join("\n")
    for (const secret of [user.token, user.password, wrong, key, user.email, provider.apiKey]) expect(exported).not.toContain(secret)
  })
})

/** The per-request log line, on a real server and in each way of running it, and the logger's formats. */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { InvalidRequestResponse } from "@orgplane/schema"
import { layer as serverLayer, loggerLayer, makeWebHandler, observabilityLayer } from "@orgplane/server"
import { Http, TestDatabase, TestServer } from "@orgplane/testkit"
import { Cause, Effect, FiberRef, HashMap, HashSet, Layer, Logger, LogLevel, ManagedRuntime, Redacted, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import * as HttpErrors from "../src/platform/HttpErrors.js"
import { formatLogger } from "../src/platform/RequestLog.js"

interface Entry {
  readonly level: string
  readonly message: unknown
  readonly annotations: Record<string, unknown>
}

const capture = () => {
  const entries: Array<Entry> = []
  const logger = Logger.make(({ annotations, logLevel, message }) => {
    entries.push({
      level: logLevel.label,
      message: Array.isArray(message) && message.length === 1 ? message[0] : message,
      annotations: Object.fromEntries(HashMap.toEntries(annotations))
    })
  })
  return { entries, logger }
}

/** Every entry written while handling the request with this id. */
const linesOf = (entries: ReadonlyArray<Entry>, requestId: string) => entries.filter((entry) => entry.annotations.requestId === requestId)

let requestCounter = 0
const newRequestId = () => `test-${process.pid}-${++requestCounter}`

describe("per-request log line", () => {
  const { entries, logger } = capture()
  let server: TestServer.RunningServer
  let owner: Awaited<ReturnType<typeof Http.owner>>
  beforeAll(async () => {
    server = await TestServer.start({ logger })
    owner = await Http.owner(server.url)
  })
  afterAll(() => server.close())

  it("one line with method, route template, status, duration and the request id", async () => {
    const created = await Http.request(server.url, "POST", "/v1/teams", { token: owner.token, body: { name: "Logged" } })
    const requestId = newRequestId()
    const response = await Http.request(server.url, "GET", `/v1/teams/${created.body.team.id}`, {
      token: owner.token,
      headers: { "x-request-id": requestId }
    })
    expect(response.status).toBe(200)
    expect(response.headers.get("x-request-id")).toBe(requestId)
    const lines = linesOf(entries, requestId)
    expect(lines).toHaveLength(1)
    expect(lines[0]!.level).toBe("INFO")
    expect(lines[0]!.message).toBe("request")
    expect(lines[0]!.annotations).toEqual({
      method: "GET",
      route: "/v1/teams/:teamId",
      status: 200,
      durationMs: expect.any(Number),
      requestId
    })
  })

  it("a request id that is not sane is replaced by a generated one, echoed in the header", async () => {
    for (const insane of ["has spaces", "x".repeat(129), "semi;colon"]) {
      const response = await Http.request(server.url, "GET", "/health", { headers: { "x-request-id": insane } })
      const echoed = response.headers.get("x-request-id")!
      expect(echoed).not.toBe(insane)
      expect(echoed).toMatch(/^[A-Za-z0-9._-]{1,128}$/)
      expect(linesOf(entries, echoed)).toHaveLength(1)
      expect(entries.some((entry) => entry.annotations.requestId === insane)).toBe(false)
    }
    const generated = await Http.request(server.url, "GET", "/health")
    expect(linesOf(entries, generated.headers.get("x-request-id")!)).toHaveLength(1)
  })

  it("unmatched routes log as unknown; refused and failed requests get their line too, with their status", async () => {
    const cases = [
      { method: "GET", path: "/no/such/route", options: {}, route: "unknown", status: 404 },
      { method: "POST", path: "/v1/teams", options: { token: owner.token, rawBody: "[".repeat(5000) }, route: "/v1/teams", status: 400 },
      { method: "POST", path: "/v1/auth/sign-in", options: { rawBody: "x".repeat(2 * 1024 * 1024) }, route: "/v1/auth/sign-in", status: 413 },
      { method: "GET", path: "/v1/me", options: {}, route: "/v1/me", status: 401 },
      { method: "GET", path: "/openapi.json", options: {}, route: "/openapi.json", status: 200 }
    ] as const
    for (const { method, options, path, route, status } of cases) {
      const requestId = newRequestId()
      const response = await Http.request(server.url, method, path, { ...options, headers: { "x-request-id": requestId } })
      expect(response.status).toBe(status)
      expect(response.headers.get("x-request-id")).toBe(requestId)
      const lines = linesOf(entries, requestId)
      expect(lines).toHaveLength(1)
      expect(lines[0]!.annotations).toMatchObject({ method, route, status })
    }
  })
})

describe("lines of failures", () => {
  class Broken extends HttpApiGroup.make("broken")
    .add(HttpApiEndpoint.get("broken", "/broken").addSuccess(Schema.Struct({ n: Schema.Number.pipe(Schema.positive()) })))
    .add(HttpApiEndpoint.get("forever", "/forever"))
  {}
  class BrokenApi extends HttpApi.make("broken").add(Broken).addError(InvalidRequestResponse) {}

  /** Resolved when the endpoint that never answers has started. */
  let startedForever = () => {}

  const serve = (logger: Logger.Logger<unknown, void>) =>
    HttpApiBuilder.toWebHandler(Layer.mergeAll(
      HttpErrors.layerFor(BrokenApi),
      HttpApiBuilder.api(BrokenApi).pipe(
        Layer.provide(HttpErrors.group(BrokenApi, "broken", (handlers) =>
          handlers.handle("broken", () => Effect.succeed({ n: -1 })).handle("forever", () => Effect.andThen(Effect.sync(() => startedForever()), Effect.never))))
      ),
      HttpServer.layerContext
    ).pipe(Layer.provide(Logger.replace(Logger.defaultLogger, logger))))

  it("5xx lines are warnings, next to the error that explains them, which carries the request id", async () => {
    const { entries, logger } = capture()
    const { dispose, handler } = serve(logger)
    try {
      const response = await handler(new Request("http://localhost/broken", { headers: { "x-request-id": "broken-1" } }))
      expect(response.status).toBe(500)
      const lines = linesOf(entries, "broken-1")
      expect(lines.map((line) => line.level)).toEqual(["ERROR", "WARN"])
      expect(lines[0]!.message).toEqual(["A response did not match its schema", expect.anything()])
      expect(lines[1]!.annotations).toMatchObject({ route: "/broken", status: 500 })
    } finally {
      await dispose()
    }
  })

  it("a client that hangs up before the response still gets its line, with status 499", async () => {
    const { entries, logger } = capture()
    const { dispose, handler } = serve(logger)
    try {
      const abort = new AbortController()
      const started = new Promise<void>((resolve) => startedForever = resolve)
      void handler(new Request("http://localhost/forever", { headers: { "x-request-id": "gone-1" }, signal: abort.signal }))
      await started
      expect(linesOf(entries, "gone-1")).toEqual([])
      abort.abort()
      await expect.poll(() => linesOf(entries, "gone-1")).toHaveLength(1)
      expect(linesOf(entries, "gone-1")[0]!.annotations).toMatchObject({ route: "/forever", status: 499 })
    } finally {
      await dispose()
    }
  })
})

/** What the loggers `Server.layer` and `makeWebHandler` install write to the console, meanwhile. */
const captureConsole = async <A>(body: (lines: ReadonlyArray<string>) => Promise<A>): Promise<A> => {
  const lines: Array<string> = []
  const spy = vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => void lines.push(args.map(String).join(" ")))
  try {
    return await body(lines)
  } finally {
    spy.mockRestore()
  }
}

const databaseSettings = { ...TestServer.testSettings, database: TestDatabase.layer }

describe("the launched server's logger", () => {
  it("Server.layer writes exactly one line per request, in the configured format", () =>
    captureConsole(async (lines) => {
      const runtime = ManagedRuntime.make(serverLayer({ ...databaseSettings, logFormat: "json", logLevel: "info" }))
      try {
        await runtime.runPromise(Effect.void)
        const port = lines.map((line) => /Listening on http:\/\/[^:"]+:(\d+)/.exec(line)?.[1]).find((found) => found !== undefined)
        expect(port).toBeDefined()
        const response = await Http.request(`http://127.0.0.1:${port}`, "GET", "/health", { headers: { "x-request-id": "standalone-1" } })
        expect(response.status).toBe(200)
        // The platform's request logger, which this replaced, wrote several lines naming the URL and not the id.
        expect(lines.filter((line) => line.includes("/health"))).toHaveLength(1)
        const mine = lines.filter((line) => line.includes("standalone-1"))
        expect(mine).toHaveLength(1)
        expect(JSON.parse(mine[0]!)).toMatchObject({
          message: "request",
          logLevel: "INFO",
          annotations: { method: "GET", route: "/health", status: 200, requestId: "standalone-1" }
        })
      } finally {
        await runtime.dispose()
      }
    }))

  it("makeWebHandler logs the same line, and honours the minimum level", async () => {
    const linesAt = (logLevel: "info" | "warn") =>
      captureConsole(async (lines) => {
        const { dispose, handler } = makeWebHandler({ ...databaseSettings, logFormat: "logfmt", logLevel })
        try {
          const response = await handler(new Request("http://localhost/health", { headers: { "x-request-id": `web-${logLevel}` } }))
          expect(response.status).toBe(200)
          expect(response.headers.get("x-request-id")).toBe(`web-${logLevel}`)
          return lines.filter((line) => line.includes(`web-${logLevel}`))
        } finally {
          await dispose()
        }
      })
    const info = await linesAt("info")
    expect(info).toHaveLength(1)
    expect(info[0]).toContain("route=/health")
    expect(info[0]).toContain("status=200")
    expect(await linesAt("warn")).toEqual([])
  })
})

describe("formats", () => {
  const render = (format: "pretty" | "json" | "logfmt") => {
    const written: Array<string> = []
    Effect.runSync(
      Effect.logInfo("request").pipe(
        Effect.annotateLogs({ method: "GET", route: "/v1/teams/:teamId", status: 200, durationMs: 1.5, requestId: "r-1" }),
        Effect.provide(Logger.replace(Logger.defaultLogger, Logger.map(formatLogger(format), (line) => void written.push(line))))
      )
    )
    return written
  }

  it("each writes the request as one line with every field", () => {
    const [json] = render("json")
    expect(JSON.parse(json!)).toMatchObject({
      message: "request",
      logLevel: "INFO",
      annotations: { method: "GET", route: "/v1/teams/:teamId", status: 200, durationMs: 1.5, requestId: "r-1" }
    })
    for (const format of ["pretty", "logfmt"] as const) {
      const [line] = render(format)
      expect(line).not.toContain("\n")
      for (const field of ["method=GET", "route=/v1/teams/:teamId", "status=200", "durationMs=1.5", "requestId=r-1"]) {
        expect(line).toContain(field)
      }
    }
  })

  it("json writes exactly the line of Effect's jsonLogger, plain values or not", () => {
    const both = (log: Effect.Effect<void>) => {
      const lines: Array<string> = []
      const ours = Logger.map(formatLogger("json"), (line) => void lines.push(`ours ${line}`))
      const effects = Logger.map(Logger.jsonLogger, (line) => void lines.push(`effect ${line}`))
      // One log call, both loggers: the same date, fiber and annotations for both.
      Effect.runSync(log.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, Logger.zip(ours, effects)))))
      return lines
    }
    const cases: Array<Effect.Effect<void>> = [
      Effect.logInfo("request").pipe(Effect.annotateLogs({ method: "GET", status: 200, durationMs: 1.5, requestId: "r-1", flag: true, none: null })),
      Effect.logWarning("two", "parts"),
      Effect.logError("failed", { secret: Redacted.make("hunter2") }),
      Effect.logError("a cause").pipe(Effect.andThen(Effect.logError(Cause.fail("boom")))),
      Effect.logInfo("nested").pipe(Effect.annotateLogs({ detail: { ids: [1, 2] } }), Effect.withLogSpan("span")),
      Effect.logDebug(42)
    ]
    for (const log of cases) {
      const lines = both(Logger.withMinimumLogLevel(log, LogLevel.All))
      expect(lines.length).toBeGreaterThan(0)
      const ours = lines.filter((line) => line.startsWith("ours ")).map((line) => line.slice(5))
      const effects = lines.filter((line) => line.startsWith("effect ")).map((line) => line.slice(7))
      expect(ours).toEqual(effects)
    }
  })

  it("loggerLayer replaces Effect's default logger but keeps one a launcher installed", () => {
    const custom = Logger.make(() => undefined)
    const loggersAfter = (initial: HashSet.HashSet<Logger.Logger<unknown, any>>) =>
      Effect.runSync(
        FiberRef.get(FiberRef.currentLoggers).pipe(
          Effect.provide(loggerLayer({ logFormat: "json", logLevel: "warn" })),
          Effect.locally(FiberRef.currentLoggers, initial)
        )
      )
    const replaced = loggersAfter(HashSet.make(Logger.defaultLogger))
    expect(HashSet.has(replaced, Logger.defaultLogger)).toBe(false)
    expect(HashSet.size(replaced)).toBe(1)
    expect(loggersAfter(HashSet.make(custom))).toEqual(HashSet.make(custom))
    const level = Effect.runSync(
      FiberRef.get(FiberRef.currentMinimumLogLevel).pipe(Effect.provide(loggerLayer({ logFormat: "json", logLevel: "warn" })))
    )
    expect(level).toBe(LogLevel.Warning)
  })

  it("spans are off unless tracing is asked for", () => {
    const tracerEnabled = (tracing: boolean) =>
      Effect.runSync(FiberRef.get(FiberRef.currentTracerEnabled).pipe(Effect.provide(observabilityLayer({ tracing }))))
    expect(tracerEnabled(false)).toBe(false)
    expect(tracerEnabled(true)).toBe(true)
  })
})

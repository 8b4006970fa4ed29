/**
 * The per-request log line (platform/RequestLog.ts), on a real server and in each way of running it, and the
 * logger's formats.
 *
 * Not covered here: the lines of an API operation (a team read), of a body refused on /v1/teams and
 * /v1/auth/sign-in, of a 401 on /v1/me.
 */
import { apiOf } from "@orgplane/schema"
import { afterAll, afterEach, describe, expect, it, vi } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redactable from "effect/Redactable"
import * as References from "effect/References"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as HttpErrors from "../src/platform/HttpErrors.js"
import { formatLogger, loggerLayer, layer as observabilityLayer } from "../src/platform/RequestLog.js"
import { layer as serverLayer, makeNodeListener, makeWebHandler } from "../src/Server.js"
import * as TestDatabase from "./support/TestDatabase.js"
import * as TestServer from "./support/TestServer.js"

interface Entry {
  readonly level: string
  readonly message: unknown
  readonly annotations: Record<string, unknown>
}

const capture = () => {
  const entries: Array<Entry> = []
  const logger = Logger.make(({ fiber, logLevel, message }) => {
    entries.push({
      level: logLevel.toUpperCase(),
      message: Array.isArray(message) && message.length === 1 ? message[0] : message,
      annotations: { ...fiber.getRef(References.CurrentLogAnnotations) }
    })
  })
  return { entries, logger }
}

/** Every entry written while handling the request with this id. */
const linesOf = (entries: ReadonlyArray<Entry>, requestId: string) => entries.filter((entry) => entry.annotations["requestId"] === requestId)

const get = (url: string, path: string, headers: Record<string, string> = {}, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}${path}`, { headers, ...init })
    await response.arrayBuffer()
    return response
  })

describe(`the per-request line on ${TestDatabase.kind}`, () => {
  it.live("one line with method, route template, status, duration and the request id; a bad id replaced; unknown routes and refusals too", () =>
    Effect.gen(function*() {
      const { entries, logger } = capture()
      const server = yield* TestServer.start({ database: yield* TestDatabase.layer({ migrated: true }) }).pipe(
        Effect.provideService(References.CurrentLoggers, new Set([logger]))
      )
      const response = yield* get(server.url, "/health", { "x-request-id": "health-1" })
      expect(response.status).toBe(200)
      expect(response.headers.get("x-request-id")).toBe("health-1")
      const lines = linesOf(entries, "health-1")
      expect(lines).toHaveLength(1)
      expect(lines[0]).toEqual({
        level: "INFO",
        message: "request",
        annotations: { method: "GET", route: "/health", status: 200, durationMs: expect.any(Number), requestId: "health-1" }
      })

      for (const insane of ["has spaces", "x".repeat(129), "semi;colon"]) {
        const echoed = (yield* get(server.url, "/health", { "x-request-id": insane })).headers.get("x-request-id")!
        expect(echoed).not.toBe(insane)
        expect(echoed).toMatch(/^[A-Za-z0-9._-]{1,128}$/)
        expect(linesOf(entries, echoed)).toHaveLength(1)
        expect(entries.some((entry) => entry.annotations["requestId"] === insane)).toBe(false)
      }
      const generated = yield* get(server.url, "/health")
      expect(linesOf(entries, generated.headers.get("x-request-id")!)).toHaveLength(1)

      const cases = [
        { method: "GET", path: "/no/such/route", route: "unknown", status: 404 },
        { method: "POST", path: "/health", route: "unknown", status: 405 },
        { method: "GET", path: "/health;x", route: "unknown", status: 400 },
        { method: "GET", path: `/ready?pad=${"x".repeat(9_000)}`, route: "/ready", status: 414 },
        { method: "GET", path: "/openapi.json", route: "/openapi.json", status: 200 }
      ] as const
      for (const { method, path, route, status } of cases) {
        const requestId = `case-${status}-${route.length}`
        const answer = yield* get(server.url, path, { "x-request-id": requestId }, { method })
        expect([path.slice(0, 40), answer.status, answer.headers.get("x-request-id")]).toEqual([path.slice(0, 40), status, requestId])
        const found = linesOf(entries, requestId)
        expect(found).toHaveLength(1)
        expect(found[0]!.annotations).toMatchObject({ method, route, status })
      }
    }).pipe(Effect.scoped), 60_000)
})

describe("lines of failures", () => {
  class Broken extends HttpApiGroup.make("broken")
    .add(HttpApiEndpoint.get("broken", "/broken", { success: Schema.Struct({ n: Schema.Number.check(Schema.isGreaterThan(0)) }) }))
    .add(HttpApiEndpoint.get("forever", "/forever"))
  {}
  const BrokenApi = apiOf(Broken)

  /** Resolved when the endpoint that never answers has started. */
  let startedForever = () => {}

  const serve = (logger: Logger.Logger<unknown, void>) =>
    HttpRouter.toWebHandler(
      HttpApiBuilder.layer(BrokenApi).pipe(
        Layer.provide(HttpApiBuilder.group(BrokenApi, "broken", (handlers) =>
          handlers
            .handle("broken", () => Effect.succeed({ n: -1 }))
            .handle("forever", () => Effect.andThen(Effect.sync(() => startedForever()), Effect.never)))),
        Layer.provide(HttpErrors.layerFor(BrokenApi)),
        Layer.provide(HttpServer.layerServices),
        // Merged: the edge (the router's global middleware) runs in the handler's context, not in the groups'.
        Layer.provideMerge(Logger.layer([logger]))
      ),
      { disableLogger: true }
    )

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
      void handler(new Request("http://localhost/forever", { headers: { "x-request-id": "gone-1" }, signal: abort.signal })).catch(() => undefined)
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

describe(`the launched server's logger on ${TestDatabase.kind}`, () => {
  // Each fresh database lives until the end of this block.
  const scope = Scope.makeUnsafe()
  const database = () => Effect.runPromise(Scope.provide(TestDatabase.layer({ migrated: true }), scope))
  afterEach(() => vi.restoreAllMocks())
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

  it("Server.layer writes exactly one line per request, in the configured format", () =>
    captureConsole(async (lines) => {
      const runtime = ManagedRuntime.make(serverLayer({ host: "127.0.0.1", port: 0, encryptionKeys: TestServer.encryptionKeys, database: await database(), logFormat: "json", logLevel: "info" }))
      try {
        await runtime.runPromise(Effect.void)
        const port = lines.map((line) => /Listening on http:\/\/[^:"]+:(\d+)/.exec(line)?.[1]).find((found) => found !== undefined)
        expect(port).toBeDefined()
        const response = await fetch(`http://127.0.0.1:${port}/health`, { headers: { "x-request-id": "standalone-1" } })
        expect(response.status).toBe(200)
        // The platform's request logger, which this replaced, wrote lines naming the URL and not the id.
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
    }), 60_000)

  it("makeWebHandler logs the same line, and honours the minimum level", async () => {
    const linesAt = (logLevel: "info" | "warn") =>
      captureConsole(async (lines) => {
        const { dispose, handler } = makeWebHandler({ encryptionKeys: TestServer.encryptionKeys, database: await database(), logFormat: "logfmt", logLevel })
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
  }, 60_000)

  it("makeNodeListener serves under a host's own server, with the same line", () =>
    captureConsole(async (lines) => {
      const { dispose, listener } = await makeNodeListener({ encryptionKeys: TestServer.encryptionKeys, database: await database(), logFormat: "json", logLevel: "info" })
      const host = createServer(listener)
      await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve))
      try {
        const { port } = host.address() as AddressInfo
        const response = await fetch(`http://127.0.0.1:${port}/health`, { headers: { "x-request-id": "node-1" } })
        expect([response.status, response.headers.get("x-request-id"), response.headers.get("x-content-type-options")]).toEqual([200, "node-1", "nosniff"])
        const missing = await fetch(`http://127.0.0.1:${port}/nowhere`)
        expect(missing.status).toBe(404)
        await expect.poll(() => lines.filter((line) => line.includes("node-1"))).toHaveLength(1)
      } finally {
        await new Promise<void>((resolve) => host.close(() => resolve()))
        await dispose()
      }
    }), 60_000)
})

describe("formats", () => {
  const render = (format: "pretty" | "json" | "logfmt", log: Effect.Effect<void> = Effect.logInfo("request")) => {
    const written: Array<string> = []
    Effect.runSync(
      log.pipe(
        Effect.annotateLogs({ method: "GET", route: "/v1/teams/:teamId", status: 200, durationMs: 1.5, requestId: "r-1" }),
        Effect.provide(Logger.layer([Logger.map(formatLogger(format), (line) => void written.push(line))]))
      )
    )
    return written
  }

  it("each writes the request as one line with every field", () => {
    const [json] = render("json")
    expect(JSON.parse(json!)).toEqual({
      message: "request",
      logLevel: "INFO",
      timestamp: expect.any(String),
      annotations: { method: "GET", route: "/v1/teams/:teamId", status: 200, durationMs: 1.5, requestId: "r-1" },
      spans: {},
      fiberId: expect.stringMatching(/^#\d+$/)
    })
    for (const format of ["pretty", "logfmt"] as const) {
      const [line] = render(format)
      expect(line).not.toContain("\n")
      for (const field of ["method=GET", "route=/v1/teams/:teamId", "status=200", "durationMs=1.5", "requestId=r-1"]) {
        expect([format, field, line!.includes(field)]).toEqual([format, field, true])
      }
    }
  })

  it("json writes the same members for lines that are not plain values: a cause, an object to redact, spans", () => {
    const [failed] = render("json", Effect.logError("failed", { secret: Redactable.redact("x") }))
    expect(Object.keys(JSON.parse(failed!))).toEqual(["message", "logLevel", "timestamp", "annotations", "spans", "fiberId"])
    const [withCause] = render("json", Effect.logError("a cause", new Error("boom")).pipe(Effect.andThen(Effect.void)))
    expect(JSON.parse(withCause!).logLevel).toBe("ERROR")
    const [spanned] = render("json", Effect.logWarning("spanned").pipe(Effect.withLogSpan("span")))
    expect(JSON.parse(spanned!)).toMatchObject({ message: "spanned", logLevel: "WARN", spans: { span: expect.any(Number) } })
  })

  it("loggerLayer replaces Effect's default logger but keeps one a launcher installed, and sets the minimum level", () => {
    const custom = Logger.make(() => undefined)
    const loggersAfter = (initial: ReadonlySet<Logger.Logger<unknown, unknown>>) =>
      Effect.runSync(
        Effect.withFiber((fiber) => Effect.succeed(fiber.getRef(References.CurrentLoggers))).pipe(
          Effect.provide(loggerLayer({ logFormat: "json", logLevel: "warn" })),
          Effect.provideService(References.CurrentLoggers, initial)
        )
      )
    const replaced = loggersAfter(new Set([Logger.defaultLogger]))
    expect(replaced.has(Logger.defaultLogger)).toBe(false)
    expect(replaced.size).toBe(1)
    expect([...loggersAfter(new Set([custom]))]).toEqual([custom])
    const level = Effect.runSync(
      Effect.withFiber((fiber) => Effect.succeed(fiber.getRef(References.MinimumLogLevel))).pipe(Effect.provide(loggerLayer({ logFormat: "json", logLevel: "warn" })))
    )
    expect(level).toBe("Warn")
  })

  it("spans are off unless tracing is asked for", () => {
    const tracerEnabled = (tracing: boolean) =>
      Effect.runSync(Effect.withFiber((fiber) => Effect.succeed(fiber.getRef(References.TracerEnabled))).pipe(Effect.provide(observabilityLayer({ tracing }))))
    expect(tracerEnabled(false)).toBe(false)
    expect(tracerEnabled(true)).toBe(true)
  })
})

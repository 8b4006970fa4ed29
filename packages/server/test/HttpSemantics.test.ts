/**
 * The standalone server's HTTP edge through real HTTP, on a fresh database: 405 with `Allow` and 404 on the served
 * routes, 414 from the request guard and from Node's parser, 431 and 400 for what the parser refuses (in the API's
 * error shape: platform/ClientErrors.ts), 65 s keep-alive and a stop that does not wait for idle connections,
 * `Cache-Control: no-store` on /v1 only, and the API reference (`/docs`, `/openapi.json`: platform/Docs.ts).
 *
 * On the system group alone (`apiOf(SystemApi)`). Not covered here: what goes through /v1/teams, /v1/auth and
 * idempotency (the 415s before authentication, sign-out without a body, Allow for every path of the document, the
 * typed client's decoding of 415 and 414, no-store on credentials, replays and 429s of real operations); of those,
 * http/CacheControl.test.ts holds no-store on credentials and on a replay.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { MAX_URL_LENGTH } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type * as Http from "node:http"
import * as Net from "node:net"
import { chooseCoding } from "../src/platform/Compression.js"
import * as Server from "../src/Server.js"
import { createHttpServer, shutdownGraceMillis } from "../src/Server.js"
import { watched } from "./support/Contract.js"
import * as TestDatabase from "./support/TestDatabase.js"
import * as TestServer from "./support/TestServer.js"

class Url extends Context.Service<Url, string>()("test/HttpSemantics/Url") {}

const ServerUrl = Layer.effect(
  Url,
  Effect.gen(function*() {
    const server = yield* TestServer.start({ database: yield* TestDatabase.layer({ migrated: true }) })
    return server.url
  })
)

/** The members of an OpenAPI document this file reads. */
const decodeOpenApiHead = Schema.decodeUnknownSync(Schema.Struct({
  openapi: Schema.String,
  info: Schema.Struct({ version: Schema.String }),
  paths: Schema.Record(Schema.String, Schema.Unknown)
}))

const request = (path: string, init: RequestInit = {}) =>
  Effect.flatMap(Url, (url) =>
    Effect.promise(async () => {
      const response = await fetch(`${url}${path}`, init)
      const text = await response.text()
      let body: unknown = text
      try {
        body = text === "" ? undefined : JSON.parse(text)
      } catch {
        // not JSON: kept as text
      }
      return { status: response.status, headers: response.headers, body, text }
    }))

/** One exchange on a raw connection: what is written, and the answer as read until the server closes. */
const exchange = (...parts: ReadonlyArray<string>) =>
  Effect.flatMap(Url, (url) =>
    Effect.promise(() =>
      new Promise<{ status: number; headers: Record<string, string>; body: unknown }>((resolve, reject) => {
        const socket = Net.connect(Number(new URL(url).port), "127.0.0.1", () => {
          for (const part of parts) socket.write(part)
        })
        let received = ""
        socket.setEncoding("latin1")
        socket.on("data", (chunk) => (received += chunk))
        socket.on("error", reject)
        socket.on("close", () => {
          const [head = "", body = ""] = received.split("\r\n\r\n", 2)
          const [statusLine = "", ...lines] = head.split("\r\n")
          const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]))
          resolve({ status: Number(statusLine.split(" ")[1]), headers, body: body === "" ? undefined : JSON.parse(body) })
        })
      })
    ))

const stillServing = Effect.map(request("/health"), (health) => expect(health.status).toBe(200))

/** The directives of a Content-Security-Policy header: `{ "default-src": ["'self'"], ... }`. */
const directives = (header: string) =>
  Object.fromEntries(
    header.split(";").map((part) => part.trim()).filter((part) => part !== "").map((part) => {
      const [name, ...sources] = part.split(/\s+/)
      return [name!, sources]
    })
  )

/** What the page's `data-configuration` attribute says, decoded as the browser would. */
const configurationOf = (html: string) => {
  const attribute = /<script id="api-reference"[^>]*\sdata-configuration="([^"]*)"/.exec(html)?.[1]
  if (attribute === undefined) throw new Error(`no data-configuration in ${html}`)
  return JSON.parse(attribute.replace(/&quot;/g, "\"").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&"))
}

layer(ServerUrl, { timeout: 60_000, excludeTestServices: true })(`the HTTP edge on ${TestDatabase.kind}`, (it) => {
  it.effect("answers a method a path does not have with 405 and Allow; leaves an unknown path 404", () =>
    Effect.gen(function*() {
      const post = yield* request("/health", { method: "POST" })
      expect([post.status, post.headers.get("allow"), post.body]).toEqual([
        405,
        "GET, HEAD",
        { error: "method_not_allowed", message: "/health does not take POST; it takes GET, HEAD." }
      ])
      const unknown = yield* request("/v1/nothing-here")
      expect([unknown.status, unknown.headers.get("allow"), unknown.body]).toEqual([404, null, expect.objectContaining({ error: "not_found" })])
    }))

  it.effect(`answers a URL over ${MAX_URL_LENGTH} characters with 414 from the request guard`, () =>
    Effect.gen(function*() {
      const response = yield* request(`/health?pad=${"x".repeat(MAX_URL_LENGTH)}`)
      expect(response.status).toBe(414)
      expect(response.body).toEqual({ error: "uri_too_long", message: `The URL is ${MAX_URL_LENGTH + 12} characters long; at most ${MAX_URL_LENGTH} are accepted.` })
      expect(response.headers.get("x-request-id")).toEqual(expect.any(String))
    }))

  it.effect("answers a request line over Node's header limit with 414, in the error shape, and keeps serving", () =>
    Effect.gen(function*() {
      const response = yield* exchange(`GET /health?pad=${"x".repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
      expect(response.status).toBe(414)
      expect(response.headers["content-type"]).toBe("application/json")
      expect(response.headers["connection"]).toBe("close")
      expect(response.body).toEqual({ error: "uri_too_long", message: "The request line is longer than the server reads (16384 bytes, header fields included)." })
      yield* stillServing
    }))

  it.effect("answers a header block over Node's limit with 431: one long field, or many", () =>
    Effect.gen(function*() {
      const long = yield* exchange(`GET /health HTTP/1.1\r\nHost: localhost\r\nx-big: ${"b".repeat(20_000)}\r\n\r\n`)
      expect(long.status).toBe(431)
      expect(long.body).toEqual({
        error: "request_header_fields_too_large",
        message: "The request's header fields are larger than the server reads (16384 bytes, request line included)."
      })
      const fields = Array.from({ length: 400 }, (_, i) => `x-field-${i}: ${"v".repeat(40)}\r\n`).join("")
      const many = yield* exchange(`GET /health HTTP/1.1\r\nHost: localhost\r\n${fields}\r\n`)
      expect([many.status, many.body]).toEqual([431, expect.objectContaining({ error: "request_header_fields_too_large" })])
      // The fields arriving over several writes: still 431.
      const split = yield* exchange(`GET /health HTTP/1.1\r\nHost: localhost\r\nx-big: ${"b".repeat(10_000)}`, `${"b".repeat(10_000)}\r\n\r\n`)
      expect(split.status).toBe(431)
      yield* stillServing
    }))

  it.effect("answers what is not HTTP/1.1 with 400 invalid_request", () =>
    Effect.gen(function*() {
      const garbage = yield* exchange("HELLO / HTTP/1.1\r\nHost: localhost\r\n\r\n")
      expect(garbage.status).toBe(400)
      expect(garbage.body).toMatchObject({ error: "invalid_request", details: [{ path: [], message: expect.stringMatching(/^The request is not valid HTTP\/1\.1/) }] })
      const header = yield* exchange("GET /health HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n")
      expect([header.status, header.body]).toEqual([400, expect.objectContaining({ error: "invalid_request" })])
      yield* stillServing
    }))

  it.effect("keeps an idle connection 65 s and says so, longer than clients keep theirs", () =>
    Effect.gen(function*() {
      const response = yield* request("/health")
      expect([response.headers.get("connection"), response.headers.get("keep-alive")]).toEqual(["keep-alive", "timeout=65"])
    }))

  it.effect("Cache-Control: no-store on /v1 answers (errors too), not on /health and the document, which anyone may cache", () =>
    Effect.gen(function*() {
      expect((yield* request("/v1/nothing-here")).headers.get("cache-control")).toBe("no-store")
      expect((yield* request("/v1", { method: "DELETE" })).headers.get("cache-control")).toBe("no-store")
      expect((yield* request("/health")).headers.get("cache-control")).toBeNull()
      expect((yield* request("/openapi.json")).headers.get("cache-control")).toBeNull()
      for (const path of ["/health", "/openapi.json", "/docs", "/v1/nothing-here"]) {
        expect([path, (yield* request(path)).headers.get("x-content-type-options")]).toEqual([path, "nosniff"])
      }
    }))

  it.effect("serves the OpenAPI document: 3.1, the API contract's label, /health among its paths", () =>
    Effect.gen(function*() {
      const document = yield* request("/openapi.json")
      expect(document.status).toBe(200)
      const openApi = decodeOpenApiHead(document.body)
      expect(openApi.openapi).toBe("3.1.0")
      expect(openApi.info.version).toBe("dev")
      expect(Object.keys(openApi.paths)).toContain("/health")
    }))

  it.effect("the API reference loads only what this server serves: every src and href is a path here, and each answers", () =>
    Effect.gen(function*() {
      const page = yield* request("/docs")
      expect(page.status).toBe(200)
      expect(page.headers.get("content-type")).toContain("text/html")
      // No absolute URL anywhere (a protocol-relative one included).
      expect(page.text).not.toMatch(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i)
      const references = [...page.text.matchAll(/\s(?:src|href|data-url)="([^"]*)"/g)].map((match) => match[1]!)
      // Relative to the page, so that they hold under a mount (docs/ARCHITECTURE.md, "Embedding: what a host gets").
      expect(references.sort()).toEqual(["docs/scalar.js", "openapi.json"])
      for (const reference of references) {
        const path = new URL(reference, "http://host/docs").pathname
        expect([path, (yield* request(path)).status]).toEqual([path, 200])
      }
    }))

  it.effect("the API reference lets the browser fetch nothing from another origin", () =>
    Effect.gen(function*() {
      const page = yield* request("/docs")
      const policy = directives(page.headers.get("content-security-policy") ?? "")
      expect(policy["default-src"]).toEqual(["'self'"])
      const allowed = new Set(["'self'", "'none'", "'unsafe-inline'", "'wasm-unsafe-eval'", "data:", "blob:"])
      for (const [name, sources] of Object.entries(policy)) {
        for (const source of sources) expect([name, source, allowed.has(source)]).toEqual([name, source, true])
      }
      // Scripts: this server's file only (no inline script, no eval; Scalar compiles WebAssembly).
      expect(policy["script-src"]).toEqual(["'self'", "'wasm-unsafe-eval'"])
      for (const name of ["connect-src", "font-src", "img-src", "style-src"]) expect(policy[name]).toContain("'self'")
    }))

  it.effect("the API reference turns off Scalar's web fonts, telemetry, client button and toolbar, with options the served script reads", () =>
    Effect.gen(function*() {
      const configuration = configurationOf((yield* request("/docs")).text)
      expect(configuration).toEqual({ withDefaultFonts: false, telemetry: false, hideClientButton: true, showToolbar: "never" })
      // An option the script does not know would be ignored without a word: each must appear in its option schema.
      const script = (yield* request("/docs/scalar.js")).text
      for (const option of Object.keys(configuration)) expect([option, new RegExp(`[{,]${option}:`).test(script)]).toEqual([option, true])
    }))

  it.effect("serves its script cached, as JavaScript", () =>
    Effect.gen(function*() {
      const script = yield* request("/docs/scalar.js")
      expect(script.status).toBe(200)
      expect(script.headers.get("content-type")).toContain("text/javascript")
      expect(script.headers.get("cache-control")).toContain("max-age")
      expect(script.text.length).toBeGreaterThan(100_000)
    }))
})

describe("stopping", () => {
  it.live("stops without waiting for kept-alive connections: an idle one, and one answered 413 whose body never came", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const server = yield* TestServer.start({ database: yield* TestDatabase.layer({ migrated: true }) }).pipe(Scope.provide(scope))
      expect((yield* TestServer.get(server.url, "/health")).status).toBe(200)
      const elapsed = yield* Effect.promise(async () => {
        // A body announced and never sent, refused before it is read: answered, yet the parser still awaits the body.
        const socket = Net.connect(Number(new URL(server.url).port), "127.0.0.1")
        const answered = new Promise<string>((resolve) => socket.once("data", (data) => resolve(data.toString("latin1"))))
        socket.write("POST /health HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 20000000\r\n\r\n{")
        const first = (await answered).split("\r\n")[0]
        const ended = new Promise<void>((resolve) => socket.once("close", () => resolve()))
        return { first, ended }
      }).pipe(Effect.flatMap(({ ended, first }) =>
        Effect.gen(function*() {
          expect(first).toBe("HTTP/1.1 405 Method Not Allowed")
          const started = Date.now()
          yield* Scope.close(scope, Exit.void)
          yield* Effect.promise(() => ended)
          return Date.now() - started
        })
      ))
      // Far under both the 65 s keep-alive and the 10 s grace given to requests in flight.
      expect(elapsed).toBeLessThan(shutdownGraceMillis / 2)
    }).pipe(Effect.scoped), 60_000)

  it("createHttpServer keeps idle connections 65 s", () => {
    const server = createHttpServer()
    expect(server.keepAliveTimeout).toBe(65_000)
    expect(server.listenerCount("clientError")).toBe(1)
  })
})

describe("starting", () => {
  /** `GET /health` on a raw connection to `port`: the answer's status line, or `undefined` if none within `millis`. */
  const statusLine = (port: number, millis: number) =>
    new Promise<string | undefined>((resolve) => {
      const socket = Net.connect(port, "127.0.0.1", () => socket.write("GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"))
      const timer = setTimeout(() => (socket.destroy(), resolve(undefined)), millis)
      socket.once("data", (data) => (clearTimeout(timer), socket.destroy(), resolve(data.toString("latin1").split("\r\n")[0])))
      socket.once("error", () => (clearTimeout(timer), resolve(undefined)))
    })

  it.live("a request taken the moment the server listens is answered once it serves (not left without a listener)", () =>
    Effect.gen(function*() {
      let answer: Promise<string | undefined> | undefined
      const makeServer = () => {
        const server = watched()
        // Sent as soon as the port is open: with the routes built after listening, it waited forever.
        server.once("listening", () => (answer = statusLine((server.address() as Net.AddressInfo).port, 10_000)))
        return server
      }
      const database = yield* TestDatabase.layer({ migrated: true })
      yield* Layer.build(Server.layer({ host: "127.0.0.1", port: 0, encryptionKeys: TestServer.encryptionKeys, database }, makeServer))
      expect(answer).toBeDefined()
      expect(yield* Effect.promise(() => answer ?? Promise.resolve(undefined))).toBe("HTTP/1.1 200 OK")
    }).pipe(Effect.scoped), 60_000)

  it.live("a server of createHttpServer's a host listens with answers through the listener it attached before listening", () =>
    Effect.gen(function*() {
      const server = createHttpServer().on("request", (_request: Http.IncomingMessage, response: Http.ServerResponse) => {
        response.writeHead(204).end()
      })
      yield* Effect.acquireRelease(
        Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
      )
      expect(yield* Effect.promise(() => statusLine((server.address() as Net.AddressInfo).port, 5_000))).toBe("HTTP/1.1 204 No Content")
    }).pipe(Effect.scoped), 30_000)

  it.live("createHttpServer's server, told to hold (as Server.layer does), holds a request that comes before the app's listener, and hands it over in order", () =>
    Effect.gen(function*() {
      const server = Server.holdEarlyRequests(createHttpServer())
      yield* Effect.acquireRelease(
        Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
      )
      const port = (server.address() as Net.AddressInfo).port
      const first = statusLine(port, 5_000)
      const second = statusLine(port, 5_000)
      // Both parsed, with no one to answer them yet.
      yield* Effect.sleep("200 millis")
      const seen: Array<string> = []
      server.on("request", (request: Http.IncomingMessage, response: Http.ServerResponse) => {
        seen.push(request.url ?? "")
        response.writeHead(204).end()
      })
      expect(yield* Effect.promise(() => Promise.all([first, second]))).toEqual(["HTTP/1.1 204 No Content", "HTTP/1.1 204 No Content"])
      expect(seen).toEqual(["/health", "/health"])
    }).pipe(Effect.scoped), 30_000)

  /** `GET /health` on a raw connection to `port`: the whole answer (status line, header fields, body) once the server closes it. */
  const wholeAnswer = (port: number) =>
    new Promise<string>((resolve, reject) => {
      const socket = Net.connect(port, "127.0.0.1", () => socket.write("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"))
      let received = ""
      socket.on("data", (data) => (received += data.toString("latin1")))
      socket.once("close", () => resolve(received))
      socket.once("error", reject)
    })

  /** `server` listening on a loopback port for the scope. */
  const listening = (server: Http.Server) =>
    Effect.acquireRelease(
      Effect.callback<number>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as Net.AddressInfo).port)))),
      () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
    )

  it.live("createHttpServer's server, listening with no listener yet (an Effect host's, as the README serves ApiLayer), holds a request for the listener to come", () =>
    Effect.gen(function*() {
      const server = createHttpServer()
      const port = yield* listening(server)
      const first = statusLine(port, 5_000)
      yield* Effect.sleep("200 millis")
      server.on("request", (_request: Http.IncomingMessage, response: Http.ServerResponse) => void response.writeHead(204).end())
      expect(yield* Effect.promise(() => first)).toBe("HTTP/1.1 204 No Content")
    }).pipe(Effect.scoped), 30_000)

  it.live("a held request whose listener does not come within the hold is answered 503 with Retry-After, in the API's error shape", () =>
    Effect.gen(function*() {
      const server = createHttpServer({ holdMillis: 100 })
      const port = yield* listening(server)
      const answer = yield* Effect.promise(() => wholeAnswer(port))
      const [head, body] = answer.split("\r\n\r\n")
      expect(head?.split("\r\n")[0]).toBe("HTTP/1.1 503 Service Unavailable")
      expect(head?.toLowerCase()).toContain("retry-after: 5")
      expect(JSON.parse(body ?? "")).toEqual({
        error: "service_unavailable",
        message: "The server is starting and is not serving yet; retry in a few seconds."
      })
    }).pipe(Effect.scoped), 30_000)

  it.live("a stop answers the held requests 503 at once, and closes without waiting for their hold", () =>
    Effect.gen(function*() {
      const server = createHttpServer({ holdMillis: 60_000 })
      const port = yield* Effect.callback<number>((resume) =>
        void server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as Net.AddressInfo).port)))
      )
      const answer = wholeAnswer(port)
      yield* Effect.sleep("200 millis")
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      const [head, body] = (yield* Effect.promise(() => answer)).split("\r\n\r\n")
      expect(head?.split("\r\n")[0]).toBe("HTTP/1.1 503 Service Unavailable")
      expect(JSON.parse(body ?? "")).toEqual({ error: "service_unavailable", message: "The server is stopping; retry in a few seconds." })
      yield* Effect.promise(() => closed)
    }), 30_000)
})

describe("accept-encoding", () => {
  it("chooses the coding the client weighs highest, brotli before gzip on a tie, none when neither is accepted", () => {
    expect(chooseCoding("gzip, deflate, br")).toBe("br")
    expect(chooseCoding("br;q=0.5, gzip")).toBe("gzip")
    expect(chooseCoding("br;q=0.5")).toBe("br")
    expect(chooseCoding("gzip, br;q=0")).toBe("gzip")
    expect(chooseCoding("gzip;q=0, br;q=0")).toBe(undefined)
    expect(chooseCoding("deflate")).toBe(undefined)
    expect(chooseCoding("brotli")).toBe(undefined)
    expect(chooseCoding("*")).toBe("br")
    expect(chooseCoding("br;q=0, *")).toBe("gzip")
    expect(chooseCoding("identity")).toBe(undefined)
    expect(chooseCoding(undefined)).toBe(undefined)
    expect(chooseCoding("gzip, br", ["br"])).toBe("br")
    expect(chooseCoding("gzip", ["br"])).toBe(undefined)
  })
})

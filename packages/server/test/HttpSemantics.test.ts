/**
 * HTTP itself, on a real server as clients and independent tools (Schemathesis, Redocly, Spectral) see it: 405 with
 * `Allow` for every path of the OpenAPI document, 415 for a body an operation does not read (before
 * authentication), 414 for a long URL (the request guard's limit, and Node's parser past its own), 431 for a header
 * block over the parser's limit, 400 for what is not HTTP: every answer in the error shape, and the typed client
 * decoding them as the API's errors.
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Api, MAX_URL_LENGTH, UnsupportedMediaType, UriTooLong } from "@orgplane/schema"
import { shutdownGraceMillis } from "@orgplane/server"
import { Http, TestServer } from "@orgplane/testkit"
import { Effect } from "effect"
import * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

const stillServing = async () => expect((await Http.request(server.url, "GET", "/health")).status).toBe(200)

describe("405 Method Not Allowed", () => {
  const order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]

  it("answers a method a path does not have, with Allow listing what it has", async () => {
    const response = await Http.request(server.url, "PUT", "/v1/auth/sign-in")
    expect(response.status).toBe(405)
    expect(response.headers.get("allow")).toBe("POST")
    expect(response.body).toEqual({ error: "method_not_allowed", message: "/v1/auth/sign-in does not take PUT; it takes POST." })
    const options = await Http.request(server.url, "OPTIONS", "/v1/teams")
    expect([options.status, options.headers.get("allow")]).toEqual([405, "GET, HEAD, POST"])
  })

  it("for every path of the OpenAPI document, Allow is exactly the methods the document gives it (and HEAD with GET)", async () => {
    const document = (await Http.request(server.url, "GET", "/openapi.json")).body
    const templates = Object.entries<Record<string, unknown>>(document.paths).map(([path, item]) => ({
      path,
      pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`),
      methods: Object.keys(item).map((method) => method.toUpperCase())
    }))
    expect(templates.length).toBeGreaterThan(50)
    const wrong: Array<string> = []
    for (const { path } of templates) {
      const url = path.replace(/\{[^}]+\}/g, "x1")
      // A concrete URL may match several templates (`/v1/invitations/accept` and `/v1/invitations/{id}`).
      const documented = new Set(templates.filter((template) => template.pattern.test(url)).flatMap((template) => template.methods))
      if (documented.has("GET")) documented.add("HEAD")
      const expected = order.filter((method) => documented.has(method)).join(", ")
      // A URL every method of the list is documented for (`/scim/v2/x1/Users/.search` is also a User's path) is asked
      // with OPTIONS, which no path has.
      const method = order.find((candidate) => candidate !== "HEAD" && !documented.has(candidate)) ?? "OPTIONS"
      const response = await Http.request(server.url, method, url)
      // Under the SCIM protocol's base, a SCIM error (RFC 7644 §3.12), as every refusal there.
      const refused = url.startsWith("/scim/v2/")
        ? response.body?.status === "405" && response.headers.get("content-type")?.startsWith("application/scim+json")
        : response.body?.error === "method_not_allowed"
      if (response.status !== 405 || response.headers.get("allow") !== expected || !refused) {
        wrong.push(`${method} ${url}: ${response.status} allow=${response.headers.get("allow")} (expected ${expected})`)
      }
    }
    expect(wrong).toEqual([])
  })

  it("leaves an unknown path 404", async () => {
    const response = await Http.request(server.url, "PUT", "/v1/nowhere")
    expect([response.status, response.headers.get("allow"), response.body.error]).toEqual([404, null, "not_found"])
  })
})

describe("415 Unsupported Media Type", () => {
  const signUp = (headers: Record<string, string>, rawBody: string) =>
    Http.request(server.url, "POST", "/v1/auth/sign-up", { headers, rawBody })
  const account = () => ({ email: `media.${Math.random().toString(36).slice(2, 10)}@example.com`, password: "correct horse battery", name: "Media" })

  it("refuses a form-encoded or text body (nothing is created), and names what the operation reads", async () => {
    const person = account()
    const form = await signUp({ "content-type": "application/x-www-form-urlencoded" }, new URLSearchParams(person).toString())
    expect(form.status).toBe(415)
    expect(form.body).toEqual({
      error: "unsupported_media_type",
      message: "This operation reads application/json, not \"application/x-www-form-urlencoded\"."
    })
    expect((await Http.request(server.url, "POST", "/v1/auth/sign-in", { body: { email: person.email, password: person.password } })).status).toBe(401)
    const text = await signUp({ "content-type": "text/plain" }, JSON.stringify(person))
    expect([text.status, text.body.error, text.headers.get("x-content-type-options")]).toEqual([415, "unsupported_media_type", "nosniff"])
  })

  it("reads JSON with a charset, and +json types", async () => {
    expect((await signUp({ "content-type": "application/json; charset=utf-8" }, JSON.stringify(account()))).status).toBe(201)
    expect((await signUp({ "content-type": "application/merge-patch+json" }, JSON.stringify(account()))).status).toBe(201)
  })

  it("is answered before authentication, like 413", async () => {
    const response = await Http.request(server.url, "POST", "/v1/teams", { headers: { "content-type": "text/plain" }, rawBody: "{\"name\":\"x\"}" })
    expect([response.status, response.body.error]).toEqual([415, "unsupported_media_type"])
  })

  it("an operation without a body takes an empty request without Content-Type, and ignores one it is sent", async () => {
    const person = await Http.signUp(server.url)
    const other = await Http.signUp(server.url)
    const bare = await Http.request(server.url, "POST", "/v1/auth/sign-out", { token: person.token })
    expect(bare.status).toBe(204)
    const withText = await Http.request(server.url, "POST", "/v1/auth/sign-out", { token: other.token, headers: { "content-type": "text/plain" }, rawBody: "bye" })
    expect(withText.status).toBe(204)
  })
})

/** One exchange on a raw connection: what is written, and the answer as read until the server closes. */
const exchange = (...parts: ReadonlyArray<string>) =>
  new Promise<{ status: number; headers: Record<string, string>; body: any }>((resolve, reject) => {
    const port = Number(new URL(server.url).port)
    const socket = Net.connect(port, "127.0.0.1", () => {
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

describe("414 URI Too Long and 431 Request Header Fields Too Large", () => {
  it(`answers a URL over ${MAX_URL_LENGTH} characters with 414 from the request guard`, async () => {
    const response = await Http.request(server.url, "GET", `/v1/teams?pad=${"x".repeat(MAX_URL_LENGTH)}`)
    expect(response.status).toBe(414)
    expect(response.body).toEqual({ error: "uri_too_long", message: `The URL is ${MAX_URL_LENGTH + 14} characters long; at most ${MAX_URL_LENGTH} are accepted.` })
    expect(response.headers.get("x-request-id")).toEqual(expect.any(String))
  })

  it("answers a request line over Node's header limit with 414, in the error shape, and keeps serving", async () => {
    const response = await exchange(`GET /v1/teams?pad=${"x".repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
    expect(response.status).toBe(414)
    expect(response.headers["content-type"]).toBe("application/json")
    expect(response.headers["connection"]).toBe("close")
    expect(response.body).toEqual({ error: "uri_too_long", message: "The request line is longer than the server reads (16384 bytes, header fields included)." })
    await stillServing()
  })

  it("answers a header block over Node's limit with 431: one long field, or many", async () => {
    const long = await exchange(`GET /v1/teams HTTP/1.1\r\nHost: localhost\r\nx-big: ${"b".repeat(20_000)}\r\n\r\n`)
    expect(long.status).toBe(431)
    expect(long.body).toEqual({
      error: "request_header_fields_too_large",
      message: "The request's header fields are larger than the server reads (16384 bytes, request line included)."
    })
    const fields = Array.from({ length: 400 }, (_, i) => `x-field-${i}: ${"v".repeat(40)}\r\n`).join("")
    const many = await exchange(`GET /v1/teams HTTP/1.1\r\nHost: localhost\r\n${fields}\r\n`)
    expect([many.status, many.body.error]).toEqual([431, "request_header_fields_too_large"])
    // The fields arriving over several writes: still 431.
    const split = await exchange(`GET /v1/teams HTTP/1.1\r\nHost: localhost\r\nx-big: ${"b".repeat(10_000)}`, `${"b".repeat(10_000)}\r\n\r\n`)
    expect(split.status).toBe(431)
    await stillServing()
  })

  it("answers what is not HTTP/1.1 with 400 invalid_request", async () => {
    const garbage = await exchange("HELLO / HTTP/1.1\r\nHost: localhost\r\n\r\n")
    expect(garbage.status).toBe(400)
    expect(garbage.body).toMatchObject({ error: "invalid_request", details: [{ path: [], message: expect.stringMatching(/^The request is not valid HTTP\/1\.1/) }] })
    const header = await exchange("GET /health HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n")
    expect([header.status, header.body.error]).toEqual([400, "invalid_request"])
    await stillServing()
  })
})

describe("keep-alive", () => {
  it("keeps an idle connection 65 s and says so, longer than clients keep theirs, so a client never reuses a socket being closed", async () => {
    const response = await Http.request(server.url, "GET", "/health")
    expect([response.headers.get("connection"), response.headers.get("keep-alive")]).toEqual(["keep-alive", "timeout=65"])
  })

  it("stops without waiting for kept-alive connections: an idle one, and one answered 413 whose body never came", async () => {
    const stopping = await TestServer.start()
    expect((await Http.request(stopping.url, "GET", "/health")).status).toBe(200)
    // A body announced and never sent, refused before it is read: answered, yet the parser still awaits the body.
    const socket = Net.connect(Number(new URL(stopping.url).port), "127.0.0.1")
    const answered = new Promise<string>((resolve) => socket.once("data", (data) => resolve(data.toString("latin1"))))
    socket.write("POST /v1/teams HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 20000000\r\n\r\n{")
    expect((await answered).split("\r\n")[0]).toBe("HTTP/1.1 413 Payload Too Large")
    const ended = new Promise<void>((resolve) => socket.once("close", () => resolve()))
    const started = Date.now()
    await stopping.close()
    await ended
    // Far under both the 65 s keep-alive and the 10 s grace given to requests in flight.
    expect(Date.now() - started).toBeLessThan(shutdownGraceMillis / 2)
  })
})

describe("the typed client", () => {
  /** The API's client, with every request changed by `transform` on its way (the client itself sends JSON, and checks bounds). */
  const client = (transform: (request: HttpClientRequest.HttpClientRequest) => HttpClientRequest.HttpClientRequest) =>
    HttpApiClient.make(Api, { baseUrl: server.url, transformClient: HttpClient.mapRequest(transform) })

  it("decodes 415 and 414 as the API's errors", async () => {
    const media = await Effect.runPromise(
      client(HttpClientRequest.setHeader("content-type", "text/plain")).pipe(
        Effect.flatMap((api) => Effect.flip(api.users.signIn({ payload: { email: "a@example.com", password: "correct horse battery" } }))),
        Effect.provide(FetchHttpClient.layer)
      )
    )
    expect(media).toBeInstanceOf(UnsupportedMediaType)
    const long = await Effect.runPromise(
      client(HttpClientRequest.setUrlParam("pad", "x".repeat(MAX_URL_LENGTH))).pipe(
        Effect.flatMap((api) => Effect.flip(api.system.health())),
        Effect.provide(FetchHttpClient.layer)
      )
    )
    expect(long).toBeInstanceOf(UriTooLong)
  })
})

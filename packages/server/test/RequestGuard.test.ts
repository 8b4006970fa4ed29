/**
 * platform/RequestGuard.ts and the request edge of platform/HttpErrors.ts on a probe API of their own, served by
 * Node as Server.ts serves (the router's global middleware), through real HTTP: the URL limit, the media types an
 * operation reads, per-endpoint body limits, JSON depth and NUL, a body that is not JSON, unknown routes (404, 405
 * with `Allow`), a rate limit's 429, SCIM's shapes under /scim/v2, and the headers every answer carries. What needs
 * the API's own groups (/v1/teams, /v1/auth, SCIM's handlers) is http/Errors.test.ts's and HostileInput.test.ts's.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { apiOf, InvalidRequestResponse, MAX_URL_LENGTH, MaxBodyBytes, RateLimited, RateLimitedResponse } from "@orgplane/schema"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as Schema from "effect/Schema"
import { HttpRouter, HttpServer } from "effect/http"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { createServer, request as nodeRequest } from "node:http"
import * as HttpErrors from "../src/platform/HttpErrors.js"
import { accepts, exceedsDepth, maxDepth, nulPaths, parseMediaType } from "../src/platform/RequestGuard.js"

const Text = Schema.Struct({ text: Schema.String })
const Positive = Schema.Struct({ n: Schema.Number.check(Schema.isGreaterThan(0)) })

class Probe extends HttpApiGroup.make("probe")
  .add(HttpApiEndpoint.post("plain", "/plain", { payload: Text, success: Text }))
  .add(HttpApiEndpoint.post("small", "/small", { payload: Text, success: Text }).annotate(MaxBodyBytes, 100))
  .add(HttpApiEndpoint.post("large", "/large", { payload: Text, success: Text }).annotate(MaxBodyBytes, 5_000))
  .add(HttpApiEndpoint.post("ping", "/ping", { success: Text }))
  .add(HttpApiEndpoint.get("read", "/read", { success: Text }))
  .add(HttpApiEndpoint.post("size", "/size", { payload: Text, success: Schema.Struct({ bytes: Schema.Number, text: Schema.String }) }))
  .add(HttpApiEndpoint.post("echo", "/echo", { payload: Positive, success: Positive }))
  .add(HttpApiEndpoint.get("item", "/items/:id", { params: { id: Schema.String }, success: Positive }))
  .add(HttpApiEndpoint.delete("removeItem", "/items/:id", { params: { id: Schema.String }, success: Positive }))
  .add(HttpApiEndpoint.get("limited", "/v1/limited", { success: Positive, error: [RateLimitedResponse] }))
  .add(HttpApiEndpoint.post("scimUsers", "/scim/v2/:connectionId/Users", { params: { connectionId: Schema.String }, payload: Text, success: Text }))
{}

const Api = apiOf(Probe)

const Handlers = HttpApiBuilder.group(Api, "probe", (handlers) =>
  handlers
    .handle("plain", ({ payload }) => Effect.succeed(payload))
    .handle("small", ({ payload }) => Effect.succeed(payload))
    .handle("large", ({ payload }) => Effect.succeed(payload))
    .handle("ping", () => Effect.succeed({ text: "pong" }))
    .handle("read", () => Effect.succeed({ text: "read" }))
    // What a handler reading the body as bytes gets, after the guard has read it.
    .handle("size", () =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        Effect.map(Effect.orDie(request.arrayBuffer), (buffer) => ({ bytes: buffer.byteLength, text: new TextDecoder().decode(buffer) }))))
    .handle("echo", ({ payload }) => Effect.succeed(payload))
    .handle("item", () => Effect.succeed({ n: 1 }))
    .handle("removeItem", () => Effect.succeed({ n: 1 }))
    .handle("limited", () => Effect.fail(RateLimited.after(7, "Too many requests; retry in 7 seconds.")))
    .handle("scimUsers", ({ payload }) => Effect.succeed(payload)))

const AppLayer = HttpApiBuilder.layer(Api).pipe(
  Layer.provide(Handlers),
  Layer.provide(HttpErrors.layerFor(Api, { maxBodyBytes: 1_000 })),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error"))
)

class Url extends Context.Service<Url, string>()("test/RequestGuard/Url") {}

const ServerUrl = Layer.effect(
  Url,
  Effect.gen(function*() {
    const context = yield* Layer.build(
      HttpRouter.serve(AppLayer, { disableLogger: true, disableListenLog: true }).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
      )
    )
    return HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address).replace(/\/$/, "")
  })
)

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
}

const decodeInvalid = Schema.decodeUnknownSync(Schema.toEncoded(InvalidRequestResponse))

const call = (path: string, init: RequestInit = {}) =>
  Effect.flatMap(Url, (url) =>
    Effect.promise(async (): Promise<Answer> => {
      const response = await fetch(`${url}${path}`, init)
      const text = await response.text()
      let body: unknown = text
      try {
        body = text === "" ? undefined : JSON.parse(text)
      } catch {
        // not JSON: kept as text
      }
      return { status: response.status, headers: response.headers, body }
    }))

const post = (path: string, bytes: number) =>
  Effect.map(call(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text: "x".repeat(bytes) }) }), (answer) => answer.status)

/** Bytes: no Content-Type unless one is given. */
const send = (path: string, body: string, contentType?: string) =>
  Effect.map(
    call(path, { method: "POST", body: new TextEncoder().encode(body), ...(contentType === undefined ? {} : { headers: { "content-type": contentType } }) }),
    ({ body, status }) => ({ status, body })
  )

/** A body announced by Content-Length of which only the start is sent, or sent in chunks without it: answered, not held. */
const postHostile = (path: string, mode: "announced" | "chunked", totalBytes: number) =>
  Effect.flatMap(Url, (url) =>
    Effect.promise(() =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const headers = mode === "announced"
          ? { "content-type": "application/json", "content-length": String(totalBytes) }
          : { "content-type": "application/json", "transfer-encoding": "chunked" }
        const request = nodeRequest(`${url}${path}`, { method: "POST", headers }, (response) => {
          let body = ""
          response.setEncoding("utf8")
          response.on("data", (chunk) => body += chunk)
          response.on("end", () => {
            resolve({ status: response.statusCode ?? 0, body })
            request.destroy()
          })
        })
        request.on("error", reject)
        request.write("{\"text\":\"")
        if (mode === "announced") return
        const chunk = "x".repeat(64 * 1024)
        let sent = 0
        const write = () => {
          while (sent < totalBytes) {
            sent += chunk.length
            if (!request.write(chunk)) return void request.once("drain", write)
          }
          request.end("\"}")
        }
        write()
      })
    ))

const json = JSON.stringify({ text: "hi" })

layer(ServerUrl, { timeout: 60_000 })("the request guard", (it) => {
  it.effect("an endpoint's MaxBodyBytes annotation replaces the default limit, both ways", () =>
    Effect.gen(function*() {
      expect(yield* post("/plain", 500)).toBe(200)
      expect(yield* post("/plain", 2_000)).toBe(413)
      expect(yield* post("/small", 500)).toBe(413)
      expect(yield* post("/small", 50)).toBe(200)
      expect(yield* post("/large", 2_000)).toBe(200)
      expect(yield* post("/large", 6_000)).toBe(413)
      expect((yield* send("/plain", JSON.stringify({ text: "x".repeat(2_000) }), "application/json")).body).toEqual({
        error: "payload_too_large",
        message: "The request body is larger than 1000 bytes."
      })
    }))

  it.effect("a body announced larger than the limit, or streamed past it without Content-Length, is 413 at once; the server keeps serving", () =>
    Effect.gen(function*() {
      const tooLarge = { error: "payload_too_large", message: "The request body is larger than 1000 bytes." }
      const announced = yield* postHostile("/plain", "announced", 10 * 1024 * 1024)
      expect([announced.status, JSON.parse(announced.body)]).toEqual([413, tooLarge])
      const chunked = yield* postHostile("/plain", "chunked", 10 * 1024 * 1024)
      expect([chunked.status, JSON.parse(chunked.body)]).toEqual([413, tooLarge])
      expect((yield* call("/read")).status).toBe(200)
    }))

  it.effect("an unknown route answers 404 without its body being read", () =>
    Effect.gen(function*() {
      expect(yield* post("/nowhere", 2_000)).toBe(404)
    }))

  it.effect("an operation reads the media types of its payload: JSON with parameters, any case, +json types", () =>
    Effect.gen(function*() {
      for (const type of ["application/json", "application/json; charset=utf-8", "Application/JSON;Charset=\"UTF-8\"", "application/merge-patch+json", "application/vnd.api+json; charset=utf8"]) {
        expect([type, yield* send("/plain", json, type)]).toEqual([type, { status: 200, body: { text: "hi" } }])
      }
    }))

  it.effect("anything else is 415 naming what it reads, before the body's size or content is looked at", () =>
    Effect.gen(function*() {
      const refused = (message: string) => ({ status: 415, body: { error: "unsupported_media_type", message } })
      expect(yield* send("/plain", "text=hi", "application/x-www-form-urlencoded")).toEqual(
        refused("This operation reads application/json, not \"application/x-www-form-urlencoded\".")
      )
      expect(yield* send("/plain", json, "text/plain")).toEqual(refused("This operation reads application/json, not \"text/plain\"."))
      expect(yield* send("/plain", json, "application/json; charset=iso-8859-1")).toEqual(
        refused("This operation reads application/json, not \"application/json; charset=iso-8859-1\" (JSON is read as UTF-8).")
      )
      expect(yield* send("/plain", json, "json")).toEqual(refused("This operation reads application/json, not \"json\"."))
      expect(yield* send("/plain", json, "text/json")).toEqual(refused("This operation reads application/json, not \"text/json\"."))
      // Larger than the endpoint's limit, or NUL-carrying: the media type is refused first.
      expect((yield* send("/small", "x".repeat(2_000), "text/plain")).status).toBe(415)
      // A body without Content-Type: 415 when there is one, the schema's 400 when it is empty.
      expect(yield* send("/plain", json)).toEqual(refused("This operation reads application/json; the request body came without a Content-Type."))
      const empty = yield* send("/plain", "")
      expect([empty.status, empty.body]).toEqual([400, expect.objectContaining({ error: "invalid_request" })])
    }))

  it.effect("an operation without a payload ignores the body and its media type; a GET has none to look at", () =>
    Effect.gen(function*() {
      expect(yield* send("/ping", "")).toEqual({ status: 200, body: { text: "pong" } })
      expect(yield* send("/ping", "whatever", "text/plain")).toEqual({ status: 200, body: { text: "pong" } })
      expect(yield* send("/ping", json, "application/json")).toEqual({ status: 200, body: { text: "pong" } })
      expect((yield* call("/read", { headers: { "content-type": "text/plain" } })).status).toBe(200)
    }))

  it.effect(`a URL over ${MAX_URL_LENGTH} characters is 414, known route or not; ${MAX_URL_LENGTH} pass`, () =>
    Effect.gen(function*() {
      const pad = (path: string, length: number) => `${path}?pad=${"x".repeat(length - path.length - 5)}`
      expect((yield* call(pad("/read", MAX_URL_LENGTH))).status).toBe(200)
      const long = yield* call(pad("/read", MAX_URL_LENGTH + 1))
      expect({ status: long.status, body: long.body }).toEqual({
        status: 414,
        body: { error: "uri_too_long", message: `The URL is ${MAX_URL_LENGTH + 1} characters long; at most ${MAX_URL_LENGTH} are accepted.` }
      })
      expect((yield* call(pad("/nowhere", MAX_URL_LENGTH + 1))).status).toBe(414)
    }))

  it.effect("hands a handler exactly the body's bytes, not the memory they were read into", () =>
    Effect.gen(function*() {
      const body = JSON.stringify({ text: "abc" })
      expect((yield* send("/size", body, "application/json")).body).toEqual({ bytes: body.length, text: body })
    }))

  it.effect(`a body nested deeper than ${maxDepth} levels is 400, before it is parsed`, () =>
    Effect.gen(function*() {
      const deep = yield* send("/large", "[".repeat(4_000), "application/json")
      expect(deep).toEqual({ status: 400, body: { error: "invalid_request", details: [{ path: [], message: `The request body is nested deeper than ${maxDepth} levels.` }] } })
    }))

  it.effect("NUL in a body member, a key, the query or a path parameter is 400 naming where", () =>
    Effect.gen(function*() {
      const nul = "Must not contain the NUL character (\\u0000)."
      expect(yield* send("/plain", JSON.stringify({ text: "a\u0000b" }), "application/json")).toEqual({
        status: 400,
        body: { error: "invalid_request", details: [{ path: ["text"], message: nul }] }
      })
      // An escaped backslash followed by u0000 is harmless text.
      expect((yield* send("/plain", "{\"text\":\"\\\\u0000\"}", "application/json")).body).toEqual({ text: "\\u0000" })
      const query = yield* call("/read?q=a%00b")
      expect([query.status, query.body]).toEqual([400, expect.objectContaining({ details: [{ path: ["q"], message: nul }] })])
      const param = yield* call("/items/a%00b")
      expect([param.status, param.body]).toEqual([400, expect.objectContaining({ details: [{ path: ["id"], message: nul }] })])
    }))

  it.effect("a body that is not JSON is 400 invalid_request, saying so", () =>
    Effect.gen(function*() {
      expect(yield* send("/plain", "{\"text\":", "application/json")).toEqual({
        status: 400,
        body: { error: "invalid_request", details: [{ path: [], message: "The request body is not valid JSON." }] }
      })
    }))
})

layer(ServerUrl, { timeout: 60_000 })("the request edge's answers", (it) => {
  it.effect("a request that fails its schema is a 400 invalid_request naming the member", () =>
    Effect.gen(function*() {
      const refused = yield* send("/echo", JSON.stringify({ n: -5 }), "application/json")
      expect(refused.status).toBe(400)
      const invalid = decodeInvalid(refused.body)
      expect(invalid.error).toBe("invalid_request")
      expect(invalid.details[0]?.path).toEqual(["n"])
      expect(yield* send("/echo", JSON.stringify({ n: 5 }), "application/json")).toEqual({ status: 200, body: { n: 5 } })
    }))

  it.effect("a path with other methods answers 405 listing them in Allow (HEAD with GET); OPTIONS is one more method it lacks", () =>
    Effect.gen(function*() {
      const put = yield* call("/echo", { method: "PUT" })
      expect(put.status).toBe(405)
      expect(put.headers.get("allow")).toBe("POST")
      expect(put.headers.get("x-content-type-options")).toBe("nosniff")
      expect(put.body).toEqual({ error: "method_not_allowed", message: "/echo does not take PUT; it takes POST." })
      const patch = yield* call("/items/it_1?x=1", { method: "PATCH" })
      expect(patch.status).toBe(405)
      expect(patch.headers.get("allow")).toBe("GET, HEAD, DELETE")
      expect(patch.body).toEqual({ error: "method_not_allowed", message: "/items/{id} does not take PATCH; it takes GET, HEAD, DELETE." })
      const options = yield* call("/read", { method: "OPTIONS" })
      expect([options.status, options.headers.get("allow")]).toEqual([405, "GET, HEAD"])
      const head = yield* call("/echo", { method: "HEAD" })
      expect([head.status, head.headers.get("allow")]).toEqual([405, "POST"])
      // A GET path answers HEAD with its GET route; an unknown path stays 404, without Allow.
      expect((yield* call("/items/it_1", { method: "HEAD" })).status).toBe(200)
      const unknown = yield* call("/nowhere", { method: "PUT" })
      expect([unknown.status, unknown.headers.get("allow"), unknown.body]).toEqual([404, null, {
        error: "not_found",
        message: "No route for PUT at this path: the API's routes are in its OpenAPI document (GET /openapi.json) and at /docs."
      }])
    }))

  it.effect("every answer says nosniff, a declared error too; /v1's also say Cache-Control: no-store", () =>
    Effect.gen(function*() {
      const refused = yield* send("/echo", JSON.stringify({ n: -5 }), "application/json")
      expect(refused.status).toBe(400)
      for (const answer of [yield* call("/read"), yield* call("/nowhere"), yield* call("/v1/limited"), yield* call("/v1/nowhere")]) {
        expect(answer.headers.get("x-content-type-options")).toBe("nosniff")
      }
      expect((yield* call("/read")).headers.get("cache-control")).toBeNull()
      expect((yield* call("/v1/limited")).headers.get("cache-control")).toBe("no-store")
      expect((yield* call("/v1/nowhere")).headers.get("cache-control")).toBe("no-store")
    }))

  it.effect("a rate limit answers 429 with Retry-After", () =>
    Effect.gen(function*() {
      const limited = yield* call("/v1/limited")
      expect([limited.status, limited.headers.get("retry-after"), limited.body]).toEqual([
        429,
        "7",
        { error: "rate_limited", message: "Too many requests; retry in 7 seconds." }
      ])
    }))

  it.effect("under /scim/v2 every refusal is a SCIM error of the same status, in application/scim+json", () =>
    Effect.gen(function*() {
      const scim = (status: number, extra: Record<string, unknown> = {}) => ({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
        status: String(status),
        ...extra,
        detail: expect.any(String)
      })
      const base = "/scim/v2/scim_1/Users"
      const tooLarge = yield* send(base, JSON.stringify({ text: "x".repeat(2_000) }), "application/json")
      expect(tooLarge).toEqual({ status: 413, body: scim(413) })
      expect((yield* send(base, json, "text/plain")).body).toEqual(scim(415))
      const invalid = yield* send(base, JSON.stringify({ text: 1 }), "application/json")
      expect(invalid).toEqual({ status: 400, body: scim(400, { scimType: "invalidSyntax" }) })
      expect((yield* send(base, "{", "application/json")).body).toEqual({ ...scim(400, { scimType: "invalidSyntax" }), detail: "The request body is not valid JSON." })
      const method = yield* call(base, { method: "DELETE" })
      expect([method.status, method.headers.get("content-type"), method.headers.get("allow"), method.body]).toEqual([405, "application/scim+json", "POST", scim(405)])
      const missing = yield* call("/scim/v2/scim_1/Nothing")
      expect([missing.status, missing.headers.get("content-type"), missing.body]).toEqual([404, "application/scim+json", scim(404)])
      expect(yield* send(base, json, "application/json")).toEqual({ status: 200, body: { text: "hi" } })
    }))
})

describe("the web-standard handler", () => {
  it("caps a streamed body without Content-Length, and holds the URL limit, NUL and the media type", async () => {
    const { dispose, handler } = HttpRouter.toWebHandler(AppLayer.pipe(Layer.provide(HttpServer.layerServices)), { disableLogger: true })
    try {
      const streamed = (bytes: number) =>
        new Request("http://localhost/plain", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: new ReadableStream({
            start(controller) {
              const encoder = new TextEncoder()
              controller.enqueue(encoder.encode("{\"text\":\""))
              for (let sent = 0; sent < bytes; sent += 100) controller.enqueue(encoder.encode("x".repeat(100)))
              controller.enqueue(encoder.encode("\"}"))
              controller.close()
            }
          }),
          duplex: "half"
        } as RequestInit)
      const refused = await handler(streamed(5_000))
      expect(refused.status).toBe(413)
      expect(await refused.json()).toEqual({ error: "payload_too_large", message: "The request body is larger than 1000 bytes." })
      const accepted = await handler(streamed(500))
      expect(accepted.status).toBe(200)
      expect((await accepted.json()).text).toHaveLength(500)
      const nul = await handler(new Request("http://localhost/plain", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text: "\u0000" }) }))
      expect(nul.status).toBe(400)
      // A string body without headers is text/plain to fetch's Request, so 415; the URL limit holds here too.
      const text = await handler(new Request("http://localhost/plain", { method: "POST", body: JSON.stringify({ text: "hi" }) }))
      expect([text.status, (await text.json()).error]).toEqual([415, "unsupported_media_type"])
      const long = await handler(new Request(`http://localhost/plain?pad=${"x".repeat(MAX_URL_LENGTH)}`, { method: "POST", body: "{}" }))
      expect([long.status, (await long.json()).error]).toEqual([414, "uri_too_long"])
    } finally {
      await dispose()
    }
  })

  it("a benchmark's server leaving out the guard and the headers (platform/Ablation.ts) has neither, and nothing else changes", async () => {
    const leaving = HttpApiBuilder.layer(Api).pipe(
      Layer.provide(Handlers),
      Layer.provide(HttpErrors.layerFor(Api, { maxBodyBytes: 1_000, leftOut: new Set(["guard", "headers"]) })),
      Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error"))
    )
    const { dispose, handler } = HttpRouter.toWebHandler(leaving.pipe(Layer.provide(HttpServer.layerServices)), { disableLogger: true })
    try {
      const nul = await handler(new Request("http://localhost/plain", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text: "\u0000" }) }))
      expect([nul.status, nul.headers.get("x-content-type-options")]).toEqual([200, null])
      const missing = await handler(new Request("http://localhost/nowhere"))
      expect([missing.status, (await missing.json()).error]).toEqual([404, "not_found"])
    } finally {
      await dispose()
    }
  })
})

describe("the checks", () => {
  it("media types: type/subtype in lower case with the charset, or nothing when it is not one", () => {
    expect(parseMediaType("Application/JSON; Charset=\"UTF-8\"")).toEqual({ essence: "application/json", charset: "utf-8" })
    expect(parseMediaType("text/plain")).toEqual({ essence: "text/plain", charset: undefined })
    for (const value of ["", "json", "application/", "/json", "application/json/x", "a b/c"]) expect([value, parseMediaType(value)]).toEqual([value, undefined])
    const isJson = (value: string) => accepts(["application/json"], parseMediaType(value)!)
    expect([isJson("application/json"), isJson("application/problem+json"), isJson("application/json;charset=utf8")]).toEqual([true, true, true])
    expect([isJson("application/json; charset=utf-16"), isJson("text/json"), isJson("application/jsonx"), isJson("application/+json")]).toEqual([false, false, false, false])
    expect(accepts(["text/plain"], parseMediaType("text/plain; charset=latin1")!)).toBe(true)
    expect(accepts(["multipart/form-data"], parseMediaType("multipart/form-data; boundary=x")!)).toBe(true)
  })

  it("depth counts brackets outside strings only, escaped quotes included", () => {
    expect(exceedsDepth("[[[]]]", 3)).toBe(false)
    expect(exceedsDepth("[[[[]]]]", 3)).toBe(true)
    expect(exceedsDepth(JSON.stringify({ a: "[[[[[[\"[[[[" }), 3)).toBe(false)
    expect(exceedsDepth(`{"a":"\\\\"}${"[".repeat(4)}`, 3)).toBe(true)
  })

  it("NUL paths name nested members and keys, and ignore harmless text", () => {
    expect(nulPaths({ a: [{ b: "x\u0000" }], c: "\\u0000", "k\u0000": 1 })).toEqual([["a", 0, "b"], ["k\u0000"]])
    expect(nulPaths(JSON.parse("{\"a\":\"\\\\u0000\"}"))).toEqual([])
  })
})

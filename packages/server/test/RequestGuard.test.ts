/**
 * The request guard on a probe API: the URL limit, the media types an operation reads, per-endpoint body limits,
 * and the web-standard handler's bodies.
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpBody,
  HttpClient,
  HttpClientRequest,
  HttpServer,
  HttpServerRequest
} from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import {
  InvalidRequestResponse,
  MAX_URL_LENGTH,
  MaxBodyBytes,
  PayloadTooLargeResponse,
  UnsupportedMediaTypeResponse,
  UriTooLongResponse
} from "@orgplane/schema"
import { Effect, Layer, Logger, LogLevel, Schema } from "effect"
import * as HttpErrors from "../src/platform/HttpErrors.js"
import { accepts, exceedsDepth, nulPaths, parseMediaType } from "../src/platform/RequestGuard.js"

const Text = Schema.Struct({ text: Schema.String })

class Probe extends HttpApiGroup.make("probe")
  .add(HttpApiEndpoint.post("plain", "/plain").setPayload(Text).addSuccess(Text))
  .add(HttpApiEndpoint.post("small", "/small").setPayload(Text).addSuccess(Text).annotate(MaxBodyBytes, 100))
  .add(HttpApiEndpoint.post("large", "/large").setPayload(Text).addSuccess(Text).annotate(MaxBodyBytes, 5_000))
  .add(HttpApiEndpoint.post("ping", "/ping").addSuccess(Text))
  .add(HttpApiEndpoint.get("read", "/read").addSuccess(Text))
  .add(HttpApiEndpoint.post("size", "/size").setPayload(Text).addSuccess(Schema.Struct({ bytes: Schema.Number, text: Schema.String })))
{}
class ProbeApi extends HttpApi.make("probe")
  .add(Probe)
  .addError(InvalidRequestResponse)
  .addError(PayloadTooLargeResponse)
  .addError(UnsupportedMediaTypeResponse)
  .addError(UriTooLongResponse)
{}

const ProbeLive = HttpErrors.group(ProbeApi, "probe", (handlers) =>
  handlers
    .handle("plain", ({ payload }) => Effect.succeed(payload))
    .handle("small", ({ payload }) => Effect.succeed(payload))
    .handle("large", ({ payload }) => Effect.succeed(payload))
    .handle("ping", () => Effect.succeed({ text: "pong" }))
    .handle("read", () => Effect.succeed({ text: "read" }))
    // What a handler reading the body as bytes gets, after the guard has read it.
    .handle("size", () =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        Effect.map(Effect.orDie(request.arrayBuffer), (buffer) => ({ bytes: buffer.byteLength, text: new TextDecoder().decode(buffer) })))))

const ProbeApp = Layer.mergeAll(
  HttpErrors.layerFor(ProbeApi, { maxBodyBytes: 1_000 }),
  HttpApiBuilder.api(ProbeApi).pipe(Layer.provide(ProbeLive)),
  Logger.minimumLogLevel(LogLevel.Warning)
)

const TestLayer = HttpApiBuilder.serve().pipe(Layer.provide(ProbeApp), Layer.provideMerge(NodeHttpServer.layerTest))

const post = (path: string, bytes: number) =>
  HttpClientRequest.post(path).pipe(
    HttpClientRequest.bodyUnsafeJson({ text: "x".repeat(bytes) }),
    HttpClient.execute,
    Effect.map((response) => response.status)
  )

describe("RequestGuard", () => {
  it.layer(TestLayer)((it) => {
    it.effect("an endpoint's MaxBodyBytes annotation replaces the default limit, both ways", () =>
      Effect.gen(function*() {
        expect(yield* post("/plain", 500)).toBe(200)
        expect(yield* post("/plain", 2_000)).toBe(413)
        expect(yield* post("/small", 500)).toBe(413)
        expect(yield* post("/small", 50)).toBe(200)
        expect(yield* post("/large", 2_000)).toBe(200)
        expect(yield* post("/large", 6_000)).toBe(413)
      }))

    it.effect("an unknown route answers 404 without its body being read", () =>
      Effect.gen(function*() {
        expect(yield* post("/nowhere", 2_000)).toBe(404)
      }))

    const send = (path: string, body: string, contentType?: string) =>
      HttpClientRequest.post(path).pipe(
        // Bytes: no Content-Type unless one is given.
        HttpClientRequest.setBody(HttpBody.raw(new TextEncoder().encode(body), contentType === undefined ? undefined : { contentType })),
        HttpClient.execute,
        Effect.flatMap((response) => Effect.map(response.json, (body: any) => ({ status: response.status, body })))
      )
    const json = JSON.stringify({ text: "hi" })

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
        expect([empty.status, empty.body.error]).toEqual([400, "invalid_request"])
      }))

    it.effect("an operation without a payload ignores the body and its media type; a GET has none to look at", () =>
      Effect.gen(function*() {
        expect(yield* send("/ping", "")).toEqual({ status: 200, body: { text: "pong" } })
        expect(yield* send("/ping", "whatever", "text/plain")).toEqual({ status: 200, body: { text: "pong" } })
        expect(yield* send("/ping", json, "application/json")).toEqual({ status: 200, body: { text: "pong" } })
        const read = yield* HttpClient.execute(HttpClientRequest.get("/read").pipe(HttpClientRequest.setHeader("content-type", "text/plain")))
        expect(read.status).toBe(200)
      }))

    it.effect(`a URL over ${MAX_URL_LENGTH} characters is 414, known route or not; ${MAX_URL_LENGTH} pass`, () =>
      Effect.gen(function*() {
        const get = (url: string) => Effect.flatMap(HttpClient.get(url), (response) => Effect.map(response.json, (body: any) => ({ status: response.status, body })))
        const pad = (path: string, length: number) => `${path}?pad=${"x".repeat(length - path.length - 5)}`
        expect((yield* get(pad("/read", MAX_URL_LENGTH))).status).toBe(200)
        expect(yield* get(pad("/read", MAX_URL_LENGTH + 1))).toEqual({
          status: 414,
          body: { error: "uri_too_long", message: `The URL is ${MAX_URL_LENGTH + 1} characters long; at most ${MAX_URL_LENGTH} are accepted.` }
        })
        expect((yield* get(pad("/nowhere", MAX_URL_LENGTH + 1))).status).toBe(414)
      }))
  })

  it.effect("hands a handler exactly the body's bytes, not the memory they were read into", () =>
    Effect.gen(function*() {
      const body = JSON.stringify({ text: "abc" })
      const response = yield* HttpClientRequest.post("/size").pipe(
        HttpClientRequest.bodyText(body, "application/json"),
        HttpClient.execute,
        Effect.flatMap((response) => response.json)
      )
      expect(response).toEqual({ bytes: body.length, text: body })
    }).pipe(Effect.provide(TestLayer)))

  it("the web-standard handler caps a streamed body without Content-Length", async () => {
    const { dispose, handler } = HttpApiBuilder.toWebHandler(Layer.merge(ProbeApp, HttpServer.layerContext))
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
})

describe("the checks", () => {
  it("media types: type/subtype in lower case with the charset, or nothing when it is not one", () => {
    expect(parseMediaType("Application/JSON; Charset=\"UTF-8\"")).toEqual({ essence: "application/json", charset: "utf-8" })
    expect(parseMediaType("text/plain")).toEqual({ essence: "text/plain", charset: undefined })
    for (const value of ["", "json", "application/", "/json", "application/json/x", "a b/c"]) expect([value, parseMediaType(value)]).toEqual([value, undefined])
    const json = (value: string) => accepts(["application/json"], parseMediaType(value)!)
    expect([json("application/json"), json("application/problem+json"), json("application/json;charset=utf8")]).toEqual([true, true, true])
    expect([json("application/json; charset=utf-16"), json("text/json"), json("application/jsonx"), json("application/+json")]).toEqual([false, false, false, false])
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

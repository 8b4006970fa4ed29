/** The request guard on a probe API: per-endpoint body limits, and the web-standard handler's bodies. */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpClient,
  HttpClientRequest,
  HttpServer
} from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { InvalidRequestResponse, MaxBodyBytes, PayloadTooLargeResponse } from "@orgplane/schema"
import { Effect, Layer, Logger, LogLevel, Schema } from "effect"
import * as HttpErrors from "../src/platform/HttpErrors.js"
import { exceedsDepth, nulPaths } from "../src/platform/RequestGuard.js"

const Text = Schema.Struct({ text: Schema.String })

class Probe extends HttpApiGroup.make("probe")
  .add(HttpApiEndpoint.post("plain", "/plain").setPayload(Text).addSuccess(Text))
  .add(HttpApiEndpoint.post("small", "/small").setPayload(Text).addSuccess(Text).annotate(MaxBodyBytes, 100))
  .add(HttpApiEndpoint.post("large", "/large").setPayload(Text).addSuccess(Text).annotate(MaxBodyBytes, 5_000))
{}
class ProbeApi extends HttpApi.make("probe").add(Probe).addError(InvalidRequestResponse).addError(PayloadTooLargeResponse) {}

const ProbeLive = HttpErrors.group(ProbeApi, "probe", (handlers) =>
  handlers
    .handle("plain", ({ payload }) => Effect.succeed(payload))
    .handle("small", ({ payload }) => Effect.succeed(payload))
    .handle("large", ({ payload }) => Effect.succeed(payload)))

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
  })

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
      const nul = await handler(new Request("http://localhost/plain", { method: "POST", body: JSON.stringify({ text: "\u0000" }) }))
      expect(nul.status).toBe(400)
    } finally {
      await dispose()
    }
  })
})

describe("the checks", () => {
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

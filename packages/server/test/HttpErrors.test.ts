/** Request-decoding failures are the caller's (400); response-encoding failures are the server's (500). */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { InvalidRequestResponse } from "@orgplane/schema"
import { Effect, Layer, Schema } from "effect"
import * as HttpErrors from "../src/platform/HttpErrors.js"

const Positive = Schema.Struct({ n: Schema.Number.pipe(Schema.positive()) })

class Probe extends HttpApiGroup.make("probe")
  .add(HttpApiEndpoint.get("broken", "/broken").addSuccess(Positive))
  .add(HttpApiEndpoint.post("echo", "/echo").setPayload(Positive).addSuccess(Positive))
{}
class ProbeApi extends HttpApi.make("probe").add(Probe).addError(InvalidRequestResponse) {}

const ProbeLive = HttpErrors.group(ProbeApi, "probe", (handlers) =>
  handlers
    .handle("broken", () => Effect.succeed({ n: -1 }))
    .handle("echo", ({ payload }) => Effect.succeed(payload)))

const TestLayer = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpErrors.layerFor(ProbeApi)),
  Layer.provide(HttpApiBuilder.api(ProbeApi).pipe(Layer.provide(ProbeLive))),
  Layer.provideMerge(NodeHttpServer.layerTest)
)

describe("HttpErrors", () => {
  it.layer(TestLayer)((it) => {
    it.effect("a response that fails its own schema is a 500, not the caller's fault", () =>
      Effect.gen(function*() {
        const response = yield* HttpClient.get("/broken")
        expect(response.status).toBe(500)
        expect(yield* response.json).toEqual({ error: "internal_error", message: "The server failed to handle this request." })
      }))

    it.effect("a request that fails its schema is a 400 invalid_request", () =>
      Effect.gen(function*() {
        const response = yield* HttpClientRequest.post("/echo").pipe(HttpClientRequest.bodyUnsafeJson({ n: -5 }), HttpClient.execute)
        expect(response.status).toBe(400)
        const body: any = yield* response.json
        expect(body.error).toBe("invalid_request")
        expect(body.details[0].path).toEqual(["n"])
      }))

    it.effect("a valid request passes through", () =>
      Effect.gen(function*() {
        const response = yield* HttpClientRequest.post("/echo").pipe(HttpClientRequest.bodyUnsafeJson({ n: 5 }), HttpClient.execute)
        expect(response.status).toBe(200)
        expect(yield* response.json).toEqual({ n: 5 })
      }))
  })
})

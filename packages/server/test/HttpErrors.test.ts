/**
 * Request-decoding failures are the caller's (400); response-encoding failures are the server's (500); a path with
 * other methods answers 405 with `Allow`, an unknown one 404; every answer says `nosniff`.
 */
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
  .add(HttpApiEndpoint.get("item", "/items/:id").addSuccess(Positive))
  .add(HttpApiEndpoint.del("removeItem", "/items/:id").addSuccess(Positive))
{}
class ProbeApi extends HttpApi.make("probe").add(Probe).addError(InvalidRequestResponse) {}

const ProbeLive = HttpErrors.group(ProbeApi, "probe", (handlers) =>
  handlers
    .handle("broken", () => Effect.succeed({ n: -1 }))
    .handle("echo", ({ payload }) => Effect.succeed(payload))
    .handle("item", () => Effect.succeed({ n: 1 }))
    .handle("removeItem", () => Effect.succeed({ n: 1 })))

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

    it.effect("a path with other methods answers 405 listing them in Allow (HEAD with GET); OPTIONS is one more method it lacks", () =>
      Effect.gen(function*() {
        const refused = (method: "PUT" | "PATCH" | "OPTIONS" | "HEAD" | "POST", path: string) =>
          HttpClient.execute(HttpClientRequest.make(method)(path))
        const put = yield* refused("PUT", "/echo")
        expect(put.status).toBe(405)
        expect(put.headers["allow"]).toBe("POST")
        expect(put.headers["x-content-type-options"]).toBe("nosniff")
        expect(yield* put.json).toEqual({ error: "method_not_allowed", message: "/echo does not take PUT; it takes POST." })
        const patch = yield* refused("PATCH", "/items/it_1?x=1")
        expect(patch.status).toBe(405)
        expect(patch.headers["allow"]).toBe("GET, HEAD, DELETE")
        expect(yield* patch.json).toEqual({ error: "method_not_allowed", message: "/items/it_1 does not take PATCH; it takes GET, HEAD, DELETE." })
        const options = yield* refused("OPTIONS", "/broken")
        expect([options.status, options.headers["allow"]]).toEqual([405, "GET, HEAD"])
        const head = yield* refused("HEAD", "/echo")
        expect([head.status, head.headers["allow"]]).toEqual([405, "POST"])
        // A GET path answers HEAD with its GET route; an unknown path stays 404, without Allow.
        expect((yield* refused("HEAD", "/items/it_1")).status).toBe(200)
        const unknown = yield* refused("PUT", "/nowhere")
        expect([unknown.status, unknown.headers["allow"]]).toEqual([404, undefined])
        expect((yield* unknown.json as Effect.Effect<any>).error).toBe("not_found")
      }))

    it.effect("a declared error says nosniff too (it is encoded after every middleware)", () =>
      Effect.gen(function*() {
        const response = yield* HttpClientRequest.post("/echo").pipe(HttpClientRequest.bodyUnsafeJson({ n: -5 }), HttpClient.execute)
        expect(response.status).toBe(400)
        expect(response.headers["x-content-type-options"]).toBe("nosniff")
      }))

    it.effect("a valid request passes through", () =>
      Effect.gen(function*() {
        const response = yield* HttpClientRequest.post("/echo").pipe(HttpClientRequest.bodyUnsafeJson({ n: 5 }), HttpClient.execute)
        expect(response.status).toBe(200)
        expect(yield* response.json).toEqual({ n: 5 })
      }))
  })
})

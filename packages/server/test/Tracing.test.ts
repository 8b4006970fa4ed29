/**
 * platform/Tracing.ts: the samplers' decisions (by a remote parent's trace id, or its flag), a local parent's decision
 * followed, a lone client span dropped; and the tracer layer from the environment: tracing off without an endpoint
 * or `ORGPLANE_TRACING`, on with either, off again with `OTEL_SDK_DISABLED`, and refusals naming their variable; the
 * trace header of an outbound call. The export itself is tested through HTTP (http/Traces.test.ts).
 */
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"
import { HttpClientRequest } from "effect/http"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "vitest"
import * as OtlpReceiver from "../../../packages/testkit/src/OtlpReceiver.js"
import * as Outbound from "../src/platform/Outbound.js"
import * as Tracing from "../src/platform/Tracing.js"

const remote = (traceId: string, sampled = true) => Option.some(Tracer.externalSpan({ traceId, spanId: "00f067aa0ba902b7", sampled }))

/** A trace id in the lowest share of the id space, and one in the highest. */
const low = "4bf92f3577b34da6a300000000000001"
const high = "4bf92f3577b34da6a3fffffffffffffe"

describe("Tracing.decide", () => {
  it("keeps a remote trace by its id's share under traceidratio, whatever the remote flag", () => {
    const sampling = { sampler: "traceidratio", ratio: 0.5 } as const
    expect(Tracing.decide(sampling, { parent: remote(low, false), kind: "server", sampled: true })).toBe(true)
    expect(Tracing.decide(sampling, { parent: remote(high, true), kind: "server", sampled: true })).toBe(false)
  })

  it("follows a remote parent's flag under the parentbased samplers, and the sampler for a new trace", () => {
    for (const sampler of ["parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"] as const) {
      expect(Tracing.decide({ sampler, ratio: 0 }, { parent: remote(high, true), kind: "server", sampled: true })).toBe(true)
      expect(Tracing.decide({ sampler, ratio: 1 }, { parent: remote(low, false), kind: "server", sampled: true })).toBe(false)
    }
    expect(Tracing.decide({ sampler: "parentbased_always_on", ratio: 1 }, { parent: Option.none(), kind: "server", sampled: true })).toBe(true)
    expect(Tracing.decide({ sampler: "parentbased_always_off", ratio: 1 }, { parent: Option.none(), kind: "server", sampled: true })).toBe(false)
    expect(Tracing.decide({ sampler: "parentbased_traceidratio", ratio: 0 }, { parent: Option.none(), kind: "server", sampled: true })).toBe(false)
    expect(Tracing.decide({ sampler: "parentbased_traceidratio", ratio: 1 }, { parent: Option.none(), kind: "server", sampled: true })).toBe(true)
  })

  it("follows a local parent's decision, and drops a client span that starts a trace", () => {
    const local = Tracer.nativeTracer.span({
      name: "request",
      parent: Option.none(),
      annotations: Effect.runSync(Effect.context<never>()),
      links: [],
      startTime: 0n,
      kind: "server",
      root: true,
      sampled: false
    })
    expect(Tracing.decide({ sampler: "always_on", ratio: 1 }, { parent: Option.some(local), kind: "client", sampled: false })).toBe(false)
    expect(Tracing.decide({ sampler: "always_on", ratio: 1 }, { parent: Option.none(), kind: "client", sampled: true })).toBe(false)
    expect(Tracing.decide({ sampler: "always_off", ratio: 1 }, { parent: remote(low, true), kind: "server", sampled: true })).toBe(false)
  })
})

/** Whether spans are made with the tracer layer built from `env`. */
const tracingOn = (env: Record<string, string>, tracing = false) =>
  Effect.runPromise(
    Effect.service(References.TracerEnabled).pipe(
      Effect.provide(Tracing.layer(tracing).pipe(Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))))
    )
  )

describe("Tracing.layer", () => {
  it("turns spans on with an OTLP endpoint or ORGPLANE_TRACING, and off otherwise", async () => {
    expect(await tracingOn({})).toBe(false)
    expect(await tracingOn({}, true)).toBe(true)
    expect(await tracingOn({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" })).toBe(true)
    expect(await tracingOn({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:9/v1/traces" })).toBe(true)
    expect(await tracingOn({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_SDK_DISABLED: "true" })).toBe(false)
    expect(await tracingOn({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_TRACES_EXPORTER: "none" })).toBe(false)
  })

  it("refuses an unknown sampler, a ratio out of range and an exporter it has not, naming the variable", async () => {
    await expect(tracingOn({ OTEL_TRACES_SAMPLER: "sometimes" }, true)).rejects.toThrow(/OTEL_TRACES_SAMPLER: must be always_on/)
    await expect(tracingOn({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" }, true)).rejects.toThrow(/OTEL_TRACES_SAMPLER_ARG/)
    await expect(tracingOn({ OTEL_TRACES_EXPORTER: "zipkin" })).rejects.toThrow(/OTEL_TRACES_EXPORTER/)
    await expect(tracingOn({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).rejects.toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/json or http\/protobuf/)
    await expect(tracingOn({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).rejects.toThrow(/OTEL_EXPORTER_OTLP_TRACES_PROTOCOL/)
  })
})

describe("an outbound call's trace header", () => {
  /** The headers of one call through the outbound guard, with tracing on or off. */
  const headersSent = async (tracing: boolean) => {
    let received: Http.IncomingHttpHeaders = {}
    const target = Http.createServer((request, response) => {
      received = request.headers
      response.end("ok")
    })
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve))
    try {
      const { port } = target.address() as AddressInfo
      await Effect.runPromise(
        Effect.flatMap(Outbound.Outbound, (outbound) => outbound.execute(HttpClientRequest.get(`http://127.0.0.1:${port}/`))).pipe(
          Effect.provide(Outbound.layer()),
          Effect.provideService(References.TracerEnabled, tracing)
        )
      )
      return received
    } finally {
      await new Promise((resolve) => target.close(resolve))
    }
  }

  it("is the W3C traceparent alone with tracing on, and none with tracing off", async () => {
    const on = await headersSent(true)
    expect(on["traceparent"]).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
    expect(on["b3"]).toBeUndefined()
    const off = await headersSent(false)
    expect([off["traceparent"], off["b3"]]).toEqual([undefined, undefined])
  })
})

describe("the export's body", () => {
  /** The content type of what the tracer layer built from `env` posts for one span, flushed when the layer closes. */
  const exported = async (env: Record<string, string>) => {
    const receiver = await OtlpReceiver.start()
    try {
      await Effect.runPromise(
        Effect.void.pipe(
          Effect.withSpan("one"),
          Effect.provide(
            Tracing.layer(false).pipe(
              Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...env } })))
            )
          )
        )
      )
      return receiver.requests.filter((request) => request.path === "/v1/traces").map((request) => request.contentType)
    } finally {
      await receiver.close()
    }
  }

  it("is OTLP/JSON, or protobuf when OTEL_EXPORTER_OTLP_PROTOCOL says http/protobuf", async () => {
    expect(await exported({})).toEqual(["application/json"])
    expect(await exported({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" })).toEqual(["application/x-protobuf"])
    expect(await exported({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json" })).toEqual(["application/json"])
  })
})

/**
 * Traces: the tracer a launched server installs (OTLP/HTTP export from the standard `OTEL_*` variables, with the
 * sampler they name), the span of each request (named by its operation, never by its URL), the span of each outbound
 * call (carrying the W3C `traceparent` of the current context), and whether a request's own `traceparent` is trusted.
 *
 * With neither an OTLP endpoint nor `ORGPLANE_TRACING`, `References.TracerEnabled` is false: no span is made at all.
 */
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"
import { constTrue } from "effect/Function"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpTraceContext from "effect/http/HttpTraceContext"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import * as OtlpTracer from "effect/observability/OtlpTracer"
import { VERSION } from "../Version.js"
import { invalidSetting } from "./Config.js"
import type { Routes } from "./Routes.js"

/** The samplers of `OTEL_TRACES_SAMPLER` this server knows (the OpenTelemetry SDK's names). */
export const samplers = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio"
] as const
export type SamplerName = typeof samplers[number]

export interface Sampling {
  readonly sampler: SamplerName
  /** The share of traces kept by the `traceidratio` samplers, from 0 to 1. */
  readonly ratio: number
}

export interface TracingSettings {
  readonly sampling: Sampling
  /** Adopt the `traceparent` of an incoming request as its span's parent (`ORGPLANE_TRACE_TRUST_REMOTE`). */
  readonly trustRemote: boolean
}

/** The documented environment variables of traces, for `serve --help` and the README. */
export const environment = [
  ["OTEL_EXPORTER_OTLP_ENDPOINT", "(unset)", "OTLP/HTTP collector base URL (say http://collector:4318); traces go to <endpoint>/v1/traces as JSON. Set (or the next one), the server exports its spans."],
  ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "(unset)", "Full URL traces are posted to, in place of <OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces."],
  ["OTEL_EXPORTER_OTLP_HEADERS", "(unset)", "Headers sent with each export, key=value,… (percent-encoded values), say an API key of the collector; OTEL_EXPORTER_OTLP_TRACES_HEADERS in its place for traces."],
  ["OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", "http/json or http/protobuf (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL in its place for traces); grpc is refused at start."],
  ["OTEL_TRACES_EXPORTER", "otlp", "otlp, or none to export nothing whatever the endpoint."],
  ["OTEL_SDK_DISABLED", "false", "true: export nothing (spans are still made with ORGPLANE_TRACING, for the log lines' trace ids)."],
  ["OTEL_SERVICE_NAME", "orgplane", "The exported spans' service.name."],
  ["OTEL_RESOURCE_ATTRIBUTES", "(unset)", "More resource attributes of the exported spans, key=value,… (say deployment.environment.name=prod)."],
  ["OTEL_TRACES_SAMPLER", "parentbased_always_on", "Which traces are kept: always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio; another value is refused at start."],
  ["OTEL_TRACES_SAMPLER_ARG", "1", "The share of traces the traceidratio samplers keep, from 0 to 1."],
  ["ORGPLANE_TRACE_TRUST_REMOTE", "false", "Adopt an incoming request's W3C traceparent as the parent of its span (only behind a proxy or gateway you control); otherwise each request starts its own trace."]
] as const

const samplerConfig: Config.Config<SamplerName> = Config.mapEffect(
  Config.String("OTEL_TRACES_SAMPLER").pipe(Config.withDefault("parentbased_always_on")),
  (raw) => {
    const value = raw.trim().toLowerCase()
    const found = samplers.find((name) => name === value)
    return found !== undefined
      ? Effect.succeed(found)
      : Effect.fail(invalidSetting("OTEL_TRACES_SAMPLER", `must be ${samplers.slice(0, -1).join(", ")} or ${samplers.at(-1)} (not ${JSON.stringify(raw)})`))
  }
)

const ratioConfig: Config.Config<number> = Config.mapEffect(
  Config.String("OTEL_TRACES_SAMPLER_ARG").pipe(Config.withDefault("1")),
  (raw) => {
    const ratio = Number(raw.trim())
    return raw.trim() !== "" && Number.isFinite(ratio) && ratio >= 0 && ratio <= 1
      ? Effect.succeed(ratio)
      : Effect.fail(invalidSetting("OTEL_TRACES_SAMPLER_ARG", "must be a number from 0 to 1"))
  }
)

const exporterConfig: Config.Config<ReadonlyArray<string>> = Config.mapEffect(
  Config.String("OTEL_TRACES_EXPORTER").pipe(Config.withDefault("otlp")),
  (raw) => {
    const names = raw.split(",").map((name) => name.trim().toLowerCase()).filter((name) => name !== "")
    return names.every((name) => name === "otlp" || name === "none")
      ? Effect.succeed(names)
      : Effect.fail(invalidSetting("OTEL_TRACES_EXPORTER", "must be otlp or none (this server exports traces over OTLP/HTTP only)"))
  }
)

const protocols = ["http/json", "http/protobuf"] as const

const protocolOf = (name: string) =>
  Config.mapEffect(Config.option(Config.String(name)), (raw) => {
    if (raw._tag === "None") return Effect.succeed(undefined)
    const value = raw.value.trim().toLowerCase()
    const found = protocols.find((protocol) => protocol === value)
    return found !== undefined
      ? Effect.succeed(found)
      : Effect.fail(invalidSetting(name, "must be http/json or http/protobuf (this server exports over OTLP/HTTP, not gRPC)"))
  })

/** The body of an export: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, else JSON. */
const protocolConfig: Config.Config<typeof protocols[number]> = Config.map(
  Config.all([protocolOf("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), protocolOf("OTEL_EXPORTER_OTLP_PROTOCOL")]),
  ([traces, all]) => traces ?? all ?? "http/json"
)

/**
 * The settings of traces this module reads itself; the exporter's own (`OTEL_EXPORTER_OTLP_*`) are read by Effect's
 * `OtlpTracer.layerFromConfig`.
 */
export const tracingConfig: Config.Config<
  TracingSettings & { readonly exporters: ReadonlyArray<string>; readonly protocol: typeof protocols[number] }
> = Config.all({
  sampler: samplerConfig,
  ratio: ratioConfig,
  trustRemote: Config.Boolean("ORGPLANE_TRACE_TRUST_REMOTE").pipe(Config.withDefault(false)),
  exporters: exporterConfig,
  protocol: protocolConfig
}).pipe(Config.map(({ exporters, protocol, ratio, sampler, trustRemote }) => ({ sampling: { sampler, ratio }, trustRemote, exporters, protocol })))

/** Where spans are exported (`<url> (<protocol>)`), for the start log; undefined: nowhere. */
export const ExportTarget = Context.Reference<string | undefined>("@orgplane/server/platform/Tracing/ExportTarget", {
  defaultValue: () => undefined
})

/** The URL spans are posted to: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`. */
const tracesEndpoint = Config.all([
  Config.option(Config.String("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
  Config.option(Config.String("OTEL_EXPORTER_OTLP_ENDPOINT"))
]).pipe(Config.map(([traces, all]) =>
  Option.getOrElse(traces, () => Option.match(all, { onNone: () => "", onSome: (base) => `${base.replace(/\/+$/, "")}/v1/traces` }))
))

/** Whether a request's `traceparent` is adopted (`ORGPLANE_TRACE_TRUST_REMOTE`): off, each request starts a trace of its own. */
export const TrustRemoteParent = Context.Reference<boolean>("@orgplane/server/platform/Tracing/TrustRemoteParent", {
  defaultValue: () => false
})

/** A trace id's share of the id space (its lower 56 bits), the same in every service that sees the trace. */
const traceIdShare = (traceId: string) => Number.parseInt(traceId.slice(-14), 16) / 2 ** 56

/** The ratio samplers' decision: by the trace id when there is one to read, else by chance (a new trace's id is random too). */
const byRatio = (ratio: number, parent: Tracer.AnySpan | undefined) =>
  parent === undefined || !/^[0-9a-f]{14,}$/i.test(parent.traceId) ? Math.random() < ratio : traceIdShare(parent.traceId) < ratio

type SpanOptions = Parameters<Tracer.Tracer["span"]>[0]

/**
 * Whether a new span is kept. A span inside one of this process (a statement inside a request) follows its parent,
 * as Effect decides it; a span starting a trace, or continuing a remote one, is the sampler's to decide. A client span
 * starting a trace (a statement or a call made outside any request or job: the durable engine's polling) is not kept:
 * alone, it tells nothing.
 */
export const decide = (sampling: Sampling, options: Pick<SpanOptions, "parent" | "kind" | "sampled">): boolean => {
  const parent = Option.getOrUndefined(options.parent)
  if (parent?._tag === "Span" || !options.sampled) return options.sampled
  if (parent === undefined && options.kind === "client") return false
  switch (sampling.sampler) {
    case "always_on":
      return true
    case "always_off":
      return false
    case "traceidratio":
      return byRatio(sampling.ratio, parent)
    case "parentbased_always_on":
      return parent === undefined ? true : parent.sampled
    case "parentbased_always_off":
      return parent === undefined ? false : parent.sampled
    case "parentbased_traceidratio":
      return parent === undefined ? byRatio(sampling.ratio, undefined) : parent.sampled
  }
}

/** `tracer`, its spans kept or not as `sampling` decides (Effect's tracers export the spans marked `sampled` only). */
export const sampled = (tracer: Tracer.Tracer, sampling: Sampling): Tracer.Tracer =>
  Tracer.make({
    span: (options) => tracer.span({ ...options, sampled: decide(sampling, options) }),
    ...(tracer.context === undefined ? {} : { context: tracer.context })
  })

/**
 * What Effect's OTLP tracer reads, with the OpenTelemetry defaults it lacks: `OTEL_TRACES_EXPORTER` is `otlp` and
 * `OTEL_SERVICE_NAME` `orgplane` (unless `OTEL_RESOURCE_ATTRIBUTES` names the service), `OTEL_SERVICE_VERSION` this
 * build's.
 */
const withDefaults = Effect.gen(function*() {
  const provider = yield* ConfigProvider.ConfigProvider
  const attributes = yield* Config.String("OTEL_RESOURCE_ATTRIBUTES").pipe(Config.withDefault(""))
  const named = (key: string) => new RegExp(`(^|,)\\s*${key.replace(".", "\\.")}\\s*=`).test(attributes)
  const defaults: Record<string, string> = { OTEL_TRACES_EXPORTER: "otlp" }
  if (!named("service.name")) defaults["OTEL_SERVICE_NAME"] = "orgplane"
  if (!named("service.version")) defaults["OTEL_SERVICE_VERSION"] = VERSION
  return ConfigProvider.orElse(provider, ConfigProvider.fromEnv({ env: defaults }))
})

/**
 * The tracer of a launched server (`RequestLog.layer` installs it in `Server.layer`, `makeWebHandler` and
 * `makeNodeListener`): with an OTLP endpoint configured (and neither `OTEL_SDK_DISABLED` nor `OTEL_TRACES_EXPORTER=none`),
 * Effect's OTLP tracer posting JSON (or protobuf, as `OTEL_EXPORTER_OTLP_PROTOCOL` says) with `fetch`, flushed when the server stops; else, with `ORGPLANE_TRACING`, Effect's
 * own tracer (spans made, nothing exported); else tracing off. `tracing` is `ORGPLANE_TRACING` as read (or given in code).
 */
export const layer = (tracing: boolean): Layer.Layer<never, Config.ConfigError> =>
  Layer.unwrap(
    Effect.gen(function*() {
      const settings = yield* tracingConfig
      const exporting = settings.exporters.includes("otlp")
      const serialization = settings.protocol === "http/protobuf" ? OtlpSerialization.layerProtobuf : OtlpSerialization.layerJson
      const provider = yield* withDefaults
      const built = exporting
        ? yield* Layer.build(OtlpTracer.layerFromConfig().pipe(Layer.provide([FetchHttpClient.layer, serialization]))).pipe(
          Effect.provideService(ConfigProvider.ConfigProvider, provider)
        )
        : Context.empty()
      const exporter = Context.getOrUndefined(built, Tracer.Tracer)
      if (exporter === undefined && !tracing) return Layer.succeed(References.TracerEnabled, false)
      const target = exporter === undefined ? undefined : `${yield* tracesEndpoint} (${settings.protocol})`
      return Layer.mergeAll(
        Layer.succeed(ExportTarget, target),
        Layer.succeed(Tracer.Tracer, sampled(exporter ?? Tracer.nativeTracer, settings.sampling)),
        Layer.succeed(TrustRemoteParent, settings.trustRemote),
        // The platform's own server span (named by the method, the whole URL recorded, any traceparent adopted) is
        // replaced by `requestSpan`.
        Layer.succeed(HttpMiddleware.TracerDisabledWhen, constTrue)
      )
    })
  )

/** What a request span is named when no route takes the request: one name, whatever the URL. */
export const unknownRoute = "unknown route"

const knownMethods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"])

/** The method as a span attribute: a standard one, or `_OTHER` (OpenTelemetry's name for the rest: a client chooses it). */
const methodAttribute = (method: string) => knownMethods.has(method) ? method : "_OTHER"

/** A 5xx answered: the request span ends as an error (OpenTelemetry's rule for server spans). */
class ServerErrorStatus extends Data.TaggedError("ServerErrorStatus")<{ readonly message: string }> {}

/**
 * The request's span, around the request edge: named by its route's operation (`Routes.Route.operation`: the
 * endpoint's `teams.create`; a route served beside the API, its path; an unknown route, `unknown route`), a child of
 * the request's `traceparent` only when `TrustRemoteParent`, with `http.request.method`, `http.route`, `http.response.status_code` and the
 * `orgplane.organization_id` the caller acts in (set by authentication). Nothing of the URL's values, headers or body.
 * With tracing off, the request runs as it is.
 */
export const requestSpan = (routes: Routes) =>
<E, R>(
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.withFiber((fiber) => {
    if (!fiber.getRef(References.TracerEnabled)) return httpEffect
    const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
    const route = routes.find(request.method, request.url)?.route
    const template = route?.template
    const name = route === undefined ? unknownRoute : route.operation
    const remote = fiber.getRef(TrustRemoteParent) ? Option.getOrUndefined(HttpTraceContext.w3c(request.headers)) : undefined
    const span = Effect.makeSpan(name, remote === undefined ? { kind: "server", root: true } : { kind: "server", parent: remote })
    return Effect.flatMap(span, (span) => {
      if (span.sampled) {
        span.attribute("http.request.method", methodAttribute(request.method))
        if (template !== undefined) span.attribute("http.route", template)
      }
      return Effect.withParentSpan(httpEffect, span).pipe(
        Effect.onExit((exit) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => {
              const now = clock.currentTimeNanosUnsafe()
              if (Exit.isFailure(exit)) return span.end(now, exit)
              const status = exit.value.status
              if (span.sampled) span.attribute("http.response.status_code", status)
              span.end(now, status >= 500 ? Exit.fail(new ServerErrorStatus({ message: `answered ${status}` })) : exit)
            })
          )
        )
      )
    })
  })

/** Records the organization the request acts in on its span (`orgplane.organization_id`); nothing with tracing off. */
export const annotateOrganization = (organizationId: string): Effect.Effect<void> =>
  Effect.annotateCurrentSpan("orgplane.organization_id", organizationId)

const defaultPorts: Record<string, number> = { "http:": 80, "https:": 443 }

/**
 * One outbound exchange (one hop of a redirect) in a client span `Outbound <METHOD>`, its request carrying the span as
 * its W3C `traceparent`: the method, the destination's scheme, host and port, and the status answered. Never its path
 * or query, which may carry credentials (a webhook's secret path, a token in the query). With tracing off, the
 * request carries no trace header (the HTTP client's own span would be a no-op one, sent as
 * `traceparent: 00-0000…noop-noop-00` and `b3: noop-noop-0`).
 */
export const outbound = <A extends { readonly status: number }, E, R>(
  request: HttpClientRequest.HttpClientRequest,
  send: (request: HttpClientRequest.HttpClientRequest) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    if (!fiber.getRef(References.TracerEnabled)) return Effect.provideService(send(request), HttpClient.TracerDisabledWhen, constTrue)
    const url = URL.canParse(request.url) ? new URL(request.url) : undefined
    const method = methodAttribute(request.method)
    return Effect.useSpan(`Outbound ${method}`, { kind: "client" }, (span) => {
      if (span.sampled) {
        span.attribute("http.request.method", method)
        if (url !== undefined) {
          span.attribute("url.scheme", url.protocol.slice(0, -1))
          span.attribute("server.address", url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname)
          const port = url.port === "" ? defaultPorts[url.protocol] : Number(url.port)
          if (port !== undefined) span.attribute("server.port", port)
        }
      }
      const traceparent = HttpTraceContext.toHeaders(span)["traceparent"]
      const carried = traceparent === undefined ? request : HttpClientRequest.setHeader(request, "traceparent", traceparent)
      // The client's own span would record the URL whole: this one stands in for it.
      return send(carried).pipe(
        Effect.provideService(HttpClient.TracerDisabledWhen, constTrue),
        Effect.tap((response) => Effect.sync(() => span.sampled && span.attribute("http.response.status_code", response.status)))
      )
    })
  })

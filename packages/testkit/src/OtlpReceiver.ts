/**
 * A loopback OTLP/HTTP receiver, what a collector is to the server's exporter: a real node:http server on 127.0.0.1
 * that takes OTLP/JSON (`POST /v1/traces`, `/v1/metrics`, `/v1/logs`), answers 200 as a collector does, and hands
 * the spans over flattened (their resource's attributes with each), with every body as received for searching.
 * A protobuf body is answered 415: the server's exporter sends JSON.
 */
import * as Http from "node:http"
import type * as Net from "node:net"
import { until } from "./Wait.js"

/** An OTLP `AnyValue`, as JSON carries it. */
interface AnyValue {
  readonly stringValue?: string
  readonly boolValue?: boolean
  readonly intValue?: string | number
  readonly doubleValue?: number | string
  readonly arrayValue?: { readonly values?: ReadonlyArray<AnyValue> }
  readonly kvlistValue?: { readonly values?: ReadonlyArray<KeyValue> }
}

interface KeyValue {
  readonly key: string
  readonly value: AnyValue
}

interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly startTimeUnixNano: string
  readonly endTimeUnixNano: string
  readonly attributes?: ReadonlyArray<KeyValue>
  readonly events?: ReadonlyArray<{ readonly name: string; readonly attributes?: ReadonlyArray<KeyValue> }>
  readonly status?: { readonly code?: number; readonly message?: string }
}

interface TracesData {
  readonly resourceSpans?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: ReadonlyArray<KeyValue> }
    readonly scopeSpans?: ReadonlyArray<{ readonly spans?: ReadonlyArray<OtlpSpan> }>
  }>
}

export type Attributes = Readonly<Record<string, unknown>>

/** OTLP's span kinds by number. */
const kinds = ["unspecified", "internal", "server", "client", "producer", "consumer"] as const

/** OTLP's status codes by number. */
const statuses = ["unset", "ok", "error"] as const

export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  /** Undefined for a trace's root (or a span whose parent is in another service). */
  readonly parentSpanId: string | undefined
  readonly name: string
  readonly kind: typeof kinds[number]
  readonly attributes: Attributes
  readonly events: ReadonlyArray<{ readonly name: string; readonly attributes: Attributes }>
  readonly status: { readonly code: typeof statuses[number]; readonly message: string | undefined }
  /** The attributes of the resource that sent it (`service.name`, ...). */
  readonly resource: Attributes
}

export interface Request {
  readonly path: string
  readonly contentType: string | undefined
  readonly headers: Http.IncomingHttpHeaders
  /** The body as received. */
  readonly body: string
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: an `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string
  /** Every span received, in order. */
  readonly spans: ReadonlyArray<ReceivedSpan>
  /** Every request received, in order (traces, metrics, logs, anything else). */
  readonly requests: ReadonlyArray<Request>
  /** The spans received so far, once `condition` holds of them (checked as spans arrive; fails after a while). */
  readonly waitFor: (what: string, condition: (spans: ReadonlyArray<ReceivedSpan>) => boolean) => Promise<ReadonlyArray<ReceivedSpan>>
  /** Forgets what was received. */
  readonly clear: () => void
  readonly close: () => Promise<void>
}

const valueOf = (value: AnyValue): unknown => {
  if (value.stringValue !== undefined) return value.stringValue
  if (value.boolValue !== undefined) return value.boolValue
  if (value.intValue !== undefined) return Number(value.intValue)
  if (value.doubleValue !== undefined) return Number(value.doubleValue)
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf)
  if (value.kvlistValue !== undefined) return attributesOf(value.kvlistValue.values)
  return undefined
}

const attributesOf = (list: ReadonlyArray<KeyValue> | undefined): Attributes =>
  Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]))

/** The spans of an OTLP/JSON `ExportTraceServiceRequest`. */
export const spansOf = (data: TracesData): ReadonlyArray<ReceivedSpan> =>
  (data.resourceSpans ?? []).flatMap(({ resource, scopeSpans }) => {
    const resourceAttributes = attributesOf(resource?.attributes)
    return (scopeSpans ?? []).flatMap(({ spans }) =>
      (spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId === undefined || span.parentSpanId === "" ? undefined : span.parentSpanId,
        name: span.name,
        kind: kinds[span.kind] ?? "unspecified",
        attributes: attributesOf(span.attributes),
        events: (span.events ?? []).map((event) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
        status: { code: statuses[span.status?.code ?? 0] ?? "unset", message: span.status?.message },
        resource: resourceAttributes
      }))
    )
  })

/** Starts a receiver on a free loopback port. */
export const start = async (): Promise<OtlpReceiver> => {
  let spans: Array<ReceivedSpan> = []
  let requests: Array<Request> = []

  const server = Http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const path = request.url ?? ""
      const contentType = request.headers["content-type"]
      requests.push({ path, contentType, headers: request.headers, body })
      if (request.method !== "POST") return void response.writeHead(405).end()
      if (!(contentType ?? "").startsWith("application/json")) return void response.writeHead(415).end()
      let data: unknown
      try {
        data = JSON.parse(body)
      } catch {
        return void response.writeHead(400).end()
      }
      if (path === "/v1/traces") spans = [...spans, ...spansOf(data as TracesData)]
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as Net.AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    get spans() {
      return spans
    },
    get requests() {
      return requests
    },
    waitFor: async (what, condition) => {
      await until(() => condition(spans), what)
      return spans
    },
    clear: () => {
      spans = []
      requests = []
    },
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}

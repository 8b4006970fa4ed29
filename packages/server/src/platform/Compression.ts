/**
 * Compressed answers. A JSON (or CSV, NDJSON) answer of `minimumBytes` or more is sent brotli- or gzip-compressed when
 * the request's `Accept-Encoding` takes one (`chooseCoding`), with `Vary: Accept-Encoding`: member pages, audit
 * pages, the catalog's lists. A smaller answer is sent as it is, having cost one length check: compressing a few
 * hundred bytes saves less than a packet and costs more than it saves (`pnpm bench --compression` has the figures).
 * A streamed answer of those types (the audit export, NDJSON or CSV) is compressed as it streams, whatever its size.
 * An answer that already names its coding (the OpenAPI document, the docs page's script: platform/Docs.ts) is left
 * alone.
 *
 * Brotli at quality 4 and gzip at level 5, the levels servers use for answers made per request (Cloudflare's
 * brotli, Caddy's gzip): within a few percent of the best sizes of JSON at a fraction of their time. A body up to
 * `inlineBytes` is compressed on the event loop, a larger one on libuv's thread pool.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Effect from "effect/Effect"
import * as HttpBody from "effect/http/HttpBody"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Zlib from "node:zlib"

/** The content codings this server sends: brotli, then gzip, for an equal preference. */
export type Coding = "br" | "gzip"

/**
 * The coding to send for `accept-encoding`, of those `available`: the one the client weighs highest (`q`, 1 when not
 * given; `*` stands for any coding not listed), brotli before gzip on a tie; undefined for none (the identity).
 */
export const chooseCoding = (header: string | undefined, available: ReadonlyArray<Coding> = ["br", "gzip"]): Coding | undefined => {
  const weights = new Map<string, number>()
  for (const entry of (header ?? "").split(",")) {
    const [coding, ...parameters] = entry.trim().toLowerCase().split(";").map((part) => part.trim())
    if (coding === undefined || coding === "") continue
    const q = parameters.find((parameter) => parameter.startsWith("q="))
    const weight = q === undefined ? 1 : Number(q.slice(2))
    weights.set(coding, Number.isFinite(weight) ? weight : 0)
  }
  let chosen: Coding | undefined
  let best = 0
  for (const coding of available) {
    const weight = weights.get(coding) ?? weights.get("*") ?? 0
    if (weight > best) {
      chosen = coding
      best = weight
    }
  }
  return chosen
}

/** The smallest answer compressed: 2 KiB (smaller ones fit a packet or two as they are). */
export const minimumBytes = 2048

/** JSON of any kind (`application/json`, `application/scim+json`, `application/problem+json`), CSV and NDJSON. */
const compressible = (contentType: string) =>
  /^application\/(?:[\w.-]+\+)?json\b/.test(contentType) || /^text\/csv\b/.test(contentType) || /^application\/x-ndjson\b/.test(contentType)

const brotliOptions = { params: { [Zlib.constants.BROTLI_PARAM_QUALITY]: 4, [Zlib.constants.BROTLI_PARAM_MODE]: Zlib.constants.BROTLI_MODE_TEXT } }
const gzipOptions = { level: 5 }

/**
 * Up to this size a body is compressed on the event loop (brotli at quality 4: about 60 µs for 15 KB): on the thread
 * pool the hand-over costs four times the compression itself (255 µs of CPU for the same 15 KB). Above it, on the
 * thread pool, so that no answer holds the event loop for long (64 KiB: about 250 µs there).
 */
export const inlineBytes = 65_536

/** `body` in `coding`: on the event loop up to `inlineBytes`, else on the thread pool. */
const encode = (coding: Coding, body: Uint8Array): Effect.Effect<Uint8Array> =>
  body.length <= inlineBytes
    ? Effect.sync(() => coding === "br" ? Zlib.brotliCompressSync(body, brotliOptions) : Zlib.gzipSync(body, gzipOptions))
    : Effect.callback<Uint8Array>((resume) => {
      const done = (error: Error | null, result: Buffer) => resume(error === null ? Effect.succeed(result) : Effect.die(error))
      if (coding === "br") Zlib.brotliCompress(body, brotliOptions, done)
      else Zlib.gzip(body, gzipOptions, done)
    })

/** A compressor of `coding`, for a streamed body. */
const compressor = (coding: Coding) => coding === "br" ? Zlib.createBrotliCompress(brotliOptions) : Zlib.createGzip(gzipOptions)

/** The body in `coding`: a stream as it streams, bytes at once; undefined for a body this module leaves alone. */
const encodedBody = (body: HttpBody.HttpBody, coding: Coding): Effect.Effect<HttpBody.HttpBody> =>
  body._tag === "Stream"
    ? Effect.succeed(HttpBody.stream(NodeStream.pipeThroughSimple(body.stream, () => compressor(coding)), body.contentType))
    : body._tag === "Uint8Array"
    ? Effect.map(encode(coding, body.body), (encoded) => HttpBody.uint8Array(encoded, body.contentType))
    : Effect.succeed(body)

/** Whether `response` is one to compress: JSON, CSV or NDJSON, streamed or of `minimumBytes` or more, not coded yet. */
const eligible = (request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) => {
  const body = response.body
  const sized = body._tag === "Stream" || (body._tag === "Uint8Array" && body.body.length >= minimumBytes)
  return sized && compressible(body.contentType ?? "") && response.headers["content-encoding"] === undefined && request.method !== "HEAD"
}

/** The response as sent to `request`: compressed as the module comment says, else as it is. */
export const compressed = (
  request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (!eligible(request, response)) return Effect.succeed(response)
  const varied = HttpServerResponse.setHeader(response, "vary", "accept-encoding")
  const coding = chooseCoding(request.headers["accept-encoding"])
  if (coding === undefined) return Effect.succeed(varied)
  return Effect.map(encodedBody(response.body, coding), (body) =>
    HttpServerResponse.setBody(HttpServerResponse.setHeader(varied, "content-encoding", coding), body))
}

/**
 * Transport hygiene, before routing and authentication: URL length, a path with one reading, the caller's
 * `Orgplane-Channel` and `Orgplane-Read-Only` values (CallerHeaders.ts), body media type and size, JSON nesting depth,
 * NUL characters.
 *
 * The guard is part of the router's global middleware (`HttpErrors.edge`), since an HttpApi middleware (HttpErrors'
 * `ApiErrors`) runs after routing. What it refuses it fails with, and `HttpErrors` answers (under `/scim/v2`, as a
 * SCIM error).
 */
import {
  channelHeader,
  channelOf,
  InvalidRequest,
  MAX_URL_LENGTH,
  MaxBodyBytes,
  PayloadTooLarge,
  RawBody,
  readOnlyHeader,
  readOnlyOf,
  UnsupportedMediaType,
  UriTooLong
} from "@orgplane/schema"
import * as ByteSize from "effect/ByteSize"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpMethod from "effect/http/HttpMethod"
import * as HttpServerError from "effect/http/HttpServerError"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as UrlParams from "effect/http/UrlParams"
import { Readable } from "node:stream"
import { pathAmbiguity, type Routes } from "./Routes.js"

/**
 * Deepest JSON nesting accepted. Effect's error formatting recurses over the value and overflows the stack at a few
 * thousand levels; no request of this API needs more than a handful.
 */
export const maxDepth = 64

/** Postgres refuses NUL in `text`; a request carrying one would otherwise fail as a 500 deep in a statement. */
const nulMessage = "Must not contain the NUL character (\\u0000)."

/** Enough to point at the problem without letting a hostile body inflate the error. */
const maxNulDetails = 10

type Path = ReadonlyArray<string | number>

export interface Options {
  /** Bytes of body accepted when the endpoint has no `MaxBodyBytes` annotation. */
  readonly maxBodyBytes: number
}

/** A `Content-Type` value read: `type/subtype` in lower case, and its charset parameter when it has one. */
export interface MediaType {
  readonly essence: string
  readonly charset: string | undefined
}

const token = "[!#$%&'*+.^_`|~0-9a-z-]+"
const essencePattern = new RegExp(`^${token}/${token}$`)

/** A `Content-Type` header's media type (RFC 9110 §8.3.1), or undefined when it is not one. */
export const parseMediaType = (value: string): MediaType | undefined => {
  const [type = "", ...parameters] = value.toLowerCase().split(";")
  const essence = type.trim()
  if (!essencePattern.test(essence)) return undefined
  let charset: string | undefined
  for (const parameter of parameters) {
    const equals = parameter.indexOf("=")
    if (equals !== -1 && parameter.slice(0, equals).trim() === "charset") charset = parameter.slice(equals + 1).trim().replace(/^"(.*)"$/, "$1")
  }
  return { essence, charset }
}

/** `application/json` and the structured-syntax `+json` types (`application/merge-patch+json`): JSON, whatever their name. */
export const isJson = (essence: string) => essence === "application/json" || /^application\/[^/]+\+json$/.test(essence)

/**
 * Whether a body of `media` is one an operation reading `accepted` (its payload's media types) decodes. JSON is read
 * as UTF-8 (RFC 8259 §8.1): a JSON type naming another charset is not accepted.
 */
export const accepts = (accepted: ReadonlyArray<string>, media: MediaType): boolean =>
  accepted.some((type) =>
    type === "application/json"
      ? isJson(media.essence) && (media.charset === undefined || media.charset === "utf-8" || media.charset === "utf8")
      : parseMediaType(type)?.essence === media.essence
  )

/** How the platform decodes a body of this media type (`HttpApiBuilder` picks the same way; without one, as JSON). */
type BodyKind = "json" | "multipart" | "form" | "text" | "bytes"

const bodyKind = (media: MediaType | undefined): BodyKind => {
  if (media === undefined || isJson(media.essence)) return "json"
  if (media.essence === "multipart/form-data") return "multipart"
  if (media.essence === "application/x-www-form-urlencoded") return "form"
  if (media.essence.startsWith("text/")) return "text"
  return "bytes"
}

/** `"text/plain"`, quoted and cut short: a header value sent back in a message. */
const quote = (value: string) => JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value)

const unsupported = (accepted: ReadonlyArray<string>, contentType: string | undefined, media: MediaType | undefined) => {
  const reads = `This operation reads ${accepted.join(" or ")}`
  if (contentType === undefined) return new UnsupportedMediaType({ message: `${reads}; the request body came without a Content-Type.` })
  const why = media !== undefined && isJson(media.essence) ? " (JSON is read as UTF-8)" : ""
  return new UnsupportedMediaType({ message: `${reads}, not ${quote(contentType.trim())}${why}.` })
}

const uriTooLong = (length: number) =>
  new UriTooLong({ message: `The URL is ${length} characters long; at most ${MAX_URL_LENGTH} are accepted.` })

/** Whether `text` opens more than `max` arrays or objects at once, counting only brackets outside strings. */
export const exceedsDepth = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // a backslash: the next character is escaped, even a quote
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > max) return true
    } else if (c === 93 || c === 125) depth--
  }
  return false
}

/** Paths of the strings (and keys) of a parsed JSON value that contain NUL; an explicit stack, so depth costs no stack. */
export const nulPaths = (value: unknown): Array<Path> => {
  const found: Array<Path> = []
  // A member whose key holds NUL is reported as such, in document order, without looking inside it.
  const stack: Array<readonly [value: unknown, path: Path, badKey: boolean]> = [[value, [], false]]
  while (stack.length > 0 && found.length < maxNulDetails) {
    const [current, path, badKey] = stack.pop()!
    if (badKey) {
      found.push(path)
    } else if (typeof current === "string") {
      if (current.includes("\0")) found.push(path)
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], [...path, i], false])
    } else if (typeof current === "object" && current !== null) {
      const members = Object.entries(current)
      for (let i = members.length - 1; i >= 0; i--) {
        const [key, member] = members[i]!
        stack.push([member, [...path, key], key.includes("\0")])
      }
    }
  }
  return found
}

/** Names of the url-encoded parameters whose name or value contains NUL. */
const nulParams = (encoded: string): Array<Path> => {
  const names = new Set<string>()
  for (const [key, value] of new URLSearchParams(encoded)) {
    if (key.includes("\0") || value.includes("\0")) names.add(key)
    if (names.size >= maxNulDetails) break
  }
  return [...names].map((name) => [name])
}

const nulRequest = (paths: ReadonlyArray<Path>) =>
  new InvalidRequest({ details: paths.map((path) => ({ message: nulMessage, path })) })

/** NUL in the query string or in a path parameter. Costs one `indexOf` when there is none, as for almost every request. */
const urlNuls = (routes: Routes, method: string, url: string): Array<Path> => {
  const nul = url.indexOf("%00")
  if (nul === -1) return []
  const query = url.indexOf("?")
  const inQuery = query === -1 ? [] : nulParams(url.slice(query + 1))
  if (query !== -1 && nul > query) return inQuery
  const params = routes.find(method, url)?.params ?? {}
  const inPath = Object.entries(params).filter(([, value]) => value?.includes("\0")).map(([name]) => [name])
  return [...inPath, ...inQuery]
}

/**
 * Reads a Node request body up to `limit` bytes; `undefined` when it is longer. Past the limit the rest is drained
 * and dropped instead of destroying the stream (which the platform's own `MaxBodySize` does): destroying resets the
 * connection, and the client never sees the 413.
 */
const readNode = (source: Readable, limit: number) =>
  Effect.callback<Uint8Array | undefined, unknown>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const stop = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    function onData(chunk: Buffer) {
      size += chunk.length
      if (size > limit) {
        stop()
        source.resume()
        resume(Effect.succeed(undefined))
      } else {
        chunks.push(chunk)
      }
    }
    function onEnd() {
      stop()
      resume(Effect.succeed(Buffer.concat(chunks, size)))
    }
    function onError(error: unknown) {
      stop()
      resume(Effect.fail(error))
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onError)
    return Effect.sync(stop)
  })

/** The same for any other request (a web `Request` in `makeWebHandler`): its stream, cancelled past the limit. */
const readStream = (request: HttpServerRequest.HttpServerRequest, limit: number): Effect.Effect<Uint8Array | undefined, unknown> => {
  if (request.source instanceof Request && request.source.body === null) return Effect.succeed(new Uint8Array())
  const chunks: Array<Uint8Array> = []
  let size = 0
  return Effect.map(
    Stream.runForEachWhile(request.stream, (chunk) =>
      Effect.sync(() => {
        chunks.push(chunk)
        size += chunk.length
        return size <= limit
      })),
    () => size > limit ? undefined : Buffer.concat(chunks, size)
  )
}

const readFailure = (request: HttpServerRequest.HttpServerRequest, cause: unknown) =>
  new HttpServerError.HttpServerError({ reason: new HttpServerError.RequestParseError({ request, cause }) })

const readBody = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number
): Effect.Effect<Uint8Array | undefined, HttpServerError.HttpServerError> => {
  const read = request.source instanceof Readable ? readNode(request.source, limit) : readStream(request, limit)
  return Effect.mapError(read, (cause) => readFailure(request, cause))
}

const decoder = new TextDecoder()

/** A body the guard read: its bytes, their text once decoded, and the request it came with. */
interface ReadBody {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly bytes: Uint8Array
  text: string | undefined
}

/** The bodies of the requests `withBody` made, by request. */
const readBodies = new WeakMap<object, ReadBody>()

/** The body of a request `withBody` made, or of a request made from one (through its prototypes). */
const readBodyOf = (request: object): ReadBody => {
  for (let at: object | null = request; at !== null; at = Object.getPrototypeOf(at)) {
    const body = readBodies.get(at)
    if (body !== undefined) return body
  }
  throw new Error("RequestGuard: a request made by withBody has no body")
}

const textOf = (body: ReadBody) => body.text ??= decoder.decode(body.bytes)

/**
 * The readers of a read body, the same functions for every request: V8 then gives the requests one shape, where
 * getters made for each request gave each its own (a sampling heap profile of POST /v1/teams: 2.5 KB a write).
 */
const readBodyReaders: PropertyDescriptorMap = {
  text: {
    get(this: object) {
      const body = readBodyOf(this)
      return Effect.sync(() => textOf(body))
    }
  },
  json: {
    get(this: object) {
      const body = readBodyOf(this)
      return Effect.try({
        try: (): unknown => textOf(body) === "" ? null : JSON.parse(textOf(body)),
        catch: (cause) => readFailure(body.request, cause)
      })
    }
  },
  urlParamsBody: {
    get(this: object) {
      const body = readBodyOf(this)
      return Effect.try({
        try: () => UrlParams.fromInput(new URLSearchParams(textOf(body))),
        catch: (cause) => readFailure(body.request, cause)
      })
    }
  },
  // A copy of exactly the body: a Node Buffer's `slice` shares (and `.buffer` exposes) its whole memory pool.
  arrayBuffer: {
    get(this: object) {
      const body = readBodyOf(this)
      return Effect.sync(() => new Uint8Array(body.bytes).buffer)
    }
  },
  stream: {
    get(this: object) {
      return Stream.succeed(readBodyOf(this).bytes)
    }
  }
}

/**
 * The request, with its body already read: the guard consumed the stream, so later readers (the payload decoder)
 * get these bytes instead. Everything else is the original request, through the prototype.
 */
const withBody = (
  request: HttpServerRequest.HttpServerRequest,
  bytes: Uint8Array,
  text: string | undefined,
  contentType: string | undefined
): HttpServerRequest.HttpServerRequest => {
  const made: HttpServerRequest.HttpServerRequest = Object.create(request, readBodyReaders)
  readBodies.set(made, { request, bytes, text })
  // The platform picks its decoder by the header's text: a `+json` type it would read as bytes is named as JSON.
  if (contentType !== undefined) {
    Object.defineProperty(made, "headers", { value: { ...request.headers, "content-type": contentType } })
  }
  return made
}

/** The checks of a body the platform will decode as JSON, form or text; `undefined` when it may pass. */
const checkBody = (kind: BodyKind, body: Uint8Array, text: string): InvalidRequest | undefined => {
  if (kind === "json") {
    if (exceedsDepth(text, maxDepth)) return InvalidRequest.field([], `The request body is nested deeper than ${maxDepth} levels.`)
    // Only a `\u0000` escape can put NUL in a JSON string (a raw one is invalid JSON); an escaped backslash
    // followed by `u0000` is harmless text, which the walk over the parsed value tells apart.
    if (!text.includes("\\u0000")) return undefined
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      return undefined // the payload decoder reports malformed JSON
    }
    const paths = nulPaths(parsed)
    return paths.length === 0 ? undefined : nulRequest(paths)
  }
  if (kind === "form") {
    const paths = text.includes("%00") ? nulParams(text) : []
    return paths.length === 0 ? undefined : nulRequest(paths)
  }
  if (kind === "text" && body.includes(0)) return nulRequest([[]])
  return undefined
}

/**
 * A request header of the caller's (CallerHeaders.ts) whose value the server does not take: refused rather than
 * ignored, since a client that asked for a read-only credential and got a full one would be worse off than refused.
 */
const callerHeaderRefusal = (headers: HttpServerRequest.HttpServerRequest["headers"]): InvalidRequest | undefined => {
  const channel = headers[channelHeader]
  if (channelOf(channel) === undefined) {
    return InvalidRequest.field(["headers", "Orgplane-Channel"], `Must be \`api\` or \`mcp\`, not ${quote(channel ?? "")}.`)
  }
  const readOnly = headers[readOnlyHeader]
  if (readOnlyOf(readOnly) === undefined) {
    return InvalidRequest.field(["headers", "Orgplane-Read-Only"], `Must be \`true\` or \`false\`, not ${quote(readOnly ?? "")}.`)
  }
  return undefined
}

const tooLarge = (limit: number) => new PayloadTooLarge({ message: `The request body is larger than ${limit} bytes.` })

/** What the guard refuses a request with: each is one of the API's declared errors, answered by `HttpErrors`. */
export type Refusal = InvalidRequest | PayloadTooLarge | UnsupportedMediaType | UriTooLong

/**
 * The request's target as the client sent it. The Node server reads an absolute-form target
 * (`GET http://host/v1/me`) through `new URL`, which resolves dot segments, drops a fragment and reads `\` as `/`
 * before `request.url` has it, while `originalUrl` keeps it as sent (and is `url` behind the scheme and host for the
 * usual origin form): the guard reads what was sent.
 */
export const sentTarget = (request: HttpServerRequest.HttpServerRequest) =>
  request.originalUrl.endsWith(request.url) ? request.url : request.originalUrl

/**
 * The guard, around the router. A request without a body pays a length check, one pass over its path (a path the
 * router would read otherwise than a proxy in front of it is 400: `Routes.pathAmbiguity`) and one `indexOf` on its
 * URL; one with a body (on a known route) has its media type checked against what the operation reads, and is read
 * here, capped at the endpoint's limit, checked, and handed on already read.
 *
 * Media types: an operation whose payload schema reads the body accepts its payload's media types (JSON, with
 * `+json` types and a UTF-8 charset, for every payload of this API); anything else is 415, and so is a non-empty
 * body without `Content-Type`, while an empty one passes (to the schema, which says what is missing). An operation
 * without a payload (and a raw-body endpoint, whose handler owns every check of what it reads) does not look at
 * the media type.
 */
export const make = (routes: Routes, options: Options) =>
<E, R>(
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E | Refusal | HttpServerError.HttpServerError, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const target = sentTarget(request)
    if (target.length > MAX_URL_LENGTH) return Effect.fail(uriTooLong(target.length))
    const ambiguity = pathAmbiguity(target)
    if (ambiguity !== undefined) return Effect.fail(InvalidRequest.field([], ambiguity))
    const nuls = urlNuls(routes, request.method, request.url)
    if (nuls.length > 0) return Effect.fail(nulRequest(nuls))
    const headerRefusal = callerHeaderRefusal(request.headers)
    if (headerRefusal !== undefined) return Effect.fail(headerRefusal)
    if (!HttpMethod.hasBody(request.method)) return httpEffect
    const match = routes.find(request.method, request.url)
    // An unknown route answers 404 (or 405) without its body being read.
    if (match === undefined) return httpEffect
    const accepted = match.route.mediaTypes
    const contentType = request.headers["content-type"]
    const media = contentType === undefined ? undefined : parseMediaType(contentType)
    if (accepted.length > 0 && contentType !== undefined && (media === undefined || !accepts(accepted, media))) {
      return Effect.fail(unsupported(accepted, contentType, media))
    }
    const limit = Context.getOrUndefined(match.route.annotations, MaxBodyBytes) ?? options.maxBodyBytes
    const capped = Effect.provideService(httpEffect, HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limit))
    const declared = request.headers["content-length"]
    if (declared !== undefined && Number(declared) > limit) return Effect.fail(tooLarge(limit))
    const kind = bodyKind(media)
    // A raw-body endpoint (a signed webhook) gets its bytes untouched: only the size is checked.
    const raw = Context.getOrUndefined(match.route.annotations, RawBody) !== undefined
    // Multipart parts are streamed by the platform, which enforces the same limit itself.
    if (kind === "multipart" && !raw) return capped
    return Effect.flatMap(readBody(request, limit), (body): Effect.Effect<HttpServerResponse.HttpServerResponse, E | Refusal, R> => {
      if (body === undefined) return Effect.fail(tooLarge(limit))
      if (accepted.length > 0 && contentType === undefined && body.length > 0) return Effect.fail(unsupported(accepted, contentType, media))
      const text = !raw && (kind === "json" || kind === "form") ? decoder.decode(body) : undefined
      const invalid = raw ? undefined : checkBody(kind, body, text ?? "")
      if (invalid !== undefined) return Effect.fail(invalid)
      // The platform reads the header's media type (lower-cased, parameters left out): only another JSON type (`+json`)
      // is renamed, and the headers copied for it.
      const decodedAs = !raw && kind === "json" && contentType !== undefined && media?.essence !== "application/json" ? "application/json" : undefined
      return Effect.provideService(capped, HttpServerRequest.HttpServerRequest, withBody(request, body, text, decodedAs))
    })
  })

/**
 * The one way out: every request the server makes to a third party goes through this guard, which bounds its
 * time and the size of its answer, refuses redirects to other origins, names us in `user-agent`, and fails with
 * one typed error that never carries a path, a query or credentials.
 */
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Cause, Chunk, Context, Data, Duration, Effect, Layer, Option, Runtime, Stream } from "effect"
import { VERSION } from "../Version.js"

export type OutboundReason = "timeout" | "network" | "too_large" | "blocked"

/**
 * A request that did not get a usable answer. `origin` is the scheme, host and port only: URLs can carry tokens
 * in their query or credentials in their user info, and this error ends up in logs.
 */
export class OutboundError extends Data.TaggedError("OutboundError")<{
  readonly reason: OutboundReason
  readonly origin: string
  readonly message: string
}> {}

export interface Settings {
  /** Longest a whole exchange may take: connecting, sending, the answer's headers and its whole body. */
  readonly timeout: Duration.DurationInput
  /** Largest answer body read, in bytes; a larger one fails with `too_large` and is not read further. */
  readonly maxBodyBytes: number
  /** Same-origin redirects followed before giving up (a renamed GitHub repository answers 301). */
  readonly maxRedirects: number
  readonly userAgent: string
}

export const defaults: Settings = {
  timeout: Duration.seconds(15),
  maxBodyBytes: 10 * 1024 * 1024,
  maxRedirects: 5,
  userAgent: `orgplane/${VERSION}`
}

/**
 * Who chose the destination. Operator-configured base URLs (GitHub, GitHub Enterprise Server, ...) are trusted.
 * `"user"` is the hook for destinations a user types (MCP servers): they need a DNS-resolving filter that
 * refuses private, loopback and link-local addresses, which does not exist yet, so they are refused outright
 * (`blocked`) until it does. See `allowPrivate`.
 */
export type Destination = "operator" | "user"

export interface RequestOptions {
  readonly timeout?: Duration.DurationInput | undefined
  readonly maxBodyBytes?: number | undefined
  readonly destination?: Destination | undefined
  /**
   * `false`: a redirect is not followed but fails with `blocked` (for requests carrying a credential meant for
   * the exact URL named, such as a worker runtime's). Default true (same-origin redirects only).
   */
  readonly followRedirects?: boolean | undefined
}

/** An answer read in full (within the size cap). */
export interface OutboundResponse {
  readonly status: number
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
  /** The URL that answered, after same-origin redirects. */
  readonly url: string
}

export interface OutboundService {
  readonly execute: (request: HttpClientRequest.HttpClientRequest, options?: RequestOptions) => Effect.Effect<OutboundResponse, OutboundError>
  /**
   * A web `fetch` over the same guard, for libraries that take one (`@octokit/request`). A guard failure
   * rejects with a `TypeError` (as `fetch` does for network errors) whose `cause` is the `OutboundError`.
   */
  readonly fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>
}

export class Outbound extends Context.Tag("@orgplane/server/Outbound")<Outbound, OutboundService>() {}

/** The scheme, host and port of a URL: all an error may say about where a request went. */
export const originOf = (url: string | URL) => {
  try {
    return new URL(url).origin
  } catch {
    return "(invalid url)"
  }
}

/**
 * Whether a destination may resolve to a private, loopback or link-local address. Operator-configured ones may
 * (a GitHub Enterprise Server on the company network); user-supplied ones may not, and since nothing checks
 * their addresses yet, they are not allowed at all.
 */
export const allowPrivate = (destination: Destination) => destination === "operator"

/** Only http(s), and for user-supplied destinations nothing at all yet (see `allowPrivate`). */
const checkDestination = (destination: Destination, url: string): Effect.Effect<URL, OutboundError> => {
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  if (parsed === undefined || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
    return Effect.fail(new OutboundError({ reason: "blocked", origin: originOf(url), message: "not an http(s) URL" }))
  }
  if (!allowPrivate(destination)) {
    return Effect.fail(new OutboundError({
      reason: "blocked",
      origin: parsed.origin,
      message: "user-supplied destinations are refused until an address filter exists"
    }))
  }
  return Effect.succeed(parsed)
}

const isRedirect = (status: number) => status === 301 || status === 302 || status === 303 || status === 307 || status === 308

/** Reads a body chunk by chunk and stops as soon as it passes the cap, so a huge answer costs at most the cap. */
const readCapped = (response: HttpClientResponse.HttpClientResponse, maxBytes: number, origin: string) => {
  // Made only when needed: an error captures a stack trace, which every answer would pay for.
  const tooLarge = () => new OutboundError({ reason: "too_large", origin, message: `response body larger than ${maxBytes} bytes` })
  const declared = Number(response.headers["content-length"])
  if (Number.isFinite(declared) && declared > maxBytes) return Effect.fail(tooLarge())
  return response.stream.pipe(
    Stream.mapError((error) => new OutboundError({ reason: "network", origin, message: `reading the response failed: ${error.reason}` })),
    Stream.runFoldEffect({ size: 0, chunks: Chunk.empty<Uint8Array>() }, (acc, chunk) => {
      const size = acc.size + chunk.length
      return size > maxBytes ? Effect.fail(tooLarge()) : Effect.succeed({ size, chunks: Chunk.append(acc.chunks, chunk) })
    }),
    Effect.map(({ chunks, size }) => {
      const body = new Uint8Array(size)
      let offset = 0
      for (const chunk of chunks) {
        body.set(chunk, offset)
        offset += chunk.length
      }
      return body
    })
  )
}

export const make = (settings: Partial<Settings> = {}): Effect.Effect<OutboundService, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const config = { ...defaults, ...settings }
    // Scoped requests: the scope's end aborts the request, so a timeout or a refused body frees its socket.
    const client = HttpClient.withScope(yield* HttpClient.HttpClient)
    // `fetch` runs in the layer's runtime: the same clock (so the same timeouts) as `execute`.
    const runtime = yield* Effect.runtime<never>()

    const once = (request: HttpClientRequest.HttpClientRequest, maxBytes: number, origin: string) =>
      client.execute(request).pipe(
        Effect.mapError((error) =>
          new OutboundError({
            reason: "network",
            origin,
            message: error._tag === "RequestError" ? `request failed (${error.reason})` : `response failed (${error.reason})`
          })
        ),
        Effect.flatMap((response) =>
          isRedirect(response.status)
            ? Effect.succeed({ status: response.status, headers: response.headers, body: new Uint8Array(0) })
            : Effect.map(readCapped(response, maxBytes, origin), (body) => ({ status: response.status, headers: response.headers, body }))
        ),
        Effect.scoped
      )

    const execute = (request: HttpClientRequest.HttpClientRequest, options: RequestOptions = {}) =>
      Effect.flatMap(checkDestination(options.destination ?? "operator", request.url), (first) => {
        const origin = first.origin
        const maxBytes = options.maxBodyBytes ?? config.maxBodyBytes
        const timeout = options.timeout ?? config.timeout
        const loop = (current: HttpClientRequest.HttpClientRequest, redirects: number): Effect.Effect<OutboundResponse, OutboundError> =>
          Effect.flatMap(once(current, maxBytes, origin), (response) => {
            const location = response.headers["location"]
            if (isRedirect(response.status) && options.followRedirects === false) {
              return Effect.fail(new OutboundError({ reason: "blocked", origin, message: `answered a redirect (${response.status}), which is not followed` }))
            }
            if (!isRedirect(response.status) || location === undefined) return Effect.succeed({ ...response, url: current.url })
            const next = URL.canParse(location, current.url) ? new URL(location, current.url) : undefined
            // Following another origin would carry our credentials (or our trust) somewhere the operator never named.
            if (next === undefined || next.origin !== origin) {
              return Effect.fail(new OutboundError({ reason: "blocked", origin, message: `redirect to another origin (${next?.origin ?? "invalid"})` }))
            }
            if (redirects >= config.maxRedirects) {
              return Effect.fail(new OutboundError({ reason: "blocked", origin, message: `more than ${config.maxRedirects} redirects` }))
            }
            // As browsers do: a 303, or a 301/302 answering a POST, is followed with a GET without the body.
            const toGet = response.status === 303 || ((response.status === 301 || response.status === 302) && current.method === "POST")
            const followed = toGet ? HttpClientRequest.get(next, { headers: current.headers }) : HttpClientRequest.setUrl(current, next)
            return loop(followed, redirects + 1)
          })
        return loop(HttpClientRequest.setHeader(request, "user-agent", config.userAgent), 0).pipe(
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () => new OutboundError({ reason: "timeout", origin, message: `no complete answer within ${Duration.format(Duration.decode(timeout))}` })
          })
        )
      })

    const fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
      const request = await toClientRequest(input, init)
      const exit = await Runtime.runPromiseExit(runtime, execute(request), init.signal ? { signal: init.signal } : undefined)
      if (exit._tag === "Failure") {
        // Only the guard's own failures are expected; anything else (a defect, an interruption) is not a network error.
        const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
        if (failure !== undefined) throw new TypeError(`fetch failed: ${failure.message}`, { cause: failure })
        if (init.signal?.aborted) throw init.signal.reason ?? new DOMException("The operation was aborted.", "AbortError")
        throw new TypeError("fetch failed")
      }
      const answer = exit.value
      const nullBody = answer.status === 204 || answer.status === 205 || answer.status === 304 || request.method === "HEAD"
      const response = new Response(nullBody ? null : (answer.body as Uint8Array<ArrayBuffer>), { status: answer.status, headers: answer.headers })
      Object.defineProperty(response, "url", { value: answer.url })
      return response
    }

    return { execute, fetch }
  })

/** A web `fetch` call as an Effect request: the method, URL, headers and a body given as text or bytes. */
const toClientRequest = async (input: string | URL | Request, init: RequestInit) => {
  const source = input instanceof Request ? input : undefined
  const url = source ? source.url : input.toString()
  const method = (init.method ?? source?.method ?? "GET").toUpperCase() as HttpClientRequest.HttpClientRequest["method"]
  const headers = new Headers(source?.headers)
  new Headers(init.headers).forEach((value, name) => headers.set(name, value))
  let request = HttpClientRequest.make(method)(url).pipe(HttpClientRequest.setHeaders(Object.fromEntries(headers)))
  const body = init.body ?? (source && source.body ? new Uint8Array(await source.arrayBuffer()) : undefined)
  if (body === undefined || body === null) return request
  const contentType = headers.get("content-type") ?? undefined
  if (typeof body === "string") request = HttpClientRequest.bodyText(request, body, contentType)
  else if (body instanceof URLSearchParams) request = HttpClientRequest.bodyText(request, body.toString(), contentType ?? "application/x-www-form-urlencoded")
  else if (body instanceof ArrayBuffer) request = HttpClientRequest.bodyUint8Array(request, new Uint8Array(body), contentType)
  else if (ArrayBuffer.isView(body)) request = HttpClientRequest.bodyUint8Array(request, new Uint8Array(body.buffer, body.byteOffset, body.byteLength), contentType)
  else throw new TypeError("this fetch sends text or bytes only")
  return request
}

/** The guard over a client provided by the caller (tests, or another transport). */
export const layerWithoutClient = (settings: Partial<Settings> = {}) => Layer.effect(Outbound, make(settings))

/**
 * The guard over node:http (which follows no redirect by itself: the guard decides), with connections kept
 * alive: without it every request to GitHub would pay a new TCP and TLS handshake.
 */
export const layer = (settings: Partial<Settings> = {}) =>
  layerWithoutClient(settings).pipe(
    Layer.provide(NodeHttpClient.layerWithoutAgent),
    Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: true, maxSockets: 16 }))
  )

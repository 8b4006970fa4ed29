/**
 * The one way out: every request the server makes to a third party goes through this guard, which bounds its
 * time and the size of its answer, names us in `user-agent`, traces each exchange (`Tracing.outbound`: the span and
 * its `traceparent`), and fails with one typed error that never carries a path, a query or credentials.
 * Operator-configured destinations follow same-origin redirects only; user-supplied ones must be public
 * (AddressGuard), are connected to the address checked, and follow redirects hop by hop under the reference's rules
 * (see `Destination`).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { InvalidRequest } from "@orgplane/schema"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpHeaders from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpMethod from "effect/http/HttpMethod"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as Dns from "node:dns"
import * as Http from "node:http"
import * as Net from "node:net"
import { VERSION } from "../Version.js"
import { AddressResolver, blockedReason, system as systemResolver } from "./AddressGuard.js"
import * as Tracing from "./Tracing.js"

export type OutboundReason = "timeout" | "network" | "too_large" | "blocked"

/**
 * A request that did not get a usable answer. `origin` is the scheme, host and port only: URLs can carry tokens
 * in their query or credentials in their user info, and this error ends up in logs.
 */
export class OutboundError extends Data.TaggedError("OutboundError")<{
  readonly reason: OutboundReason
  readonly origin: string
  readonly message: string
  /** The system's error code when there is one (`ECONNREFUSED`, `ENOTFOUND`, `CERT_HAS_EXPIRED`, ...), for diagnostics. */
  readonly code?: string | undefined
}> {}

/** The first `code` of a Node system error in a chain of causes (or an AggregateError's errors). */
export const systemCodeOf = (error: unknown): string | undefined => {
  const queue: Array<unknown> = [error]
  for (let seen = 0; queue.length > 0 && seen < 10; seen++) {
    const current = queue.shift()
    if (current === null || typeof current !== "object") continue
    const code: unknown = Reflect.get(current, "code")
    if (typeof code === "string" && /^[A-Z][A-Z0-9_]+$/.test(code)) return code
    queue.push(Reflect.get(current, "cause"))
    const errors: unknown = Reflect.get(current, "errors")
    if (Array.isArray(errors)) queue.push(...errors)
  }
  return undefined
}

export interface Settings {
  /** Longest a whole exchange may take: connecting, sending, the answer's headers and its whole body. */
  readonly timeout: Duration.Input
  /** Largest answer body read, in bytes; a larger one fails with `too_large` and is not read further. */
  readonly maxBodyBytes: number
  /** Same-origin redirects followed before giving up (a renamed GitHub repository answers 301). */
  readonly maxRedirects: number
  readonly userAgent: string
  /**
   * Private mode (`ORGPLANE_OUTBOUND_ALLOW_PRIVATE`): user-supplied destinations may reach any address over http
   * or https; only the scheme, credential and redirect rules remain (names are still resolved once and pinned).
   */
  readonly allowPrivate: boolean
}

export const defaults: Settings = {
  timeout: Duration.seconds(15),
  maxBodyBytes: 10 * 1024 * 1024,
  maxRedirects: 5,
  userAgent: `orgplane/${VERSION}`,
  allowPrivate: false
}

/**
 * Who chose the destination. Operator-configured base URLs (GitHub, GitHub Enterprise Server, ...) are trusted:
 * any address, same-origin redirects only. `"user"`: a URL a user or a worker token supplied (MCP servers, worker
 * runtimes): https only, no credentials in the URL, every address of the host public (`AddressGuard`), the
 * connection pinned to the address checked, redirects re-checked hop by hop (see the server README, "Outbound
 * requests"). Private mode (`Settings.allowPrivate`) keeps only the scheme, credential and redirect rules.
 */
export type Destination = "operator" | "user"

export interface RequestOptions {
  readonly timeout?: Duration.Input | undefined
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
  /**
   * A web `fetch` with these options: `fetchWith({ destination: "user" })` for libraries calling user-supplied
   * URLs (the MCP SDK's transport and auth helpers), with the same checks, pinning, redirect rules, cap and timeout.
   */
  readonly fetchWith: (options: RequestOptions) => (input: string | URL | Request, init?: RequestInit) => Promise<Response>
  /**
   * The checks a user-supplied URL gets before its first request (http(s), no credentials; unless private mode,
   * https and every address of its host public), without sending anything: for refusing a URL when it is stored
   * rather than when it is first used. Fails with `blocked` ("The outbound URL is not allowed: …") or `network`
   * (its host has no address, or resolving it failed).
   */
  readonly checkUser: (url: string) => Effect.Effect<void, OutboundError>
}

export class Outbound extends Context.Service<Outbound, OutboundService>()("@orgplane/server/platform/Outbound") {}

/** The scheme, host and port of a URL: all an error may say about where a request went. */
export const originOf = (url: string | URL) => {
  try {
    return new URL(url).origin
  } catch {
    return "(invalid url)"
  }
}

/** Only http(s): the check every destination gets. */
const checkScheme = (url: string): Effect.Effect<URL, OutboundError> => {
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  if (parsed === undefined || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
    return Effect.fail(new OutboundError({ reason: "blocked", origin: originOf(url), message: "not an http(s) URL" }))
  }
  return Effect.succeed(parsed)
}

/** The start of every `blocked` message about a user-supplied destination, as the reference words it. */
export const notAllowed = "The outbound URL is not allowed"

/**
 * A user-supplied URL checked when it is stored (`checkUser`), as a 400 on the request member at `path`; nothing to
 * check in private mode (the schema has checked scheme and credentials, and every address is allowed).
 */
export const checkUserMember = (outbound: OutboundService, allowPrivate: boolean, path: ReadonlyArray<string>, url: string) =>
  allowPrivate
    ? Effect.void
    : Effect.mapError(outbound.checkUser(url), (error) =>
      InvalidRequest.field(
        path,
        error.reason === "blocked" ? error.message : `${notAllowed}: ${new URL(url).hostname.slice(0, 100)} could not be resolved`
      ))

const refuse = (url: URL, why: string) => new OutboundError({ reason: "blocked", origin: url.origin, message: `${notAllowed}: ${why}` })

/** The address a connection to a user-supplied destination must use; undefined for an IP literal (nothing to look up). */
type Pin = string | undefined

/** A lookup that answers every name with the address already checked, so DNS cannot change between check and connect. */
const pinnedLookup = (address: string): Net.LookupFunction => {
  const family = Net.isIPv6(address) ? 6 : 4
  return (_hostname: string, options: Dns.LookupOptions, callback: (error: NodeJS.ErrnoException | null, address: string | Array<Dns.LookupAddress>, family?: number) => void) => {
    if (options.all) callback(null, [{ address, family }])
    else callback(null, address, family)
  }
}

/**
 * Header names that carry credentials or session state: dropped when a redirect leaves the origin they were meant
 * for (the reference's list: these names, and any name with a `-`/`_`-separated segment api-key, apikey, token,
 * session or resume).
 */
export const isCredentialHeader = (name: string) => {
  const lower = name.toLowerCase()
  if (["authorization", "cookie", "proxy-authorization", "mcp-session-id", "last-event-id"].includes(lower)) return true
  const segments = lower.split(/[-_]/)
  return segments.some((segment, i) =>
    segment === "apikey" || segment === "token" || segment === "session" || segment === "resume" || (segment === "api" && segments[i + 1] === "key")
  )
}

const isRedirect = (status: number) => status === 301 || status === 302 || status === 303 || status === 307 || status === 308

/**
 * What went wrong, in the words outbound failures' messages keep (`Transport`, `Encode`, `InvalidUrl`, `StatusCode`,
 * `Decode`, `EmptyBody`): the reason's class (`TransportError`, ...) without its `Error`.
 */
const reasonOf = (error: HttpClientError.HttpClientError) => error.reason._tag.replace(/Error$/, "")

/** Reads a body chunk by chunk and stops as soon as it passes the cap, so a huge answer costs at most the cap. */
const readCapped = (response: HttpClientResponse.HttpClientResponse, maxBytes: number, origin: string) => {
  // Made only when needed: an error captures a stack trace, which every answer would pay for.
  const tooLarge = () => new OutboundError({ reason: "too_large", origin, message: `response body larger than ${maxBytes} bytes` })
  const declared = Number(response.headers["content-length"])
  if (Number.isFinite(declared) && declared > maxBytes) return Effect.fail(tooLarge())
  return response.stream.pipe(
    Stream.mapError((error) => new OutboundError({ reason: "network", origin, message: `reading the response failed: ${reasonOf(error)}` })),
    Stream.runFoldEffect(() => ({ size: 0, chunks: Chunk.empty<Uint8Array>() }), (acc, chunk) => {
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
    const resolver = Option.getOrElse(yield* Effect.serviceOption(AddressResolver), () => systemResolver)
    // `fetch` runs in the layer's context: the same clock (so the same timeouts) as `execute`.
    const context = yield* Effect.context<never>()
    const runPromiseExit = Effect.runPromiseExitWith(context)

    /**
     * A client whose agents connect to `pin` whatever the name (TLS still names the host: SNI and the certificate
     * check use the URL's name). One per hop, closed with it: a kept-alive socket must not outlive its check.
     */
    const pinnedClient = (pin: string) =>
      NodeHttpClient.makeAgent({ lookup: pinnedLookup(pin), keepAlive: false }).pipe(
        Effect.flatMap((agent) => Effect.provideService(NodeHttpClient.makeNodeHttp, NodeHttpClient.HttpAgent, agent)),
        Effect.map(HttpClient.withScope)
      )

    const once = (request: HttpClientRequest.HttpClientRequest, maxBytes: number, origin: string, pin: Pin) =>
      (pin === undefined ? Effect.succeed(client) : pinnedClient(pin)).pipe(
        Effect.flatMap((via) => Tracing.outbound(request, via.execute)),
        Effect.mapError((error) =>
          new OutboundError({
            reason: "network",
            origin,
            message: error.response === undefined ? `request failed (${reasonOf(error)})` : `response failed (${reasonOf(error)})`,
            code: systemCodeOf(error.cause)
          })
        ),
        Effect.flatMap((response) =>
          isRedirect(response.status)
            ? Effect.succeed({ status: response.status, headers: response.headers, body: new Uint8Array(0) })
            : Effect.map(readCapped(response, maxBytes, origin), (body) => ({ status: response.status, headers: response.headers, body }))
        ),
        Effect.scoped
      )

    /**
     * The checks of a user-supplied URL (each hop of its redirects too), and the address to connect to: no
     * credentials in it; unless private mode, https only and every address of its host public. A name is resolved
     * once, here, and the connection pinned to the first address, so a rebinding DNS answer cannot reach anything
     * that was not checked.
     */
    const checkUser: (url: URL) => Effect.Effect<Pin, OutboundError> = Effect.fn("Outbound.checkUser")(
      function*(url: URL) {
        if (url.username !== "" || url.password !== "") return yield* refuse(url, "it carries credentials")
        if (!config.allowPrivate && url.protocol !== "https:") return yield* refuse(url, "https is required")
        const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
        if (Net.isIP(host) !== 0) {
          const why = config.allowPrivate ? undefined : blockedReason(host)
          if (why !== undefined) return yield* refuse(url, `${host} is ${why}`)
          return undefined
        }
        const addresses = yield* resolver.resolve(host).pipe(
          Effect.mapError((error) => new OutboundError({ reason: "network", origin: url.origin, message: `resolving ${host} failed (${error.detail})`, code: /^E[A-Z_]+$/.test(error.detail) ? error.detail : "EDNS" }))
        )
        if (addresses.length === 0) {
          return yield* new OutboundError({ reason: "network", origin: url.origin, message: `${host} has no address`, code: "ENOTFOUND" })
        }
        if (!config.allowPrivate) {
          for (const address of addresses) {
            const why = blockedReason(address)
            if (why !== undefined) return yield* refuse(url, `${host} resolves to ${address}, ${why}`)
          }
        }
        return addresses[0]
      })

    /** Operator destinations: redirects within the first origin only. */
    const operator = (request: HttpClientRequest.HttpClientRequest, first: URL, options: RequestOptions, maxBytes: number) => {
      const origin = first.origin
      const loop = (current: HttpClientRequest.HttpClientRequest, redirects: number): Effect.Effect<OutboundResponse, OutboundError> =>
        Effect.flatMap(once(current, maxBytes, origin, undefined), (response) => {
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
      return loop(request, 0)
    }

    /**
     * User destinations: every hop checked and pinned; at most `maxRedirects`, no URL twice, never https to http;
     * a 303 (but for HEAD), or a 301/302 answering a POST, becomes a GET without body; leaving the origin drops the
     * credential headers and is refused for anything but a GET or HEAD without body.
     */
    const user = (request: HttpClientRequest.HttpClientRequest, first: URL, options: RequestOptions, maxBytes: number) => {
      const seen = new Set<string>([first.href])
      const loop = (current: HttpClientRequest.HttpClientRequest, url: URL, redirects: number): Effect.Effect<OutboundResponse, OutboundError> =>
        Effect.gen(function*() {
          const pin = yield* checkUser(url)
          const response = yield* once(current, maxBytes, url.origin, pin)
          const location = response.headers["location"]
          if (!isRedirect(response.status) || location === undefined) return { ...response, url: current.url }
          if (options.followRedirects === false) {
            return yield* refuse(url, `it answered a redirect (${response.status}), which is not followed`)
          }
          const next = URL.canParse(location, url) ? new URL(location, url) : undefined
          if (next === undefined || (next.protocol !== "https:" && next.protocol !== "http:")) {
            return yield* refuse(url, "it redirects to something that is not an http(s) URL")
          }
          if (redirects >= config.maxRedirects) return yield* refuse(url, `more than ${config.maxRedirects} redirects`)
          if (seen.has(next.href)) return yield* refuse(url, `a redirect loop (${next.origin} again)`)
          seen.add(next.href)
          if (url.protocol === "https:" && next.protocol === "http:") return yield* refuse(url, `a redirect from https to http (${next.origin})`)
          const toGet = (response.status === 303 && current.method !== "HEAD") ||
            ((response.status === 301 || response.status === 302) && current.method === "POST")
          let followed = toGet
            ? HttpClientRequest.get(next, { headers: HttpHeaders.removeMany(current.headers, ["content-type", "content-length"]) })
            : HttpClientRequest.setUrl(current, next)
          if (next.origin !== url.origin) {
            if ((followed.method !== "GET" && followed.method !== "HEAD") || followed.body._tag !== "Empty") {
              return yield* refuse(url, `a ${followed.method} request redirected to another origin (${next.origin})`)
            }
            // Without a body, the request is its method, URL and headers: the credential headers go.
            followed = HttpClientRequest.updateHeaders(followed, (headers) => HttpHeaders.removeMany(headers, Object.keys(headers).filter(isCredentialHeader)))
          }
          return yield* loop(followed, next, redirects + 1)
        })
      return loop(request, first, 0)
    }

    const execute = Effect.fn("Outbound.execute")(function*(request: HttpClientRequest.HttpClientRequest, options: RequestOptions = {}) {
      const first = yield* checkScheme(request.url)
      const maxBytes = options.maxBodyBytes ?? config.maxBodyBytes
      const timeout = options.timeout ?? config.timeout
      const named = HttpClientRequest.setHeader(request, "user-agent", config.userAgent)
      return yield* (options.destination === "user" ? user(named, first, options, maxBytes) : operator(named, first, options, maxBytes)).pipe(
        Effect.timeoutOrElse({
          duration: timeout,
          orElse: () =>
            Effect.fail(
              new OutboundError({ reason: "timeout", origin: first.origin, message: `no complete answer within ${Duration.format(Duration.fromInputUnsafe(timeout))}` })
            )
        })
      )
    })

    const fetchWith = (options: RequestOptions) => async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
      const request = await toClientRequest(input, init)
      const exit = await runPromiseExit(execute(request, options), init.signal ? { signal: init.signal } : undefined)
      if (Exit.isFailure(exit)) {
        // Only the guard's own failures are expected; anything else (a defect, an interruption) is not a network error.
        const failure = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
        if (failure !== undefined) throw new TypeError(`fetch failed: ${failure.message}`, { cause: failure })
        if (init.signal?.aborted) throw init.signal.reason ?? new DOMException("The operation was aborted.", "AbortError")
        throw new TypeError("fetch failed")
      }
      const answer = exit.value
      const nullBody = answer.status === 204 || answer.status === 205 || answer.status === 304 || request.method === "HEAD"
      // The reason phrase is not kept by the HTTP client: the standard one for the status stands in for it.
      const statusText = Http.STATUS_CODES[answer.status] ?? ""
      const response = new Response(nullBody ? null : (answer.body as Uint8Array<ArrayBuffer>), { status: answer.status, statusText, headers: answer.headers })
      Object.defineProperty(response, "url", { value: answer.url })
      return response
    }

    const checkUserUrl = (url: string) => Effect.asVoid(Effect.flatMap(checkScheme(url), checkUser))

    return { execute, fetch: fetchWith({}), fetchWith, checkUser: checkUserUrl }
  })

/**
 * A request of `method` (upper-cased) to `url`. `HttpClientRequest`'s constructors take the known methods only; another
 * one goes through a web `Request` (which refuses what `fetch` refuses: CONNECT, TRACE, TRACK, or a URL it cannot
 * read).
 */
const requestOf = (method: string, url: string) =>
  HttpMethod.isHttpMethod(method) ? HttpClientRequest.make(method)(url) : HttpClientRequest.fromWeb(new Request(url, { method }))

/** A web `fetch` call as an Effect request: the method, URL, headers and a body given as text or bytes. */
const toClientRequest = async (input: string | URL | Request, init: RequestInit) => {
  const source = input instanceof Request ? input : undefined
  const url = source ? source.url : input.toString()
  const method = (init.method ?? source?.method ?? "GET").toUpperCase()
  const headers = new Headers(source?.headers)
  new Headers(init.headers).forEach((value, name) => headers.set(name, value))
  let request = requestOf(method, url).pipe(HttpClientRequest.setHeaders(Object.fromEntries(headers)))
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

/**
 * The guard over a client provided by the caller (tests, or another transport) for operator destinations; user
 * destinations always connect through node:http agents of their own (the pinning needs their `lookup`).
 */
export const layerWithoutClient = (settings: Partial<Settings> = {}) => Layer.effect(Outbound, make(settings))

/**
 * The guard over node:http (which follows no redirect by itself: the guard decides), with connections kept
 * alive: without it every request to GitHub would pay a new TCP and TLS handshake.
 */
export const layer = (settings: Partial<Settings> = {}) =>
  layerWithoutClient(settings).pipe(
    Layer.provide(NodeHttpClient.layerNodeHttpNoAgent),
    Layer.provide(NodeHttpClient.layerAgentOptions({ keepAlive: true, maxSockets: 16 }))
  )

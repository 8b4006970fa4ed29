/**
 * The tool runner's inspector: a fetch wrapper (`Session.open({ wrapFetch })`) that records the `tools/call` HTTP
 * exchange as an admin may see it (`ToolInspection`: credentials, session ids and query values redacted, bodies
 * capped at 512 KiB), and the last exchange of any kind as the diagnostics need it (status, a few response
 * headers, whether a credential or a session id was sent), without keeping what it does not show.
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { ToolInspection } from "@orgplane/schema"

export type InspectedRequest = NonNullable<ToolInspection["request"]>
export type InspectedResponse = NonNullable<ToolInspection["response"]>
export type InspectedHeader = InspectedRequest["headers"][number]
export type InspectedBody = InspectedRequest["body"]

/** Bytes of a body kept in an inspection. */
export const BODY_CAP = 512 * 1024

/** How long the inspection waits for a response body still being read once the call has settled. */
export const SETTLE_GRACE_MS = 1000

export const REDACTED = "[redacted]"

const exactNames = new Set(["authorization", "proxy-authorization", "cookie", "set-cookie", "dpop", "last-event-id", "mcp-session-id"])
const fragments = ["api-key", "apikey", "access-key", "private-key", "credential", "password", "session", "signature", "token", "secret"]

/**
 * Whether a header's value is hidden: the reference's broader list (authorization, proxy-authorization, cookie,
 * set-cookie, dpop, last-event-id, names ending in `-key`, names containing api-key, apikey, access-key,
 * private-key, credential, password, session, signature, token or secret) plus `mcp-session-id`.
 */
export const isRedactedHeader = (name: string): boolean => {
  const lower = name.toLowerCase()
  return exactNames.has(lower) || lower.endsWith("-key") || lower.endsWith("_key") || fragments.some((fragment) => lower.includes(fragment))
}

/** `authorization` keeps its scheme (`Bearer [redacted]`): which kind of credential went is worth seeing. */
const redactValue = (name: string, value: string): string => {
  const lower = name.toLowerCase()
  if (lower === "authorization" || lower === "proxy-authorization") {
    const scheme = /^\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)\s+\S/.exec(value)
    if (scheme !== null) return `${scheme[1]} ${REDACTED}`
  }
  return REDACTED
}

/** Headers as shown: names in lower case, sorted, redacted values marked. */
export const inspectHeaders = (headers: Iterable<readonly [string, string]>): Array<InspectedHeader> => {
  const list: Array<InspectedHeader> = []
  for (const [name, value] of headers) {
    const lower = name.toLowerCase()
    list.push(isRedactedHeader(lower) ? { name: lower, value: redactValue(lower, value), redacted: true } : { name: lower, value, redacted: false })
  }
  return list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/**
 * The URL as shown: no user info, no fragment, every query value `[redacted]` (names kept, as sent). Something
 * that is not a URL is shown as `[redacted]`.
 */
export const redactUrl = (url: string): string => {
  if (!URL.canParse(url)) return REDACTED
  const parsed = new URL(url)
  const base = `${parsed.protocol}//${parsed.host}${parsed.pathname}`
  const query = parsed.search.slice(1)
  if (query === "") return base
  const names = query.split("&").filter((part) => part !== "").map((part) => {
    const at = part.indexOf("=")
    return `${at === -1 ? part : part.slice(0, at)}=${REDACTED}`
  })
  return names.length === 0 ? base : `${base}?${names.join("&")}`
}

/** The first `cap` bytes of `bytes` as UTF-8, cut on a character boundary. */
const decodePrefix = (bytes: Uint8Array, cap: number): string => {
  if (bytes.length <= cap) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")
  let end = cap
  // Back off continuation bytes (10xxxxxx) so the cut never splits a character.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
  return Buffer.from(bytes.buffer, bytes.byteOffset, end).toString("utf8")
}

/** A body as shown: its UTF-8 text up to `cap` bytes, its whole size, whether it was cut. */
export const inspectBody = (body: string | Uint8Array, cap = BODY_CAP): InspectedBody => {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body
  return { text: decodePrefix(bytes, cap), bytes: bytes.length, truncated: bytes.length > cap, unavailable: false }
}

export const unavailableBody: InspectedBody = { text: "", bytes: 0, truncated: false, unavailable: true }

/** The media type of a `content-type` value, lower case, without parameters ("" for none). */
export const mediaTypeOf = (contentType: string | null | undefined): string => contentType?.split(";")[0]?.trim().toLowerCase() ?? ""

/** The JSON-RPC method of a request body (the first message's, for a batch), if it is JSON text. */
export const rpcMethodOf = (body: unknown): string | undefined => {
  const text = typeof body === "string" ? body : undefined
  if (text === undefined) return undefined
  try {
    const parsed: unknown = JSON.parse(text)
    const message: unknown = Array.isArray(parsed) ? parsed[0] : parsed
    const method = message !== null && typeof message === "object" ? (message as { method?: unknown }).method : undefined
    return typeof method === "string" ? method : undefined
  } catch {
    return undefined
  }
}

/** What the diagnostics need of the last HTTP exchange (any request, not only `tools/call`). */
export interface Exchange {
  readonly url: string
  readonly method: string
  /** The JSON-RPC method of the request body, when it had one. */
  readonly rpcMethod: string | undefined
  /** The request body, when it was text (to tell token requests from registrations); never shown. */
  readonly bodyText: string | undefined
  readonly sentAuthorization: boolean
  readonly sentSessionId: boolean
  /** Absent when no response came. */
  readonly response?: {
    readonly status: number
    readonly contentType: string | undefined
    readonly wwwAuthenticate: string | undefined
    /** Lower-case names; for the provider's request id. */
    readonly headers: ReadonlyArray<readonly [string, string]>
  }
}

export interface Capture {
  readonly request: InspectedRequest | undefined
  readonly response: InspectedResponse | undefined
  readonly last: Exchange | undefined
}

export interface Inspector {
  /** Wraps the (guarded) fetch the session uses. */
  readonly wrap: (fetch: FetchLike) => FetchLike
  /**
   * What was recorded, once the response body of the `tools/call` exchange has been read or `SETTLE_GRACE_MS`
   * after this is called (the body is then marked truncated).
   */
  readonly settle: () => Promise<Capture>
  /** What was recorded so far, without waiting. */
  readonly current: () => Capture
}

const headerEntries = (headers: HeadersInit | undefined): Array<[string, string]> => {
  const entries: Array<[string, string]> = []
  new Headers(headers).forEach((value, name) => entries.push([name, value]))
  return entries
}

/** Reads a body stream, keeping at most `cap` bytes and counting all; stops when `stop` resolves. */
const readStream = async (
  body: ReadableStream<Uint8Array>,
  cap: number,
  stop: Promise<void>
): Promise<{ kept: Uint8Array; bytes: number; complete: boolean }> => {
  const reader = body.getReader()
  const chunks: Array<Uint8Array> = []
  let kept = 0
  let bytes = 0
  const stopped = stop.then(() => "stop" as const)
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), stopped])
      if (next === "stop") {
        void reader.cancel().catch(() => undefined)
        return { kept: concat(chunks, kept), bytes, complete: false }
      }
      if (next.done) return { kept: concat(chunks, kept), bytes, complete: true }
      bytes += next.value.length
      if (kept < cap + 4) {
        // A few bytes past the cap, so the cut can back off to a character boundary.
        const take = next.value.subarray(0, cap + 4 - kept)
        chunks.push(take)
        kept += take.length
      }
    }
  } catch {
    return { kept: concat(chunks, kept), bytes, complete: false }
  }
}

const concat = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  const out = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.length
  }
  return out
}

/**
 * A new inspector for one tool run. `now` gives milliseconds since the epoch (the Effect clock, so tests can
 * control it); `after` runs `fire` once `ms` have passed on that clock and answers a cancel (a timer by default);
 * `cap` is the body cap (512 KiB).
 */
export const make = (options: {
  readonly now: () => number
  readonly after?: (ms: number, fire: () => void) => () => void
  readonly cap?: number
}): Inspector => {
  const cap = options.cap ?? BODY_CAP
  const after = options.after ?? ((ms: number, fire: () => void) => {
    const timer = setTimeout(fire, ms)
    return () => clearTimeout(timer)
  })
  let request: InspectedRequest | undefined
  let response: InspectedResponse | undefined
  let last: Exchange | undefined
  /** The response body being read for the current `tools/call`, if any; `attempt` tells a retry's from the first's. */
  let pending: Promise<void> | undefined
  let attempt = 0
  let release: () => void = () => undefined
  const stop = new Promise<void>((resolve) => {
    release = resolve
  })

  const wrap = (fetch: FetchLike): FetchLike => async (input, init) => {
    const url = input instanceof URL ? input.href : String(input)
    const method = (init?.method ?? "GET").toUpperCase()
    const body: unknown = init?.body
    const bodyText = typeof body === "string" ? body : body instanceof URLSearchParams ? body.toString() : undefined
    const requestHeaders = headerEntries(init?.headers)
    const rpcMethod = rpcMethodOf(body)
    const exchange: Omit<Exchange, "response"> = {
      url,
      method,
      rpcMethod,
      bodyText,
      sentAuthorization: requestHeaders.some(([name]) => name === "authorization"),
      sentSessionId: requestHeaders.some(([name]) => name === "mcp-session-id")
    }
    // What the diagnostics look at is the request that failed: not the SDK's cancellation notice sent after it,
    // nor the optional event stream (GET) or session end (DELETE) running beside the calls.
    const tracked = rpcMethod !== "notifications/cancelled" && !(rpcMethod === undefined && (method === "GET" || method === "DELETE"))
    if (tracked) last = exchange
    const isCall = rpcMethod === "tools/call"
    const startedMs = options.now()
    let mine = 0
    if (isCall) {
      // A retried call replaces the earlier one: the attempt that failed is the one reported.
      mine = ++attempt
      response = undefined
      pending = undefined
      request = {
        method,
        url: redactUrl(url),
        startedAt: new Date(startedMs),
        headers: inspectHeaders(requestHeaders),
        body: bodyText === undefined ? unavailableBody : inspectBody(bodyText, cap)
      }
    }
    const answer = await fetch(input, init)
    const responseHeaders: Array<[string, string]> = []
    answer.headers.forEach((value, name) => responseHeaders.push([name, value]))
    if (tracked) {
      last = {
        ...exchange,
      response: {
        status: answer.status,
        contentType: answer.headers.get("content-type") ?? undefined,
        wwwAuthenticate: answer.headers.get("www-authenticate") ?? undefined,
          headers: responseHeaders
        }
      }
    }
    if (isCall && mine === attempt) {
      const durationMs = Math.max(0, Math.round(options.now() - startedMs))
      const head = { status: answer.status, statusText: answer.statusText, durationMs, headers: inspectHeaders(responseHeaders) }
      response = { ...head, body: unavailableBody }
      const clone = answer.body === null ? undefined : answer.clone()
      if (clone === undefined || clone.body === null) {
        response = { ...head, body: inspectBody(new Uint8Array(0), cap) }
      } else {
        pending = readStream(clone.body, cap, stop).then(({ bytes, complete, kept }) => {
          if (mine !== attempt) return
          response = {
            ...head,
            body: { text: decodePrefix(kept, cap), bytes, truncated: !complete || bytes > cap, unavailable: false }
          }
        })
      }
    }
    return answer
  }

  const current = (): Capture => ({ request, response, last })

  const settle = async (): Promise<Capture> => {
    if (pending !== undefined) {
      const cancel = after(SETTLE_GRACE_MS, release)
      await pending
      cancel()
    }
    return current()
  }

  return { wrap, settle, current }
}

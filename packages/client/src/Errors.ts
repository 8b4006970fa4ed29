/** What the Promise client rejects with: the server's error answer, no answer at all, or a request not sent. */
import { invalidRequestDetails, type RequestIssueDetail, summarizeDetails } from "@orgplane/schema"
import type * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { requestIdHeader } from "./Hooks.js"

/**
 * A `Retry-After` value (seconds, or an HTTP date) as milliseconds from `now`; undefined when absent or unreadable.
 */
export const retryAfterMillis = (value: string | undefined, now: number): number | undefined => {
  if (value === undefined || value.trim() === "") return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** The server answered with an error: its status, its exact JSON body, and the error class it decodes to. */
export class OrgplaneError extends Error {
  override readonly name = "OrgplaneError"
  /** The HTTP status, for example 404. */
  readonly status: number
  /** The response body exactly as sent, for example `{ error: "unauthorized", reason: "session_expired", message: "The session expired …" }`. */
  readonly body: unknown
  /** The machine-readable code: the body's `error`, else its `reason` (403s), for example `api_key_not_found`. */
  readonly code: string | undefined
  /** The `_tag` of the API's error class (`NotFound`, `Forbidden`, ...), or `UnexpectedResponse` for an answer the API does not declare. */
  readonly tag: string
  /** The response headers (lower-case names), for example `retry-after`. */
  readonly headers: Readonly<Record<string, string>>
  /** The server's id of the request (its `x-request-id` header), to quote when reporting a problem. */
  readonly requestId: string | undefined
  /**
   * Seconds to wait before trying again, from the `Retry-After` header (429 `rate_limited`, 503, 409
   * `idempotency_key_in_use`); undefined without one.
   */
  readonly retryAfterSeconds: number | undefined

  constructor(options: {
    readonly status: number
    readonly body: unknown
    readonly tag: string
    readonly headers?: Readonly<Record<string, string>> | undefined
    readonly cause?: unknown
  }) {
    const body = typeof options.body === "object" && options.body !== null ? options.body as Record<string, unknown> : undefined
    const code = typeof body?.error === "string" ? body.error : typeof body?.reason === "string" ? body.reason : undefined
    const detail = typeof body?.message === "string"
      ? `: ${body.message}`
      : Array.isArray(body?.details) && body.details.length > 0
      ? `: ${summarizeDetails(body.details as ReadonlyArray<RequestIssueDetail>)}`
      : ""
    super(`${options.status} ${code ?? options.tag}${detail}`, { cause: options.cause })
    this.status = options.status
    this.body = options.body
    this.code = code
    this.tag = options.tag
    this.headers = options.headers ?? {}
    this.requestId = this.headers[requestIdHeader]
    const wait = retryAfterMillis(this.headers["retry-after"], Date.now())
    this.retryAfterSeconds = wait === undefined ? undefined : Math.ceil(wait / 1000)
  }
}

/** What a Node network error's `code` means, as a person says it. */
const networkCodes: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "no such host",
  EAI_AGAIN: "host name lookup failed",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
  UND_ERR_CONNECT_TIMEOUT: "connection timed out",
  UND_ERR_SOCKET: "connection closed",
  CERT_HAS_EXPIRED: "its TLS certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "its TLS certificate is self-signed",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "its TLS certificate is not trusted"
}

const isObject = (value: unknown): value is { readonly code?: unknown; readonly message?: unknown; readonly cause?: unknown; readonly errors?: unknown } =>
  typeof value === "object" && value !== null

/**
 * Why no answer came, from a failed request's chain of causes (fetch's `TypeError: fetch failed` holds Node's error,
 * or an `AggregateError` of one per address): the first known network code in words, else the deepest message.
 */
export const networkReason = (error: unknown): string | undefined => {
  let deepest: string | undefined
  const seen = new Set<unknown>()
  const visit = (current: unknown): string | undefined => {
    if (!isObject(current) || seen.has(current)) return undefined
    seen.add(current)
    if (typeof current.code === "string" && Object.hasOwn(networkCodes, current.code)) return networkCodes[current.code]
    if (typeof current.message === "string" && current.message !== "" && current.message !== "fetch failed") deepest = current.message
    for (const next of [current.cause, ...(Array.isArray(current.errors) ? current.errors : [])]) {
      const found = visit(next)
      if (found !== undefined) return found
    }
    return undefined
  }
  return visit(error) ?? deepest
}

/**
 * The one line a connection failure of a request to `url` says: where (the server's origin), why, and (refused:
 * nothing listens there) what to do about it. `timeout` is the reason a timed-out attempt gives (`no response within 30s`).
 */
export const unreachableMessage = (url: string, cause: unknown, timeout?: string): string => {
  const origin = URL.canParse(url) ? new URL(url).origin : url
  if (timeout !== undefined) return `no answer from the server at ${origin} (${timeout})`
  const reason = networkReason(cause)
  return reason === "connection refused"
    ? `cannot reach the server at ${origin} (connection refused): is it running? start one with \`orgplane serve\``
    : `cannot reach the server at ${origin}${reason === undefined ? "" : ` (${reason})`}`
}

/** No answer from the server: it could not be reached, the connection failed, or the timeout elapsed. */
export class OrgplaneConnectionError extends Error {
  override readonly name = "OrgplaneConnectionError"
  /** True when the request timed out, false for a network failure. */
  readonly timedOut: boolean
  /** The `x-request-id` the failed attempt carried, when it carried one (from `headers` or `onRequest`). */
  readonly requestId: string | undefined

  constructor(message: string, options: { readonly timedOut: boolean; readonly requestId?: string | undefined; readonly cause?: unknown }) {
    super(message, { cause: options.cause })
    this.timedOut = options.timedOut
    this.requestId = options.requestId
  }
}

// The formatter the server words its 400 with (the server's platform/HttpErrors.ts), so that both say the same.
const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * The request does not match the API's schema (for example a page size of 1000); nothing was sent. `details` has
 * the shape and wording of the server's 400 `invalid_request` body; the message is the first of them on one line.
 */
export class OrgplaneValidationError extends Error {
  override readonly name = "OrgplaneValidationError"
  /** Every bad field with its path in its part of the request (`["limit"]` of `urlParams`, `["name"]` of `payload`). */
  readonly details: ReadonlyArray<RequestIssueDetail>

  constructor(error: Schema.SchemaError) {
    const details = invalidRequestDetails(formatIssue(error.issue).issues.map(({ message, path }) => ({
      path: (path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment),
      message
    })))
    super(`invalid request: ${summarizeDetails(details)}`, { cause: error })
    this.details = details
  }
}

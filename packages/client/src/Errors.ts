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

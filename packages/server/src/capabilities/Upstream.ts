/**
 * One request to a suite's API as the member (`Authorization: Bearer <their token>`), through the outbound guard as
 * a user-supplied destination (an organization may point a suite at its own cloud), without redirects, within the
 * capability timeout and a 5 MiB answer, read as JSON.
 *
 * What can go wrong, and what the caller is told:
 * - 401 and 403 are `Rejected`: the caller decides (renew the token once; then `needs_connection`).
 * - Another status is a 502 `suite_*_api_error`, `"<operation> failed: <status> <first 300 characters>"`, retryable for
 *   429 and 5xx.
 * - No answer (a timeout, a connection that broke), an answer over the cap, or one that is not JSON: a 502, and for a
 *   change (`mutation`) whose request may have reached the suite, `outcome: "unknown"`: it may have happened. A
 *   connection refused, a name that does not resolve and the guard's refusal are known not to have reached it.
 */
import { type Suite, SuiteApiError } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import { Outbound, type OutboundError } from "../platform/Outbound.js"
import { CapabilityConfig } from "./CapabilityConfig.js"
import { apiErrorCode } from "./Suites.js"

/** 5 MiB: the reference's cap on a Graph answer; a calendar event is far smaller. */
export const MAX_ANSWER_BYTES = 5 * 1024 * 1024

/** How much of a suite's answer a message quotes. */
export const EXCERPT_CHARS = 300

/** The suite refused the token (401) or the permission (403). */
export class Rejected extends Data.TaggedError("Rejected")<{
  readonly status: 401 | 403
  readonly message: string
}> {}

export interface Request {
  readonly suite: Suite
  /** What a message calls it: "Creating the draft". */
  readonly operation: string
  readonly method: "GET" | "POST" | "PATCH"
  readonly url: string
  readonly token: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: unknown
  /** A change: an answer that never came leaves its outcome unknown. */
  readonly mutation: boolean
}

/** The start of a suite's answer for a message: one line, at most 300 characters. */
export const excerpt = (bytes: Uint8Array) => {
  const text = new TextDecoder().decode(bytes.subarray(0, 4 * EXCERPT_CHARS)).replace(/[\u0000-\u001f\u007f]+/g, " ").trim()
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text
}

/** Errors that mean the request never left: nothing can have happened. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"])

const failure = (request: Request, message: string, options: { readonly retryable: boolean; readonly unknown?: boolean }) =>
  new SuiteApiError({
    error: apiErrorCode(request.suite),
    message,
    retryable: options.unknown === true ? false : options.retryable,
    ...(options.unknown === true ? { outcome: "unknown" as const } : {})
  })

const unknownSuffix = " It may have been done anyway: look before retrying."

const fromOutbound = (request: Request, error: OutboundError, timeout: Duration.Duration): SuiteApiError => {
  const maybeSent = request.mutation && error.reason !== "blocked" && !(error.code !== undefined && NOT_SENT.has(error.code))
  switch (error.reason) {
    case "blocked":
      return failure(request, `${request.operation} failed: the outbound guard refused the suite's address (${error.message}).`, { retryable: false })
    case "timeout":
      return failure(
        request,
        `${request.operation} failed: the suite did not answer within ${Duration.format(timeout)}.${maybeSent ? unknownSuffix : ""}`,
        { retryable: true, unknown: maybeSent }
      )
    case "too_large":
      return failure(request, `${request.operation} failed: the suite answered more than ${MAX_ANSWER_BYTES} bytes.${maybeSent ? unknownSuffix : ""}`, {
        retryable: false,
        unknown: maybeSent
      })
    case "network":
      return failure(
        request,
        `${request.operation} failed: the suite could not be reached (${error.code ?? error.message}).${maybeSent ? unknownSuffix : ""}`,
        { retryable: true, unknown: maybeSent }
      )
  }
}

const make = Effect.gen(function*() {
  const outbound = yield* Outbound
  const { timeout } = yield* CapabilityConfig

  /** The request's JSON answer (an object), or why there is none. */
  const send = Effect.fn("Upstream.send")(function*(request: Request): Effect.fn.Return<Record<string, unknown>, Rejected | SuiteApiError> {
    const base = HttpClientRequest.make(request.method)(request.url).pipe(
      HttpClientRequest.setHeaders({ accept: "application/json", ...request.headers, authorization: `Bearer ${request.token}` })
    )
    const http = request.body === undefined ? base : HttpClientRequest.bodyText(base, JSON.stringify(request.body), "application/json")
    const answer = yield* outbound.execute(http, { destination: "user", timeout, maxBodyBytes: MAX_ANSWER_BYTES, followRedirects: false }).pipe(
      Effect.mapError((error) => fromOutbound(request, error, timeout))
    )
    if (answer.status === 401 || answer.status === 403) {
      return yield* Effect.fail(new Rejected({ status: answer.status, message: excerpt(answer.body) }))
    }
    if (answer.status < 200 || answer.status > 299) {
      const quoted = excerpt(answer.body)
      return yield* Effect.fail(failure(request, `${request.operation} failed: ${answer.status}${quoted === "" ? "" : ` ${quoted}`}`, {
        retryable: answer.status === 429 || answer.status >= 500
      }))
    }
    const parsed = yield* Effect.try(() => JSON.parse(new TextDecoder().decode(answer.body)) as unknown).pipe(Effect.orElseSucceed(() => undefined))
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      return yield* Effect.fail(failure(
        request,
        `${request.operation} failed: the suite answered ${answer.status} with something that is not a JSON object.${request.mutation ? " It was probably done: look before retrying." : ""}`,
        { retryable: false, unknown: request.mutation }
      ))
    }
    return parsed as Record<string, unknown>
  })

  return { send } as const
})

export class Upstream extends Context.Service<Upstream>()("@orgplane/server/capabilities/Upstream", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

/**
 * The one place where failures become responses the spec allows. Runs around every route, before the platform
 * encodes declared errors:
 * - a request that fails its schema (path, query, headers, body) or is not valid JSON → 400 `invalid_request`;
 * - a response that fails its own schema is a server bug → 500, logged, never blamed on the caller;
 * - an unknown route → 404 `not_found`; a rate limit → 429 with `Retry-After`;
 * - the database unavailable → 503 `service_unavailable` with `Retry-After` (see Unavailable.ts);
 * - anything undeclared (defects, storage failures) → 500 `internal_error`, logged with its cause;
 * - what the request guard refuses (a body too large, too deep, or carrying NUL) → 413 or 400, like the rest.
 * Around it all, the per-request log line (`RequestLog`).
 */
import { type HttpApi, HttpApiBuilder, HttpApiError, HttpServerError, HttpServerResponse } from "@effect/platform"
import { Api, errorResponseOf, InvalidRequest, RateLimited, RateLimitedResponse } from "@orgplane/schema"
import { Cause, Effect, FiberRef, Layer, Option, Schema } from "effect"
import { defaultMaxBodyBytes, ServerConfig } from "./Config.js"
import * as Docs from "./Docs.js"
import * as RequestGuard from "./RequestGuard.js"
import * as RequestLog from "./RequestLog.js"
import * as Routes from "./Routes.js"
import * as Unavailable from "./Unavailable.js"

/** Set once a handler has returned: a schema failure after that is the response's, not the request's. */
export const HandlerReturned = FiberRef.unsafeMake(false)

const markReturned = (handler: (request: any) => Effect.Effect<any, any, any>) => (request: any) =>
  Effect.tap(handler(request), () => FiberRef.set(HandlerReturned, true))

/** Passes every handler through `markReturned`, however `handle` calls are chained. */
const instrument = <H extends object>(handlers: H): H =>
  new Proxy(handlers, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver)
      if ((property === "handle" || property === "handleRaw") && typeof value === "function") {
        return (name: string, handler: any, options?: any) => instrument(value.call(target, name, markReturned(handler), options))
      }
      return value
    }
  })

/**
 * `HttpApiBuilder.group`, with every handler marked as it returns, so a response that fails its own schema is
 * reported as the server's bug (500) and not as the caller's (400). Every group of the server is built with it.
 */
export const group: typeof HttpApiBuilder.group = ((api: any, name: any, build: any) =>
  (HttpApiBuilder.group as any)(api, name, (handlers: any) => build(instrument(handlers)))) as any

const internalError = HttpServerResponse.unsafeJson(
  { error: "internal_error", message: "The server failed to handle this request." },
  { status: 500 }
)

const expected = /^Expected (.+), actual (.+)$/s

/** Longest actual value quoted back in a message: a hostile 10 MB string must not come back as a 10 MB error. */
const maxQuoted = 100

/** Details listed before the rest are summarized, for bodies with thousands of bad members. */
const maxDetails = 50

/** Longest message or path key: schema messages are shorter; only a caller's text could make one longer. */
const maxText = 500

const ellipsis = (text: string, max = maxText) => text.length > max ? `${text.slice(0, max)}…` : text

/** `"aaaa…" (10485760 characters)`: the start of a long actual value and its length. */
const shorten = (actual: string) => {
  if (actual.length <= maxQuoted + 2) return actual
  if (actual.startsWith("\"") && actual.endsWith("\"")) {
    let length = actual.length - 2
    try {
      length = (JSON.parse(actual) as string).length
    } catch {
      // not a JSON string after all: its formatted length will do
    }
    return `"${actual.slice(1, maxQuoted + 1)}…" (${length} characters)`
  }
  return `${actual.slice(0, maxQuoted)}… (${actual.length} characters)`
}

const shortenMessage = (message: string) => {
  const parts = expected.exec(message)
  return parts === null ? ellipsis(message) : `Expected ${parts[1]}, actual ${shorten(parts[2])}`
}

/**
 * One detail per bad field. A value that fails every member of a union (say a role that is none of the literals)
 * comes as one issue per member: they become one "Expected "a", "b" or "c", actual ..." detail. Actual values and
 * keys quoted back are shortened, and past `maxDetails` the rest is counted, so the error stays small whatever the
 * request.
 */
export const toInvalidRequest = (error: HttpApiError.HttpApiDecodeError) => {
  const byPath = new Map<string, { path: Array<string | number>; messages: Array<string> }>()
  for (const issue of error.issues) {
    const path = issue.path.map((key) => typeof key === "number" ? key : ellipsis(String(key), maxQuoted))
    const key = JSON.stringify(path)
    const entry = byPath.get(key) ?? { path, messages: [] }
    entry.messages.push(issue.message)
    byPath.set(key, entry)
  }
  const details = [...byPath.values()].flatMap(({ messages, path }) => {
    const parts = messages.map((message) => expected.exec(message))
    const actual = parts[0]?.[2]
    if (messages.length > 1 && parts.every((part) => part !== null && part[2] === actual)) {
      const options = parts.map((part) => part![1])
      return [{ message: shortenMessage(`Expected ${options.slice(0, -1).join(", ")} or ${options.at(-1)}, actual ${actual}`), path }]
    }
    return messages.map((message) => ({ message: shortenMessage(message), path }))
  })
  if (details.length <= maxDetails) return new InvalidRequest({ details })
  return new InvalidRequest({
    details: [
      ...details.slice(0, maxDetails),
      { message: `${details.length - maxDetails} more problems not listed.`, path: [] }
    ]
  })
}

const encodeRateLimited = Schema.encodeSync(RateLimitedResponse)

const handle = (cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause)
    const failure = Cause.failureOption(cause)
    // The platform reports an unreadable body as a defect, not a failure.
    const error = Option.isSome(failure) ? failure.value : Option.getOrUndefined(Cause.dieOption(cause))
    if (error instanceof HttpApiError.HttpApiDecodeError) {
      if (yield* FiberRef.get(HandlerReturned)) {
        yield* Effect.logError("A response did not match its schema", error.issues)
        return internalError
      }
      return yield* Effect.fail(toInvalidRequest(error))
    }
    if (HttpServerError.isServerError(error)) {
      if (error._tag === "RouteNotFound") {
        return HttpServerResponse.unsafeJson(
          { error: "not_found", message: `No route for ${error.request.method} ${error.request.url}` },
          { status: 404 }
        )
      }
      if (error._tag === "RequestError" && error.reason === "Decode") {
        return yield* Effect.fail(InvalidRequest.field([], "The request body is not valid JSON."))
      }
    }
    if (error instanceof RateLimited) {
      return HttpServerResponse.unsafeJson(encodeRateLimited(error), {
        status: 429,
        headers: error.retryAfterSeconds === undefined ? {} : { "retry-after": String(error.retryAfterSeconds) }
      })
    }
    const unavailable = yield* Unavailable.responseFor(error)
    if (Option.isSome(unavailable)) return unavailable.value
    if (Option.isSome(failure) && errorResponseOf(error) !== undefined) return yield* Effect.failCause(cause)
    yield* Effect.logError("Unhandled failure", cause)
    return internalError
  })

export interface Options {
  /** Default body limit of the request guard (the server passes `ORGPLANE_MAX_BODY_BYTES`). */
  readonly maxBodyBytes?: number | undefined
  /** Routes served beside the API, so their requests are logged under their path rather than `unknown`. */
  readonly extraRoutes?: ReadonlyArray<readonly [method: string, path: `/${string}`]> | undefined
}

/**
 * The mapping as middleware of any HttpApi (tests use small APIs of their own), inside the per-request log line
 * and around the request guard: the guard runs before routing and authentication, and what it refuses is answered
 * like any other failure.
 */
export const layerFor = (api: HttpApi.HttpApi.Any, options: Options = {}): Layer.Layer<never> => {
  const routes = Routes.make(api, options.extraRoutes)
  const guard = RequestGuard.make(routes, { maxBodyBytes: options.maxBodyBytes ?? defaultMaxBodyBytes })
  const log = RequestLog.make(routes)
  return HttpApiBuilder.middleware(api as typeof Api, (app) =>
    log(
      Effect.zipRight(FiberRef.set(HandlerReturned, false), guard(app)).pipe(
        Effect.catchAllCause(handle),
        Effect.map(HttpServerResponse.setHeader("x-content-type-options", "nosniff"))
      )
    ) as typeof app)
}


export const layer: Layer.Layer<never, never, ServerConfig> = Layer.unwrapEffect(
  Effect.map(ServerConfig, (settings) => layerFor(Api, { maxBodyBytes: settings.maxBodyBytes, extraRoutes: Docs.routes }))
)

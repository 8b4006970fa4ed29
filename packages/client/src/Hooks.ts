/**
 * Request and response hooks, called once per attempt (a retry is an attempt of its own), and what the current call
 * has sent and received so far, for errors that report the request id of the attempt that failed.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Url from "effect/http/Url"
import * as Option from "effect/Option"
import * as Result from "effect/Result"

/** The header carrying the server's id of a request (in its log line); a well-formed id the client sends is kept. */
export const requestIdHeader = "x-request-id"

/** One attempt of a request, as the hooks see it. */
export interface OrgplaneRequest {
  readonly method: string
  /** The full URL, query included. */
  readonly url: string
  /** The headers about to be sent (lower-case names), credentials included. */
  readonly headers: Readonly<Record<string, string>>
  /** 1 for the first attempt, 2 for the first retry, and so on. */
  readonly attempt: number
}

/** The answer to one attempt, as `onResponse` sees it; its body is left for the client to decode. */
export interface OrgplaneResponse {
  readonly status: number
  /** The response headers (lower-case names). */
  readonly headers: Readonly<Record<string, string>>
  /** The server's id of the request (`x-request-id`), to quote when reporting a problem. */
  readonly requestId: string | undefined
  /** Milliseconds from sending the attempt to its response headers. */
  readonly durationMs: number
}

export interface Hooks {
  /**
   * Called before each attempt. Headers it returns are added to that attempt (replacing any of the same name), for
   * example a fresh token or a request id of your own. May return a Promise; if it throws, the call fails with that error.
   */
  readonly onRequest?: ((request: OrgplaneRequest) => void | Readonly<Record<string, string>> | PromiseLike<void | Readonly<Record<string, string>>>) | undefined
  /**
   * Called when an attempt gets an answer, whatever its status, before the client decides to retry or decode it.
   * An attempt without an answer (connection refused or dropped, timeout) ends without it. May return a Promise,
   * which is awaited; if it throws, the call fails with that error.
   */
  readonly onResponse?: ((response: OrgplaneResponse, request: OrgplaneRequest) => void | PromiseLike<void>) | undefined
}

/** The call in progress: how many attempts it made, what the last one sent and what it got. */
export interface CallState {
  attempts: number
  request?: HttpClientRequest.HttpClientRequest
  response?: HttpClientResponse.HttpClientResponse
}

/**
 * Provided around each call by `trackCall` (or by the Promise client, which reads it afterwards to report a failure).
 * Effect 4's `Context.Reference` is a value, not a class to extend.
 */
export const CurrentCall = Context.Reference<CallState | undefined>("@orgplane/client/Hooks/CurrentCall", {
  defaultValue: () => undefined
})

const fullUrl = (request: HttpClientRequest.HttpClientRequest) =>
  Result.match(Url.make(request.url, request.urlParams, Option.getOrUndefined(request.hash)), {
    onFailure: () => request.url,
    onSuccess: (url) => url.toString()
  })

const run = <A>(hook: () => A | PromiseLike<A>) =>
  Effect.flatMap(Effect.sync(hook), (result) =>
    isPromiseLike(result) ? Effect.promise(() => Promise.resolve(result)) : Effect.succeed(result))

const isPromiseLike = <A>(value: A | PromiseLike<A>): value is PromiseLike<A> =>
  typeof value === "object" && value !== null && "then" in value && typeof value.then === "function"

/**
 * The innermost layer of the client: runs once per attempt, beneath the retries. Counts the attempt, lets
 * `onRequest` amend its headers, sends it, records it in the call's state and tells `onResponse`.
 */
export const perAttempt = (hooks: Hooks) => (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.makeWith(
    (prepared: Effect.Effect<HttpClientRequest.HttpClientRequest>): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> =>
      Effect.flatMap(prepared, (original) =>
        Effect.gen(function*() {
          const state = yield* CurrentCall
          const attempt = state === undefined ? 1 : ++state.attempts
          const seen = (request: HttpClientRequest.HttpClientRequest): OrgplaneRequest => ({
            method: request.method,
            url: fullUrl(request),
            headers: request.headers,
            attempt
          })
          let request = original
          if (hooks.onRequest !== undefined) {
            const onRequest = hooks.onRequest
            const extra = yield* run(() => onRequest(seen(request)))
            if (extra) request = HttpClientRequest.setHeaders(request, extra)
          }
          if (state !== undefined) {
            state.request = request
            delete state.response
          }
          const started = hooks.onResponse === undefined ? 0 : yield* Clock.currentTimeMillis
          const response = yield* client.execute(request)
          if (state !== undefined) state.response = response
          if (hooks.onResponse !== undefined) {
            const onResponse = hooks.onResponse
            const durationMs = (yield* Clock.currentTimeMillis) - started
            yield* run(() =>
              onResponse(
                { status: response.status, headers: response.headers, requestId: response.headers[requestIdHeader], durationMs },
                seen(request)
              )
            )
          }
          return response
        })),
    Effect.succeed
  )

/** The outermost layer of the client: a fresh `CallState` for each call, unless the caller set one to read afterwards. */
export const trackCall = (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.transform(client, (send) =>
    Effect.flatMap(CurrentCall, (state) => state === undefined ? Effect.provideService(send, CurrentCall, { attempts: 0 }) : send))

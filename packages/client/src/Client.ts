/**
 * The Effect-native orgplane client: `HttpApiClient` over the shared API definition, with credentials, a user
 * agent, extra headers, hooks, a timeout, an `Idempotency-Key` on every write that takes one, and retries of
 * transient failures (only where repeating the request is safe: reads, and writes carrying a key).
 */
import {
  type ApiErrors,
  type ApiGroups,
  apiOf,
  IdempotencyConflict,
  idempotencyKeyHeader,
  idempotentOperations,
  type IdempotentOperations,
  RateLimited
} from "@orgplane/schema"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Function from "effect/Function"
import type * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Random from "effect/Random"
import { retryAfterMillis } from "./Errors.js"
import { type CallState, CurrentCall, type Hooks, perAttempt, trackCall } from "./Hooks.js"
import { type ClientOf, lenient } from "./Requests.js"
import { VERSION } from "./Version.js"

export interface ClientOptions extends Hooks {
  /** For example `http://127.0.0.1:8787`. */
  readonly baseUrl: string
  /** A session token, sent as `Authorization: Bearer`. */
  readonly token?: string | undefined
  /** An organization API key, sent as `x-api-key`. */
  readonly apiKey?: string | undefined
  /** Time to wait for each attempt's response (default 30 seconds). A timeout counts as a transport failure. */
  readonly timeout?: Duration.Input | undefined
  /**
   * Retries of transient failures (default 2): 429, and for reads and writes carrying an `Idempotency-Key` (every
   * write that requires credentials) also 408, 5xx, network errors, timeouts and 409 `idempotency_key_in_use`; not an
   * answer whose body says `"retryable": false`.
   */
  readonly maxRetries?: number | undefined
  /** Delay before the first retry, doubled for each further one up to 5 seconds, with ±20% jitter (default 200 ms). */
  readonly retryDelay?: Duration.Input | undefined
  /** Appended to the user agent, for example `my-script/1.0`. */
  readonly userAgent?: string | undefined
  /** Headers sent with every request. The client's own (user agent, credentials) take precedence. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * The `fetch` to send requests with, for example undici's with a proxy agent, or a test double. Used whenever the
   * client runs over fetch (`createClient`, `layerFetch`, or `FetchHttpClient.layer` provided to `make`).
   */
  readonly fetch?: typeof globalThis.fetch | undefined
}

export { VERSION }

/** Methods whose repetition has no further effect: retried after a 5xx or a network error even without a key. */
const IDEMPOTENT = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"])

/**
 * 429 means the server did nothing, so any request may retry it; 408 and 5xx only when repeating is harmless: a read,
 * or a request carrying an `Idempotency-Key` (the server makes its change once, and answers every retry alike).
 */
export const isRetryable = (method: string, status: number, idempotencyKey = false) =>
  status === 429 ||
  ((idempotencyKey || IDEMPOTENT.has(method)) && (status === 408 || status === 502 || status === 503 || status === 504 || status === 500))

/** The operations of each API that take an `Idempotency-Key`, read once per API definition. */
const operationsOf = new WeakMap<HttpApi.Constraint, IdempotentOperations>()

/** Whether a request (method and URL before the base URL is prepended, or a full URL) takes an `Idempotency-Key`. */
const takesIdempotencyKey = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  method: string,
  url: string
) => {
  let operations = operationsOf.get(api)
  if (operations === undefined) operationsOf.set(api, operations = idempotentOperations(api))
  const path = /^[a-z][a-z0-9+.-]*:/i.test(url) ? new URL(url).pathname : url.split("?")[0]!
  return operations.matches(method, path)
}

/**
 * The `Idempotency-Key` the caller chose for the write of the current call, if any: set with `withIdempotencyKey`
 * (or `Effect.provideService(CurrentIdempotencyKey, key)`), read with `yield* CurrentIdempotencyKey`.
 */
export const CurrentIdempotencyKey = Context.Reference<string | undefined>("@orgplane/client/CurrentIdempotencyKey", {
  defaultValue: () => undefined
})

/**
 * Sends `key` as the `Idempotency-Key` of the write `effect` makes, instead of a fresh one: to retry a write yourself
 * (say, after a restart) and have the server answer it once. Give each operation you mean its own key; wrap one call.
 * `client.teams.create({ payload }).pipe(withIdempotencyKey(key))`
 */
export const withIdempotencyKey: {
  (key: string): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, key: string): Effect.Effect<A, E, R>
} = Function.dual(2, <A, E, R>(self: Effect.Effect<A, E, R>, key: string) => Effect.provideService(self, CurrentIdempotencyKey, key))

/**
 * A write that takes a key gets one, once per call, so that every retry of the call sends the same key: the caller's
 * (`withIdempotencyKey`, or a header already set), else a fresh UUID.
 */
const withKey = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
(request: HttpClientRequest.HttpClientRequest): Effect.Effect<HttpClientRequest.HttpClientRequest> =>
  request.headers[idempotencyKeyHeader] !== undefined || !takesIdempotencyKey(api, request.method, request.url)
    ? Effect.succeed(request)
    : Effect.map(CurrentIdempotencyKey, (key) =>
      HttpClientRequest.setHeader(request, idempotencyKeyHeader, key ?? crypto.randomUUID()))

const MAX_BACKOFF = Duration.seconds(5)

/** A `Retry-After` longer than this is not waited for: the caller gets the 429 (or 503) and decides. */
const MAX_RETRY_AFTER = Duration.seconds(60)

/** `Retry-After` as seconds or an HTTP date; undefined when absent or unreadable. */
const retryAfter = (response: HttpClientResponse.HttpClientResponse, now: number): Duration.Duration | undefined => {
  const millis = retryAfterMillis(response.headers["retry-after"], now)
  return millis === undefined ? undefined : Duration.millis(millis)
}

/**
 * The errors whose wait travels as `Retry-After` rather than in their body get it from the answer that failed the
 * call: `error.retryAfterSeconds` of a 429 `RateLimited` (what a CLI tells its user to wait) and a 409
 * `IdempotencyConflict`. The call's state is the caller's when it keeps one (the Promise client), else its own.
 */
const withRetryAfter = <A, E, R>(call: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(CurrentCall, (outer) => {
    const state: CallState = outer ?? { attempts: 0 }
    const told = Effect.tapError(call, (error) => {
      if (!(error instanceof RateLimited || error instanceof IdempotencyConflict) || error.retryAfterSeconds !== undefined) return Effect.void
      return Effect.map(Effect.clockWith((clock) => clock.currentTimeMillis), (now) => {
        const wait = retryAfterMillis(state.response?.headers["retry-after"], now)
        if (wait !== undefined) error.retryAfterSeconds = Math.ceil(wait / 1000)
      })
    })
    return outer === undefined ? Effect.provideService(told, CurrentCall, state) : told
  })

/** The JSON body of an answer, or undefined. Read as bytes, which the response caches: the API client decodes the same bytes afterwards. */
const jsonBody = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<unknown> =>
  response.arrayBuffer.pipe(
    Effect.flatMap((bytes) => Effect.try(() => JSON.parse(new TextDecoder().decode(bytes)) as unknown)),
    Effect.orElseSucceed(() => undefined)
  )

const member = (body: unknown, name: string): unknown =>
  typeof body === "object" && body !== null && name in body ? (body as Record<string, unknown>)[name] : undefined

/** Whether an error body says retrying cannot help (`"retryable": false`). */
const saysFinal = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(jsonBody(response), (body) => member(body, "retryable") === false)

/** Whether the answer is 409 `idempotency_key_in_use`: the first request with the key still runs. Read as `saysFinal` reads. */
const keyInUse = (response: HttpClientResponse.HttpClientResponse) =>
  response.status !== 409
    ? Effect.succeed(false)
    : Effect.map(jsonBody(response), (body) => member(body, "error") === "idempotency_key_in_use")

/** An attempt that got no answer within `timeout`: a transport failure, so that it is retried like one. */
const timedOut = (request: HttpClientRequest.HttpClientRequest, timeout: Duration.Duration) =>
  new HttpClientError.HttpClientError({
    reason: new HttpClientError.TransportError({
      request,
      description: `no response within ${Duration.format(timeout)}`,
      cause: new Cause.TimeoutError()
    })
  })

/**
 * Adds orgplane's headers, hooks, timeout and retry policy to an HttpClient (and the given fetch, when it runs over
 * fetch); given the API the client is built over (`Api`, or `apiOf(...)`), also an `Idempotency-Key` on each of its
 * writes that takes one.
 */
export const configure = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  options: ClientOptions,
  api?: HttpApi.HttpApi<Id, Groups>
) =>
(client: HttpClient.HttpClient): HttpClient.HttpClient => {
  const headers: Record<string, string> = {
    ...Object.fromEntries(Object.entries(options.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value])),
    "user-agent": `orgplane-client/${VERSION}${options.userAgent ? ` ${options.userAgent}` : ""}`
  }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey
  const maxRetries = Math.max(0, options.maxRetries ?? 2)
  const timeout = Duration.fromInputUnsafe(options.timeout ?? Duration.seconds(30))
  const baseDelay = Duration.fromInputUnsafe(options.retryDelay ?? Duration.millis(200))

  const backoff = (retry: number) =>
    Effect.map(Random.nextBetween(0.8, 1.2), (jitter) =>
      Duration.times(Duration.min(Duration.times(baseDelay, 2 ** retry), MAX_BACKOFF), jitter))

  const fetch = options.fetch
  return client.pipe(
    // Beneath the retries: each attempt goes through the hooks and the given fetch.
    (client) => fetch === undefined ? client : HttpClient.transformResponse(client, Effect.provideService(FetchHttpClient.Fetch, fetch)),
    perAttempt(options),
    HttpClient.mapRequest(HttpClientRequest.setHeaders(headers)),
    api === undefined ? Function.identity : HttpClient.mapRequestEffect(withKey(api)),
    HttpClient.transform((send, request) => {
      const keyed = request.headers[idempotencyKeyHeader] !== undefined
      const repeatable = keyed || IDEMPOTENT.has(request.method)
      // The timeout becomes a transport failure so that it stays in the client's error type and is retried like one.
      const attempt = Effect.timeoutOrElse(send, { duration: timeout, orElse: () => Effect.fail(timedOut(request, timeout)) })
      const loop = (retry: number): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> =>
        attempt.pipe(
          Effect.matchEffect({
            onFailure: (error) =>
              retry < maxRetries && repeatable && error.reason._tag === "TransportError"
                ? Effect.flatMap(backoff(retry), Effect.sleep).pipe(Effect.andThen(loop(retry + 1)))
                : Effect.fail(error),
            onSuccess: (response) => {
              if (retry >= maxRetries) return Effect.succeed(response)
              return Effect.gen(function*() {
                const again = isRetryable(request.method, response.status, keyed) || (keyed && (yield* keyInUse(response)))
                if (!again) return response
                // An answer that says it will not change (`"retryable": false`, as the suites' errors do) is final.
                if (response.status >= 500 && (yield* saysFinal(response))) return response
                const wait = retryAfter(response, yield* Effect.clockWith((clock) => clock.currentTimeMillis))
                if (wait !== undefined && Duration.isGreaterThan(wait, MAX_RETRY_AFTER)) return response
                // Read the discarded body so its connection goes back to the pool.
                yield* Effect.ignore(response.arrayBuffer)
                const delay = yield* backoff(retry)
                yield* Effect.sleep(wait === undefined ? delay : Duration.max(wait, delay))
                return yield* loop(retry + 1)
              })
            }
          })
        )
      return loop(0)
    }),
    trackCall
  )
}

/** The typed client of any orgplane API (`Api`, or `apiOf(...)` some of its groups), with lenient methods. */
export const makeWith = Effect.fn("OrgplaneClient.makeWith")(function*<Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  options: ClientOptions
) {
  const client = yield* HttpApiClient.make(api, { baseUrl: options.baseUrl, transformClient: configure(options, api) })
  return lenient(api, client, withRetryAfter)
})

/**
 * A client of some groups only, `makeFor([MembersApi, TeamsApi], options)`: a bundle that uses it carries only their
 * schemas, not the whole API's.
 */
export const makeFor = <const Groups extends readonly [HttpApiGroup.Constraint, ...Array<HttpApiGroup.Constraint>]>(
  groups: Groups,
  options: ClientOptions
): ReturnType<typeof makeWith<"orgplane", HttpApiGroup.AddMiddleware<Groups[number], ApiErrors>>> => makeWith(apiOf(...groups), options)

/** The Effect client of the whole API (`Api`'s groups, with the errors every operation may answer). */
export interface OrgplaneApiClient extends ClientOf<HttpApiGroup.AddMiddleware<ApiGroups, ApiErrors>> {}

export class OrgplaneClient extends Context.Service<OrgplaneClient, OrgplaneApiClient>()("@orgplane/client/OrgplaneClient") {}

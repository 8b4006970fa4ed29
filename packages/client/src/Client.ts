/**
 * The Effect-native orgplane client: `HttpApiClient` over the shared API definition, with credentials, a user
 * agent, a timeout, and retries of transient failures (only where repeating the request is safe).
 */
import {
  FetchHttpClient,
  HttpApiClient,
  HttpClient,
  HttpClientError,
  HttpClientRequest,
  type HttpClientResponse
} from "@effect/platform"
import { Api } from "@orgplane/schema"
import { Cause, Context, Duration, Effect, Layer, Random } from "effect"

export interface ClientOptions {
  /** For example `http://127.0.0.1:8787`. */
  readonly baseUrl: string
  /** A session token, sent as `Authorization: Bearer`. */
  readonly token?: string | undefined
  /** An organization API key, sent as `x-api-key`. */
  readonly apiKey?: string | undefined
  /** Time to wait for each attempt's response (default 30 seconds). A timeout counts as a transport failure. */
  readonly timeout?: Duration.DurationInput | undefined
  /** Retries of transient failures: 429, 5xx and network errors (default 2); not an answer whose body says `"retryable": false`. */
  readonly maxRetries?: number | undefined
  /** Delay before the first retry, doubled for each further one up to 5 seconds, with ±20% jitter (default 200 ms). */
  readonly retryDelay?: Duration.DurationInput | undefined
  /** Appended to the user agent, for example `my-script/1.0`. */
  readonly userAgent?: string | undefined
}

export const VERSION = "0.0.0"

/** Methods whose repetition has no further effect: the only ones retried after a 5xx or a network error. */
const IDEMPOTENT = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"])

/** 429 means the server did nothing, so any method may retry it; 408 and 5xx only when repeating is harmless. */
export const isRetryable = (method: string, status: number) =>
  status === 429 || (IDEMPOTENT.has(method) && (status === 408 || status === 502 || status === 503 || status === 504 || status === 500))

const MAX_BACKOFF = Duration.seconds(5)

/** A `Retry-After` longer than this is not waited for: the caller gets the 429 (or 503) and decides. */
const MAX_RETRY_AFTER = Duration.seconds(60)

/** `Retry-After` as seconds or an HTTP date; undefined when absent or unreadable. */
const retryAfter = (response: HttpClientResponse.HttpClientResponse, now: number): Duration.Duration | undefined => {
  const value = response.headers["retry-after"]
  if (value === undefined || value.trim() === "") return undefined
  if (/^\d+$/.test(value.trim())) return Duration.seconds(Number(value))
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Duration.millis(Math.max(0, date - now))
}

/**
 * Whether an error body says retrying cannot help (`"retryable": false`). Read as bytes, which the response caches:
 * the API client decodes the same bytes afterwards.
 */
const saysFinal = (response: HttpClientResponse.HttpClientResponse) =>
  response.arrayBuffer.pipe(
    Effect.flatMap((bytes) => Effect.try(() => JSON.parse(new TextDecoder().decode(bytes)) as unknown)),
    Effect.map((body) => typeof body === "object" && body !== null && (body as { retryable?: unknown }).retryable === false),
    Effect.orElseSucceed(() => false)
  )

/** Adds orgplane's headers, timeout and retry policy to an HttpClient. */
export const configure = (options: ClientOptions) => (client: HttpClient.HttpClient): HttpClient.HttpClient => {
  const headers: Record<string, string> = {
    "user-agent": `orgplane-client/${VERSION}${options.userAgent ? ` ${options.userAgent}` : ""}`
  }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey
  const maxRetries = Math.max(0, options.maxRetries ?? 2)
  const timeout = Duration.decode(options.timeout ?? Duration.seconds(30))
  const baseDelay = Duration.decode(options.retryDelay ?? Duration.millis(200))

  const backoff = (retry: number) =>
    Effect.map(Random.nextRange(0.8, 1.2), (jitter) =>
      Duration.times(Duration.min(Duration.times(baseDelay, 2 ** retry), MAX_BACKOFF), jitter))

  return client.pipe(
    HttpClient.mapRequest(HttpClientRequest.setHeaders(headers)),
    HttpClient.transform((send, request) => {
      const idempotent = IDEMPOTENT.has(request.method)
      // The timeout becomes a transport failure so that it stays in the client's error type and is retried like one.
      const attempt = Effect.timeoutFail(send, {
        duration: timeout,
        onTimeout: () =>
          new HttpClientError.RequestError({
            request,
            reason: "Transport",
            description: `no response within ${Duration.format(timeout)}`,
            cause: new Cause.TimeoutException()
          })
      })
      const loop = (retry: number): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> =>
        attempt.pipe(
          Effect.matchEffect({
            onFailure: (error) =>
              retry < maxRetries && idempotent && error._tag === "RequestError" && error.reason === "Transport"
                ? Effect.flatMap(backoff(retry), Effect.sleep).pipe(Effect.zipRight(loop(retry + 1)))
                : Effect.fail(error),
            onSuccess: (response) => {
              if (retry >= maxRetries || !isRetryable(request.method, response.status)) return Effect.succeed(response)
              return Effect.gen(function*() {
                // An answer that says it will not change (`"retryable": false`, as the suites' errors do) is final.
                if (response.status >= 500 && (yield* saysFinal(response))) return response
                const wait = retryAfter(response, yield* Effect.clockWith((clock) => clock.currentTimeMillis))
                if (wait !== undefined && Duration.greaterThan(wait, MAX_RETRY_AFTER)) return response
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
    })
  )
}

/** Builds the typed client: `client.apiKeys.list({ urlParams: {} })`, one namespace per API group. */
export const make = (options: ClientOptions) =>
  HttpApiClient.make(Api, { baseUrl: options.baseUrl, transformClient: configure(options) })

export type OrgplaneApiClient = Effect.Effect.Success<ReturnType<typeof make>>

export class OrgplaneClient extends Context.Tag("@orgplane/client/OrgplaneClient")<OrgplaneClient, OrgplaneApiClient>() {}

/** The client as a layer; needs an HttpClient (see `layerFetch`). */
export const layer = (options: ClientOptions) => Layer.effect(OrgplaneClient, make(options))

/** The client over the platform's `fetch`. */
export const layerFetch = (options: ClientOptions) => layer(options).pipe(Layer.provide(FetchHttpClient.layer))

/**
 * The Effect-native orgplane client: `HttpApiClient` over the shared API definition, with credentials, a user
 * agent, a timeout, and retries of transient failures (only where repeating the request is safe).
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Api } from "@orgplane/schema"
import { Context, Duration, Effect, Layer, Schedule } from "effect"

export interface ClientOptions {
  /** For example `http://127.0.0.1:8787`. */
  readonly baseUrl: string
  /** A session token, sent as `Authorization: Bearer`. */
  readonly token?: string | undefined
  /** An organization API key, sent as `x-api-key`. */
  readonly apiKey?: string | undefined
  /** Per-request timeout (default 30 seconds). */
  readonly timeout?: Duration.DurationInput | undefined
  /** Retries of transient failures: 429, 5xx and network errors (default 2). */
  readonly maxRetries?: number | undefined
  /** Appended to the user agent, for example `my-script/1.0`. */
  readonly userAgent?: string | undefined
}

export const VERSION = "0.0.0"

/** Methods whose repetition has no further effect: the only ones retried after a 5xx or a network error. */
const IDEMPOTENT = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"])

/** 429 means the server did nothing, so any method may retry it; 408 and 5xx only when repeating is harmless. */
export const isRetryable = (method: string, status: number) =>
  status === 429 || (IDEMPOTENT.has(method) && (status === 408 || status === 502 || status === 503 || status === 504 || status === 500))

class RetryableResponse {
  readonly _tag = "RetryableResponse"
  constructor(readonly response: HttpClientResponse.HttpClientResponse) {}
}

const isTransportFailure = (error: unknown, method: string) =>
  (error as { _tag?: string; reason?: string })?._tag === "RequestError" &&
  (error as { reason?: string }).reason === "Transport" &&
  IDEMPOTENT.has(method)

/** Adds orgplane's headers, timeout and retry policy to an HttpClient. */
export const configure = (options: ClientOptions) => (client: HttpClient.HttpClient): HttpClient.HttpClient => {
  const headers: Record<string, string> = {
    "user-agent": `orgplane-client/${VERSION}${options.userAgent ? ` ${options.userAgent}` : ""}`
  }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey
  const maxRetries = options.maxRetries ?? 2
  const timeout = options.timeout ?? Duration.seconds(30)
  return client.pipe(
    HttpClient.mapRequest(HttpClientRequest.setHeaders(headers)),
    HttpClient.transformResponse((send) =>
      Effect.gen(function*() {
        const response = yield* Effect.timeout(send, timeout)
        if (isRetryable(response.request.method, response.status)) return yield* Effect.fail(new RetryableResponse(response))
        return response
      }).pipe(
        Effect.retry({
          times: maxRetries,
          schedule: Schedule.exponential("200 millis", 2).pipe(Schedule.jittered),
          while: (error: unknown) =>
            error instanceof RetryableResponse || isTransportFailure(error, (error as any)?.request?.method ?? "")
        }),
        Effect.catchIf((error): error is RetryableResponse => error instanceof RetryableResponse, (error) =>
          Effect.succeed(error.response))
      )
    )
  ) as HttpClient.HttpClient
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


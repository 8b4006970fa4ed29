/**
 * How the MCP server reaches the API: one HTTP exchange per operation, with the caller's own credential. The server's
 * `/mcp` sends it to its own routes in process (so a call runs the endpoint's handler through the same middleware,
 * policy check, idempotency and audit write as any HTTP request); `orgplane mcp serve` sends it over the network to
 * the server its profile names (`fromHttpClient`).
 */
import { Api, authorizationCheckPath, type AuthorizationCheckRequest, type Operation, operationAt } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"

/** One API request, as the MCP server makes it from an operation and its arguments. */
export interface OperationRequest {
  /** The operation it is for (`teams.removeMember`): a transport sends it only where that operation's route is. */
  readonly operation: string
  readonly method: Operation["method"]
  /** The concrete path, its parameters filled in and escaped: `/v1/teams/tem_…`. */
  readonly path: string
  /** The query's members; an array repeats the member. */
  readonly query: Readonly<Record<string, string | ReadonlyArray<string>>>
  /** Request headers beyond the credential (`idempotency-key`, `orgplane-channel`, `orgplane-read-only`), lower case. */
  readonly headers: Readonly<Record<string, string>>
  /** The JSON body, or undefined for none. */
  readonly body: unknown
}

/** The API's answer: its status, headers (lower case) and JSON body (undefined when it sent none). */
export interface OperationResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
}

/** The API could not be reached (network, or an answer that was not JSON): not an answer of the API. */
export class TransportError extends Schema.TaggedError<TransportError>("@orgplane/mcp/TransportError")("TransportError", {
  message: Schema.String
}) {}

/** Sends operation requests with the caller's credential. Provided per MCP request on HTTP, once on stdio. */
export class Transport extends Context.Service<Transport, {
  readonly send: (request: OperationRequest) => Effect.Effect<OperationResponse, TransportError>
  /**
   * Asks the API whether the caller may send `request`, running nothing (its dry authorization,
   * `POST /v1/authorization-checks`): 204 with `Orgplane-Authorization-Check: authorized`, or the refusal the request
   * itself would get (its status and body, the header `refused`). Any other answer is no check's.
   */
  readonly authorize: (request: OperationRequest) => Effect.Effect<OperationResponse, TransportError>
}>()("@orgplane/mcp/Transport") {}

/**
 * The headers a caller may send beside its credential (@orgplane/schema's CallerHeaders.ts): the channel the audit
 * log records (`via.channel`), and the narrowing to reads the server enforces (403 `read_only_credential`).
 */
export { channelHeader, readOnlyHeader } from "@orgplane/schema"

/**
 * The URL of `request` under `baseUrl` (an origin, or an origin and a mount path; no trailing slash), or why it is not
 * sent: an operation runs only as itself. The URL must carry the path exactly as built (URL parsing resolves `.` and
 * `..` segments: `/v1/teams/../members/om_…` is `DELETE /v1/members/om_…`, another operation), and that path must
 * reach the request's own operation as the server's router matches it (@orgplane/schema's `operationAt`). Every
 * transport sends through here.
 */
export const urlOf = (baseUrl: string, request: OperationRequest): Effect.Effect<URL, TransportError> => {
  const refused = (reason: string) =>
    Effect.fail(new TransportError({ message: `Not sent: ${request.method} ${request.path} ${reason}; ${request.operation} runs only as itself.` }))
  if (!URL.canParse(baseUrl + request.path)) return refused("is not a URL")
  const url = new URL(baseUrl + request.path)
  if (url.pathname !== new URL(baseUrl).pathname.replace(/\/$/, "") + request.path) {
    return refused(`would be sent as ${url.pathname} (a "." or ".." segment resolved)`)
  }
  const reached = operationAt(Api, request.method, request.path)
  if (reached !== request.operation) return refused(reached === undefined ? "reaches no operation" : `reaches ${reached}`)
  for (const [name, value] of Object.entries(request.query)) {
    for (const item of typeof value === "string" ? [value] : value) url.searchParams.append(name, item)
  }
  return Effect.succeed(url)
}

/**
 * A transport over `HttpClient` to `baseUrl` (no trailing slash), sending `credential`'s headers with every request
 * (`authorization: Bearer <session token>` or `x-api-key: <key>`).
 */
export const fromHttpClient = (options: {
  readonly baseUrl: string
  readonly credential: Readonly<Record<string, string>>
}): Effect.Effect<Transport["Service"], never, HttpClient.HttpClient> =>
  Effect.map(Effect.service(HttpClient.HttpClient), (client) => {
    const exchange = Effect.fnUntraced(function*(outgoing: HttpClientRequest.HttpClientRequest) {
      const response = yield* client.execute(outgoing).pipe(
        Effect.mapError((error) => new TransportError({ message: `Could not reach ${options.baseUrl}: ${error.message}` }))
      )
      const text = yield* response.text.pipe(
        Effect.mapError((error) => new TransportError({ message: `Could not read the answer: ${error.message}` }))
      )
      const body = text === "" ? undefined : yield* Effect.try({
        try: (): unknown => JSON.parse(text),
        catch: () => new TransportError({ message: `The API answered ${response.status} with a body that is not JSON.` })
      })
      return { status: response.status, headers: response.headers, body } satisfies OperationResponse
    })
    const headersOf = (request: OperationRequest) => ({ ...request.headers, ...options.credential, accept: "application/json" })
    return {
      send: Effect.fn("Transport.send")(function*(request: OperationRequest) {
        const url = yield* urlOf(options.baseUrl, request)
        return yield* exchange(HttpClientRequest.make(request.method)(url).pipe(
          HttpClientRequest.setHeaders(headersOf(request)),
          request.body === undefined ? (r) => r : HttpClientRequest.bodyJsonUnsafe(request.body)
        ))
      }),
      authorize: Effect.fn("Transport.authorize")(function*(request: OperationRequest) {
        // The URL it would be sent to is checked as for `send`: a check of a request that would not be sent is none.
        yield* urlOf(options.baseUrl, request)
        const checked: AuthorizationCheckRequest = {
          operation: request.operation,
          method: request.method,
          path: request.path,
          query: request.query,
          ...(request.body === undefined ? {} : { body: request.body })
        }
        return yield* exchange(HttpClientRequest.post(`${options.baseUrl}${authorizationCheckPath}`).pipe(
          HttpClientRequest.setHeaders(headersOf(request)),
          HttpClientRequest.bodyJsonUnsafe(checked)
        ))
      })
    }
  })

/**
 * How the MCP server reaches the API: one HTTP exchange per operation, with the caller's own credential. The server's
 * `/mcp` sends it to its own routes in process (so a call runs the endpoint's handler through the same middleware,
 * policy check, idempotency and audit write as any HTTP request); `orgplane mcp serve` sends it over the network to
 * the server its profile names (`fromHttpClient`).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type { HttpMethod } from "effect/http/HttpMethod"

/** One API request, as the MCP server makes it from an operation and its arguments. */
export interface OperationRequest {
  readonly method: HttpMethod
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
}>()("@orgplane/mcp/Transport") {}

/**
 * The headers a caller may send beside its credential (@orgplane/schema's CallerHeaders.ts): the channel the audit
 * log records (`via.channel`), and the narrowing to reads the server enforces (403 `read_only_credential`).
 */
export { channelHeader, readOnlyHeader } from "@orgplane/schema"

/**
 * A transport over `HttpClient` to `baseUrl` (no trailing slash), sending `credential`'s headers with every request
 * (`authorization: Bearer <session token>` or `x-api-key: <key>`).
 */
export const fromHttpClient = (options: {
  readonly baseUrl: string
  readonly credential: Readonly<Record<string, string>>
}): Effect.Effect<Transport["Service"], never, HttpClient.HttpClient> =>
  Effect.map(Effect.service(HttpClient.HttpClient), (client) => ({
    send: Effect.fn("Transport.send")(function*(request: OperationRequest) {
      const url = new URL(options.baseUrl + request.path)
      for (const [name, value] of Object.entries(request.query)) {
        for (const item of typeof value === "string" ? [value] : value) url.searchParams.append(name, item)
      }
      const outgoing = HttpClientRequest.make(request.method)(url).pipe(
        HttpClientRequest.setHeaders({ ...request.headers, ...options.credential, accept: "application/json" }),
        request.body === undefined ? (r) => r : HttpClientRequest.bodyJsonUnsafe(request.body)
      )
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
      return { status: response.status, headers: response.headers, body }
    })
  }))

/**
 * The Promise facade, for code that does not use Effect: the Effect client's namespaces and methods, each
 * returning a Promise of the decoded success value, rejecting with `OrgplaneError` (the server answered with an
 * error), `OrgplaneConnectionError` (no answer) or `OrgplaneValidationError` (the request was not sent). Derived
 * from the Effect client's type, so every endpoint added to the API appears here, fully typed, without a change.
 *
 * Its requests keep the shape they have had since 0.1.0, `{ path, urlParams, payload, headers }`, so code written
 * against it keeps working; the Effect client names the parts `params`, `query`, `payload`, `headers`, and each call
 * maps the one onto the other (`path` → `params`, `urlParams` → `query`).
 */
import { Api, apiOf, errorResponseOf, type Page } from "@orgplane/schema"
import type * as Brand from "effect/Brand"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Function from "effect/Function"
import type * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { type ClientOptions, makeWith, type OrgplaneApiClient, withIdempotencyKey } from "./Client.js"
import { OrgplaneConnectionError, OrgplaneError, OrgplaneValidationError, unreachableMessage } from "./Errors.js"
import { type CallState, CurrentCall, requestIdHeader } from "./Hooks.js"
import type { PageRequestArgument } from "./Pagination.js"
import type { ClientOf, RequestParts, SuccessOf } from "./Requests.js"

/** Per-call options of every Promise method. */
export interface RequestOptions {
  /** Aborting it cancels the request (and any retry); the Promise rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined
  /**
   * The `Idempotency-Key` of this write, instead of a fresh one per call: the same key on a later call (after a
   * restart, say) gets the first call's answer instead of making the change again. Ignored by reads and by
   * operations open to anonymous callers.
   */
  readonly idempotencyKey?: string | undefined
}

/**
 * Plain strings and numbers where the API has branded ones (ids): callers without Effect hold ids as strings, and
 * the client validates every id before sending anyway.
 */
export type Unbranded<A> = A extends Brand.Brand<infer _K> ? Brand.Brand.Unbranded<A>
  : A extends Date | Uint8Array | FormData ? A
  : A extends ReadonlyArray<infer I> ? ReadonlyArray<Unbranded<I>>
  : A extends object ? { readonly [K in keyof A]: Unbranded<A[K]> }
  : A

/** The Promise client's name of an Effect client's request part: `params` is `path`, `query` is `urlParams`. */
export type PromisePart<K> = K extends "params" ? "path" : K extends "query" ? "urlParams" : K

/** An Effect client's request with its parts under the Promise client's names (`{ params, query }` → `{ path, urlParams }`). */
export type PromiseRequest<Req> = { [K in keyof Req as PromisePart<K>]: Req[K] }

/** @deprecated The same as `PromisePart`, under the name of its first release. */
export type Effect3Part<K> = PromisePart<K>

/** @deprecated The same as `PromiseRequest`, under the name of its first release. */
export type Effect3Request<Req> = PromiseRequest<Req>

/**
 * What a Promise method takes: its Effect method's request without `responseMode`, under the Promise client's names
 * of its parts (`path`, `urlParams`, `payload`, `headers`), ids unbranded, optional parts optional.
 */
export type RequestOf<M> = Unbranded<PromiseRequest<RequestParts<M>>>

/** The value an Effect client method succeeds with (neither the response nor the pair of `responseMode`). */
type SuccessValue<M> = M extends (request: never) => Effect.Effect<infer A, infer _E, infer _R> ? SuccessOf<A> : never

/**
 * One Effect client method as a Promise method; its request may be left out when nothing in it is required
 * (`client.members.list()`).
 */
export type PromiseMethod<M> = {} extends RequestOf<M>
  ? (request?: RequestOf<M>, options?: RequestOptions) => Promise<SuccessValue<M>>
  : (request: RequestOf<M>, options?: RequestOptions) => Promise<SuccessValue<M>>

/** An Effect client (groups of methods, or top-level methods) as Promise methods. */
export type PromiseClient<Client> = {
  readonly [K in keyof Client]: Client[K] extends (request: never) => unknown ? PromiseMethod<Client[K]>
    : { readonly [M in keyof Client[K]]: PromiseMethod<Client[K][M]> }
}

export interface Closable {
  /** Releases the client's resources; later calls fail. */
  readonly close: () => Promise<void>
}

export type OrgplanePromiseClient = PromiseClient<OrgplaneApiClient> & Closable

/** The body as sent: JSON when it parses, else the text, else undefined when empty. */
const readBody = (response: HttpClientResponse.HttpClientResponse) =>
  response.arrayBuffer.pipe(
    Effect.map((buffer): unknown => {
      const text = new TextDecoder().decode(buffer)
      if (text === "") return undefined
      try {
        return JSON.parse(text) as unknown
      } catch {
        return text
      }
    }),
    Effect.orElseSucceed(() => undefined)
  )

const unexpected = (response: HttpClientResponse.HttpClientResponse, cause: unknown) =>
  Effect.map(readBody(response), (body) =>
    new OrgplaneError({ status: response.status, body, tag: "UnexpectedResponse", headers: response.headers, cause }))

/** The status an error's wire schema declares (`HttpApiSchema.status`); Effect 4 keeps its reader internal. */
const statusOf = (ast: SchemaAST.AST) => SchemaAST.resolveAt<number>("httpApiStatus")(ast) ?? ast.context?.annotations?.httpApiStatus ?? 500

const tagOf = (error: unknown) =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" ? error._tag : "UnexpectedResponse"

/** Turns a failure of the Effect client into what the Promise rejects with, from what the call sent and received. */
const toRejection = (error: unknown, call: CallState): Effect.Effect<unknown> => {
  const { request, response } = call
  const wire = errorResponseOf(error)
  if (wire !== undefined) {
    return Effect.succeed(
      new OrgplaneError({
        status: response?.status ?? statusOf(wire.ast),
        // Error wire schemas need no services: they are plain transformations.
        body: Schema.encodeUnknownSync(wire as Schema.Codec<unknown, unknown>)(error),
        tag: tagOf(error),
        headers: response?.headers,
        cause: error
      })
    )
  }
  if (HttpClientError.isHttpClientError(error)) {
    const answered = error.response
    if (answered !== undefined) return unexpected(answered, error)
    const timedOut = Cause.isTimeoutError(error.reason.cause)
    const message = unreachableMessage(error.request.url, error.reason.cause, timedOut ? error.reason.description : undefined)
    return Effect.succeed(new OrgplaneConnectionError(message, { timedOut, requestId: request?.headers[requestIdHeader], cause: error }))
  }
  // Anything else after a response (a body that does not match the API, a platform error) is an unexpected answer.
  if (response !== undefined) return unexpected(response, error)
  if (Schema.isSchemaError(error)) return Effect.succeed(new OrgplaneValidationError(error))
  return Effect.succeed(error)
}

type AnyMethod = (request: unknown) => Effect.Effect<unknown, unknown>

const isMethod = (value: unknown): value is AnyMethod => typeof value === "function"

/** The request parts a Promise method reads, each with the name of its part in the Effect client's request. */
const promiseParts = [["path", "params"], ["urlParams", "query"], ["payload", "payload"], ["headers", "headers"]] as const

/**
 * A Promise method's request (`{ path, urlParams, payload, headers }`) as the Effect client's (`{ params, query,
 * payload, headers }`); it reads those four parts and nothing else of the request.
 */
const toEffectRequest = (request: unknown): unknown => {
  if (typeof request !== "object" || request === null) return request
  const parts: Record<string, unknown> = {}
  for (const [from, to] of promiseParts) {
    const part: unknown = Reflect.get(request, from)
    if (part !== undefined) parts[to] = part
  }
  return parts
}

/** The Promise client of an API: the Effect client's methods, run on a runtime of its own over fetch. */
const fromApi = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  options: ClientOptions
): PromiseClient<ClientOf<Groups>> & Closable => {
  const runtime = ManagedRuntime.make(FetchHttpClient.layer)
  // The orgplane groups need no client middleware: fetch is all the client needs.
  const effectClient: object = runtime.runSync(makeWith(api, options) as Effect.Effect<ClientOf<Groups>, never, HttpClient.HttpClient>)

  let closed = false

  const promisify = (method: AnyMethod) =>
  (request: unknown, requestOptions?: RequestOptions): Promise<unknown> => {
    if (closed) return Promise.reject(new Error("this orgplane client is closed"))
    const call: CallState = { attempts: 0 }
    const key = requestOptions?.idempotencyKey
    const run = method(toEffectRequest(request)).pipe(
      key === undefined ? Function.identity : withIdempotencyKey(key),
      Effect.catch((error) => Effect.flatMap(toRejection(error, call), Effect.fail)),
      Effect.provideService(CurrentCall, call)
    )
    const signal = requestOptions?.signal
    return runtime.runPromiseExit(run, signal ? { signal } : undefined).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      if (signal?.aborted) throw signal.reason
      const failure = Cause.squash(exit.cause)
      throw failure instanceof Error ? failure : new Error(String(failure), { cause: failure })
    })
  }

  // Mirror the Effect client's shape: a namespace per group, and top-level methods (groups with `topLevel: true`).
  const client: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(effectClient)) {
    if (isMethod(value)) client[key] = promisify(value)
    else if (typeof value === "object" && value !== null) {
      client[key] = Object.fromEntries(Object.entries(value).flatMap(([name, method]) => isMethod(method) ? [[name, promisify(method)]] : []))
    }
  }
  client.close = () => {
    closed = true
    return runtime.dispose()
  }
  // The mapped type of the methods built above, which TypeScript cannot follow through `Object.entries`.
  return client as PromiseClient<ClientOf<Groups>> & Closable
}

/**
 * A client for code without Effect: `await client.apiKeys.list({ urlParams: { limit: 20 } })`. Options as for the
 * Effect client; `timeout` and `retryDelay` may be given in milliseconds.
 */
export const createClient = (options: ClientOptions): OrgplanePromiseClient => fromApi(Api, options)

/**
 * A client of some groups only, `createClientFor([MembersApi], options)`: a browser bundle that uses it carries only
 * their schemas, not the whole API's.
 */
export const createClientFor = <const Groups extends readonly [HttpApiGroup.Constraint, ...Array<HttpApiGroup.Constraint>]>(
  groups: Groups,
  options: ClientOptions
) => fromApi(apiOf(...groups), options)

/**
 * A list request of the Promise client: whatever the endpoint takes, with the cursor in `urlParams` (the Effect client's
 * `PageRequest` has it in `query`); left out when nothing is required.
 */
export interface PromisePageRequest {
  // The index signature keeps this from being a "weak type", which `{ limit: 2 }` would not be assignable to.
  readonly urlParams?: { readonly cursor?: string; readonly [param: string]: unknown } | undefined
}

/** The same request positioned at `cursor` (the request's own cursor, if any, is where the walk starts). */
const withUrlCursor = <Req extends PromisePageRequest | undefined>(request: Req, cursor: string | undefined): Req =>
  cursor === undefined ? request : { ...request, urlParams: { ...request?.urlParams, cursor } } as Req

/**
 * Every item of a list, fetching pages as the loop needs them:
 * `for await (const key of paginate(client.apiKeys.list, { urlParams: { limit: 100 } })) { ... }`, or
 * `paginate(client.members.list)` when the list needs no argument.
 */
export const paginate = <Req extends PromisePageRequest | undefined, A>(
  list: (request: Req) => Promise<Page<A>>,
  ...[request]: PageRequestArgument<Req>
): AsyncIterable<A> => ({
  async *[Symbol.asyncIterator]() {
    let cursor = request?.urlParams?.cursor
    do {
      const page = await list(withUrlCursor(request as Req, cursor))
      yield* page.items
      cursor = page.nextCursor ?? undefined
    } while (cursor !== undefined)
  }
})

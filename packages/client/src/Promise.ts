/**
 * The Promise facade, for code that does not use Effect: the Effect client's namespaces and methods, each
 * returning a Promise of the decoded success value, rejecting with `OrgplaneError` (the server answered with an
 * error), `OrgplaneConnectionError` (no answer) or `OrgplaneValidationError` (the request was not sent). Derived
 * from the Effect client's type, so every endpoint added to the API appears here, fully typed, without a change.
 */
import { FetchHttpClient, HttpApiClient, HttpApiSchema, HttpClient, HttpClientError, type HttpClientResponse } from "@effect/platform"
import { Api, errorResponseOf, type Page } from "@orgplane/schema"
import { type Brand, Cause, Effect, Exit, FiberRef, ManagedRuntime, ParseResult, Schema } from "effect"
import { type ClientOptions, configure, type OrgplaneApiClient } from "./Client.js"
import { type PageRequest, withCursor } from "./Pagination.js"

/** Per-call options of every Promise method. */
export interface RequestOptions {
  /** Aborting it cancels the request (and any retry); the Promise rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined
}

type Simplify<A> = { [K in keyof A]: A[K] } & {}

/**
 * Plain strings and numbers where the API has branded ones (ids): callers without Effect hold ids as strings, and
 * the client validates every id before sending anyway.
 */
export type Unbranded<A> = A extends Brand.Brand<any> ? Brand.Brand.Unbranded<A>
  : A extends Date | Uint8Array | FormData ? A
  : A extends ReadonlyArray<infer I> ? ReadonlyArray<Unbranded<I>>
  : A extends object ? { readonly [K in keyof A]: Unbranded<A[K]> }
  : A

/** An Effect client method's request without `withResponse` (a Promise method resolves to the value only). */
type RequestOf<Req> = Req extends { readonly withResponse?: any }
  ? [keyof Omit<Req, "withResponse">] extends [never] ? void : Unbranded<Simplify<Omit<Req, "withResponse">>>
  : Req

/**
 * One Effect client method as a Promise method. The Effect methods are generic in `withResponse`; read through a
 * plain function type they answer `A | [A, HttpClientResponse]`, and the tuple is the `withResponse: true` case.
 */
export type PromiseMethod<M> = M extends (request: infer Req) => Effect.Effect<infer A, infer _E, infer _R>
  ? (request: RequestOf<Req>, options?: RequestOptions) => Promise<Exclude<A, readonly [any, HttpClientResponse.HttpClientResponse]>>
  : never

/** An Effect client (groups of methods, or top-level methods) as Promise methods. */
export type PromiseClient<Client> = {
  readonly [K in keyof Client]: Client[K] extends (...args: ReadonlyArray<any>) => any ? PromiseMethod<Client[K]>
    : { readonly [M in keyof Client[K]]: PromiseMethod<Client[K][M]> }
}

export type OrgplanePromiseClient = PromiseClient<OrgplaneApiClient> & {
  /** Releases the client's resources; later calls fail. */
  readonly close: () => Promise<void>
}

/** The server answered with an error: its status, its exact JSON body, and the error class it decodes to. */
export class OrgplaneError extends Error {
  override readonly name = "OrgplaneError"
  /** The HTTP status, for example 404. */
  readonly status: number
  /** The response body exactly as sent, for example `{ error: "unauthorized" }`. */
  readonly body: unknown
  /** The machine-readable code: the body's `error`, else its `reason` (403s), for example `api_key_not_found`. */
  readonly code: string | undefined
  /** The `_tag` of the API's error class (`NotFound`, `Forbidden`, ...), or `UnexpectedResponse` for an answer the API does not declare. */
  readonly tag: string
  /** The response headers (lower-case names), for example `retry-after`. */
  readonly headers: Readonly<Record<string, string>>

  constructor(options: {
    readonly status: number
    readonly body: unknown
    readonly tag: string
    readonly headers?: Readonly<Record<string, string>> | undefined
    readonly cause?: unknown
  }) {
    const body = options.body as Record<string, unknown> | undefined
    const code = typeof body?.error === "string" ? body.error : typeof body?.reason === "string" ? body.reason : undefined
    const detail = typeof body?.message === "string" ? `: ${body.message}` : ""
    super(`${options.status} ${code ?? options.tag}${detail}`, { cause: options.cause })
    this.status = options.status
    this.body = options.body
    this.code = code
    this.tag = options.tag
    this.headers = options.headers ?? {}
  }
}

/** No answer from the server: it could not be reached, the connection failed, or the timeout elapsed. */
export class OrgplaneConnectionError extends Error {
  override readonly name = "OrgplaneConnectionError"
  /** True when the request timed out, false for a network failure. */
  readonly timedOut: boolean

  constructor(message: string, options: { readonly timedOut: boolean; readonly cause?: unknown }) {
    super(message, { cause: options.cause })
    this.timedOut = options.timedOut
  }
}

/** The request does not match the API's schema (for example a page size of 1000); nothing was sent. */
export class OrgplaneValidationError extends Error {
  override readonly name = "OrgplaneValidationError"
  /** Every bad field, with its path in the request. */
  readonly issues: ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }>

  constructor(error: ParseResult.ParseError) {
    super(`invalid request: ${error.message}`, { cause: error })
    this.issues = ParseResult.ArrayFormatter.formatErrorSync(error).map(({ message, path }) => ({ message, path }))
  }
}

/** The last response of the current call, so that a failure can be reported with the status and body that caused it. */
const lastResponse = FiberRef.unsafeMake<{ response?: HttpClientResponse.HttpClientResponse } | undefined>(undefined)

const recordResponse = HttpClient.tap((response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(FiberRef.get(lastResponse), (slot) => {
    if (slot !== undefined) slot.response = response
  })
)

/** The body as sent: JSON when it parses, else the text, else undefined when empty. */
const readBody = (response: HttpClientResponse.HttpClientResponse) =>
  response.arrayBuffer.pipe(
    Effect.map((buffer) => {
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

/** Turns a failure of the Effect client into what the Promise rejects with. */
const toRejection = (error: unknown, response: HttpClientResponse.HttpClientResponse | undefined): Effect.Effect<unknown> => {
  // Error wire schemas need no services: they are plain transformations.
  const wire = errorResponseOf(error) as Schema.Schema<unknown, unknown> | undefined
  if (wire !== undefined) {
    return Effect.succeed(
      new OrgplaneError({
        status: HttpApiSchema.getStatusError(wire),
        body: Schema.encodeSync(wire)(error),
        tag: (error as { readonly _tag: string })._tag,
        headers: response?.headers,
        cause: error
      })
    )
  }
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "ResponseError") return unexpected(error.response, error)
    const timedOut = error.cause instanceof Cause.TimeoutException
    return Effect.succeed(new OrgplaneConnectionError(error.message, { timedOut, cause: error }))
  }
  // Anything else after a response (a body that does not match the API, a platform error) is an unexpected answer.
  if (response !== undefined) return unexpected(response, error)
  if (ParseResult.isParseError(error)) return Effect.succeed(new OrgplaneValidationError(error))
  return Effect.succeed(error)
}

type AnyMethod = (request: unknown) => Effect.Effect<unknown, unknown>

/**
 * A client for code without Effect: `await client.apiKeys.list({ urlParams: { limit: 20 } })`. Options as for the
 * Effect client; `timeout` and `retryDelay` may be given in milliseconds.
 */
export const createClient = (options: ClientOptions): OrgplanePromiseClient => {
  const runtime = ManagedRuntime.make(FetchHttpClient.layer)
  const effectClient: OrgplaneApiClient = runtime.runSync(
    HttpApiClient.make(Api, {
      baseUrl: options.baseUrl,
      transformClient: (client) => recordResponse(configure(options)(client))
    })
  )

  let closed = false

  const promisify = (method: AnyMethod) =>
  (request: unknown, requestOptions?: RequestOptions): Promise<unknown> => {
    if (closed) return Promise.reject(new Error("this orgplane client is closed"))
    const slot: { response?: HttpClientResponse.HttpClientResponse } = {}
    const call = method(request).pipe(
      Effect.catchAll((error) => Effect.flatMap(toRejection(error, slot.response), Effect.fail)),
      Effect.locally(lastResponse, slot)
    )
    const signal = requestOptions?.signal
    return runtime.runPromiseExit(call, signal ? { signal } : undefined).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      if (signal?.aborted) throw signal.reason
      const failure = Cause.squash(exit.cause)
      throw failure instanceof Error ? failure : new Error(String(failure), { cause: failure })
    })
  }

  // Mirror the Effect client's shape: a namespace per group, and top-level methods (groups with `topLevel: true`).
  const client: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(effectClient as Record<string, AnyMethod | Record<string, AnyMethod>>)) {
    client[key] = typeof value === "function"
      ? promisify(value)
      : Object.fromEntries(Object.entries(value).map(([name, method]) => [name, promisify(method)]))
  }
  client.close = () => {
    closed = true
    return runtime.dispose()
  }
  return client as OrgplanePromiseClient
}

/**
 * Every item of a list, fetching pages as the loop needs them:
 * `for await (const key of paginate(client.apiKeys.list, { urlParams: { limit: 100 } })) { ... }`.
 */
export const paginate = <Req extends PageRequest, A>(
  list: (request: Req) => Promise<Page<A>>,
  request: Req
): AsyncIterable<A> => ({
  async *[Symbol.asyncIterator]() {
    let cursor = request.urlParams.cursor
    do {
      const page = await list(withCursor(request, cursor))
      yield* page.items
      cursor = page.nextCursor ?? undefined
    } while (cursor !== undefined)
  }
})

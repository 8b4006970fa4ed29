/**
 * Optional arguments, optional at run time too: a request part (`params`, `query`, `payload`, `headers`) with no
 * required member may be left out, and a request with only such parts may be left out whole. `HttpApiClient` encodes
 * each part its endpoint declares whenever it is given a request, so `client.members.list({})` would fail validation
 * (and, given nothing at all, it sends the request without encoding any part: `client.teams.get()` would reach
 * `/v1/teams/:teamId`); the methods here fill the missing parts in before calling it, and their types say the same.
 */
import type * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiClient from "effect/http-api/HttpApiClient"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

type Part = "params" | "query" | "payload" | "headers"

type Simplify<A> = { [K in keyof A]: A[K] } & {}

/** `{ query: { limit?: number } }` → `{ query?: { limit?: number } }`: parts without a required member become optional. */
export type LenientRequest<Req> = Simplify<
  & { readonly [K in keyof Req as K extends Part ? {} extends Req[K] ? K : never : never]?: Req[K] }
  & { readonly [K in keyof Req as K extends Part ? {} extends Req[K] ? never : K : K]: Req[K] }
>

/**
 * What an `HttpApiClient` method takes, without `responseMode` and `sseOptions` and with optional parts optional
 * (`{}` when it takes nothing).
 */
export type RequestParts<M> = M extends (request: infer Req) => unknown
  ? LenientRequest<Omit<Exclude<Req, void>, "responseMode" | "sseOptions">>
  : never

/** A client method's success value (the `"decoded-only"` one: neither the response nor the pair). */
export type SuccessOf<A> = Exclude<A, readonly [unknown, HttpClientResponse.HttpClientResponse] | HttpClientResponse.HttpClientResponse>

/**
 * An `HttpApiClient` method taking a `LenientRequest`, itself optional when nothing in it is required; still generic
 * in `responseMode` (`"decoded-and-response"` answers the response beside the value).
 */
export type LenientMethod<M> = M extends (request: never) => Effect.Effect<infer A, infer E, infer R>
  ? {} extends RequestParts<M> ? <Mode extends HttpApiClient.Client.ResponseMode = "decoded-only">(
      request?: RequestParts<M> & { readonly responseMode?: Mode }
    ) => Effect.Effect<HttpApiClient.Client.Response<SuccessOf<A>, Mode>, E, R>
  : <Mode extends HttpApiClient.Client.ResponseMode = "decoded-only">(
    request: RequestParts<M> & { readonly responseMode?: Mode }
  ) => Effect.Effect<HttpApiClient.Client.Response<SuccessOf<A>, Mode>, E, R>
  : never

/** An `HttpApiClient` (namespaces of methods, and top-level methods) with `LenientMethod`s. */
export type LenientClient<Client> = {
  readonly [K in keyof Client]: Client[K] extends (request: never) => unknown ? LenientMethod<Client[K]>
    : { readonly [M in keyof Client[K]]: LenientMethod<Client[K][M]> }
}

/**
 * The Effect client of an API (`HttpApiClient.Client`) with lenient methods. Effect 4 types the API-wide errors
 * (`ApiErrors`, a middleware) with each method, so the API's error type is no parameter any more.
 */
export type ClientOf<Groups extends HttpApiGroup.Constraint> = LenientClient<HttpApiClient.Client<Groups>>

const parts = ["params", "query", "payload", "headers"] as const

/** Every leaf of an issue, by its kind (`MissingKey`, `InvalidType`, ...). */
const formatKinds = SchemaIssue.makeFormatterStandardSchemaV1({ leafHook: (issue) => issue._tag })

/**
 * Whether a missing part becomes `{}`: when `{}` is a valid value of it (nothing required), or when what `{}` lacks
 * is only required members, so that the error names them (`teamId: Missing key`) rather than quoting the whole
 * schema. A part that is no object (an array, a form) is left missing.
 */
const fillsWithEmpty = (schemas: ReadonlyArray<Schema.Top>) =>
  schemas.some((schema) => {
    // The request parts of the orgplane API need no services to encode: plain transformations.
    const exit = Schema.encodeUnknownExit(schema as Schema.Codec<unknown, unknown>)({}, { errors: "all" })
    if (Exit.isSuccess(exit)) return true
    const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error
    return Schema.isSchemaError(error) && formatKinds(error.issue).issues.every((issue) => issue.message === "MissingKey")
  })

type AnyMethod = (request?: unknown) => Effect.Effect<unknown, unknown, unknown>

const isMethod = (value: unknown): value is AnyMethod => typeof value === "function"

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** The method with its missing parts filled in (`{}`) where `fillsWithEmpty` says so; decided once per part, on first use. */
const lenientMethod = (endpoint: HttpApiEndpoint.Top, method: AnyMethod, around: Around): AnyMethod => {
  const schemas = {
    params: endpoint.params === undefined ? [] : [endpoint.params],
    query: endpoint.query === undefined ? [] : [endpoint.query],
    payload: [...endpoint.payload.values()].flatMap(({ schemas }) => schemas),
    headers: endpoint.headers === undefined ? [] : [endpoint.headers]
  }
  const fill = new Map<string, boolean>()
  const fills = (part: (typeof parts)[number]) => {
    if (schemas[part].length === 0) return false
    let decided = fill.get(part)
    if (decided === undefined) fill.set(part, decided = fillsWithEmpty(schemas[part]))
    return decided
  }
  return (request) => {
    const given = isRecord(request) ? request : {}
    let complete: Record<string, unknown> | undefined
    for (const part of parts) {
      if (given[part] === undefined && fills(part)) (complete ??= { ...given })[part] = {}
    }
    return around(method(complete ?? (request === undefined ? given : request)))
  }
}

/** What runs around every call of a method (the client's: `Retry-After` onto the errors that carry it). */
export type Around = <A, E, R>(call: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * The client of `api` with lenient methods: the same namespaces, each method filling in what may be left out, each
 * call run through `around`.
 */
export const lenient = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  client: HttpApiClient.Client<Groups>,
  around: Around = (call) => call
): ClientOf<Groups> => {
  const methods: Record<string, unknown> = isRecord(client) ? client : {}
  const result: Record<string, unknown> = {}
  HttpApi.reflect(api, {
    onGroup({ group }) {
      if (!group.topLevel) result[group.identifier] = {}
    },
    onEndpoint({ endpoint, group }) {
      const namespace = group.topLevel ? methods : methods[group.identifier]
      const method = isRecord(namespace) ? namespace[endpoint.identifier] : undefined
      if (!isMethod(method)) return
      const target = group.topLevel ? result : result[group.identifier]
      if (isRecord(target)) target[endpoint.identifier] = lenientMethod(endpoint, method, around)
    }
  })
  // The mapped type of the namespaces built above; TypeScript cannot follow a loop over the API's groups.
  return result as ClientOf<Groups>
}

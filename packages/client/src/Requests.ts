/**
 * Optional arguments, optional at run time too: a request part (`path`, `urlParams`, `payload`, `headers`) with no
 * required member may be left out, and a request with only such parts may be left out whole. `HttpApiClient` reads
 * `request.urlParams` of whatever it is given, so `client.members.list()` would throw and `list({})` fail
 * validation; the methods here fill the missing parts in before calling it, and their types say the same.
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiClient from "@effect/platform/HttpApiClient"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import type * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import type * as Schema from "effect/Schema"

type Part = "path" | "urlParams" | "payload" | "headers"

type Simplify<A> = { [K in keyof A]: A[K] } & {}

/** `{ urlParams: { limit?: number } }` → `{ urlParams?: { limit?: number } }`: parts without a required member become optional. */
export type LenientRequest<Req> = Simplify<
  & { readonly [K in keyof Req as K extends Part ? {} extends Req[K] ? K : never : never]?: Req[K] }
  & { readonly [K in keyof Req as K extends Part ? {} extends Req[K] ? never : K : K]: Req[K] }
>

/** What an `HttpApiClient` method takes, without `withResponse` and with optional parts optional (`void` when it takes nothing). */
export type RequestParts<M> = M extends (request: infer Req) => any
  ? LenientRequest<Omit<Exclude<Req, void>, "withResponse">>
  : never

/**
 * An `HttpApiClient` method taking a `LenientRequest`, itself optional when nothing in it is required; still generic
 * in `withResponse`. Read through a plain function type, the method answers `A | [A, HttpClientResponse]`: the tuple is
 * the `withResponse: true` case.
 */
export type LenientMethod<M> = M extends (request: any) => Effect.Effect<infer A, infer E, infer R>
  ? {} extends RequestParts<M> ? <WithResponse extends boolean = false>(
      request?: RequestParts<M> & { readonly withResponse?: WithResponse }
    ) => Effect.Effect<ResponseOf<Exclude<A, readonly [any, HttpClientResponse.HttpClientResponse]>, WithResponse>, E, R>
  : <WithResponse extends boolean = false>(
    request: RequestParts<M> & { readonly withResponse?: WithResponse }
  ) => Effect.Effect<ResponseOf<Exclude<A, readonly [any, HttpClientResponse.HttpClientResponse]>, WithResponse>, E, R>
  : never

type ResponseOf<A, WithResponse extends boolean> = WithResponse extends true ? [A, HttpClientResponse.HttpClientResponse] : A

/** An `HttpApiClient` (namespaces of methods, and top-level methods) with `LenientMethod`s. */
export type LenientClient<Client> = {
  readonly [K in keyof Client]: Client[K] extends (...args: ReadonlyArray<any>) => any ? LenientMethod<Client[K]>
    : { readonly [M in keyof Client[K]]: LenientMethod<Client[K][M]> }
}

/** The Effect client of an API (`HttpApiClient.Client`) with lenient methods. */
export type ClientOf<Groups extends HttpApiGroup.HttpApiGroup.Any, E> = LenientClient<HttpApiClient.Client<Groups, E, never>>

const parts = ["path", "urlParams", "payload", "headers"] as const

/**
 * Whether a missing part becomes `{}`: when `{}` is a valid value of it (nothing required), or when what `{}` lacks
 * is only required members, so that the error names them (`name: is missing`) rather than quoting the whole schema.
 * A part that is no object (an array, a form) is left missing.
 */
const fillsWithEmpty = (schema: Schema.Schema<any, any, never>) =>
  Either.match(ParseResult.encodeUnknownEither(schema)({}, { errors: "all" }), {
    onLeft: (error) => ParseResult.ArrayFormatter.formatIssueSync(error).every((issue) => issue._tag === "Missing"),
    onRight: () => true
  })

type AnyMethod = (request?: unknown) => Effect.Effect<unknown, unknown, unknown>

/** The method with its missing parts filled in (`{}`) where `fillsWithEmpty` says so; decided once per part, on first use. */
const lenientMethod = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps, method: AnyMethod, around: Around): AnyMethod => {
  const schemas = {
    path: endpoint.pathSchema,
    urlParams: endpoint.urlParamsSchema,
    payload: endpoint.payloadSchema,
    headers: endpoint.headersSchema
  }
  const fill = new Map<string, boolean>()
  const fills = (part: (typeof parts)[number]) => {
    const schema = Option.getOrUndefined(schemas[part]) as Schema.Schema<any, any, never> | undefined
    if (schema === undefined) return false
    let decided = fill.get(part)
    if (decided === undefined) fill.set(part, decided = fillsWithEmpty(schema))
    return decided
  }
  return (request) => {
    const given = (typeof request === "object" && request !== null ? request : {}) as Record<string, unknown>
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
export const lenient = <Groups extends HttpApiGroup.HttpApiGroup.Any, E>(
  api: HttpApi.HttpApi<string, Groups, E, any>,
  client: HttpApiClient.Client<Groups, E, never>,
  around: Around = (call) => call
): ClientOf<Groups, E> => {
  const methods = client as unknown as Record<string, AnyMethod | Record<string, AnyMethod>>
  const result: Record<string, unknown> = {}
  for (const group of Object.values(api.groups) as unknown as Array<HttpApiGroup.HttpApiGroup.AnyWithProps>) {
    const namespace: Record<string, AnyMethod> = {}
    for (const endpoint of Object.values(group.endpoints)) {
      const method = group.topLevel ? methods[endpoint.name] : (methods[group.identifier] as Record<string, AnyMethod>)[endpoint.name]
      namespace[endpoint.name] = lenientMethod(endpoint, method as AnyMethod, around)
    }
    if (group.topLevel) Object.assign(result, namespace)
    else result[group.identifier] = namespace
  }
  return result as ClientOf<Groups, E>
}

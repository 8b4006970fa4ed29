/**
 * Auto-pagination over cursor pages (`{ items, nextCursor }`): every item of every page, following `nextCursor`
 * until it is null. Works with any list method that takes `query.cursor`, current or future.
 */
import type { Page } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { RequestParts } from "./Requests.js"

/** A list request: whatever the endpoint takes, with the cursor in `query`; left out when nothing is required. */
export interface PageRequest {
  // The index signature keeps this from being a "weak type", which `{ limit: 2 }` would not be assignable to.
  readonly query?: { readonly cursor?: string; readonly [param: string]: unknown } | undefined
}

/** The request of a list, optional when the list's is: `paginate(client.members.list)`. */
export type PageRequestArgument<Req> = undefined extends Req ? [request?: NoInfer<Req>] : [request: NoInfer<Req>]

/** The same request positioned at `cursor` (the request's own cursor, if any, is where the walk starts). */
export const withCursor = <Req extends PageRequest | undefined>(request: Req, cursor: string | undefined): Req =>
  cursor === undefined ? request : { ...request, query: { ...request?.query, cursor } } as Req

/**
 * An Effect client's list method, read through a method signature (whose parameter is checked both ways) so that
 * every list whose request has a `query` part, optional or required, fits it. Generic in `responseMode`, so its types
 * are read from it, not inferred through it.
 */
interface Lists {
  list(request?: PageRequest): Effect.Effect<unknown, unknown, unknown>
}
type ListMethod = Lists["list"]

type PageOf<L> = L extends (request?: never) => Effect.Effect<infer A, unknown, unknown> ? Extract<A, Page<unknown>> : never
type ItemOf<L> = PageOf<L> extends Page<infer A> ? A : never
type ErrorOf<L> = L extends (request?: never) => Effect.Effect<unknown, infer E, unknown> ? E : never
type ServicesOf<L> = L extends (request?: never) => Effect.Effect<unknown, unknown, infer R> ? R : never

/**
 * Every item of a list as a Stream, fetching the next page only when the stream needs it:
 * `paginateStream(client.apiKeys.list, { query: { limit: 100 } })`, or `paginateStream(client.members.list)`.
 */
export const paginateStream = <L extends ListMethod>(
  list: L,
  ...[request]: {} extends RequestParts<L> ? [request?: RequestParts<L>] : [request: RequestParts<L>]
): Stream.Stream<ItemOf<L>, ErrorOf<L>, ServicesOf<L>> => {
  const start: PageRequest | undefined = request
  return Stream.paginate(start?.query?.cursor, (cursor: string | undefined) =>
    // What the list answers without `responseMode`: its page, with its own errors and services.
    (list(withCursor(start, cursor)) as Effect.Effect<Page<ItemOf<L>>, ErrorOf<L>, ServicesOf<L>>).pipe(
      Effect.map((page) => [page.items, Option.fromNullishOr(page.nextCursor)] as const)
    ))
}

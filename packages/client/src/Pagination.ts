/**
 * Auto-pagination over cursor pages (`{ items, nextCursor }`): every item of every page, following `nextCursor`
 * until it is null. Works with any list method that takes `urlParams.cursor`, current or future.
 */
import type { Page } from "@orgplane/schema"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { RequestParts } from "./Requests.js"

/** A list request: whatever the endpoint takes, with the cursor in `urlParams`; left out when nothing is required. */
export interface PageRequest {
  // The index signature keeps this from being a "weak type", which `{ limit: 2 }` would not be assignable to.
  readonly urlParams?: { readonly cursor?: string; readonly [param: string]: unknown } | undefined
}

/** The request of a list, optional when the list's is: `paginate(client.members.list)`. */
export type PageRequestArgument<Req> = undefined extends Req ? [request?: NoInfer<Req>] : [request: NoInfer<Req>]

/** The same request positioned at `cursor` (the request's own cursor, if any, is where the walk starts). */
export const withCursor = <Req extends PageRequest | undefined>(request: Req, cursor: string | undefined): Req =>
  cursor === undefined ? request : { ...request, urlParams: { ...request?.urlParams, cursor } } as Req

/** An Effect client's list method. Generic in `withResponse`, so its types are read from it, not inferred through it. */
type ListMethod = (request?: any) => Effect.Effect<Page<any> | readonly [Page<any>, any], any, any>

type PageOf<L> = L extends (request?: any) => Effect.Effect<infer A, any, any> ? Extract<A, Page<any>> : never

/**
 * Every item of a list as a Stream, fetching the next page only when the stream needs it:
 * `paginateStream(client.apiKeys.list, { urlParams: { limit: 100 } })`, or `paginateStream(client.members.list)`.
 */
export const paginateStream = <L extends ListMethod>(
  list: L,
  ...[request]: {} extends RequestParts<L> ? [request?: RequestParts<L>] : [request: RequestParts<L>]
): Stream.Stream<
  PageOf<L> extends Page<infer A> ? A : never,
  L extends (request?: any) => Effect.Effect<any, infer E, any> ? E : never,
  L extends (request?: any) => Effect.Effect<any, any, infer R> ? R : never
> =>
  Stream.paginateChunkEffect((request as PageRequest | undefined)?.urlParams?.cursor, (cursor: string | undefined) =>
    (list(withCursor(request as PageRequest | undefined, cursor)) as Effect.Effect<Page<any>, any, any>).pipe(
      Effect.map((page) => [Chunk.fromIterable(page.items), Option.fromNullable(page.nextCursor) as Option.Option<string | undefined>] as const)
    ))

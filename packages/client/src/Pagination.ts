/**
 * Auto-pagination over cursor pages (`{ items, nextCursor }`): every item of every page, following `nextCursor`
 * until it is null. Works with any list method that takes `urlParams.cursor`, current or future.
 */
import type { Page } from "@orgplane/schema"
import { Chunk, Effect, Option, Stream } from "effect"

/** A list request: whatever the endpoint takes, with the cursor in `urlParams`. */
export interface PageRequest {
  // The index signature keeps this from being a "weak type", which `{ limit: 2 }` would not be assignable to.
  readonly urlParams: { readonly cursor?: string; readonly [param: string]: unknown }
}

/** The same request positioned at `cursor` (the request's own cursor, if any, is where the walk starts). */
export const withCursor = <Req extends PageRequest>(request: Req, cursor: string | undefined): Req =>
  cursor === undefined ? request : { ...request, urlParams: { ...request.urlParams, cursor } }

/**
 * Every item of a list as a Stream, fetching the next page only when the stream needs it:
 * `paginateStream(client.apiKeys.list, { urlParams: { limit: 100 } })`.
 */
export const paginateStream = <Req extends PageRequest, A, E, R>(
  list: (request: Req) => Effect.Effect<Page<A>, E, R>,
  request: Req
): Stream.Stream<A, E, R> =>
  Stream.paginateChunkEffect(request.urlParams.cursor, (cursor: string | undefined) =>
    list(withCursor(request, cursor)).pipe(
      Effect.map((page) => [Chunk.fromIterable(page.items), Option.fromNullable(page.nextCursor) as Option.Option<string | undefined>] as const)
    ))

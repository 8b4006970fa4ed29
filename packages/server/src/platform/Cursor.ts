/**
 * Opaque keyset cursors: the sort key of the last item of a page, base64url-encoded JSON. A cursor that does not
 * decode is the caller's mistake (400 on `cursor`), never a silent restart from the first page.
 */
import { DEFAULT_LIMIT, InvalidRequest, type PageQuery } from "@orgplane/schema"
import { Effect } from "effect"

export const encode = (key: ReadonlyArray<string | number>): string => Buffer.from(JSON.stringify(key)).toString("base64url")

export const decode = (cursor: string, arity: number): Effect.Effect<ReadonlyArray<string | number>, InvalidRequest> =>
  Effect.try({
    try: () => {
      const key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
      if (!Array.isArray(key) || key.length !== arity || !key.every((k) => typeof k === "string" || typeof k === "number")) {
        throw new Error("bad cursor")
      }
      return key as ReadonlyArray<string | number>
    },
    catch: () => InvalidRequest.field(["cursor"], "is not a cursor returned by this list")
  })

export interface PageRequest {
  readonly after: ReadonlyArray<string | number> | undefined
  readonly limit: number
}

/** The decoded position and the page size (default applied). */
export const request = (query: PageQuery, arity = 1): Effect.Effect<PageRequest, InvalidRequest> =>
  query.cursor === undefined
    ? Effect.succeed({ after: undefined, limit: query.limit ?? DEFAULT_LIMIT })
    : Effect.map(decode(query.cursor, arity), (after) => ({ after, limit: query.limit ?? DEFAULT_LIMIT }))

/** Cuts `limit + 1` fetched rows into a page; `key` gives the sort key of an item. */
export const page = <A>(rows: ReadonlyArray<A>, limit: number, key: (item: A) => ReadonlyArray<string | number>) => {
  const items = rows.slice(0, limit)
  return {
    items,
    nextCursor: rows.length > limit ? encode(key(items[items.length - 1])) : null
  }
}

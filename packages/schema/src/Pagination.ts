/** Cursor pages: `{ items, nextCursor }`, with an opaque cursor and a bounded page size. */
import * as Schema from "effect/Schema"
import { QueryInteger } from "./Common.js"

/**
 * Opaque and signed by the server, bound to its list and filters. At most 2048 characters: a list sorted by a
 * name carries that name (up to 255 characters of any script) in its cursors.
 */
export const Cursor = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2048)).annotate({
  identifier: "Cursor",
  description:
    "Opaque position returned as `nextCursor`; pass it back unchanged, with the same filters, to get the next page. A cursor of another list or of other filters is a 400."
})

export const DEFAULT_LIMIT = 50

export const Limit = QueryInteger(1, 100, `Page size, 1 to 100 (default ${DEFAULT_LIMIT}).`).annotate({ examples: [20] })

/** Query members shared by every list endpoint. Spread into a list's own query struct. */
export const PageQueryFields = {
  cursor: Schema.optionalKey(Cursor),
  limit: Schema.optionalKey(Limit)
}
/** Every bad member reported: the API's `HttpApi.QueryParseOptions` (`allErrors`), not an annotation here. */
export const PageQuery = Schema.Struct(PageQueryFields)
export type PageQuery = typeof PageQuery.Type

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor: string | null
}

export const Page = <S extends Schema.Top>(item: S) =>
  Schema.Struct({
    items: Schema.Array(item),
    nextCursor: Schema.NullOr(Cursor)
  })

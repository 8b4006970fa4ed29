/** Cursor pages: `{ items, nextCursor }`, with an opaque cursor and a bounded page size. */
import * as Schema from "effect/Schema"
import { allErrors, QueryInteger } from "./Common.js"

/**
 * Opaque and signed by the server, bound to its list and filters. At most 2048 characters: a list sorted by a
 * name carries that name (up to 255 characters of any script) in its cursors.
 */
export const Cursor = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2048)).annotations({
  identifier: "Cursor",
  description:
    "Opaque position returned as `nextCursor`; pass it back unchanged, with the same filters, to get the next page. A cursor of another list or of other filters is a 400."
})

export const DEFAULT_LIMIT = 50

export const Limit = QueryInteger(1, 100, `Page size, 1 to 100 (default ${DEFAULT_LIMIT}).`).annotations({ examples: [20] })

/** Query members shared by every list endpoint. Spread into a list's own query struct. */
export const PageQueryFields = {
  cursor: Schema.optionalWith(Cursor, { exact: true }),
  limit: Schema.optionalWith(Limit, { exact: true })
}
export const PageQuery = Schema.Struct(PageQueryFields).annotations(allErrors)
export type PageQuery = typeof PageQuery.Type

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor: string | null
}

export const Page = <A, I, R>(item: Schema.Schema<A, I, R>) =>
  Schema.Struct({
    items: Schema.Array(item),
    nextCursor: Schema.NullOr(Cursor)
  })

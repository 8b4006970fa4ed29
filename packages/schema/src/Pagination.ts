/** Cursor pages: `{ items, nextCursor }`, with an opaque cursor and a bounded page size. */
import { Schema } from "effect"

export const Cursor = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)).annotations({
  identifier: "Cursor",
  description: "Opaque position returned as `nextCursor`; pass it back unchanged to get the next page."
})

export const DEFAULT_LIMIT = 50

export const Limit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100)).annotations({
  description: `Page size, 1 to 100 (default ${DEFAULT_LIMIT}).`,
  message: () => "must be an integer from 1 to 100",
  jsonSchema: { type: "integer", minimum: 1, maximum: 100 }
})

/** Query members shared by every list endpoint. Spread into a list's own query struct. */
export const PageQueryFields = {
  cursor: Schema.optionalWith(Cursor, { exact: true }),
  limit: Schema.optionalWith(Limit, { exact: true })
}
export const PageQuery = Schema.Struct(PageQueryFields).annotations({ parseOptions: { errors: "all" } })
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

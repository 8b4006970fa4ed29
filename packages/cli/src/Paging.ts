/**
 * Cursor pages in list commands: `--limit`, `--cursor` and `--all`, the walk through the pages, and the hint that
 * says how to get the next one. `--limit` and `--cursor` are checked with the API's own `Limit` and `Cursor`.
 */
import { paginateStream, type PageRequest } from "@orgplane/client"
import { Cursor, Limit, type Page } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Inputs from "./Inputs.js"
import * as Output from "./Output.js"

/** The paging flags of a list whose page size and cursor are checked with these schemas (its query's own). */
export const inputsFor = (limit: Schema.Codec<number, string>, cursor: Schema.Codec<string, string>) => ({
  limit: Inputs.optional(Inputs.text("limit", { placeholder: "<n>", schema: limit })),
  cursor: Inputs.optional(Inputs.text("cursor", {
    placeholder: "<cursor>",
    description: "Continue from a previous page's nextCursor.",
    schema: cursor
  })),
  all: Inputs.boolean("all", { description: "Fetch every page." })
})

/** The paging flags, added to every `Commands.list`: the API's shared `Limit` and `Cursor`. */
export const inputs = inputsFor(Limit, Cursor)

export type Paging = Inputs.Values<typeof inputs>

/** What one page request adds to a list endpoint's query. */
export interface PageParams {
  readonly cursor?: string
  readonly limit?: number
}

/**
 * The page at `--cursor` (else the first); with `--all`, every item of every page from there as one page without a
 * cursor, walked by the client's `paginateStream`.
 */
export const fetch = <A, E, R>(
  paging: Paging,
  page: (params: PageParams) => Effect.Effect<Page<A>, E, R>
): Effect.Effect<Page<A>, E, R> => {
  const params = (cursor: Option.Option<string>) => ({ ...Inputs.ifSome("cursor", cursor), ...Inputs.ifSome("limit", paging.limit) })
  if (!paging.all) return page(params(paging.cursor))
  const list = (request?: PageRequest) => page(params(Option.fromNullishOr(request?.query?.cursor)))
  return paginateStream(list, { query: Inputs.ifSome("cursor", paging.cursor) }).pipe(
    Stream.runCollect,
    Effect.map((items): Page<A> => ({ items, nextCursor: null }))
  )
}

/** A word as a shell would read it back: quoted when it has anything but plain characters. */
export const quote = (word: string) => /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`

/**
 * On stderr, never with `--json` (where `nextCursor` is in the result): the command that fetches the next page.
 * `command` is the list command with its filters, for example `members list --role admin`.
 */
export const hint = (options: { readonly json: boolean }, noun: string, command: string, result: Page<unknown>) =>
  result.nextCursor !== null && !options.json
    ? Output.note(`More ${noun}: orgplane ${command} --cursor ${result.nextCursor} (or --all)`)
    : Effect.void

/**
 * Cursor pages in list commands: `--limit`, `--cursor` and `--all`, the walk through the pages, and the hint that
 * says how to get the next one.
 */
import { Options } from "@effect/cli"
import { Cursor, type Page } from "@orgplane/schema"
import { Effect, Option } from "effect"
import { UsageError } from "./Errors.js"
import * as Inputs from "./Inputs.js"
import * as Output from "./Output.js"

/** The paging flags: spread them into a list command's config. */
export const options = {
  limit: Options.integer("limit").pipe(Options.withDescription("Page size, 1 to 100 (default 50)."), Options.optional),
  cursor: Inputs.option(
    Options.text("cursor").pipe(Options.withDescription("Continue from a previous page's nextCursor.")),
    "--cursor",
    Cursor
  ).pipe(Options.optional),
  all: Options.boolean("all").pipe(Options.withDescription("Fetch every page."))
}

export interface Paging {
  readonly limit: Option.Option<number>
  readonly cursor: Option.Option<string>
  readonly all: boolean
}

/** `--limit` out of range is a usage error, reported before anything is sent. */
export const check = (paging: Paging) =>
  Option.isSome(paging.limit) && (paging.limit.value < 1 || paging.limit.value > 100)
    ? Effect.fail(new UsageError({ message: "--limit: must be an integer from 1 to 100" }))
    : Effect.void

/** The page at `--cursor` (else the first); with `--all`, every item of every page as one page without a cursor. */
export const fetch = <A, E, R>(
  paging: Paging,
  page: (params: { readonly cursor?: string; readonly limit?: number }) => Effect.Effect<Page<A>, E, R>
): Effect.Effect<Page<A>, E, R> =>
  Effect.gen(function*() {
    const params = (cursor: Option.Option<string>) => ({ ...Inputs.ifSome("cursor", cursor), ...Inputs.ifSome("limit", paging.limit) })
    let result = yield* page(params(paging.cursor))
    if (!paging.all) return result
    const items = [...result.items]
    while (result.nextCursor !== null) {
      result = yield* page(params(Option.some(result.nextCursor)))
      items.push(...result.items)
    }
    return { items, nextCursor: null }
  })

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

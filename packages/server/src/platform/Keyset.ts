/**
 * Keyset pagination as one value per list: a `Keyset` names the list and its sort key, and from it come the
 * ORDER BY, the WHERE fragment for "after this cursor" and the cursor itself. Cursors are signed with the
 * instance's cursor key and bound to the list and its filters, so a cursor of another list, of other filters, or
 * made up by hand is a 400 on `cursor`, never a silent restart or a page of something else.
 *
 * A cursor is `base64url(the last item's sort key) + "." + base64url(MAC)`. The key's parts are joined with NUL,
 * which no stored string can contain (Postgres refuses it in text, and the request guard refuses it on input).
 * The form is fixed byte for byte: a cursor handed out before an upgrade from 0.1.0 reads the next page after it
 * (test/Keyset.test.ts).
 */
import { DEFAULT_LIMIT, InvalidRequest } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { sign, verifySignature } from "./Crypto.js"

/** One part of a list's sort key. */
export interface Part<A> {
  /** The SQL expression sorted on, over the list query's own aliases: a constant, never user input. */
  readonly column: string
  /** The part's value for an item, as it goes into the cursor. */
  readonly value: (item: A) => string
  /** How a cursor value compares with `column` (default: as is), e.g. `lower(value)` for `lower(t.name)`. */
  readonly compare?: (value: Statement.Fragment, sql: SqlClient.SqlClient) => Statement.Fragment
}

export interface Keyset<A> {
  /** Names the list in its cursors: a cursor of one list is refused by every other. */
  readonly name: string
  readonly order: "asc" | "desc"
  readonly parts: ReadonlyArray<Part<A>>
}

export const make = <A>(name: string, order: "asc" | "desc", parts: ReadonlyArray<Part<A>>): Keyset<A> => ({ name, order, parts })

/** What a list query needs to fetch one page. */
export interface PageRequest {
  /** `(sort key) > (cursor)` (or `<` when descending), or `true` on the first page: AND it into the WHERE clause. */
  readonly after: Statement.Fragment
  readonly orderBy: Statement.Fragment
  /** LIMIT: one more row than the page holds, to know whether another page follows. */
  readonly fetch: number
}

/** A `PageRequest` as a member of a statement's request schema (it passes through as is). */
export const PageRequest = Schema.declare(
  (value: unknown): value is PageRequest => typeof value === "object" && value !== null && "orderBy" in value && "after" in value
)

export interface PageQuery {
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

/**
 * The instance's secret for signing cursors: every server process of an instance signs and accepts the same cursors,
 * across restarts. Stored encrypted and read at start-up (platform/InstanceSecrets.ts).
 */
export class CursorKey extends Context.Service<CursorKey, Buffer>()("@orgplane/server/platform/Keyset") {}

const SEPARATOR = "\u0000"

/** The filters a cursor is bound to: the list query without its position and page size, in a stable form. */
const bindingOf = (query: object): string =>
  JSON.stringify(
    Object.entries(query)
      .filter(([key, value]) => key !== "cursor" && key !== "limit" && value !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  )

/** What a cursor's signature covers: the list, its filters and the position. */
const signed = (list: string, binding: string, payload: string) => `${list}\n${binding}\n${payload}`

/** Cursors carry the first 16 bytes of their signature. */
const SIGNATURE_BYTES = 16

const invalidCursor = () => InvalidRequest.field(["cursor"], "is not a cursor returned by this list with these filters")

const decodeCursor = <A>(key: Buffer, keyset: Keyset<A>, binding: string, cursor: string) => {
  const dot = cursor.lastIndexOf(".")
  if (dot <= 0) return undefined
  const payload = cursor.slice(0, dot)
  if (!verifySignature(key, signed(keyset.name, binding, payload), cursor.slice(dot + 1), SIGNATURE_BYTES)) return undefined
  const values = Buffer.from(payload, "base64url").toString("utf8").split(SEPARATOR)
  return values.length === keyset.parts.length ? values : undefined
}

const encodeCursor = <A>(key: Buffer, keyset: Keyset<A>, binding: string, item: A) => {
  const payload = Buffer.from(keyset.parts.map((part) => part.value(item)).join(SEPARATOR), "utf8").toString("base64url")
  return `${payload}.${sign(key, signed(keyset.name, binding, payload), SIGNATURE_BYTES)}`
}

/**
 * One page of a list: decodes and checks `query.cursor`, lets `fetch` run the list's statement with the page's
 * ORDER BY, position and LIMIT, and cuts the rows into `{items, nextCursor}`.
 */
export const page = <A, E, R>(
  keyset: Keyset<A>,
  query: PageQuery,
  fetch: (page: PageRequest) => Effect.Effect<ReadonlyArray<A>, E, R>,
  options?: {
    /**
     * A list that is followed (a log, oldest first): every page carries a cursor, after its last item, or the one
     * it was given when nothing is there yet, so a client asks again with it for what came since.
     */
    readonly follow?: boolean
  }
): Effect.Effect<{ readonly items: ReadonlyArray<A>; readonly nextCursor: string | null }, E | InvalidRequest, R | CursorKey | SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const key = yield* CursorKey
    const sql = yield* SqlClient.SqlClient
    const binding = bindingOf(query)
    const limit = query.limit ?? DEFAULT_LIMIT
    const direction = keyset.order === "asc" ? sql.literal("ASC") : sql.literal("DESC")
    const columns = sql.csv(keyset.parts.map((part) => sql.literal(part.column)))
    let after: Statement.Fragment = sql`true`
    if (query.cursor !== undefined) {
      const values = decodeCursor(key, keyset, binding, query.cursor)
      if (values === undefined) return yield* Effect.fail(invalidCursor())
      const bounds = sql.csv(keyset.parts.map((part, i) => part.compare ? part.compare(sql`${values[i]}`, sql) : sql`${values[i]}`))
      after = keyset.order === "asc" ? sql`(${columns}) > (${bounds})` : sql`(${columns}) < (${bounds})`
    }
    const orderBy = sql.csv(keyset.parts.map((part) => sql`${sql.literal(part.column)} ${direction}`))
    const rows = yield* fetch({ after, orderBy, fetch: limit + 1 })
    const items = rows.slice(0, limit)
    const last = items[items.length - 1]
    return {
      items,
      nextCursor: last !== undefined && (rows.length > limit || options?.follow === true)
        ? encodeCursor(key, keyset, binding, last)
        : options?.follow === true
        ? query.cursor ?? null
        : null
    }
  })

/**
 * Storage of memories and their snippets, always by organization and person; full-text search over them.
 */
import {
  Memory,
  MemoryContext,
  MemoryContextId,
  MemoryId,
  type MemoryListQuery,
  MemorySearchResult,
  MemoryWithContexts,
  MembershipId,
  OrganizationId,
  UserId
} from "@orgplane/schema"
import * as Array from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import * as Keyset from "../platform/Keyset.js"
import { classRow, DateColumn, execute, findAll, findOne, trustedClassRow } from "../platform/Statements.js"

export class MemoryRow extends Model.Class<MemoryRow>("MemoryRow")({
  id: Model.GeneratedByApp(MemoryId),
  organizationId: OrganizationId,
  userId: UserId,
  membershipId: MembershipId,
  content: Memory.fields.content,
  tags: Memory.fields.tags,
  source: Memory.fields.source,
  scope: Memory.fields.scope,
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

export class MemoryContextRow extends Model.Class<MemoryContextRow>("MemoryContextRow")({
  id: Model.GeneratedByApp(MemoryContextId),
  organizationId: OrganizationId,
  memoryId: MemoryId,
  position: Schema.Int,
  snippet: MemoryContext.fields.snippet,
  conversationId: Schema.NullOr(Schema.String),
  messageId: Schema.NullOr(Schema.String),
  origin: MemoryContext.fields.origin,
  createdAt: DateColumn
}) {}

/** The text-search configuration of `memories.search` and of queries: stemming, and common words left out. */
const CONFIG = "english"

/** Newest first; ids break ties between memories saved in the same millisecond. */
const newestFirst = Keyset.make<Memory>("memories", "desc", [
  { column: "m.created_at", value: (memory) => memory.createdAt.toISOString(), compare: (value, sql) => sql`${value}::timestamptz` },
  { column: "m.id", value: (memory) => memory.id }
])

/** A person in an organization: whose memories a statement reads or changes. */
const Owner = Schema.Struct({ organizationId: OrganizationId, userId: UserId })
const Scoped = Schema.Struct({ ...Owner.fields, id: MemoryId })

const ContextRead = Schema.Struct({
  memoryId: MemoryId,
  id: MemoryContextId,
  snippet: Schema.String,
  conversationId: Schema.NullOr(Schema.String),
  messageId: Schema.NullOr(Schema.String),
  origin: MemoryContext.fields.origin,
  createdAt: DateColumn
})

const columns = "m.id, m.content, m.tags, m.source, m.scope, m.created_at, m.updated_at"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = sql.literal(`'${CONFIG}'::regconfig`)

  /** The row and its search document in one statement. */
  const insert = execute({
    Request: MemoryRow.insert,
    execute: (row) =>
      sql`INSERT INTO memories (organization_id, id, user_id, membership_id, content, tags, source, scope, search, created_at, updated_at)
            VALUES (${row.organizationId}, ${row.id}, ${row.userId}, ${row.membershipId}, ${row.content},
                    ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(row.tags)}::jsonb)), ${row.source}, ${row.scope},
                    setweight(to_tsvector(${config}, ${row.content}), 'A') ||
                      setweight(to_tsvector(${config}, ${row.tags.join(" ")}), 'B'),
                    ${row.createdAt}, ${row.updatedAt})`
  })

  const insertContexts = execute({
    Request: Schema.Array(MemoryContextRow.insert),
    execute: (rows) => Array.isReadonlyArrayNonEmpty(rows) ? sql`INSERT INTO memory_contexts ${sql.insert(rows)}` : Effect.void
  })

  const find = findOne({
    Request: Scoped,
    Result: classRow(Memory),
    execute: ({ id, organizationId, userId }) =>
      sql`SELECT ${sql.literal(columns)} FROM memories m
            WHERE m.organization_id = ${organizationId} AND m.user_id = ${userId} AND m.id = ${id}`
  })

  /** The snippets of some memories of one organization, in the order they were sent. */
  const contextsOf = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, memoryIds: Schema.Array(MemoryId) }),
    Result: ContextRead,
    execute: ({ memoryIds, organizationId }) =>
      memoryIds.length === 0
        ? Effect.succeed([])
        : sql`SELECT c.memory_id, c.id, c.snippet, c.conversation_id, c.message_id, c.origin, c.created_at
                FROM memory_contexts c
                WHERE c.organization_id = ${organizationId} AND c.memory_id IN ${sql.in(memoryIds)}
                ORDER BY c.memory_id, c.position`
  })

  /** Memories with their snippets: one statement for all the snippets, whatever the number of memories. */
  const withContexts = (organizationId: OrganizationId, memories: ReadonlyArray<Memory>) =>
    Effect.map(contextsOf({ organizationId, memoryIds: memories.map((memory) => memory.id) }), (rows) => {
      const byMemory = new Map<string, Array<MemoryContext>>()
      for (const row of rows) {
        const citation = row.conversationId === null && row.messageId === null ? null : {
          ...(row.conversationId === null ? {} : { conversation_id: row.conversationId }),
          ...(row.messageId === null ? {} : { message_id: row.messageId })
        }
        const context = new MemoryContext(
          { id: row.id, snippet: row.snippet, citation, origin: row.origin, createdAt: row.createdAt },
          { disableChecks: true }
        )
        const list = byMemory.get(row.memoryId)
        if (list === undefined) byMemory.set(row.memoryId, [context])
        else list.push(context)
      }
      return memories.map((memory) =>
        new MemoryWithContexts({ ...memory, contexts: byMemory.get(memory.id) ?? [] }, { disableChecks: true })
      )
    })

  const get = Effect.fn("MemoryRepository.get")(function*(scoped: typeof Scoped.Type) {
    const found = yield* find(scoped)
    if (found._tag === "None") return undefined
    const [memory] = yield* withContexts(scoped.organizationId, [found.value])
    return memory
  })

  const listRows = findAll({
    Request: Schema.Struct({ ...Owner.fields, page: Keyset.PageRequest }),
    Result: trustedClassRow(Memory),
    execute: ({ organizationId, page, userId }) =>
      sql`SELECT ${sql.literal(columns)} FROM memories m
            WHERE m.organization_id = ${organizationId} AND m.user_id = ${userId} AND ${page.after}
            ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })

  const list = Effect.fn("MemoryRepository.list")(function*(owner: typeof Owner.Type, query: MemoryListQuery) {
    const page = yield* Keyset.page(newestFirst, query, (page) => listRows({ ...owner, page }))
    const items = yield* withContexts(owner.organizationId, page.items)
    return { items, nextCursor: page.nextCursor }
  })

  /**
   * Ranked search over one person's memories. `text` is a `websearch_to_tsquery` expression; a query of only
   * stop words makes an empty tsquery, which matches nothing (Postgres notices it, and answers no rows).
   */
  const search = findAll({
    Request: Schema.Struct({ ...Owner.fields, text: Schema.String, limit: Schema.Int }),
    Result: trustedClassRow(MemorySearchResult),
    execute: ({ limit, organizationId, text, userId }) =>
      sql`SELECT ${sql.literal(columns)}, ts_rank_cd(m.search, q.query, 32)::float8 AS score
            FROM memories m CROSS JOIN (SELECT websearch_to_tsquery(${config}, ${text}) AS query) q
            WHERE m.organization_id = ${organizationId} AND m.user_id = ${userId} AND m.search @@ q.query
            ORDER BY score DESC, m.created_at DESC, m.id DESC
            LIMIT ${limit}`
  })

  /** Deletes the memory with its snippets; false when the person has no such memory in the organization. */
  const remove = Effect.fn("MemoryRepository.remove")(function*({ id, organizationId, userId }: typeof Scoped.Type) {
    const rows = yield* sql`DELETE FROM memories WHERE organization_id = ${organizationId} AND user_id = ${userId} AND id = ${id} RETURNING id`
    return rows.length > 0
  })

  const allRows = findAll({
    Request: Owner,
    Result: trustedClassRow(Memory),
    execute: ({ organizationId, userId }) =>
      sql`SELECT ${sql.literal(columns)} FROM memories m
            WHERE m.organization_id = ${organizationId} AND m.user_id = ${userId}
            ORDER BY m.created_at DESC, m.id DESC`
  })

  /** Every memory of the person in the organization, newest first, with its snippets (the account's export). */
  const allOf = Effect.fn("MemoryRepository.allOf")(function*(owner: typeof Owner.Type) {
    return yield* withContexts(owner.organizationId, yield* allRows(owner))
  })

  /**
   * Deletes every memory of the person in the organization with its snippets (the account's deletion, in its
   * transaction; the accounts area calls it): how many.
   */
  const removeAllOf = Effect.fn("MemoryRepository.removeAllOf")(function*({ organizationId, userId }: typeof Owner.Type) {
    const rows = yield* sql`DELETE FROM memories WHERE organization_id = ${organizationId} AND user_id = ${userId} RETURNING id`
    return rows.length
  })

  return { insert, insertContexts, get, list, search, remove, allOf, removeAllOf } as const
})

export class MemoryRepository extends Context.Service<MemoryRepository>()("@orgplane/server/memory/MemoryRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

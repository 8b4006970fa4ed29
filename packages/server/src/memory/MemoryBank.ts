/**
 * The memory bank: every operation acts as the calling person, in the organization the request acts in. A memory is
 * found by (organization, person, id), so another person's memory, or the caller's own in another organization,
 * is a 404 like a missing one; roles play no part (an owner reads no one else's memories).
 */
import {
  DEFAULT_MEMORY_SEARCH_LIMIT,
  type MemberContext,
  Memory,
  type MemoryId,
  type MemoryListQuery,
  type MemorySearchQuery,
  NotFound,
  type SaveMemoryRequest
} from "@orgplane/schema"
import * as Array from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { makeId } from "../platform/Ids.js"
import { authorize } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { MemoryRepository } from "./MemoryRepository.js"

export const memoryNotFound = () => new NotFound({ error: "memory_not_found", message: "Memory not found." })

/** What the server records as every saved memory's `source`: this API is how a chat saves what a person confirmed. */
export const SOURCE = "chat"

/**
 * A natural-language query as a `websearch_to_tsquery` expression in which any word or "quoted phrase" may match
 * (`or` between them), the way a person asking "postgres backup schedule" expects memories about any of it, the
 * ones about more of it first. Operators a person did not mean are dropped: a leading `-` (which would exclude
 * the word, and under `or` match nearly everything) and a bare `or`.
 */
export const anyWordQuery = (text: string): string =>
  (text.match(/"[^"]*"|[^\s"]+/g) ?? [])
    .map((token) => token.startsWith("\"") ? token : token.replace(/^-+/, ""))
    .filter((token) => token !== "" && token !== "\"\"" && token.toLowerCase() !== "or")
    .join(" or ")

/** Every member may use their own memory bank, as long as the policy table says so (else 403 `insufficient_role`). */
const allowed = (caller: MemberContext) => authorize(caller, "memory.use")

const make = Effect.gen(function*() {
  const memories = yield* MemoryRepository

  const ownerOf = (caller: MemberContext) => ({ organizationId: caller.organization.id, userId: caller.user.id })

  const save = Effect.fn("MemoryBank.save")(function*(caller: MemberContext, input: SaveMemoryRequest) {
    yield* allowed(caller)
    return yield* transaction(
      Effect.gen(function*() {
        const id = yield* makeId("mem")
        const at = yield* now
        const organizationId = caller.organization.id
        const row = {
          id,
          organizationId,
          userId: caller.user.id,
          membershipId: caller.membership.id,
          content: input.content,
          tags: Array.dedupe(input.tags ?? []),
          source: SOURCE,
          scope: "user" as const,
          createdAt: at,
          updatedAt: at
        }
        yield* memories.insert(row)
        const contexts = yield* Effect.forEach(input.contexts ?? [], (context, position) =>
          Effect.map(makeId("mcx"), (contextId) => ({
            id: contextId,
            organizationId,
            memoryId: id,
            position,
            snippet: context.snippet,
            conversationId: context.conversation_id ?? null,
            messageId: context.message_id ?? null,
            origin: context.origin ?? null,
            createdAt: at
          })))
        yield* memories.insertContexts(contexts)
        const { content, createdAt, scope, source, tags, updatedAt } = row
        return { memory: new Memory({ id, content, tags, source, scope, createdAt, updatedAt }, { disableChecks: true }) }
      })
    )
  })

  const search = Effect.fn("MemoryBank.search")(function*(caller: MemberContext, query: MemorySearchQuery) {
    yield* allowed(caller)
    const text = anyWordQuery(query.q)
    if (text === "") return { results: [] }
    const results = yield* orUnavailable(
      memories.search({ ...ownerOf(caller), text, limit: query.limit ?? DEFAULT_MEMORY_SEARCH_LIMIT })
    )
    return { results }
  })

  const list = Effect.fn("MemoryBank.list")(function*(caller: MemberContext, query: MemoryListQuery) {
    yield* allowed(caller)
    return yield* orUnavailable(memories.list(ownerOf(caller), query))
  })

  const get = Effect.fn("MemoryBank.get")(function*(caller: MemberContext, id: MemoryId) {
    yield* allowed(caller)
    const memory = yield* orUnavailable(memories.get({ ...ownerOf(caller), id }))
    if (memory === undefined) return yield* memoryNotFound()
    return { memory }
  })

  /** The memory row and its snippets go in one statement (the snippets cascade). */
  const remove = Effect.fn("MemoryBank.remove")(function*(caller: MemberContext, id: MemoryId) {
    yield* allowed(caller)
    const removed = yield* transaction(memories.remove({ ...ownerOf(caller), id }))
    if (!removed) return yield* memoryNotFound()
  })

  return { save, search, list, get, remove } as const
})

export class MemoryBank extends Context.Service<MemoryBank>()("@orgplane/server/memory/MemoryBank", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(MemoryRepository.layer))
}

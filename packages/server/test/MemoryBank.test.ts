/**
 * The memory area's service and repository on a fresh migrated database (the embedded one, or Postgres with
 * DATABASE_URL): saving with snippets, ranked search, cursor pages, the person-and-organization scope, deletion and
 * the account's export and erasure; `anyWordQuery` as http/Memory.test.ts describes it.
 */
import { expect, layer } from "@effect/vitest"
import { MemoryId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { anyWordQuery, MemoryBank } from "../src/memory/MemoryBank.js"
import { MemoryRepository } from "../src/memory/MemoryRepository.js"
import { IdGenerator } from "../src/platform/Ids.js"
import * as Db from "./support/IdentityDatabase.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const testLayer = Layer.mergeAll(MemoryBank.layer, MemoryRepository.layer).pipe(
  Layer.provideMerge(Layer.merge(Db.layer, IdGenerator.layer))
)

const missing = Schema.decodeUnknownSync(MemoryId)("mem_01h455vb4pex5vsknk084sn02q")

layer(testLayer, { timeout: 120_000, excludeTestServices: true })(`memory on ${TestDatabase.kind}`, (it) => {
  it.effect("saves a memory with its snippets; the server sets source and scope, tags deduplicated", () =>
    Effect.gen(function*() {
      const bank = yield* MemoryBank
      const caller = Members.member(Members.organization(), "member")
      yield* Members.seed(caller)
      const { memory } = yield* bank.save(caller, {
        content: "Prefers dark mode in every editor",
        tags: ["ui", "editor", "ui"],
        scope: "org",
        source: "import",
        contexts: [
          { snippet: "I always switch to dark mode", conversation_id: "conv-1", message_id: "msg-9", origin: "active_conversation" },
          { snippet: "found it in an old chat", origin: "searched_conversation" },
          { snippet: "bare" }
        ]
      })
      expect(memory.id).toMatch(/^mem_[0-9a-z]{26}$/)
      expect({ ...memory }).toEqual({
        id: memory.id,
        content: "Prefers dark mode in every editor",
        tags: ["ui", "editor"],
        source: "chat",
        scope: "user",
        createdAt: memory.createdAt,
        updatedAt: memory.createdAt
      })
      const read = (yield* bank.get(caller, memory.id)).memory
      expect(read).toMatchObject({ ...memory })
      expect(read.contexts.map((c) => ({ ...c, id: undefined, createdAt: undefined }))).toEqual([
        { snippet: "I always switch to dark mode", citation: { conversation_id: "conv-1", message_id: "msg-9" }, origin: "active_conversation", id: undefined, createdAt: undefined },
        { snippet: "found it in an old chat", citation: null, origin: "searched_conversation", id: undefined, createdAt: undefined },
        { snippet: "bare", citation: null, origin: null, id: undefined, createdAt: undefined }
      ])
      expect(read.contexts[0]?.id).toMatch(/^mcx_/)
    }))

  it.effect("searches by relevance: more of the query's words first, content above tags; nothing for common words", () =>
    Effect.gen(function*() {
      const bank = yield* MemoryBank
      const caller = Members.member(Members.organization(), "owner")
      yield* Members.seed(caller)
      const save = (content: string, tags?: Array<string>) =>
        Effect.map(bank.save(caller, tags === undefined ? { content } : { content, tags }), (saved) => saved.memory)
      const one = yield* save("The staging cluster runs on Kubernetes")
      const both = yield* save("Deploying to the Kubernetes cluster needs the VPN first")
      const tagged = yield* save("Ask Dana before anything", ["deploy"])
      yield* save("Lunch is at noon on Fridays")
      const { results } = yield* bank.search(caller, { q: "how do I deploy to kubernetes" })
      expect(results.map((r) => r.id)).toEqual([both.id, one.id, tagged.id])
      const scores = results.map((r) => r.score)
      expect(scores[0]).toBeGreaterThan(scores[1] ?? 1)
      expect(scores[1]).toBeGreaterThan(scores[2] ?? 1)
      expect(scores.every((s) => s > 0 && s <= 1)).toBe(true)
      expect((yield* bank.search(caller, { q: "kubernetes", limit: 1 })).results).toHaveLength(1)
      expect((yield* bank.search(caller, { q: "\"staging cluster\"" })).results.map((r) => r.id)).toEqual([one.id])
      expect((yield* bank.search(caller, { q: "-lunch" })).results).toHaveLength(1)
      for (const q of ["submarine", "the and of", "how is it", "\"\"", "-", "or or", "!!! ??? &&& |||", "'"]) {
        expect(yield* bank.search(caller, { q })).toEqual({ results: [] })
      }
    }))

  it.effect("keeps memories to their person and organization; deletes with snippets; 404 after", () =>
    Effect.gen(function*() {
      const bank = yield* MemoryBank
      const organization = Members.organization()
      const member = Members.member(organization, "member")
      const owner = Members.member(organization, "owner")
      yield* Members.seed(member, owner)
      const mine = (yield* bank.save(member, { content: "My private reminder", contexts: [{ snippet: "s" }] })).memory
      for (const attempt of [bank.get(owner, mine.id), bank.remove(owner, mine.id), bank.get(member, missing)]) {
        expect(yield* Effect.flip(attempt)).toMatchObject({ _tag: "NotFound", error: "memory_not_found", message: "Memory not found." })
      }
      expect((yield* bank.search(owner, { q: "reminder" })).results).toEqual([])
      expect((yield* bank.list(owner, {})).items).toEqual([])
      yield* bank.remove(member, mine.id)
      expect(yield* Effect.flip(bank.get(member, mine.id))).toMatchObject({ error: "memory_not_found" })
      expect(yield* Effect.flip(bank.remove(member, mine.id))).toMatchObject({ error: "memory_not_found" })
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT 1 FROM memory_contexts WHERE memory_id = ${mine.id}`).toEqual([])
    }))

  it.effect("lists the caller's memories newest first with their snippets, page by page; the account's export and erasure", () =>
    Effect.gen(function*() {
      const bank = yield* MemoryBank
      const repository = yield* MemoryRepository
      const caller = Members.member(Members.organization(), "member")
      yield* Members.seed(caller)
      const saved: Array<string> = []
      for (const n of [1, 2, 3]) {
        saved.push((yield* bank.save(caller, { content: `Memory ${n}`, contexts: [{ snippet: `snippet ${n}` }] })).memory.id)
        yield* Effect.sleep("2 millis")
      }
      const first = yield* bank.list(caller, { limit: 2 })
      expect(first.items.map((m) => m.id)).toEqual([saved[2], saved[1]])
      expect(first.items[0]?.contexts.map((c) => c.snippet)).toEqual(["snippet 3"])
      const second = yield* bank.list(caller, { limit: 2, cursor: first.nextCursor ?? "" })
      expect(second.items.map((m) => m.id)).toEqual([saved[0]])
      expect(second.nextCursor).toBeNull()
      const owner = { organizationId: caller.organization.id, userId: caller.user.id }
      expect((yield* repository.allOf(owner)).map((m) => [m.id, m.contexts.length])).toEqual([[saved[2], 1], [saved[1], 1], [saved[0], 1]])
      expect(yield* repository.removeAllOf({ organizationId: Members.organizationId(), userId: caller.user.id })).toBe(0)
      expect(yield* repository.removeAllOf(owner)).toBe(3)
      expect(yield* repository.allOf(owner)).toEqual([])
    }))

  it.effect("reads a natural-language query as any of its words or quoted phrases, without exclusions or a bare or", () =>
    Effect.sync(() => {
      expect(anyWordQuery("postgres backup schedule")).toBe("postgres or backup or schedule")
      expect(anyWordQuery("\"staging cluster\" or -lunch")).toBe("\"staging cluster\" or lunch")
      expect(anyWordQuery("a \"b c\" --d")).toBe("a or \"b c\" or d")
      for (const text of ["-", "or OR", "\"\"", "  "]) expect(anyWordQuery(text), text).toBe("")
    }))
})

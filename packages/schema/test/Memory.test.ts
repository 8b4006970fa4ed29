/** Memory.ts: a member's saved memories: the document's examples, requests taken and refused. */
import { describe, it } from "@effect/vitest"
import * as Memory from "../src/Memory.js"
import { examplesAt, examplesOfComponent } from "./support/SavedDocument.js"
import { refuses, roundTrips, takes } from "./support/Decoding.js"

const memory = {
  id: "mem_01m6dsg7e0e6b9jzzfm2ahfg0f",
  content: "The staging database is reset every Sunday at 02:00 UTC.",
  tags: ["staging"],
  source: "chat",
  scope: "user",
  createdAt: "2026-11-02T16:10:00.000Z",
  updatedAt: "2026-11-02T16:10:00.000Z"
}

describe("Memory", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Memory.Memory, examplesOfComponent("Memory"))
    roundTrips(Memory.MemoryContext, examplesOfComponent("MemoryContext"))
    roundTrips(Memory.MemoryCitation, examplesOfComponent("MemoryCitation"))
    roundTrips(Memory.MemoryContextInput, examplesOfComponent("MemoryContextInput"))
    roundTrips(Memory.MemoryPage, examplesOfComponent("MemoryPage"))
    roundTrips(Memory.MemoryWithContextsResponse, examplesOfComponent("MemoryWithContextsResponse"))
    roundTrips(Memory.MemorySearchResults, examplesOfComponent("MemorySearchResults"))
    roundTrips(Memory.SaveMemoryRequest, examplesAt("POST /v1/memory request"))
    roundTrips(Memory.MemoryResponse, examplesAt("POST /v1/memory 201"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(Memory.SaveMemoryRequest, [
      { content: "Staging resets on Sundays." },
      { content: "  Staging  ", tags: [" staging ", "db"], scope: "org", source: "cli" },
      { content: "x", contexts: [{ snippet: "s", conversation_id: "c", message_id: "m", origin: "searched_conversation" }] }
    ])
    refuses(Memory.SaveMemoryRequest, [
      { content: "" },
      { content: "x".repeat(8001) },
      { content: "x", tags: [""] },
      { content: "x", tags: Array.from({ length: 33 }, (_, i) => `t${i}`) },
      { content: "x", contexts: Array.from({ length: 17 }, () => ({ snippet: "s" })) },
      { content: "x", contexts: [{ snippet: "s", origin: "elsewhere" }] },
      { content: "x", contexts: [{ snippet: "s", conversation_id: "c".repeat(129) }] },
      { content: "x", scope: "s".repeat(65) },
      { content: "x", tags: ["t".repeat(65)] }
    ])
    takes(Memory.MemorySearchQuery, [
      { q: "staging" },
      { q: " staging ", limit: "50" }
    ])
    refuses(Memory.MemorySearchQuery, [
      { q: "" },
      { q: "x", limit: "51" },
      { q: "x", limit: "1e1" },
      {}
    ])
    takes(Memory.MemoryListQuery, [{}, { limit: "10", cursor: "c" }])
    refuses(Memory.MemoryListQuery, [{ limit: "0" }, { cursor: "" }])
    takes(Memory.MemorySearchResult, [
      { ...memory, score: 0.82 },
      { ...memory, score: 1 }
    ])
    refuses(Memory.MemorySearchResult, [
      { ...memory, score: "0.82" },
      { ...memory, scope: "org", score: 0 },
      memory
    ])
    takes(Memory.MemoryPath, [{ memoryId: memory.id }])
    refuses(Memory.MemoryPath, [{ memoryId: "mcx_01m6dsg7e0e6b9jzzfm2ahfg0f" }])
  })
})

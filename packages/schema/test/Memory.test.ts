import { describe, expect, it } from "@effect/vitest"
import * as Memory from "../src/Memory.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { examplesAt } from "./people.js"
import { effect3 } from "./effect3.js"

const Memory3 = effect3("Memory")
const OpenApiExamples3 = effect3("OpenApiExamples")

const memory = {
  id: "mem_01m6dsg7e0e6b9jzzfm2ahfg0f",
  content: "The staging database is reset every Sunday at 02:00 UTC.",
  tags: ["staging"],
  source: "chat",
  scope: "user",
  createdAt: "2026-11-02T16:10:00.000Z",
  updatedAt: "2026-11-02T16:10:00.000Z"
}

describe("Memory on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(Memory, Memory3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    })
    expect(names.length).toBe(21)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Memory.Memory, Memory3.Memory, examplesOfComponent("Memory"))
    roundTrips(Memory.MemoryContext, Memory3.MemoryContext, examplesOfComponent("MemoryContext"))
    roundTrips(Memory.MemoryCitation, Memory3.MemoryCitation, examplesOfComponent("MemoryCitation"))
    roundTrips(Memory.MemoryContextInput, Memory3.MemoryContextInput, examplesOfComponent("MemoryContextInput"))
    roundTrips(Memory.MemoryPage, Memory3.MemoryPage, examplesOfComponent("MemoryPage"))
    roundTrips(Memory.MemoryWithContextsResponse, Memory3.MemoryWithContextsResponse, examplesOfComponent("MemoryWithContextsResponse"))
    roundTrips(Memory.MemorySearchResults, Memory3.MemorySearchResults, examplesOfComponent("MemorySearchResults"))
    roundTrips(Memory.SaveMemoryRequest, Memory3.SaveMemoryRequest, examplesAt("POST /v1/memory request"))
    roundTrips(Memory.MemoryResponse, Memory3.MemoryResponse, examplesAt("POST /v1/memory 201"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(Memory.SaveMemoryRequest, Memory3.SaveMemoryRequest, [
      { content: "Staging resets on Sundays." },
      { content: "  Staging  ", tags: [" staging ", "db"], scope: "org", source: "cli" },
      { content: "x", contexts: [{ snippet: "s", conversation_id: "c", message_id: "m", origin: "searched_conversation" }] },
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
    sameOn(Memory.MemorySearchQuery, Memory3.MemorySearchQuery, [
      { q: "staging" }, { q: " staging ", limit: "50" }, { q: "" }, { q: "x", limit: "51" }, { q: "x", limit: "1e1" }, {}
    ])
    sameOn(Memory.MemoryListQuery, Memory3.MemoryListQuery, [{}, { limit: "10", cursor: "c" }, { limit: "0" }, { cursor: "" }])
    sameOn(Memory.MemorySearchResult, Memory3.MemorySearchResult, [
      { ...memory, score: 0.82 }, { ...memory, score: 1 }, { ...memory, score: "0.82" }, { ...memory, scope: "org", score: 0 }, memory
    ])
    sameOn(Memory.MemoryPath, Memory3.MemoryPath, [{ memoryId: memory.id }, { memoryId: "mcx_01m6dsg7e0e6b9jzzfm2ahfg0f" }])
  })
})

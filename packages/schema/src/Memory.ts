/** The memory bank: personal memories a person saved in one organization, with the conversation snippets behind them. */
import * as Schema from "effect/Schema"
import { allErrors, QueryInteger, requestBody, Timestamp, TrimmedText } from "./Common.js"
import { exampleId, MemoryContextId, MemoryId } from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { exampleTime } from "./Examples.js"

export const MemoryContent = TrimmedText(1, 8000, "The memory's text")
export const MemoryTag = TrimmedText(1, 64, "A tag")
export const MemoryTags = Schema.Array(MemoryTag).pipe(Schema.maxItems(32)).annotations({
  description: "At most 32 tags, each trimmed and 1 to 64 characters. A tag repeated (after trimming) is kept once."
})

export const MemoryContextOrigin = Schema.Literal("active_conversation", "searched_conversation").annotations({
  identifier: "MemoryContextOrigin",
  description: "Where the snippet came from: the conversation the memory was saved in, or one found by searching."
})

const ConversationRef = (what: string) => TrimmedText(1, 128, what)

/** The example memory, saved by Grace from a conversation about staging. */
const example = {
  memory: {
    id: exampleId("mem"),
    content: "The staging database is reset every Sunday at 02:00 UTC.",
    tags: ["staging", "database"],
    source: "chat",
    scope: "user" as const,
    createdAt: exampleTime(400),
    updatedAt: exampleTime(400)
  },
  context: {
    snippet: "Heads up: staging's database gets wiped every Sunday at 2am UTC, so don't keep test data there.",
    conversation_id: "conv_81f2c7",
    message_id: "msg_0193",
    origin: "active_conversation" as const
  }
}
const contextExample = {
  id: exampleId("mcx"),
  snippet: example.context.snippet,
  citation: { conversation_id: example.context.conversation_id, message_id: example.context.message_id },
  origin: example.context.origin,
  createdAt: exampleTime(400)
}

/** One snippet of conversation behind a memory, as sent when saving it. */
export const MemoryContextInput = Schema.Struct({
  snippet: TrimmedText(1, 4000, "The conversation text the memory came from"),
  conversation_id: Schema.optionalWith(ConversationRef("The conversation's id"), { exact: true }),
  message_id: Schema.optionalWith(ConversationRef("The message's id"), { exact: true }),
  origin: Schema.optionalWith(MemoryContextOrigin, { exact: true })
}).annotations({ ...requestBody, identifier: "MemoryContextInput", examples: [example.context] })

/** Members a client may send but the server decides: accepted and ignored, as the spec says of `scope`. */
const ignored = (what: string) =>
  Schema.optionalWith(Schema.String.pipe(Schema.maxLength(64)), { exact: true }).annotations({
    description: `Ignored: the server sets ${what} itself, whatever is sent here (a string of at most 64 characters).`
  })

export const SaveMemoryRequest = Schema.Struct({
  content: MemoryContent,
  tags: Schema.optionalWith(MemoryTags, { exact: true }),
  contexts: Schema.optionalWith(Schema.Array(MemoryContextInput).pipe(Schema.maxItems(16)), { exact: true }).annotations({
    description: "At most 16 snippets of conversation behind the memory, kept in the order sent."
  }),
  scope: ignored("`scope` (always `user`)"),
  source: ignored("`source` (`chat`)")
}).annotations({ ...requestBody, examples: [{ content: example.memory.content, tags: example.memory.tags, contexts: [example.context] }] })
export type SaveMemoryRequest = typeof SaveMemoryRequest.Type

export const MemoryScope = Schema.Literal("user").annotations({
  description: "Always `user`: a memory is personal to the person who saved it, in the organization they saved it in."
})

export class Memory extends Schema.Class<Memory>("Memory")(Schema.Struct({
  id: MemoryId,
  content: Schema.String,
  tags: Schema.Array(Schema.String),
  source: Schema.String.annotations({ description: "Set by the server: `chat` for every memory saved through this API." }),
  scope: MemoryScope,
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotations({ examples: [example.memory] })) {}

export const MemoryCitation = Schema.Struct({
  conversation_id: Schema.optionalWith(Schema.String, { exact: true }),
  message_id: Schema.optionalWith(Schema.String, { exact: true })
}).annotations({
  identifier: "MemoryCitation",
  description: "The conversation and message ids sent with the snippet.",
  examples: [contextExample.citation]
})

export class MemoryContext extends Schema.Class<MemoryContext>("MemoryContext")(Schema.Struct({
  id: MemoryContextId,
  snippet: Schema.String,
  citation: Schema.NullOr(MemoryCitation).annotations({
    description: "Whichever of `conversation_id` and `message_id` were sent; null when neither was."
  }),
  origin: Schema.NullOr(MemoryContextOrigin),
  createdAt: Timestamp
}).annotations({ examples: [contextExample] })) {}

export class MemoryWithContexts extends Memory.extend<MemoryWithContexts>("MemoryWithContexts")({
  contexts: Schema.Array(MemoryContext).annotations({ description: "The snippets saved with the memory, in the order sent." })
}) {}

export class MemorySearchResult extends Memory.extend<MemorySearchResult>("MemorySearchResult")({
  score: Schema.Number.annotations({
    description: "Relevance from 0 to 1 (higher is better), comparable only within one search."
  })
}) {}

export const MemoryResponse = Schema.Struct({ memory: Memory }).annotations({ identifier: "MemoryResponse" })
// Classes made with `extend` take their examples here, on what holds them: an `extend`'s own annotations would be
// typed by the class being defined.
export const MemoryWithContextsResponse = Schema.Struct({ memory: MemoryWithContexts }).annotations({
  identifier: "MemoryWithContextsResponse",
  examples: [{ memory: { ...example.memory, contexts: [contextExample] } }]
})

export const MemoryPage = Page(MemoryWithContexts).annotations({
  identifier: "MemoryPage",
  examples: [{ items: [{ ...example.memory, contexts: [contextExample] }], nextCursor: null }]
})
export const MemoryListQuery = Schema.Struct({ ...PageQueryFields }).annotations(allErrors)
export type MemoryListQuery = typeof MemoryListQuery.Type

export const DEFAULT_MEMORY_SEARCH_LIMIT = 20

export const MemorySearchText = TrimmedText(1, 512, "What to look for, in natural language")

export const MemorySearchLimit = QueryInteger(1, 50, `How many results at most, 1 to 50 (default ${DEFAULT_MEMORY_SEARCH_LIMIT}).`)

export const MemorySearchQuery = Schema.Struct({
  q: MemorySearchText,
  limit: Schema.optionalWith(MemorySearchLimit, { exact: true })
}).annotations({ ...allErrors, examples: [{ q: "when is the staging database reset", limit: 5 }] })
export type MemorySearchQuery = typeof MemorySearchQuery.Type

export const MemorySearchResults = Schema.Struct({ results: Schema.Array(MemorySearchResult) }).annotations({
  identifier: "MemorySearchResults",
  examples: [{ results: [{ ...example.memory, score: 0.82 }] }]
})

export const MemoryPath = Schema.Struct({ memoryId: MemoryId })

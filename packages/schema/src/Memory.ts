/** The memory bank: personal memories a person saved in one organization, with the conversation snippets behind them. */
import * as Schema from "effect/Schema"
import { QueryInteger, Timestamp, TrimmedText } from "./Common.js"
import { exampleId, MemoryContextId, MemoryId } from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { exampleTime } from "./Examples.js"

export const MemoryContent = TrimmedText(1, 8000, "The memory's text")
export const MemoryTag = TrimmedText(1, 64, "A tag")
export const MemoryTags = Schema.Array(MemoryTag).check(Schema.isMaxLength(32)).annotate({
  description: "At most 32 tags, each trimmed and 1 to 64 characters. A tag repeated (after trimming) is kept once."
})

export const MemoryContextOrigin = Schema.Literals(["active_conversation", "searched_conversation"]).annotate({
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
  conversation_id: Schema.optionalKey(ConversationRef("The conversation's id")),
  message_id: Schema.optionalKey(ConversationRef("The message's id")),
  origin: Schema.optionalKey(MemoryContextOrigin)
}).annotate({ identifier: "MemoryContextInput", examples: [example.context] })

/** Members a client may send but the server decides: accepted and ignored, as the spec says of `scope`. */
const ignored = (what: string) =>
  Schema.optionalKey(Schema.String.check(Schema.isMaxLength(64))).annotateKey({
    description: `Ignored: the server sets ${what} itself, whatever is sent here (a string of at most 64 characters).`
  })

export const SaveMemoryRequest = Schema.Struct({
  content: MemoryContent,
  tags: Schema.optionalKey(MemoryTags),
  contexts: Schema.optionalKey(Schema.Array(MemoryContextInput).check(Schema.isMaxLength(16))).annotateKey({
    description: "At most 16 snippets of conversation behind the memory, kept in the order sent."
  }),
  scope: ignored("`scope` (always `user`)"),
  source: ignored("`source` (`chat`)")
}).annotate({ examples: [{ content: example.memory.content, tags: example.memory.tags, contexts: [example.context] }] })
export type SaveMemoryRequest = typeof SaveMemoryRequest.Type

export const MemoryScope = Schema.Literal("user").annotate({
  description: "Always `user`: a memory is personal to the person who saved it, in the organization they saved it in."
})

export class Memory extends Schema.Class<Memory>("Memory")(Schema.Struct({
  id: MemoryId,
  content: Schema.String,
  tags: Schema.Array(Schema.String),
  source: Schema.String.annotate({ description: "Set by the server: `chat` for every memory saved through this API." }),
  scope: MemoryScope,
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({ examples: [example.memory] })) {}

export const MemoryCitation = Schema.Struct({
  conversation_id: Schema.optionalKey(Schema.String),
  message_id: Schema.optionalKey(Schema.String)
}).annotate({
  identifier: "MemoryCitation",
  description: "The conversation and message ids sent with the snippet.",
  examples: [contextExample.citation]
})

export class MemoryContext extends Schema.Class<MemoryContext>("MemoryContext")(Schema.Struct({
  id: MemoryContextId,
  snippet: Schema.String,
  citation: Schema.NullOr(MemoryCitation).annotate({
    description: "Whichever of `conversation_id` and `message_id` were sent; null when neither was."
  }),
  origin: Schema.NullOr(MemoryContextOrigin),
  createdAt: Timestamp
}).annotate({ examples: [contextExample] })) {}

export class MemoryWithContexts extends Memory.extend<MemoryWithContexts>("MemoryWithContexts")({
  contexts: Schema.Array(MemoryContext).annotate({ description: "The snippets saved with the memory, in the order sent." })
}) {}

export class MemorySearchResult extends Memory.extend<MemorySearchResult>("MemorySearchResult")({
  // Finite: Effect 4's Schema.Number also takes (and documents) "NaN" and "Infinity", which no score is.
  score: Schema.Finite.annotate({
    description: "Relevance from 0 to 1 (higher is better), comparable only within one search."
  })
}) {}

const memoryWithContextsExample = new MemoryWithContexts({ ...example.memory, contexts: [new MemoryContext(contextExample)] })

export const MemoryResponse = Schema.Struct({ memory: Memory }).annotate({ identifier: "MemoryResponse" })
// Classes made with `extend` take their examples here, on what holds them: an `extend`'s own annotations would be
// typed by the class being defined. Instances: Effect 4 encodes no plain object as a class, and an example it cannot
// encode is left out.
export const MemoryWithContextsResponse = Schema.Struct({ memory: MemoryWithContexts }).annotate({
  identifier: "MemoryWithContextsResponse",
  examples: [{ memory: memoryWithContextsExample }]
})

export const MemoryPage = Page(MemoryWithContexts).annotate({
  identifier: "MemoryPage",
  examples: [{ items: [memoryWithContextsExample], nextCursor: null }]
})
/** Every bad member reported: the API's `HttpApi.QueryParseOptions` (`allErrors`), not an annotation here. */
export const MemoryListQuery = Schema.Struct({ ...PageQueryFields })
export type MemoryListQuery = typeof MemoryListQuery.Type

export const DEFAULT_MEMORY_SEARCH_LIMIT = 20

export const MemorySearchText = TrimmedText(1, 512, "What to look for, in natural language")

export const MemorySearchLimit = QueryInteger(1, 50, `How many results at most, 1 to 50 (default ${DEFAULT_MEMORY_SEARCH_LIMIT}).`)

export const MemorySearchQuery = Schema.Struct({
  q: MemorySearchText,
  limit: Schema.optionalKey(MemorySearchLimit)
}).annotate({ examples: [{ q: "when is the staging database reset", limit: 5 }] })
export type MemorySearchQuery = typeof MemorySearchQuery.Type

export const MemorySearchResults = Schema.Struct({ results: Schema.Array(MemorySearchResult) }).annotate({
  identifier: "MemorySearchResults",
  examples: [{ results: [new MemorySearchResult({ ...example.memory, score: 0.82 })] }]
})

export const MemoryPath = Schema.Struct({ memoryId: MemoryId })

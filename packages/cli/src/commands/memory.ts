/**
 * `orgplane memory save | search | list | get | delete`: the caller's own memories in the active organization.
 * Nobody else's are reachable: every command acts as the signed-in person.
 */
import {
  type Memory,
  MemoryApi,
  MemoryContent,
  MemoryId,
  MemoryPage,
  MemoryResponse,
  MemorySearchLimit,
  MemorySearchResults,
  MemorySearchText,
  MemoryTags,
  MemoryWithContextsResponse,
  TrimmedText
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Commands from "../Commands.js"
import { UsageError } from "../Errors.js"
import * as Files from "../Files.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

const memoryId = Inputs.argument("memoryId", { schema: MemoryId, description: "The memory (mem_…)." })

const readStdin = Effect.mapError(Files.readStdin, (message) => new UsageError({ message }))

/** The text given, or standard input for `-`, checked with the API's rule for `content`. */
const contentOf = (text: string) =>
  Effect.flatMap(text === "-" ? readStdin : Effect.succeed(text), (value) =>
    Schema.decodeEffect(MemoryContent)(value).pipe(
      Effect.mapError(() => new UsageError({ message: "<content>: must be 1 to 8000 characters long (after trimming white space)" }))
    ))

/** One line of a memory's text for tables. */
const excerpt = (text: string, length = 60) => {
  const line = text.replace(/\s+/g, " ")
  return line.length > length ? `${line.slice(0, length - 1)}…` : line
}

const tagList = (memory: Memory) => memory.tags.join(", ")

export const save = Commands.endpoint("save", {
  summary: "Save a memory for yourself in the active organization (`-` reads its text from standard input).",
  inputs: {
    content: Inputs.argument("content", { description: "The memory's text, 1 to 8000 characters, or - to read it from standard input." }),
    tags: Inputs.repeatedText("tag", { placeholder: "<tag>", description: "A tag (1 to 64 characters); repeat for more, at most 32.", schema: MemoryTags }),
    snippets: Inputs.repeatedText("snippet", {
      placeholder: "<text>",
      description: "A snippet of the conversation behind the memory (1 to 4000 characters); repeat for more, at most 16.",
      schema: Schema.Array(TrimmedText(1, 4000)).check(Schema.isMaxLength(16))
    })
  },
  call: (client, { content, snippets, tags }) =>
    Effect.flatMap(contentOf(content), (text) =>
      client.memory.save({
        payload: {
          content: text,
          ...(tags.length > 0 ? { tags } : {}),
          ...(snippets.length > 0 ? { contexts: snippets.map((snippet) => ({ snippet })) } : {})
        }
      })),
  output: MemoryResponse,
  human: ({ memory }) => `Saved memory ${memory.id}${memory.tags.length > 0 ? ` (tags: ${tagList(memory)})` : ""}.`
})

export const search = Commands.endpoint("search", {
  summary: "Search your memories in the active organization, best match first.",
  inputs: {
    query: Inputs.argument("query", { schema: MemorySearchText, description: "What to look for, in natural language (quote it)." }),
    limit: Inputs.optional(Inputs.text("limit", {
      placeholder: "<1-50>",
      description: "How many results at most, 1 to 50 (default 20).",
      schema: MemorySearchLimit
    }))
  },
  call: (client, { limit, query }) => client.memory.search({ query: { q: query, ...Inputs.ifSome("limit", limit) } }),
  output: MemorySearchResults,
  human: ({ results }) =>
    results.length === 0
      ? "No memories match."
      : Output.table(
        ["score", "id", "tags", "content"],
        results.map((result) => [result.score.toFixed(3), result.id, tagList(result), excerpt(result.content)])
      )
})

export const list = Commands.list("list", {
  summary: "List your memories in the active organization, newest first.",
  noun: "memories",
  inputs: {},
  call: (client, _, page) => client.memory.list({ query: page }),
  output: MemoryPage,
  columns: [
    ["id", (memory) => memory.id],
    ["created", (memory) => Output.date(memory.createdAt)],
    ["tags", tagList],
    ["content", (memory) => excerpt(memory.content)]
  ]
})

export const get = Commands.endpoint("get", {
  summary: "Show one of your memories with the snippets saved with it.",
  inputs: { memoryId },
  call: (client, { memoryId }) => client.memory.get({ params: { memoryId } }),
  output: MemoryWithContextsResponse,
  human: ({ memory }) =>
    [
      Output.fields([
        ["id", memory.id],
        ["created", Output.date(memory.createdAt)],
        ["tags", tagList(memory)],
        ["source", memory.source]
      ]),
      "",
      memory.content,
      ...memory.contexts.map((context) => `\n> ${context.snippet.replace(/\n/g, "\n> ")}`)
    ].join("\n")
})

const Deleted = Schema.Struct({ ok: Schema.Literal(true), deleted: MemoryId })

export const del = Commands.endpoint("delete", {
  summary: "Delete one of your memories, with its snippets, for good.",
  inputs: { memoryId },
  call: (client, { memoryId }) => client.memory.delete({ params: { memoryId } }).pipe(Effect.as({ ok: true as const, deleted: memoryId })),
  output: Deleted,
  human: ({ deleted }) => `Deleted memory ${deleted}.`
})

export const memory = Commands.group("memory", "Save and search your own memories in the active organization (only you see them).", [
  save,
  search,
  list,
  get,
  del
], [MemoryApi])

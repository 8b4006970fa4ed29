/** The memory bank: a person's own memories, saved and searched in the organization they act in. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import {
  MemoryListQuery,
  MemoryPage,
  MemoryPath,
  MemoryResponse,
  MemorySearchQuery,
  MemorySearchResults,
  MemoryWithContextsResponse,
  SaveMemoryRequest
} from "./Memory.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import { audits } from "./AuditCatalog.js"

/** The errors every endpoint of the group may answer (Effect 4 has no group `addError`: each endpoint declares them). */
const groupErrors = [ForbiddenResponse] as const

export class MemoryApi extends HttpApiGroup.make("memory")
  .add(
    HttpApiEndpoint.post("save", "/v1/memory", { payload: SaveMemoryRequest, success: MemoryResponse.pipe(HttpApiSchema.status(201)), error: [...groupErrors] }).pipe(audits("memory.save"), requires("memory.use"))
      .annotate(OpenApi.Summary, "Save a memory")
      .annotate(
        OpenApi.Description,
        "Saves a human-confirmed memory for the caller, with the snippets of conversation behind it, in one transaction, and answers the memory (without its snippets). `content` is trimmed, 1 to 8000 characters; at most 32 tags of 1 to 64 characters, trimmed, each kept once; at most 16 contexts, each a snippet of 1 to 4000 characters with optional `conversation_id` and `message_id` of 1 to 128 characters. The server sets `source` to `chat` and `scope` to `user`: a `scope` or `source` sent by the client is accepted and ignored; any other unknown member is a 400.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("search", "/v1/memory/search", { query: MemorySearchQuery, success: MemorySearchResults, error: [...groupErrors] }).pipe(requires("memory.use"))
      .annotate(OpenApi.Summary, "Search memories")
      .annotate(
        OpenApi.Description,
        "Relevance-ranked full-text search over the caller's own memories in this organization. `q` (trimmed, 1 to 512 characters) is natural language, read with Postgres's `english` text search (so `deploying` finds `deploy`, and words such as `the` or `how` count for nothing); each word or `\"quoted phrase\"` may match on its own, and a memory matching more of them, more closely, ranks higher. Words in the content count more than words in the tags. Results are ordered by `score`, then newest first; `limit` is 1 to 50 (default 20). Nothing matching, or a query of only such common words, answers `{\"results\": []}`, not an error. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/memory", { query: MemoryListQuery, success: MemoryPage, error: [...groupErrors] }).pipe(requires("memory.use"))
      .annotate(OpenApi.Summary, "List memories")
      .annotate(
        OpenApi.Description,
        "The caller's own memories in this organization, newest first, each with its snippets. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/memory/:memoryId", { params: MemoryPath, success: MemoryWithContextsResponse, error: [NotFoundResponse, ...groupErrors] }).pipe(requires("memory.use"))
      .annotate(OpenApi.Summary, "Get a memory")
      .annotate(
        OpenApi.Description,
        "One of the caller's memories with its snippets. Changes nothing.\n\nErrors: 404 `memory_not_found` for an unknown id, another person's memory, or one saved in another organization."
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/memory/:memoryId", { params: MemoryPath, success: HttpApiSchema.NoContent, error: [NotFoundResponse, ...groupErrors] }).pipe(audits("memory.delete"), requires("memory.use"))
      .annotate(OpenApi.Summary, "Delete a memory")
      .annotate(
        OpenApi.Description,
        "Deletes one of the caller's memories with its snippets, for good.\n\nErrors: 404 `memory_not_found` for an unknown id, another person's memory, or one saved in another organization."
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Memory")
  .annotate(
    OpenApi.Description,
    "The memory bank: personal memories the caller saves and searches. A memory belongs to the person who saved it within the organization they saved it in (the organization the request acts in: the session's active organization, or the API key's): memories saved in one organization never show in another the person belongs to, so leaving an employer leaves that employer's memories behind, and nobody else, not even an owner, can read, find or delete them. Memory ids are `mem_` TypeIDs (a malformed one is a 400). Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}

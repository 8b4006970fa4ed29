import type { SaveMemoryRequest } from "@orgplane/schema"
import { calls, invalid, ok, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

const { get, post } = Http.verbs(() => server.url)
const { apiKeys, memory: memories, organizations, users } = calls(() => server.url)

const save = async (token: string, payload: typeof SaveMemoryRequest.Encoded) => ok(await memories.save({ token, payload }), 201).memory
const search = (token: string, q: string, limit?: number) =>
  memories.search({ token, query: { q, ...(limit === undefined ? {} : { limit: `${limit}` }) } })
/** The ids a search found, best first (the search must answer 200). */
const found = async (token: string, q: string, limit?: number) => ok(await search(token, q, limit), 200).results.map((r) => r.id)

describe("memory", () => {
  it("saves a memory with its snippets; the server sets source and scope, whatever the client sends", async () => {
    const org = await Http.staffed(server.url)
    const created = await memories.save({
      token: org.member.token,
      payload: {
        content: "  Prefers dark mode in every editor  ",
        tags: [" ui ", "editor", "ui"],
        scope: "org",
        source: "import",
        contexts: [
          { snippet: " I always switch to dark mode ", conversation_id: "conv-1", message_id: "msg-9", origin: "active_conversation" },
          { snippet: "found it in an old chat", origin: "searched_conversation" },
          { snippet: "bare" }
        ]
      }
    })
    expect(created.status).toBe(201)
    const { memory } = ok(created, 201)
    expect(memory.id).toMatch(/^mem_[0-9a-z]{26}$/)
    expect(memory).toEqual({
      id: memory.id,
      content: "Prefers dark mode in every editor",
      tags: ["ui", "editor"],
      source: "chat",
      scope: "user",
      createdAt: memory.createdAt,
      updatedAt: memory.createdAt
    })
    const read = await memories.get({ token: org.member.token, path: { memoryId: memory.id } })
    expect(read.status).toBe(200)
    const readMemory = ok(read, 200).memory
    expect(readMemory).toMatchObject({ ...memory })
    expect(readMemory.contexts.map((c) => ({ ...c, id: undefined, createdAt: undefined }))).toEqual([
      { snippet: "I always switch to dark mode", citation: { conversation_id: "conv-1", message_id: "msg-9" }, origin: "active_conversation" },
      { snippet: "found it in an old chat", citation: null, origin: "searched_conversation" },
      { snippet: "bare", citation: null, origin: null }
    ])
    expect(readMemory.contexts[0].id).toMatch(/^mcx_/)
  })

  it("refuses each bound with a 400 naming the field, never a 500", async () => {
    const { token } = await Http.owner(server.url)
    const bad = async (body: unknown, path: ReadonlyArray<string | number>) => {
      const response = await post("/v1/memory", { token, body })
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400)
      const refused = invalid(response)
      expect(refused.error).toBe("invalid_request")
      expect(refused.details.map((d) => d.path)).toContainEqual(path)
    }
    await bad({}, ["content"])
    await bad({ content: "   " }, ["content"])
    await bad({ content: "x".repeat(8001) }, ["content"])
    await bad({ content: "ok", tags: Array.from({ length: 33 }, (_, i) => `t${i}`) }, ["tags"])
    await bad({ content: "ok", tags: [" "] }, ["tags", 0])
    await bad({ content: "ok", tags: ["x".repeat(65)] }, ["tags", 0])
    await bad({ content: "ok", contexts: Array.from({ length: 17 }, () => ({ snippet: "s" })) }, ["contexts"])
    await bad({ content: "ok", contexts: [{}] }, ["contexts", 0, "snippet"])
    await bad({ content: "ok", contexts: [{ snippet: "x".repeat(4001) }] }, ["contexts", 0, "snippet"])
    await bad({ content: "ok", contexts: [{ snippet: "s", conversation_id: "x".repeat(129) }] }, ["contexts", 0, "conversation_id"])
    await bad({ content: "ok", contexts: [{ snippet: "s", message_id: "" }] }, ["contexts", 0, "message_id"])
    await bad({ content: "ok", contexts: [{ snippet: "s", origin: "elsewhere" }] }, ["contexts", 0, "origin"])
    await bad({ content: "ok", contexts: [{ snippet: "s", extra: 1 }] }, ["contexts", 0, "extra"])
    await bad({ content: "ok", color: "blue" }, ["color"])
    // At the bounds: accepted.
    const edge = await memories.save({
      token,
      payload: {
        content: "x".repeat(8000),
        tags: Array.from({ length: 32 }, (_, i) => `${i}`.padEnd(64, "t")),
        contexts: Array.from({ length: 16 }, () => ({ snippet: "s".repeat(4000), conversation_id: "c".repeat(128), message_id: "m".repeat(128) }))
      }
    })
    expect(edge.status).toBe(201)
    expect((await get("/v1/memory/search?q=", { token })).status).toBe(400)
    expect((await get(`/v1/memory/search?q=${"a".repeat(513)}`, { token })).status).toBe(400)
    expect((await get("/v1/memory/search?q=x&limit=51", { token })).status).toBe(400)
    expect((await get("/v1/memory/search?q=x&limit=0", { token })).status).toBe(400)
    expect((await get("/v1/memory/search", { token })).status).toBe(400)
    expect((await get("/v1/memory/not-an-id", { token })).status).toBe(400)
    expect((await get("/v1/memory?limit=101", { token })).status).toBe(400)
  })

  it("searches by relevance: more of the query's words first, content above tags, then newest", async () => {
    const { token } = await Http.owner(server.url)
    const one = await save(token, { content: "The staging cluster runs on Kubernetes" })
    const both = await save(token, { content: "Deploying to the Kubernetes cluster needs the VPN first" })
    const tagged = await save(token, { content: "Ask Dana before anything", tags: ["deploy"] })
    await save(token, { content: "Lunch is at noon on Fridays" })
    const answered = await search(token, "how do I deploy to kubernetes")
    expect(answered.status).toBe(200)
    const { results } = ok(answered, 200)
    expect(results.map((r) => r.id)).toEqual([both.id, one.id, tagged.id])
    const scores = results.map((r) => r.score)
    expect(scores[0]).toBeGreaterThan(scores[1])
    expect(scores[1]).toBeGreaterThan(scores[2])
    expect(scores.every((s) => s > 0 && s <= 1)).toBe(true)
    expect(results[0]).toEqual({ ...both, score: scores[0] })
    expect(await found(token, "kubernetes", 1)).toHaveLength(1)
    // A phrase in quotes matches only as a phrase; a leading minus is read as a word, not an exclusion.
    expect(await found(token, "\"staging cluster\"")).toEqual([one.id])
    expect(await found(token, "-lunch")).toHaveLength(1)
  })

  it("answers empty results, not an error, when nothing matches or the query is only common words", async () => {
    const { token } = await Http.owner(server.url)
    await save(token, { content: "The deploy key lives in the vault" })
    for (const q of ["submarine", "the and of", "how is it", "\"\"", "-", "or or", "!!! ??? &&& |||", "'"]) {
      const response = await search(token, q)
      expect(response.status, q).toBe(200)
      expect(response.body, q).toEqual({ results: [] })
    }
  })

  it("keeps memories to their person and organization: nobody else, not even an owner, sees or deletes them", async () => {
    const org = await Http.staffed(server.url)
    const mine = await save(org.member.token, { content: "My private reminder about the quarterly review" })
    const theirs = await save(org.owner.token, { content: "Owner notes on the quarterly review" })
    expect(await found(org.member.token, "quarterly review")).toEqual([mine.id])
    expect(await found(org.owner.token, "quarterly review")).toEqual([theirs.id])
    expect(ok(await memories.list({ token: org.admin.token }), 200).items).toEqual([])
    const minePath = { memoryId: mine.id }
    for (const token of [org.owner.token, org.admin.token]) {
      const read = await memories.get({ token, path: minePath })
      expect(read.status).toBe(404)
      expect(read.body).toEqual({ error: "memory_not_found", message: "Memory not found." })
      expect((await memories.delete({ token, path: minePath })).status).toBe(404)
    }
    expect((await memories.get({ token: org.member.token, path: minePath })).status).toBe(200)

    // The same person in a second organization: nothing of the first shows there, and back again.
    const person = org.owner
    const second = await organizations.create({ token: person.token, payload: { name: "Side project" } })
    expect(second.status).toBe(201)
    expect(await found(person.token, "quarterly review")).toEqual([])
    expect(ok(await memories.list({ token: person.token }), 200).items).toEqual([])
    const theirsPath = { memoryId: theirs.id }
    expect((await memories.get({ token: person.token, path: theirsPath })).status).toBe(404)
    expect((await memories.delete({ token: person.token, path: theirsPath })).status).toBe(404)
    const side = await save(person.token, { content: "Side project quarterly review is informal" })
    expect(await found(person.token, "quarterly review")).toEqual([side.id])
    await users.switchOrganization({ token: person.token, payload: { organizationId: org.organizationId } })
    expect(await found(person.token, "quarterly review")).toEqual([theirs.id])

    // An API key acts as its creator in its organization.
    const key = ok(await apiKeys.create({ token: person.token, payload: { name: "memory" } }), 201).key
    expect(ok(await memories.list({ apiKey: key }), 200).items.map((m) => m.id)).toEqual([theirs.id])
  })

  it("deletes a memory with its snippets; a second delete or an unknown id is 404", async () => {
    const { token } = await Http.owner(server.url)
    const memory = await save(token, { content: "Temporary thought", contexts: [{ snippet: "it was temporary" }] })
    const path = { memoryId: memory.id }
    expect((await memories.delete({ token, path })).status).toBe(204)
    expect((await memories.get({ token, path })).status).toBe(404)
    const again = await memories.delete({ token, path })
    expect(again.status).toBe(404)
    expect(refusal(again, 404)).toEqual({ error: "memory_not_found", message: "Memory not found." })
    expect((await memories.delete({ token, path: { memoryId: "mem_01h455vb4pex5vsknk084sn02q" } })).status).toBe(404)
    expect(await found(token, "temporary")).toEqual([])
  })

  it("lists the caller's memories newest first with their snippets, page by page", async () => {
    const { token } = await Http.owner(server.url)
    const saved = []
    for (let i = 0; i < 5; i++) saved.push(await save(token, { content: `note ${i}`, contexts: [{ snippet: `why ${i}` }] }))
    const answered = await memories.list({ token, query: { limit: "2" } })
    expect(answered.status).toBe(200)
    const first = ok(answered, 200)
    expect(first.items.map((m) => m.content)).toEqual(["note 4", "note 3"])
    expect(first.items[0].contexts.map((c) => c.snippet)).toEqual(["why 4"])
    const ids = [...first.items.map((m) => m.id)]
    let cursor = first.nextCursor
    while (cursor !== null) {
      const page = await memories.list({ token, query: { limit: "2", cursor } })
      expect(page.status).toBe(200)
      const body = ok(page, 200)
      ids.push(...body.items.map((m) => m.id))
      cursor = body.nextCursor
    }
    expect(ids).toEqual(saved.map((m) => m.id).reverse())
    const forged = await memories.list({ token, query: { cursor: "nonsense" } })
    expect(forged.status).toBe(400)
    expect(invalid(forged).details[0].path).toEqual(["cursor"])
  })

  it("answers 401 without credentials on every operation", async () => {
    const path = { memoryId: "mem_01h455vb4pex5vsknk084sn02q" }
    for (const response of [
      await memories.save({ payload: { content: "x" } }),
      await memories.search({ query: { q: "x" } }),
      await memories.list({}),
      await memories.get({ path }),
      await memories.delete({ path }),
      await memories.list({ token: "not-a-token" })
    ]) {
      expect(response.status).toBe(401)
      expect(response.body).toMatchObject({ error: "unauthorized" })
    }
  })
})

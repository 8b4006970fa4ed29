import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

const { del, get, post } = Http.verbs(() => server.url)

const save = async (token: string, body: Record<string, unknown>) => Http.expectStatus("save memory", await post("/v1/memory", { token, body }), 201).memory
const search = (token: string, q: string, limit?: number) =>
  get(`/v1/memory/search?q=${encodeURIComponent(q)}${limit === undefined ? "" : `&limit=${limit}`}`, { token })

describe("memory", () => {
  it("saves a memory with its snippets; the server sets source and scope, whatever the client sends", async () => {
    const org = await Http.staffed(server.url)
    const created = await post("/v1/memory", {
      token: org.member.token,
      body: {
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
    const memory = created.body.memory
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
    const read = await get(`/v1/memory/${memory.id}`, { token: org.member.token })
    expect(read.status).toBe(200)
    expect(read.body.memory).toMatchObject({ ...memory })
    expect(read.body.memory.contexts.map((c: any) => ({ ...c, id: undefined, createdAt: undefined }))).toEqual([
      { snippet: "I always switch to dark mode", citation: { conversation_id: "conv-1", message_id: "msg-9" }, origin: "active_conversation" },
      { snippet: "found it in an old chat", citation: null, origin: "searched_conversation" },
      { snippet: "bare", citation: null, origin: null }
    ])
    expect(read.body.memory.contexts[0].id).toMatch(/^mcx_/)
  })

  it("refuses each bound with a 400 naming the field, never a 500", async () => {
    const { token } = await Http.owner(server.url)
    const bad = async (body: unknown, path: ReadonlyArray<string | number>) => {
      const response = await post("/v1/memory", { token, body })
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400)
      expect(response.body.error).toBe("invalid_request")
      expect(response.body.details.map((d: any) => d.path)).toContainEqual(path)
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
    const edge = await post("/v1/memory", {
      token,
      body: {
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
    const results = await search(token, "how do I deploy to kubernetes")
    expect(results.status).toBe(200)
    expect(results.body.results.map((r: any) => r.id)).toEqual([both.id, one.id, tagged.id])
    const scores = results.body.results.map((r: any) => r.score)
    expect(scores[0]).toBeGreaterThan(scores[1])
    expect(scores[1]).toBeGreaterThan(scores[2])
    expect(scores.every((s: number) => s > 0 && s <= 1)).toBe(true)
    expect(results.body.results[0]).toEqual({ ...both, score: scores[0] })
    expect((await search(token, "kubernetes", 1)).body.results.map((r: any) => r.id)).toHaveLength(1)
    // A phrase in quotes matches only as a phrase; a leading minus is read as a word, not an exclusion.
    expect((await search(token, "\"staging cluster\"")).body.results.map((r: any) => r.id)).toEqual([one.id])
    expect((await search(token, "-lunch")).body.results).toHaveLength(1)
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
    expect((await search(org.member.token, "quarterly review")).body.results.map((r: any) => r.id)).toEqual([mine.id])
    expect((await search(org.owner.token, "quarterly review")).body.results.map((r: any) => r.id)).toEqual([theirs.id])
    expect((await get("/v1/memory", { token: org.admin.token })).body.items).toEqual([])
    for (const token of [org.owner.token, org.admin.token]) {
      const read = await get(`/v1/memory/${mine.id}`, { token })
      expect(read.status).toBe(404)
      expect(read.body).toEqual({ error: "memory_not_found", message: "Memory not found." })
      expect((await del(`/v1/memory/${mine.id}`, { token })).status).toBe(404)
    }
    expect((await get(`/v1/memory/${mine.id}`, { token: org.member.token })).status).toBe(200)

    // The same person in a second organization: nothing of the first shows there, and back again.
    const person = org.owner
    const second = await post("/v1/organizations", { token: person.token, body: { name: "Side project" } })
    expect(second.status).toBe(201)
    expect((await search(person.token, "quarterly review")).body.results).toEqual([])
    expect((await get("/v1/memory", { token: person.token })).body.items).toEqual([])
    expect((await get(`/v1/memory/${theirs.id}`, { token: person.token })).status).toBe(404)
    expect((await del(`/v1/memory/${theirs.id}`, { token: person.token })).status).toBe(404)
    const side = await save(person.token, { content: "Side project quarterly review is informal" })
    expect((await search(person.token, "quarterly review")).body.results.map((r: any) => r.id)).toEqual([side.id])
    await post("/v1/me/active-organization", { token: person.token, body: { organizationId: org.organizationId } })
    expect((await search(person.token, "quarterly review")).body.results.map((r: any) => r.id)).toEqual([theirs.id])

    // An API key acts as its creator in its organization.
    const key = (await post("/v1/api-keys", { token: person.token, body: { name: "memory" } })).body.key
    expect((await get("/v1/memory", { apiKey: key })).body.items.map((m: any) => m.id)).toEqual([theirs.id])
  })

  it("deletes a memory with its snippets; a second delete or an unknown id is 404", async () => {
    const { token } = await Http.owner(server.url)
    const memory = await save(token, { content: "Temporary thought", contexts: [{ snippet: "it was temporary" }] })
    expect((await del(`/v1/memory/${memory.id}`, { token })).status).toBe(204)
    expect((await get(`/v1/memory/${memory.id}`, { token })).status).toBe(404)
    const again = await del(`/v1/memory/${memory.id}`, { token })
    expect(again.status).toBe(404)
    expect(again.body).toEqual({ error: "memory_not_found", message: "Memory not found." })
    expect((await del("/v1/memory/mem_01h455vb4pex5vsknk084sn02q", { token })).status).toBe(404)
    expect((await search(token, "temporary")).body.results).toEqual([])
  })

  it("lists the caller's memories newest first with their snippets, page by page", async () => {
    const { token } = await Http.owner(server.url)
    const saved = []
    for (let i = 0; i < 5; i++) saved.push(await save(token, { content: `note ${i}`, contexts: [{ snippet: `why ${i}` }] }))
    const first = await get("/v1/memory?limit=2", { token })
    expect(first.status).toBe(200)
    expect(first.body.items.map((m: any) => m.content)).toEqual(["note 4", "note 3"])
    expect(first.body.items[0].contexts.map((c: any) => c.snippet)).toEqual(["why 4"])
    const ids = [...first.body.items.map((m: any) => m.id)]
    let cursor = first.body.nextCursor
    while (cursor !== null) {
      const page = await get(`/v1/memory?limit=2&cursor=${encodeURIComponent(cursor)}`, { token })
      expect(page.status).toBe(200)
      ids.push(...page.body.items.map((m: any) => m.id))
      cursor = page.body.nextCursor
    }
    expect(ids).toEqual(saved.map((m) => m.id).reverse())
    const forged = await get("/v1/memory?cursor=nonsense", { token })
    expect(forged.status).toBe(400)
    expect(forged.body.details[0].path).toEqual(["cursor"])
  })

  it("answers 401 without credentials on every operation", async () => {
    const id = "mem_01h455vb4pex5vsknk084sn02q"
    for (const response of [
      await post("/v1/memory", { body: { content: "x" } }),
      await get("/v1/memory/search?q=x"),
      await get("/v1/memory"),
      await get(`/v1/memory/${id}`),
      await del(`/v1/memory/${id}`),
      await get("/v1/memory", { token: "not-a-token" })
    ]) {
      expect(response.status).toBe(401)
      expect(response.body.error).toBe("unauthorized")
    }
  })
})

/**
 * LLM providers over HTTP: the catalog, create (catalog and custom) with every validation rule, reads without the
 * secret, grants (member, team; the creator keeps access; managing is not using), the connect read proven by the
 * real `openai` and `@anthropic-ai/sdk` clients against stand-in providers on 127.0.0.1, the test action (all
 * present, some missing, a refused key, a provider down), the rate limit on connect, the organization boundary,
 * and a sweep of every answer and log line for the secrets.
 */
import Anthropic from "@anthropic-ai/sdk"
import type { CreateLlmProviderRequest, LlmCatalogResponse } from "@orgplane/schema"
import { calls, invalid, ok, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as FakeLlmProvider from "../../../../packages/testkit/src/FakeLlmProvider.js"
import * as FakeWorkerRuntime from "../../../../packages/testkit/src/FakeWorkerRuntime.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/** Every line the server logs, at every level. */
const lines: Array<string> = []
const logger = Logger.make(({ fiber, message }) => {
  lines.push([...(Array.isArray(message) ? message : [message]).map((part) => typeof part === "string" ? part : JSON.stringify(part)), JSON.stringify(Object.entries(fiber.getRef(References.CurrentLogAnnotations)))].join(" "))
})

const CONNECTS_PER_MINUTE = 5

let server: TestServer.RunningServer
let openai: FakeLlmProvider.FakeLlmProvider
let anthropic: FakeLlmProvider.FakeLlmProvider
beforeAll(async () => {
  server = await TestServer.start({ outboundAllowPrivate: true, llmConnectPerMinute: CONNECTS_PER_MINUTE, logger })
  openai = await FakeLlmProvider.start({ style: "openai", models: ["gpt-4o", "gpt-4o-mini", "o3"] })
  anthropic = await FakeLlmProvider.start({ style: "anthropic", models: ["claude-test-large", "claude-test-small", "claude-test-medium"], pageSize: 2 })
})
afterAll(async () => {
  await openai?.close()
  await anthropic?.close()
  await server?.close()
})

const { post } = Http.verbs(() => server.url)
/** A raw PUT: credentials the API's types refuse, sent as they are. */
const put = (path: string, options: Http.Options) => Http.request(server.url, "PUT", path, options)
const { audit, llmProviders, teams } = calls(() => server.url)

/** Every answer a test received, for the secrets sweep. */
const answers: Array<string> = []
const seen = async <Answered extends { readonly text: string }>(response: Promise<Answered>) => {
  const answered = await response
  answers.push(answered.text)
  return answered
}

const HEADER_SECRET = "org-header-secret-7c1d9e"

/** An OpenAI provider from the catalog, with the stand-in's key (`apiKey` null: none). */
const createOpenAi = async (token: string, body: Partial<typeof CreateLlmProviderRequest.Encoded> = {}, apiKey: string | null = openai.apiKey) =>
  ok(
    await seen(llmProviders.create({
      token,
      payload: {
        name: `OpenAI ${Math.random().toString(36).slice(2, 8)}`,
        catalogProviderId: "openai",
        baseUrl: openai.baseUrl,
        headers: { "OpenAI-Organization": HEADER_SECRET },
        models: [{ id: "gpt-4o" }, { id: "gpt-4o-mini", name: "Mini", contextWindow: 64000 }],
        ...(apiKey === null ? {} : { apiKey }),
        ...body
      }
    })),
    201
  ).item

const connect = (token: string, id: string) => seen(llmProviders.connect({ token, path: { llmProviderId: id } }))
/** What connect answered, which must be a 200. */
const connection = async (token: string, id: string) => ok(await connect(token, id), 200)

/** The audit events of `action` about `targetId`, newest first. */
const auditEvents = async (token: string, action: string, targetId: string) =>
  ok(await seen(audit.listEvents({ token, query: { action, targetId } })), 200).items

describe("LLM provider catalog", () => {
  it("serves the shipped models.dev snapshot: its providers, and their models a page at a time, filtered by provider and words", async () => {
    const org = await Http.staffed(server.url)
    const answered = await seen(llmProviders.catalog({ token: org.member.token }))
    expect(answered.status).toBe(200)
    const all = ok(answered, 200)
    expect(all.source).toBe("https://models.dev")
    const ids = all.providers.map((provider) => provider.id)
    expect(ids).toEqual(expect.arrayContaining(["openai", "anthropic", "google", "mistral", "groq"]))
    // A page, not the whole catalog (which was about 120,000 characters in one answer).
    expect(all.models).toHaveLength(50)
    expect(answered.text.length).toBeLessThan(30_000)
    // Every page of models, walked by its cursors, is the whole catalog once, in order.
    const total = all.providers.reduce((sum, provider) => sum + provider.modelCount, 0)
    const walked: Array<string> = []
    let cursor: string | null = null
    do {
      const page: typeof LlmCatalogResponse.Encoded = ok(await llmProviders.catalog({ token: org.member.token, query: { limit: "100", ...(cursor === null ? {} : { cursor }) } }), 200)
      walked.push(...page.models.map((model) => `${model.providerId}/${model.id}`))
      cursor = page.nextCursor
    } while (cursor !== null)
    expect(walked).toHaveLength(total)
    expect(new Set(walked).size).toBe(total)
    const one = ok(await llmProviders.catalog({ token: org.member.token, query: { provider: "anthropic" } }), 200)
    expect(one.providers).toHaveLength(1)
    expect(one.providers[0]).toMatchObject({ id: "anthropic", name: "Anthropic", apiStyle: "anthropic", baseUrl: "https://api.anthropic.com" })
    expect(one.models.every((model) => model.providerId === "anthropic")).toBe(true)
    const found = ok(await llmProviders.catalog({ token: org.member.token, query: { provider: "openai", q: "GPT-4o" } }), 200)
    expect(found.models.every((model) => `${model.id} ${model.name}`.toLowerCase().includes("gpt-4o"))).toBe(true)
    expect(found.providers[0]?.modelCount).toBe(found.models.length)
    expect(found.models.find((model) => model.id === "gpt-4o")).toMatchObject({ name: "GPT-4o", contextWindow: 128000, cost: { input: 2.5, output: 10 } })
    const unknown = await llmProviders.catalog({ token: org.member.token, query: { provider: "nope" } })
    expect(unknown.status).toBe(404)
    expect(refusal(unknown, 404)).toMatchObject({ error: "llm_catalog_provider_not_found" })
    // A cursor the catalog did not answer is refused, not read at some offset.
    const forged = await llmProviders.catalog({ token: org.member.token, query: { cursor: Buffer.from("other-revision:10").toString("base64url") } })
    expect(forged.status).toBe(400)
    expect(invalid(forged).details).toEqual([{ path: ["cursor"], message: expect.stringContaining("is not a cursor of this catalog") }])
  })
})

describe("LLM providers", () => {
  it("are registered from the catalog, read without the secret, and connected to by the real openai client", async () => {
    const org = await Http.staffed(server.url)
    const created = await createOpenAi(org.admin.token)
    expect(created.id).toMatch(/^llp_[0-9a-z]{26}$/)
    expect(created).toMatchObject({
      organizationId: org.organizationId,
      source: "catalog",
      catalogProviderId: "openai",
      apiStyle: "openai-compatible",
      baseUrl: openai.baseUrl,
      headerNames: ["OpenAI-Organization"],
      credential: { type: "api_key", expiresAt: null },
      canManage: true,
      lastUsedAt: null,
      createdByOrgMembershipId: org.admin.membership.id
    })
    // The catalog's figures, with the overrides on top.
    expect(created.models).toEqual([
      { id: "gpt-4o", name: "GPT-4o", contextWindow: 128000, maxOutputTokens: 16384, cost: { input: 2.5, output: 10, cacheRead: 1.25 } },
      expect.objectContaining({ id: "gpt-4o-mini", name: "Mini", contextWindow: 64000 })
    ])

    const path = { llmProviderId: created.id }
    const got = await seen(llmProviders.get({ token: org.owner.token, path }))
    expect(got.body).toEqual({ ok: true, item: { ...created, canManage: true } })

    // The creator keeps access through a manager grant: usable for them, not for the owner (managing is not using).
    const list = async (token: string, scope?: "manageable") => ok(await seen(llmProviders.list({ token, ...(scope === undefined ? {} : { query: { scope } }) })), 200).items
    expect((await list(org.admin.token)).map((item) => item.id)).toEqual([created.id])
    expect(await list(org.owner.token)).toEqual([])
    expect((await list(org.owner.token, "manageable")).map((item) => item.id)).toEqual([created.id])
    expect(await list(org.member.token, "manageable")).toEqual([])
    const ownerConnect = await connect(org.owner.token, created.id)
    expect(ownerConnect.status).toBe(403)
    expect(refusal(ownerConnect, 403)).toMatchObject({ reason: "insufficient_access" })

    const answer = await connect(org.admin.token, created.id)
    expect(answer.status).toBe(200)
    expect(answer.headers.get("cache-control")).toBe("no-store")
    const connected = ok(answer, 200)
    expect(connected).toEqual({
      llmProviderId: created.id,
      name: created.name,
      apiStyle: "openai-compatible",
      baseURL: openai.baseUrl,
      apiKey: openai.apiKey,
      accessToken: null,
      expiresAt: null,
      headers: { "OpenAI-Organization": HEADER_SECRET },
      models: created.models
    })
    const client = new OpenAI({ baseURL: connected.baseURL, apiKey: connected.apiKey ?? undefined, defaultHeaders: connected.headers, maxRetries: 0 })
    const completion = await client.chat.completions.create({ model: connected.models[0].id, messages: [{ role: "user", content: "hello" }] })
    expect(completion.choices[0]!.message.content).toBe("echo: hello")
    expect(openai.requests.at(-1)!.headers["openai-organization"]).toBe(HEADER_SECRET)
    const listed = await client.models.list()
    expect(listed.data.map((model) => model.id)).toContain("gpt-4o")

    const after = ok(await seen(llmProviders.get({ token: org.admin.token, path })), 200)
    expect(after.item.lastUsedAt).not.toBeNull()

    // Each read of the credential is in the audit log, refused ones too; the whole log (its answers are checked
    // for secrets below with every other answer) names the provider, never its key or headers.
    const reads = await auditEvents(org.owner.token, "llm_provider.credential.read", created.id)
    expect(reads.map((event) => [event.category, event.outcome, event.actor.id, event.reason])).toEqual([
      ["access", "succeeded", org.admin.user.id, null],
      ["access", "denied", org.owner.user.id, "insufficient_access"]
    ])
    expect(ok(await seen(audit.listEvents({ token: org.owner.token, query: { limit: "100" } })), 200).items.map((event) => event.action)).toEqual(
      expect.arrayContaining(["llm_provider.create", "llm_provider.credential.read"])
    )

    // A change of its name and headers is recorded field by field; the headers' values never are.
    const renamed = await seen(llmProviders.update({
      token: org.admin.token,
      path,
      payload: { name: "OpenAI (renamed)", headers: { "OpenAI-Organization": `${HEADER_SECRET}-rotated` } }
    }))
    expect(renamed.status).toBe(200)
    const [update] = await auditEvents(org.owner.token, "llm_provider.update", created.id)
    expect(update?.changes).toEqual({
      before: { name: created.name, headers: "[redacted]" },
      after: { name: "OpenAI (renamed)", headers: "[redacted]" },
      changedFields: ["name", "headers"]
    })
    expect(JSON.stringify(update)).not.toContain(HEADER_SECRET)
  })

  it("of the anthropic style work with the real @anthropic-ai/sdk, with an API key or an OAuth token", async () => {
    const org = await Http.staffed(server.url)
    const created = ok(await seen(llmProviders.create({
      token: org.owner.token,
      payload: {
        name: "Claude (custom)",
        apiStyle: "anthropic",
        baseUrl: `${anthropic.baseUrl}/`,
        models: [{ id: "claude-test-large", contextWindow: 200000, cost: { input: 3, output: 15 } }, { id: "claude-test-medium" }],
        apiKey: anthropic.apiKey
      }
    })), 201).item
    const path = { llmProviderId: created.id }
    expect(created).toMatchObject({ source: "custom", catalogProviderId: null, baseUrl: anthropic.baseUrl, headerNames: [] })
    expect(created.models[0]).toEqual({ id: "claude-test-large", name: "claude-test-large", contextWindow: 200000, maxOutputTokens: null, cost: { input: 3, output: 15, cacheRead: null } })

    const answer = await connection(org.owner.token, created.id)
    expect(answer).toMatchObject({ apiStyle: "anthropic", baseURL: anthropic.baseUrl, apiKey: anthropic.apiKey, accessToken: null })
    const client = new Anthropic({ baseURL: answer.baseURL, apiKey: answer.apiKey, defaultHeaders: answer.headers, maxRetries: 0 })
    const message = await client.messages.create({ model: answer.models[0].id, max_tokens: 16, messages: [{ role: "user", content: "hi" }] })
    expect(message.content[0]).toMatchObject({ type: "text", text: "echo: hi" })

    // The test action reads every page of Anthropic's model list (two a page here).
    const tested = await seen(llmProviders.test({ token: org.owner.token, path }))
    expect(tested.status).toBe(200)
    expect(tested.body).toEqual({ ok: true, present: ["claude-test-large", "claude-test-medium"], missing: [], upstreamModelCount: 3 })
    expect(anthropic.requests.filter((request) => request.path.startsWith("/v1/models")).at(-1)!.headers).toMatchObject({
      "x-api-key": anthropic.apiKey,
      "anthropic-version": "2023-06-01"
    })

    // OAuth tokens: the access token travels as a Bearer token.
    const replaced = await seen(llmProviders.setCredential({
      token: org.owner.token,
      path,
      payload: { type: "oauth", accessToken: anthropic.apiKey, refreshToken: "refresh-secret-0193", expiresAt: "2030-01-01T00:00:00.000Z" }
    }))
    expect(replaced.status).toBe(200)
    expect(ok(replaced, 200).item.credential).toMatchObject({ type: "oauth", expiresAt: "2030-01-01T00:00:00.000Z" })
    const oauth = await connection(org.owner.token, created.id)
    expect(oauth).toMatchObject({ apiKey: null, accessToken: anthropic.apiKey, expiresAt: "2030-01-01T00:00:00.000Z" })
    const bearer = new Anthropic({ baseURL: oauth.baseURL, apiKey: null, authToken: oauth.accessToken, maxRetries: 0 })
    const again = await bearer.messages.create({ model: "claude-test-medium", max_tokens: 16, messages: [{ role: "user", content: "again" }] })
    expect(again.content[0]).toMatchObject({ text: "echo: again" })
    expect(oauth).not.toHaveProperty("refreshToken")
  })

  it("are granted to members and teams; any grant lets a member use one, manager lets them change it", async () => {
    const org = await Http.staffed(server.url)
    const provider = await createOpenAi(org.owner.token)

    // Members do not register providers; without a grant one is a 404 to read and a 403 to connect.
    const refused = await seen(llmProviders.create({
      token: org.member.token,
      payload: { name: "Mine", apiStyle: "openai-compatible", baseUrl: openai.baseUrl, models: [{ id: "x" }] }
    }))
    expect(refused.status).toBe(403)
    expect(refusal(refused, 403)).toMatchObject({ reason: "insufficient_role" })
    const path = { llmProviderId: provider.id }
    expect((await seen(llmProviders.get({ token: org.member.token, path }))).status).toBe(404)
    expect((await connect(org.member.token, provider.id)).status).toBe(403)

    const teamId = ok(await teams.create({ token: org.owner.token, payload: { name: "Agents", memberIds: [org.member.membership.id] } }), 201).team.id
    const grant = ok(await seen(llmProviders.llmProviderGrant({ token: org.owner.token, path, payload: { teamId, role: "viewer" } })), 201).item
    expect(grant.id).toMatch(/^lpg_/)

    const usable = ok(await seen(llmProviders.list({ token: org.member.token })), 200)
    expect(usable.items.map((item) => [item.id, item.canManage])).toEqual([[provider.id, false]])
    expect((await connection(org.member.token, provider.id)).apiKey).toBe(openai.apiKey)
    const change = await seen(llmProviders.update({ token: org.member.token, path, payload: { name: "Renamed" } }))
    expect(change.status).toBe(403)
    expect(refusal(change, 403)).toMatchObject({ reason: "insufficient_access" })
    expect((await seen(llmProviders.test({ token: org.member.token, path }))).status).toBe(403)
    expect((await seen(llmProviders.delete({ token: org.member.token, path }))).status).toBe(403)

    // A manager grant lets the member change it, but not grant to the whole organization.
    await seen(llmProviders.llmProviderGrant({ token: org.owner.token, path, payload: { orgMembershipId: org.member.membership.id, role: "manager" } }))
    const renamed = await seen(llmProviders.update({ token: org.member.token, path, payload: { name: "Renamed", models: [{ id: "o3" }], headers: {} } }))
    expect(renamed.status).toBe(200)
    expect(ok(renamed, 200).item).toMatchObject({ name: "Renamed", headerNames: [], canManage: true, models: [expect.objectContaining({ id: "o3" })] })
    expect((await connection(org.member.token, provider.id)).headers).toEqual({})
    expect((await seen(llmProviders.llmProviderGrant({ token: org.member.token, path, payload: { orgWide: true, role: "viewer" } }))).status).toBe(403)
    expect(ok(await seen(llmProviders.list({ token: org.member.token, query: { scope: "manageable" } })), 200).items.map((item) => item.id))
      .toEqual([provider.id])

    // Revoking the team's grant leaves the direct one; revoking that too ends the member's access.
    const grants = ok(await seen(llmProviders.llmProviderListAccess({ token: org.owner.token, path })), 200)
    expect(grants.items).toHaveLength(3)
    for (const item of grants.items.filter((g) => g.orgMembershipId !== org.owner.membership.id)) {
      expect((await llmProviders.llmProviderRevoke({ token: org.owner.token, path: { ...path, grantId: item.id } })).status).toBe(204)
    }
    expect((await seen(llmProviders.get({ token: org.member.token, path }))).status).toBe(404)
    expect(ok(await seen(llmProviders.list({ token: org.member.token })), 200).items).toEqual([])

    // A hard delete: gone with its grants.
    expect((await llmProviders.delete({ token: org.owner.token, path })).status).toBe(204)
    const gone = await seen(llmProviders.get({ token: org.owner.token, path }))
    expect(gone.status).toBe(404)
    expect(gone.body).toEqual({ error: "llm_provider_not_found", message: "LLM provider not found." })
  })

  it("are tested against the provider's model list: all present, some missing, a refused key, a provider down", async () => {
    const org = await Http.staffed(server.url)
    const provider = await createOpenAi(org.owner.token, { models: [{ id: "gpt-4o" }, { id: "o3" }] })
    const path = { llmProviderId: provider.id }
    const test = () => seen(llmProviders.test({ token: org.owner.token, path }))
    const allPresent = await test()
    expect(allPresent.body).toEqual({ ok: true, present: ["gpt-4o", "o3"], missing: [], upstreamModelCount: 3 })
    expect(openai.requests.at(-1)).toMatchObject({ method: "GET", path: "/v1/models" })
    expect(openai.requests.at(-1)!.headers.authorization).toBe(`Bearer ${openai.apiKey}`)

    await seen(llmProviders.update({ token: org.owner.token, path, payload: { models: [{ id: "gpt-4o" }, { id: "gpt-3.5-turbo" }] } }))
    const some = await test()
    expect(some.body).toEqual({ ok: false, present: ["gpt-4o"], missing: ["gpt-3.5-turbo"], upstreamModelCount: 3 })

    // A wrong key: the provider's 401 quotes it; the answer does not.
    const wrongKey = "sk-wrong-key-that-must-not-leak-4411"
    await seen(llmProviders.setCredential({ token: org.owner.token, path, payload: { type: "api_key", apiKey: wrongKey } }))
    const refused = await test()
    expect(refused.status).toBe(502)
    expect(refused.body).toMatchObject({ error: "llm_provider_api_error", upstreamStatus: 401, retryable: false })
    expect(refusal(refused, 502)).toMatchObject({ message: expect.stringContaining("Incorrect API key provided: [redacted]") })
    expect(refused.text).not.toContain(wrongKey)
    expect(openai.requests.at(-1)!.headers.authorization).toBe(`Bearer ${wrongKey}`)

    openai.setMode({ _tag: "status", status: 503, body: { error: { message: "overloaded" } } })
    try {
      const failing = await test()
      expect(failing.status).toBe(502)
      expect(failing.body).toMatchObject({ upstreamStatus: 503, retryable: true })
      expect(refusal(failing, 502)).toMatchObject({ message: expect.stringContaining("overloaded") })
    } finally {
      openai.setMode({ _tag: "ok" })
    }

    const down = await FakeWorkerRuntime.downUrl()
    await seen(llmProviders.update({ token: org.owner.token, path, payload: { baseUrl: down } }))
    const unreachable = await test()
    expect(unreachable.status).toBe(502)
    expect(unreachable.body).toMatchObject({ error: "llm_provider_api_error", retryable: true })
    expect(unreachable.body).not.toHaveProperty("upstreamStatus")
    expect(refusal(unreachable, 502)).toMatchObject({ message: expect.stringContaining("could not be reached") })

    // Without a credential there is nothing to test or connect with.
    const bare = await createOpenAi(org.owner.token, {}, null)
    expect(bare.credential).toBeNull()
    expect((await seen(llmProviders.test({ token: org.owner.token, path: { llmProviderId: bare.id } }))).body).toMatchObject({ error: "llm_provider_no_credential" })
    expect((await connect(org.owner.token, bare.id)).status).toBe(409)
  })

  it("limit connect reads per member: 429 with Retry-After", async () => {
    const org = await Http.staffed(server.url)
    const provider = await createOpenAi(org.admin.token)
    for (let index = 0; index < CONNECTS_PER_MINUTE; index++) expect((await connect(org.admin.token, provider.id)).status).toBe(200)
    const limited = await connect(org.admin.token, provider.id)
    expect(limited.status).toBe(429)
    expect(refusal(limited, 429)).toMatchObject({ error: "rate_limited" })
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
    // Another member's reads are counted on their own.
    await llmProviders.llmProviderGrant({
      token: org.admin.token,
      path: { llmProviderId: provider.id },
      payload: { orgMembershipId: org.member.membership.id, role: "viewer" }
    })
    expect((await connect(org.member.token, provider.id)).status).toBe(200)
  })

  it("of another organization answer 404, whatever the operation", async () => {
    const mine = await Http.staffed(server.url)
    const theirs = await Http.staffed(server.url, "Globex")
    const provider = await createOpenAi(theirs.owner.token)
    const path = { llmProviderId: provider.id }
    const token = mine.owner.token
    const answers = [
      await llmProviders.get({ token, path }),
      await llmProviders.update({ token, path, payload: { name: "Mine now" } }),
      await llmProviders.setCredential({ token, path, payload: { type: "api_key", apiKey: "k-123456" } }),
      await connect(token, provider.id),
      await llmProviders.test({ token, path }),
      await llmProviders.llmProviderGrant({ token, path, payload: { orgWide: true, role: "viewer" } }),
      await llmProviders.llmProviderListAccess({ token, path }),
      await llmProviders.delete({ token, path })
    ]
    for (const answer of answers) {
      expect(answer.status, answer.text).toBe(404)
      expect(answer.body).toMatchObject({ error: "llm_provider_not_found" })
    }
    expect((await llmProviders.get({ token: theirs.owner.token, path })).status).toBe(200)
  })

  it("refuse bad input with a 400 naming each member, never a 500", async () => {
    const org = await Http.staffed(server.url)
    const bad = async (body: unknown, paths: ReadonlyArray<string>) => {
      const answer = await seen(post("/v1/llm-providers", { token: org.owner.token, body }))
      expect(answer.status, answer.text).toBe(400)
      const refused = invalid(answer)
      expect(refused.error).toBe("invalid_request")
      const found = refused.details.map((detail) => detail.path.join("."))
      for (const path of paths) expect(found, answer.text).toContain(path)
    }
    const base = { name: "P", apiStyle: "openai-compatible", baseUrl: openai.baseUrl, models: [{ id: "m" }] }
    await bad({ ...base, name: 42, models: "all" }, ["name", "models"])
    await bad({ ...base, name: "bad\u0000name" }, ["name"])
    await bad({ ...base, baseUrl: "ftp://example.com" }, ["baseUrl"])
    await bad({ ...base, baseUrl: "https://user:pass@example.com/v1" }, ["baseUrl"])
    await bad({ ...base, baseUrl: "https://example.com/v1?key=1" }, ["baseUrl"])
    await bad({ ...base, baseUrl: "not a url" }, ["baseUrl"])
    await bad({ ...base, apiStyle: "soap" }, ["apiStyle"])
    await bad({ ...base, models: [] }, ["models"])
    await bad({ ...base, models: [{ id: "m" }, { id: "m" }] }, ["models"])
    await bad({ ...base, models: [{ id: "m", contextWindow: -1 }] }, ["models.0.contextWindow"])
    await bad({ ...base, headers: { Authorization: "Bearer x" } }, ["headers.Authorization"])
    await bad({ ...base, headers: { "X-Big": "v".repeat(2000) } }, ["headers.X-Big"])
    await bad({ ...base, headers: { "X-Nul": "a\u0000b" } }, ["headers.X-Nul"])
    await bad({ ...base, headers: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`X-H${i}`, "v"])) }, ["headers"])
    await bad({ ...base, headers: { "bad name": "v" } }, ["headers.bad name"])
    await bad({ ...base, apiKey: "has space" }, ["apiKey"])
    await bad({ ...base, apiKey: 7 }, ["apiKey"])
    await bad({ ...base, extra: true }, ["extra"])
    await bad({ name: "P", models: [{ id: "m" }] }, ["apiStyle", "baseUrl"])
    await bad({ name: "P", catalogProviderId: "no-such-provider", models: [{ id: "m" }] }, ["catalogProviderId"])
    await bad({ name: "P", catalogProviderId: "openai", models: [{ id: "gpt-4o" }, { id: "not-an-openai-model" }] }, ["models.1.id"])

    const provider = await createOpenAi(org.owner.token)
    const noKey = await seen(put(`/v1/llm-providers/${provider.id}/credential`, { token: org.owner.token, body: { type: "api_key" } }))
    expect(noKey.status).toBe(400)
    expect(invalid(noKey).details.map((detail) => detail.path.join("."))).toContain("apiKey")
    const mixed = await seen(put(`/v1/llm-providers/${provider.id}/credential`, { token: org.owner.token, body: { type: "oauth", apiKey: "k-1234" } }))
    expect(mixed.status).toBe(400)
    const path = { llmProviderId: provider.id }
    const empty = await seen(llmProviders.update({ token: org.owner.token, path, payload: {} }))
    expect(empty.status).toBe(400)
    const wrongModel = await seen(llmProviders.update({ token: org.owner.token, path, payload: { models: [{ id: "nope" }] } }))
    expect(wrongModel.status).toBe(400)
    const clash = await seen(llmProviders.create({
      token: org.owner.token,
      payload: { name: provider.name.toUpperCase(), apiStyle: "openai-compatible", baseUrl: openai.baseUrl, models: [{ id: "m" }] }
    }))
    expect(clash.status).toBe(409)
    expect(refusal(clash, 409)).toMatchObject({ error: "llm_provider_exists" })
    expect((await llmProviders.get({ token: org.owner.token, path: { llmProviderId: "llp_nope" } })).status).toBe(400)
    expect((await llmProviders.get({ token: org.owner.token, path: { llmProviderId: "mem_00000000000000000000000000" } })).status).toBe(400)
    expect((await Http.request(server.url, "GET", "/v1/llm-providers?scope=everything", { token: org.owner.token })).status).toBe(400)
  })

  it("never show a secret in any answer or log line but connect's", () => {
    // Runs last: every answer the tests above received (connect's apart) and every line the server logged.
    const secrets = [openai.apiKey, anthropic.apiKey, HEADER_SECRET, "refresh-secret-0193", "sk-wrong-key-that-must-not-leak-4411"]
    const connectAnswers = new Set(answers.filter((text) => text.includes("\"baseURL\"")))
    const others = answers.filter((text) => !connectAnswers.has(text))
    expect(others.length).toBeGreaterThan(40)
    expect(lines.length).toBeGreaterThan(40)
    for (const secret of secrets) {
      for (const text of others) expect(text, "an answer").not.toContain(secret)
      for (const line of lines) expect(line, "a log line").not.toContain(secret)
    }
  })
})

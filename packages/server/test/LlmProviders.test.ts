/**
 * The llm area's storage and the provider test's model list, without HTTP: providers written and read back on a
 * fresh migrated database (the embedded one, or Postgres with DATABASE_URL) with the reader's rank and filter, names
 * unique per organization ignoring case, lists paged with cursors, the credential set on its own, `lastUsedAt`
 * moved forward only, and another organization's rows never found; `listModels` against testkit's FakeLlmProvider in
 * both API styles (headers, pages, refusals scrubbed of every secret); and the scrubbing of a provider's answer
 * (also in http/LlmCatalog.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it, layer } from "@effect/vitest"
import { LlmProviderId, type OrganizationId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as FakeLlmProvider from "../../../packages/testkit/src/FakeLlmProvider.js"
import { LlmProvidersRepository, type Reader } from "../src/llm/LlmProvidersRepository.js"
import { ANTHROPIC_VERSION, listModels, requestHeaders, scrub } from "../src/llm/ProviderModels.js"
import * as Outbound from "../src/platform/Outbound.js"
import * as Db from "./support/IdentityDatabase.js"
import * as TestDatabase from "./support/TestDatabase.js"

const later = (ms: number) => new Date(Db.at.getTime() + ms)
const providerId = () => Schema.decodeUnknownSync(LlmProviderId)(Db.newId("llp"))

const model = (id: string) => ({ id, name: id.toUpperCase(), contextWindow: 128_000, maxOutputTokens: null, cost: null })

const row = (organizationId: OrganizationId, name: string, createdAt = Db.at) => ({
  id: providerId(),
  organizationId,
  name,
  source: "custom" as const,
  catalogProviderId: null,
  apiStyle: "openai-compatible" as const,
  baseUrl: "https://llm.example/v1",
  headerNames: ["X-Org"],
  headersCiphertext: "sealed-headers",
  models: [model("gpt-x"), model("gpt-y")],
  credentialType: null,
  credentialCiphertext: null,
  credentialExpiresAt: null,
  credentialUpdatedAt: null,
  lastUsedAt: null,
  createdByMembershipId: null,
  createdAt,
  updatedAt: createdAt
})

layer(Layer.provideMerge(LlmProvidersRepository.layer, Db.layer), { timeout: 120_000, excludeTestServices: true })(
  `llm providers storage on ${TestDatabase.kind}`,
  (it) => {
    it.effect("insert, view with the reader's rank, lock, update, credential, touch, remove; names unique ignoring case; tenancy", () =>
      Effect.gen(function*() {
        const repository = yield* LlmProvidersRepository
        const sql = yield* SqlClient.SqlClient
        const reader: Reader = { rank: sql`2`, usable: sql`true`, filter: sql`true` }
        const organizationId = yield* Db.insertOrganization()
        const other = yield* Db.insertOrganization({ name: "Other" })
        const inserted = row(organizationId, "Azure")
        yield* repository.insert(inserted)
        const view = Option.getOrThrow(yield* repository.view(organizationId, inserted.id, reader))
        expect(view).toEqual({ ...inserted, accessRank: 2, usable: true })
        expect(yield* repository.view(other, inserted.id, reader)).toEqual(Option.none())
        expect(Option.getOrThrow(yield* repository.lock(organizationId, inserted.id))).toMatchObject({ id: inserted.id, models: inserted.models })
        expect(yield* repository.lock(other, inserted.id)).toEqual(Option.none())

        const taken = yield* Effect.flip(repository.insert({ ...row(organizationId, "AZURE") }))
        expect(taken).toMatchObject({ error: "llm_provider_exists", message: "The organization already has an LLM provider named \"AZURE\"." })
        // Another organization may use the name.
        yield* repository.insert(row(other, "Azure"))

        yield* repository.update(organizationId, inserted.id, { name: "Azure EU", headerNames: [], headersCiphertext: null, models: [model("only")] }, later(1))
        expect(Option.getOrThrow(yield* repository.view(organizationId, inserted.id, reader))).toMatchObject({
          name: "Azure EU",
          baseUrl: "https://llm.example/v1",
          headerNames: [],
          headersCiphertext: null,
          models: [model("only")],
          updatedAt: later(1)
        })
        const second = row(organizationId, "Second")
        yield* repository.insert(second)
        const renamed = yield* Effect.flip(repository.update(organizationId, second.id, { name: "azure eu" }, later(1)))
        expect(renamed).toMatchObject({ error: "llm_provider_exists", message: "The organization already has an LLM provider named \"azure eu\"." })
        // Another organization's row is not changed.
        yield* repository.update(other, inserted.id, { name: "Hijacked" }, later(2))
        expect(Option.getOrThrow(yield* repository.view(organizationId, inserted.id, reader)).name).toBe("Azure EU")

        yield* repository.setCredential(organizationId, inserted.id, { credentialType: "oauth", credentialCiphertext: "sealed", credentialExpiresAt: later(10) }, later(3))
        expect(Option.getOrThrow(yield* repository.view(organizationId, inserted.id, reader))).toMatchObject({
          credentialType: "oauth",
          credentialCiphertext: "sealed",
          credentialExpiresAt: later(10),
          credentialUpdatedAt: later(3),
          updatedAt: later(3)
        })
        yield* repository.touch(organizationId, inserted.id, later(5))
        yield* repository.touch(organizationId, inserted.id, later(4))
        expect(Option.getOrThrow(yield* repository.view(organizationId, inserted.id, reader)).lastUsedAt).toEqual(later(5))

        expect(yield* repository.remove(other, inserted.id)).toBe(false)
        expect(yield* repository.remove(organizationId, inserted.id)).toBe(true)
        expect(yield* repository.remove(organizationId, inserted.id)).toBe(false)
        expect(yield* repository.view(organizationId, inserted.id, reader)).toEqual(Option.none())
      }))

    it.effect("lists oldest first, as the reader's filter lets through, paged with cursors bound to the scope", () =>
      Effect.gen(function*() {
        const repository = yield* LlmProvidersRepository
        const sql = yield* SqlClient.SqlClient
        const organizationId = yield* Db.insertOrganization()
        const other = yield* Db.insertOrganization({ name: "Other" })
        for (const [index, name] of ["One", "Two", "Three"].entries()) yield* repository.insert(row(organizationId, name, later(index)))
        yield* repository.insert(row(other, "Elsewhere"))
        const everything: Reader = { rank: sql`3`, usable: sql`false`, filter: sql`true` }
        const names = (page: { readonly items: ReadonlyArray<{ readonly name: string }> }) => page.items.map((item) => item.name)
        const all = yield* repository.list(organizationId, {}, everything)
        expect(names(all)).toEqual(["One", "Two", "Three"])
        expect(all.items.map((item) => [item.accessRank, item.usable])).toEqual([[3, false], [3, false], [3, false]])
        expect(names(yield* repository.list(organizationId, {}, { ...everything, filter: sql`p.name <> 'Two'` }))).toEqual(["One", "Three"])
        const first = yield* repository.list(organizationId, { limit: 2, scope: "usable" }, everything)
        expect(names(first)).toEqual(["One", "Two"])
        const cursor = first.nextCursor ?? "none"
        expect(names(yield* repository.list(organizationId, { limit: 2, scope: "usable", cursor }, everything))).toEqual(["Three"])
        expect((yield* Effect.flip(repository.list(organizationId, { limit: 2, scope: "manageable", cursor }, everything)))._tag).toBe("InvalidRequest")
      }))
  }
)

describe("listModels against a provider", () => {
  let openai: FakeLlmProvider.FakeLlmProvider
  let anthropic: FakeLlmProvider.FakeLlmProvider
  beforeAll(async () => {
    openai = await FakeLlmProvider.start({ style: "openai" })
    anthropic = await FakeLlmProvider.start({ style: "anthropic", pageSize: 2 })
  })
  afterAll(async () => {
    await openai?.close()
    await anthropic?.close()
  })

  /** `f` with the outbound guard in private mode (the fakes listen on loopback). */
  const run = <A, E>(f: (service: Outbound.OutboundService) => Effect.Effect<A, E>) =>
    Effect.gen(function*() {
      return yield* f(yield* Outbound.Outbound)
    }).pipe(Effect.provide(Outbound.layer({ allowPrivate: true })))

  it.effect("reads an openai-compatible list with a Bearer token and the extra headers", () =>
    run((service) =>
      Effect.gen(function*() {
        const ids = yield* listModels(service, {
          apiStyle: "openai-compatible",
          baseUrl: openai.baseUrl,
          credential: { type: "api_key", secret: openai.apiKey },
          headers: { "x-org": "org-1" }
        })
        expect(ids).toEqual(openai.models)
        const request = openai.requests.at(-1)
        expect(request?.headers["authorization"]).toBe(`Bearer ${openai.apiKey}`)
        expect(request?.headers["x-org"]).toBe("org-1")
      })))

  it.effect("follows an anthropic list's pages with x-api-key and anthropic-version", () =>
    run((service) =>
      Effect.gen(function*() {
        const ids = yield* listModels(service, { apiStyle: "anthropic", baseUrl: anthropic.baseUrl, credential: { type: "api_key", secret: anthropic.apiKey }, headers: {} })
        expect(ids).toEqual(anthropic.models)
        const requests = anthropic.requests.filter((request) => request.path.startsWith("/v1/models"))
        expect(requests.length).toBe(2)
        expect(requests.at(-1)?.headers["x-api-key"]).toBe(anthropic.apiKey)
        expect(requests.at(-1)?.headers["anthropic-version"]).toBe(ANTHROPIC_VERSION)
        expect(requestHeaders({ apiStyle: "anthropic", baseUrl: "", credential: { type: "oauth", secret: "t" }, headers: {} })).toEqual({
          accept: "application/json",
          authorization: "Bearer t",
          "anthropic-version": ANTHROPIC_VERSION
        })
      })))

  it.effect("a refusal is a 502 quoting the answer with every secret scrubbed; a list that is not one, too", () =>
    run((service) =>
      Effect.gen(function*() {
        const target = { apiStyle: "openai-compatible" as const, baseUrl: openai.baseUrl, credential: { type: "api_key" as const, secret: "sk-wrong-key" }, headers: { "x-org": "hdr-secret" } }
        openai.setMode({ _tag: "status", status: 401, body: { error: "Incorrect API key provided: sk-wrong-key (org hdr-secret)" } })
        expect(yield* Effect.flip(listModels(service, target))).toMatchObject({
          message: "Listing the provider's models failed: 401 {\"error\":\"Incorrect API key provided: [redacted] (org [redacted])\"}",
          retryable: false,
          upstreamStatus: 401
        })
        openai.setMode({ _tag: "status", status: 503, body: {} })
        expect(yield* Effect.flip(listModels(service, target))).toMatchObject({ retryable: true, upstreamStatus: 503 })
        openai.setMode({ _tag: "text", text: "not json" })
        expect(yield* Effect.flip(listModels(service, target))).toMatchObject({
          message: "Listing the provider's models failed: the provider answered 200 with something that is not a model list ({\"data\": [{\"id\": ...}]}).",
          retryable: false
        })
        openai.setMode({ _tag: "ok" })
      })))
})

describe("scrubbing a provider's answer", () => {
  it("replaces every secret, wherever it appears", () => {
    expect(scrub("Incorrect API key provided: sk-abc123. Key sk-abc123 is revoked; org hdr-9", ["sk-abc123", "hdr-9"]))
      .toBe("Incorrect API key provided: [redacted]. Key [redacted] is revoked; org [redacted]")
  })
})

/**
 * llm/LlmProviders as a service on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL),
 * without HTTP, against testkit's FakeLlmProvider on loopback: providers registered (custom, or from the shipped
 * catalog with its models' figures), read without their secret, connected to (rate-limited per member), tested
 * against the provider's model list, granted, managed only with manager access, and another organization's ids
 * answering 404; the messages are held word for word, as the API answers them.
 */
import { afterAll, beforeAll, expect, layer } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeCrypto from "node:crypto"
import * as FakeLlmProvider from "../../../packages/testkit/src/FakeLlmProvider.js"
import * as LlmConfig from "../src/llm/LlmConfig.js"
import { LlmProviders } from "../src/llm/LlmProviders.js"
import * as Config from "../src/platform/Config.js"
import * as Crypto from "../src/platform/Crypto.js"
import { IdGenerator } from "../src/platform/Ids.js"
import * as Outbound from "../src/platform/Outbound.js"
import * as Db from "./support/IdentityDatabase.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const KEYS = `test:${NodeCrypto.randomBytes(32).toString("base64")}`

let fake: FakeLlmProvider.FakeLlmProvider
beforeAll(async () => {
  fake = await FakeLlmProvider.start({ style: "openai", models: ["gpt-a", "gpt-b"] })
})
afterAll(async () => {
  await fake?.close()
})

const TestLayer = Layer.provideMerge(
  LlmProviders.layer,
  Layer.mergeAll(
    Db.layer,
    IdGenerator.layer,
    Layer.effect(Crypto.Crypto, Crypto.make({ passwordCost: 10, keys: Crypto.parseKeys(KEYS) })),
    Outbound.layer({ allowPrivate: true }),
    LlmConfig.layer({ llmConnectPerMinute: 3 }),
    Config.layer({ outboundAllowPrivate: true })
  )
).pipe(Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))))

const staffed = Effect.fn("LlmProviders.staffed")(function*() {
  const organization = Members.organization("team")
  const owner = Members.member(organization, "owner")
  const member = Members.member(organization, "member")
  yield* Members.seed(owner, member)
  return { organization, owner, member }
})

/** The error an effect fails with, as its plain members (Effect 4 keeps `message` off the object's own). */
const failure = <A, E extends object, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => ({ ...error, ..."message" in error ? { message: error.message } : {} }))

layer(TestLayer, { timeout: 120_000, excludeTestServices: true })(`LLM providers on ${TestDatabase.kind}`, (it) => {
  it.effect("registered, read without the secret, connected to, tested; grants let a member use one, not manage it", () =>
    Effect.gen(function*() {
      const providers = yield* LlmProviders
      const { member, organization, owner } = yield* staffed()
      const created = yield* providers.create(owner, {
        name: "Local",
        apiStyle: "openai-compatible",
        baseUrl: fake.baseUrl,
        apiKey: fake.apiKey,
        headers: { "x-org": "org-secret-1" },
        models: [{ id: "gpt-a" }, { id: "gpt-c", name: "C" }]
      })
      expect(created.item).toMatchObject({
        organizationId: organization.id,
        name: "Local",
        source: "custom",
        catalogProviderId: null,
        headerNames: ["x-org"],
        models: [{ id: "gpt-a", name: "gpt-a", contextWindow: null }, { id: "gpt-c", name: "C" }],
        credential: { type: "api_key", expiresAt: null },
        canManage: true
      })
      expect(JSON.stringify(created)).not.toContain(fake.apiKey)
      expect(JSON.stringify(created)).not.toContain("org-secret-1")
      const id = created.item.id

      const connection = yield* providers.connect(owner, id)
      expect(connection).toMatchObject({ llmProviderId: id, baseURL: fake.baseUrl, apiKey: fake.apiKey, accessToken: null, headers: { "x-org": "org-secret-1" } })
      expect((yield* providers.get(owner, id)).item.lastUsedAt).not.toBeNull()
      expect(yield* providers.test(owner, id)).toEqual({ ok: false, present: ["gpt-a"], missing: ["gpt-c"], upstreamModelCount: 2 })

      // No grant: a member is answered as if it did not exist; a grant lets them use it, not manage it.
      expect(yield* failure(providers.get(member, id))).toMatchObject({ _tag: "NotFound" })
      expect((yield* providers.list(member, {})).items).toEqual([])
      yield* providers.grant(owner, id, { orgMembershipId: member.membership.id, role: "viewer" })
      expect((yield* providers.get(member, id)).item.canManage).toBe(false)
      expect((yield* providers.connect(member, id)).apiKey).toBe(fake.apiKey)
      expect(yield* failure(providers.update(member, id, { name: "Mine" }))).toMatchObject({ _tag: "Forbidden", reason: "insufficient_access", message: "Missing manager access for LLM provider." })
      expect((yield* providers.list(member, { scope: "manageable" })).items).toEqual([])
      // Three connect reads a minute per member.
      yield* providers.connect(member, id)
      yield* providers.connect(member, id)
      expect(yield* failure(providers.connect(member, id))).toMatchObject({ _tag: "RateLimited" })

      const updated = yield* providers.update(owner, id, { name: "Local EU", models: [{ id: "gpt-b" }] })
      expect(updated.item).toMatchObject({ name: "Local EU", models: [{ id: "gpt-b" }] })
      expect(yield* providers.test(owner, id)).toEqual({ ok: true, present: ["gpt-b"], missing: [], upstreamModelCount: 2 })
      const rotated = yield* providers.setCredential(owner, id, { type: "oauth", accessToken: "oauth-token" })
      expect(rotated.item.credential).toMatchObject({ type: "oauth" })
      expect((yield* providers.connect(owner, id))).toMatchObject({ apiKey: null, accessToken: "oauth-token" })

      // Another organization's owner finds nothing.
      const stranger = Members.member(Members.organization("team"), "owner")
      yield* Members.seed(stranger)
      expect(yield* failure(providers.get(stranger, id))).toMatchObject({ _tag: "NotFound" })
      expect(yield* failure(providers.remove(stranger, id))).toMatchObject({ _tag: "NotFound" })

      yield* providers.remove(owner, id)
      expect(yield* failure(providers.get(owner, id))).toMatchObject({ _tag: "NotFound" })
    }))

  it.effect("from the catalog: its style, URL and figures; a model it lacks, no credential, a name taken, each refused", () =>
    Effect.gen(function*() {
      const providers = yield* LlmProviders
      const { owner } = yield* staffed()
      const catalog = yield* providers.readCatalog(owner, { provider: "openai" })
      const entry = catalog.providers[0]
      const known = catalog.models[0]
      if (entry === undefined || known === undefined) throw new Error("the shipped catalog has openai")
      const created = yield* providers.create(owner, { name: "OpenAI", catalogProviderId: "openai", models: [{ id: known.id }] })
      expect(created.item).toMatchObject({ source: "catalog", catalogProviderId: "openai", apiStyle: entry.apiStyle, baseUrl: entry.baseUrl, credential: null })
      expect(created.item.models[0]).toEqual({ id: known.id, name: known.name, contextWindow: known.contextWindow, maxOutputTokens: known.maxOutputTokens, cost: known.cost })
      expect(yield* failure(providers.connect(owner, created.item.id))).toMatchObject({
        error: "llm_provider_no_credential",
        message: "The LLM provider has no credential yet: set one first (PUT .../credential)."
      })
      expect(yield* failure(providers.create(owner, { name: "Two", catalogProviderId: "openai", models: [{ id: "no-such-model" }] }))).toMatchObject({
        details: [{ path: ["models", 0, "id"], message: "is not a model of the catalog provider \"openai\" (GET /v1/llm-provider-catalog?provider=openai lists them)" }]
      })
      expect(yield* failure(providers.create(owner, { name: "openai", catalogProviderId: "openai", models: [] }))).toMatchObject({
        error: "llm_provider_exists",
        message: "The organization already has an LLM provider named \"openai\"."
      })
      expect(yield* failure(providers.readCatalog(owner, { provider: "nope" }))).toMatchObject({
        error: "llm_catalog_provider_not_found",
        message: "The LLM catalog has no provider \"nope\"."
      })
      expect(yield* failure(providers.create(owner, { name: "Custom", models: [] }))).toMatchObject({
        details: [
          { path: ["apiStyle"], message: "is required for a custom provider (without catalogProviderId)" },
          { path: ["baseUrl"], message: "is required for a custom provider (without catalogProviderId)" }
        ]
      })
    }))
})

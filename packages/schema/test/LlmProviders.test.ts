/**
 * LlmProviders.ts: the document's examples of providers and models decode and encode back unchanged, the requests
 * and queries taken and refused, and what a refusal says.
 */
import { describe, expect, it } from "@effect/vitest"
import * as LlmProviders from "../src/LlmProviders.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { bodyRefusal, decode, refuses, refusesBody, roundTrips, takes, takesBody } from "./support/Decoding.js"

const models = [{ id: "gpt-4o" }]

describe("LlmProviders", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(LlmProviders.LlmCatalogResponse, examplesOfComponent("LlmCatalogResponse"))
    roundTrips(LlmProviders.LlmProvider, examplesOfComponent("LlmProvider"))
    roundTrips(LlmProviders.LlmConnection, examplesOfComponent("LlmConnection"))
    roundTrips(LlmProviders.LlmProviderTestResult, examplesOfComponent("LlmProviderTestResult"))
    roundTrips(LlmProviders.LlmCredentialInput, [
      ...examplesOfComponent("LlmApiKeyCredential"),
      ...examplesOfComponent("LlmOAuthCredential")
    ])
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(LlmProviders.LlmCatalogProvider, [
      { id: "openai", name: "OpenAI", apiStyle: "openai-compatible", baseUrl: "https://api.openai.com/v1", docUrl: null, models: [] }
    ])
    refuses(LlmProviders.LlmCatalogProvider, [
      { id: "OpenAI", name: "OpenAI", apiStyle: "openai-compatible", baseUrl: "https://api.openai.com/v1", docUrl: null, models: [] },
      { id: "openai", name: "OpenAI", apiStyle: "openai-compatible", baseUrl: "ftp://api.openai.com", docUrl: null, models: [] },
      { id: "openai", name: "OpenAI", apiStyle: "openai", baseUrl: "https://api.openai.com/v1", docUrl: null, models: [] }
    ])
    takes(LlmProviders.LlmBaseUrl, [
      "https://api.openai.com/v1",
      " https://api.openai.com/v1/ ",
      "https://api.anthropic.com///",
      "http://127.0.0.1:11434/v1"
    ])
    refuses(LlmProviders.LlmBaseUrl, [
      "https://api.openai.com/v1?x=1",
      "/v1",
      "ftp://api.openai.com",
      ""
    ])
    takes(LlmProviders.LlmHeaders, [
      {},
      { "OpenAI-Organization": "org-example", "HTTP-Referer": "https://acme.example" }
    ])
    refuses(LlmProviders.LlmHeaders, [
      { Authorization: "Bearer x" },
      { "x-api-key": "k" },
      { "bad name": "x" },
      { "X-A": "x", "x-a": "y" },
      { "X-A": "" },
      { "X-A": "tab\there" },
      { "X-A": "x".repeat(1025) },
      Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`X-H${i}`, "v"]))
    ])
    takesBody(LlmProviders.CreateLlmProviderRequest, [
      { name: "OpenAI", catalogProviderId: "openai", models, apiKey: "sk-proj-example" },
      { name: " Local ", apiStyle: "openai-compatible", baseUrl: "http://127.0.0.1:11434/v1/", headers: { "X-Team": "eng" }, models: [{ id: "llama3", name: "Llama 3", contextWindow: 8192, maxOutputTokens: 2048, cost: { input: 0, output: null } }] }
    ])
    refusesBody(LlmProviders.CreateLlmProviderRequest, [
      { name: "OpenAI", models: [] },
      { name: "OpenAI", models: [{ id: "gpt-4o" }, { id: "gpt-4o" }] },
      { name: "OpenAI", models: Array.from({ length: 501 }, (_, i) => ({ id: `m${i}` })) },
      { name: "OpenAI", models: [{ id: "gpt-4o", contextWindow: 0 }] },
      { name: "OpenAI", models: [{ id: "gpt-4o", contextWindow: 1.5 }] },
      { name: "OpenAI", models: [{ id: "gpt-4o", maxOutputTokens: 100_000_001 }] },
      { name: "OpenAI", models: [{ id: "gpt-4o", cost: { input: -1, output: 1 } }] },
      { name: "OpenAI", models: [{ id: "gpt-4o", cost: { input: 1 } }] },
      { name: "OpenAI", models: [{ id: "gpt-4o", cost: { input: 1, output: 1, cacheWrite: 1 } }] },
      { name: "OpenAI", models, apiKey: "sk proj" },
      { name: "OpenAI", models, apiKey: "" },
      { name: "OpenAI", models, baseUrl: "https://api.openai.com/v1?x=1" },
      { name: "OpenAI", models, catalogProviderId: "x".repeat(65) },
      { name: "OpenAI", models, region: "eu" },
      { models }
    ])
    takesBody(LlmProviders.UpdateLlmProviderRequest, [
      { name: "OpenAI" },
      { headers: {} },
      { models: [{ id: "gpt-4o", contextWindow: 64000 }] },
      { baseUrl: "https://api.openai.com/v1/" }
    ])
    refusesBody(LlmProviders.UpdateLlmProviderRequest, [
      {},
      { models: [] },
      { headers: { Host: "x" } },
      { apiStyle: "anthropic" }
    ])
    takesBody(LlmProviders.SetLlmCredentialRequest, [
      { type: "api_key", apiKey: "sk-proj-example" },
      { type: "api_key", apiKey: " sk-proj-example " },
      { type: "oauth", accessToken: "at", refreshToken: "rt", expiresAt: "2026-11-02T19:30:00Z" },
      { type: "oauth", accessToken: "at", expiresAt: null }
    ])
    refusesBody(LlmProviders.SetLlmCredentialRequest, [
      { type: "api_key" },
      { type: "api_key", apiKey: "sk proj" },
      { type: "api_key", apiKey: "é" },
      { type: "oauth", accessToken: "at", expiresAt: "tomorrow" },
      { type: "oauth", apiKey: "k" },
      { type: "api_key", apiKey: "k", accessToken: "at" },
      { type: "basic", apiKey: "k" }
    ])
    takes(LlmProviders.LlmProviderListQuery, [{}, { scope: "manageable", limit: "5" }])
    refuses(LlmProviders.LlmProviderListQuery, [{ scope: "mine" }])
    takes(LlmProviders.LlmCatalogQuery, [{}, { provider: "openai" }])
    refuses(LlmProviders.LlmCatalogQuery, [{ provider: "x".repeat(65) }])
  })

  it("reads a base URL without its trailing slashes, and says what is wrong with a refused request", () => {
    expect(decode(LlmProviders.LlmBaseUrl, " https://api.anthropic.com/// ")).toEqual({ ok: true, value: "https://api.anthropic.com" })
    const refusal = (input: unknown) => bodyRefusal(LlmProviders.CreateLlmProviderRequest, input)
    expect(refusal({ name: "OpenAI", models: [] })).toContain("must name at least one model")
    expect(refusal({ name: "OpenAI", models: [{ id: "a" }, { id: "a" }] })).toContain("must name each model once")
    expect(refusal({ name: "OpenAI", models, apiKey: "sk proj" })).toContain("must be printable ASCII without spaces")
    expect(refusal({ name: "OpenAI", models, headers: { Cookie: "x" } })).toMatch(/is set by orgplane or the SDK[\s\S]*Cookie/)
    expect(refusal({ name: "OpenAI", models, headers: { "X-A": "\u0001" } })).toContain("must be 1 to 1024 printable ASCII characters")
  })
})

import { describe, expect, it } from "@effect/vitest"
import type { Schema } from "effect"
import * as LlmProviders from "../src/LlmProviders.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { decode4, examplesOfComponent, type Json, roundTrips, sameOn, sameSchemas, splitKey } from "./differential.js"
import { refinedIntAsDocumented } from "./catalog.js"
import { addToMember, bodyRefusal, replaceMember, sameOnBody } from "./mcpDifferential.js"
import { type Effect3, effect3 } from "./effect3.js"

const LlmProviders3 = effect3("LlmProviders")
const OpenApiExamples3 = effect3("OpenApiExamples")

// A real difference, which the document writes as Effect 3 did (OpenApiComponents' `memberDescriptions`): Effect 3
// described a checked value by its last check it could state ("a number between 0 and 1000000", "an array of at most
// 500 item(s)"), the schema's own description lost where it was on a check the document cannot state
// (LlmModelInputs', each model once: so in Effect 4 too); Effect 4 generates none. Put back here to compare the rest.
const modelInputs = (schema: Json, path: ReadonlyArray<string>) =>
  addToMember(schema, path, { description: "an array of at most 500 item(s)" })

// A real difference, for the OpenAPI normalisation step: Effect 3 wrote a checked integer as a reference to `Int`
// with the bounds and a generated description beside it; Effect 4 writes Common's `Int` out with its bounds, which
// the document writes as Effect 3 did (`refinedIntAsDocumented`). The price's generated description as above.
const tokens = { type: "integer", minimum: 1, maximum: 100_000_000, description: "an integer" }
const tokensAsDocumented = { $ref: "ref:Int", description: "a number between 1 and 100000000", minimum: 1, maximum: 100_000_000 }
const price = (schema: Json, name: string) => addToMember(schema, ["cost", name, 0], { description: "a number between 0 and 1000000" })
const modelInput = (schema: Json) => {
  const context = "Tokens of context, instead of the catalog's."
  const contextWindow = { ...tokens, allOf: [{ description: context }] }
  const contextWindowAsDocumented = { description: context, allOf: [tokensAsDocumented] }
  expect(refinedIntAsDocumented(contextWindow)).toEqual(contextWindowAsDocumented)
  expect(refinedIntAsDocumented(tokens)).toEqual(tokensAsDocumented)
  const bounded = replaceMember(
    replaceMember(schema, ["contextWindow"], contextWindow, contextWindowAsDocumented),
    ["maxOutputTokens"], tokens, tokensAsDocumented
  )
  return price(price(price(bounded, "input"), "output"), "cacheRead")
}

const compare = (name: string, port: Schema.Top, original: Effect3) => {
  expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
}

const models = [{ id: "gpt-4o" }]

describe("LlmProviders on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(LlmProviders, LlmProviders3, compare, {
      // As above: Effect 3's generated description of a pattern.
      LlmHeaderValue: (schema) => addToMember(schema, [], { description: "a string matching the pattern ^[\\x20-\\x7E]{1,1024}$" }),
      // A real difference, for the OpenAPI normalisation step: Effect 3's override stated LlmHeaders as
      // `{ type: object, additionalProperties: true, maxProperties: 16 }` and lost its description; Effect 4 states
      // its values and description. Mapped back here to compare the rest.
      LlmHeaders: (schema) => {
        expect(schema).toMatchObject({ additionalProperties: { type: "string", pattern: "^[\\x20-\\x7E]{1,1024}$" }, description: expect.stringContaining("Extra headers") })
        const { rest } = splitKey(schema, "description")
        return { ...(typeof rest === "object" ? rest : {}), additionalProperties: true }
      },
      LlmModelInput: modelInput,
      LlmModelInputs: (schema) => modelInputs(schema, []),
      CreateLlmProviderRequest: (schema) => modelInputs(schema, ["models"])
    })
    expect(names).toHaveLength(26)
    // The credential union's members, each a component of the document.
    const [apiKey, oauth] = LlmProviders.LlmCredentialInput.members
    const [apiKey3, oauth3] = LlmProviders3.LlmCredentialInput.members
    expect(sameSchemas({ LlmApiKeyCredential: apiKey, LlmOAuthCredential: oauth }, { LlmApiKeyCredential: apiKey3, LlmOAuthCredential: oauth3 }, compare))
      .toHaveLength(2)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(LlmProviders.LlmCatalogResponse, LlmProviders3.LlmCatalogResponse, examplesOfComponent("LlmCatalogResponse"))
    roundTrips(LlmProviders.LlmProvider, LlmProviders3.LlmProvider, examplesOfComponent("LlmProvider"))
    roundTrips(LlmProviders.LlmConnection, LlmProviders3.LlmConnection, examplesOfComponent("LlmConnection"))
    roundTrips(LlmProviders.LlmProviderTestResult, LlmProviders3.LlmProviderTestResult, examplesOfComponent("LlmProviderTestResult"))
    roundTrips(LlmProviders.LlmCredentialInput, LlmProviders3.LlmCredentialInput, [
      ...examplesOfComponent("LlmApiKeyCredential"),
      ...examplesOfComponent("LlmOAuthCredential")
    ])
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(LlmProviders.LlmCatalogProvider, LlmProviders3.LlmCatalogProvider, [
      { id: "openai", name: "OpenAI", apiStyle: "openai-compatible", baseUrl: "https://api.openai.com/v1", docUrl: null, models: [] },
      { id: "OpenAI", name: "OpenAI", apiStyle: "openai-compatible", baseUrl: "https://api.openai.com/v1", docUrl: null, models: [] },
      { id: "openai", name: "OpenAI", apiStyle: "openai-compatible", baseUrl: "ftp://api.openai.com", docUrl: null, models: [] },
      { id: "openai", name: "OpenAI", apiStyle: "openai", baseUrl: "https://api.openai.com/v1", docUrl: null, models: [] }
    ])
    sameOn(LlmProviders.LlmBaseUrl, LlmProviders3.LlmBaseUrl, [
      "https://api.openai.com/v1", " https://api.openai.com/v1/ ", "https://api.anthropic.com///", "http://127.0.0.1:11434/v1",
      "https://api.openai.com/v1?x=1", "/v1", "ftp://api.openai.com", ""
    ])
    sameOn(LlmProviders.LlmHeaders, LlmProviders3.LlmHeaders, [
      {}, { "OpenAI-Organization": "org-example", "HTTP-Referer": "https://acme.example" },
      { Authorization: "Bearer x" }, { "x-api-key": "k" }, { "bad name": "x" }, { "X-A": "x", "x-a": "y" }, { "X-A": "" },
      { "X-A": "tab\there" }, { "X-A": "x".repeat(1025) }, Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`X-H${i}`, "v"]))
    ])
    sameOnBody(LlmProviders.CreateLlmProviderRequest, LlmProviders3.CreateLlmProviderRequest, [
      { name: "OpenAI", catalogProviderId: "openai", models, apiKey: "sk-proj-example" },
      { name: " Local ", apiStyle: "openai-compatible", baseUrl: "http://127.0.0.1:11434/v1/", headers: { "X-Team": "eng" }, models: [{ id: "llama3", name: "Llama 3", contextWindow: 8192, maxOutputTokens: 2048, cost: { input: 0, output: null } }] },
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
    sameOnBody(LlmProviders.UpdateLlmProviderRequest, LlmProviders3.UpdateLlmProviderRequest, [
      { name: "OpenAI" }, { headers: {} }, { models: [{ id: "gpt-4o", contextWindow: 64000 }] }, { baseUrl: "https://api.openai.com/v1/" },
      {}, { models: [] }, { headers: { Host: "x" } }, { apiStyle: "anthropic" }
    ])
    sameOnBody(LlmProviders.SetLlmCredentialRequest, LlmProviders3.SetLlmCredentialRequest, [
      { type: "api_key", apiKey: "sk-proj-example" }, { type: "api_key", apiKey: " sk-proj-example " },
      { type: "oauth", accessToken: "at", refreshToken: "rt", expiresAt: "2026-11-02T19:30:00Z" }, { type: "oauth", accessToken: "at", expiresAt: null },
      { type: "api_key" }, { type: "api_key", apiKey: "sk proj" }, { type: "api_key", apiKey: "é" }, { type: "oauth", accessToken: "at", expiresAt: "tomorrow" },
      { type: "oauth", apiKey: "k" }, { type: "api_key", apiKey: "k", accessToken: "at" }, { type: "basic", apiKey: "k" }
    ])
    sameOn(LlmProviders.LlmProviderListQuery, LlmProviders3.LlmProviderListQuery, [{}, { scope: "manageable", limit: "5" }, { scope: "mine" }])
    sameOn(LlmProviders.LlmCatalogQuery, LlmProviders3.LlmCatalogQuery, [{}, { provider: "openai" }, { provider: "x".repeat(65) }])
  })

  it("reads and says what the Effect 3 schemas did", () => {
    expect(decode4(LlmProviders.LlmBaseUrl, " https://api.anthropic.com/// ")).toEqual({ ok: true, value: "https://api.anthropic.com" })
    const refusal = (input: unknown) => bodyRefusal(LlmProviders.CreateLlmProviderRequest, input)
    expect(refusal({ name: "OpenAI", models: [] })).toContain("must name at least one model")
    expect(refusal({ name: "OpenAI", models: [{ id: "a" }, { id: "a" }] })).toContain("must name each model once")
    expect(refusal({ name: "OpenAI", models, apiKey: "sk proj" })).toContain("must be printable ASCII without spaces")
    expect(refusal({ name: "OpenAI", models, headers: { Cookie: "x" } })).toMatch(/is set by orgplane or the SDK[\s\S]*Cookie/)
    expect(refusal({ name: "OpenAI", models, headers: { "X-A": "\u0001" } })).toContain("must be 1 to 1024 printable ASCII characters")
  })
})

/**
 * The LLM provider catalog's configuration: the shipped models.dev snapshot decodes, an operator's file replaces
 * it, and a file that cannot be read or decoded stops start-up naming the file and the problem. Also the scrubbing
 * of secrets out of a provider's answer.
 */
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { parseCatalog, settings } from "../../src/llm/LlmConfig.js"
import { scrub } from "../../src/llm/ProviderModels.js"

const load = (env: Record<string, string>) =>
  Effect.runPromiseExit(settings().pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))))

const failure = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "succeeded")

const provider = {
  id: "acme-llm",
  name: "Acme LLM",
  apiStyle: "openai-compatible",
  baseUrl: "https://llm.acme.example/v1",
  docUrl: null,
  models: [{ id: "acme-1", name: "Acme 1", family: null, contextWindow: 8192, maxOutputTokens: null, cost: null, reasoning: false, toolCall: true }]
}

describe("the LLM catalog", () => {
  it("ships a snapshot of models.dev with the well-known providers and their figures", async () => {
    const exit = await load({})
    expect(Exit.isSuccess(exit), failure(exit)).toBe(true)
    if (!Exit.isSuccess(exit)) return
    const { catalog, connectPerMinute } = exit.value
    expect(connectPerMinute).toBe(60)
    expect(catalog.source).toBe("https://models.dev")
    expect(catalog.providers.length).toBeGreaterThanOrEqual(10)
    const anthropic = catalog.providers.find((entry) => entry.id === "anthropic")!
    expect(anthropic).toMatchObject({ apiStyle: "anthropic", baseUrl: "https://api.anthropic.com" })
    expect(anthropic.models.every((model) => model.contextWindow !== null)).toBe(true)
  })

  it("is replaced by the operator's file; a bad file stops start-up naming it and the problem", async () => {
    const folder = await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-llm-catalog-"))
    try {
      const good = Path.join(folder, "good.json")
      await Fs.writeFile(good, JSON.stringify({ source: "acme", revision: "1", providers: [provider] }))
      const replaced = await load({ ORGPLANE_LLM_CATALOG: good, ORGPLANE_LLM_CONNECT_PER_MINUTE: "7" })
      expect(Exit.isSuccess(replaced) && replaced.value.catalog.providers.map((entry) => entry.id)).toEqual(["acme-llm"])
      expect(Exit.isSuccess(replaced) && replaced.value.connectPerMinute).toBe(7)

      const missing = failure(await load({ ORGPLANE_LLM_CATALOG: Path.join(folder, "nope.json") }))
      expect(missing).toContain("ORGPLANE_LLM_CATALOG")
      expect(missing).toContain("cannot be read (ENOENT)")

      const bad = Path.join(folder, "bad.json")
      await Fs.writeFile(bad, JSON.stringify({ source: "acme", revision: "1", providers: [{ ...provider, apiStyle: "soap" }] }))
      const decoded = failure(await load({ ORGPLANE_LLM_CATALOG: bad }))
      expect(decoded).toContain(`${bad}: not an LLM provider catalog`)
      expect(decoded).toContain("apiStyle")

      expect(failure(await load({ ORGPLANE_LLM_CONNECT_PER_MINUTE: "0" }))).toContain("ORGPLANE_LLM_CONNECT_PER_MINUTE")
    } finally {
      await Fs.rm(folder, { recursive: true, force: true })
    }
  })

  it("refuses text that is not JSON and a provider named twice", () => {
    const notJson = parseCatalog("{not json")
    expect(Result.isFailure(notJson) && notJson.failure).toMatch(/^not JSON/)
    const twice = parseCatalog(JSON.stringify({ source: "a", revision: "1", providers: [provider, provider] }))
    expect(Result.isFailure(twice) && twice.failure).toBe('providers[1].id "acme-llm" appears twice')
  })
})

describe("scrubbing a provider's answer", () => {
  it("replaces every secret, wherever it appears", () => {
    expect(scrub("Incorrect API key provided: sk-abc123. Key sk-abc123 is revoked; org hdr-9", ["sk-abc123", "hdr-9"]))
      .toBe("Incorrect API key provided: [redacted]. Key [redacted] is revoked; org [redacted]")
  })
})

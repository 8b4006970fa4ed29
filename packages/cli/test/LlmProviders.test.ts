/**
 * `orgplane llm-providers`: the CLI in-process (see Harness.ts) against a real server (RealServer.ts) and a stand-in
 * provider.
 */
import { LlmCatalogResponse, LlmProviderAccessGrantPage, LlmProviderPage } from "@orgplane/schema"
import * as FakeLlmProvider from "../../../packages/testkit/src/FakeLlmProvider.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as RealServer from "./RealServer.js"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, wire } from "./Harness.js"

let server: RealServer.RealServer
let upstream: FakeLlmProvider.FakeLlmProvider

beforeAll(async () => {
  server = await RealServer.start({ ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true" })
  upstream = await FakeLlmProvider.start({ style: "openai", models: ["gpt-4o", "gpt-4o-mini"] })
})
afterAll(async () => {
  await upstream?.close()
  await server?.close()
  await cleanup()
})

describe("orgplane llm-providers", { timeout: 120_000 }, () => {
  it("registers, tests, grants and connects to a provider; the credential shows only when asked for", async () => {
    const org = await Http.staffed(server.url)
    const { cli, home } = await fresh()
    const admin = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.admin.token }
    const member = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.member.token }

    const catalog = await cli(["llm-providers", "catalog"], member)
    expect(catalog.code, catalog.stderr).toBe(0)
    expect(catalog.stdout).toContain("anthropic")
    const openaiModels = await cli(["llm-providers", "catalog", "--provider", "openai", "--json"], member)
    // Every page of the provider's models, in one answer.
    const openai = wire(LlmCatalogResponse, openaiModels)
    expect(openai.models.some((model) => model.id === "gpt-4o")).toBe(true)
    expect(openai.models).toHaveLength(openai.providers[0]!.modelCount)

    const headersFile = Path.join(home, "headers.json")
    await Fs.writeFile(headersFile, JSON.stringify({ "OpenAI-Organization": "org-cli-header-secret" }))
    const noModel = await cli(["llm-providers", "create", "Nothing", "--catalog", "openai"], admin)
    expect(noModel.code).not.toBe(0)
    expect(noModel.stderr).toContain("--model")
    const created = await cli([
      "llm-providers", "create", "OpenAI (team)", "--catalog", "openai", "--base-url", upstream.baseUrl,
      "--model", "gpt-4o", "--model", "gpt-4o-mini", "--headers-file", headersFile, "--json"
    ], { ...admin, ORGPLANE_LLM_API_KEY: upstream.apiKey })
    expect(created.code, created.stderr).toBe(0)
    const item = json(created).item
    expect(item).toMatchObject({ name: "OpenAI (team)", catalogProviderId: "openai", headerNames: ["OpenAI-Organization"], credential: { type: "api_key" } })
    expect(created.stdout).not.toContain(upstream.apiKey)

    const tested = await cli(["llm-providers", "test", "openai (TEAM)"], admin)
    expect(tested.code, tested.stderr).toBe(0)
    expect(tested.stdout).toContain("OK: the provider offers every allowed model.")

    // A member sees nothing until granted.
    expect((await cli(["llm-providers", "list"], member)).stdout).toBe("No LLM providers.\n")
    const granted = await cli(["llm-providers", "grant", item.id, "--member", org.member.membership.id], admin)
    expect(granted.code, granted.stderr).toBe(0)
    const listed = await cli(["llm-providers", "list", "--json"], member)
    expect(wire(LlmProviderPage, listed).items.map((entry) => entry.id)).toEqual([item.id])

    const hidden = await cli(["llm-providers", "connect", "OpenAI (team)"], member)
    expect(hidden.code, hidden.stderr).toBe(0)
    expect(hidden.stdout).toContain(upstream.baseUrl)
    expect(hidden.stdout).toContain("(hidden: --show-secret or --json prints it)")
    expect(hidden.stdout).not.toContain(upstream.apiKey)
    expect(hidden.stdout).not.toContain("org-cli-header-secret")
    const shown = await cli(["llm-providers", "connect", item.id, "--show-secret"], member)
    expect(shown.stdout).toContain(upstream.apiKey)
    const scripted = await cli(["llm-providers", "connect", item.id, "--json"], member)
    expect(json(scripted)).toMatchObject({ baseURL: upstream.baseUrl, apiKey: upstream.apiKey, headers: { "OpenAI-Organization": "org-cli-header-secret" } })

    const refused = await cli(["llm-providers", "update", item.id, "--name", "Mine"], member)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("insufficient_access")

    const updated = await cli(["llm-providers", "update", item.id, "--model", "gpt-4o", "--model", "gpt-4.1"], admin)
    expect(updated.code, updated.stderr).toBe(0)
    const missing = await cli(["llm-providers", "test", item.id, "--json"], admin)
    expect(json(missing)).toEqual({ ok: false, present: ["gpt-4o"], missing: ["gpt-4.1"], upstreamModelCount: 2 })
    expect(updated.code).toBe(0)

    const grants = await cli(["llm-providers", "grants", item.id, "--json"], admin)
    const memberGrant = wire(LlmProviderAccessGrantPage, grants).items.find((grant) => grant.orgMembershipId === org.member.membership.id)
    expect(memberGrant).toBeDefined()
    expect((await cli(["llm-providers", "revoke", item.id, memberGrant!.id], admin)).code).toBe(0)
    expect((await cli(["llm-providers", "connect", item.id], member)).code).not.toBe(0)

    const rekeyed = await cli(["llm-providers", "set-credential", item.id], { ...admin, ORGPLANE_LLM_API_KEY: "sk-wrong-cli-key-9981" })
    expect(rekeyed.code, rekeyed.stderr).toBe(0)
    const failing = await cli(["llm-providers", "test", item.id], admin)
    expect(failing.code).not.toBe(0)
    expect(failing.stderr).toContain("llm_provider_api_error")
    expect(failing.stderr).not.toContain("sk-wrong-cli-key-9981")

    const deleted = await cli(["llm-providers", "delete", item.id, "--json"], admin)
    expect(json(deleted)).toEqual({ ok: true, deleted: item.id })
    const gone = await cli(["llm-providers", "get", item.id], admin)
    expect(gone.stderr).toContain("llm_provider_not_found")
  })
})

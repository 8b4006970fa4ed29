/**
 * The areas' configuration modules: on each environment and options, the settings (defaults, values read from the
 * environment, options on top) or the refusal, naming the variable (`NAME: message`). The variables each documents
 * are `orgplane serve --help`'s (the CLI's Usage.test.ts holds its help pages).
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as LlmConfig from "../src/llm/LlmConfig.js"
import * as Presets from "../src/mcp/Presets.js"
import * as PresetsConfig from "../src/mcp/PresetsConfig.js"
import * as SchemaRegistry from "../src/templates/SchemaRegistry.js"
import * as StreamConfig from "../src/audit/StreamConfig.js"
import * as CapabilityConfig from "../src/capabilities/CapabilityConfig.js"
import * as ToolConfig from "../src/mcp/ToolConfig.js"
import * as SamlRefreshConfig from "../src/sso/SamlRefreshConfig.js"
import * as ActivityConfig from "../src/workers/ActivityConfig.js"
import * as RuntimeConfig from "../src/workers/RuntimeConfig.js"

type Env = Record<string, string>

type Outcome = { readonly settings: unknown } | { readonly refused: string }

/** A value with its durations as milliseconds and its class instances as plain objects. */
const plain = (value: unknown): unknown => {
  if (Duration.isDuration(value)) return { millis: Duration.toMillis(value) }
  if (Array.isArray(value)) return value.map(plain)
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, plain(member)]))
  return value
}

const readSettings = async <A, O>(settings: (options: O) => Effect.Effect<A, Config.ConfigError>, env: Env, options: O): Promise<Outcome> => {
  const result = await Effect.runPromise(
    Effect.result(settings(options)).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))
  )
  return Result.isSuccess(result) ? { settings: plain(result.success) } : { refused: result.failure.message }
}

/** Each case read as `settings` reads it: the settings, or the refusal. */
const outcomesOf = async <A, const O>(
  settings: (options: NoInfer<O>) => Effect.Effect<A, Config.ConfigError>,
  cases: ReadonlyArray<readonly [Env, O]>
): Promise<Array<Outcome>> => {
  const outcomes: Array<Outcome> = []
  for (const [env, options] of cases) outcomes.push(await readSettings(settings, env, options))
  return outcomes
}

const settingsOf = (outcome: Outcome | undefined) => outcome !== undefined && "settings" in outcome ? outcome.settings : outcome
const refusalOf = (outcome: Outcome | undefined) => outcome !== undefined && "refused" in outcome ? outcome.refused : outcome
const ms = (millis: number) => ({ millis })

describe("workers/RuntimeConfig", () => {
  it("reads the default, the environment and the options, and refuses what is out of bounds", async () => {
    const outcomes = await outcomesOf(RuntimeConfig.settings, [
      [{}, {}],
      [{ ORGPLANE_WORKER_RUNTIME_TIMEOUT: "5 seconds" }, {}],
      [{ ORGPLANE_WORKER_RUNTIME_TIMEOUT: "5 seconds" }, { workerRuntimeTimeout: "2 minutes" }],
      [{}, { workerRuntimeTimeout: 1500 }],
      [{ ORGPLANE_WORKER_RUNTIME_TIMEOUT: "0 millis" }, {}],
      [{}, { workerRuntimeTimeout: 0 }],
      [{ ORGPLANE_WORKER_RUNTIME_TIMEOUT: "soon" }, {}]
    ])
    expect(outcomes.slice(0, 4).map(settingsOf)).toEqual([{ timeout: ms(30_000) }, { timeout: ms(5_000) }, { timeout: ms(120_000) }, { timeout: ms(1_500) }])
    expect(refusalOf(outcomes[4])).toContain("ORGPLANE_WORKER_RUNTIME_TIMEOUT: must be a positive duration, for example `30 seconds`")
    expect(refusalOf(outcomes[6])).toEqual(expect.any(String))
  })
})

describe("workers/ActivityConfig", () => {
  it("reads the defaults, the environment and the options, and refuses what is out of bounds", async () => {
    const outcomes = await outcomesOf(ActivityConfig.settings, [
      [{}, {}],
      [{ ORGPLANE_WORKER_HEARTBEAT_INTERVAL: "10 seconds", ORGPLANE_WORKER_OFFLINE_AFTER: "1 minute", ORGPLANE_WORKER_HEARTBEATS_PER_MINUTE: "30" }, {}],
      [{ ORGPLANE_WORKER_HEARTBEATS_PER_MINUTE: "30" }, { workerHeartbeatInterval: "5 seconds", workerOfflineAfter: 11_000, workerHeartbeatsPerMinute: 2 }],
      [{ ORGPLANE_WORKER_HEARTBEAT_INTERVAL: "999 millis" }, {}],
      [{}, { workerOfflineAfter: "60 seconds" }],
      [{ ORGPLANE_WORKER_HEARTBEAT_INTERVAL: "1 second" }, { workerOfflineAfter: "2 seconds" }],
      [{ ORGPLANE_WORKER_HEARTBEATS_PER_MINUTE: "0" }, {}],
      [{}, { workerHeartbeatsPerMinute: 1.5 }],
      [{ ORGPLANE_WORKER_HEARTBEATS_PER_MINUTE: "many" }, {}]
    ])
    expect(outcomes.slice(0, 3).map(settingsOf)).toEqual([
      { heartbeatInterval: ms(30_000), offlineAfter: ms(180_000), heartbeatsPerMinute: 12 },
      { heartbeatInterval: ms(10_000), offlineAfter: ms(60_000), heartbeatsPerMinute: 30 },
      { heartbeatInterval: ms(5_000), offlineAfter: ms(11_000), heartbeatsPerMinute: 2 }
    ])
    expect(outcomes.slice(3, 8).map(refusalOf)).toEqual([
      "ORGPLANE_WORKER_HEARTBEAT_INTERVAL: must be at least 1 second, for example `30 seconds`",
      "ORGPLANE_WORKER_OFFLINE_AFTER: must be longer than two heartbeat intervals (ORGPLANE_WORKER_HEARTBEAT_INTERVAL)",
      "ORGPLANE_WORKER_OFFLINE_AFTER: must be longer than two heartbeat intervals (ORGPLANE_WORKER_HEARTBEAT_INTERVAL)",
      "ORGPLANE_WORKER_HEARTBEATS_PER_MINUTE: must be a positive integer",
      "ORGPLANE_WORKER_HEARTBEATS_PER_MINUTE: must be a positive integer"
    ].map((words) => expect.stringContaining(words)))
  })

  it("bounds online, stale and offline by the heartbeat interval and the offline delay", () => {
    const at = new Date("2026-01-01T00:00:00Z")
    const settings = { heartbeatInterval: Duration.seconds(30), offlineAfter: Duration.minutes(3), heartbeatsPerMinute: 12 }
    const bounds = ActivityConfig.bounds(settings, at)
    expect({ staleBefore: bounds.staleBefore.toISOString(), offlineBefore: bounds.offlineBefore.toISOString() }).toEqual({
      staleBefore: "2025-12-31T23:59:00.000Z",
      offlineBefore: "2025-12-31T23:57:00.000Z"
    })
    expect(ActivityConfig.bounds(settings, at).staleBefore.toISOString()).toBe("2025-12-31T23:59:00.000Z")
  })
})

describe("mcp/ToolConfig", () => {
  it("reads the default, the environment and the options, and refuses what is out of bounds", async () => {
    const outcomes = await outcomesOf(ToolConfig.settings, [
      [{}, {}],
      [{ ORGPLANE_MCP_TOOL_TIMEOUT: "45 seconds" }, {}],
      [{ ORGPLANE_MCP_TOOL_TIMEOUT: "45 seconds" }, { mcpToolTimeout: "3 minutes" }],
      [{ ORGPLANE_MCP_TOOL_TIMEOUT: "0 seconds" }, {}],
      [{}, { mcpToolTimeout: -1 }]
    ])
    expect(outcomes.slice(0, 3).map(settingsOf)).toEqual([{ toolTimeout: ms(120_000) }, { toolTimeout: ms(45_000) }, { toolTimeout: ms(180_000) }])
    expect(refusalOf(outcomes[3])).toContain("ORGPLANE_MCP_TOOL_TIMEOUT: must be a positive duration, for example `120 seconds`")
  })
})

describe("capabilities/CapabilityConfig", () => {
  it("reads the default, the environment and the options, and refuses what is out of bounds", async () => {
    const outcomes = await outcomesOf(CapabilityConfig.settings, [
      [{}, {}],
      [{ ORGPLANE_CAPABILITY_TIMEOUT: "12 seconds" }, {}],
      [{ ORGPLANE_CAPABILITY_TIMEOUT: "12 seconds" }, { capabilityTimeout: 250 }],
      [{ ORGPLANE_CAPABILITY_TIMEOUT: "0 seconds" }, {}],
      [{}, { capabilityTimeout: 0 }]
    ])
    expect(outcomes.slice(0, 3).map(settingsOf)).toEqual([{ timeout: ms(30_000) }, { timeout: ms(12_000) }, { timeout: ms(250) }])
    expect(refusalOf(outcomes[4])).toContain("ORGPLANE_CAPABILITY_TIMEOUT: must be a positive duration, for example `30 seconds`")
  })
})

describe("sso/SamlRefreshConfig", () => {
  it("reads the default, the environment and the options, and refuses what is out of bounds", async () => {
    const outcomes = await outcomesOf(SamlRefreshConfig.settings, [
      [{}, {}],
      [{ ORGPLANE_SAML_METADATA_REFRESH_INTERVAL: "1 hour" }, {}],
      [{ ORGPLANE_SAML_METADATA_REFRESH_INTERVAL: "1 hour" }, { samlMetadataRefreshInterval: "5 minutes" }],
      [{ ORGPLANE_SAML_METADATA_REFRESH_INTERVAL: "4 minutes" }, {}],
      [{}, { samlMetadataRefreshInterval: 299_999 }]
    ])
    expect(outcomes.slice(0, 3).map(settingsOf)).toEqual([{ interval: ms(6 * 3_600_000) }, { interval: ms(3_600_000) }, { interval: ms(300_000) }])
    expect(refusalOf(outcomes[3])).toContain("ORGPLANE_SAML_METADATA_REFRESH_INTERVAL: must be at least 5 minutes, for example `6 hours`")
  })
})

describe("audit/StreamConfig", () => {
  it("reads the defaults, the environment and the options, and refuses what is out of bounds", async () => {
    const outcomes = await outcomesOf(StreamConfig.settings, [
      [{}, {}],
      [{
        ORGPLANE_AUDIT_STREAM_POLL_INTERVAL: "100 millis",
        ORGPLANE_AUDIT_STREAM_TIMEOUT: "3 seconds",
        ORGPLANE_AUDIT_STREAM_BACKOFF_BASE: "1 second",
        ORGPLANE_AUDIT_STREAM_BACKOFF_CAP: "1 second",
        ORGPLANE_AUDIT_STREAM_SETTLE: "0 millis"
      }, {}],
      [{ ORGPLANE_AUDIT_STREAM_TIMEOUT: "3 seconds" }, { auditStreamTimeout: 500, auditStreamSettle: "1 second", auditStreamBackoffCap: "1 hour" }],
      [{ ORGPLANE_AUDIT_STREAM_POLL_INTERVAL: "99 millis" }, {}],
      [{}, { auditStreamTimeout: 10 }],
      [{ ORGPLANE_AUDIT_STREAM_BACKOFF_BASE: "50 millis" }, {}],
      [{ ORGPLANE_AUDIT_STREAM_BACKOFF_CAP: "1 second" }, {}]
    ])
    expect(outcomes.slice(0, 3).map(settingsOf)).toEqual([
      { pollInterval: ms(2_000), timeout: ms(10_000), backoffBase: ms(2_000), backoffCap: ms(300_000), settle: ms(5_000) },
      { pollInterval: ms(100), timeout: ms(3_000), backoffBase: ms(1_000), backoffCap: ms(1_000), settle: ms(0) },
      { pollInterval: ms(2_000), timeout: ms(500), backoffBase: ms(2_000), backoffCap: ms(3_600_000), settle: ms(1_000) }
    ])
    expect(outcomes.slice(3).map(refusalOf)).toEqual([
      "ORGPLANE_AUDIT_STREAM_POLL_INTERVAL: must be at least 100 milliseconds, for example `2 seconds`",
      "ORGPLANE_AUDIT_STREAM_TIMEOUT: must be at least 100 milliseconds, for example `2 seconds`",
      "ORGPLANE_AUDIT_STREAM_BACKOFF_BASE: must be at least 100 milliseconds, for example `2 seconds`",
      "ORGPLANE_AUDIT_STREAM_BACKOFF_CAP: must be at least ORGPLANE_AUDIT_STREAM_BACKOFF_BASE"
    ].map((words) => expect.stringContaining(words)))
  })

  it("backs off doubled per failure after the first, at most the cap", () => {
    const settings = { ...StreamConfig.defaults, backoffBase: Duration.seconds(2), backoffCap: Duration.minutes(1) }
    expect([0, 1, 2, 3, 5, 6, 40].map((failures) => Duration.toMillis(StreamConfig.backoff(settings, failures))))
      .toEqual([2_000, 2_000, 4_000, 8_000, 32_000, 60_000, 60_000])
  })
})

/** A fresh folder for the files a test writes, removed afterwards. */
const withFolder = async (use: (folder: string) => Promise<void>) => {
  const folder = await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-area-config-"))
  try {
    await use(folder)
  } finally {
    await Fs.rm(folder, { recursive: true, force: true })
  }
}

const provider = {
  id: "acme-llm",
  name: "Acme LLM",
  apiStyle: "openai-compatible",
  baseUrl: "https://llm.acme.example/v1",
  docUrl: null,
  models: [{ id: "acme-1", name: "Acme 1", family: null, contextWindow: 8192, maxOutputTokens: null, cost: null, reasoning: false, toolCall: true }]
}

describe("llm/LlmConfig", () => {
  it("reads the shipped catalog, the operator's file and the connect limit, and refuses what is out of bounds", () =>
    withFolder(async (folder) => {
      const good = Path.join(folder, "good.json")
      await Fs.writeFile(good, JSON.stringify({ source: "acme", revision: "1", providers: [provider] }))
      const bad = Path.join(folder, "bad.json")
      await Fs.writeFile(bad, JSON.stringify({ source: "acme", revision: "1", providers: [{ ...provider, apiStyle: "soap" }] }))
      const twice = Path.join(folder, "twice.json")
      await Fs.writeFile(twice, JSON.stringify({ source: "acme", revision: "1", providers: [provider, provider] }))
      const notJson = Path.join(folder, "not.json")
      await Fs.writeFile(notJson, "{not json")
      const missing = Path.join(folder, "nope.json")
      const outcomes = await outcomesOf(LlmConfig.settings, [
        [{}, {}],
        [{ ORGPLANE_LLM_CATALOG: good, ORGPLANE_LLM_CONNECT_PER_MINUTE: "7" }, {}],
        [{ ORGPLANE_LLM_CATALOG: " ", ORGPLANE_LLM_CONNECT_PER_MINUTE: "7" }, { llmConnectPerMinute: 3 }],
        [{ ORGPLANE_LLM_CATALOG: missing }, { llmCatalogFile: good }],
        [{ ORGPLANE_LLM_CATALOG: missing }, {}],
        [{ ORGPLANE_LLM_CATALOG: bad }, {}],
        [{}, { llmCatalogFile: twice }],
        [{}, { llmCatalogFile: notJson }],
        [{ ORGPLANE_LLM_CONNECT_PER_MINUTE: "0" }, {}],
        [{}, { llmConnectPerMinute: 2.5 }]
      ])
      const shipped = settingsOf(outcomes[0])
      expect(shipped).toMatchObject({ connectPerMinute: 60, catalog: { source: "https://models.dev" } })
      expect(settingsOf(outcomes[1])).toEqual({ connectPerMinute: 7, catalog: { source: "acme", revision: "1", providers: [provider] } })
      expect(settingsOf(outcomes[2])).toEqual({ ...(shipped as object), connectPerMinute: 3 })
      expect(settingsOf(outcomes[3])).toMatchObject({ catalog: { source: "acme" } })
      expect(refusalOf(outcomes[4])).toContain(`ORGPLANE_LLM_CATALOG: ${missing}: cannot be read (ENOENT)`)
      expect(refusalOf(outcomes[5])).toContain(`ORGPLANE_LLM_CATALOG: ${bad}: not an LLM provider catalog`)
      expect(refusalOf(outcomes[5])).toContain("apiStyle")
      expect(refusalOf(outcomes[6])).toContain(`ORGPLANE_LLM_CATALOG: ${twice}: providers[1].id "acme-llm" appears twice`)
      expect(refusalOf(outcomes[7])).toContain(`ORGPLANE_LLM_CATALOG: ${notJson}: not JSON (`)
      expect(refusalOf(outcomes[8])).toContain("ORGPLANE_LLM_CONNECT_PER_MINUTE: must be a whole number of at least 1")
    }))

  it("parses a catalog's text, refusing what is not JSON and a provider listed twice", () => {
    const parsed = (text: string) => {
      const catalog = LlmConfig.parseCatalog(text)
      return Result.isSuccess(catalog) ? { ok: catalog.success } : { error: catalog.failure }
    }
    expect(parsed("{not json")).toEqual({ error: "not JSON (Expected property name or '}' in JSON at position 1 (line 1 column 2))" })
    expect(parsed(JSON.stringify({ source: "a", revision: "1", providers: [provider, provider] }))).toEqual({ error: "providers[1].id \"acme-llm\" appears twice" })
    expect(parsed(JSON.stringify({ source: "a", revision: "1", providers: [provider] }))).toEqual({ ok: { source: "a", revision: "1", providers: [provider] } })
  })
})

const slack = { presetId: "slack-2", displayName: "Slack", description: "Slack.", url: "https://mcp.slack.com/mcp", authType: "oauth", requiresOAuthClient: true, defaultOAuthScopes: ["chat:write"] }

describe("mcp/PresetsConfig", () => {
  it("reads the presets: the built-in list, or the operator's JSON or YAML file, and refuses a bad file saying why", () =>
    withFolder(async (folder) => {
      const write = async (name: string, text: string) => {
        const file = Path.join(folder, name)
        await Fs.writeFile(file, text)
        return file
      }
      const json = await write("presets.json", JSON.stringify([slack]))
      const yaml = await write("presets.yaml", "- presetId: docs\n  displayName: Docs\n  description: Docs.\n  url: https://docs.example.com/mcp\n  authType: none\n  requiresOAuthClient: false\n")
      const extra = await write("extra.json", JSON.stringify([{ ...slack, color: "green" }]))
      const badUrl = await write("bad-url.json", JSON.stringify([{ ...slack, url: "https://user:pw@mcp.example.com/mcp" }]))
      const twice = await write("twice.json", JSON.stringify([slack, slack]))
      const notYaml = await write("not.yaml", "a: [")
      const outcomes = await outcomesOf(PresetsConfig.presets, [
        [{}, {}],
        [{ ORGPLANE_MCP_PRESETS_FILE: json }, {}],
        [{ ORGPLANE_MCP_PRESETS_FILE: json }, { mcpPresetsFile: yaml }],
        [{ ORGPLANE_MCP_PRESETS_FILE: "  " }, {}],
        [{}, { mcpPresetsFile: Path.join(folder, "nope.json") }],
        [{ ORGPLANE_MCP_PRESETS_FILE: extra }, {}],
        [{ ORGPLANE_MCP_PRESETS_FILE: badUrl }, {}],
        [{ ORGPLANE_MCP_PRESETS_FILE: twice }, {}],
        [{ ORGPLANE_MCP_PRESETS_FILE: notYaml }, {}]
      ])
      expect(settingsOf(outcomes[0])).toEqual(plain(Presets.BUILT_IN))
      expect(settingsOf(outcomes[1])).toEqual([slack])
      expect(settingsOf(outcomes[2])).toEqual([expect.objectContaining({ presetId: "docs", authType: "none" })])
      expect(settingsOf(outcomes[3])).toEqual(plain(Presets.BUILT_IN))
      expect(outcomes.slice(4).map(refusalOf)).toEqual([
        `ORGPLANE_MCP_PRESETS_FILE: ${Path.join(folder, "nope.json")}: cannot be read (ENOENT)`,
        `ORGPLANE_MCP_PRESETS_FILE: ${extra}: not an array of MCP presets`,
        `ORGPLANE_MCP_PRESETS_FILE: ${badUrl}: [0].url is not an http(s) MCP server URL without credentials, fragment or secret`,
        `ORGPLANE_MCP_PRESETS_FILE: ${twice}: [1].presetId "slack-2" appears twice`,
        `ORGPLANE_MCP_PRESETS_FILE: ${notYaml}: not JSON or YAML (`
      ].map((words) => expect.stringContaining(words)))
      expect(refusalOf(outcomes[5])).toContain("color")
    }))

  it("reads the probe timeout, and refuses what is out of bounds", async () => {
    const outcomes = await outcomesOf(PresetsConfig.probeSettings, [
      [{}, {}],
      [{ ORGPLANE_MCP_PROBE_TIMEOUT: "3 seconds" }, {}],
      [{ ORGPLANE_MCP_PROBE_TIMEOUT: "3 seconds" }, { mcpProbeTimeout: 750 }],
      [{ ORGPLANE_MCP_PROBE_TIMEOUT: "0 seconds" }, {}]
    ])
    expect(outcomes.slice(0, 3).map(settingsOf)).toEqual([{ timeout: ms(8_000) }, { timeout: ms(3_000) }, { timeout: ms(750) }])
    expect(refusalOf(outcomes[3])).toContain("ORGPLANE_MCP_PROBE_TIMEOUT: must be a positive duration, for example `8 seconds`")
  })

  it("its layer gives both services", async () => {
    const [presets, probe] = await Effect.runPromise(
      Effect.all([Effect.service(PresetsConfig.McpPresets), Effect.service(PresetsConfig.McpProbeSettings)]).pipe(
        Effect.provide(PresetsConfig.layer({ mcpProbeTimeout: "2 seconds" })),
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))
      )
    )
    expect(presets).toBe(Presets.BUILT_IN)
    expect(Duration.toMillis(probe.timeout)).toBe(2_000)
  })
})

/** The registry the port's layer gives on `env` with `options`, or the refusal. */
const portRegistry = (env: Env, options: SchemaRegistry.Options) =>
  Effect.runPromise(
    Effect.result(Effect.service(SchemaRegistry.TemplateSchemas).pipe(Effect.provide(SchemaRegistry.layer(options)))).pipe(
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
    )
  )

const person = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  required: ["name"],
  additionalProperties: false,
  properties: {
    name: { type: "string", minLength: 1 },
    email: { type: "string", format: "email" },
    tags: { type: "array", items: { type: "string" } },
    role: { type: "string", default: "member" }
  }
}

describe("templates/SchemaRegistry", () => {
  it("registers nothing without a folder", async () => {
    const mine = await portRegistry({ ORGPLANE_TEMPLATE_SCHEMAS_DIR: " " }, {})
    expect(Result.isSuccess(mine) && mine.success.versions).toEqual([])
    expect(Result.isSuccess(mine) && mine.success.check("v1", {})).toBeUndefined()
  })

  it("checks and fills in documents, from the environment's folder or the option's", () =>
    withFolder(async (folder) => {
      await Fs.writeFile(Path.join(folder, "person.v1.json"), JSON.stringify(person))
      await Fs.writeFile(Path.join(folder, "draft7.json"), JSON.stringify({ type: "object", properties: { n: { type: "integer", default: 1 } } }))
      await Fs.writeFile(Path.join(folder, "README.md"), "not a schema")
      for (const [env, options] of [[{ ORGPLANE_TEMPLATE_SCHEMAS_DIR: folder }, {}], [{ ORGPLANE_TEMPLATE_SCHEMAS_DIR: "/nowhere" }, { templateSchemasDir: folder }]] as const) {
        const mine = await portRegistry(env, options)
        if (!Result.isSuccess(mine)) throw new Error(`refused: ${mine.failure.message}`)
        expect(mine.success.versions).toEqual(["draft7", "person.v1"])
        expect([mine.success.has("person.v1"), mine.success.has("draft7"), mine.success.has("other")]).toEqual([true, true, false])
        expect(mine.success.check("person.v1", { name: "Ada" })).toEqual([])
        expect(mine.success.check("person.v1", { name: "", email: "nope", tags: ["a", 2], extra: true })).toEqual([
          { path: ["extra"], keyword: "additionalProperties", message: "must NOT have additional properties" },
          { path: ["name"], keyword: "minLength", message: "must NOT have fewer than 1 characters" },
          { path: ["email"], keyword: "format", message: "must match format \"email\"" },
          { path: ["tags", 1], keyword: "type", message: "must be string" }
        ])
        expect(mine.success.check("other", {})).toBeUndefined()
        expect(mine.success.check("person.v1", { tags: [1], extra: 1 })).toEqual([
          { path: ["name"], keyword: "required", message: "must have required property 'name'" },
          { path: ["extra"], keyword: "additionalProperties", message: "must NOT have additional properties" },
          { path: ["tags", 0], keyword: "type", message: "must be string" }
        ])
        expect(mine.success.resolve("person.v1", { name: "Ada" })).toEqual({ name: "Ada", role: "member" })
      }
    }))

  it("refuses a folder it cannot read, a file named no schemaVersion and a schema Ajv does not compile, saying which", () =>
    withFolder(async (folder) => {
      const write = async (dir: string, name: string, text: string) => {
        await Fs.mkdir(Path.join(folder, dir), { recursive: true })
        await Fs.writeFile(Path.join(folder, dir, name), text)
        return Path.join(folder, dir)
      }
      const badName = await write("name", "bad name!.json", "{}")
      const notJson = await write("json", "v1.json", "{not json")
      const notSchema = await write("schema", "v1.json", JSON.stringify({ type: "thing" }))
      const refusals: ReadonlyArray<readonly [string, string]> = [
        [Path.join(folder, "nope"), `${folder}/nope cannot be read (ENOENT)`],
        [badName, `${badName}/bad name!.json: "bad name!" is not a schemaVersion (1 to 64 letters, digits, '.', '-' or '_')`],
        [notJson, `${notJson}/v1.json is not a JSON Schema Ajv compiles: Expected property name or '}' in JSON at position 1 (line 1 column 2)`],
        [notSchema, `${notSchema}/v1.json is not a JSON Schema Ajv compiles: schema is invalid: data/type must be equal to one of the allowed values`]
      ]
      for (const [dir, words] of refusals) {
        const mine = await portRegistry({}, { templateSchemasDir: dir })
        if (Result.isSuccess(mine)) throw new Error(`accepted: ${dir}`)
        expect(mine.failure.message, dir).toContain(`ORGPLANE_TEMPLATE_SCHEMAS_DIR: ${words}`)
      }
      const mine = await portRegistry({ ORGPLANE_TEMPLATE_SCHEMAS_DIR: badName }, {})
      expect(Result.isFailure(mine) && mine.failure.message).toContain(
        `ORGPLANE_TEMPLATE_SCHEMAS_DIR: ${badName}/bad name!.json: "bad name!" is not a schemaVersion (1 to 64 letters, digits, '.', '-' or '_')`
      )
    }))

  it("answers a document that fails its schema with a 400 naming each violation, at most MAX_VIOLATIONS of them", () => {
    const violations = Array.from({ length: 102 }, (_, index) => ({ path: ["items", index], keyword: "type", message: "must be string" }))
    const detail = (index: number) => ({ message: "must be string (schema v1, keyword `type`)", path: ["document", "items", index], code: "schema_violation", keyword: "type" })
    expect(SchemaRegistry.invalidDocument("v1", violations.slice(0, 2)).details).toEqual([detail(0), detail(1)])
    const capped = SchemaRegistry.invalidDocument("v1", violations).details
    expect(capped.slice(0, 2)).toEqual([detail(0), detail(1)])
    expect(capped.at(-1)).toEqual({ message: "and 2 more violations", path: ["document"], code: "schema_violation" })
    expect(SchemaRegistry.invalidDocument("v1", violations).details).toHaveLength(SchemaRegistry.MAX_VIOLATIONS + 1)
  })
})

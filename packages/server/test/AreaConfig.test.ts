/**
 * The areas' configuration modules held to their Effect 3 originals: the same documented variables, and on the same
 * environment and options the same settings (defaults, values read from the environment, options on top) or the
 * same refusal, in the same words (`NAME: message`, where Effect 3 said `InvalidData` at `NAME`).
 *
 * The originals' side is read from the recorded fixture (test/fixtures/effect3/AreaConfig.json, support/Effect3.ts):
 * what 0.1.0's modules answered, each value under its function and inputs; a case's temporary folder is written
 * `<folder>` there (key and value) and read back as the run's, so the keys are the same on every run. Durations are
 * held as milliseconds, Dates as ISO text, a registry as its versions and its answers for the documents the test asks
 * about.
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
import * as Recorded from "./support/Effect3.js"

type Env = Record<string, string>

type Outcome = { readonly settings: unknown } | { readonly refused: string }

/**
 * The Effect 3 originals' answers, recorded (support/Effect3.ts): an original's settings on an environment as an
 * `Outcome`, its durations as milliseconds. A temporary folder a case names is recorded as `<folder>` (in the key and
 * in the value) and read back as the run's own.
 */
const effect3 = Recorded.originals("AreaConfig")

const swapping = (value: unknown, from: string, to: string): unknown => {
  if (typeof value === "string") return value.replaceAll(from, to)
  if (Array.isArray(value)) return value.map((item) => swapping(item, from, to))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, member]) => [key.replaceAll(from, to), swapping(member, from, to)]))
  }
  return value
}
/** `value` with every `from` in its strings (and its members' names) written `to`: the same shape, so the same type. */
const swap = <A>(value: A, from: string | undefined, to: string | undefined): A =>
  from === undefined || to === undefined ? value : swapping(value, from, to) as A
const folderMark = "<folder>"

/** The original's answer under `name` and `inputs`, with `folder` (if any) recorded as `<folder>` and read back as itself. */
const original = async <A>(folder: string | undefined, name: string, inputs: ReadonlyArray<unknown>): Promise<A> => {
  const key = Recorded.call(name, ...inputs.map((input) => swap(input, folder, folderMark)))
  const recorded = await effect3.await<A>(key)
  return swap(recorded, folderMark, folder)
}

/** A value with its durations as milliseconds and its class instances as plain objects. */
const plain = (value: unknown): unknown => {
  if (Duration.isDuration(value)) return { millis: Duration.toMillis(value) }
  if (Array.isArray(value)) return value.map(plain)
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, plain(member)]))
  return value
}

const readPort = async <A, O>(settings: (options: O) => Effect.Effect<A, Config.ConfigError>, env: Env, options: O): Promise<Outcome> => {
  const result = await Effect.runPromise(
    Effect.result(settings(options)).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))
  )
  return Result.isSuccess(result) ? { settings: plain(result.success) } : { refused: result.failure.message }
}

/** Effect 3's words for a value that does not parse (`Expected a duration but received "soon"`): Effect 4 has its own. */
const unparsable = /^([A-Z_]+): Expected an? (duration|integer value) but received /

/**
 * Each case read by the port and (recorded) by the original, `name`'s settings: the same settings, or the same refusal
 * in the original's words (`NAME: message`); a value that does not parse is refused by both, the port naming the
 * variable.
 */
const holdsToOriginal = async <A, const O>(
  name: string,
  port: (options: NoInfer<O>) => Effect.Effect<A, Config.ConfigError>,
  cases: ReadonlyArray<readonly [Env, O]>,
  folder?: string
) => {
  const outcomes: Array<Outcome> = []
  for (const [env, options] of cases) {
    const [mine, theirs] = await Promise.all([
      readPort(port, env, options),
      original<Outcome>(folder, name, [env, options])
    ])
    const label = JSON.stringify([env, options])
    if ("settings" in theirs) expect(mine, label).toEqual(theirs)
    else {
      expect("refused" in mine, label).toBe(true)
      // A file that does not decode: the same first line; what follows is each Effect's own account of the issues.
      const words = theirs.refused.split("\n")[0]!
      const parse = unparsable.exec(words)
      if ("refused" in mine) expect(mine.refused, label).toContain(parse === null ? words : `"${parse[1]}"`)
    }
    outcomes.push(mine)
  }
  return outcomes
}

const settingsOf = (outcome: Outcome | undefined) => outcome !== undefined && "settings" in outcome ? outcome.settings : outcome
const refusalOf = (outcome: Outcome | undefined) => outcome !== undefined && "refused" in outcome ? outcome.refused : outcome
const ms = (millis: number) => ({ millis })

describe("workers/RuntimeConfig", () => {
  it("documents the same variables as the original, in the same words", () => {
    expect(RuntimeConfig.environment).toEqual(effect3("RuntimeConfig.environment"))
  })

  it("reads the default, the environment and the options as the original does, and refuses what it refuses", async () => {
    const outcomes = await holdsToOriginal("RuntimeConfig.settings", RuntimeConfig.settings, [
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
  it("documents the same variables as the original, in the same words, with the same defaults", () => {
    expect(ActivityConfig.environment).toEqual(effect3("ActivityConfig.environment"))
    expect(plain(ActivityConfig.defaults)).toEqual(effect3("ActivityConfig.defaults"))
  })

  it("reads the defaults, the environment and the options as the original does, and refuses what it refuses", async () => {
    const outcomes = await holdsToOriginal("ActivityConfig.settings", ActivityConfig.settings, [
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

  it("bounds online, stale and offline as the original does", () => {
    const at = new Date("2026-01-01T00:00:00Z")
    const settings = { heartbeatInterval: Duration.seconds(30), offlineAfter: Duration.minutes(3), heartbeatsPerMinute: 12 }
    const bounds = ActivityConfig.bounds(settings, at)
    // The original's Dates, recorded as their ISO text.
    expect({ staleBefore: bounds.staleBefore.toISOString(), offlineBefore: bounds.offlineBefore.toISOString() }).toEqual(
      effect3(Recorded.call("ActivityConfig.bounds", "30 seconds", "3 minutes", 12, at.toISOString()))
    )
    expect(ActivityConfig.bounds(settings, at).staleBefore.toISOString()).toBe("2025-12-31T23:59:00.000Z")
  })
})

describe("mcp/ToolConfig", () => {
  it("documents the same variables as the original, in the same words", () => {
    expect(ToolConfig.environment).toEqual(effect3("ToolConfig.environment"))
  })

  it("reads the default, the environment and the options as the original does, and refuses what it refuses", async () => {
    const outcomes = await holdsToOriginal("ToolConfig.settings", ToolConfig.settings, [
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
  it("documents the same variables as the original, in the same words", () => {
    expect(CapabilityConfig.environment).toEqual(effect3("CapabilityConfig.environment"))
  })

  it("reads the default, the environment and the options as the original does, and refuses what it refuses", async () => {
    const outcomes = await holdsToOriginal("CapabilityConfig.settings", CapabilityConfig.settings, [
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
  it("documents the same variables as the original, in the same words", () => {
    expect(SamlRefreshConfig.environment).toEqual(effect3("SamlRefreshConfig.environment"))
  })

  it("reads the default, the environment and the options as the original does, and refuses what it refuses", async () => {
    const outcomes = await holdsToOriginal("SamlRefreshConfig.settings", SamlRefreshConfig.settings, [
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
  it("documents the same variables as the original, in the same words, with the same defaults", () => {
    expect(StreamConfig.environment).toEqual(effect3("StreamConfig.environment"))
    expect(plain(StreamConfig.defaults)).toEqual(effect3("StreamConfig.defaults"))
  })

  it("reads the defaults, the environment and the options as the original does, and refuses what it refuses", async () => {
    const outcomes = await holdsToOriginal("StreamConfig.settings", StreamConfig.settings, [
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

  it("backs off as the original does: doubled per failure, at most the cap", () => {
    const settings = { ...StreamConfig.defaults, backoffBase: Duration.seconds(2), backoffCap: Duration.minutes(1) }
    for (const failures of [0, 1, 2, 3, 5, 6, 40]) {
      expect(Duration.toMillis(StreamConfig.backoff(settings, failures)), String(failures)).toBe(
        effect3(Recorded.call("StreamConfig.backoff", "2 seconds", "1 minute", failures))
      )
    }
    expect(Duration.toMillis(StreamConfig.backoff(settings, 3))).toBe(8_000)
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
  it("documents the same variables as the original, in the same words", () => {
    expect(LlmConfig.environment).toEqual(effect3("LlmConfig.environment"))
  })

  it("reads the shipped catalog, the operator's file and the connect limit as the original does, and refuses what it refuses", () =>
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
      const outcomes = await holdsToOriginal("LlmConfig.settings", LlmConfig.settings, [
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
      ], folder)
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

  it("parses a catalog's text as the original does", () => {
    for (const text of ["{not json", JSON.stringify({ source: "a", revision: "1", providers: [provider, provider] }), JSON.stringify({ source: "a", revision: "1", providers: [provider] })]) {
      const mine = LlmConfig.parseCatalog(text)
      const theirs = effect3(Recorded.call("LlmConfig.parseCatalog", text))
      expect(Result.isSuccess(mine) ? { ok: mine.success } : { error: mine.failure }).toEqual(theirs)
    }
  })
})

const slack = { presetId: "slack-2", displayName: "Slack", description: "Slack.", url: "https://mcp.slack.com/mcp", authType: "oauth", requiresOAuthClient: true, defaultOAuthScopes: ["chat:write"] }

describe("mcp/PresetsConfig", () => {
  it("documents the same variables as the original, in the same words, and the same built-in presets", () => {
    expect(PresetsConfig.environment).toEqual(effect3("PresetsConfig.environment"))
    expect(plain(Presets.BUILT_IN)).toEqual(effect3("Presets.BUILT_IN"))
    for (const url of ["https://mcp.linear.app/other", "https://MCP.NOTION.COM/x", "https://example.com/mcp", "not a url"]) {
      expect(plain(Presets.forUrl(Presets.BUILT_IN, url)), url).toEqual(
        effect3(Recorded.call("Presets.forUrl", "BUILT_IN", url))
      )
    }
  })

  it("reads the presets as the original does: the built-in list, or the operator's JSON or YAML file, and refuses a bad file in the same words", () =>
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
      const outcomes = await holdsToOriginal("PresetsConfig.presets", PresetsConfig.presets, [
        [{}, {}],
        [{ ORGPLANE_MCP_PRESETS_FILE: json }, {}],
        [{ ORGPLANE_MCP_PRESETS_FILE: json }, { mcpPresetsFile: yaml }],
        [{ ORGPLANE_MCP_PRESETS_FILE: "  " }, {}],
        [{}, { mcpPresetsFile: Path.join(folder, "nope.json") }],
        [{ ORGPLANE_MCP_PRESETS_FILE: extra }, {}],
        [{ ORGPLANE_MCP_PRESETS_FILE: badUrl }, {}],
        [{ ORGPLANE_MCP_PRESETS_FILE: twice }, {}],
        [{ ORGPLANE_MCP_PRESETS_FILE: notYaml }, {}]
      ], folder)
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

  it("reads the probe timeout as the original does, and refuses what it refuses", async () => {
    const outcomes = await holdsToOriginal("PresetsConfig.probeSettings", PresetsConfig.probeSettings, [
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

/** What the original registry answers for one document: `has`, `check` and `resolve`. */
interface Answer {
  readonly has: boolean
  readonly check: ReadonlyArray<SchemaRegistry.Violation> | undefined
  readonly resolve: unknown
}

/**
 * The registry the layer gives on `env` with `options`, from the port and (recorded) from the original: the original's
 * versions and its answers for each of `documents`, or its refusal.
 */
const registries = async (env: Env, options: SchemaRegistry.Options, folder?: string, documents: ReadonlyArray<readonly [string, unknown]> = []) => {
  const mine = await portRegistry(env, options)
  type Theirs =
    | { readonly _tag: "Right"; readonly versions: ReadonlyArray<string>; readonly answers: ReadonlyArray<Answer> }
    | { readonly _tag: "Left"; readonly _op: string; readonly path?: ReadonlyArray<string>; readonly message?: string }
  const theirs = await original<Theirs>(folder, "SchemaRegistry.layer", [env, options, documents])
  return { mine, theirs }
}

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
  it("documents the same variables as the original, in the same words", () => {
    expect(SchemaRegistry.environment).toEqual(effect3("SchemaRegistry.environment"))
  })

  it("registers nothing without a folder, as the original", async () => {
    const { mine, theirs } = await registries({ ORGPLANE_TEMPLATE_SCHEMAS_DIR: " " }, {})
    expect(Result.isSuccess(mine) && mine.success.versions).toEqual([])
    expect(theirs._tag === "Right" && theirs.versions).toEqual([])
    expect(Result.isSuccess(mine) && mine.success.check("v1", {})).toBeUndefined()
  })

  it("checks and fills in documents as the original does, from the environment's folder or the option's", () =>
    withFolder(async (folder) => {
      await Fs.writeFile(Path.join(folder, "person.v1.json"), JSON.stringify(person))
      await Fs.writeFile(Path.join(folder, "draft7.json"), JSON.stringify({ type: "object", properties: { n: { type: "integer", default: 1 } } }))
      await Fs.writeFile(Path.join(folder, "README.md"), "not a schema")
      const documents = [
        ["person.v1", { name: "Ada" }],
        ["person.v1", { name: "", email: "nope", tags: ["a", 2], extra: true }],
        ["person.v1", { tags: [] }],
        ["draft7", { n: "x" }],
        ["draft7", {}],
        ["other", {}]
      ] as const
      for (const [env, options] of [[{ ORGPLANE_TEMPLATE_SCHEMAS_DIR: folder }, {}], [{ ORGPLANE_TEMPLATE_SCHEMAS_DIR: "/nowhere" }, { templateSchemasDir: folder }]] as const) {
        const { mine, theirs } = await registries(env, options, folder, documents)
        if (!Result.isSuccess(mine) || theirs._tag !== "Right") throw new Error(`refused: ${JSON.stringify([mine, theirs])}`)
        expect(mine.success.versions).toEqual(["draft7", "person.v1"])
        expect(mine.success.versions).toEqual(theirs.versions)
        expect(theirs.answers).toHaveLength(documents.length)
        for (const [index, [version, document]] of documents.entries()) {
          const answer = theirs.answers[index]!
          expect(mine.success.has(version)).toBe(answer.has)
          expect(mine.success.check(version, document), version).toEqual(answer.check)
          expect(mine.success.resolve(version, document), version).toEqual(answer.resolve)
        }
        expect(mine.success.check("person.v1", { tags: [1], extra: 1 })).toEqual([
          { path: ["name"], keyword: "required", message: "must have required property 'name'" },
          { path: ["extra"], keyword: "additionalProperties", message: "must NOT have additional properties" },
          { path: ["tags", 0], keyword: "type", message: "must be string" }
        ])
        expect(mine.success.resolve("person.v1", { name: "Ada" })).toEqual({ name: "Ada", role: "member" })
      }
    }))

  it("refuses a folder it cannot read, a file named no schemaVersion and a schema Ajv does not compile, in the original's words", () =>
    withFolder(async (folder) => {
      const write = async (dir: string, name: string, text: string) => {
        await Fs.mkdir(Path.join(folder, dir), { recursive: true })
        await Fs.writeFile(Path.join(folder, dir, name), text)
        return Path.join(folder, dir)
      }
      const badName = await write("name", "bad name!.json", "{}")
      const notJson = await write("json", "v1.json", "{not json")
      const notSchema = await write("schema", "v1.json", JSON.stringify({ type: "thing" }))
      for (const dir of [Path.join(folder, "nope"), badName, notJson, notSchema]) {
        const { mine, theirs } = await registries({}, { templateSchemasDir: dir }, folder)
        if (Result.isSuccess(mine) || theirs._tag !== "Left" || theirs._op !== "InvalidData" || theirs.path === undefined) throw new Error(`accepted: ${dir}`)
        expect(mine.failure.message, dir).toContain(`${theirs.path.join(".")}: ${theirs.message}`)
      }
      const mine = await portRegistry({ ORGPLANE_TEMPLATE_SCHEMAS_DIR: badName }, {})
      expect(Result.isFailure(mine) && mine.failure.message).toContain(
        `ORGPLANE_TEMPLATE_SCHEMAS_DIR: ${badName}/bad name!.json: "bad name!" is not a schemaVersion (1 to 64 letters, digits, '.', '-' or '_')`
      )
    }))

  it("answers a document that fails its schema with the original's 400, at most MAX_VIOLATIONS violations", () => {
    const violations = Array.from({ length: 102 }, (_, index) => ({ path: ["items", index], keyword: "type", message: "must be string" }))
    for (const list of [violations.slice(0, 2), violations]) {
      expect(SchemaRegistry.invalidDocument("v1", list).details).toEqual(
        effect3(Recorded.call("SchemaRegistry.invalidDocument", "v1", list))
      )
    }
    expect(SchemaRegistry.invalidDocument("v1", violations).details).toHaveLength(SchemaRegistry.MAX_VIOLATIONS + 1)
  })
})

/**
 * The areas' configuration modules held to their Effect 3 originals: the same documented variables, and on the same
 * environment and options the same settings (defaults, values read from the environment, options on top) or the
 * same refusal, in the same words (`NAME: message`, where Effect 3 said `InvalidData` at `NAME`).
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider3 from "effect-3/ConfigProvider"
import type * as ConfigError3 from "effect-3/ConfigError"
import * as Duration3 from "effect-3/Duration"
import * as Effect3 from "effect-3/Effect"
import type * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as OriginalStreamConfig from "../../../packages/server/src/audit/StreamConfig.js"
import * as OriginalCapabilityConfig from "../../../packages/server/src/capabilities/CapabilityConfig.js"
import * as OriginalToolConfig from "../../../packages/server/src/mcp/ToolConfig.js"
import * as OriginalSamlRefreshConfig from "../../../packages/server/src/sso/SamlRefreshConfig.js"
import * as OriginalActivityConfig from "../../../packages/server/src/workers/ActivityConfig.js"
import * as OriginalRuntimeConfig from "../../../packages/server/src/workers/RuntimeConfig.js"
import * as StreamConfig from "../src/audit/StreamConfig.js"
import * as CapabilityConfig from "../src/capabilities/CapabilityConfig.js"
import * as ToolConfig from "../src/mcp/ToolConfig.js"
import * as SamlRefreshConfig from "../src/sso/SamlRefreshConfig.js"
import * as ActivityConfig from "../src/workers/ActivityConfig.js"
import * as RuntimeConfig from "../src/workers/RuntimeConfig.js"

type Env = Record<string, string>

/** A value with its durations as milliseconds and its class instances as plain objects, on either Effect. */
const plain = (value: unknown): unknown => {
  if (Duration.isDuration(value)) return { millis: Duration.toMillis(value) }
  if (Duration3.isDuration(value)) return { millis: Duration3.toMillis(value) }
  if (Array.isArray(value)) return value.map(plain)
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, plain(member)]))
  return value
}

type Outcome = { readonly settings: unknown } | { readonly refused: string }

const readPort = async <A, O>(settings: (options: O) => Effect.Effect<A, Config.ConfigError>, env: Env, options: O): Promise<Outcome> => {
  const result = await Effect.runPromise(
    Effect.result(settings(options)).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))
  )
  return Result.isSuccess(result) ? { settings: plain(result.success) } : { refused: result.failure.message }
}

const readOriginal = async <A, O>(settings: (options: O) => Effect3.Effect<A, ConfigError3.ConfigError>, env: Env, options: O): Promise<Outcome> => {
  const result = await Effect3.runPromise(Effect3.either(Effect3.withConfigProvider(settings(options), ConfigProvider3.fromMap(new Map(Object.entries(env))))))
  if (result._tag === "Right") return { settings: plain(result.right) }
  const error = result.left
  return { refused: error._op === "InvalidData" ? `${error.path.join(".")}: ${error.message}` : String(error) }
}

/** Effect 3's words for a value that does not parse (`Expected a duration but received "soon"`): Effect 4 has its own. */
const unparsable = /^([A-Z_]+): Expected an? (duration|integer value) but received /

/**
 * Each case read by the port and by the original: the same settings, or the same refusal in the original's words
 * (`NAME: message`); a value that does not parse is refused by both, the port naming the variable.
 */
const holdsToOriginal = async <A, B, const O>(
  port: (options: NoInfer<O>) => Effect.Effect<A, Config.ConfigError>,
  original: (options: NoInfer<O>) => Effect3.Effect<B, ConfigError3.ConfigError>,
  cases: ReadonlyArray<readonly [Env, O]>
) => {
  const outcomes: Array<Outcome> = []
  for (const [env, options] of cases) {
    const [mine, theirs] = await Promise.all([readPort(port, env, options), readOriginal(original, env, options)])
    const label = JSON.stringify([env, options])
    if ("settings" in theirs) expect(mine, label).toEqual(theirs)
    else {
      expect("refused" in mine, label).toBe(true)
      const parse = unparsable.exec(theirs.refused)
      if ("refused" in mine) expect(mine.refused, label).toContain(parse === null ? theirs.refused : `"${parse[1]}"`)
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
    expect(RuntimeConfig.environment).toEqual(OriginalRuntimeConfig.environment)
  })

  it("reads the default, the environment and the options as the original does, and refuses what it refuses", async () => {
    const outcomes = await holdsToOriginal(RuntimeConfig.settings, OriginalRuntimeConfig.settings, [
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
    expect(ActivityConfig.environment).toEqual(OriginalActivityConfig.environment)
    expect(plain(ActivityConfig.defaults)).toEqual(plain(OriginalActivityConfig.defaults))
  })

  it("reads the defaults, the environment and the options as the original does, and refuses what it refuses", async () => {
    const outcomes = await holdsToOriginal(ActivityConfig.settings, OriginalActivityConfig.settings, [
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
    const original = { heartbeatInterval: Duration3.seconds(30), offlineAfter: Duration3.minutes(3), heartbeatsPerMinute: 12 }
    expect(ActivityConfig.bounds(settings, at)).toEqual(OriginalActivityConfig.bounds(original, at))
    expect(ActivityConfig.bounds(settings, at).staleBefore.toISOString()).toBe("2025-12-31T23:59:00.000Z")
  })
})

describe("mcp/ToolConfig", () => {
  it("documents the same variables as the original, in the same words", () => {
    expect(ToolConfig.environment).toEqual(OriginalToolConfig.environment)
  })

  it("reads the default, the environment and the options as the original does, and refuses what it refuses", async () => {
    const outcomes = await holdsToOriginal(ToolConfig.settings, OriginalToolConfig.settings, [
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
    expect(CapabilityConfig.environment).toEqual(OriginalCapabilityConfig.environment)
  })

  it("reads the default, the environment and the options as the original does, and refuses what it refuses", async () => {
    const outcomes = await holdsToOriginal(CapabilityConfig.settings, OriginalCapabilityConfig.settings, [
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
    expect(SamlRefreshConfig.environment).toEqual(OriginalSamlRefreshConfig.environment)
  })

  it("reads the default, the environment and the options as the original does, and refuses what it refuses", async () => {
    const outcomes = await holdsToOriginal(SamlRefreshConfig.settings, OriginalSamlRefreshConfig.settings, [
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
    expect(StreamConfig.environment).toEqual(OriginalStreamConfig.environment)
    expect(plain(StreamConfig.defaults)).toEqual(plain(OriginalStreamConfig.defaults))
  })

  it("reads the defaults, the environment and the options as the original does, and refuses what it refuses", async () => {
    const outcomes = await holdsToOriginal(StreamConfig.settings, OriginalStreamConfig.settings, [
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
    const original = { ...OriginalStreamConfig.defaults, backoffBase: Duration3.seconds(2), backoffCap: Duration3.minutes(1) }
    for (const failures of [0, 1, 2, 3, 5, 6, 40]) {
      expect(Duration.toMillis(StreamConfig.backoff(settings, failures)), String(failures)).toBe(Duration3.toMillis(OriginalStreamConfig.backoff(original, failures)))
    }
    expect(Duration.toMillis(StreamConfig.backoff(settings, 3))).toBe(8_000)
  })
})

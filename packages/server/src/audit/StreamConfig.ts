/**
 * Audit streaming's settings: how often due streams are looked for, how long a receiver may take to answer, the
 * backoff after a failed delivery (a base doubled per consecutive failure, up to a cap), and the settle window that
 * keeps delivery behind events still being committed (audit/StreamDelivery.ts).
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { invalidSetting } from "../platform/Config.js"

export interface StreamSettings {
  /** How often the delivery loop looks for due streams while one is due that soon (StreamDelivery.ts says when else). */
  readonly pollInterval: Duration.Duration
  /** Longest a receiver may take to answer a delivery (or a test ping). */
  readonly timeout: Duration.Duration
  /** The wait after a stream's first failed delivery; doubled per further failure. */
  readonly backoffBase: Duration.Duration
  /** The longest wait between two attempts. */
  readonly backoffCap: Duration.Duration
  /** Only events at least this old are sent (see "the settle horizon" in StreamDelivery.ts). */
  readonly settle: Duration.Duration
}

export class StreamConfig extends Context.Service<StreamConfig, StreamSettings>()("@orgplane/server/audit/StreamConfig") {}

export const defaults: StreamSettings = {
  pollInterval: Duration.seconds(2),
  timeout: Duration.seconds(10),
  backoffBase: Duration.seconds(2),
  backoffCap: Duration.minutes(5),
  settle: Duration.seconds(5)
}

/** The documented environment variables, in the style of platform/Config.ts's (for `serve --help` and the README). */
export const environment = [
  ["ORGPLANE_AUDIT_STREAM_POLL_INTERVAL", "2 seconds", "How often the durable engine looks for audit streams with a delivery due."],
  ["ORGPLANE_AUDIT_STREAM_TIMEOUT", "10 seconds", "Longest an audit stream's endpoint may take to answer a delivery; then it counts as failed and is retried."],
  ["ORGPLANE_AUDIT_STREAM_BACKOFF_BASE", "2 seconds", "Wait before retrying an audit stream after its first failed delivery; doubled per further failure."],
  ["ORGPLANE_AUDIT_STREAM_BACKOFF_CAP", "5 minutes", "Longest wait between two delivery attempts of a failing audit stream."],
  ["ORGPLANE_AUDIT_STREAM_SETTLE", "5 seconds", "Audit events are streamed once at least this old (and older than every open transaction), so a slow commit cannot land behind what was sent."]
] as const

/** Settings given in code (tests, an embedding host); `undefined` keeps the environment's. */
export interface Options {
  readonly auditStreamPollInterval?: Duration.Input | undefined
  readonly auditStreamTimeout?: Duration.Input | undefined
  readonly auditStreamBackoffBase?: Duration.Input | undefined
  readonly auditStreamBackoffCap?: Duration.Input | undefined
  readonly auditStreamSettle?: Duration.Input | undefined
}

const duration = (given: Duration.Input | undefined, name: string, fallback: Duration.Duration) =>
  given === undefined ? Config.Duration(name).pipe(Config.withDefault(fallback)) : Config.succeed(Duration.fromInputUnsafe(given))

/** A refused setting, named, so the start-up error says which one (`ORGPLANE_X: message`). */
const invalid = (name: string, message: string) => Effect.fail(invalidSetting(name, message))

/** The settings from the environment, with `options` on top. */
export const settings = Effect.fn("StreamConfig.settings")(function*(options: Options = {}) {
  const pollInterval = yield* duration(options.auditStreamPollInterval, "ORGPLANE_AUDIT_STREAM_POLL_INTERVAL", defaults.pollInterval)
  const timeout = yield* duration(options.auditStreamTimeout, "ORGPLANE_AUDIT_STREAM_TIMEOUT", defaults.timeout)
  const backoffBase = yield* duration(options.auditStreamBackoffBase, "ORGPLANE_AUDIT_STREAM_BACKOFF_BASE", defaults.backoffBase)
  const backoffCap = yield* duration(options.auditStreamBackoffCap, "ORGPLANE_AUDIT_STREAM_BACKOFF_CAP", defaults.backoffCap)
  const settle = yield* duration(options.auditStreamSettle, "ORGPLANE_AUDIT_STREAM_SETTLE", defaults.settle)
  for (const [name, value] of [["ORGPLANE_AUDIT_STREAM_POLL_INTERVAL", pollInterval], ["ORGPLANE_AUDIT_STREAM_TIMEOUT", timeout], ["ORGPLANE_AUDIT_STREAM_BACKOFF_BASE", backoffBase]] as const) {
    if (Duration.toMillis(value) < 100) return yield* invalid(name, "must be at least 100 milliseconds, for example `2 seconds`")
  }
  if (Duration.isLessThan(backoffCap, backoffBase)) {
    return yield* invalid("ORGPLANE_AUDIT_STREAM_BACKOFF_CAP", "must be at least ORGPLANE_AUDIT_STREAM_BACKOFF_BASE")
  }
  return { pollInterval, timeout, backoffBase, backoffCap, settle } satisfies StreamSettings
})

export const layer = (options: Options = {}) => Layer.effect(StreamConfig, settings(options))

/** The wait after `failures` consecutive failed attempts (1 for the first): base × 2^(failures − 1), at most the cap. */
export const backoff = (config: StreamSettings, failures: number): Duration.Duration => {
  const base = Duration.toMillis(config.backoffBase)
  const cap = Duration.toMillis(config.backoffCap)
  return Duration.millis(Math.min(cap, base * 2 ** Math.min(Math.max(failures - 1, 0), 30)))
}

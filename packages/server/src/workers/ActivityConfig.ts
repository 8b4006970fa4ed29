/**
 * Worker activity's settings: the heartbeat interval runtimes are expected to keep (a worker is `online` within two
 * of them), when a silent worker counts as `offline`, and how many heartbeats of one worker a minute accepts.
 */
import { HEARTBEAT_STALE_MILLIS } from "@orgplane/schema"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { invalidSetting } from "../platform/Config.js"

export interface ActivitySettings {
  /** How often a runtime is expected to beat: `online` within two intervals of the last heartbeat's arrival. */
  readonly heartbeatInterval: Duration.Duration
  /** No heartbeat for this long: `offline` (`stale` between two intervals and this). */
  readonly offlineAfter: Duration.Duration
  /** Heartbeats of one worker accepted per minute; more are 429. */
  readonly heartbeatsPerMinute: number
}

export class ActivityConfig extends Context.Service<ActivityConfig, ActivitySettings>()("@orgplane/server/workers/ActivityConfig") {}

export const defaults = {
  heartbeatInterval: Duration.seconds(30),
  offlineAfter: Duration.millis(HEARTBEAT_STALE_MILLIS),
  // One every 5 seconds on average: six times the expected rate, room for a runtime's retries and restarts.
  heartbeatsPerMinute: 12
} as const

/** The documented environment variables, in the style of platform/Config.ts's (for `serve --help` and the README). */
export const environment = [
  ["ORGPLANE_WORKER_HEARTBEAT_INTERVAL", "30 seconds", "How often worker runtimes are expected to heartbeat (told to them in each answer); a worker is online within two intervals of its last heartbeat, then stale."],
  ["ORGPLANE_WORKER_OFFLINE_AFTER", "3 minutes", "A worker without a heartbeat for this long is offline (its transition recorded by a check every minute); more than two heartbeat intervals."],
  ["ORGPLANE_WORKER_HEARTBEATS_PER_MINUTE", "12", "Heartbeats of one worker accepted per minute; more answer 429 rate_limited with Retry-After."]
] as const

/** Settings given in code (tests, an embedding host); `undefined` keeps the environment's. */
export interface Options {
  readonly workerHeartbeatInterval?: Duration.Input | undefined
  readonly workerOfflineAfter?: Duration.Input | undefined
  readonly workerHeartbeatsPerMinute?: number | undefined
}

/** A refused setting, named in its message (`ORGPLANE_X: …`). */
const invalid = (name: string, message: string) => Effect.fail(invalidSetting(name, message))

/** The settings from the environment, with `options` on top. */
export const settings = Effect.fn("ActivityConfig.settings")(function*(options: Options = {}) {
  const heartbeatInterval = options.workerHeartbeatInterval === undefined
    ? yield* Config.Duration("ORGPLANE_WORKER_HEARTBEAT_INTERVAL").pipe(Config.withDefault(defaults.heartbeatInterval))
    : Duration.fromInputUnsafe(options.workerHeartbeatInterval)
  const offlineAfter = options.workerOfflineAfter === undefined
    ? yield* Config.Duration("ORGPLANE_WORKER_OFFLINE_AFTER").pipe(Config.withDefault(defaults.offlineAfter))
    : Duration.fromInputUnsafe(options.workerOfflineAfter)
  const heartbeatsPerMinute = options.workerHeartbeatsPerMinute ??
    (yield* Config.Int("ORGPLANE_WORKER_HEARTBEATS_PER_MINUTE").pipe(Config.withDefault(defaults.heartbeatsPerMinute)))
  if (Duration.toMillis(heartbeatInterval) < 1000) {
    return yield* invalid("ORGPLANE_WORKER_HEARTBEAT_INTERVAL", "must be at least 1 second, for example `30 seconds`")
  }
  if (Duration.toMillis(offlineAfter) <= 2 * Duration.toMillis(heartbeatInterval)) {
    return yield* invalid("ORGPLANE_WORKER_OFFLINE_AFTER", "must be longer than two heartbeat intervals (ORGPLANE_WORKER_HEARTBEAT_INTERVAL)")
  }
  if (!Number.isInteger(heartbeatsPerMinute) || heartbeatsPerMinute < 1) {
    return yield* invalid("ORGPLANE_WORKER_HEARTBEATS_PER_MINUTE", "must be a positive integer")
  }
  return { heartbeatInterval, offlineAfter, heartbeatsPerMinute } satisfies ActivitySettings
})

export const layer = (options: Options = {}) => Layer.effect(ActivityConfig, settings(options))

/** The instants that bound `online`, `stale` and `offline` at `at`: seen after `staleBefore` is online, at or before `offlineBefore` offline. */
export const bounds = (settings: ActivitySettings, at: Date) => ({
  staleBefore: new Date(at.getTime() - 2 * Duration.toMillis(settings.heartbeatInterval)),
  offlineBefore: new Date(at.getTime() - Duration.toMillis(settings.offlineAfter))
})

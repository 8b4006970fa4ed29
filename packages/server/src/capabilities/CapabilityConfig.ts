/** The capability passthroughs' settings: how long a suite has to answer one request. */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { invalidSetting } from "../platform/Config.js"

export interface CapabilitySettings {
  /** Longest one request to a suite's API may take: connecting, sending, and its whole answer. */
  readonly timeout: Duration.Duration
}

export class CapabilityConfig extends Context.Service<CapabilityConfig, CapabilitySettings>()("@orgplane/server/capabilities/CapabilityConfig") {}

/** 30 seconds, as the reference gives each Graph and Calendar request. */
export const defaultTimeout = Duration.seconds(30)

/** The documented environment variables, in the style of platform/Config.ts's (for `serve --help` and the README). */
export const environment = [
  [
    "ORGPLANE_CAPABILITY_TIMEOUT",
    "30 seconds",
    "Longest one request to a mail or calendar suite may take (a capability passthrough); then it answers 502 suite_a_api_error / suite_b_api_error. Token requests get at most 15 seconds."
  ]
] as const

/** Settings given in code (tests, an embedding host); `undefined` keeps the environment's. */
export interface Options {
  readonly capabilityTimeout?: Duration.Input | undefined
}

/** A refused setting, named, so the start-up error says which one (`ORGPLANE_X: message`). */
const invalid = invalidSetting

const fromEnvironment = Config.Duration("ORGPLANE_CAPABILITY_TIMEOUT").pipe(Config.withDefault(defaultTimeout))

/** The settings from the environment, with `options` on top. */
export const settings = Effect.fn("CapabilityConfig.settings")(function*(options: Options = {}) {
  const timeout = options.capabilityTimeout === undefined ? yield* fromEnvironment : Duration.fromInputUnsafe(options.capabilityTimeout)
  if (Duration.toMillis(timeout) <= 0) {
    return yield* Effect.fail(invalid("ORGPLANE_CAPABILITY_TIMEOUT", "must be a positive duration, for example `30 seconds`"))
  }
  return { timeout } satisfies CapabilitySettings
})

export const layer = (options: Options = {}) => Layer.effect(CapabilityConfig, settings(options))

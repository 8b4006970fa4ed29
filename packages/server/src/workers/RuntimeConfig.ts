/** The worker runtime client's settings: how long a runtime has to answer a forwarded request. */
import { Config, ConfigError, Context, Duration, Effect, Layer } from "effect"

export interface RuntimeSettings {
  /** Longest a whole exchange with a runtime may take: connecting, sending, and its whole answer. */
  readonly timeout: Duration.Duration
}

export class RuntimeConfig extends Context.Tag("@orgplane/server/workers/RuntimeConfig")<RuntimeConfig, RuntimeSettings>() {}

/** 30 seconds: an upgrade may have to pull an image before the runtime answers. */
export const defaultTimeout = Duration.seconds(30)

/** The documented environment variables, in the style of platform/Config.ts's (for `serve --help` and the README). */
export const environment = [
  ["ORGPLANE_WORKER_RUNTIME_TIMEOUT", "30 seconds", "Longest a worker's runtime may take to answer a forwarded request (upgrade); then it answers 502 worker_runtime_error."]
] as const

/** Settings given in code (tests, an embedding host); `undefined` keeps the environment's. */
export interface Options {
  readonly workerRuntimeTimeout?: Duration.DurationInput | undefined
}

const fromEnvironment = Config.duration("ORGPLANE_WORKER_RUNTIME_TIMEOUT").pipe(Config.withDefault(defaultTimeout))

/** The settings from the environment, with `options` on top. */
export const settings = (options: Options = {}): Effect.Effect<RuntimeSettings, ConfigError.ConfigError> =>
  Effect.gen(function*() {
    const timeout = options.workerRuntimeTimeout === undefined ? yield* fromEnvironment : Duration.decode(options.workerRuntimeTimeout)
    if (Duration.toMillis(timeout) <= 0) {
      return yield* Effect.fail(ConfigError.InvalidData(["ORGPLANE_WORKER_RUNTIME_TIMEOUT"], "must be a positive duration, for example `30 seconds`"))
    }
    return { timeout }
  })

export const layer = (options: Options = {}) => Layer.effect(RuntimeConfig, settings(options))

/** The worker runtime client's settings: how long a runtime has to answer a forwarded request. */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { invalidSetting } from "../platform/Config.js"

export interface RuntimeSettings {
  /** Longest a whole exchange with a runtime may take: connecting, sending, and its whole answer. */
  readonly timeout: Duration.Duration
}

export class RuntimeConfig extends Context.Service<RuntimeConfig, RuntimeSettings>()("@orgplane/server/workers/RuntimeConfig") {}

/** 30 seconds: an upgrade may have to pull an image before the runtime answers. */
export const defaultTimeout = Duration.seconds(30)

/** The documented environment variables, in the style of platform/Config.ts's (for `serve --help` and the README). */
export const environment = [
  ["ORGPLANE_WORKER_RUNTIME_TIMEOUT", "30 seconds", "Longest a worker's runtime may take to answer a forwarded request (upgrade); then it answers 502 worker_runtime_error."]
] as const

/** Settings given in code (tests, an embedding host); `undefined` keeps the environment's. */
export interface Options {
  readonly workerRuntimeTimeout?: Duration.Input | undefined
}

/** A refused setting, named in its message (`ORGPLANE_X: …`). */
const invalid = invalidSetting

const fromEnvironment = Config.Duration("ORGPLANE_WORKER_RUNTIME_TIMEOUT").pipe(Config.withDefault(defaultTimeout))

/** The settings from the environment, with `options` on top. */
export const settings = Effect.fn("RuntimeConfig.settings")(function*(options: Options = {}) {
  const timeout = options.workerRuntimeTimeout === undefined ? yield* fromEnvironment : Duration.fromInputUnsafe(options.workerRuntimeTimeout)
  if (Duration.toMillis(timeout) <= 0) {
    return yield* Effect.fail(invalid("ORGPLANE_WORKER_RUNTIME_TIMEOUT", "must be a positive duration, for example `30 seconds`"))
  }
  return { timeout } satisfies RuntimeSettings
})

export const layer = (options: Options = {}) => Layer.effect(RuntimeConfig, settings(options))

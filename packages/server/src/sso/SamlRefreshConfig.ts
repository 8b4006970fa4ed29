/**
 * The scheduled refresh of SAML IdP metadata URLs: how old a connection's latest fetch may grow before the job fetches
 * its metadata again (`ORGPLANE_SAML_METADATA_REFRESH_INTERVAL`).
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { invalidSetting } from "../platform/Config.js"

export interface SamlRefreshSettings {
  /** A metadata URL whose latest fetch is at least this old is fetched again by the next run of the job. */
  readonly interval: Duration.Duration
}

export class SamlRefreshConfig extends Context.Service<SamlRefreshConfig, SamlRefreshSettings>()("@orgplane/server/sso/SamlRefreshConfig") {}

export const defaults = {
  // IdPs publish a new certificate days or weeks before they sign with it: four looks a day see it in time, and
  // ask little of the IdP.
  interval: Duration.hours(6)
} as const

/** The job runs every 5 minutes: a shorter interval could not be kept. */
export const minimumInterval = Duration.minutes(5)

/** The documented environment variables, in the style of platform/Config.ts's (for `serve --help` and the README). */
export const environment = [
  [
    "ORGPLANE_SAML_METADATA_REFRESH_INTERVAL",
    "6 hours",
    "How often the metadata URL of each SAML connection is fetched again (at least 5 minutes): rotated certificates are taken, a failure keeps the settings and is shown on the connection."
  ]
] as const

/** Settings given in code (tests, an embedding host); `undefined` keeps the environment's. */
export interface Options {
  readonly samlMetadataRefreshInterval?: Duration.Input | undefined
}

/** A refused setting, named in its message (`ORGPLANE_X: …`). */
const invalid = invalidSetting

/** The settings from the environment, with `options` on top. */
export const settings = Effect.fn("SamlRefreshConfig.settings")(function*(options: Options = {}) {
  const interval = options.samlMetadataRefreshInterval === undefined
    ? yield* Config.Duration("ORGPLANE_SAML_METADATA_REFRESH_INTERVAL").pipe(Config.withDefault(defaults.interval))
    : Duration.fromInputUnsafe(options.samlMetadataRefreshInterval)
  if (Duration.isLessThan(interval, minimumInterval)) {
    return yield* Effect.fail(invalid("ORGPLANE_SAML_METADATA_REFRESH_INTERVAL", "must be at least 5 minutes, for example `6 hours`"))
  }
  return { interval } satisfies SamlRefreshSettings
})

export const layer = (options: Options = {}) => Layer.effect(SamlRefreshConfig, settings(options))

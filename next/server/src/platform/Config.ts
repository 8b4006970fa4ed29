/**
 * Server configuration: every setting an environment variable with a documented default (see the README's table
 * and `orgplane serve --help`). Flags of `orgplane serve` override the environment.
 *
 * Partial port (issue 46): the settings the platform reads so far (address, database, version). Left in
 * packages/server/src/platform/Config.ts: every other setting of `ServerSettings` (sign-up, plans, operator and setup
 * token, sessions, API keys, passwords, encryption keys, quotas, organization lifecycle, sign-in and recovery limits,
 * mail, proxy trust, body limit, logging and tracing, telemetry, outbound), `observabilityConfig`, `smtpUrlProblem`,
 * `publicUrl` and the documented environment's other rows.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { VERSION } from "../Version.js"

export interface ServerSettings {
  /** Interface the standalone server binds to. */
  readonly host: string
  readonly port: number
  /** Postgres URL; when absent the embedded database is used. */
  readonly databaseUrl: Redacted.Redacted | undefined
  /** Folder of the embedded database, or `"memory"` for a throwaway one. */
  readonly dataDir: string
  /** Connections to `DATABASE_URL` (the embedded database always has exactly one). */
  readonly dbPoolSize: number
  /** Longest wait for a database connection, new or from the pool. */
  readonly dbConnectTimeout: Duration.Duration
  /** Longest a statement may run; the client gives up on a silent server shortly after. */
  readonly dbStatementTimeout: Duration.Duration
  /** Reported by `/health` and the OpenAPI document. */
  readonly version: string
}

export class ServerConfig extends Context.Service<ServerConfig, ServerSettings>()("@orgplane/server/platform/Config") {}

/** The documented environment variables, shared by `--help` and the README (the rows of the settings ported so far). */
export const environment = [
  ["ORGPLANE_HOST", "127.0.0.1", "Interface to bind."],
  ["ORGPLANE_PORT", "8787", "Port to listen on."],
  ["DATABASE_URL", "(unset)", "Postgres URL. Unset: the embedded PGlite database in ORGPLANE_DATA_DIR."],
  ["ORGPLANE_DATA_DIR", "./.orgplane/data", "Embedded database folder; `memory` for a throwaway database."],
  ["ORGPLANE_DB_POOL_SIZE", "10", "Connections to DATABASE_URL (the embedded database always uses one)."],
  ["ORGPLANE_DB_CONNECT_TIMEOUT", "5 seconds", "Longest wait for a database connection; then the request answers 503."],
  ["ORGPLANE_DB_STATEMENT_TIMEOUT", "10 seconds", "Longest a statement may run; then the request answers 503 (the client gives up 1 second later)."],
  ["ORGPLANE_VERSION", "the package version", "Version reported by /health (for example a build or commit id); the OpenAPI document keeps the API contract's label, dev."]
] as const

/** A timeout: zero would mean "wait forever", which is what these settings exist to prevent. */
const positiveDuration = (name: string, defaultValue: Duration.Duration) =>
  Config.schema(
    Schema.DurationFromString.check(
      Schema.makeFilter((d) => Duration.toMillis(d) > 0 || "must be a positive duration, for example `5 seconds`")
    ),
    name
  ).pipe(Config.withDefault(defaultValue))

export const settingsConfig: Config.Config<ServerSettings> = Config.all({
  host: Config.String("ORGPLANE_HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.Port("ORGPLANE_PORT").pipe(Config.withDefault(8787)),
  databaseUrl: Config.option(Config.Redacted("DATABASE_URL")).pipe(
    Config.map((url) => Option.getOrUndefined(Option.filter(url, (value) => Redacted.value(value).trim() !== "")))
  ),
  dataDir: Config.String("ORGPLANE_DATA_DIR").pipe(Config.withDefault("./.orgplane/data")),
  dbPoolSize: Config.schema(Schema.Int.check(Schema.makeFilter((n) => n >= 1 || "must be at least 1")), "ORGPLANE_DB_POOL_SIZE").pipe(
    Config.withDefault(10)
  ),
  dbConnectTimeout: positiveDuration("ORGPLANE_DB_CONNECT_TIMEOUT", Duration.seconds(5)),
  dbStatementTimeout: positiveDuration("ORGPLANE_DB_STATEMENT_TIMEOUT", Duration.seconds(10)),
  version: Config.String("ORGPLANE_VERSION").pipe(
    Config.withDefault(VERSION),
    Config.map((version) => version.trim() === "" ? VERSION : version.trim())
  )
})

/** A setting as code gives it: a secret as a plain string (or `Redacted`), a duration as a `Duration.Input`. */
type Given<A> = A extends Redacted.Redacted<infer S> ? S | A : A extends Duration.Duration ? Duration.Input : A

/**
 * Settings given in code (an embedding host's options, command-line flags), as plain values: `databaseUrl:
 * "postgres://..."`, `dbStatementTimeout: "7 seconds"`. A setting left out, or `undefined`, keeps the environment's
 * value.
 */
export type Options = { readonly [K in keyof ServerSettings]?: Given<ServerSettings[K]> | undefined }

const secret = (value: string | Redacted.Redacted | undefined) =>
  value === undefined || Redacted.isRedacted(value) ? value : value.trim() === "" ? undefined : Redacted.make(value)

const duration = (value: Duration.Input | undefined) => value === undefined ? undefined : Duration.fromInputUnsafe(value)

/** `settings` with the options given in code on top. */
export const withOptions = (settings: ServerSettings, options: Options): ServerSettings => ({
  host: options.host ?? settings.host,
  port: options.port ?? settings.port,
  databaseUrl: secret(options.databaseUrl) ?? settings.databaseUrl,
  dataDir: options.dataDir ?? settings.dataDir,
  dbPoolSize: options.dbPoolSize ?? settings.dbPoolSize,
  dbConnectTimeout: duration(options.dbConnectTimeout) ?? settings.dbConnectTimeout,
  dbStatementTimeout: duration(options.dbStatementTimeout) ?? settings.dbStatementTimeout,
  version: options.version ?? settings.version
})

/** Reads the settings from the environment, with `options` (command-line flags, an embedding host's options) on top. */
export const layer = (options: Options = {}) =>
  Layer.effect(ServerConfig, Effect.map(settingsConfig, (settings) => withOptions(settings, options)))

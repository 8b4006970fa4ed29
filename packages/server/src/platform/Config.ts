/**
 * Server configuration: every setting an environment variable with a documented default (see the README's table
 * and `orgplane serve --help`). Flags of `orgplane serve` override the environment.
 */
import { Plan } from "@orgplane/schema"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
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
  /** Base address people and agents reach this server at; used to build claim links. */
  readonly publicUrl: string | undefined
  /**
   * The path a host mounts the server under (`/orgplane`), without a trailing slash; `""` at the root. The host
   * strips it before handing a request over; the OpenAPI document's `servers` and `GET /`'s links name it.
   */
  readonly basePath: string
  readonly signupEnabled: boolean
  readonly defaultPlan: Plan
  /**
   * Organization whose owners and admins operate the instance. When absent, the one whose owner redeems the setup
   * token (`POST /v1/admin/operator`); never one by default.
   */
  readonly operatorOrganizationId: string | undefined
  /**
   * The one-time setup token that makes an owner's organization the operator. When absent (and no operator is
   * configured or claimed), the server makes one at each start and logs it, valid 24 hours.
   */
  readonly setupToken: Redacted.Redacted | undefined
  readonly sessionTtl: Duration.Duration
  /** A session unused this long ends (beside `sessionTtl`, its absolute lifetime). */
  readonly sessionIdleTimeout: Duration.Duration
  /**
   * How young a session must be for the owner-level actions that ask for a recent authentication (ownership, owners,
   * SSO, SCIM, the audit log's retention and streams, API key creation, an organization's deletion and restoration);
   * older ones answer 403 `recent_authentication_required`.
   */
  readonly recentAuthentication: Duration.Duration
  /** The longest an API key may live: a key made without `expiresAt` expires after it, and none may be made to last longer. */
  readonly apiKeyMaxLifetime: Duration.Duration
  /** log2 of the scrypt cost for new password hashes (stored hashes carry their own cost). */
  readonly passwordCost: number
  /** `kid:base64key` entries, comma-separated; the first one encrypts, all of them decrypt. */
  readonly encryptionKeys: Redacted.Redacted | undefined
  /** Bootstrap workspaces one client address may create per hour. */
  readonly bootstrapPerHour: number
  /** Organizations one person may own (creating one past it answers 409 `organization_quota_reached`). */
  readonly organizationsPerUser: number
  /** Unexpired API keys one member may have in an organization (409 `api_key_quota_reached`). */
  readonly apiKeysPerMember: number
  /** Pending, unexpired invitations one organization may have (409 `invitation_quota_reached`). */
  readonly pendingInvitationsPerOrganization: number
  /** How long a deleted organization may be restored; then the purge removes every row of it. */
  readonly organizationDeletionGrace: Duration.Duration
  /** How long a bootstrapped workspace nobody claimed lives; then it is deleted and purged. */
  readonly provisionalWorkspaceLifetime: Duration.Duration
  /** How often the purge looks for organizations whose grace ended and unclaimed workspaces that expired. */
  readonly organizationPurgeInterval: Duration.Duration
  /** Sign-ups one client address (its IPv6 /64) may attempt per hour, taken or not: probing emails costs as much as taking them. */
  readonly signUpsPerHour: number
  /**
   * Failed password sign-ins counted within this window (a fixed one, from the first failure): past a limit, sign-in
   * answers 429 until the window ends (identity/SignInThrottle.ts).
   */
  readonly signInWindow: Duration.Duration
  /** Failed sign-ins of one email from one client address: the strict limit, which a stranger elsewhere cannot spend. */
  readonly signInFailuresPerAccountAndAddress: number
  /** Failed sign-ins of one email from any address (guessing spread over many); the addresses it signed in from are spared. */
  readonly signInFailuresPerAccount: number
  /** Failed sign-ins from one client address, whatever the emails (credential stuffing). */
  readonly signInFailuresPerAddress: number
  /** How long a password reset link works (issued by an owner, admin or the operator, by the server's command, or mailed). */
  readonly passwordResetTtl: Duration.Duration
  /** How long a mailed email verification link works. */
  readonly emailVerificationTtl: Duration.Duration
  /** Recovery requests (forgot-password, reset and verification links used) one client address may make per hour. */
  readonly recoveryRequestsPerAddress: number
  /** Recovery mails one email address may be sent per hour (reset links asked for it, verification links). */
  readonly recoveryMailsPerEmail: number
  /** `smtp://user:pass@host:587` or `smtps://…`: where the server sends mail. Unset: it sends none. */
  readonly smtpUrl: Redacted.Redacted | undefined
  /** The `From` of the server's mail (`orgplane <no-reply@example.com>`); required with `smtpUrl`. */
  readonly mailFrom: string | undefined
  /** Believe `X-Forwarded-For` for the client address (only behind a proxy you control). */
  readonly trustProxy: boolean
  /** Largest request body accepted, in bytes, unless an endpoint says otherwise (`MaxBodyBytes`). */
  readonly maxBodyBytes: number
  /** Least severe level written by the logger `Server.layer` installs. */
  readonly logLevel: LogLevelName
  /** How that logger writes a line. */
  readonly logFormat: LogFormat
  /** Make spans even without an OTLP endpoint (which turns them on by itself): platform/Tracing.ts. */
  readonly tracing: boolean
  /** Whole months of telemetry kept before the current one; older monthly partitions are dropped daily. */
  readonly telemetryRetentionMonths: number
  /** Private mode of the outbound guard: user-supplied destinations may reach private addresses, over http too. */
  readonly outboundAllowPrivate: boolean
}

/** A configured setup token guards the whole instance: too short, and it could be guessed. */
export const MIN_SETUP_TOKEN_LENGTH = 32

/** 13 months: a year of history and the same month of the year before, for comparisons. */
export const defaultTelemetryRetentionMonths = 13

/** 1 MiB: far above any body of this API, far below what a hostile client would like the server to hold. */
export const defaultMaxBodyBytes = 1024 * 1024

export const logLevels = ["debug", "info", "warn", "error", "none"] as const
export type LogLevelName = typeof logLevels[number]
export const logFormats = ["pretty", "json", "logfmt"] as const
export type LogFormat = typeof logFormats[number]

export class ServerConfig extends Context.Service<ServerConfig, ServerSettings>()("@orgplane/server/platform/Config") {}

/** The documented environment variables, shared by `--help` and the README. */
export const environment = [
  ["ORGPLANE_HOST", "127.0.0.1", "Interface to bind."],
  ["ORGPLANE_PORT", "8787", "Port to listen on."],
  ["DATABASE_URL", "(unset)", "Postgres URL. Unset: the embedded PGlite database in ORGPLANE_DATA_DIR."],
  ["ORGPLANE_DATA_DIR", "./.orgplane/data", "Embedded database folder; `memory` for a throwaway database."],
  ["ORGPLANE_CACHE_DIR", "the OS cache folder's orgplane/", "Where the migrated template of `memory` databases is kept (delete it any time; the next start makes it again)."],
  ["ORGPLANE_DB_POOL_SIZE", "10", "Connections to DATABASE_URL (the embedded database always uses one)."],
  ["ORGPLANE_DB_CONNECT_TIMEOUT", "5 seconds", "Longest wait for a database connection; then the request answers 503."],
  ["ORGPLANE_DB_STATEMENT_TIMEOUT", "10 seconds", "Longest a statement may run; then the request answers 503 (the client gives up 1 second later)."],
  ["ORGPLANE_VERSION", "the package version", "Version reported by /health (for example a build or commit id); the OpenAPI document keeps the API contract's label, dev."],
  ["ORGPLANE_PUBLIC_URL", "http://<host>:<port>", "Public base URL, used in claim links."],
  ["ORGPLANE_BASE_PATH", "(the root)", "The path a host mounts the server under (say /orgplane): the OpenAPI document's servers and GET /'s links name it. The host strips it before handing a request over."],
  ["ORGPLANE_SIGNUP_ENABLED", "true", "Allow POST /v1/auth/sign-up. When false, only the first account signs up; everyone else joins by invitation."],
  ["ORGPLANE_DEFAULT_PLAN", "free", "Plan of new organizations: free, team or enterprise."],
  ["ORGPLANE_OPERATOR_ORGANIZATION_ID", "(unset)", "Organization whose owners and admins operate the instance. Unset: the one whose owner redeems the setup token (never the first one created)."],
  ["ORGPLANE_SETUP_TOKEN", "(logged at start)", "One-time token that makes an owner's organization the operator (`orgplane admin claim-operator <token>`), at least 32 characters. Unset, while nothing operates the instance: each start logs a new one, valid 24 hours."],
  ["ORGPLANE_SESSION_TTL", "30 days", "Lifetime of a session token."],
  ["ORGPLANE_SESSION_IDLE_TIMEOUT", "7 days", "A session not used for this long ends (within a minute)."],
  ["ORGPLANE_RECENT_AUTHENTICATION", "2 hours", "How recently a session must have signed in for ownership, owner, SSO, SCIM, audit retention and stream changes, API key creation and organization deletion and restore; older ones answer 403 recent_authentication_required (sign in again)."],
  ["ORGPLANE_API_KEY_MAX_LIFETIME", "90 days", "Longest lifetime of a new API key: one made without expiresAt expires after it; a later expiresAt answers 400."],
  ["ORGPLANE_PASSWORD_COST", "15", "log2 of the scrypt cost for new password hashes (10 to 20)."],
  ["ORGPLANE_ENCRYPTION_KEYS", "(generated beside the data folder, encryption.key)", "kid:base64-32-byte-key[,...]; first encrypts, all decrypt (`orgplane keys generate` prints one). Required with DATABASE_URL: a server without its keys, or with keys that do not open its database's secrets, does not start."],
  ["ORGPLANE_BOOTSTRAP_PER_HOUR", "5", "Bootstrap workspaces per client address per hour."],
  ["ORGPLANE_ORGANIZATIONS_PER_USER", "10", "Organizations one person may own; one more answers 409 organization_quota_reached."],
  ["ORGPLANE_API_KEYS_PER_MEMBER", "20", "Unexpired API keys one member may have in an organization; one more answers 409 api_key_quota_reached."],
  ["ORGPLANE_PENDING_INVITATIONS_PER_ORGANIZATION", "200", "Pending, unexpired invitations one organization may have; one more answers 409 invitation_quota_reached."],
  ["ORGPLANE_ORGANIZATION_DELETION_GRACE", "7 days", "How long a deleted organization may be restored by its owners or the operator; then the purge removes every row of it."],
  ["ORGPLANE_PROVISIONAL_WORKSPACE_LIFETIME", "7 days", "How long a bootstrapped workspace that nobody claimed lives; then it is deleted and purged."],
  ["ORGPLANE_ORGANIZATION_PURGE_INTERVAL", "1 hour", "How often the purge looks for deleted organizations past their grace and expired unclaimed workspaces."],
  ["ORGPLANE_SIGN_UPS_PER_HOUR", "20", "Sign-up attempts per client address per hour, whatever their outcome; past it, 429 rate_limited with Retry-After."],
  ["ORGPLANE_SIGN_IN_WINDOW", "15 minutes", "Window of the password sign-in limits below (at most 1 day); past one, sign-in answers 429 rate_limited with Retry-After until the window ends."],
  ["ORGPLANE_SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS", "10", "Failed password sign-ins of one email from one client address per window."],
  ["ORGPLANE_SIGN_IN_FAILURES_PER_ACCOUNT", "50", "Failed password sign-ins of one email from any address per window; addresses it signed in from in the last 30 days are spared."],
  ["ORGPLANE_SIGN_IN_FAILURES_PER_ADDRESS", "100", "Failed password sign-ins from one client address per window, whatever the emails."],
  ["ORGPLANE_PASSWORD_RESET_TTL", "1 hour", "How long a one-time password reset link works (issued by an owner, admin or the operator, by `orgplane admin reset-password`, or mailed)."],
  ["ORGPLANE_EMAIL_VERIFICATION_TTL", "24 hours", "How long a mailed email verification link works."],
  ["ORGPLANE_RECOVERY_REQUESTS_PER_ADDRESS", "20", "Forgot-password requests and reset or verification links used, per client address per hour; past it, 429 rate_limited with Retry-After."],
  ["ORGPLANE_RECOVERY_MAILS_PER_EMAIL", "3", "Reset and verification mails per email address per hour; past it, 429 rate_limited with Retry-After."],
  ["ORGPLANE_SMTP_URL", "(unset)", "Mail server for reset and verification links: smtp://user:password@host:587 (STARTTLS when offered) or smtps://user:password@host:465. Unset: no mail; forgot-password and email verification answer 409 mail_not_configured."],
  ["ORGPLANE_MAIL_FROM", "(unset)", "From address of the server's mail, for example `orgplane <no-reply@example.com>`; required with ORGPLANE_SMTP_URL."],
  ["ORGPLANE_TRUST_PROXY", "false", "Take the client address from X-Forwarded-For."],
  ["ORGPLANE_MAX_BODY_BYTES", "1048576", "Largest request body in bytes (1 MiB); larger ones answer 413."],
  ["ORGPLANE_LOG_LEVEL", "info", "Least severe log level written: debug, info, warn, error or none."],
  ["ORGPLANE_LOG_FORMAT", "pretty", "Log lines as pretty (for people), json or logfmt (for collectors)."],
  ["ORGPLANE_TRACING", "false", "Make spans (requests, SQL statements, outbound calls, jobs) even with no OTLP endpoint: for the trace ids of JSON log lines, or a tracer an Effect host installs. An OTLP endpoint turns them on by itself."],
  ["ORGPLANE_TELEMETRY_RETENTION_MONTHS", "13", "Whole months of telemetry events kept before the current one (1 to 120); older months are dropped daily, older events are not stored."],
  ["ORGPLANE_OUTBOUND_ALLOW_PRIVATE", "false", "Let user-supplied outbound URLs (MCP servers, worker runtimes) reach loopback, private and link-local addresses, over http too; only for a trusted network."]
] as const

/** A mount path as the settings keep it: `/orgplane` (no trailing slash), `""` for the root; undefined when not a path. */
export const basePathOf = (value: string): string | undefined => {
  const trimmed = value.trim().replace(/\/+$/, "")
  if (trimmed === "") return ""
  return /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/.test(trimmed) && !trimmed.includes("//") ? trimmed : undefined
}

/** A setting refused with `message`. */
export const refusal = (message: string) => new Config.ConfigError(new ConfigProvider.SourceError({ message }))

/** The setting `name` refused, naming it (`ORGPLANE_X: must be positive`). */
export const invalidSetting = (name: string, message: string) => refusal(`${name}: ${message}`)

/** `config` whose value must pass `valid`, else the setting is refused with `message`. */
const validate = <A>(config: Config.Config<A>, message: string, valid: (value: A) => boolean): Config.Config<A> =>
  Config.mapEffect(config, (value) => valid(value) ? Effect.succeed(value) : Effect.fail(refusal(message)))

const isPlan = Schema.is(Plan)

const plan: Config.Config<Plan> = Config.mapEffect(
  Config.String("ORGPLANE_DEFAULT_PLAN").pipe(Config.withDefault("free")),
  (value) =>
    isPlan(value)
      ? Effect.succeed(value)
      : Effect.fail(refusal("must be free, team or enterprise"))
)

/** A timeout: zero would mean "wait forever", which is what these settings exist to prevent. */
const positiveDuration = (name: string, defaultValue: Duration.Duration) =>
  validate(
    Config.Duration(name).pipe(Config.withDefault(defaultValue)),
    "must be a positive duration, for example `5 seconds`",
    (d) => Duration.toMillis(d) > 0
  )

/** A limit: zero would refuse everything, which no setting should be able to do by accident. */
const atLeastOne = (name: string, defaultValue: number) =>
  validate(Config.Int(name).pipe(Config.withDefault(defaultValue)), "must be a whole number, at least 1", (n) => n >= 1)

const oneOf = <const A extends string>(name: string, values: ReadonlyArray<A>, fallback: A): Config.Config<A> =>
  Config.mapEffect(
    Config.String(name).pipe(Config.withDefault(fallback)),
    (raw) => {
      const value = raw.trim().toLowerCase()
      const found = values.find((candidate) => candidate === value)
      return found !== undefined
        ? Effect.succeed(found)
        : Effect.fail(refusal(`must be ${values.slice(0, -1).join(", ")} or ${values.at(-1)}`))
    }
  )

/** A setting without a default: `undefined` when the variable is unset. */
const optional = <A>(config: Config.Config<A>) => Config.option(config).pipe(Config.map(Option.getOrUndefined))

/** A secret that may be unset or blank (both `undefined`), and when given must pass `valid`. */
const optionalSecret = (name: string, message?: string, valid?: (value: string) => boolean) =>
  Config.option(
    message === undefined || valid === undefined
      ? Config.Redacted(name)
      : validate(Config.Redacted(name), message, (secret) => Redacted.value(secret).trim() === "" || valid(Redacted.value(secret)))
  ).pipe(Config.map((secret) => Option.getOrUndefined(Option.filter(secret, (value) => Redacted.value(value).trim() !== ""))))

/** The logger's and tracer's settings alone: read where the server is launched, before anything else logs. */
export const observabilityConfig: Config.Config<Pick<ServerSettings, "logLevel" | "logFormat" | "tracing">> = Config.all({
  logLevel: oneOf("ORGPLANE_LOG_LEVEL", logLevels, "info"),
  logFormat: oneOf("ORGPLANE_LOG_FORMAT", logFormats, "pretty"),
  tracing: Config.Boolean("ORGPLANE_TRACING").pipe(Config.withDefault(false))
})

export const settingsConfig: Config.Config<ServerSettings> = validate(
  Config.all({
    host: Config.String("ORGPLANE_HOST").pipe(Config.withDefault("127.0.0.1")),
    port: Config.Port("ORGPLANE_PORT").pipe(Config.withDefault(8787)),
    databaseUrl: optionalSecret("DATABASE_URL"),
    dataDir: Config.String("ORGPLANE_DATA_DIR").pipe(Config.withDefault("./.orgplane/data")),
    dbPoolSize: validate(Config.Int("ORGPLANE_DB_POOL_SIZE").pipe(Config.withDefault(10)), "must be at least 1", (n) => n >= 1),
    dbConnectTimeout: positiveDuration("ORGPLANE_DB_CONNECT_TIMEOUT", Duration.seconds(5)),
    dbStatementTimeout: positiveDuration("ORGPLANE_DB_STATEMENT_TIMEOUT", Duration.seconds(10)),
    version: Config.String("ORGPLANE_VERSION").pipe(
      Config.withDefault(VERSION),
      Config.map((version) => version.trim() === "" ? VERSION : version.trim())
    ),
    publicUrl: optional(Config.String("ORGPLANE_PUBLIC_URL")),
    basePath: Config.mapEffect(Config.String("ORGPLANE_BASE_PATH").pipe(Config.withDefault("")), (value) => {
      const path = basePathOf(value)
      return path === undefined ? Effect.fail(refusal("must be a path starting with /, say /orgplane")) : Effect.succeed(path)
    }),
    signupEnabled: Config.Boolean("ORGPLANE_SIGNUP_ENABLED").pipe(Config.withDefault(true)),
    defaultPlan: plan,
    operatorOrganizationId: optional(Config.String("ORGPLANE_OPERATOR_ORGANIZATION_ID")),
    setupToken: optionalSecret(
      "ORGPLANE_SETUP_TOKEN",
      `ORGPLANE_SETUP_TOKEN must be at least ${MIN_SETUP_TOKEN_LENGTH} characters (it makes whoever holds it the instance's operator)`,
      (token) => token.trim().length >= MIN_SETUP_TOKEN_LENGTH
    ),
    sessionTtl: Config.Duration("ORGPLANE_SESSION_TTL").pipe(Config.withDefault(Duration.days(30))),
    sessionIdleTimeout: positiveDuration("ORGPLANE_SESSION_IDLE_TIMEOUT", Duration.days(7)),
    recentAuthentication: positiveDuration("ORGPLANE_RECENT_AUTHENTICATION", Duration.hours(2)),
    apiKeyMaxLifetime: positiveDuration("ORGPLANE_API_KEY_MAX_LIFETIME", Duration.days(90)),
    passwordCost: validate(Config.Int("ORGPLANE_PASSWORD_COST").pipe(Config.withDefault(15)), "must be between 10 and 20", (n) => n >= 10 && n <= 20),
    encryptionKeys: optional(Config.Redacted("ORGPLANE_ENCRYPTION_KEYS")),
    bootstrapPerHour: Config.Int("ORGPLANE_BOOTSTRAP_PER_HOUR").pipe(Config.withDefault(5)),
    organizationsPerUser: atLeastOne("ORGPLANE_ORGANIZATIONS_PER_USER", 10),
    apiKeysPerMember: atLeastOne("ORGPLANE_API_KEYS_PER_MEMBER", 20),
    pendingInvitationsPerOrganization: atLeastOne("ORGPLANE_PENDING_INVITATIONS_PER_ORGANIZATION", 200),
    organizationDeletionGrace: positiveDuration("ORGPLANE_ORGANIZATION_DELETION_GRACE", Duration.days(7)),
    provisionalWorkspaceLifetime: positiveDuration("ORGPLANE_PROVISIONAL_WORKSPACE_LIFETIME", Duration.days(7)),
    organizationPurgeInterval: positiveDuration("ORGPLANE_ORGANIZATION_PURGE_INTERVAL", Duration.hours(1)),
    signUpsPerHour: atLeastOne("ORGPLANE_SIGN_UPS_PER_HOUR", 20),
    signInWindow: validate(
      positiveDuration("ORGPLANE_SIGN_IN_WINDOW", Duration.minutes(15)),
      "must be at most 1 day (the longest window a rate limit keeps)",
      (d) => Duration.toMillis(d) <= Duration.toMillis(Duration.days(1))
    ),
    signInFailuresPerAccountAndAddress: atLeastOne("ORGPLANE_SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS", 10),
    signInFailuresPerAccount: atLeastOne("ORGPLANE_SIGN_IN_FAILURES_PER_ACCOUNT", 50),
    signInFailuresPerAddress: atLeastOne("ORGPLANE_SIGN_IN_FAILURES_PER_ADDRESS", 100),
    passwordResetTtl: positiveDuration("ORGPLANE_PASSWORD_RESET_TTL", Duration.hours(1)),
    emailVerificationTtl: positiveDuration("ORGPLANE_EMAIL_VERIFICATION_TTL", Duration.hours(24)),
    recoveryRequestsPerAddress: atLeastOne("ORGPLANE_RECOVERY_REQUESTS_PER_ADDRESS", 20),
    recoveryMailsPerEmail: atLeastOne("ORGPLANE_RECOVERY_MAILS_PER_EMAIL", 3),
    smtpUrl: optionalSecret(
      "ORGPLANE_SMTP_URL",
      "ORGPLANE_SMTP_URL must be an smtp:// or smtps:// URL (smtp://user:password@host:587)",
      (url) => smtpUrlProblem(url) === undefined
    ),
    mailFrom: optional(Config.String("ORGPLANE_MAIL_FROM")).pipe(Config.map((from) => from?.trim() === "" ? undefined : from?.trim())),
    trustProxy: Config.Boolean("ORGPLANE_TRUST_PROXY").pipe(Config.withDefault(false)),
    maxBodyBytes: validate(
      Config.Int("ORGPLANE_MAX_BODY_BYTES").pipe(Config.withDefault(defaultMaxBodyBytes)),
      "must be a positive number of bytes",
      (n) => n > 0
    ),
    observability: observabilityConfig,
    telemetryRetentionMonths: validate(
      Config.Int("ORGPLANE_TELEMETRY_RETENTION_MONTHS").pipe(Config.withDefault(defaultTelemetryRetentionMonths)),
      "must be a whole number of months from 1 to 120",
      (n) => n >= 1 && n <= 120
    ),
    outboundAllowPrivate: Config.Boolean("ORGPLANE_OUTBOUND_ALLOW_PRIVATE").pipe(Config.withDefault(false))
  }).pipe(Config.map(({ observability, ...settings }): ServerSettings => ({ ...settings, ...observability }))),
  "ORGPLANE_MAIL_FROM must be set with ORGPLANE_SMTP_URL (the From address of the server's mail, say `orgplane <no-reply@example.com>`)",
  (settings) => settings.smtpUrl === undefined || settings.mailFrom !== undefined
)

/** Why a mail server URL is not one the server sends through, or undefined: `smtp://` or `smtps://` with a host. */
export const smtpUrlProblem = (value: string): string | undefined => {
  let url: URL
  try {
    url = new URL(value.trim())
  } catch {
    return "is not a URL"
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") return "must start with smtp:// or smtps://"
  if (url.hostname === "") return "must name a host"
  return undefined
}

/** A setting as code gives it: a secret as a plain string (or `Redacted`), a duration as a `DurationInput`. */
type Given<A> = A extends Redacted.Redacted<infer S> ? S | A : A extends Duration.Duration ? Duration.Input : A

/**
 * Settings given in code (an embedding host's options, command-line flags), as plain values: `databaseUrl:
 * "postgres://..."`, `sessionTtl: "7 days"`. A setting left out, or `undefined`, keeps the environment's value.
 */
export type Options = { readonly [K in keyof ServerSettings]?: Given<ServerSettings[K]> | undefined }

const secret = (value: string | Redacted.Redacted | undefined) =>
  value === undefined || Redacted.isRedacted(value) ? value : value.trim() === "" ? undefined : Redacted.make(value)

const duration = (value: Duration.Input | undefined) => value === undefined ? undefined : Duration.fromInputUnsafe(value)

/** The members of `values` that are not `undefined`. */
const given = <A extends object>(values: A) =>
  Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as {
    readonly [K in keyof A]?: Exclude<A[K], undefined>
  }

/**
 * `settings` with the options given in code on top. Options of other parts of the server (the code host's, the
 * durable engine's: all of `ServerOptions` may be passed) are left out.
 */
export const withOptions = (settings: ServerSettings, options: Options): ServerSettings => {
  const {
    databaseUrl,
    encryptionKeys,
    setupToken,
    dbConnectTimeout,
    dbStatementTimeout,
    sessionTtl,
    sessionIdleTimeout,
    recentAuthentication,
    apiKeyMaxLifetime,
    signInWindow,
    passwordResetTtl,
    emailVerificationTtl,
    smtpUrl,
    organizationDeletionGrace,
    provisionalWorkspaceLifetime,
    organizationPurgeInterval,
    basePath,
    ...plain
  } = options
  const own = Object.fromEntries(Object.entries(plain).filter(([key]) => key in settings))
  return {
    ...settings,
    ...given(own),
    ...given({
      databaseUrl: secret(databaseUrl),
      encryptionKeys: secret(encryptionKeys),
      setupToken: secret(setupToken),
      dbConnectTimeout: duration(dbConnectTimeout),
      dbStatementTimeout: duration(dbStatementTimeout),
      sessionTtl: duration(sessionTtl),
      sessionIdleTimeout: duration(sessionIdleTimeout),
      recentAuthentication: duration(recentAuthentication),
      apiKeyMaxLifetime: duration(apiKeyMaxLifetime),
      signInWindow: duration(signInWindow),
      passwordResetTtl: duration(passwordResetTtl),
      emailVerificationTtl: duration(emailVerificationTtl),
      smtpUrl: secret(smtpUrl),
      organizationDeletionGrace: duration(organizationDeletionGrace),
      provisionalWorkspaceLifetime: duration(provisionalWorkspaceLifetime),
      organizationPurgeInterval: duration(organizationPurgeInterval),
      // Kept as given when it is not a path: `layer` refuses it.
      basePath: basePath === undefined ? undefined : basePathOf(basePath) ?? basePath
    })
  }
}

/** Reads the settings from the environment, with `options` (command-line flags, an embedding host's options) on top. */
export const layer = (options: Options = {}) =>
  Layer.effect(
    ServerConfig,
    Effect.flatMap(settingsConfig, (settings) => {
      const merged = withOptions(settings, options)
      return basePathOf(merged.basePath) === merged.basePath
        ? Effect.succeed(merged)
        : Effect.fail(invalidSetting("basePath", "must be a path starting with /, say /orgplane"))
    })
  )

/**
 * The base URL links point at: `ORGPLANE_PUBLIC_URL` (the address people reach, a host's mount included), else the
 * configured host and port under the mount (`basePath`), where the host serves this server's routes.
 */
export const publicUrl = (settings: Pick<ServerSettings, "publicUrl" | "host" | "port" | "basePath">) =>
  settings.publicUrl === undefined ? `http://${settings.host}:${settings.port}${settings.basePath}` : settings.publicUrl.replace(/\/+$/, "")

/**
 * The server's metrics in Prometheus' text format (`GET /metrics`, served by system/MetricsEndpoint.ts), off unless
 * configured: with `ORGPLANE_METRICS_TOKEN` on the server's own port, behind that bearer token; with
 * `ORGPLANE_METRICS_PORT` on a management listener of its own (`ORGPLANE_METRICS_HOST`, loopback by default), behind
 * the token when one is set. A management listener bound to anything but loopback must have the token: metrics are
 * never served to the network without one.
 *
 * Off, nothing of it runs: no middleware at the request edge, no route, no observer on the database, and the
 * counters in the sign-in paths (`signInOutcome`) find no recorder. On, a request costs one route lookup and a few
 * updates of in-memory series (`Metric`, in a registry of this server's own, so servers sharing a process do not
 * mix their counts), and a scrape reads the durable jobs and the audit streams from the database.
 *
 * Labels are bounded: the HttpApi operation (never the URL; `unknown` for a path no route has), the method (`other`
 * past the usual ones), the status class, fixed outcome codes; an organization's id only when
 * `ORGPLANE_METRICS_ORGANIZATION_LABELS` asks for it, at most `organizationLabelLimit` of them (the rest `other`).
 * Never a person's email, token or id.
 */
import * as MachineId from "effect/cluster/MachineId"
import * as Snowflake from "effect/cluster/Snowflake"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"
import * as SqlClient from "effect/sql/SqlClient"
import { invalidSetting } from "./Config.js"
import { VERSION } from "../Version.js"
import type * as Routes from "./Routes.js"

/** The route it is served on, beside the API (not part of the OpenAPI document, like `/docs`). */
export const path = "/metrics"
export const routes = [["GET", path]] as const

export interface MetricsSettings {
  /** The bearer a scraper sends; undefined: none asked (only on a loopback management listener). */
  readonly token: Redacted.Redacted | undefined
  /** The management listener's port; undefined: `/metrics` is on the server's own port (when a token is set). */
  readonly port: number | undefined
  readonly host: string
  /** Label sign-ins and audit stream lag by organization id (at most `organizationLabelLimit` of them). */
  readonly organizationLabels: boolean
}

/** Served at all: a token, or a management port. */
export const enabled = (settings: MetricsSettings) => settings.token !== undefined || settings.port !== undefined

/** Where `/metrics` is served: the server's own port, a management listener, or nowhere. */
export const placement = (settings: MetricsSettings): "main" | "management" | "off" =>
  settings.port !== undefined ? "management" : settings.token !== undefined ? "main" : "off"

/** A token shorter than this could be guessed. */
export const minTokenLength = 16

/** How many organizations get a label of their own when `organizationLabels` is on. */
export const organizationLabelLimit = 100

/** The documented environment variables, in the style of platform/Config.ts's (for `serve --help` and the README). */
export const environment = [
  ["ORGPLANE_METRICS_TOKEN", "(unset)", `Serve GET /metrics (Prometheus text format) to a scraper sending \`Authorization: Bearer <token>\` (at least ${minTokenLength} characters): on the server's port, or on ORGPLANE_METRICS_PORT when set. Unset (and no ORGPLANE_METRICS_PORT): no /metrics.`],
  ["ORGPLANE_METRICS_PORT", "(unset)", "Serve GET /metrics on a management listener of its own, on this port (and not on the server's port); it asks for ORGPLANE_METRICS_TOKEN when that is set."],
  ["ORGPLANE_METRICS_HOST", "127.0.0.1", "Interface of the metrics listener; any but loopback requires ORGPLANE_METRICS_TOKEN."],
  ["ORGPLANE_METRICS_ORGANIZATION_LABELS", "false", `Label sign-in events and audit stream lag with the organization's id (at most ${organizationLabelLimit} organizations; the rest are \`other\`).`]
] as const

/** Settings given in code (tests, an embedding host); `undefined` keeps the environment's. */
export interface Options {
  readonly metricsToken?: string | Redacted.Redacted | undefined
  readonly metricsPort?: number | undefined
  readonly metricsHost?: string | undefined
  readonly metricsOrganizationLabels?: boolean | undefined
}

const isLoopback = (host: string) => host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)

/** The settings from the environment, with `options` on top; a bad value fails naming its variable. */
export const settings = Effect.fn("Metrics.settings")(function*(options: Options = {}) {
  const given = options.metricsToken
  const read = given !== undefined
    ? (Redacted.isRedacted(given) ? given : Redacted.make(given))
    : Option.getOrUndefined(yield* Config.option(Config.Redacted("ORGPLANE_METRICS_TOKEN")))
  // Blank is unset; a token is kept trimmed, as a scraper's header carries it.
  const value = read === undefined ? "" : Redacted.value(read).trim()
  if (value !== "" && value.length < minTokenLength) {
    return yield* Effect.fail(invalidSetting("ORGPLANE_METRICS_TOKEN", `must be at least ${minTokenLength} characters`))
  }
  if (value !== "" && !/^[\x21-\x7e]+$/.test(value)) {
    return yield* Effect.fail(invalidSetting("ORGPLANE_METRICS_TOKEN", "must be printable ASCII without spaces (it is sent in a header)"))
  }
  const cleanToken = value === "" ? undefined : Redacted.make(value)
  const port = options.metricsPort ?? Option.getOrUndefined(yield* Config.option(Config.Port("ORGPLANE_METRICS_PORT")))
  const host = options.metricsHost ?? (yield* Config.String("ORGPLANE_METRICS_HOST").pipe(Config.withDefault("127.0.0.1")))
  const organizationLabels = options.metricsOrganizationLabels ??
    (yield* Config.Boolean("ORGPLANE_METRICS_ORGANIZATION_LABELS").pipe(Config.withDefault(false)))
  if (port !== undefined && cleanToken === undefined && !isLoopback(host.trim())) {
    return yield* Effect.fail(invalidSetting("ORGPLANE_METRICS_HOST", "a metrics listener on an address other than loopback requires ORGPLANE_METRICS_TOKEN"))
  }
  return { token: cleanToken, port, host: host.trim(), organizationLabels } satisfies MetricsSettings
})

// ---------------------------------------------------------------------------------------------------------------
// The series
// ---------------------------------------------------------------------------------------------------------------

/** Seconds, from 5 ms to 10 s: the SLO buckets (Keycloak's `http-metrics-slos` are 5…10000 ms). */
export const durationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const

/** The metric names, as the dashboard and the rules read them (docs/grafana, docs/prometheus). */
export const names = {
  requestDuration: "orgplane_http_server_request_duration_seconds",
  activeRequests: "orgplane_http_server_active_requests",
  scimRequests: "orgplane_scim_requests_total",
  signInEvents: "orgplane_sign_in_events_total",
  statementDuration: "orgplane_db_statement_duration_seconds",
  connectionWait: "orgplane_db_connection_wait_seconds",
  connectionsInUse: "orgplane_db_connections_in_use",
  connectionsWaiting: "orgplane_db_connections_waiting",
  connectionsMax: "orgplane_db_connections_max",
  durablePending: "orgplane_durable_jobs_pending",
  durableOldestPendingAge: "orgplane_durable_jobs_oldest_pending_age_seconds",
  durableFailed: "orgplane_durable_jobs_failed_last_hour",
  auditStreams: "orgplane_audit_streams",
  documentDriftFields: "orgplane_document_drift_fields",
  auditStreamLag: "orgplane_audit_stream_delivery_lag_seconds",
  collectErrors: "orgplane_metrics_collect_errors_total",
  buildInfo: "orgplane_build_info"
} as const

const methods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

const statusClass = (status: number) => status >= 500 ? "5xx" : status >= 400 ? "4xx" : status >= 300 ? "3xx" : status >= 200 ? "2xx" : "1xx"

/** A fixed code (`invalid_credentials`, `rate_limited`) as a label value; anything else is `error`. */
const codeLabel = (value: unknown) => typeof value === "string" && /^[a-z][a-z0-9_]{0,47}$/.test(value) ? value : "error"

/** One series per label set, made once: an update is then a map lookup and an increment. */
const series = <M>(make: (attributes: Readonly<Record<string, string>>) => M) => {
  const made = new Map<string, M>()
  return (attributes: Readonly<Record<string, string>>) => {
    const key = Object.values(attributes).join("\u0000")
    let found = made.get(key)
    if (found === undefined) made.set(key, found = make(attributes))
    return found
  }
}

/** What the database reports to, when metrics are on (read by platform/Database.ts as its pool is made). */
export interface DatabaseObserver {
  /** A statement answered (or failed) after `seconds`. */
  readonly statement: (seconds: number, ok: boolean) => void
  /** A wait for a connection began (+1) or ended (−1). */
  readonly waiting: (delta: 1 | -1) => void
  /** A connection was handed over after `seconds` of waiting (+1), or given back (−1). */
  readonly inUse: (delta: 1 | -1, waitedSeconds?: number) => void
  /** The pool's bound, reported once. */
  readonly poolSize: (max: number) => void
}

export const DatabaseObserver = Context.Reference<DatabaseObserver | undefined>("@orgplane/server/platform/Metrics/DatabaseObserver", {
  defaultValue: () => undefined
})

/** The series of one server, in a registry of its own. */
export interface Recorder {
  readonly settings: MetricsSettings
  /** A request answered: its operation (`unknown` without a route), method, status and duration. */
  readonly request: (operation: string, method: string, status: number, seconds: number) => void
  readonly active: (delta: 1 | -1) => void
  readonly signIn: (method: SignInMethod, outcome: string, organizationId?: string | undefined) => void
  readonly database: DatabaseObserver
  /** The text of a scrape: the in-memory series, and what is read from the database now. */
  readonly scrape: (sql: SqlClient.SqlClient) => Effect.Effect<string>
}

/** The recorder of a server whose metrics are on; undefined (the default) when they are off. */
export const CurrentRecorder = Context.Reference<Recorder | undefined>("@orgplane/server/platform/Metrics/CurrentRecorder", {
  defaultValue: () => undefined
})

export const signInMethods = ["password", "oidc", "saml", "api_key"] as const
export type SignInMethod = typeof signInMethods[number]

interface Durable {
  readonly prefix: string
}

const makeRecorder = (settings: MetricsSettings, durable: Durable, version: string): Recorder => {
  const registry: Metric.MetricRegistry = new Map()
  const context = Context.make(Metric.MetricRegistry, registry)
  const organizations = new Set<string>()
  const organizationLabel = (id: string | undefined) => {
    if (id === undefined) return "none"
    if (organizations.has(id)) return id
    if (organizations.size >= organizationLabelLimit || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) return "other"
    organizations.add(id)
    return id
  }

  const requestDuration = series((attributes) =>
    Metric.histogram(names.requestDuration, { description: "Time to answer an HTTP request, by HttpApi operation, method and status class.", boundaries: durationBuckets, attributes }))
  const scimRequests = series((attributes) =>
    Metric.counter(names.scimRequests, { description: "SCIM protocol requests answered, by operation and status.", incremental: true, attributes }))
  const signIns = series((attributes) =>
    Metric.counter(names.signInEvents, { description: "Sign-in attempts, by method (password, oidc, saml, api_key) and outcome (success or a fixed refusal code).", incremental: true, attributes }))
  const statements = series((attributes) =>
    Metric.histogram(names.statementDuration, { description: "Time for the database to answer a statement, by outcome.", boundaries: durationBuckets, attributes }))
  const collectErrors = series((attributes) =>
    Metric.counter(names.collectErrors, { description: "Scrape-time reads that failed (their series are left out of that scrape), by source.", incremental: true, attributes }))
  const active = Metric.gauge(names.activeRequests, { description: "HTTP requests being answered now." })
  const connectionWait = Metric.histogram(names.connectionWait, { description: "Time a statement waited for a database connection.", boundaries: durationBuckets })
  const inUse = Metric.gauge(names.connectionsInUse, { description: "Database connections the server holds for a statement or a transaction now." })
  const waiting = Metric.gauge(names.connectionsWaiting, { description: "Statements waiting for a database connection now." })
  const poolMax = Metric.gauge(names.connectionsMax, { description: "The most database connections the server opens (ORGPLANE_DB_POOL_SIZE; 1 for the embedded database)." })
  const pending = Metric.gauge(names.durablePending, { description: "Durable job messages due and not yet processed (read at scrape time)." })
  const oldestPending = Metric.gauge(names.durableOldestPendingAge, { description: "Age of the oldest due, unprocessed durable job message; 0 when none (read at scrape time)." })
  const failed = Metric.gauge(names.durableFailed, { description: "Durable jobs that ended in failure within the last hour (read at scrape time)." })
  const streams = series((attributes) => Metric.gauge(names.auditStreams, { description: "Audit streams, by status (active, paused) and whether their last delivery failed (read at scrape time).", attributes }))
  const streamLag = series((attributes) =>
    Metric.gauge(names.auditStreamLag, { description: "Age of the oldest audit event an active stream has not delivered yet; 0 when caught up (read at scrape time).", attributes }))
  const driftFields = series((attributes) =>
    Metric.gauge(names.documentDriftFields, {
      description: "Fields that differ from organizations' applied documents, by kind (member, team, ...) and field, as the drift job last found them; 0 when none (read at scrape time).",
      attributes
    }))
  Metric.gauge(names.buildInfo, { description: "The server's version, as a label; always 1.", attributes: { version } }).updateUnsafe(1, context)
  // Present from the first scrape, at 0, so rules and dashboards read a series rather than none.
  active.updateUnsafe(0, context)
  inUse.updateUnsafe(0, context)
  waiting.updateUnsafe(0, context)
  for (const source of ["durable", "audit_streams", "document_drift"]) collectErrors({ source }).updateUnsafe(0, context)
  if (!settings.organizationLabels) {
    for (const method of signInMethods) signIns({ method, outcome: "success" }).updateUnsafe(0, context)
  }

  const database: DatabaseObserver = {
    statement: (seconds, ok) => statements({ outcome: ok ? "success" : "error" }).updateUnsafe(seconds, context),
    waiting: (delta) => waiting.modifyUnsafe(delta, context),
    inUse: (delta, waitedSeconds) => {
      inUse.modifyUnsafe(delta, context)
      if (waitedSeconds !== undefined) connectionWait.updateUnsafe(waitedSeconds, context)
    },
    poolSize: (max) => poolMax.updateUnsafe(max, context)
  }

  const readDurable = (sql: SqlClient.SqlClient, now: number) =>
    Effect.gen(function*() {
      const messages = sql(`${durable.prefix}_messages`)
      const replies = sql(`${durable.prefix}_replies`)
      const [due] = yield* sql<{ readonly pending: number; readonly oldest: number | null }>`/* durable jobs for /metrics (platform/Metrics.ts) */
        SELECT count(*)::int AS pending, (min(id) >> 22)::float8 AS oldest FROM ${messages}
        WHERE kind = 0 AND processed = false AND (deliver_at IS NULL OR deliver_at <= ${now})`
      // Message and reply ids are snowflakes: their time in their top bits, so the last hour is a range of the key.
      const hourAgo = Snowflake.make({ timestamp: now - 3_600_000, machineId: MachineId.make(0), sequence: 0 }).toString()
      const [failures] = yield* sql<{ readonly failed: number }>`/* durable job failures for /metrics (platform/Metrics.ts) */
        SELECT count(*)::int AS failed FROM ${replies}
        WHERE kind = 0 AND id >= ${hourAgo}::bigint AND payload LIKE '{"_tag":"Failure"%'`
      pending.updateUnsafe(due?.pending ?? 0, context)
      oldestPending.updateUnsafe(due?.oldest == null ? 0 : Math.max(0, (now - Snowflake.constEpochMillis - due.oldest) / 1000), context)
      failed.updateUnsafe(failures?.failed ?? 0, context)
    })

  const readAuditStreams = (sql: SqlClient.SqlClient, now: number) =>
    Effect.gen(function*() {
      const rows = yield* sql<{ readonly organizationId: string; readonly status: string; readonly failing: boolean; readonly oldest: Date | string | null }>`
        /* instance-wide: audit streams' state and delivery lag for /metrics (platform/Metrics.ts) */
        SELECT s.organization_id, s.status, s.consecutive_failures > 0 AS failing,
          (SELECT min(e.occurred_at) FROM audit_events e
            WHERE e.organization_id = s.organization_id AND (e.occurred_at, e.id) > (s.cursor_occurred_at, s.cursor_event_id)) AS oldest
        FROM audit_streams s`
      const counts = new Map<string, number>()
      const lags = new Map<string, number>()
      for (const key of ["active false", "active true", "paused false", "paused true"]) counts.set(key, 0)
      if (!settings.organizationLabels) lags.set("none", 0)
      for (const row of rows) {
        const key = `${row.status === "paused" ? "paused" : "active"} ${row.failing}`
        counts.set(key, (counts.get(key) ?? 0) + 1)
        if (row.status !== "active") continue
        const label = settings.organizationLabels ? organizationLabel(row.organizationId) : "none"
        const lag = row.oldest === null ? 0 : Math.max(0, (now - new Date(row.oldest).getTime()) / 1000)
        lags.set(label, Math.max(lags.get(label) ?? 0, lag))
      }
      for (const [key, count] of counts) {
        const [status, failing] = key.split(" ")
        streams({ status: status!, failing: failing! }).updateUnsafe(count, context)
      }
      for (const [organization, lag] of lags) {
        streamLag(settings.organizationLabels ? { organization } : {}).updateUnsafe(lag, context)
      }
    })

  /** Kinds and fields seen drifting before: set back to 0 when they no longer drift, so a series ends at 0. */
  const driftSeen = new Set<string>()
  const readDocumentDrift = (sql: SqlClient.SqlClient) =>
    Effect.gen(function*() {
      const rows = yield* sql<{ readonly kind: string; readonly field: string; readonly count: number }>`
        /* instance-wide: fields drifted from applied documents for /metrics (platform/Metrics.ts) */
        SELECT c ->> 'kind' AS kind, f ->> 'field' AS field, count(*)::int AS count
        FROM organization_documents d, jsonb_array_elements(d.drift -> 'changes') c, jsonb_array_elements(c -> 'fields') f
        WHERE d.drift IS NOT NULL GROUP BY 1, 2`
      const counts = new Map<string, number>([...driftSeen].map((key) => [key, 0]))
      for (const row of rows) counts.set(`${row.kind} ${row.field}`, row.count)
      for (const [key, count] of counts) {
        driftSeen.add(key)
        const [kind, field] = key.split(" ")
        driftFields({ kind: kind!, field: field! }).updateUnsafe(count, context)
      }
    })

  /** A scrape-time read that fails (the engine's tables not made yet, the database down) is counted, not fatal. */
  const collected = (source: string, read: Effect.Effect<void, unknown>) =>
    read.pipe(Effect.timeout("5 seconds"), Effect.catchCause(() => Effect.sync(() => collectErrors({ source }).updateUnsafe(1, context))))

  return {
    settings,
    request: (operation, method, status, seconds) => {
      const verb = methods.has(method) ? method : "other"
      requestDuration({ operation, method: verb, status_class: statusClass(status) }).updateUnsafe(seconds, context)
      if (operation.startsWith("scim")) scimRequests({ operation, status: String(status) }).updateUnsafe(1, context)
    },
    active: (delta) => active.modifyUnsafe(delta, context),
    signIn: (method, outcome, organizationId) =>
      signIns(settings.organizationLabels ? { method, outcome: codeLabel(outcome), organization: organizationLabel(organizationId) } : { method, outcome: codeLabel(outcome) })
        .updateUnsafe(1, context),
    database,
    scrape: (sql) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        yield* Effect.all([
          collected("durable", readDurable(sql, now)),
          collected("audit_streams", readAuditStreams(sql, now)),
          collected("document_drift", readDocumentDrift(sql))
        ], { concurrency: 3, discard: true })
        return PrometheusMetrics.formatUnsafe(context)
      })
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Recording
// ---------------------------------------------------------------------------------------------------------------

/** The operation a route is named by in the series: the HttpApi endpoint's name, or an extra route's path. */
const operationOf = (routes: Routes.Routes, method: string, url: string) => routes.find(method, url)?.route.operation ?? "unknown"

/**
 * The request edge's outermost middleware when metrics are on: the request counted in flight while it runs, and its
 * duration recorded by operation, method and status class as it is answered (a pre-response handler: the status as
 * sent, a client that hung up counted as the platform's 499).
 */
export const middleware = (recorder: Recorder, routes: Routes.Routes) =>
<E, R>(
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.withFiber((fiber) => {
    const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
    const started = performance.now()
    const operation = operationOf(routes, request.method, request.url)
    const answered = (_: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) => {
      recorder.request(operation, request.method, response.status, (performance.now() - started) / 1000)
      return Effect.succeed(response)
    }
    recorder.active(1)
    return Effect.ensuring(
      Effect.andThen(HttpEffect.appendPreResponseHandler(answered), httpEffect),
      Effect.sync(() => recorder.active(-1))
    )
  })

/**
 * Counts a sign-in attempt's outcome when metrics are on: success, or the refusal's fixed code (its `reason` when it
 * has one, as `Unauthorized` and `Forbidden` do, else its `error` code), never anything the caller sent. For `Effect.fn`'s pipeable arguments.
 */
export const signInOutcome = (method: SignInMethod) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const recorder = fiber.getRef(CurrentRecorder)
    if (recorder === undefined) return self
    return Effect.onExit(self, (exit) => Effect.sync(() => recorder.signIn(method, outcomeOf(exit))))
  })

/** Counts one sign-in outcome, of a known organization, when metrics are on. */
export const recordSignIn = (method: SignInMethod, outcome: string, organizationId?: string | undefined): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    fiber.getRef(CurrentRecorder)?.signIn(method, outcome, organizationId)
    return Effect.void
  })

const outcomeOf = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit)) return "success"
  const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  if (error === undefined || error._tag !== "Fail") return "error"
  const value: unknown = error.error
  if (typeof value !== "object" || value === null) return "error"
  // A refusal's reason (`invalid_credentials`, `sso_required`) says more than its code (`unauthorized`, `forbidden`).
  if ("reason" in value && typeof value.reason === "string") return codeLabel(value.reason)
  return "error" in value ? codeLabel(value.error) : "error"
}

/** The recorder (when on) and the database's observer, from the settings; provides nothing when off. */
export const layer = (options: Options & { readonly durablePrefix?: string | undefined; readonly version?: string | undefined } = {}) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const found = yield* settings(options)
      if (!enabled(found)) return Layer.empty
      const version = options.version ?? (yield* Config.String("ORGPLANE_VERSION").pipe(Config.withDefault(VERSION)))
      const recorder = makeRecorder(found, { prefix: options.durablePrefix ?? "orgplane_cluster" }, version.trim() || VERSION)
      return Layer.merge(Layer.succeed(CurrentRecorder, recorder), Layer.succeed(DatabaseObserver, recorder.database))
    })
  )

/** One structured log line per request (method, route template, status, duration, request id), and the server's logger. */
import { HttpApp, HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Clock, type ConfigError, Console, Context, DefaultServices, Effect, FiberRef, FiberRefs, HashMap, HashSet, Inspectable, Layer, Logger, LogLevel } from "effect"
import { randomUUID } from "node:crypto"
import { type LogFormat, observabilityConfig, type LogLevelName, type ServerSettings } from "./Config.js"
import type { Routes } from "./Routes.js"

export const requestIdHeader = "x-request-id"

/** An incoming id is reused only when it cannot smuggle anything into a log line or a header. */
const saneRequestId = /^[A-Za-z0-9._-]{1,128}$/

/**
 * A server fault is a warning, next to the error that explains it (logged at ERROR by `HttpErrors`). A 503 is
 * not: the database's outage is logged once, when it starts, not on every request it turns away.
 */
const levelOf = (status: number) => status >= 500 && status !== 503 ? LogLevel.Warning : LogLevel.Info

/**
 * The middleware. The line is written by a pre-response handler, which sees the response as sent: declared errors
 * are encoded after every middleware, and a client that hung up gets the platform's 499.
 *
 * A request runs in a fiber of its own, which ends with its response: the request id and then the line's fields are
 * set on that fiber's log annotations rather than scoped around the app (`Effect.annotateLogs` on an effect is a
 * `locally`, an acquire-use-release of a dozen runtime steps, twice a request).
 */
export const make = (routes: Routes) => <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.withFiberRuntime((fiber) => {
    const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
    const clock = Context.get(fiber.getFiberRef(DefaultServices.currentServices), Clock.Clock)
    const started = clock.unsafeCurrentTimeNanos()
    const incoming = request.headers[requestIdHeader]
    const requestId = incoming !== undefined && saneRequestId.test(incoming) ? incoming : randomUUID()
    const route = routes.find(request.method, request.url)?.route.template ?? "unknown"
    const logged = (_: unknown, response: HttpServerResponse.HttpServerResponse) => {
      const { status } = response
      const durationMs = Math.round(Number(clock.unsafeCurrentTimeNanos() - started) / 1e4) / 100
      return FiberRef.update(FiberRef.currentLogAnnotations, (annotations) =>
        HashMap.set(HashMap.set(HashMap.set(HashMap.set(annotations, "method", request.method), "route", route), "status", status), "durationMs", durationMs)
      ).pipe(
        Effect.andThen(Effect.logWithLevel(levelOf(status), "request")),
        Effect.as(HttpServerResponse.setHeader(response, requestIdHeader, requestId))
      )
    }
    // Effect's built-in FiberRefs, left for Effect 4's `References.CurrentLogAnnotations` (issue 46, step 3).
    return FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set<string, unknown>("requestId", requestId)).pipe(
      // The platform's own request logger, if a host installed it, would write more lines for the same request.
      Effect.andThen(FiberRef.set(HttpMiddleware.loggerDisabled, true)),
      Effect.andThen(HttpApp.appendPreResponseHandler(logged)),
      Effect.andThen(app)
    )
  })

/**
 * The current request's id (the one its log line and `x-request-id` carry), read from the log annotation the
 * middleware set; outside a request, a fresh one. For answers that quote it (`referenceId`).
 */
export const currentRequestId: Effect.Effect<string> = Effect.map(FiberRef.get(FiberRef.currentLogAnnotations), (annotations) => {
  const found = HashMap.get(annotations, "requestId")
  return found._tag === "Some" && typeof found.value === "string" ? found.value : randomUUID()
})

const levels: Record<LogLevelName, LogLevel.LogLevel> = {
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  error: LogLevel.Error,
  none: LogLevel.None
}

const text = (value: unknown) => typeof value === "string" ? value : Inspectable.format(Inspectable.redact(value))

/** `key=value`, quoted when the value has spaces, quotes or `=`, so a line stays one parseable line. */
const pair = (key: string, value: unknown) => {
  const rendered = text(value)
  return `${key}=${/[\s"=]/.test(rendered) || rendered === "" ? JSON.stringify(rendered) : rendered}`
}

/**
 * For people: `2026-11-22T10:00:00.000Z INFO  request method=GET route=/v1/teams/:teamId status=200 ...`, annotations
 * inline (Effect's pretty logger puts each annotation on a line of its own); a cause follows on further lines.
 */
export const prettyLogger = Logger.make<unknown, string>(({ annotations, cause, date, logLevel, message }) => {
  const messages = Array.isArray(message) ? message : [message]
  let line = `${date.toISOString()} ${logLevel.label.padEnd(5)} ${messages.map(text).join(" ")}`
  for (const [key, value] of annotations) line += ` ${pair(key, value)}`
  return Cause.isEmpty(cause) ? line : `${line}\n${Cause.pretty(cause, { renderErrorCause: true })}`
})

const isPlain = (value: unknown) => {
  const type = typeof value
  return type === "string" || type === "number" || type === "boolean" || value === undefined || value === null
}

/**
 * Effect's `Logger.jsonLogger`, line for line, without its costs for lines of plain values: a request's line (a
 * string message, annotations of strings and numbers, no cause) is one `JSON.stringify` without a replacer, and a
 * fiber's name is read off its id (`#12`) instead of through a set of ids. Anything else (a cause, an object to
 * redact or with cycles, a composite fiber id) is Effect's own logger's.
 */
export const jsonLogger = Logger.make<unknown, string>((options) => {
  const { annotations, cause, date, fiberId, logLevel, spans } = options
  // `Effect.log("text")` logs `["text"]`: one message is written as itself.
  const message = Array.isArray(options.message) && options.message.length === 1 ? options.message[0] : options.message
  if (!isPlain(message) || !Cause.isEmpty(cause) || fiberId._tag !== "Runtime") return Logger.jsonLogger.log(options)
  const annotationsObj: Record<string, unknown> = {}
  for (const [key, value] of annotations) {
    if (!isPlain(value)) return Logger.jsonLogger.log(options)
    annotationsObj[key] = value
  }
  const spansObj: Record<string, number> = {}
  const now = date.getTime()
  for (const span of spans) spansObj[span.label] = now - span.startTime
  return JSON.stringify({
    message,
    logLevel: logLevel.label,
    timestamp: date.toISOString(),
    annotations: annotationsObj,
    spans: spansObj,
    fiberId: `#${fiberId.id}`
  })
})

/** The line format of `ORGPLANE_LOG_FORMAT`. */
export const formatLogger = (format: LogFormat): Logger.Logger<unknown, string> =>
  format === "json" ? jsonLogger : format === "logfmt" ? Logger.logfmtLogger : prettyLogger

/** `console.log` as the process started with it: a test or a host that replaced it gets each line at once. */
const processConsoleLog = globalThis.console.log

let pending: Array<string> = []

const flush = () => {
  if (pending.length === 0) return
  const text = `${pending.join("\n")}\n`
  pending = []
  process.stdout.write(text)
}

let flushOnExit = false

/**
 * `Logger.withConsoleLog`, with the lines bound for the process's own stdout written together once per turn of the
 * event loop: one write of many lines instead of one (synchronous, on a pipe) per request. A `Console` a launcher
 * provided, or a `console.log` someone replaced, gets each line as it is logged; lines still pending when the
 * process exits are written then.
 */
const withBatchedConsoleLog = <M>(self: Logger.Logger<M, string>): Logger.Logger<M, void> =>
  Logger.make((options) => {
    const line = self.log(options)
    const console = Context.get(FiberRefs.getOrDefault(options.context, DefaultServices.currentServices), Console.Console).unsafe
    if (console !== globalThis.console || console.log !== processConsoleLog || typeof process === "undefined") {
      return console.log(line)
    }
    if (pending.push(line) === 1) setImmediate(flush)
    if (!flushOnExit) {
      flushOnExit = true
      process.once("exit", flush)
    }
  })

/**
 * The logger of a launched server (`Server.layer`, `makeWebHandler`, `makeNodeListener`; exported for Effect hosts
 * that want the same lines): the configured format in place of Effect's default logger, at the configured minimum
 * level. Loggers a launcher installed itself (a CLI's JSON logger, a host's collector) are kept as they are.
 */
export const loggerLayer = (settings: Pick<ServerSettings, "logLevel" | "logFormat">): Layer.Layer<never> =>
  Layer.merge(
    // A built-in FiberRef: Effect 4's `References.CurrentLoggers` (issue 46, step 3).
    Layer.fiberRefLocallyScopedWith(FiberRef.currentLoggers, (loggers) =>
      HashSet.has(loggers, Logger.defaultLogger)
        ? HashSet.add(HashSet.remove(loggers, Logger.defaultLogger), withBatchedConsoleLog(formatLogger(settings.logFormat)))
        : loggers),
    Logger.minimumLogLevel(levels[settings.logLevel])
  )

/**
 * `loggerLayer` from the environment (`ORGPLANE_LOG_LEVEL`, `ORGPLANE_LOG_FORMAT`) with `overrides` on top, and
 * tracing spans off unless `ORGPLANE_TRACING` is set: with no tracer exporting them, each request and each SQL
 * statement would build spans nobody reads.
 */
export const layer = (overrides: Observability = {}): Layer.Layer<never, ConfigError.ConfigError> =>
  Layer.unwrapEffect(
    Effect.map(observabilityConfig, (settings) => {
      const { logFormat, logLevel, tracing } = { ...settings, ...pick(overrides) }
      return Layer.merge(loggerLayer({ logFormat, logLevel }), tracing ? Layer.empty : Layer.setTracerEnabled(false))
    })
  )

type Observability = { readonly [K in "logFormat" | "logLevel" | "tracing"]?: ServerSettings[K] | undefined }

const pick = ({ logFormat, logLevel, tracing }: Observability) => ({
  ...(logFormat === undefined ? {} : { logFormat }),
  ...(logLevel === undefined ? {} : { logLevel }),
  ...(tracing === undefined ? {} : { tracing })
})

/** One structured log line per request (method, route template, status, duration, request id), and the server's logger. */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Formatter from "effect/Formatter"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as Fiber from "effect/Fiber"
import type * as LogLevel from "effect/LogLevel"
import * as Redactable from "effect/Redactable"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import NodeConsole from "node:console"
import { randomUUID } from "node:crypto"
import { type LogFormat, type LogLevelName, observabilityConfig, type ServerSettings } from "./Config.js"
import type { Routes } from "./Routes.js"
import * as Tracing from "./Tracing.js"

export const requestIdHeader = "x-request-id"

/** An incoming id is reused only when it cannot smuggle anything into a log line or a header. */
const saneRequestId = /^[A-Za-z0-9._-]{1,128}$/

/**
 * A server fault is a warning, next to the error that explains it (logged at ERROR by `HttpErrors`). A 503 is
 * not: the database's outage is logged once, when it starts, not on every request it turns away.
 */
const levelOf = (status: number): "Warn" | "Info" => status >= 500 && status !== 503 ? "Warn" : "Info"

/**
 * The middleware. The line is written by a pre-response handler, which sees the response as sent: a client that
 * hung up gets the platform's 499.
 *
 * The request id is a log annotation around the request (so the lines its handling writes carry it, and
 * `currentRequestId` reads it); the line's own fields are its annotations, written where the response is sent.
 */
export const make = (routes: Routes) =>
<E, R>(
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.withFiber((fiber) => {
    const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
    const clock = fiber.getRef(Clock.Clock)
    const started = clock.currentTimeNanosUnsafe()
    const incoming = request.headers[requestIdHeader]
    const requestId = incoming !== undefined && saneRequestId.test(incoming) ? incoming : randomUUID()
    const route = routes.find(request.method, request.url)?.route.template ?? "unknown"
    // The line is written once the request's span has ended: it names that span (its trace id in JSON lines).
    const span = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
    const logged = (_: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) => {
      const { status } = response
      const durationMs = Math.round(Number(clock.currentTimeNanosUnsafe() - started) / 1e4) / 100
      const line = Effect.logWithLevel(levelOf(status))("request").pipe(
        Effect.annotateLogs({ requestId, method: request.method, route, status, durationMs }),
        Effect.as(HttpServerResponse.setHeader(response, requestIdHeader, requestId))
      )
      return span === undefined ? line : Effect.withParentSpan(line, span)
    }
    // The platform's own request logger, if a host installed it, would write more lines for the same request.
    return HttpMiddleware.withLoggerDisabled(
      Effect.andThen(HttpEffect.appendPreResponseHandler(logged), Effect.annotateLogs(httpEffect, "requestId", requestId))
    )
  })

/**
 * The current request's id (the one its log line and `x-request-id` carry), read from the log annotation the
 * middleware set; outside a request, a fresh one. For answers that quote it (`referenceId`).
 */
export const currentRequestId: Effect.Effect<string> = References.CurrentLogAnnotations.useSync((annotations) => {
  const found = annotations["requestId"]
  return typeof found === "string" ? found : randomUUID()
})

const levels: Record<LogLevelName, LogLevel.LogLevel> = {
  debug: "Debug",
  info: "Info",
  warn: "Warn",
  error: "Error",
  none: "None"
}

const text = (value: unknown) => typeof value === "string" ? value : Formatter.format(Redactable.redact(value))

/** `key=value`, quoted when the value has spaces, quotes or `=`, so a line stays one parseable line. */
const pair = (key: string, value: unknown) => {
  const rendered = text(value)
  return `${key}=${/[\s"=]/.test(rendered) || rendered === "" ? JSON.stringify(rendered) : rendered}`
}

/** A level in capitals (`INFO`, `WARN`): the lines people and collectors already read. */
const label = (level: LogLevel.LogLevel) => level.toUpperCase()

/**
 * For people: `2026-11-22T10:00:00.000Z INFO  request method=GET route=/v1/teams/:teamId status=200 ...`, annotations
 * inline (Effect's pretty logger puts each annotation on a line of its own); a cause follows on further lines.
 */
export const prettyLogger = Logger.make<unknown, string>(({ cause, date, fiber, logLevel, message }) => {
  const messages = Array.isArray(message) ? message : [message]
  let line = `${date.toISOString()} ${label(logLevel).padEnd(5)} ${messages.map(text).join(" ")}`
  for (const [key, value] of Object.entries(fiber.getRef(References.CurrentLogAnnotations))) line += ` ${pair(key, value)}`
  return cause.reasons.length === 0 ? line : `${line}\n${Cause.pretty(cause)}`
})

const isPlain = (value: unknown) => {
  const type = typeof value
  return type === "string" || type === "number" || type === "boolean" || value === undefined || value === null
}

/** The trace and span a line was logged in, when tracing is on and a span is current (a request's, a job's). */
const traceOf = (fiber: Fiber.Fiber<unknown, unknown>): { readonly trace_id: string; readonly span_id: string } | undefined => {
  if (!fiber.getRef(References.TracerEnabled)) return undefined
  const span = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
  return span === undefined ? undefined : { trace_id: span.traceId.padStart(32, "0"), span_id: span.spanId }
}

/** Effect's structured entry (`Logger.formatStructured`), in the members and order of `jsonLogger`'s lines. */
const effectJson = Logger.make<unknown, string>((options) => {
  const { annotations, cause, fiberId, level, message, spans, timestamp } = Logger.formatStructured.log(options)
  return Formatter.formatJson({ message, logLevel: level, timestamp, cause, annotations, spans, fiberId, ...traceOf(options.fiber) })
})

/**
 * One JSON object a line: `{"message","logLevel","timestamp","cause"?,"annotations","spans","fiberId"}`, the members
 * and order collectors already read, then `"trace_id","span_id"` when a span is current (tracing on). A line of plain
 * values (a request's: a string message, annotations of strings and numbers, no cause) is one `JSON.stringify`
 * without a replacer; anything else (a cause, an object to redact or with cycles) goes through Effect's structured
 * entry.
 */
export const jsonLogger = Logger.make<unknown, string>((options) => {
  const { cause, date, fiber, logLevel } = options
  // `Effect.log("text")` logs `["text"]`: one message is written as itself.
  const message = Array.isArray(options.message) && options.message.length === 1 ? options.message[0] : options.message
  if (!isPlain(message) || cause.reasons.length > 0) return effectJson.log(options)
  const annotations = fiber.getRef(References.CurrentLogAnnotations)
  for (const key in annotations) if (!isPlain(annotations[key])) return effectJson.log(options)
  const spans: Record<string, number> = {}
  const now = date.getTime()
  for (const [spanLabel, startTime] of fiber.getRef(References.CurrentLogSpans)) spans[spanLabel] = now - startTime
  return JSON.stringify({ message, logLevel: label(logLevel), timestamp: date.toISOString(), annotations, spans, fiberId: `#${fiber.id}`, ...traceOf(fiber) })
})

/** The line format of `ORGPLANE_LOG_FORMAT`. */
export const formatLogger = (format: LogFormat): Logger.Logger<unknown, string> =>
  format === "json" ? jsonLogger : format === "logfmt" ? Logger.formatLogFmt : prettyLogger

/**
 * `console.log` as the process started with it (node:console's, which a replaced global console leaves in place):
 * a test runner or a host that replaced the console or its `log`, before this module loaded or after, gets each
 * line at once.
 */
const processConsoleLog = NodeConsole.log

let pending: Array<string> = []

const flush = () => {
  if (pending.length === 0) return
  const lines = `${pending.join("\n")}\n`
  pending = []
  process.stdout.write(lines)
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
    const console = options.fiber.getRef(Console.Console)
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
    Layer.effect(
      References.CurrentLoggers,
      Effect.withFiber((fiber) => {
        const loggers = fiber.getRef(References.CurrentLoggers)
        if (!loggers.has(Logger.defaultLogger)) return Effect.succeed(loggers)
        const replaced = new Set(loggers)
        replaced.delete(Logger.defaultLogger)
        return Effect.succeed(replaced.add(withBatchedConsoleLog(formatLogger(settings.logFormat))))
      })
    ),
    Layer.succeed(References.MinimumLogLevel, levels[settings.logLevel])
  )

type Observability = { readonly [K in "logFormat" | "logLevel" | "tracing"]?: ServerSettings[K] | undefined }

const pick = ({ logFormat, logLevel, tracing }: Observability) => ({
  ...(logFormat === undefined ? {} : { logFormat }),
  ...(logLevel === undefined ? {} : { logLevel }),
  ...(tracing === undefined ? {} : { tracing })
})

/**
 * `loggerLayer` from the environment (`ORGPLANE_LOG_LEVEL`, `ORGPLANE_LOG_FORMAT`) with `overrides` on top, and the
 * tracer (`Tracing.layer`): spans exported when an OTLP endpoint is configured, made without export with
 * `ORGPLANE_TRACING`, else off: with nothing reading them, each request and each SQL statement would build spans for
 * nobody.
 */
export const layer = (overrides: Observability = {}) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const settings = yield* observabilityConfig
      const { logFormat, logLevel, tracing } = { ...settings, ...pick(overrides) }
      return Layer.merge(loggerLayer({ logFormat, logLevel }), Tracing.layer(tracing))
    })
  )

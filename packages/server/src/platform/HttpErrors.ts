/**
 * The one place where failures become responses the spec allows. Runs around every route, before the platform
 * encodes declared errors:
 * - a request that fails its schema (path, query, headers, body) or is not valid JSON → 400 `invalid_request`;
 * - a response that fails its own schema is a server bug → 500, logged, never blamed on the caller;
 * - an unknown route → 404 `not_found`, or 405 `method_not_allowed` with `Allow` when the path exists with other
 *   methods (under `/scim/v2`, SCIM errors of those statuses); a rate limit → 429 with `Retry-After`;
 * - the database unavailable → 503 `service_unavailable` with `Retry-After` (see Unavailable.ts);
 * - anything undeclared (defects, storage failures) → 500 `internal_error`, logged with its cause;
 * - what the request guard refuses (a URL too long, a path a proxy could read as another, a body of a media type
 *   the operation does not read, too large, too deep, or carrying NUL) → 414, 400, 415, 413 or 400, like the rest.
 * Around it all, the per-request log line (`RequestLog`); every response says `X-Content-Type-Options: nosniff`, and
 * every `/v1` answer `Cache-Control: no-store`.
 */
import {
  type HttpApi,
  HttpApiBuilder,
  HttpApiError,
  HttpApiSchema,
  HttpApp,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import {
  Api,
  errorResponseOf,
  auditDeclarations,
  type AuditDeclaration,
  idempotentOperations,
  InvalidRequest,
  invalidRequestDetails,
  MethodNotAllowed,
  MethodNotAllowedResponse,
  RateLimited,
  RateLimitedResponse,
  scimErrorResponseOf,
  ScimErrorSchema,
  ScimInternalError,
  ScimInternalErrorResponse,
  ScimMediaType,
  ScimMethodNotAllowed,
  ScimMethodNotAllowedResponse,
  ScimNotFound,
  ScimNotFoundResponse,
  ScimServiceUnavailable,
  ServiceUnavailable
} from "@orgplane/schema"
import { Cause, Context, Effect, Layer, Option, Schema } from "effect"
import { defaultMaxBodyBytes, ServerConfig } from "./Config.js"
import * as Docs from "./Docs.js"
import * as Recorder from "./AuditRecorder.js"
import * as Authority from "./Authority.js"
import * as Idempotency from "./Idempotency.js"
import * as RequestGuard from "./RequestGuard.js"
import * as RequestLog from "./RequestLog.js"
import * as ResponseEncoding from "./ResponseEncoding.js"
import * as Routes from "./Routes.js"
import * as Unavailable from "./Unavailable.js"

/** Whether the request's handler has returned: a schema failure after that is the response's, not the request's. */
interface HandlerProgress {
  returned: boolean
}

/**
 * The request's `HandlerProgress`, made afresh as each request starts (`layerFor`), which reads it when the request
 * fails; the handler marks it as it returns. The default, shared, is one nobody reads: a group served without `layerFor`.
 */
class HandlerReturned extends Context.Reference<HandlerReturned>()("@orgplane/server/platform/HttpErrors/HandlerReturned", {
  defaultValue: (): HandlerProgress => ({ returned: false })
}) {}

const markReturned = (handler: (request: any) => Effect.Effect<any, any, any>) => (request: any) =>
  Effect.tap(handler(request), () => Effect.map(HandlerReturned, (progress) => (progress.returned = true)))

type Responder = (value: unknown) => HttpServerResponse.HttpServerResponse | undefined

/** The success as its response (`ResponseEncoding`), outermost: the audit recorder and idempotency see the value. */
const responding = (handler: (request: any) => Effect.Effect<any, any, any>, respond: Responder | undefined) =>
  respond === undefined ? handler : (request: any) =>
    Effect.map(handler(request), (value) => HttpServerResponse.isServerResponse(value) ? value : respond(value) ?? value)

/**
 * Passes every handler through `markReturned`, those of operations that write through `Authority.around` (their
 * caller's authority checked again at commit), the audit recorder where the operation declares an event (around
 * that, so a refusal at commit is recorded as one), and those of operations that take an `Idempotency-Key` through
 * `Idempotency.around`, and makes the success's response around them all (`responding`), however `handle` calls are
 * chained.
 */
const instrument = <H extends object>(handlers: H, operation: (endpoint: string) => Operation): H =>
  new Proxy(handlers, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver)
      if ((property === "handle" || property === "handleRaw") && typeof value === "function") {
        return (name: string, handler: any, options?: any) => {
          const { audit, respond, takesKey, writes } = operation(name)
          const returning = markReturned(handler)
          const marked = writes ? Authority.around(returning) : returning
          const audited = audit === undefined || audit.action === false ? marked : Recorder.around(audit.action, marked)
          return instrument(value.call(target, name, responding(takesKey ? Idempotency.around(audited) : audited, respond), options), operation)
        }
      }
      return value
    }
  })

interface Operation {
  readonly takesKey: boolean
  /** Not a read (GET): its transactions check the caller's authority at commit (`Authority.ts`). */
  readonly writes: boolean
  readonly audit: AuditDeclaration | undefined
  /** The success's response, encoded without checking the handler's value again (`ResponseEncoding`). */
  readonly respond: Responder | undefined
}

/**
 * `HttpApiBuilder.group`, with every handler marked as it returns, so a response that fails its own schema is
 * reported as the server's bug (500) and not as the caller's (400), and taking part in idempotency keys where the
 * operation does. Every group of the server is built with it.
 */
export const group: typeof HttpApiBuilder.group = ((api: any, name: any, build: any) => {
  const { audits, ids } = operationsOf(api)
  const prefix = api.groups[name]?.topLevel ? "" : `${name}.`
  const endpoints = api.groups[name]?.endpoints ?? {}
  const operation = (endpoint: string): Operation => ({
    takesKey: ids.has(`${prefix}${endpoint}`),
    writes: endpoints[endpoint] !== undefined && endpoints[endpoint].method !== "GET",
    audit: audits.get(`${prefix}${endpoint}`),
    respond: endpoints[endpoint] === undefined ? undefined : ResponseEncoding.successResponder(endpoints[endpoint])
  })
  return (HttpApiBuilder.group as any)(api, name, (handlers: any) => build(instrument(handlers, operation)))
}) as any

/** What the API's operations declare, read once per API (every group of the server asks). */
const declared = new WeakMap<object, { readonly ids: ReadonlySet<string>; readonly audits: ReadonlyMap<string, AuditDeclaration> }>()
const operationsOf = (api: any) => {
  let found = declared.get(api)
  if (found === undefined) declared.set(api, found = { ids: idempotentOperations(api).ids, audits: auditDeclarations(api) })
  return found
}

const internalError = HttpServerResponse.unsafeJson(
  { error: "internal_error", message: "The server failed to handle this request." },
  { status: 500 }
)

/** The spec's 400 for a request that fails its schema: the details are worded by `@orgplane/schema`, like the client's. */
export const toInvalidRequest = (error: HttpApiError.HttpApiDecodeError) =>
  new InvalidRequest({ details: invalidRequestDetails(error.issues) })

const encodeRateLimited = Schema.encodeSync(RateLimitedResponse)
const encodeMethodNotAllowed = Schema.encodeSync(MethodNotAllowedResponse)
const encodeScimNotFound = Schema.encodeSync(ScimNotFoundResponse)
const encodeScimMethodNotAllowed = Schema.encodeSync(ScimMethodNotAllowedResponse)

/**
 * 405 for a path that has other methods (HEAD with GET): what `Allow` lists. OPTIONS is answered the same way. Under
 * the SCIM protocol's base, a SCIM error (RFC 7644 §3.12: a directory's client reads only those).
 */
const methodNotAllowed = (request: HttpServerRequest.HttpServerRequest, allowed: ReadonlyArray<string>, scim: boolean) => {
  const full = request.url.split("?", 1)[0]!
  // Quote at most 100 characters of what the caller sent.
  const path = full.length > 100 ? `${full.slice(0, 100)}…` : full
  const message = `${path} does not take ${request.method}; it takes ${allowed.join(", ")}.`
  const headers = { allow: allowed.join(", ") }
  return scim
    ? HttpServerResponse.unsafeJson(encodeScimMethodNotAllowed(new ScimMethodNotAllowed({ detail: message })), {
      status: 405,
      headers,
      contentType: ScimMediaType
    })
    : HttpServerResponse.unsafeJson(encodeMethodNotAllowed(new MethodNotAllowed({ message })), { status: 405, headers })
}

/**
 * Under the SCIM protocol's base, a refusal made before the SCIM handlers (the request guard's 413 and 415, a body or
 * query that does not decode, an internal error) answers as a SCIM error of the same status (RFC 7644 §3.12): a
 * directory's client reads only those. `invalidSyntax` for a 400: the message did not fit the request schema.
 */
const scimShaped = (error: unknown): Option.Option<HttpServerResponse.HttpServerResponse> => {
  const schema = errorResponseOf(error)
  if (schema === undefined) return Option.none()
  const status = HttpApiSchema.getStatusErrorAST(schema.ast)
  const body = error as { readonly details?: ReadonlyArray<{ readonly path: ReadonlyArray<unknown>; readonly message: string }>; readonly message?: unknown; readonly error?: unknown }
  const detail = body.details !== undefined && body.details.length > 0
    ? body.details.map((item) => (item.path.length > 0 ? `${item.path.join(".")}: ${item.message}` : item.message)).join("; ")
    : typeof body.message === "string" && body.message !== "" ? body.message : String(body.error ?? "The request was refused.")
  return Option.some(HttpServerResponse.unsafeJson(
    { schemas: [ScimErrorSchema], status: String(status), ...(status === 400 ? { scimType: "invalidSyntax" } : {}), detail: detail.slice(0, 1000) },
    { status, contentType: ScimMediaType }
  ))
}

const scimRoute = (url: string) => url.startsWith("/scim/v2/")

const scimInternalError = HttpServerResponse.unsafeJson(
  Schema.encodeSync(ScimInternalErrorResponse)(new ScimInternalError({ detail: "The server failed to handle this request." })),
  { status: 500, contentType: ScimMediaType }
)

const handle = (routes: Routes.Routes, progress: HandlerProgress) => (cause: Cause.Cause<unknown>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    scimRoute(request.url)
      ? Effect.catchAll(answer(routes, progress, true)(cause), (error) =>
        Option.match(scimShaped(error), { onNone: () => Effect.fail(error), onSome: Effect.succeed }))
      : answer(routes, progress, false)(cause))

const answer = (routes: Routes.Routes, progress: HandlerProgress, scim: boolean) => (cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    const internal = scim ? scimInternalError : internalError
    if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause)
    const failure = Cause.failureOption(cause)
    // The platform reports an unreadable body as a defect, not a failure.
    const error = Option.isSome(failure) ? failure.value : Option.getOrUndefined(Cause.dieOption(cause))
    if (error instanceof HttpApiError.HttpApiDecodeError) {
      if (progress.returned) {
        yield* Effect.logError("A response did not match its schema", error.issues)
        return internal
      }
      return yield* Effect.fail(toInvalidRequest(error))
    }
    if (HttpServerError.isServerError(error)) {
      if (error._tag === "RouteNotFound") {
        const allowed = routes.methods(error.request.url)
        if (allowed.length > 0) return methodNotAllowed(error.request, allowed, scim)
        // A directory's client reads SCIM errors only (RFC 7644 §3.12): a SCIM 404 under the protocol's base.
        if (error.request.url.startsWith("/scim/v2/")) {
          return HttpServerResponse.unsafeJson(encodeScimNotFound(new ScimNotFound({ detail: `No SCIM endpoint ${error.request.url.split("?")[0]!.slice(0, 200)}.` })), {
            status: 404,
            contentType: ScimMediaType
          })
        }
        return HttpServerResponse.unsafeJson(
          { error: "not_found", message: `No route for ${error.request.method} ${error.request.url}` },
          { status: 404 }
        )
      }
      if (error._tag === "RequestError" && error.reason === "Decode") {
        return yield* Effect.fail(InvalidRequest.field([], "The request body is not valid JSON."))
      }
    }
    if (error instanceof RateLimited) {
      return HttpServerResponse.unsafeJson(encodeRateLimited(error), {
        status: 429,
        headers: error.retryAfterSeconds === undefined ? {} : { "retry-after": String(error.retryAfterSeconds) }
      })
    }
    const unavailable = yield* Unavailable.responseFor(
      scim && error instanceof ServiceUnavailable ? new ScimServiceUnavailable({ detail: error.message }) : error
    )
    if (Option.isSome(unavailable)) return unavailable.value
    if (Option.isSome(failure) && (errorResponseOf(error) ?? scimErrorResponseOf(error)) !== undefined) {
      return yield* Effect.failCause(cause)
    }
    yield* Effect.logError("Unhandled failure", cause)
    return internal
  })

/** What every `/v1` answer says: no cache may keep it (RFC 6749 §5.1; RFC 9111 §5.2.2.5). */
export const noStore = { "cache-control": "no-store" } as const

/** A path of the API's own (`/v1`): its answers carry credentials and organizations' data. */
const apiPath = (url: string) => url.startsWith("/v1/") || url === "/v1" || url.startsWith("/v1?")

/**
 * Every response says `X-Content-Type-Options: nosniff`; every `/v1` answer, errors and replays included, also
 * `Cache-Control: no-store`: sign-in, sign-up, API keys, invitations, claim links and SSO exchange codes carry
 * credentials, and the rest is an organization's data, which no shared or browser cache should keep. The document
 * and the docs page may be cached.
 */
const securityHeaders = (request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
  Effect.succeed(
    apiPath(request.url)
      ? HttpServerResponse.setHeaders(response, { "x-content-type-options": "nosniff", ...noStore })
      : HttpServerResponse.setHeader(response, "x-content-type-options", "nosniff")
  )

export interface Options {
  /** Default body limit of the request guard (the server passes `ORGPLANE_MAX_BODY_BYTES`). */
  readonly maxBodyBytes?: number | undefined
  /** Routes served beside the API, so their requests are logged under their path rather than `unknown`. */
  readonly extraRoutes?: ReadonlyArray<readonly [method: string, path: `/${string}`]> | undefined
  /** A middleware between the request guard and routing (the server's: idempotency keys). */
  readonly inner?: (<E, R>(app: HttpApp.Default<E, R>) => HttpApp.Default<E, R>) | undefined
}

/**
 * The mapping as middleware of any HttpApi (tests use small APIs of their own), inside the per-request log line
 * and around the request guard: the guard runs before routing and authentication, and what it refuses is answered
 * like any other failure.
 */
export const layerFor = (api: HttpApi.HttpApi.Any, options: Options = {}): Layer.Layer<never> => {
  const routes = Routes.make(api, options.extraRoutes)
  const guard = RequestGuard.make(routes, { maxBodyBytes: options.maxBodyBytes ?? defaultMaxBodyBytes })
  const log = RequestLog.make(routes)
  return HttpApiBuilder.middleware(api as typeof Api, (app) => {
    const guarded = guard(options.inner === undefined ? app : options.inner(app))
    return log(
      Effect.suspend(() => {
        const progress: HandlerProgress = { returned: false }
        // A pre-response handler, so that declared errors (encoded after every middleware) say it too.
        return Effect.andThen(HttpApp.appendPreResponseHandler(securityHeaders), Effect.provideService(guarded, HandlerReturned, progress)).pipe(
          Effect.catchAllCause(handle(routes, progress))
        )
      })
    ) as typeof app
  })
}


export const layer: Layer.Layer<never, never, ServerConfig | Idempotency.Idempotency> = Layer.unwrapEffect(
  Effect.map(Effect.all([ServerConfig, Idempotency.Idempotency]), ([settings, idempotency]) =>
    layerFor(Api, { maxBodyBytes: settings.maxBodyBytes, extraRoutes: Docs.routes, inner: Idempotency.middleware(idempotency) }))
)

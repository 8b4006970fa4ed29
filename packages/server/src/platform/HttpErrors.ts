/**
 * The one place where failures become responses the spec allows:
 * - a request that fails its schema (path, query, headers, body) or is not valid JSON → 400 `invalid_request`;
 * - a response that fails its own schema is a server bug → 500, logged, never blamed on the caller;
 * - a 401 `unauthorized` → its body with the `WWW-Authenticate` challenge of its reason (RFC 6750 §3), wherever it was
 *   refused (authentication, sign-in, a credential revoked while the request ran);
 * - an unknown route → 404 `not_found`, or 405 `method_not_allowed` with `Allow` when the path exists with other
 *   methods (under `/scim/v2`, SCIM errors of those statuses); a rate limit → 429 with `Retry-After`;
 * - the database unavailable → 503 `service_unavailable` with `Retry-After` (see Unavailable.ts);
 * - anything undeclared (defects, storage failures) → 500 `internal_error`, logged with its cause;
 * - what the request guard refuses (a URL too long, a path a proxy could read as another, a body of a media type
 *   the operation does not read, too large, too deep, or carrying NUL) → 414, 400, 415, 413 or 400, like the rest.
 * Around it all, the per-request log line (`RequestLog`) and one bound on all the request's waits for its database
 * (`DatabaseWait`); every response says `X-Content-Type-Options: nosniff`, and
 * every `/v1` answer `Cache-Control: no-store`. Under `/scim/v2` every refusal is a SCIM error of the same status
 * (RFC 7644 §3.12: a directory's client reads only those).
 *
 * It is two pieces:
 * - `layer`, the server's implementation of @orgplane/schema's `ApiErrors`, the errors-only middleware every
 *   endpoint of `apiOf(...)` has, so it sees a handler's failures before the platform encodes them. The platform
 *   tells the request's schema failures (`Params`, `Headers`, `Query`, `Payload`) from the response's (`Body`,
 *   `ResponseHeaders`) itself;
 * - `edge`, the router's global middleware (an HttpApi middleware runs after routing): the request log, the
 *   security headers, the request guard, and the answers to what fails before an endpoint's own middleware (the
 *   guard's refusals, an unknown route, a body that cannot be read).
 * `layerFor(api, options)` is both, for any API (tests use small ones of their own); `serverLayer` is the server's.
 *
 * `group` builds every group of the server: its handlers wrapped in authority, the audit recorder and idempotency as
 * their operations declare, and standing aside for their declared check when a request is only checked
 * (platform/AuthorizationCheck.ts), its endpoints reading requests with `reportInput` and answering with their success
 * schema's compiled encoder, without the schema's checks (platform/ResponseEncoding.ts); `Options.inner` is the
 * idempotency middleware between the guard and routing (platform/Idempotency.ts).
 */
import {
  type Action,
  ApiErrors,
  type AuditDeclaration,
  auditDeclarations,
  idempotentOperations,
  errorResponseOf,
  InvalidRequest,
  invalidRequestDetails,
  InvalidRequestResponse,
  PayloadTooLarge,
  PayloadTooLargeResponse,
  MethodNotAllowed,
  MethodNotAllowedResponse,
  operationsOf,
  RateLimited,
  RateLimitedResponse,
  requestIssuesOf,
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
  ServiceUnavailable,
  Unauthorized,
  unauthorizedChallenge,
  UnauthorizedResponse,
  UnsupportedMediaType,
  UnsupportedMediaTypeResponse,
  UriTooLong,
  UriTooLongResponse
} from "@orgplane/schema"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerError from "effect/http/HttpServerError"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import { HttpApiSchemaError } from "effect/http-api/HttpApiError"
import * as Ablation from "./Ablation.js"
import * as Recorder from "./AuditRecorder.js"
import * as AuthorizationCheck from "./AuthorizationCheck.js"
import * as Authority from "./Authority.js"
import { defaultMaxBodyBytes, ServerConfig } from "./Config.js"
import * as Compression from "./Compression.js"
import * as DatabaseWait from "./DatabaseWait.js"
import * as GroupContexts from "./GroupContexts.js"
import * as Docs from "./Docs.js"
import * as Idempotency from "./Idempotency.js"
import * as Metrics from "./Metrics.js"
import * as RequestGuard from "./RequestGuard.js"
import * as RequestLog from "./RequestLog.js"
import * as ResponseEncoding from "./ResponseEncoding.js"
import * as Routes from "./Routes.js"
import * as Tracing from "./Tracing.js"
import * as Unavailable from "./Unavailable.js"

const internalError = HttpServerResponse.jsonUnsafe(
  { error: "internal_error", message: "The server failed to handle this request." },
  { status: 500 }
)

const scimInternalError = HttpServerResponse.jsonUnsafe(
  Schema.encodeSync(ScimInternalErrorResponse)(new ScimInternalError({ detail: "The server failed to handle this request." })),
  { status: 500, contentType: ScimMediaType }
)

/** What the HttpApi's payload decoder says of a body that is not JSON (`HttpApiBuilder`'s `decodePayload`). */
const notJsonIssue = "Expected a valid JSON body"

const notJson = () => InvalidRequest.field([], "The request body is not valid JSON.")

/** The spec's 400 for a request that fails its schema: the details are worded by `@orgplane/schema`, like the client's. */
export const toInvalidRequest = (error: HttpApiSchemaError) => {
  const issue = error.cause.issue
  if (error.kind === "Payload" && issue._tag === "InvalidValue" && issue.annotations?.message === notJsonIssue) return notJson()
  return new InvalidRequest({ details: invalidRequestDetails(requestIssuesOf(issue)) })
}

/** Whether a schema failure is the response's (the handler's value, or its headers): the server's bug. */
const isResponseFailure = (error: HttpApiSchemaError) => error.kind === "Body" || error.kind === "ResponseHeaders"

/** A body that could not be read (the platform reports it as a defect of the payload decoder, or the guard's read). */
const isUnreadableBody = (error: unknown) => HttpServerError.isHttpServerError(error) && error.reason._tag === "RequestParseError"

const scimRoute = (url: string) => url.startsWith("/scim/v2/")

const encodeRateLimited = Schema.encodeSync(RateLimitedResponse)
const encodeMethodNotAllowed = Schema.encodeSync(MethodNotAllowedResponse)
const encodeScimNotFound = Schema.encodeSync(ScimNotFoundResponse)
const encodeScimMethodNotAllowed = Schema.encodeSync(ScimMethodNotAllowedResponse)

const rateLimited = (error: RateLimited) =>
  HttpServerResponse.jsonUnsafe(encodeRateLimited(error), {
    status: 429,
    headers: error.retryAfterSeconds === undefined ? {} : { "retry-after": String(error.retryAfterSeconds) }
  })

const encodeUnauthorized = Schema.encodeSync(UnauthorizedResponse)

/** Every 401 `unauthorized` the API answers: its body, and the challenge its reason calls for. */
export const unauthorized = (error: Unauthorized) =>
  HttpServerResponse.jsonUnsafe(encodeUnauthorized(error), {
    status: 401,
    headers: { "www-authenticate": unauthorizedChallenge(error.reason) }
  })

const encodeInvalidRequest = Schema.encodeSync(InvalidRequestResponse)
const encodePayloadTooLarge = Schema.encodeSync(PayloadTooLargeResponse)
const encodeUnsupportedMediaType = Schema.encodeSync(UnsupportedMediaTypeResponse)
const encodeUriTooLong = Schema.encodeSync(UriTooLongResponse)

/** What the request guard refuses with, answered as the API declares it (the guard runs outside any endpoint). */
const refusalResponse = (error: unknown): Option.Option<HttpServerResponse.HttpServerResponse> => {
  if (error instanceof InvalidRequest) return Option.some(HttpServerResponse.jsonUnsafe(encodeInvalidRequest(error), { status: 400 }))
  if (error instanceof PayloadTooLarge) return Option.some(HttpServerResponse.jsonUnsafe(encodePayloadTooLarge(error), { status: 413 }))
  if (error instanceof UnsupportedMediaType) return Option.some(HttpServerResponse.jsonUnsafe(encodeUnsupportedMediaType(error), { status: 415 }))
  if (error instanceof UriTooLong) return Option.some(HttpServerResponse.jsonUnsafe(encodeUriTooLong(error), { status: 414 }))
  return Option.none()
}

/** The `httpApiStatus` of a wire schema (`HttpApiSchema.status`), found as HttpApiBuilder finds it (its `getStatusError`, internal). */
const statusOf = (ast: SchemaAST.AST): number => {
  for (const check of [...(ast.checks ?? [])].reverse()) {
    const found = check.annotations?.["httpApiStatus"]
    if (typeof found === "number") return found
  }
  const own = ast.annotations?.["httpApiStatus"] ?? ast.context?.annotations?.["httpApiStatus"]
  return typeof own === "number" ? own : 500
}

/**
 * Under the SCIM protocol's base, a refusal made before the SCIM handlers (the request guard's 413 and 415, a body or
 * query that does not decode, an internal error) answers as a SCIM error of the same status (RFC 7644 §3.12): a
 * directory's client reads only those. `invalidSyntax` for a 400: the message did not fit the request schema.
 */
export const scimShaped = (error: unknown): Option.Option<HttpServerResponse.HttpServerResponse> => {
  const schema = errorResponseOf(error)
  if (schema === undefined || typeof error !== "object" || error === null) return Option.none()
  const status = statusOf(schema.ast)
  const details = "details" in error && Array.isArray(error.details) ? error.details as ReadonlyArray<{ readonly path: ReadonlyArray<unknown>; readonly message: string }> : []
  const message = "message" in error ? error.message : undefined
  const code = "error" in error ? error.error : undefined
  const detail = details.length > 0
    ? details.map((item) => (item.path.length > 0 ? `${item.path.join(".")}: ${item.message}` : item.message)).join("; ")
    : typeof message === "string" && message !== "" ? message : String(code ?? "The request was refused.")
  return Option.some(HttpServerResponse.jsonUnsafe(
    { schemas: [ScimErrorSchema], status: String(status), ...(status === 400 ? { scimType: "invalidSyntax" } : {}), detail: detail.slice(0, 1000) },
    { status, contentType: ScimMediaType }
  ))
}

/** The 503 of an unavailable database; under `/scim/v2`, SCIM's for a `ServiceUnavailable`. */
const unavailableResponse = (error: unknown, scim: boolean) =>
  Unavailable.responseFor(scim && error instanceof ServiceUnavailable ? new ScimServiceUnavailable({ detail: error.message }) : error)

/** The failure or, failing one, the defect a cause carries (the platform reports an unreadable body as a defect). */
const reasonOf = (cause: Cause.Cause<unknown>) => {
  const failure = Cause.findErrorOption(cause)
  const defect = Cause.findDefect(cause)
  return { failure, error: Option.isSome(failure) ? failure.value : Result.isSuccess(defect) ? defect.success : undefined }
}

/** `ApiErrors`, implemented: see the module comment. */
const mapErrors: ApiErrors["Service"] = (httpEffect) =>
  Effect.catchCause(httpEffect, (cause) =>
    Effect.gen(function*() {
      if (Cause.hasInterruptsOnly(cause)) return yield* Effect.failCause(cause)
      const request = yield* HttpServerRequest.HttpServerRequest
      const scim = scimRoute(request.url)
      const refuse = (error: InvalidRequest) =>
        scim ? Effect.succeed(Option.getOrElse(scimShaped(error), () => scimInternalError)) : Effect.fail(error)
      const { error, failure } = reasonOf(cause)
      if (HttpApiSchemaError.is(error)) {
        if (isResponseFailure(error)) {
          yield* Effect.logError("A response did not match its schema", error.cause)
          return scim ? scimInternalError : internalError
        }
        return yield* refuse(toInvalidRequest(error))
      }
      if (isUnreadableBody(error)) return yield* refuse(notJson())
      if (error instanceof RateLimited) return rateLimited(error)
      if (error instanceof Unauthorized && !scim) return unauthorized(error)
      const unavailable = yield* unavailableResponse(error, scim)
      if (Option.isSome(unavailable)) return unavailable.value
      if (Option.isSome(failure)) {
        // A SCIM handler's declared errors are SCIM's; any other declared error (say authentication's) is shaped as one.
        if (scim && scimErrorResponseOf(error) === undefined && errorResponseOf(error) !== undefined) {
          return Option.getOrElse(scimShaped(error), () => scimInternalError)
        }
        return yield* Effect.failCause(cause)
      }
      yield* Effect.logError("Unhandled failure", cause)
      return scim ? scimInternalError : internalError
    }))

/** `ApiErrors` as every server has it; a benchmark leaving out `errors` (Ablation.ts) has it pass failures through. */
export const layer = Layer.effect(
  ApiErrors,
  Effect.map(Ablation.LeftOut, (leftOut): ApiErrors["Service"] => leftOut.has("errors") ? (httpEffect) => httpEffect : mapErrors)
)

/**
 * What a 404 or 405 names of the request: its method when it is a plain one, never its path nor its query, which may
 * carry a token (a claim link's `?token=`, an invitation's): no error body repeats what the URL carried.
 */
const methodOf = (request: HttpServerRequest.HttpServerRequest) => /^[A-Z]{1,16}$/.test(request.method) ? request.method : "this method"

/** A route's template as the document writes it (`/v1/teams/{teamId}`). */
const documented = (template: string) => template.replace(/:(\w+)\??/g, "{$1}")

/**
 * 405 for a path that has other methods (HEAD with GET): what `Allow` lists, naming the path by its route's template.
 * OPTIONS is answered the same way. Under the SCIM protocol's base, a SCIM error (RFC 7644 §3.12: a directory's
 * client reads only those).
 */
const methodNotAllowed = (routes: Routes.Routes, request: HttpServerRequest.HttpServerRequest, allowed: ReadonlyArray<string>, scim: boolean) => {
  const template = routes.find(allowed[0]!, request.url)?.route.template
  const path = template === undefined ? "This path" : documented(template)
  const message = `${path} does not take ${methodOf(request)}; it takes ${allowed.join(", ")}.`
  const headers = { allow: allowed.join(", ") }
  return scim
    ? HttpServerResponse.jsonUnsafe(encodeScimMethodNotAllowed(new ScimMethodNotAllowed({ detail: message })), {
      status: 405,
      headers,
      contentType: ScimMediaType
    })
    : HttpServerResponse.jsonUnsafe(encodeMethodNotAllowed(new MethodNotAllowed({ message })), { status: 405, headers })
}

/** 404 for a path the API does not have (under `/scim/v2`, SCIM's), or 405 when it has it with other methods. */
const routeNotFound = (routes: Routes.Routes, request: HttpServerRequest.HttpServerRequest, scim: boolean) => {
  const allowed = routes.methods(request.url)
  if (allowed.length > 0) return methodNotAllowed(routes, request, allowed, scim)
  if (scim) {
    return HttpServerResponse.jsonUnsafe(
      encodeScimNotFound(new ScimNotFound({ detail: "No SCIM endpoint at this path: see /scim/v2/{connectionId}/ResourceTypes." })),
      { status: 404, contentType: ScimMediaType }
    )
  }
  return HttpServerResponse.jsonUnsafe({
    error: "not_found",
    message: `No route for ${methodOf(request)} at this path: the API's routes are in its OpenAPI document (GET /openapi.json) and at /docs.`
  }, { status: 404 })
}

/** What the edge answers a failure that reached it: see the module comment. */
const answer = (routes: Routes.Routes, request: HttpServerRequest.HttpServerRequest) => (cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    if (Cause.hasInterruptsOnly(cause)) return yield* Effect.failCause(cause)
    const scim = scimRoute(request.url)
    const { error } = reasonOf(cause)
    if (HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound") return routeNotFound(routes, request, scim)
    const refusal = isUnreadableBody(error) ? notJson() : error
    const declared = scim ? scimShaped(refusal) : refusalResponse(refusal)
    if (Option.isSome(declared)) return declared.value
    if (refusal instanceof RateLimited) return rateLimited(refusal)
    const unavailable = yield* unavailableResponse(error, scim)
    if (Option.isSome(unavailable)) return unavailable.value
    yield* Effect.logError("Unhandled failure", cause)
    return scim ? scimInternalError : internalError
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
  apiPath(request.url)
    ? HttpServerResponse.setHeaders(response, { "x-content-type-options": "nosniff", ...noStore })
    : HttpServerResponse.setHeader(response, "x-content-type-options", "nosniff")

/** Every answer as sent: the security headers, and a large one compressed as the client takes it (Compression.ts). */
const finished = (request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
  Compression.compressed(request, securityHeaders(request, response))

/** A router middleware's shape: what `Options.inner` is. */
export type Inner = <E, R>(
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>

export interface Options {
  /** Runs between the request guard and routing (the server's: the idempotency keys' middleware, `Idempotency.ts`). */
  readonly inner?: Inner | undefined
  /** Default body limit of the request guard (the server passes `ORGPLANE_MAX_BODY_BYTES`). */
  readonly maxBodyBytes?: number | undefined
  /** Routes served beside the API, so their requests are logged under their path rather than `unknown`. */
  readonly extraRoutes?: ReadonlyArray<readonly [method: string, path: `/${string}`]> | undefined
  /** The metrics' recorder when they are on: its middleware goes outside everything else (platform/Metrics.ts). */
  readonly metrics?: Metrics.Recorder | undefined
  /** Steps a benchmark leaves out (Ablation.ts); none in a server. */
  readonly leftOut?: ReadonlySet<Ablation.Step> | undefined
}

/**
 * The router's global middleware: inside the metrics' middleware when they are on (`Metrics.middleware`, outermost,
 * so it times and counts every answer), the request's span (`Tracing.requestSpan`) and the per-request log line,
 * one bound on the request's waits for its database (DatabaseWait.ts), the security headers and compression (a
 * pre-response handler, so whatever answers gets them), the request guard around routing, and the answers to what fails there.
 */
export const edge = (routes: Routes.Routes, options: Options = {}) => {
  const leftOut = options.leftOut ?? new Set()
  const kept = (step: Ablation.Step, inner: Inner): Inner => leftOut.has(step) ? (httpEffect) => httpEffect : inner
  const guarding = RequestGuard.make(routes, { maxBodyBytes: options.maxBodyBytes ?? defaultMaxBodyBytes })
  const guarded = !leftOut.has("guard")
  const log = kept("log", RequestLog.make(routes))
  const traced = kept("trace", Tracing.requestSpan(routes))
  const watched = kept("databaseWait", DatabaseWait.watched)
  const inner: Inner = kept("idempotencyEdge", options.inner ?? ((httpEffect) => httpEffect))
  // Off, no middleware at all: nothing is measured, nothing is looked up.
  const metered: Inner = options.metrics === undefined ? (httpEffect) => httpEffect : Metrics.middleware(options.metrics, routes)
  const headers = !leftOut.has("headers")
  const errors = !leftOut.has("errors")
  // What fails only as an interruption (the client hung up, the server stops) stays one.
  return <E, R>(
    httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R | HttpServerRequest.HttpServerRequest> =>
    metered(traced(log(watched(Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const guard = guarded ? guarding(inner(httpEffect)) : inner(httpEffect)
      const routed = errors ? Effect.catchCause(guard, answer(routes, request)) : guard
      return headers ? Effect.andThen(HttpEffect.appendPreResponseHandler(finished), routed) : routed
    })))))
}

/**
 * The mapping for any HttpApi built with `apiOf` (tests use small APIs of their own): `ApiErrors` implemented, and
 * `edge` as the router's global middleware.
 */
export const layerFor = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  options: Options = {}
) => Layer.merge(layer, HttpRouter.middleware(edge(Routes.make(api, options.extraRoutes), options), { global: true }))

/**
 * The server's: `layerFor` its API with the configured body limit, the docs' routes and the areas' pages (`pages`)
 * named in the log, and the idempotency keys' middleware inside the guard.
 */
export const serverLayer = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  pages: ReadonlyArray<readonly [method: string, path: `/${string}`]> = []
) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const settings = yield* ServerConfig
      const idempotency = yield* Idempotency.Idempotency
      const metrics = yield* Metrics.CurrentRecorder
      const leftOut = yield* Ablation.LeftOut
      // `/metrics` is a route of this port only when it is served here (a token set, no management port).
      const served = metrics !== undefined && Metrics.placement(metrics.settings) === "main" ? Metrics.routes : []
      return layerFor(api, {
        maxBodyBytes: settings.maxBodyBytes,
        extraRoutes: [...Docs.routes, ...pages, ...served],
        inner: Idempotency.middleware(idempotency),
        metrics,
        leftOut
      })
    })
  )

/** What an operation declares, as `group` wraps its handler. */
interface Operation {
  readonly takesKey: boolean
  /** Not a read (GET): its transactions check the caller's authority at commit (`Authority.ts`). */
  readonly writes: boolean
  readonly audit: AuditDeclaration | undefined
}

/** A handler as HttpApiBuilder registers it (its types keep the `HandlerRuntime` internal). */
type Handler = (request: object) => Effect.Effect<unknown, unknown, unknown>

interface Registered {
  readonly endpoint: HttpApiEndpoint.Top
  readonly handler: Handler
}

const isRegistered = (value: unknown): value is Registered =>
  typeof value === "object" && value !== null && "handler" in value && typeof value.handler === "function" &&
  "endpoint" in value && HttpApiEndpoint.isHttpApiEndpoint(value.endpoint)

/**
 * A handler as its operation declares: through `Authority.around` when it writes (its caller's authority checked
 * again at commit), inside the audit recorder when it declares an event (so a refusal at commit is recorded as
 * one), inside `Idempotency.around` when it takes an `Idempotency-Key`.
 */
const instrumented = (handler: Handler, operation: Operation, leftOut: ReadonlySet<Ablation.Step>): Handler => {
  const checked = operation.writes && !leftOut.has("authority") ? Authority.around(handler) : handler
  const audited = operation.audit === undefined || operation.audit.action === false || leftOut.has("audit")
    ? checked
    : Recorder.around(operation.audit.action, checked)
  return operation.takesKey && !leftOut.has("idempotency") ? Idempotency.around(audited) : audited
}

/** What the API's operations declare, read once per API (every group of the server asks). */
const declared = new WeakMap<object, {
  readonly ids: ReadonlySet<string>
  readonly audits: ReadonlyMap<string, AuditDeclaration>
  readonly requires: ReadonlyMap<string, ReadonlyArray<Action>>
}>()

const declarationsOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) => {
  let found = declared.get(api)
  if (found === undefined) {
    declared.set(api, found = {
      ids: idempotentOperations(api).ids,
      audits: auditDeclarations(api),
      requires: new Map(operationsOf(api).map((operation) => [operation.id, operation.requires]))
    })
  }
  return found
}

/**
 * The endpoint reading its request (path, query, body) with the parse options the API, its group or itself declare,
 * and `reportInput`: the issues keep the value refused, for `requestIssuesOf` (@orgplane/schema) to quote a value
 * that is none of a union's literals back in the words clients already read ("Expected "admin" or "member", actual
 * "owner"").
 * The server's alone: the client encodes with the API's options.
 */
const reportingInput = (api: Pick<HttpApi.Top, "annotations">, group: HttpApiGroup.Top, endpoint: HttpApiEndpoint.Top) => {
  const annotations = Context.merge(Context.merge(api.annotations, group.annotations), endpoint.annotations)
  // As the builder reads them (`HttpApi.getSlotParseOptions`, internal): the slot's options, else `ParseOptions`.
  const fallback = Context.getOrUndefined(annotations, HttpApi.ParseOptions)
  const reporting = <I>(slot: Context.Key<I, SchemaAST.ParseOptions>): SchemaAST.ParseOptions =>
    ({ ...(Context.getOrUndefined(annotations, slot) ?? fallback), reportInput: true })
  return endpoint
    .annotate(HttpApi.ParamsParseOptions, reporting(HttpApi.ParamsParseOptions))
    .annotate(HttpApi.QueryParseOptions, reporting(HttpApi.QueryParseOptions))
    .annotate(HttpApi.PayloadParseOptions, reporting(HttpApi.PayloadParseOptions))
}

/**
 * `HttpApiBuilder.group`, with every handler the group registers wrapped as its operation declares (`instrumented`),
 * however `handle`, `handleAll` and `handleRaw` are called, and its endpoint reading requests with `reportInput`
 * (`reportingInput`: Effect 4.1 builds a group's routes here, from the endpoints registered). Every group of the server
 * is built with it.
 *
 * Its endpoint also answers with its success schema's compiled encoder, without the schema's checks
 * (`ResponseEncoding.answering`, `encodingSuccess`), and the context it is built in is collected for the requests to
 * start with (`GroupContexts`).
 */
export const group: typeof HttpApiBuilder.group = (api, identifier, build) =>
  Layer.unwrap(Effect.map(Ablation.LeftOut, (leftOut) => groupLeavingOut(api, identifier, build, leftOut))).pipe(
    Layer.merge(GroupContexts.collect())
  )

/** `group`, leaving out what a benchmark leaves out (Ablation.ts; nothing in a server). */
const groupLeavingOut = <ApiId extends string, Groups extends HttpApiGroup.Constraint, const Identifier extends HttpApiGroup.Identifier<Groups>, Return>(
  api: HttpApi.HttpApi<ApiId, Groups>,
  identifier: Identifier,
  build: Parameters<typeof HttpApiBuilder.group<ApiId, Groups, Identifier, Return>>[2],
  leftOut: ReadonlySet<Ablation.Step>
) =>
  HttpApiBuilder.group(api, identifier, (handlers) => {
    const { audits, ids, requires } = declarationsOf(api)
    const declaredGroup: unknown = api.groups[identifier]
    if (!HttpApiGroup.isHttpApiGroup(declaredGroup)) throw new Error(`HttpErrors.group: ${identifier} is not a group of the API`)
    // The handlers' registry: every `handle`, `handleAll` and `handleRaw` adds its endpoint's there. Were it not
    // where Effect 4.1 keeps it, the server must not start with its handlers unchecked.
    const registry: unknown = Reflect.get(handlers, "handlers")
    if (!(registry instanceof Map)) throw new Error("HttpErrors.group: HttpApiBuilder's handlers are not where Effect 4.1 keeps them")
    const register = registry.set.bind(registry)
    const checked = ResponseEncoding.checkingEverything() || leftOut.has("encoding")
    Object.defineProperty(registry, "set", {
      value: (name: string, runtime: unknown) => {
        if (!isRegistered(runtime)) throw new Error(`HttpErrors.group: ${name}'s handler is not in the shape Effect 4.1 registers`)
        const id = declaredGroup.topLevel ? name : `${identifier}.${name}`
        const audit = audits.get(id)
        const handler = instrumented(runtime.handler, { takesKey: ids.has(id), writes: runtime.endpoint.method !== "GET", audit }, leftOut)
        const standing = leftOut.has("checkStandIn") ? handler : AuthorizationCheck.standIn(
          handler,
          { requires: requires.get(id) ?? [], audit: audit === undefined || audit.action === false ? undefined : audit.action }
        )
        const answer = leftOut.has("encoding") ? undefined : ResponseEncoding.answering(runtime.endpoint)
        return register(name, {
          ...runtime,
          endpoint: ResponseEncoding.encodingSuccess(api, declaredGroup, reportingInput(api, declaredGroup, runtime.endpoint), checked),
          handler: answer === undefined ? standing : (request: object) => Effect.map(standing(request), answer)
        })
      }
    })
    return build(handlers)
  })

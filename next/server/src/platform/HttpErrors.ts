/**
 * The one place where failures become responses the spec allows. Runs around every route, before the platform
 * encodes declared errors:
 * - a request that fails its schema (path, query, headers, body) → 400 `invalid_request`;
 * - a response that fails its own schema is a server bug → 500, logged, never blamed on the caller;
 * - the database unavailable → 503 `service_unavailable` with `Retry-After` (see Unavailable.ts);
 * - a defect → 500 `internal_error`, logged with its cause.
 *
 * On Effect 4 it is the server's implementation of @orgplane-next/schema's `ApiErrors`, the errors-only middleware
 * every endpoint of `apiOf(...)` has, so it sees a handler's failures before the platform encodes them. The platform
 * tells the request's schema failures (`Params`, `Headers`, `Query`, `Payload`) from the response's (`Body`,
 * `ResponseHeaders`) itself, which the Effect 3 module's `HandlerReturned` marking did by hand.
 *
 * Partial port (issue 46). Left in packages/server/src/platform/HttpErrors.ts: a body that is not valid JSON → 400;
 * an unknown route → 404 `not_found` and 405 `method_not_allowed` with `Allow` (platform/Routes.ts); SCIM's error
 * shapes under `/scim/v2`; a rate limit → 429 with `Retry-After`; an undeclared failure → 500 `internal_error` (here
 * the platform answers it); the request guard's 414, 415, 413 and its 400s but the path's (platform/RequestGuard.ts);
 * the per-request log line (platform/RequestLog.ts); `X-Content-Type-Options: nosniff` and `/v1`'s
 * `Cache-Control: no-store`; and `group`, which wraps every handler in the audit recorder, idempotency, authority
 * and response encoding.
 */
import { ApiErrors, InvalidRequest, invalidRequestDetails } from "@orgplane-next/schema"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as SchemaIssue from "effect/SchemaIssue"
import { HttpApiSchemaError } from "effect/http-api/HttpApiError"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Unavailable from "./Unavailable.js"

const internalError = HttpServerResponse.jsonUnsafe(
  { error: "internal_error", message: "The server failed to handle this request." },
  { status: 500 }
)

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** The spec's 400 for a request that fails its schema: the details are worded by `@orgplane-next/schema`, like the client's. */
export const toInvalidRequest = (error: HttpApiSchemaError) =>
  new InvalidRequest({
    details: invalidRequestDetails(formatIssue(error.cause.issue).issues.map(({ message, path }) => ({
      path: (path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment),
      message
    })))
  })

/** Whether a schema failure is the response's (the handler's value, or its headers): the server's bug. */
const isResponseFailure = (error: HttpApiSchemaError) => error.kind === "Body" || error.kind === "ResponseHeaders"

/** `ApiErrors`, implemented: see the module comment. */
export const layer = Layer.succeed(ApiErrors, (httpEffect) =>
  Effect.catchCause(httpEffect, (cause) =>
    Effect.gen(function*() {
      if (Cause.hasInterruptsOnly(cause)) return yield* Effect.failCause(cause)
      const failure = Cause.findErrorOption(cause)
      // A storage failure may reach the edge as a defect (a repository that dies on it).
      const defect = Cause.findDefect(cause)
      const error = Option.isSome(failure) ? failure.value : Result.isSuccess(defect) ? defect.success : undefined
      if (HttpApiSchemaError.is(error)) {
        if (isResponseFailure(error)) {
          yield* Effect.logError("A response did not match its schema", error.cause)
          return internalError
        }
        return yield* Effect.fail(toInvalidRequest(error))
      }
      const unavailable = yield* Unavailable.responseFor(error)
      if (Option.isSome(unavailable)) return unavailable.value
      if (Option.isSome(failure)) return yield* Effect.failCause(cause)
      yield* Effect.logError("Unhandled failure", cause)
      return internalError
    })))

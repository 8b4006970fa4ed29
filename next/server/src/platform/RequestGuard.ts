/**
 * Transport hygiene, before routing and authentication: a path with one reading (under `/scim/v2`, refused as a SCIM
 * error).
 *
 * Partial port (issue 46). Left in packages/server/src/platform/RequestGuard.ts: the URL's length (414); NUL in the
 * query or a path parameter, and in a body (400); the body's media type against what the operation reads (415), its
 * size (413, `readNode`/`readStream`/`withBody`), its JSON nesting depth (`exceedsDepth`, `maxDepth`) and NUL
 * characters (`nulPaths`); with them `parseMediaType`, `isJson`, `accepts` and the `Options` (`maxBodyBytes`).
 */
import { InvalidRequest, InvalidRequestResponse, ScimBadRequest, ScimBadRequestResponse, ScimMediaType } from "@orgplane-next/schema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { HttpRouter } from "effect/http"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { pathAmbiguity } from "./Routes.js"

const encodeInvalidRequest = Schema.encodeSync(InvalidRequestResponse)
const encodeScimBadRequest = Schema.encodeSync(ScimBadRequestResponse)

/**
 * The 400 for a path with more than one reading. Under the SCIM protocol's base, a SCIM error of the same status
 * (RFC 7644 §3.12): a directory's client reads only those; `invalidSyntax`, as for any request that does not fit.
 */
export const refusal = (url: string, ambiguity: string) =>
  url.startsWith("/scim/v2/")
    ? HttpServerResponse.jsonUnsafe(encodeScimBadRequest(new ScimBadRequest({ scimType: "invalidSyntax", detail: ambiguity })), {
      status: 400,
      contentType: ScimMediaType
    })
    : HttpServerResponse.jsonUnsafe(encodeInvalidRequest(InvalidRequest.field([], ambiguity)), { status: 400 })

/**
 * The request's target as the client sent it. Effect 4's Node server reads an absolute-form target
 * (`GET http://host/v1/me`) through `new URL`, which resolves dot segments, drops a fragment and reads `\` as `/`
 * before `request.url` has it, while `originalUrl` keeps it as sent (and is `url` behind the scheme and host for the
 * usual origin form): the guard reads what was sent, as it did the Effect 3 server's `request.url`.
 */
const sentTarget = (request: HttpServerRequest.HttpServerRequest) =>
  request.originalUrl.endsWith(request.url) ? request.url : request.originalUrl

/**
 * The guard, around the router. A request pays one pass over its path: a path the router would read otherwise than
 * a proxy in front of it is 400 (`Routes.pathAmbiguity`), answered here, before any route, authentication or
 * handler sees it.
 */
export const guard = <E, R>(
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const ambiguity = pathAmbiguity(sentTarget(request))
    return ambiguity === undefined ? httpEffect : Effect.succeed(refusal(request.url, ambiguity))
  })

/**
 * The guard as the router's global middleware: Effect 4's HttpApi middleware (HttpErrors' `ApiErrors`) runs after
 * routing, where the Effect 3 server ran the guard inside its `HttpApiBuilder.middleware`, before it.
 */
export const layer = HttpRouter.middleware(guard, { global: true })

/**
 * The headers RFC 7644 gives an answer carrying one resource (§3.1, §3.14): `ETag`, its `meta.version`, so a client
 * can send `If-Match` without reading the body; and for a create, `Location`, its `meta.location`. A read whose
 * `If-None-Match` names that version answers 304 without a body.
 *
 * The headers are set with `HttpEffect.appendPreResponseHandler`, which needs the request (`HttpServerRequest`): a
 * handler has it.
 */
import * as Effect from "effect/Effect"
import * as HttpEffect from "effect/http/HttpEffect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"

interface Located {
  readonly meta?: { readonly location?: string | undefined; readonly version?: string | undefined } | undefined
}

/** Sets the resource's headers on the response the handler's answer becomes. */
export const resourceHeaders = (resource: Located, created: boolean) =>
  HttpEffect.appendPreResponseHandler((_, response) =>
    Effect.succeed(HttpServerResponse.setHeaders(response, {
      ...(resource.meta?.version === undefined ? {} : { etag: resource.meta.version }),
      ...(created && resource.meta?.location !== undefined ? { location: resource.meta.location } : {})
    })))

/** The answer, with its resource headers (`created`: with `Location`). */
export const withResourceHeaders = (created = false) => <A extends Located, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.tap(effect, (resource) => resourceHeaders(resource, created))

/** An entity tag's opaque part: weak comparison (RFC 9110 §8.8.3.2) ignores `W/`. */
const opaque = (tag: string) => tag.trim().replace(/^W\//, "")

/** Whether `If-None-Match` (`*` or a list of entity tags) names `version` (RFC 9110 §13.1.2). */
export const noneMatchNames = (ifNoneMatch: string | undefined, version: string) =>
  ifNoneMatch !== undefined &&
  (ifNoneMatch.trim() === "*" || ifNoneMatch.split(",").some((tag) => opaque(tag) === opaque(version)))

/**
 * A read's answer: 304 with the `ETag` and no body when `If-None-Match` names the resource's version (RFC 7644
 * §3.14), else the resource with its headers.
 */
export const unlessNotModified = (ifNoneMatch: string | undefined) =>
<A extends Located, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(effect, (resource): Effect.Effect<A | HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> => {
    const version = resource.meta?.version
    return version !== undefined && noneMatchNames(ifNoneMatch, version)
      ? Effect.succeed(HttpServerResponse.empty({ status: 304, headers: { etag: version } }))
      : Effect.as(resourceHeaders(resource, false), resource)
  })

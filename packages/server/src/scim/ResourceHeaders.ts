/**
 * The headers RFC 7644 gives an answer carrying one resource (§3.1, §3.14): `ETag`, its `meta.version`, so a client
 * can send `If-Match` without reading the body; and for a create, `Location`, its `meta.location`.
 */
import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"

interface Located {
  readonly meta?: { readonly location?: string | undefined; readonly version?: string | undefined } | undefined
}

/** Sets the resource's headers on the response the handler's answer becomes. */
export const resourceHeaders = (resource: Located, created: boolean) =>
  HttpApp.appendPreResponseHandler((_, response) =>
    Effect.succeed(HttpServerResponse.setHeaders(response, {
      ...(resource.meta?.version === undefined ? {} : { etag: resource.meta.version }),
      ...(created && resource.meta?.location !== undefined ? { location: resource.meta.location } : {})
    })))

/** The answer, with its resource headers (`created`: with `Location`). */
export const withResourceHeaders = (created = false) => <A extends Located, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.tap(effect, (resource) => resourceHeaders(resource, created))

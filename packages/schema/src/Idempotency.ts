/**
 * Safe retries of writes: the `Idempotency-Key` request header, which operations take it, and the
 * `Idempotent-Replayed` response header. The server, the clients and the OpenAPI document share these rules.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as Schema from "effect/Schema"

/** The request header (HTTP header names are case-insensitive; this is how Node and fetch report them). */
export const idempotencyKeyHeader = "idempotency-key"

/** The response header set on an answer that is the stored answer of an earlier request with the same key. */
export const idempotentReplayedHeader = "idempotent-replayed"

/** How long the server keeps a key and its answer. */
export const idempotencyKeyLifetimeHours = 24

// The `u` flag: without it Effect 4 leaves the pattern out of the JSON Schema (the same source, the same matches).
export const idempotencyKeyPattern = /^[\x20-\x7E]{1,255}$/u

/** 1 to 255 printable ASCII characters (a UUID is the usual choice). */
export const IdempotencyKey = Schema.String.check(Schema.isPattern(idempotencyKeyPattern)).annotate({
  identifier: "IdempotencyKey",
  description: "1 to 255 printable ASCII characters, unique per operation the caller means (a UUID, say)."
})

const writes = new Set(["POST", "PUT", "PATCH", "DELETE"])

/**
 * Whether an operation takes part: a write (POST, PUT, PATCH, DELETE) that requires credentials, which scope the
 * key. Operations open to anonymous callers (sign-up, sign-in, bootstrap, accepting an invitation, the signed
 * webhook) ignore the header: a replayed sign-in would hand its session token to anyone who knew the key.
 *
 * Effect 4 has no optional middleware: a security middleware requires credentials when it can refuse the request,
 * that is when it declares errors (`OptionalAuthentication` declares none: it never refuses).
 */
export const takesIdempotencyKey = (method: string, middleware: Iterable<HttpApiMiddleware.AnyService>): boolean => {
  if (!writes.has(method.toUpperCase())) return false
  for (const tag of middleware) {
    if (HttpApiMiddleware.isSecurity(tag) && tag.error.size > 0) return true
  }
  return false
}

export interface IdempotentOperations {
  /** Operation ids (`teams.create`), as in the OpenAPI document. */
  readonly ids: ReadonlySet<string>
  /** Whether a request with this method and path (no query, any base path before it) reaches one of them. */
  readonly matches: (method: string, path: string) => boolean
}

/** The operations of `api` that take an `Idempotency-Key`. */
export const idempotentOperations = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): IdempotentOperations => {
  const ids = new Set<string>()
  const routes: Array<{ readonly method: string; readonly pattern: RegExp; readonly params: number; readonly takes: boolean }> = []
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint, group, middleware }) {
      const takes = takesIdempotencyKey(endpoint.method, middleware)
      if (takes) ids.add(group.topLevel ? endpoint.identifier : `${group.identifier}.${endpoint.identifier}`)
      const segments = endpoint.path.split("/")
      const source = segments.map((segment) => segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      routes.push({
        method: endpoint.method,
        pattern: new RegExp(`${source.join("/")}/?$`),
        params: segments.filter((segment) => segment.startsWith(":")).length,
        takes
      })
    }
  })
  // The most specific route wins, as in the server's router: `/v1/invitations/accept` before `/v1/invitations/:id`.
  routes.sort((a, b) => a.params - b.params)
  return {
    ids,
    matches: (method, path) => {
      const upper = method.toUpperCase()
      return routes.find((route) => route.method === upper && route.pattern.test(path))?.takes ?? false
    }
  }
}

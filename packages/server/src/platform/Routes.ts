/**
 * The API's route table, built once from its definition: a request's method and URL → its route template,
 * annotations and the media types its body may have; a URL → the methods its path has; and the paths it will not
 * read, because a proxy in front of the server could read them as other paths.
 */
import { routerConfig } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as FindMyWay from "effect/http/FindMyWay"
import * as HttpMethod from "effect/http/HttpMethod"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"

export interface Route {
  /** The path as declared, say `/v1/teams/:teamId`: a low-cardinality name for logs and metrics. */
  readonly template: string
  /**
   * The operation's name, as the OpenAPI document's `operationId` (`teams.list`); an extra route's path. A
   * low-cardinality label for metrics (platform/Metrics.ts).
   */
  readonly operation: string
  /** The endpoint's annotations merged over its group's and the API's. */
  readonly annotations: Context.Context<never>
  /**
   * The media types of the request body its payload schema decodes (`application/json` for a JSON payload), as the
   * OpenAPI document lists them; empty when it reads no body through a schema (no payload, a GET, a raw body).
   */
  readonly mediaTypes: ReadonlyArray<string>
}

export interface Match {
  readonly route: Route
  /** Path parameters, decoded. */
  readonly params: Readonly<Record<string, string | undefined>>
}

export interface Routes {
  readonly find: (method: string, url: string) => Match | undefined
  /** The methods the URL's path has, in a fixed order (HEAD after GET: the platform answers it with the GET route). */
  readonly methods: (url: string) => ReadonlyArray<string>
}

/**
 * Why the router would read the URL's path otherwise than a proxy or firewall in front of the server may, or
 * undefined when there is one reading. The router (find-my-way) ends a path at `;` and `#` as at `?`, drops empty
 * segments and decodes `%2F` inside a parameter, while proxies keep `;` in the path, resolve dot segments (`..`,
 * `%2e%2e`: RFC 3986 §5.2.4) before matching their rules, and some read `\` (as browsers do) or `%2F` as a
 * separator; a `%` without two hexadecimal digits after it is no encoding at all (RFC 3986 §2.1), which each reads its
 * own way: `POST /v1/teams;/../../v1/api-keys` is `/v1/api-keys` to a proxy and `/v1/teams` to the router.
 * Clients never need any of these (`fetch` and `new URL` resolve dot segments and keep fragments to themselves),
 * so such a path is refused rather than read one way or the other. A trailing slash is not: both read the same
 * resource. A `#` is refused in the query too (RFC 3986 §3.4: it ends the query, so it is never sent).
 */
export const pathAmbiguity = (url: string): string | undefined => {
  // An absolute-form target (`GET http://host/v1/me`), which the router reads from its first slash after the host.
  const start = url.charCodeAt(0) === 47 ? 0 : /^https?:\/\//.test(url) ? url.indexOf("/", url.indexOf("//") + 2) : 0
  if (start === -1) return undefined
  if (url.includes("#", start)) return "The URL has a \"#\": a fragment is the client's own and never sent to a server."
  const query = url.indexOf("?", start)
  const end = query === -1 ? url.length : query
  let segment = url.charCodeAt(start) === 47 ? start + 1 : start
  for (let i = segment; i <= end; i++) {
    const c = i === end ? 47 : url.charCodeAt(i)
    if (c === 47) {
      // "/" closes a segment; the one closed at the end of the path may be empty (a trailing slash).
      if (i === segment && i !== end) return refusal("an empty segment (\"//\")")
      if (i - segment <= 6 && isDotSegment(url, segment, i)) return refusal("a \".\" or \"..\" segment (percent-encoded or not)")
      segment = i + 1
    } else if (c === 59) return refusal("a \";\"")
    else if (c === 92) return refusal("a \"\\\"")
    else if (c === 37) {
      // `| 32` lower-cases an ASCII letter.
      const high = url.charCodeAt(i + 1)
      const low = url.charCodeAt(i + 2) | 32
      if (i + 2 >= end || !isHexDigit(high) || !isHexDigit(url.charCodeAt(i + 2))) {
        return refusal("a \"%\" not followed by two hexadecimal digits (a malformed percent-encoding)")
      }
      if (high === 50 && low === 102) return refusal("an encoded \"/\" (%2F)")
      if (high === 53 && low === 99) return refusal("an encoded \"\\\" (%5C)")
    }
  }
  return undefined
}

const refusal = (what: string) =>
  `The path has ${what}: a proxy in front of this server could read it as another path than the server would, so it is refused.`

/** Whether a character code is a hexadecimal digit, 0-9, A-F or a-f. */
const isHexDigit = (c: number) => (c >= 48 && c <= 57) || ((c | 32) >= 97 && (c | 32) <= 102)

/** Whether `url[from, to)` is `.` or `..`, each dot raw or `%2e` in either case; without allocating, as it runs per request. */
const isDotSegment = (url: string, from: number, to: number) => {
  let dots = 0
  for (let i = from; i < to; dots++) {
    if (url.charCodeAt(i) === 46) i++
    else if (url.charCodeAt(i) === 37 && url.charCodeAt(i + 1) === 50 && (url.charCodeAt(i + 2) | 32) === 101) i += 3
    else return false
  }
  return dots === 1 || dots === 2
}

/**
 * An endpoint's path as the router takes it. HttpApiBuilder passes it through its internal `toRouterPath`, which
 * leaves a path as it is when each of its parameters is declared and ends at a `/` or at its end, as in this API.
 */
const routerPath = (path: string): `/${string}` => path.startsWith("/") ? path as `/${string}` : `/${path}`

/**
 * The router's settings, the server's and this table's (@orgplane/schema's, which clients match paths with too): path
 * parameters up to 1024 characters, and paths matched in their letter case only. Server.ts passes them to the
 * platform's router.
 */
export { routerConfig } from "@orgplane/schema"

/** Every method an endpoint may have, in the order an `Allow` header lists them. */
const allMethods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const

/**
 * Every endpoint of `api`, plus `extra` routes served beside it (say the OpenAPI document). Matching uses the same
 * router, with the same defaults, as `HttpApiBuilder`, so a request gets the template of the handler that serves it.
 */
export const make = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  extra: ReadonlyArray<readonly [method: string, path: `/${string}`]> = []
): Routes => {
  const router = FindMyWay.make<Route>(routerConfig)
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint, group, mergedAnnotations }) {
      // An endpoint's payload schemas are keyed by their media type.
      const mediaTypes = HttpMethod.hasBody(endpoint.method) ? [...endpoint.payload.keys()] : []
      const operation = group.topLevel ? endpoint.identifier : `${group.identifier}.${endpoint.identifier}`
      router.on(endpoint.method, routerPath(endpoint.path), { template: endpoint.path, operation, annotations: mergedAnnotations, mediaTypes })
    }
  })
  for (const [method, path] of extra) router.on(method, path, { template: path, operation: path, annotations: Context.empty(), mediaTypes: [] })
  const find = (method: string, url: string) => {
    // No route for a path the request guard refuses: nothing names it by another path's template or methods.
    if (pathAmbiguity(url) !== undefined) return undefined
    // The platform's router answers HEAD with the GET route.
    const found = router.find(method, url) ?? (method === "HEAD" ? router.find("GET", url) : undefined)
    return found === undefined ? undefined : { route: found.handler, params: found.params }
  }
  return {
    find,
    methods: (url) => allMethods.filter((method) => find(method, url) !== undefined)
  }
}

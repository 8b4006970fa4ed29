/**
 * The API's route table, built once from its definition: a request's method and URL → its route template,
 * annotations and the media types its body may have; a URL → the methods its path has.
 */
import { type HttpApi, HttpApi as Api, HttpMethod } from "@effect/platform"
import { Context } from "effect"
import * as FindMyWay from "find-my-way-ts"

export interface Route {
  /** The path as declared, say `/v1/teams/:teamId`: a low-cardinality name for logs and metrics. */
  readonly template: string
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

/** Every method an endpoint may have, in the order an `Allow` header lists them. */
const allMethods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const

/**
 * Every endpoint of `api`, plus `extra` routes served beside it (say the OpenAPI document). Matching uses the same
 * router, with the same defaults, as `HttpApiBuilder`, so a request gets the template of the handler that serves it.
 */
export const make = (
  api: HttpApi.HttpApi.Any,
  extra: ReadonlyArray<readonly [method: string, path: `/${string}`]> = []
): Routes => {
  const router = FindMyWay.make<Route>()
  Api.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup() {},
    onEndpoint({ endpoint, mergedAnnotations, payloads }) {
      const mediaTypes = HttpMethod.hasBody(endpoint.method) ? [...payloads.keys()] : []
      router.on(endpoint.method, endpoint.path, { template: endpoint.path, annotations: mergedAnnotations, mediaTypes })
    }
  })
  for (const [method, path] of extra) router.on(method, path, { template: path, annotations: Context.empty(), mediaTypes: [] })
  const find = (method: string, url: string) => {
    // The platform's router answers HEAD with the GET route.
    const found = router.find(method, url) ?? (method === "HEAD" ? router.find("GET", url) : undefined)
    return found === undefined ? undefined : { route: found.handler, params: found.params }
  }
  return {
    find,
    methods: (url) => allMethods.filter((method) => find(method, url) !== undefined)
  }
}

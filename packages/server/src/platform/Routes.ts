/** The API's route table, built once from its definition: a request's method and URL → its route template and annotations. */
import { type HttpApi, HttpApi as Api } from "@effect/platform"
import { Context } from "effect"
import * as FindMyWay from "find-my-way-ts"

export interface Route {
  /** The path as declared, say `/v1/teams/:teamId`: a low-cardinality name for logs and metrics. */
  readonly template: string
  /** The endpoint's annotations merged over its group's and the API's. */
  readonly annotations: Context.Context<never>
}

export interface Match {
  readonly route: Route
  /** Path parameters, decoded. */
  readonly params: Readonly<Record<string, string | undefined>>
}

export interface Routes {
  readonly find: (method: string, url: string) => Match | undefined
}

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
    onEndpoint({ endpoint, mergedAnnotations }) {
      router.on(endpoint.method, endpoint.path, { template: endpoint.path, annotations: mergedAnnotations })
    }
  })
  for (const [method, path] of extra) router.on(method, path, { template: path, annotations: Context.empty() })
  return {
    find(method, url) {
      // The platform's router answers HEAD with the GET route.
      const found = router.find(method, url) ?? (method === "HEAD" ? router.find("GET", url) : undefined)
      return found === undefined ? undefined : { route: found.handler, params: found.params }
    }
  }
}

/**
 * OpenAPI extension members (`x-orgplane-*`) on an endpoint's operation: each marker adds its own to those already
 * there (`OpenApi.Override` holds one value per endpoint, so a plain `annotate` would drop the earlier markers').
 */
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Context from "effect/Context"
import * as Option from "effect/Option"

export const addExtension = (name: `x-orgplane-${string}`, value: unknown) =>
<E extends HttpApiEndpoint.HttpApiEndpoint.Any>(endpoint: E): E => {
  const existing = Context.getOption((endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps).annotations, OpenApi.Override)
  return (endpoint as any).annotate(OpenApi.Override, { ...Option.getOrElse(existing, () => ({})), [name]: value }) as E
}

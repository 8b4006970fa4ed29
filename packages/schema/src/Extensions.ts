/**
 * OpenAPI extension members (`x-orgplane-*`) on an endpoint's operation: each marker adds its own to those already
 * there (`OpenApi.Override` holds one value per endpoint, so a plain `annotate` would drop the earlier markers').
 */
import * as Context from "effect/Context"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Option from "effect/Option"

/**
 * What a marker needs of an endpoint: its annotations and `annotate`. Effect 4's `HttpApiEndpoint.Top` does not take
 * a concrete endpoint as a generic bound, so markers are typed by what they use, which every endpoint has.
 */
export interface Annotatable<E> {
  readonly annotations: Context.Context<never>
  annotate<I, S>(key: Context.Key<I, S>, value: S): E
}

export const addExtension = (name: `x-orgplane-${string}`, value: unknown) => <E extends Annotatable<E>>(endpoint: E): E => {
  const existing = Context.getOption(endpoint.annotations, OpenApi.Override)
  return endpoint.annotate(OpenApi.Override, { ...Option.getOrElse(existing, () => ({})), [name]: value })
}

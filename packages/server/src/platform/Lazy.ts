/**
 * A module loaded the first time something needs it, not at start-up: for the large libraries that only some
 * requests use (SAML's XML signature stack, Ajv, the OpenID client), whose loading was a tenth of a second of every
 * start. The import runs once; every later use gets the same module.
 */
import { Effect } from "effect"

export const lazily = <A>(load: () => Promise<A>): Effect.Effect<A> => {
  let loading: Promise<A> | undefined
  return Effect.promise(() => (loading ??= load()))
}

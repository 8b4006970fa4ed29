/**
 * A module loaded the first time something needs it, not at start-up: for the large libraries that only some
 * requests use (SAML's XML signature stack, Ajv, the OpenID client, the MCP SDK), whose loading was a sixth of every
 * start. The import runs once; every later use gets the same module.
 */
import * as Effect from "effect/Effect"

export interface LazyModule<A> {
  /** The module, imported by the first call. */
  readonly load: () => Promise<A>
  /** The module if something has loaded it already, else undefined (for a synchronous check). */
  readonly ifLoaded: () => A | undefined
}

export const lazyModule = <A>(load: () => Promise<A>): LazyModule<A> => {
  let loading: Promise<A> | undefined
  let loaded: A | undefined
  return {
    load: () => loading ??= load().then((module) => (loaded = module)),
    ifLoaded: () => loaded
  }
}

/** The module as an Effect, for code that loads it where it uses it. */
export const lazily = <A>(load: () => Promise<A>): Effect.Effect<A> => Effect.promise(lazyModule(load).load)

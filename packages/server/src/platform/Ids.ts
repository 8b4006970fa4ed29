/** Generates TypeIDs. A service, so tests can make them deterministic. */
import { Context, Effect, Layer } from "effect"
import type { Prefix } from "@orgplane/schema"
import { typeid } from "typeid-js"

export class IdGenerator extends Context.Tag("@orgplane/server/IdGenerator")<IdGenerator, {
  /** A new TypeID with the given prefix. Later ids sort after earlier ones. */
  readonly make: <B>(prefix: Prefix) => Effect.Effect<B>
}>() {
  static readonly Live = Layer.succeed(IdGenerator, {
    make: <B>(prefix: Prefix) => Effect.sync(() => typeid(prefix).toString() as B)
  })
}

/** Shorthand for `IdGenerator.make` with the branded result type. */
export const makeId = <B>(prefix: Prefix) => Effect.flatMap(IdGenerator, (ids) => ids.make<B>(prefix))

/** Generates TypeIDs. A service, so tests can make them deterministic. */
import type { IdOf, Prefix } from "@orgplane/schema"
import { Context, Effect, Layer } from "effect"
import { typeid } from "typeid-js"

export class IdGenerator extends Context.Tag("@orgplane/server/platform/Ids")<IdGenerator, {
  /** A new TypeID with the given prefix. Later ids sort after earlier ones. */
  readonly make: (prefix: Prefix) => Effect.Effect<string>
}>() {
  static readonly Live = Layer.succeed(IdGenerator, {
    make: (prefix: Prefix) => Effect.sync(() => typeid(prefix).toString())
  })
}

/** A new id of the prefix's own brand: `makeId("tem")` is a `TeamId`, and nothing else can be. */
export const makeId = <P extends Prefix>(prefix: P): Effect.Effect<IdOf<P>, never, IdGenerator> =>
  Effect.flatMap(IdGenerator, (ids) => ids.make(prefix)) as Effect.Effect<IdOf<P>, never, IdGenerator>

/** Generates TypeIDs. A service, so tests can make them deterministic. */
import type { IdOf, Prefix } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { typeid } from "typeid-js"

export class IdGenerator extends Context.Service<IdGenerator, {
  /** A new TypeID with the given prefix. Later ids sort after earlier ones. */
  readonly make: (prefix: Prefix) => Effect.Effect<string>
}>()("@orgplane/server/platform/Ids") {
  static readonly layer = Layer.succeed(IdGenerator, {
    make: (prefix: Prefix) => Effect.sync(() => typeid(prefix).toString())
  })
}

/** A new id of the prefix's own brand: `makeId("tem")` is a `TeamId`, and nothing else can be. */
export const makeId = <P extends Prefix>(prefix: P): Effect.Effect<IdOf<P>, never, IdGenerator> =>
  IdGenerator.use((ids) => ids.make(prefix)) as Effect.Effect<IdOf<P>, never, IdGenerator>

/** When the durable engine (`Durable.ts`) may start. */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/**
 * Opened when the engine may start. The standalone server provides one and opens it once it listens, so the
 * engine's start-up work (its SQL, and on the embedded database PGlite itself, which runs on the main thread) does
 * not compete with the server's own; without one (embedded in a host) the engine starts at once.
 */
export class StartGate extends Context.Service<StartGate, Deferred.Deferred<void>>()("@orgplane/server/platform/DurableStartGate") {
  static readonly layer = Layer.effect(StartGate, Deferred.make<void>())
  static readonly open = Effect.flatMap(Effect.serviceOption(StartGate), Option.match({
    onNone: () => Effect.void,
    onSome: (gate) => Effect.asVoid(Deferred.succeed(gate, undefined))
  }))
}

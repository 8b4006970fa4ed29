/**
 * The signal that wakes the audit streams' delivery loop (audit/StreamDelivery.ts) in this process when a stream
 * is created, changed or tested here, so a loop that is idling (no stream due soon) looks at once. A loop running in
 * another process of the cluster is not woken: it finds the stream at its next look, at most `MAX_IDLE_WAIT` later.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Latch from "effect/Latch"
import * as Layer from "effect/Layer"

const make = Effect.gen(function*() {
  const latch = yield* Latch.make(false)
  return {
    /** Wakes the loop now, or, while it is busy looking, as soon as it would wait. */
    wake: Effect.asVoid(latch.open),
    /** Forgets wakes taken so far: called as a look begins, which sees everything they announced. */
    take: Effect.asVoid(latch.close),
    /** Answers at the next wake (at once after one not yet taken). */
    await: latch.await
  } as const
})

export class StreamWake extends Context.Service<StreamWake>()("@orgplane/server/audit/StreamWake", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

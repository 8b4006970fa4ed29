/** Test clocks for servers run in the test's process: a clock that reads the time from the test (`clockAt`), and the real clock moved forward by the test as it goes (`ShiftedClock`). */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/** A clock at `millis()`; its monotonic time and sleeps are the real ones. */
export const clockAt = (millis: () => number): Clock.Clock => ({
  currentTimeMillisUnsafe: millis,
  currentTimeMillis: Effect.sync(millis),
  currentTimeNanosUnsafe: () => BigInt(millis()) * 1_000_000n,
  currentTimeNanos: Effect.sync(() => BigInt(millis()) * 1_000_000n),
  monotonicTimeNanosUnsafe: () => process.hrtime.bigint(),
  monotonicTimeNanos: Effect.sync(() => process.hrtime.bigint()),
  sleep: (duration) => Effect.sleep(duration)
})

/** The real clock moved forward by `advance`: a server's `now` is real time plus `offsetMillis`. */
export class ShiftedClock implements Clock.Clock {
  offsetMillis = 0
  readonly #real = Clock.Clock.defaultValue()
  advance(duration: Duration.Input) {
    this.offsetMillis += Duration.toMillis(Duration.fromInputUnsafe(duration))
  }
  currentTimeMillisUnsafe() {
    return this.#real.currentTimeMillisUnsafe() + this.offsetMillis
  }
  currentTimeNanosUnsafe() {
    return this.#real.currentTimeNanosUnsafe() + BigInt(this.offsetMillis) * 1_000_000n
  }
  readonly currentTimeMillis = Effect.sync(() => this.currentTimeMillisUnsafe())
  readonly currentTimeNanos = Effect.sync(() => this.currentTimeNanosUnsafe())
  monotonicTimeNanosUnsafe() {
    return this.#real.monotonicTimeNanosUnsafe()
  }
  readonly monotonicTimeNanos = Effect.sync(() => this.monotonicTimeNanosUnsafe())
  sleep(duration: Duration.Duration) {
    return this.#real.sleep(duration)
  }
}

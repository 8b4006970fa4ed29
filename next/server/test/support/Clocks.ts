/** Test clocks: a clock that reads the time from the test (`clockAt`), moved forward by the test as it goes. */
import * as Clock from "effect/Clock"
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

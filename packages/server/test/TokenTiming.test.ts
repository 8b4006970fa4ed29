/**
 * platform/TokenTiming.ts: the loser of a refresh race waiting for the winner's write (`awaitOtherRefresh`), on the
 * TestClock; and `expiring`/`expired` at their edges.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/testing/TestClock"
import { awaitOtherRefresh, expired, expiring, RACE_WAIT, REFRESH_WINDOW } from "../src/platform/TokenTiming.js"

/** A credential read that counts its reads and shows version 2 from read `movesAt` on (never, by default). */
const credentialRead = (movesAt = Infinity) =>
  Effect.map(Ref.make(0), (reads) => ({
    reads,
    read: Effect.map(Ref.updateAndGet(reads, (n) => n + 1), (n) => Option.some({ credentialVersion: n >= movesAt ? 2 : 1 }))
  }))

describe("awaitOtherRefresh", () => {
  it.effect("answers the credential another refresh moved, reading it once per interval until then", () =>
    Effect.gen(function*() {
      const { read, reads } = yield* credentialRead(3)
      const waiting = yield* Effect.forkChild(awaitOtherRefresh(read, 1))
      yield* TestClock.adjust(RACE_WAIT.interval)
      expect(yield* Ref.get(reads)).toBe(2)
      expect(waiting.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust(RACE_WAIT.interval)
      expect(yield* Fiber.join(waiting)).toEqual(Option.some({ credentialVersion: 2 }))
      expect(yield* Ref.get(reads)).toBe(3)
    }))

  it.effect("answers at once when the first read already shows another version", () =>
    Effect.gen(function*() {
      const { read, reads } = yield* credentialRead(1)
      expect(yield* awaitOtherRefresh(read, 1)).toEqual(Option.some({ credentialVersion: 2 }))
      expect(yield* Ref.get(reads)).toBe(1)
    }))

  it.effect("gives up with none after its attempts when nothing moved, without sleeping after the last read", () =>
    Effect.gen(function*() {
      const { read, reads } = yield* credentialRead()
      const waiting = yield* Effect.forkChild(awaitOtherRefresh(read, 1))
      yield* TestClock.adjust(Duration.times(RACE_WAIT.interval, RACE_WAIT.attempts - 2))
      expect(waiting.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust(RACE_WAIT.interval)
      expect(yield* Fiber.join(waiting)).toEqual(Option.none())
      expect(yield* Ref.get(reads)).toBe(RACE_WAIT.attempts)
    }))

  it.effect("treats a credential that is gone as not moved", () =>
    Effect.gen(function*() {
      const waiting = yield* Effect.forkChild(awaitOtherRefresh(Effect.succeed(Option.none<{ credentialVersion: number }>()), 1))
      yield* TestClock.adjust(Duration.times(RACE_WAIT.interval, RACE_WAIT.attempts))
      expect(yield* Fiber.join(waiting)).toEqual(Option.none())
    }))

  it("refreshes a token expiring within the window, and knows an expired one", () => {
    const at = new Date("2030-01-01T00:00:00Z")
    const inMillis = (millis: number) => ({ tokenExpiresAt: new Date(at.getTime() + millis) })
    const window = Duration.toMillis(REFRESH_WINDOW)
    expect(window).toBe(60_000)
    expect(expiring(inMillis(window), at)).toBe(true)
    expect(expiring(inMillis(window + 1), at)).toBe(false)
    expect(expiring({ tokenExpiresAt: null }, at)).toBe(false)
    expect(expired(inMillis(0), at)).toBe(true)
    expect(expired(inMillis(1), at)).toBe(false)
    expect(expired({ tokenExpiresAt: null }, at)).toBe(false)
  })
})

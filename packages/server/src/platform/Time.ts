/** The current instant from Effect's Clock, so tests can move time with TestClock. */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

export const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

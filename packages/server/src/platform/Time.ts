/** The current instant from Effect's Clock, so tests can move time with TestClock. */
import { Clock, Effect } from "effect"

export const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

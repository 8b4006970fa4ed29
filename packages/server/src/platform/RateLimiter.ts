/** Fixed-window rate limits kept in the database (not tenant-scoped), so they hold across restarts and processes. */
import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import { now } from "./Time.js"

export interface Decision {
  readonly allowed: boolean
  /** Seconds until the window resets (when not allowed). */
  readonly retryAfterSeconds: number
}

export class RateLimiter extends Effect.Service<RateLimiter>()("@orgplane/server/platform/RateLimiter", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Counts one hit on `key` and says whether it fits `limit` per `window`. */
    const hit = (key: string, limit: number, window: Duration.DurationInput) =>
      Effect.gen(function*() {
        const at = yield* now
        const windowMillis = Duration.toMillis(window)
        const windowStartFloor = new Date(at.getTime() - windowMillis)
        const [row] = yield* sql<{ windowStart: Date; count: number }>`
          INSERT INTO rate_limits (key, window_start, count) VALUES (${key}, ${at}, 1)
          ON CONFLICT (key) DO UPDATE SET
            window_start = CASE WHEN rate_limits.window_start <= ${windowStartFloor} THEN ${at} ELSE rate_limits.window_start END,
            count = CASE WHEN rate_limits.window_start <= ${windowStartFloor} THEN 1 ELSE rate_limits.count + 1 END
          RETURNING window_start, count`
        const resetsAt = row.windowStart.getTime() + windowMillis
        return {
          allowed: row.count <= limit,
          retryAfterSeconds: Math.max(1, Math.ceil((resetsAt - at.getTime()) / 1000))
        } satisfies Decision
      })

    return { hit } as const
  })
}) {}

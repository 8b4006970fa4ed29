/**
 * Fixed-window rate limits kept in the database (not tenant-scoped), so they hold across restarts and processes; and
 * the hourly job deleting the windows that ended, a `ClusterCron` on the durable engine (the server provides
 * `expiryLayer` with its `Sharding` and the database).
 */
import * as Context from "effect/Context"
import * as Cron from "effect/Cron"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ClusterCron from "effect/cluster/ClusterCron"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { deleteInBatches } from "./Statements.js"
import { now } from "./Time.js"

/**
 * The longest window a limit may use: a row whose window started longer ago than this counts nothing (its next hit
 * starts a new window, a read ignores it), so the expiry job deletes it.
 */
export const LONGEST_WINDOW = Duration.days(1)

export interface Decision {
  readonly allowed: boolean
  /** Seconds until the window resets (when not allowed). */
  readonly retryAfterSeconds: number
}

/** Where one key stands in its window: what it counted so far, and the seconds until the window resets. */
export interface Standing {
  readonly key: string
  readonly count: number
  readonly retryAfterSeconds: number
}

const secondsUntil = (resetsAt: number, at: Date) => Math.max(1, Math.ceil((resetsAt - at.getTime()) / 1000))

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /**
   * Counts one hit on each of `keys` in one statement (a window of `window` starts at a key's first hit, or at the
   * first hit after its window ended), and answers each key's count after it. The keys are written in one order
   * whatever the caller's, so two statements sharing keys cannot deadlock.
   */
  const hitEach = Effect.fn("RateLimiter.hitEach")(function*(keys: ReadonlyArray<string>, window: Duration.Input) {
    const at = yield* now
    const windowMillis = Duration.toMillis(window)
    if (windowMillis > Duration.toMillis(LONGEST_WINDOW)) {
      return yield* Effect.die(new Error(`A rate limit's window is at most a day (${Duration.format(Duration.fromInputUnsafe(window))} given)`))
    }
    const windowStartFloor = new Date(at.getTime() - windowMillis)
    const rows = yield* sql<{ key: string; windowStart: Date; count: number }>`
        INSERT INTO rate_limits (key, window_start, count)
        SELECT k, ${at}, 1 FROM unnest(${[...new Set(keys)].sort()}::text[]) AS k ORDER BY k
        ON CONFLICT (key) DO UPDATE SET
          window_start = CASE WHEN rate_limits.window_start <= ${windowStartFloor} THEN ${at} ELSE rate_limits.window_start END,
          count = CASE WHEN rate_limits.window_start <= ${windowStartFloor} THEN 1 ELSE rate_limits.count + 1 END
        RETURNING key, window_start, count`
    return rows.map((row): Standing => ({
      key: row.key,
      count: row.count,
      retryAfterSeconds: secondsUntil(row.windowStart.getTime() + windowMillis, at)
    }))
  })

  /** Counts one hit on `key` and says whether it fits `limit` per `window`. */
  const hit = Effect.fn("RateLimiter.hit")(function*(key: string, limit: number, window: Duration.Input) {
    const [standing] = yield* hitEach([key], window)
    return { allowed: standing!.count <= limit, retryAfterSeconds: standing!.retryAfterSeconds } satisfies Decision
  })

  /** What `keys` counted in windows of `window` still running, counting nothing; a key without one is absent. */
  const read = Effect.fn("RateLimiter.read")(function*(keys: ReadonlyArray<string>, window: Duration.Input) {
    const at = yield* now
    const windowMillis = Duration.toMillis(window)
    const rows = yield* sql<{ key: string; windowStart: Date; count: number }>`
        SELECT key, window_start, count FROM rate_limits
        WHERE key = ANY(${[...keys]}::text[]) AND window_start > ${new Date(at.getTime() - windowMillis)}`
    return rows.map((row): Standing => ({
      key: row.key,
      count: row.count,
      retryAfterSeconds: secondsUntil(row.windowStart.getTime() + windowMillis, at)
    }))
  })

  /** Forgets what `keys` counted. */
  const clear = Effect.fn("RateLimiter.clear")(function*(keys: ReadonlyArray<string>) {
    yield* sql`DELETE FROM rate_limits WHERE key = ANY(${[...keys]}::text[])`
  })

  /** Forgets every key starting with `prefix` (its `%`, `_` and `\` matching themselves). */
  const clearPrefix = Effect.fn("RateLimiter.clearPrefix")(function*(prefix: string) {
    yield* sql`DELETE FROM rate_limits WHERE key LIKE ${`${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`}`
  })

  /** Takes back one hit on `key`: it was counted before it could be told that it should not count. */
  const refund = Effect.fn("RateLimiter.refund")(function*(key: string) {
    yield* sql`UPDATE rate_limits SET count = count - 1 WHERE key = ${key} AND count > 0`
  })

  /**
   * Forgets every count whose key names `id` (an organization's id, unique by construction): what a purged
   * organization leaves in the counters. How many.
   */
  const clearMentioning = Effect.fn("RateLimiter.clearMentioning")(function*(id: string) {
    const rows = yield* sql<{ count: number }>`WITH gone AS (DELETE FROM rate_limits WHERE strpos(key, ${id}) > 0 RETURNING 1)
                                                 SELECT count(*)::int AS count FROM gone`
    return rows[0]?.count ?? 0
  })

  return { hit, hitEach, read, clear, clearPrefix, refund, clearMentioning } as const
})

export class RateLimiter extends Context.Service<RateLimiter>()("@orgplane/server/platform/RateLimiter", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

/** Rows deleted per statement, so the job never holds many locks or a long transaction. */
const deleteBatch = 5_000

/**
 * One run of the expiry job: deletes the rows whose window started more than `LONGEST_WINDOW` before `now`, in
 * batches, and answers how many. Keys are made per email and address tried (sign-in throttling), so without it
 * credential stuffing from many addresses would grow the table without end. The tests call it with the time they want.
 */
export const deleteExpired = (options: { readonly now: Date }): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cutoff = new Date(options.now.getTime() - Duration.toMillis(LONGEST_WINDOW))
    // By ctid: a row a hit updated meanwhile is another version, which the delete then leaves alone.
    return yield* deleteInBatches((limit) =>
      sql`
        DELETE FROM rate_limits WHERE ctid IN (
          SELECT ctid FROM rate_limits WHERE window_start < ${cutoff} LIMIT ${limit}
        ) RETURNING 1`.pipe(Effect.map((rows) => rows.length)), { batch: deleteBatch })
  })

/** Every hour at minute 23 (UTC). */
export const schedule = Cron.parseUnsafe("23 * * * *", "UTC")

/** The job, once per cluster, on the durable engine's cron. */
export const expiryLayer = ClusterCron.make({
  name: "rate-limits-expiry",
  cron: schedule,
  // Its requirement (the database) is the layer's, taken from where it is provided.
  execute: Effect.gen(function*() {
    const deleted = yield* deleteExpired({ now: yield* now })
    if (deleted > 0) yield* Effect.logDebug(`Deleted ${deleted} ended rate-limit windows`)
  })
})

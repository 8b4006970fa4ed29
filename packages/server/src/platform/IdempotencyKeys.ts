/**
 * The `idempotency_keys` table (migration 0015): claiming a key, marking it inside a transaction, keeping the answer,
 * and the hourly job that deletes keys past their 24 hours. The rules that use these statements are in
 * Idempotency.ts.
 *
 * The job is a `ClusterCron` on the durable engine: the server provides `expiryLayer` with its `Sharding` and the
 * database.
 */
import * as Cron from "effect/Cron"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ClusterCron from "effect/cluster/ClusterCron"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { deleteInBatches } from "./Statements.js"
import { now } from "./Time.js"

/** How long a key and its answer are kept. */
export const lifetime = Duration.hours(24)

export interface KeyId {
  /** A hash of the credential and the organization it acts in. */
  readonly scope: string
  /** The `Idempotency-Key` as sent. */
  readonly key: string
}

/** What a claim found: the key's row after the claim, and whether this request now holds it. */
export interface ClaimedRow {
  /** True when this request holds the lease: a new key, or one whose earlier request ended without an answer kept. */
  readonly claimed: boolean
  readonly fingerprint: string
  /** Markers of the transactions that committed under this key. */
  readonly commitMarkers: ReadonlyArray<string>
  /** The kept answer (sealed), when there is one. */
  readonly response: string | null
}

export interface Claim extends KeyId {
  readonly fingerprint: string
  readonly lease: string
  readonly at: Date
  readonly leaseUntil: Date
  /**
   * Leases of this process with no request running under them: a request's that ended but could not release it, a
   * claim's that got no answer (Idempotency.ts `Memo`).
   */
  readonly abandoned: ReadonlyArray<string>
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /**
   * One statement: a new key is inserted and held; an existing one is taken over when it is past its lifetime
   * (then it starts anew), or when it has the same fingerprint, no answer kept and no live lease (its request
   * ended without an answer to keep, or this process abandoned it). Otherwise the row is read as it is. No row at all means another request
   * inserted the key after this statement's snapshot: it is running.
   */
  const claim = (claim: Claim): Effect.Effect<Option.Option<ClaimedRow>, SqlError> =>
    Effect.gen(function*() {
      const expiredBefore = new Date(claim.at.getTime() - Duration.toMillis(lifetime))
      const rows = yield* sql<ClaimedRow>`
        WITH claimed AS (
          INSERT INTO idempotency_keys AS k (scope, key, fingerprint, created_at, lease_id, lease_expires_at)
          VALUES (${claim.scope}, ${claim.key}, ${claim.fingerprint}, ${claim.at}, ${claim.lease}, ${claim.leaseUntil})
          ON CONFLICT (scope, key) DO UPDATE SET
            fingerprint = EXCLUDED.fingerprint,
            created_at = CASE WHEN k.created_at <= ${expiredBefore} THEN EXCLUDED.created_at ELSE k.created_at END,
            commit_markers = CASE WHEN k.created_at <= ${expiredBefore} THEN '{}' ELSE k.commit_markers END,
            response_status = NULL,
            response = NULL,
            lease_id = EXCLUDED.lease_id,
            lease_expires_at = EXCLUDED.lease_expires_at
          WHERE k.created_at <= ${expiredBefore}
            OR (k.response IS NULL AND k.fingerprint = EXCLUDED.fingerprint
              AND (k.lease_id IS NULL OR k.lease_expires_at <= ${claim.at} OR k.lease_id = ANY(${claim.abandoned}::text[])))
          RETURNING true AS claimed, k.fingerprint, k.commit_markers, k.response
        )
        SELECT claimed, fingerprint, commit_markers, response FROM claimed
        UNION ALL
        SELECT false, fingerprint, commit_markers, response FROM idempotency_keys
        WHERE scope = ${claim.scope} AND key = ${claim.key} AND NOT EXISTS (SELECT 1 FROM claimed)`
      return Option.fromNullishOr(rows[0])
    })

  /**
   * Inside a transaction, last: records that it committed under the lease. A transaction that wrote nothing is
   * not recorded (it changed nothing). Answers whether it wrote and whether the lease was still this request's.
   */
  const mark = (id: KeyId & { readonly lease: string; readonly marker: string }) =>
    Effect.map(
      sql<{ wrote: boolean; marked: boolean }>`
        WITH state AS MATERIALIZED (SELECT pg_current_xact_id_if_assigned() IS NOT NULL AS wrote),
        marked AS (
          UPDATE idempotency_keys SET commit_markers = array_append(commit_markers, ${id.marker})
          FROM state
          WHERE state.wrote AND scope = ${id.scope} AND key = ${id.key} AND lease_id = ${id.lease}
          RETURNING 1
        )
        SELECT wrote, EXISTS (SELECT 1 FROM marked) AS marked FROM state`,
      (rows) => rows[0] ?? { wrote: false, marked: false }
    )

  /** Whether the transaction that wrote `marker` committed (asked after its COMMIT got no answer). */
  const committed = (id: KeyId & { readonly marker: string }) =>
    Effect.map(
      sql<{ committed: boolean }>`
        SELECT ${id.marker} = ANY(commit_markers) AS committed FROM idempotency_keys
        WHERE scope = ${id.scope} AND key = ${id.key}`,
      (rows) => rows[0]?.committed === true
    )

  /** Keeps the answer and ends the lease; false when the lease was no longer this request's. */
  const keep = (id: KeyId & { readonly lease: string; readonly status: number; readonly response: string }) =>
    Effect.map(
      sql`
        UPDATE idempotency_keys SET response_status = ${id.status}, response = ${id.response}, lease_id = NULL, lease_expires_at = NULL
        WHERE scope = ${id.scope} AND key = ${id.key} AND lease_id = ${id.lease}
        RETURNING 1`,
      (rows) => rows.length > 0
    )

  /** Ends the lease without an answer: the next request with the key runs. */
  const release = (id: KeyId & { readonly lease: string }) =>
    sql`
      UPDATE idempotency_keys SET lease_id = NULL, lease_expires_at = NULL
      WHERE scope = ${id.scope} AND key = ${id.key} AND lease_id = ${id.lease}`.pipe(Effect.asVoid)

  /** Extends a running request's lease. */
  const renew = (id: KeyId & { readonly lease: string; readonly until: Date }) =>
    sql`
      UPDATE idempotency_keys SET lease_expires_at = ${id.until}
      WHERE scope = ${id.scope} AND key = ${id.key} AND lease_id = ${id.lease}`.pipe(Effect.asVoid)

  return { claim, mark, committed, keep, release, renew } as const
})

export type IdempotencyKeys = Effect.Success<typeof make>

/** Rows deleted per statement, so the job never holds many locks or a long transaction. */
const deleteBatch = 5_000

/**
 * One run of the job: deletes every key created more than `lifetime` before `now`, in batches, and answers how many.
 * The tests call it directly with the time they want.
 */
export const deleteExpired = (options: { readonly now: Date }): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cutoff = new Date(options.now.getTime() - Duration.toMillis(lifetime))
    return yield* deleteInBatches((limit) =>
      sql`
        DELETE FROM idempotency_keys WHERE ctid IN (
          SELECT ctid FROM idempotency_keys WHERE created_at <= ${cutoff} LIMIT ${limit}
        ) RETURNING 1`.pipe(Effect.map((rows) => rows.length)), { batch: deleteBatch })
  })

/**
 * Every hour at minute 41 (UTC). Hourly rather than daily: claims ignore expired keys anyway, and an hourly run keeps
 * the table at about a day of keys instead of two.
 */
export const schedule = Cron.parseUnsafe("41 * * * *", "UTC")

/** The job, once per cluster, on the durable engine's cron. */
export const expiryLayer = ClusterCron.make({
  name: "idempotency-keys-expiry",
  cron: schedule,
  // Its requirement (the database) is the layer's, taken from where it is provided.
  execute: Effect.gen(function*() {
    const deleted = yield* deleteExpired({ now: yield* now })
    if (deleted > 0) yield* Effect.logDebug(`Deleted ${deleted} expired idempotency keys`)
  })
})

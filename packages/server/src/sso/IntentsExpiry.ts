/**
 * The cleanup of SSO sign-in state nobody can use any more: intents (tests, sign-ins, and the intents IdP-initiated
 * SAML sign-ins create already spent) that expired over an hour ago, one-time code included, and SAML assertions
 * past their expiry (the engine refuses those anyway), in every organization, every 10 minutes on the durable
 * engine's cron (`ClusterCron`, so once per cluster).
 */
import * as ClusterCron from "effect/cluster/ClusterCron"
import * as Cron from "effect/Cron"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { deleteInBatches } from "../platform/Statements.js"
import { now } from "../platform/Time.js"
import { IntentsRepository } from "./IntentsRepository.js"

/** Rows deleted per statement, so the job never holds many locks or a long transaction. */
export const DELETE_BATCH = 1_000
/** Statements per table and run: a run deletes at most 20,000 rows of each; the next run (10 minutes later) the rest. */
export const BATCHES_PER_RUN = 20
/** How long an expired intent is kept (its one-time code's expiry too): a late callback still reads as `replayed`. */
export const INTENT_GRACE = Duration.hours(1)

/**
 * One run of the job at `now`: deletes the intents that expired (with their code) more than `INTENT_GRACE` before
 * `now`, and the assertions that expired before `now`, at most `batch × batches` of each. How many of each. The tests
 * call it directly with the time they want.
 */
export const deleteExpired = Effect.fn("IntentsExpiry.deleteExpired")(function*(
  options: { readonly now: Date; readonly batch?: number | undefined; readonly batches?: number | undefined }
): Effect.fn.Return<{ readonly intents: number; readonly assertions: number }, SqlError, SqlClient.SqlClient | IntentsRepository> {
  const repository = yield* IntentsRepository
  const batch = options.batch ?? DELETE_BATCH
  const batches = options.batches ?? BATCHES_PER_RUN
  const before = new Date(options.now.getTime() - Duration.toMillis(INTENT_GRACE))
  const intents = yield* deleteInBatches((limit) => repository.deleteExpiredIntents({ before, limit }), { batch, batches })
  const assertions = yield* deleteInBatches((limit) => repository.deleteExpiredAssertions({ at: options.now, limit }), { batch, batches })
  return { intents, assertions }
}, Effect.provide(IntentsRepository.layer))

/** Every 10 minutes (at minute 7, 17, ...): intents last 5 minutes, so the table holds about an hour and a quarter of them. */
export const schedule = Cron.parseUnsafe("7-59/10 * * * *", "UTC")

/** The cleanup, once per cluster every 10 minutes. */
export const layer = ClusterCron.make({
  name: "sso-intents-expiry",
  cron: schedule,
  // Its requirement (the database) is the layer's, taken from where it is provided.
  execute: Effect.gen(function*() {
    const deleted = yield* deleteExpired({ now: yield* now })
    if (deleted.intents + deleted.assertions > 0) {
      yield* Effect.logDebug(`Deleted ${deleted.intents} expired SSO intents and ${deleted.assertions} expired SAML assertions`)
    }
  })
})

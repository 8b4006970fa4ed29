/**
 * Starting sync workflows, after the transaction that recorded their events has committed, and the recovery of
 * events left queued (see Sync.ts): the event row is the durable record, the start is not.
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { orUnavailable } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { type EventRef, SyncWorkflow } from "./Sync.js"
import { SyncEventsRepository } from "./SyncEventsRepository.js"

/**
 * Starts the workflow of each event (see Sync.ts): after the transaction that recorded them, never inside one. A
 * start that fails is logged; the event stays queued and the recovery starts it later.
 */
export const start = (events: ReadonlyArray<EventRef>) =>
  Effect.forEach(events, (event) =>
    SyncWorkflow.execute({ organizationId: event.organizationId, syncEventId: event.id }, { discard: true }).pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logError("the sync's workflow did not start: the recovery will start it", cause).pipe(
            Effect.annotateLogs({ connectorSyncEventId: event.id })
          ))
    ), { discard: true })

/**
 * The recovery of events whose workflow may not have started: those still queued `after` they were recorded, at
 * most `batch` at a time (the oldest first), looked for when the server starts and then `every` so often.
 */
export const recoveryPolicy = { after: Duration.minutes(1), every: Duration.minutes(1), batch: 100 } as const

/**
 * One pass of the recovery: starts the workflow of every event queued since before `recoveryPolicy.after` ago, and
 * answers how many. An event whose workflow exists is started again to no effect (one execution per event id).
 */
export const recover = Effect.gen(function*() {
  const events = yield* SyncEventsRepository
  const before = new Date((yield* now).getTime() - Duration.toMillis(recoveryPolicy.after))
  const queued = yield* orUnavailable(events.queuedBefore({ before, limit: recoveryPolicy.batch }))
  yield* start(queued)
  if (queued.length > 0) yield* Effect.logInfo(`Started the workflows of ${queued.length} sync events left queued`)
  return queued.length
})

/**
 * The recovery, at start-up and then every `recoveryPolicy.every`. A pass the database's unavailability stopped is
 * left to the next one (the unavailability is logged where it is noticed); a bug is logged.
 */
export const layer = Layer.effectDiscard(
  Effect.forkScoped(
    recover.pipe(
      Effect.catchTag("ServiceUnavailable", () => Effect.void),
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError("the recovery of queued sync events failed", cause)
      ),
      Effect.repeat(Schedule.spaced(recoveryPolicy.every))
    )
  )
)

/**
 * Worker activity: heartbeats (ordered by the runtime's `sentAt`, applied only when newer, rate-limited per worker,
 * the last 100 kept), the transitions between online and offline (to online on the heartbeat that brings a worker
 * back; to offline by a check every minute on the durable engine's cron), and the feed of both for the worker's
 * creator, owners and admins.
 */
import {
  Forbidden,
  HEARTBEAT_MAX_CLOCK_AHEAD_MILLIS,
  type HeartbeatRequest,
  InvalidRequest,
  RateLimited,
  Unauthorized,
  WorkerId,
  type WorkerActivityQuery,
  type WorkerCaller,
  type WorkerConnectivity
} from "@orgplane/schema"
import * as ClusterCron from "effect/cluster/ClusterCron"
import * as Context from "effect/Context"
import * as Cron from "effect/Cron"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { IdGenerator, makeId } from "../platform/Ids.js"
import { authorize, can, type Principal } from "../platform/Principal.js"
import { RateLimiter } from "../platform/RateLimiter.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { ActivityConfig, type ActivitySettings, bounds } from "./ActivityConfig.js"
import { ActivityRepository } from "./ActivityRepository.js"
import { workerNotFound } from "./Workers.js"
import { WorkersRepository } from "./WorkersRepository.js"

const isWorkerId = Schema.is(WorkerId)

/** The connectivity of a worker last seen at `seenAt`, at `at`. */
export const connectivityAt = (settings: ActivitySettings, seenAt: Date | null, at: Date): WorkerConnectivity => {
  const { offlineBefore, staleBefore } = bounds(settings, at)
  if (seenAt === null || seenAt <= offlineBefore) return "offline"
  return seenAt <= staleBefore ? "stale" : "online"
}

/** The offline check takes at most this many workers per run; the next run (a minute later) takes the rest. */
export const OFFLINE_BATCH = 1000

/**
 * One run of the offline check at `now`: every worker recorded online and unseen for the offline bound is marked
 * offline with its transition recorded, each in one conditional statement, so a second run, or another server
 * process's, records nothing more. Answers how many transitions it recorded. The tests call it directly.
 */
export const detectOffline = Effect.fn("Activity.detectOffline")(function*(
  options: { readonly now: Date; readonly offlineAfter: Duration.Input }
): Effect.fn.Return<number, SqlError, SqlClient.SqlClient | IdGenerator> {
  const repository = yield* ActivityRepository.make
  const offlineAfterMillis = Duration.toMillis(options.offlineAfter)
  const offlineBefore = new Date(options.now.getTime() - offlineAfterMillis)
  const silent = yield* repository.silent({ offlineBefore, limit: OFFLINE_BATCH })
  let recorded = 0
  for (const worker of silent) {
    const eventId = yield* makeId("wae")
    const marked = yield* repository.markOffline({
      organizationId: worker.organizationId,
      workerId: worker.id,
      eventId,
      offlineBefore,
      offlineAfterMillis,
      recordedAt: options.now
    })
    if (marked) recorded++
  }
  return recorded
})

/** Every minute: the offline bound is minutes, so a transition is recorded within a minute of happening. */
export const schedule = Cron.parseUnsafe("* * * * *", "UTC")

/** The check, once per cluster per minute. */
/** One run of the check at the clock's time. */
export const checkOffline = Effect.gen(function*() {
  const { offlineAfter } = yield* ActivityConfig
  const recorded = yield* detectOffline({ now: yield* now, offlineAfter })
  if (recorded > 0) yield* Effect.logDebug(`Recorded ${recorded} workers going offline`)
})

export const offlineCheckLayer = ClusterCron.make({
  name: "worker-offline-check",
  cron: schedule,
  // Its requirements (the database, ids, the settings) are the layer's, taken from where it is provided.
  execute: checkOffline
})

const readActivityForbidden = () =>
  new Forbidden({
    reason: "insufficient_access",
    message: "Only the worker's creator, owners and admins may read its activity."
  })

const make = Effect.gen(function*() {
  const settings = yield* ActivityConfig
  const limiter = yield* RateLimiter
  const workers = yield* WorkersRepository
  const activity = yield* ActivityRepository

  const heartbeatIntervalSeconds = Math.round(Duration.toSeconds(settings.heartbeatInterval))

  /** The checks only the server can make: `sentAt` against its clock, `lastActivityAt` against `sentAt`. */
  const check = (input: typeof HeartbeatRequest.Type, receivedAt: Date, sentAt: Date) => {
    const details: Array<{ message: string; path: Array<string> }> = []
    if (sentAt.getTime() - receivedAt.getTime() > HEARTBEAT_MAX_CLOCK_AHEAD_MILLIS) {
      details.push({
        path: ["sentAt"],
        message: "is more than 5 minutes ahead of the server's clock: check the runtime's clock"
      })
    }
    if (input.lastActivityAt !== undefined && input.lastActivityAt > sentAt) {
      details.push({ path: ["lastActivityAt"], message: "must not be after sentAt" })
    }
    return details.length === 0 ? Effect.void : Effect.fail(new InvalidRequest({ details }))
  }

  const heartbeat = Effect.fn("Activity.heartbeat")(function*(caller: WorkerCaller, input: typeof HeartbeatRequest.Type) {
    const receivedAt = yield* now
    const sentAt = input.sentAt ?? receivedAt
    yield* check(input, receivedAt, sentAt)
    const decision = yield* orUnavailable(limiter.hit(`worker-heartbeat:${caller.workerId}`, settings.heartbeatsPerMinute, Duration.minutes(1)))
    if (!decision.allowed) {
      return yield* RateLimited.after(
        decision.retryAfterSeconds,
        `More than ${settings.heartbeatsPerMinute} heartbeats of this worker in a minute; retry in ${decision.retryAfterSeconds} seconds.`
      )
    }
    const scope = { organizationId: caller.organizationId, id: caller.workerId }
    const heartbeatId = yield* makeId("whb")
    const eventId = yield* makeId("wae")
    return yield* transaction(
      Effect.gen(function*() {
        // The lock orders this heartbeat with the offline check and other heartbeats of the worker, and tells
        // the state it was in; the statement's own guard decides whether it is newer.
        const locked = yield* workers.lockForHeartbeat(scope)
        // Deleted since its token was checked.
        if (locked === undefined) return yield* Unauthorized.because("credential_revoked")
        const status = input.status ?? "online"
        const active = input.active ?? false
        const lastActivityAt = input.lastActivityAt ?? null
        const applied = yield* workers.heartbeat({
          ...scope,
          receivedAt,
          sentAt,
          status,
          imageVersion: input.imageVersion ?? null,
          activeAt: lastActivityAt ?? (active ? sentAt : null),
          openSessions: input.openSessions ?? null
        })
        yield* workers.touchToken({ organizationId: caller.organizationId, id: caller.tokenId, at: receivedAt })
        if (Option.isNone(applied)) {
          const state = Option.getOrThrow(yield* workers.heartbeatState(scope))
          return {
            applied: false,
            workerId: caller.workerId,
            connectivity: connectivityAt(settings, state.lastSeenAt, receivedAt),
            lastHeartbeatAt: state.lastHeartbeatAt,
            lastActiveAt: state.lastActiveAt,
            openSessions: state.openSessions,
            heartbeatIntervalSeconds
          }
        }
        const workerId = caller.workerId
        const organizationId = caller.organizationId
        yield* activity.insertHeartbeat({
          id: heartbeatId,
          organizationId,
          workerId,
          receivedAt,
          sentAt,
          status,
          active,
          lastActivityAt,
          openSessions: input.openSessions ?? null,
          imageVersion: input.imageVersion ?? null
        })
        yield* activity.trimHeartbeats({ organizationId, workerId })
        if (locked.activityState !== "online") {
          yield* activity.insertTransition({
            id: eventId,
            organizationId,
            workerId,
            fromState: "offline",
            toState: "online",
            at: receivedAt,
            cause: "heartbeat",
            recordedAt: receivedAt
          })
        }
        return {
          applied: true,
          workerId,
          connectivity: "online" as const,
          ...applied.value,
          heartbeatIntervalSeconds
        }
      })
    )
  })

  /** The feed, for the worker's creator, owners and admins (403 for another member, 404 for no such worker). */
  const list = Effect.fn("Activity.list")(function*(principal: Principal, rawId: string, query: WorkerActivityQuery) {
    yield* authorize(principal, "workers.readActivity")
    if (!isWorkerId(rawId)) return yield* workerNotFound()
    const organizationId = principal.organization.id
    return yield* orUnavailable(
      Effect.gen(function*() {
        const creator = yield* workers.creatorOf({ organizationId, id: rawId })
        if (Option.isNone(creator)) return yield* workerNotFound()
        const userId = principal._tag === "Member" ? principal.user.id : null
        const mine = creator.value.createdByUserId !== null && creator.value.createdByUserId === userId
        if (!mine && !can(principal, "workers.manageAny")) return yield* readActivityForbidden()
        return yield* activity.feed({ organizationId, workerId: rawId }, query)
      })
    )
  })

  return { heartbeat, list } as const
})

export class Activity extends Context.Service<Activity>()("@orgplane/server/workers/Activity", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(ActivityRepository.layer))
}

/** System handlers: liveness and readiness. */
import { group } from "../platform/HttpErrors.js"
import { SqlClient } from "@effect/sql"
import { Api, ServiceUnavailable } from "@orgplane/schema"
import { Cause, Context, Duration, Effect } from "effect"
import { ServerConfig } from "../platform/Config.js"
import { DatabaseStatus } from "../platform/DatabaseStatus.js"

/** Load balancers poll /ready with short timeouts of their own: answer within this, whatever the database does. */
export const readyDeadline = Duration.seconds(2)

const databaseDown = new ServiceUnavailable({ message: "The database does not answer." })

/**
 * The answer of /ready, from `check` (a statement on the database). Disconnected: on timeout, answer now and let
 * the stuck check's interruption (a cancel, which needs the hung database too) finish behind.
 */
export const readiness = <E>(check: Effect.Effect<unknown, E>, status: Context.Tag.Service<DatabaseStatus>) =>
  check.pipe(
    Effect.disconnect,
    Effect.timeout(readyDeadline),
    Effect.matchEffect({
      onFailure: (error) =>
        Effect.andThen(
          status.unavailable(Cause.isTimeoutException(error) ? `no answer within ${Duration.format(readyDeadline)}` : error),
          Effect.fail(databaseDown)
        ),
      onSuccess: () => Effect.as(status.available, { ok: true as const, checks: { database: "ok" as const } })
    })
  )

export const layer = group(Api, "system", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* ServerConfig
    const sql = yield* SqlClient.SqlClient
    const status = yield* DatabaseStatus
    return handlers
      .handle("health", () => Effect.succeed({ ok: true as const, version: settings.version }))
      .handle("ready", () => readiness(sql`SELECT 1`, status))
  }))

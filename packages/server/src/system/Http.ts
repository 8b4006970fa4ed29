/** System handlers: liveness and readiness. */
import { Api, ServiceUnavailable } from "@orgplane/schema"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import * as SqlClient from "effect/sql/SqlClient"
import { ServerConfig } from "../platform/Config.js"
import { disconnect } from "../platform/Database.js"
import { DatabaseStatus } from "../platform/DatabaseStatus.js"

/** Load balancers poll /ready with short timeouts of their own: answer within this, whatever the database does. */
export const readyDeadline = Duration.seconds(2)

const databaseDown = new ServiceUnavailable({ message: "The database does not answer." })

/**
 * The answer of /ready, from `check` (a statement on the database). Disconnected: on timeout, answer now and let
 * the stuck check's interruption (a cancel, which needs the hung database too) finish behind.
 */
export const readiness = Effect.fn("System.readiness")(function*<E>(check: Effect.Effect<unknown, E>, status: DatabaseStatus["Service"]) {
  return yield* disconnect(check).pipe(
    Effect.timeout(readyDeadline),
    Effect.matchEffect({
      onFailure: (error) =>
        Effect.andThen(
          status.unavailable(Cause.isTimeoutError(error) ? `no answer within ${Duration.format(readyDeadline)}` : error),
          Effect.fail(databaseDown)
        ),
      onSuccess: () => Effect.as(status.available, { ok: true as const, checks: { database: "ok" as const } })
    })
  )
})

export const layer = HttpApiBuilder.group(Api, "system", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* ServerConfig
    const sql = yield* SqlClient.SqlClient
    const status = yield* DatabaseStatus
    return handlers
      .handle("health", () => Effect.succeed({ ok: true as const, version: settings.version }))
      .handle("ready", () => readiness(sql`SELECT 1`, status))
  }))

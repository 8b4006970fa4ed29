/** System handlers: liveness and readiness. */
import { group } from "../platform/HttpErrors.js"
import { SqlClient } from "@effect/sql"
import { Api, ServiceUnavailable } from "@orgplane/schema"
import { Duration, Effect } from "effect"
import { ServerConfig } from "../platform/Config.js"
import { DatabaseStatus } from "../platform/DatabaseStatus.js"

/** Load balancers poll /ready with short timeouts of their own: answer within this, whatever the database does. */
const readyDeadline = Duration.seconds(2)

export const SystemHttp = group(Api, "system", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* ServerConfig
    const sql = yield* SqlClient.SqlClient
    const status = yield* DatabaseStatus
    const databaseDown = new ServiceUnavailable({ message: "The database does not answer." })
    return handlers
      .handle("health", () => Effect.succeed({ ok: true as const, version: settings.version }))
      .handle("ready", () =>
        // Disconnected: on timeout, answer now and let the stuck query's interruption (a cancel) finish behind.
        sql`SELECT 1`.pipe(
          Effect.disconnect,
          Effect.timeout(readyDeadline),
          Effect.matchEffect({
            onFailure: (error) =>
              Effect.zipRight(
                status.unavailable(error._tag === "TimeoutException" ? `no answer within ${Duration.format(readyDeadline)}` : error),
                Effect.fail(databaseDown)
              ),
            onSuccess: () => Effect.as(status.available, { ok: true as const, checks: { database: "ok" as const } })
          })
        ))
  }))

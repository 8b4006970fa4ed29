/** System handlers: liveness and readiness. */
import { group } from "../platform/HttpErrors.js"
import { SqlClient } from "@effect/sql"
import { Api, ServiceUnavailable } from "@orgplane/schema"
import { Effect } from "effect"
import { ServerConfig } from "../platform/Config.js"

export const SystemHttp = group(Api, "system", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* ServerConfig
    const sql = yield* SqlClient.SqlClient
    const databaseDown = new ServiceUnavailable({ message: "The database does not answer." })
    return handlers
      .handle("health", () => Effect.succeed({ ok: true as const, version: settings.version }))
      .handle("ready", () =>
        sql`SELECT 1`.pipe(
          Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => databaseDown }),
          Effect.catchTag("SqlError", () => Effect.fail(databaseDown)),
          Effect.as({ ok: true as const, checks: { database: "ok" as const } })
        ))
  }))

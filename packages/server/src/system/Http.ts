/** System handlers: liveness and readiness, and the health probes (`Health.ts`). */
import { Api, ServiceUnavailable } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as SqlClient from "effect/sql/SqlClient"
import { ServerConfig } from "../platform/Config.js"
import { DatabaseStatus } from "../platform/DatabaseStatus.js"
import { Health, withinDeadline } from "./Health.js"

const databaseDown = new ServiceUnavailable({ message: "The database does not answer." })

/** The answer of /ready, from `check` (a statement on the database), within `readyDeadline`. */
export const readiness = Effect.fn("System.readiness")(function*<E>(check: Effect.Effect<unknown, E>, status: DatabaseStatus["Service"]) {
  yield* withinDeadline(check, status).pipe(Effect.mapError(() => databaseDown))
  return { ok: true as const, checks: { database: "ok" as const } }
})

export const layer = HttpApiBuilder.group(Api, "system", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* ServerConfig
    const sql = yield* SqlClient.SqlClient
    const status = yield* DatabaseStatus
    const health = yield* Health
    return handlers
      .handle("health", () => Effect.succeed({ ok: true as const, version: settings.version }))
      .handle("ready", () => readiness(sql`SELECT 1`, status))
      .handle("healthLive", () => health.live)
      .handle("healthStarted", () => health.started())
      .handle("healthReady", () => health.ready())
  })).pipe(Layer.provide(Health.layer))

/** platform/DatabaseStatus.ts: an outage is logged once as a WARN (then DEBUG), and its end once. */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as SqlErrors from "effect/sql/SqlError"
import { DatabaseStatus, describe as describeFailure } from "../src/platform/DatabaseStatus.js"

const lines: Array<string> = []
const captured = Logger.layer([
  Logger.make(({ logLevel, message }) => {
    lines.push(`${logLevel} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
  })
])

describe("DatabaseStatus", () => {
  it.effect("logs an outage's first report as a WARN, later ones as DEBUG, and its end once", () =>
    Effect.gen(function*() {
      lines.length = 0
      const status = yield* DatabaseStatus
      yield* status.available
      yield* status.unavailable("no answer within 2s")
      yield* status.unavailable(new Error("Connection terminated"))
      yield* status.available
      yield* status.available
      expect(lines).toEqual([
        "Warn The database is unavailable: no answer within 2s",
        "Debug The database is still unavailable: Connection terminated",
        "Info The database is available again"
      ])
    }).pipe(
      Effect.provide(Layer.merge(DatabaseStatus.layer, captured)),
      Effect.provideService(References.MinimumLogLevel, "Debug")
    ))

  it("describes an Effect 4 SqlError by its messages down to the socket's, once each", () => {
    const error = new SqlErrors.SqlError({
      reason: new SqlErrors.ConnectionError({
        cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }),
        message: "PgConnection: Failed to connect",
        operation: "connect"
      })
    })
    expect(describeFailure(error)).toBe("PgConnection: Failed to connect: connect ECONNREFUSED 127.0.0.1:1")
  })
})

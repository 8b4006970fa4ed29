/** Liveness and readiness. */
import { Schema } from "effect"

export const Health = Schema.Struct({
  ok: Schema.Literal(true),
  version: Schema.String
}).annotations({ identifier: "Health" })

export const Ready = Schema.Struct({
  ok: Schema.Literal(true),
  checks: Schema.Struct({ database: Schema.Literal("ok") })
}).annotations({ identifier: "Ready" })

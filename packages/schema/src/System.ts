/** Liveness and readiness. */
import * as Schema from "effect/Schema"

export const Health = Schema.Struct({
  ok: Schema.Literal(true),
  version: Schema.String
}).annotate({ identifier: "Health", examples: [{ ok: true, version: "1.4.0" }] })

export const Ready = Schema.Struct({
  ok: Schema.Literal(true),
  checks: Schema.Struct({ database: Schema.Literal("ok") })
}).annotate({ identifier: "Ready" })

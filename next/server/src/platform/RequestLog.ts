/**
 * The per-request log line and the server's logger.
 *
 * Partial port (issue 46): only `currentRequestId` so far. Left in packages/server/src/platform/RequestLog.ts: the
 * middleware that writes one line per request and sets `x-request-id`, the log formats, `loggerLayer`.
 */
import * as Effect from "effect/Effect"
import * as References from "effect/References"
import { randomUUID } from "node:crypto"

/**
 * The current request's id (the one its log line and `x-request-id` carry), read from the log annotation the
 * middleware set; outside a request, a fresh one. For answers that quote it (`referenceId`).
 */
export const currentRequestId: Effect.Effect<string> = References.CurrentLogAnnotations.useSync((annotations) => {
  const found = annotations["requestId"]
  return typeof found === "string" ? found : randomUUID()
})

/**
 * Webhook authenticity: a delivery is GitHub's when its `x-hub-signature-256` is the HMAC of the raw body under
 * the app's webhook secret. The comparison is `@octokit/webhooks-methods`' (constant-time), not ours.
 */
import { verify } from "@octokit/webhooks-methods"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"

/**
 * Whether `header` (`sha256=<hex>`) signs `rawBody` (the bytes as received, decoded as UTF-8, before any JSON
 * parsing) under `secret`. A missing or malformed header, or an empty body, is simply not signed: `false`.
 */
export const verifySignature = (
  secret: string | Redacted.Redacted<string>,
  rawBody: string,
  header: string | undefined
): Effect.Effect<boolean> => {
  const key = Redacted.isRedacted(secret) ? Redacted.value(secret) : secret
  if (key === "" || rawBody === "" || header === undefined || !header.startsWith("sha256=")) return Effect.succeed(false)
  // verify rejects only for missing arguments, excluded above; should it ever throw, the delivery is not trusted.
  return Effect.promise(() => verify(key, rawBody, header).catch(() => false))
}

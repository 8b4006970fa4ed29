/**
 * For receivers of audit streams: checking that a delivery came from orgplane. Each delivery's
 * `Orgplane-Signature` header is `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, keyed by the
 * stream's secret (its UTF-8 bytes). Web Crypto only, so it runs in Node 22.19+, Deno, Bun, workers and browsers.
 */

/** The headers' names, lower case as Node's `request.headers` has them: the signature, and the delivery id a retry keeps. */
export { AUDIT_STREAM_DELIVERY_HEADER, AUDIT_STREAM_SIGNATURE_HEADER } from "@orgplane-next/schema"

const encoder = new TextEncoder()

const hexBytes = (hex: string): Uint8Array | undefined => {
  if (!/^(?:[0-9a-f]{2})+$/i.test(hex)) return undefined
  const bytes = new Uint8Array(hex.length / 2)
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16)
  return bytes
}

/**
 * Whether `header` (the `Orgplane-Signature` value) signs `rawBody` (the request body exactly as received, before
 * any JSON parsing) with `secret`, at a time within `toleranceSeconds` (default 300) of `now`: a delivery replayed
 * later than that is refused. Several `v1=` entries are accepted if one matches. The comparison is Web Crypto's
 * `verify`, in constant time.
 *
 * ```ts
 * if (!(await verifyAuditStreamSignature(secret, request.headers["orgplane-signature"], body))) return reply(400)
 * ```
 */
export const verifyAuditStreamSignature = async (
  secret: string,
  header: string | ReadonlyArray<string> | null | undefined,
  rawBody: string | Uint8Array,
  toleranceSeconds = 300,
  now: Date | number = Date.now()
): Promise<boolean> => {
  if (typeof header !== "string") return false
  let timestamp: string | undefined
  const signatures: Array<Uint8Array> = []
  for (const part of header.split(",")) {
    const equals = part.indexOf("=")
    if (equals <= 0) continue
    const name = part.slice(0, equals).trim()
    const value = part.slice(equals + 1).trim()
    if (name === "t") timestamp = value
    else if (name === "v1") {
      const bytes = hexBytes(value)
      if (bytes !== undefined && bytes.length === 32) signatures.push(bytes)
    }
  }
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp) || signatures.length === 0) return false
  const nowSeconds = Math.floor((typeof now === "number" ? now : now.getTime()) / 1000)
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false
  const body = typeof rawBody === "string" ? encoder.encode(rawBody) : rawBody
  const prefix = encoder.encode(`${timestamp}.`)
  const message = new Uint8Array(prefix.length + body.length)
  message.set(prefix, 0)
  message.set(body, prefix.length)
  const key = await globalThis.crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"])
  for (const signature of signatures) {
    if (await globalThis.crypto.subtle.verify("HMAC", key, signature as Uint8Array<ArrayBuffer>, message)) return true
  }
  return false
}

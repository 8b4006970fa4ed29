/**
 * An answer kept for an idempotency key: captured from the response as sent, sealed with a key derived from the
 * credential that sent the request, and turned back into the same response (status, headers, body bytes).
 *
 * Why a key derived from the credential rather than `Crypto`'s keys: a kept answer may carry a secret shown once
 * (a new API key, an invitation or worker token), and only the caller who holds the credential may see it again.
 * The database never holds the credential (only its SHA-256), so a copy of the database cannot open a kept answer,
 * and keys work the same whether or not ORGPLANE_ENCRYPTION_KEYS is configured.
 *
 * The sealed form (`v1:`) is fixed: an answer a 0.1.0 server kept opens here, and the other way round. Cookies and
 * the status text are not kept.
 */
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as NodeCrypto from "node:crypto"

export interface Stored {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** Absent for a response without a body. */
  readonly contentType?: string | undefined
  /** The body bytes, base64. */
  readonly body?: string | undefined
}

/** What can be kept of a response: undefined for a body that is not plain bytes (a stream: none of the API's). */
export const capture = (response: HttpServerResponse.HttpServerResponse): Stored | undefined => {
  const headers: Record<string, string> = { ...response.headers }
  switch (response.body._tag) {
    case "Empty":
      return { status: response.status, headers }
    case "Uint8Array":
      return {
        status: response.status,
        headers,
        contentType: response.body.contentType,
        body: Buffer.from(response.body.body).toString("base64")
      }
    default:
      return undefined
  }
}

/** The response again, as first sent. */
export const toResponse = (stored: Stored): HttpServerResponse.HttpServerResponse =>
  stored.body === undefined
    ? HttpServerResponse.empty({ status: stored.status, headers: stored.headers })
    : HttpServerResponse.uint8Array(Buffer.from(stored.body, "base64"), {
      status: stored.status,
      headers: stored.headers,
      contentType: stored.contentType
    })

/**
 * A key derived from a credential (a session token, an API key or a worker token) with HKDF-SHA-256: `answer` seals
 * kept answers; `request` keys the fingerprint of requests, so that the stored hash of a body carrying passwords
 * (`POST /v1/me/password`) cannot be attacked with a dictionary by whoever reads the database.
 */
export const secretOf = (credential: string, purpose: "answer" | "request"): Buffer =>
  Buffer.from(NodeCrypto.hkdfSync("sha256", credential, Buffer.alloc(0), `orgplane idempotency ${purpose} v1`, 32))

/** AES-256-GCM; `context` (the key's scope and name) is authenticated, so a sealed answer cannot move to another key. */
export const seal = (secret: Buffer, context: string, stored: Stored): string => {
  const iv = NodeCrypto.randomBytes(12)
  const cipher = NodeCrypto.createCipheriv("aes-256-gcm", secret, iv)
  cipher.setAAD(Buffer.from(context, "utf8"))
  const body = Buffer.concat([cipher.update(JSON.stringify(stored), "utf8"), cipher.final()])
  return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(":")
}

/** The kept answer, or undefined when it cannot be opened with this credential (altered, or another credential's). */
export const open = (secret: Buffer, context: string, sealed: string): Stored | undefined => {
  const [version, iv, tag, body] = sealed.split(":")
  if (version !== "v1" || iv === undefined || tag === undefined || body === undefined) return undefined
  try {
    const decipher = NodeCrypto.createDecipheriv("aes-256-gcm", secret, Buffer.from(iv, "base64url"))
    decipher.setAAD(Buffer.from(context, "utf8"))
    decipher.setAuthTag(Buffer.from(tag, "base64url"))
    const plain = Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8")
    return JSON.parse(plain) as Stored
  } catch {
    return undefined
  }
}

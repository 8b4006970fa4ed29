/**
 * The signature of a dump (`orgplane db dump`), its last line:
 *
 *     -- orgplane signature: hmac-sha256 key "<key id>" <HMAC-SHA256 in base64url>
 *
 * the HMAC of every byte before the line (its UTF-8), keyed by a key derived for this purpose
 * (`Crypto.deriveKey(key, "orgplane db dump")`) from the instance's encryption key of that id: the first of its ring
 * when the dump was made. A restore checks it with the key of that id among its own, so a dump signed with an older
 * key of the ring verifies while the ring holds that key, and a restore loads only what an instance's keys signed,
 * as it was written: a file altered after, cut short, or made by anyone without the keys is refused. As the last line
 * of a HMAC taken as the bytes go by, it suits a dump streamed to a file or from one (the reader holds back the last
 * line). A SQL comment, so the file still loads with psql.
 */
import * as Crypto from "./Crypto.js"

const purpose = "orgplane db dump"

const prefix = "-- orgplane signature: hmac-sha256 key "

/** The line's key id (a JSON string) and HMAC. */
const line = /^-- orgplane signature: hmac-sha256 key ("(?:[^"\\]|\\.)*") ([A-Za-z0-9_-]{43})$/u

/** `body` (ending with a newline, which is added when missing) with the signature of `key` as its last line. */
export const sign = (body: string, key: Crypto.EncryptionKey): string => {
  const signed = body.endsWith("\n") ? body : `${body}\n`
  const mac = Crypto.signer(Crypto.deriveKey(key.key, purpose)).update(signed).signature()
  return `${signed}${prefix}${JSON.stringify(key.id)} ${mac}\n`
}

/** What a dump's last line says of it, checked with a ring of keys. */
export type Verdict =
  /** Signed by a key of the ring, as written: `body` is the dump without the signature's line. */
  | { readonly _tag: "Signed"; readonly keyId: string; readonly body: string }
  /** No signature line at its end (an older orgplane's dump, or a file cut short). */
  | { readonly _tag: "Unsigned" }
  /** Signed with a key the ring does not hold. */
  | { readonly _tag: "UnknownKey"; readonly keyId: string }
  /** Its bytes are not those the key signed: altered after it was written, or signed otherwise. */
  | { readonly _tag: "Altered"; readonly keyId: string }

/** The verdict on `text`, a whole dump, with `keys`. */
export const verify = (text: string, keys: ReadonlyArray<Crypto.EncryptionKey>): Verdict => {
  const end = text.endsWith("\n") ? text.length - 1 : text.length
  const start = text.lastIndexOf("\n", end - 1) + 1
  const found = line.exec(text.slice(start, end))
  if (found === null) return { _tag: "Unsigned" }
  let keyId: unknown
  try {
    keyId = JSON.parse(found[1]!)
  } catch {
    return { _tag: "Unsigned" }
  }
  if (typeof keyId !== "string") return { _tag: "Unsigned" }
  const key = keys.find((candidate) => candidate.id === keyId)
  if (key === undefined) return { _tag: "UnknownKey", keyId }
  const body = text.slice(0, start)
  return Crypto.signer(Crypto.deriveKey(key.key, purpose)).update(body).verifies(found[2]!)
    ? { _tag: "Signed", keyId, body }
    : { _tag: "Altered", keyId }
}

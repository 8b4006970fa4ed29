/**
 * The signature of an audit stream's delivery: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`,
 * keyed by the secret's UTF-8 bytes. The timestamp is signed with the body, so a receiver that refuses an old `t`
 * refuses a replayed delivery; `@orgplane/client`'s `verifyAuditStreamSignature` checks it.
 */
import * as NodeCrypto from "node:crypto"

export const signatureHeader = (secret: string, body: string, unixSeconds: number): string =>
  `t=${unixSeconds},v1=${NodeCrypto.createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex")}`

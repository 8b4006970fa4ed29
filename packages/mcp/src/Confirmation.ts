/**
 * Confirmation tokens for destructive operations: a call without one is not executed and answers a token bound to the
 * operation and its exact arguments (HMAC-SHA256 over the name, the SHA-256 of the arguments' canonical JSON, an
 * expiry five minutes on and a random nonce). The call with it runs once: a token is spent in this process until it
 * expires, and the execution's idempotency key comes from its nonce, so a replay on another process answers the kept
 * result instead of running again. A client that never confirms gets a refusal, never an execution.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"

/** How long a confirmation token stays good. */
export const confirmationTtlMillis = 5 * 60 * 1000

/** JSON with object members sorted by name at every depth: the same arguments always hash the same. */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).filter(([, member]) => member !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("base64url")

interface Claims {
  readonly operation: string
  readonly arguments: string
  readonly expires: number
  readonly nonce: string
}

const isClaims = (value: unknown): value is Claims =>
  typeof value === "object" && value !== null &&
  "operation" in value && typeof value.operation === "string" &&
  "arguments" in value && typeof value.arguments === "string" &&
  "expires" in value && typeof value.expires === "number" &&
  "nonce" in value && typeof value.nonce === "string"

/** Issues and redeems confirmation tokens with one key (random per process unless given). */
export class Confirmations extends Context.Service<Confirmations, {
  /** A token for running `operation` with exactly `args`, good for five minutes, once. */
  readonly issue: (operation: string, args: unknown) => Effect.Effect<string>
  /**
   * Spends the token for `operation` with `args`: its nonce (for the idempotency key), or why it is refused (another
   * operation or other arguments, expired, already used, not a token of this key).
   */
  readonly redeem: (token: string, operation: string, args: unknown) => Effect.Effect<Result.Result<string, string>>
}>()("@orgplane/mcp/Confirmation") {
  static readonly make = Effect.fnUntraced(function*(key: string | undefined) {
    const secret = key === undefined ? randomBytes(32) : Buffer.from(key, "utf8")
    const clock = yield* Clock.Clock
    const spent = new Map<string, number>()
    const sign = (payload: string) => createHmac("sha256", secret).update(payload).digest()
    const forget = (now: number) => {
      for (const [nonce, expires] of spent) if (expires <= now) spent.delete(nonce)
    }
    return Confirmations.of({
      issue: (operation, args) =>
        Effect.sync(() => {
          const claims: Claims = {
            operation,
            arguments: sha256(canonicalJson(args)),
            expires: clock.currentTimeMillisUnsafe() + confirmationTtlMillis,
            nonce: randomBytes(16).toString("base64url")
          }
          const payload = Buffer.from(JSON.stringify(claims), "utf8").toString("base64url")
          return `${payload}.${sign(payload).toString("base64url")}`
        }),
      redeem: (token, operation, args) =>
        Effect.sync(() => {
          const now = clock.currentTimeMillisUnsafe()
          forget(now)
          const [payload, signature, ...rest] = token.split(".")
          if (payload === undefined || signature === undefined || rest.length > 0) return Result.fail("The confirmation is not a token this server issued.")
          const expected = sign(payload)
          const given = Buffer.from(signature, "base64url")
          if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
            return Result.fail("The confirmation is not a token this server issued.")
          }
          let claims: unknown
          try {
            claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
          } catch {
            return Result.fail("The confirmation is not a token this server issued.")
          }
          if (!isClaims(claims)) return Result.fail("The confirmation is not a token this server issued.")
          if (claims.operation !== operation) return Result.fail(`The confirmation was issued for ${claims.operation}, not ${operation}.`)
          if (claims.arguments !== sha256(canonicalJson(args))) {
            return Result.fail("The confirmation was issued for other arguments: call again without it for a new one.")
          }
          if (claims.expires <= now) return Result.fail("The confirmation expired (they last 5 minutes): call again without it for a new one.")
          if (spent.has(claims.nonce)) return Result.fail("The confirmation was already used: each runs its operation once.")
          spent.set(claims.nonce, claims.expires)
          return Result.succeed(claims.nonce)
        })
    })
  })

  /** Tokens signed with `key` (shared by processes that must honour each other's), or a random key of this process. */
  static readonly layer = (key: string | undefined) => Layer.effect(Confirmations, Confirmations.make(key))
}

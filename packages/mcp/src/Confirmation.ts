/**
 * Confirmation tokens for destructive operations: a person's consent to one call. A call without one is not executed
 * and answers a token bound to the caller (the person, the credential and the MCP session the call is made in), the
 * operation and its exact arguments: HMAC-SHA256 over the name, the SHA-256 of the arguments' canonical JSON, the
 * SHA-256 of the caller's canonical JSON, an expiry five minutes on and a random nonce. Invocation.ts issues one only
 * after the API's dry authorization passed the call. The call with it runs once, for that caller only: a token is
 * spent in this process until it expires, and the execution's idempotency key comes from its nonce, so a replay on
 * another process answers the kept result instead of running again. A client that never confirms gets a refusal,
 * never an execution.
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

/** Who a confirmation is given to: the person, the credential the call is made with, and the MCP session it is made in. */
export interface Binding {
  readonly userId: string
  readonly credentialId: string
  /** The MCP session (`CurrentSession`), or null for a request of a sessionless protocol. */
  readonly session: string | null
}

/**
 * The MCP session a call is made in: the `Mcp-Session-Id` of a request to `/mcp` (Tools.ts), the process's own on
 * stdio (Server.ts); null for a request of a sessionless protocol.
 */
export const CurrentSession = Context.Reference<string | null>("@orgplane/mcp/Confirmation/CurrentSession", {
  defaultValue: () => null
})

interface Claims {
  readonly operation: string
  readonly arguments: string
  readonly caller: string
  readonly expires: number
  readonly nonce: string
}

const isClaims = (value: unknown): value is Claims =>
  typeof value === "object" && value !== null &&
  "operation" in value && typeof value.operation === "string" &&
  "arguments" in value && typeof value.arguments === "string" &&
  "caller" in value && typeof value.caller === "string" &&
  "expires" in value && typeof value.expires === "number" &&
  "nonce" in value && typeof value.nonce === "string"

const callerOf = (binding: Binding) => sha256(canonicalJson(binding))

/** Issues and redeems confirmation tokens with one key (random per process unless given). */
export class Confirmations extends Context.Service<Confirmations, {
  /** A token for `binding`'s caller to run `operation` with exactly `args`, good for five minutes, once. */
  readonly issue: (binding: Binding, operation: string, args: unknown) => Effect.Effect<string>
  /**
   * Spends the token for `binding`'s caller to run `operation` with `args`: its nonce (for the idempotency key), or
   * why it is refused (given to another caller, for another operation or other arguments, expired, already used, not
   * a token of this key).
   */
  readonly redeem: (token: string, binding: Binding, operation: string, args: unknown) => Effect.Effect<Result.Result<string, string>>
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
      issue: (binding, operation, args) =>
        Effect.sync(() => {
          const claims: Claims = {
            operation,
            arguments: sha256(canonicalJson(args)),
            caller: callerOf(binding),
            expires: clock.currentTimeMillisUnsafe() + confirmationTtlMillis,
            nonce: randomBytes(16).toString("base64url")
          }
          const payload = Buffer.from(JSON.stringify(claims), "utf8").toString("base64url")
          return `${payload}.${sign(payload).toString("base64url")}`
        }),
      redeem: (token, binding, operation, args) =>
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
          if (claims.caller !== callerOf(binding)) {
            return Result.fail(
              "The confirmation was given to another caller (another person, credential or MCP session): it runs nothing for you. Call again without it for one of your own, and ask the person you act for."
            )
          }
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

/**
 * The checks every OAuth callback makes (MCP connections' and the suites'), before its own: the signed state, the
 * pending authorization it names, an error from the authorization server, a code; and the 400s that refuse it.
 */
import { InvalidRequest, type McpOAuthCallbackQuery, type OrganizationId } from "@orgplane/schema"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { verifyState } from "./OAuthState.js"
import { now } from "./Time.js"

/** How long an authorization URL stays valid. */
export const AUTHORIZATION_TTL = Duration.minutes(10)

/** A refusal only the server can make: a 400 whose detail carries a `code` (the README lists them). */
export const callbackRefused = (path: string, code: string, message: string) => new InvalidRequest({ details: [{ message, path: [path], code }] })
export const badState = (message: string, code = "oauth_state_invalid") => callbackRefused("state", code, message)

interface PendingAuthorization {
  readonly usedAt: Date | null
  readonly expiresAt: Date
}

/**
 * The checks every OAuth callback makes, in order (the query's schema already required a `state`): a `state` this
 * server signed with `key`; the pending authorization it names (`find`, else `unknown` says why it may be gone),
 * neither used nor expired; an `error` from the authorization server (`who` names it) spends the authorization
 * (`spend`) and is refused; otherwise a `code`. The authorization, its key, the code and the time of the checks.
 */
export const checkCallback = Effect.fn("OAuthCallback.checkCallback")(function*<A extends PendingAuthorization, E1, R1, E2, R2>(options: {
  readonly query: McpOAuthCallbackQuery
  readonly key: Buffer
  readonly find: (key: { readonly organizationId: OrganizationId; readonly id: string }) => Effect.Effect<Option.Option<A>, E1, R1>
  readonly spend: (key: { readonly organizationId: OrganizationId; readonly id: string }, at: Date) => Effect.Effect<unknown, E2, R2>
  readonly who: (authorization: A) => string
  readonly unknown: string
}) {
  const { query } = options
  // A missing or empty `state` is refused by the query's schema (400 on `state`, with the same words).
  const named = verifyState(options.key, query.state)
  if (named === undefined) return yield* Effect.fail(badState("The `state` is not one this server issued: start again with connect."))
  const authorizationKey = { organizationId: named.organizationId, id: named.authorizationId }
  const authorization = Option.getOrUndefined(yield* options.find(authorizationKey))
  if (authorization === undefined) return yield* Effect.fail(badState(`The authorization is unknown (${options.unknown}): start again with connect.`))
  if (authorization.usedAt !== null) return yield* Effect.fail(badState("This authorization was already used: start again with connect.", "oauth_authorization_used"))
  const at = yield* now
  if (authorization.expiresAt.getTime() <= at.getTime()) {
    return yield* Effect.fail(badState("This authorization expired (they last 10 minutes): start again with connect.", "oauth_authorization_expired"))
  }
  if (query.error !== undefined) {
    // Spent: a refusal cannot be followed by a code for the same state.
    yield* options.spend(authorizationKey, at)
    const description = query.error_description === undefined ? "" : `: ${query.error_description.slice(0, 300)}`
    return yield* Effect.fail(callbackRefused(
      "error",
      query.error === "access_denied" ? "oauth_access_denied" : "oauth_authorization_refused",
      query.error === "access_denied"
        ? `The authorization was denied (access_denied${description}). Nothing was connected.`
        : `${options.who(authorization)} refused the authorization (${query.error.slice(0, 100)}${description}). Nothing was connected.`
    ))
  }
  if (query.code === undefined || query.code === "") {
    return yield* Effect.fail(callbackRefused("code", "oauth_code_missing", "The callback carries neither `code` nor `error`."))
  }
  return { authorization, authorizationKey, code: query.code, at }
})

/**
 * When a stored OAuth token is refreshed (MCP connections' and the suites'), pure over its expiry, and how the loser of
 * a refresh race waits for the winner's write.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"

/** A token expiring within this window is refreshed before use. */
export const REFRESH_WINDOW = Duration.seconds(60)

/** How long a refresh refused with `invalid_grant` waits for a concurrent refresh's write before giving up. */
export const RACE_WAIT = { attempts: 10, interval: Duration.millis(100) }

/** Whether the token expires within `REFRESH_WINDOW` (refresh it before use). */
export const expiring = (credential: { readonly tokenExpiresAt: Date | null }, at: Date) =>
  credential.tokenExpiresAt !== null && credential.tokenExpiresAt.getTime() - at.getTime() <= Duration.toMillis(REFRESH_WINDOW)

/** Whether the token has expired (no longer usable even for a moment). */
export const expired = (credential: { readonly tokenExpiresAt: Date | null }, at: Date) =>
  credential.tokenExpiresAt !== null && credential.tokenExpiresAt.getTime() <= at.getTime()

/**
 * After a refresh refused with `invalid_grant`: waits for a concurrent refresh (with rotation, the one that spent
 * the refresh token) to move the credential past `version`, reading it with `read` every `RACE_WAIT.interval`, at most
 * `RACE_WAIT.attempts` times; that credential, if one did.
 */
export const awaitOtherRefresh = <C extends { readonly credentialVersion: number }, E, R>(
  read: Effect.Effect<Option.Option<C>, E, R>,
  version: number
): Effect.Effect<Option.Option<C>, E, R> => {
  const moved = (current: Option.Option<C>) => Option.isSome(current) && current.value.credentialVersion !== version
  return read.pipe(
    Effect.repeat({ schedule: Schedule.spaced(RACE_WAIT.interval), while: (current) => !moved(current), times: RACE_WAIT.attempts - 1 }),
    Effect.map((last) => moved(last) ? last : Option.none<C>())
  )
}

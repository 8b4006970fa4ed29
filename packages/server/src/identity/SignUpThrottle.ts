/**
 * Sign-ups counted per client address (its IPv6 /64), `ORGPLANE_SIGN_UPS_PER_HOUR` an hour, in the database's fixed
 * windows: wherever an account is made from a client's request, `POST /v1/auth/sign-up` and an invitation accepted
 * with `signUp` alike, in one count. Every attempt counts before anything is looked at (the email's being taken
 * included), so neither answer (`email_taken`, `account_exists`) tests a list of emails faster than the limit, and
 * neither makes accounts in bulk: inviting addresses to one's own organization and accepting with `signUp` is a
 * sign-up. Accounts the identity provider (SSO) or the directory (SCIM) makes are not a client's: they are not counted.
 */
import { RateLimited } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { addressBlock } from "../platform/ClientAddress.js"
import { ServerConfig } from "../platform/Config.js"
import { RateLimiter } from "../platform/RateLimiter.js"
import { orUnavailable } from "../platform/Sql.js"

export const SIGN_UP_WINDOW = Duration.hours(1)

const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const limiter = yield* RateLimiter

  /** Counts a sign-up attempt from `address`; past the hourly limit, 429 with `Retry-After`. */
  const count = Effect.fn("SignUpThrottle.count")(function*(address: string) {
    const decision = yield* orUnavailable(limiter.hit(`sign-up:address:${addressBlock(address)}`, settings.signUpsPerHour, SIGN_UP_WINDOW))
    if (!decision.allowed) {
      const seconds = decision.retryAfterSeconds
      return yield* RateLimited.after(seconds, `Too many sign-ups from this address; retry in ${seconds} seconds.`)
    }
  })

  return { count } as const
})

/** Needs ServerConfig and the database. */
export class SignUpThrottle extends Context.Service<SignUpThrottle>()("@orgplane/server/identity/SignUpThrottle", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(RateLimiter.layer))
}

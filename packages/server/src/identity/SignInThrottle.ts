/**
 * Password sign-in that cannot be guessed at: failed attempts counted, in the database's fixed windows (so the
 * count holds across processes), per email and client address (strict), per email (looser; the addresses the
 * account signed in from are spared, so strangers cannot shut its owner out) and per address (credential stuffing).
 * Keys name the email by a hash, never the account: an email without an account is counted and refused alike.
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { addressBlock } from "../platform/ClientAddress.js"
import { ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { LONGEST_WINDOW, RateLimiter, type Standing } from "../platform/RateLimiter.js"
import { now } from "../platform/Time.js"
import { SignInAddressesRepository } from "./SignInAddressesRepository.js"

/** How long an address the account signed in from stays spared by the account's limit. */
export const KNOWN_ADDRESS_FOR = Duration.days(30)

/** A sign-in refused before its password is checked. */
export interface Refusal {
  readonly retryAfterSeconds: number
  /** The first refusal of this email from this address in the window: the one the audit log records. */
  readonly first: boolean
}

const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const crypto = yield* Crypto
  const limiter = yield* RateLimiter
  const addresses = yield* SignInAddressesRepository
  const window = settings.signInWindow
  if (Duration.isGreaterThan(window, LONGEST_WINDOW)) {
    return yield* Effect.die(new Error(`ORGPLANE_SIGN_IN_WINDOW is at most ${Duration.format(LONGEST_WINDOW)} (${Duration.format(window)} given)`))
  }

  const keysOf = (email: string, address: string) => {
    const account = crypto.hashToken(email.toLowerCase())
    const block = addressBlock(address)
    return {
      account,
      block,
      pair: `sign-in:pair:${account}:${block}`,
      perAccount: `sign-in:account:${account}`,
      perAddress: `sign-in:address:${block}`,
      refused: `sign-in:refused:${account}:${block}`
    }
  }

  /** The standings past their key's limit (`reached`: at it already counts, for a read before counting). */
  const blocking = (keys: ReturnType<typeof keysOf>, standings: ReadonlyArray<Standing>, reached: boolean) =>
    Effect.gen(function*() {
      const limits: Record<string, number> = {
        [keys.pair]: settings.signInFailuresPerAccountAndAddress,
        [keys.perAccount]: settings.signInFailuresPerAccount,
        [keys.perAddress]: settings.signInFailuresPerAddress
      }
      const limitOf = (standing: Standing) => limits[standing.key] ?? Number.POSITIVE_INFINITY
      const over = standings.filter((standing) => reached ? standing.count >= limitOf(standing) : standing.count > limitOf(standing))
      if (!over.some((standing) => standing.key === keys.perAccount)) return over
      const since = new Date((yield* now).getTime() - Duration.toMillis(KNOWN_ADDRESS_FOR))
      const spared = yield* addresses.signedInSince(keys.account, keys.block, since)
      return spared ? over.filter((standing) => standing.key !== keys.perAccount) : over
    })

  const refusal = (keys: ReturnType<typeof keysOf>, over: ReadonlyArray<Standing>) =>
    Effect.map(limiter.hit(keys.refused, 1, window), (logged): Option.Option<Refusal> =>
      Option.some({ retryAfterSeconds: Math.max(...over.map((standing) => standing.retryAfterSeconds)), first: logged.allowed }))

  /**
   * Counts a sign-in attempt before its password is checked, or refuses it. A refusal counts nothing: a stranger
   * past the pair's limit spends nothing of the account's. Attempts racing past a limit are counted at once, in one
   * statement, and those beyond it refused: however many arrive together, no more passwords are checked than the
   * limits allow.
   */
  const attempt = Effect.fn("SignInThrottle.attempt")(function*(email: string, address: string) {
    const keys = keysOf(email, address)
    const counted = [keys.pair, keys.perAccount, keys.perAddress]
    const before = yield* blocking(keys, yield* limiter.read(counted, window), true)
    if (before.length > 0) return yield* refusal(keys, before)
    const after = yield* blocking(keys, yield* limiter.hitEach(counted, window), false)
    if (after.length > 0) return yield* refusal(keys, after)
    return Option.none<Refusal>()
  })

  /**
   * The password was right: the email's counts are cleared (its own from this address, and its own from anywhere;
   * other addresses' guesses at it stay counted), the address's count takes the attempt back (people signing in
   * from one office do not add up), and the address is remembered as the account's.
   */
  const succeeded = Effect.fn("SignInThrottle.succeeded")(function*(email: string, address: string) {
    const keys = keysOf(email, address)
    yield* limiter.clear([keys.pair, keys.perAccount])
    yield* limiter.refund(keys.perAddress)
    yield* addresses.remember(keys.account, keys.block, yield* now)
  })

  /**
   * The account's email changed: the addresses it signed in from follow it to the new one (its owner stays spared
   * there). Counts stay with the old email's hash: they are about guesses at that address.
   */
  const follow = Effect.fn("SignInThrottle.follow")(function*(from: string, to: string) {
    const accountOf = (email: string) => crypto.hashToken(email.toLowerCase())
    if (accountOf(from) !== accountOf(to)) yield* addresses.move(accountOf(from), accountOf(to))
  })

  /**
   * The account with this email was deleted: what the throttle keeps under its email's hash goes (the counts of
   * guesses at it, from anywhere and from each address, their refusals, the remembered addresses). Counts per
   * address stay: they are about the addresses, not the person.
   */
  const forget = Effect.fn("SignInThrottle.forget")(function*(email: string) {
    const account = crypto.hashToken(email.toLowerCase())
    yield* limiter.clear([`sign-in:account:${account}`])
    yield* limiter.clearPrefix(`sign-in:pair:${account}:`)
    yield* limiter.clearPrefix(`sign-in:refused:${account}:`)
    yield* addresses.forget(account)
  })

  return { attempt, succeeded, follow, forget } as const
})

/** Needs ServerConfig, Crypto and the database. */
export class SignInThrottle extends Context.Service<SignInThrottle>()("@orgplane/server/identity/SignInThrottle", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([RateLimiter.layer, SignInAddressesRepository.layer])
  )
}

/**
 * Which organization operates the instance (its owners and admins change plans and read the instance's metrics):
 * `ORGPLANE_OPERATOR_ORGANIZATION_ID`, else the one whose owner redeemed the one-time setup token. Never one by
 * default: the first organization on an instance others can reach may be anyone's (docs/security.md, "The
 * instance's operator"). The setup token is `ORGPLANE_SETUP_TOKEN`, or, when that is unset, one the server makes and
 * logs at each start while no organization operates it (valid 24 hours); a workspace bootstrapped by an anonymous
 * agent is never eligible, and guesses at the token are throttled.
 *
 * The operator's hierarchy over people's accounts is decided here, once, for every operation on one (reset links,
 * disabling, enabling, deleting): `requireReach`.
 */
import {
  type Action,
  allows,
  Conflict,
  Forbidden,
  type MemberContext,
  type OrganizationId,
  RateLimited,
  type UserId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { addressBlock } from "../platform/ClientAddress.js"
import { authorize } from "../platform/Principal.js"
import { RateLimiter, type Standing } from "../platform/RateLimiter.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { BootstrapRepository } from "./BootstrapRepository.js"
import { OperatorRepository } from "./OperatorRepository.js"
import { OrganizationsRepository } from "./OrganizationsRepository.js"

export const SETUP_TOKEN_PREFIX = "opsetup"
/** How long a setup token the server logged may wait for its owner (GitLab keeps its initial root password a day). */
export const SETUP_TOKEN_TTL = Duration.hours(24)

/**
 * Setup token attempts counted per window, from one client address (its IPv6 /64) and from all: a configured token
 * may be a weak one (32 characters of anything), and the claim is worth the whole instance. The first stops one
 * guesser, the second many; both end with their window (`Retry-After`), and the operator can always be named in
 * the configuration (`ORGPLANE_OPERATOR_ORGANIZATION_ID`) instead.
 */
export const SETUP_TOKEN_WINDOW = Duration.hours(1)
export const SETUP_TOKEN_ATTEMPTS_PER_ADDRESS = 10
export const SETUP_TOKEN_ATTEMPTS = 100

const operatorExists = () =>
  new Conflict({
    error: "operator_exists",
    message: "An organization already operates this instance: its owners and admins change plans and read the metrics."
  })

const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const crypto = yield* Crypto
  const repository = yield* OperatorRepository
  const organizations = yield* OrganizationsRepository
  const bootstraps = yield* BootstrapRepository
  const limiter = yield* RateLimiter

  const configured = Option.fromNullishOr(settings.operatorOrganizationId as OrganizationId | undefined)

  /** The operator organization: the configured one, else the claimed one, else none. */
  const organizationId = Option.isSome(configured) ? Effect.succeed(configured) : orUnavailable(repository.claimed)

  /**
   * Passes for the members of the operator organization whose role may take the operator-only `action` (owners and
   * admins, per the policy table); anyone else: 403 `operator_only`. Their API key without a scope naming it: 403
   * `insufficient_scope`.
   */
  const require = Effect.fn("Operator.require")(function*(caller: MemberContext, action: Action) {
    const operator = yield* organizationId
    if (!Option.contains(operator, caller.organization.id) || !allows(caller.membership.role, action)) {
      return yield* new Forbidden({
        reason: "operator_only",
        message: "Only owners and admins of the operator organization may do this."
      })
    }
    yield* authorize(caller, action)
  })

  /**
   * The operator's hierarchy, for every operation of the operator's on someone's account (a reset link, disabling,
   * enabling, deleting), in its transaction: an admin of the operator organization acts on other organizations'
   * people and on its own plain members, not on its owners and admins; an owner on anyone. Both roles are read as
   * they are now, share-locked, so a promotion or demotion in the operator organization cannot slip between the
   * decision and the commit. The caller's own account is each operation's own rule (a 409, or the person's own
   * deletion), not this one's. Otherwise: 403 `insufficient_role`.
   */
  const requireReach = Effect.fn("Operator.requireReach")(function*(caller: MemberContext, userId: UserId) {
    if (userId === caller.user.id) return
    const roles = yield* repository.rolesIn(caller.organization.id, [caller.user.id, userId])
    const roleOf = (id: UserId) => roles.find((row) => row.userId === id)?.role
    const target = roleOf(userId)
    if (target === undefined || target === "member" || roleOf(caller.user.id) === "owner") return
    return yield* new Forbidden({
      reason: "insufficient_role",
      message:
        "The operator organization's owners and admins are acted on by its owners only: ask an owner of the operator organization."
    })
  })

  /**
   * Counts a setup token attempt from the client `address` before the token is looked at, or refuses it with 429 and
   * `Retry-After` past either limit. A refusal counts nothing; attempts racing past a limit are counted in one
   * statement and those beyond it refused.
   */
  const countAttempt = Effect.fn("Operator.countAttempt")(function*(address: string) {
    const limits: Record<string, number> = {
      [`setup-token:address:${addressBlock(address)}`]: SETUP_TOKEN_ATTEMPTS_PER_ADDRESS,
      "setup-token:all": SETUP_TOKEN_ATTEMPTS
    }
    const keys = Object.keys(limits)
    const over = (standings: ReadonlyArray<Standing>, reached: boolean) =>
      standings.filter((standing) => reached ? standing.count >= limits[standing.key]! : standing.count > limits[standing.key]!)
    let refused = over(yield* orUnavailable(limiter.read(keys, SETUP_TOKEN_WINDOW)), true)
    if (refused.length === 0) refused = over(yield* orUnavailable(limiter.hitEach(keys, SETUP_TOKEN_WINDOW)), false)
    if (refused.length > 0) {
      const seconds = Math.max(...refused.map((standing) => standing.retryAfterSeconds))
      return yield* RateLimited.after(seconds, `Too many setup token attempts; retry in ${seconds} seconds.`)
    }
  })

  /** Whether `token` is the instance's setup token: the configured one, else one the server logged and kept. */
  const isSetupToken = (token: string, at: Date) => {
    const hash = crypto.hashToken(token)
    return settings.setupToken === undefined
      ? repository.isSetupToken(hash, at)
      : Effect.succeed(hash === crypto.hashToken(Redacted.value(settings.setupToken).trim()))
  }

  /**
   * `POST /v1/admin/operator`: the caller's organization becomes the operator, if the token is the instance's, the
   * caller its owner, and nothing operates the instance yet; the kept setup tokens are spent with it. Each attempt
   * from `address` is counted first (`countAttempt`).
   */
  const claim = Effect.fn("Operator.claim")(function*(caller: MemberContext, setupToken: string, address: string) {
    yield* authorize(caller, "admin.claimOperator")
    if (Option.isSome(configured)) return yield* operatorExists()
    // Counted outside the claim's transaction, which a wrong token rolls back.
    yield* countAttempt(address)
    return yield* transaction(Effect.gen(function*() {
      const at = yield* now
      if (Option.isSome(yield* repository.claimed)) return yield* operatorExists()
      if (!(yield* isSetupToken(setupToken, at))) {
        return yield* new Forbidden({
          reason: "setup_token_invalid",
          message: "This is not the instance's setup token (ORGPLANE_SETUP_TOKEN, or the one the server logged at its last start, valid 24 hours)."
        })
      }
      const organizationId = caller.organization.id
      if (caller.organization.provisional || (yield* bootstraps.isBootstrapped(organizationId))) {
        return yield* new Conflict({
          error: "operator_not_eligible",
          message: "A workspace made by POST /v1/bootstrap/workspace cannot operate the instance (its claim links were an anonymous agent's to hand out): create an organization with POST /v1/organizations and claim with it."
        })
      }
      if (!(yield* repository.claim(organizationId))) return yield* operatorExists()
      yield* repository.spendSetupTokens
      return { organization: Option.getOrThrow(yield* organizations.find(organizationId)) }
    }))
  })

  /**
   * At start: a new setup token, kept hashed for 24 hours, while nothing operates the instance and no token is
   * configured; none otherwise. The caller logs it (the only place it is ever shown).
   */
  const issueSetupToken = Effect.gen(function*() {
    if (Option.isSome(configured) || settings.setupToken !== undefined) return Option.none<string>()
    if (Option.isSome(yield* repository.claimed)) return Option.none<string>()
    const token = yield* crypto.newToken(SETUP_TOKEN_PREFIX)
    const createdAt = yield* now
    yield* repository.insertSetupToken({
      tokenHash: crypto.hashToken(token),
      createdAt,
      expiresAt: new Date(createdAt.getTime() + Duration.toMillis(SETUP_TOKEN_TTL))
    })
    return Option.some(token)
  })

  return { organizationId, require, requireReach, claim, issueSetupToken } as const
})

export class Operator extends Context.Service<Operator>()("@orgplane/server/identity/Operator", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      OperatorRepository.layer,
      OrganizationsRepository.layer,
      BootstrapRepository.layer,
      RateLimiter.layer
    ])
  )
}

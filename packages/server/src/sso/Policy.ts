/**
 * The SSO enforcement policy (enterprise plan; owners and admins): read it, set it. Turning enforcement on needs an
 * active connection serving a verified domain, and never refuses the session that turns it on (the admin signs in
 * through SSO first, as GitHub and Okta ask). What enforcement does is identity's (`identity/SsoEnforcement.ts`).
 *
 * Its `layer` needs `Sso`, provided beside it.
 */
import { Conflict, type MemberContext, type SetSsoPolicyRequest, SsoPolicy } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Operator } from "../identity/Operator.js"
import { admission, assuranceOrNone, SsoEnforcement } from "../identity/SsoEnforcement.js"
import { describeChange } from "../platform/AuditRecorder.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { PolicyRepository, type SsoPolicyRow } from "./PolicyRepository.js"
import { Sso } from "./Sso.js"

/** An organization that never set its policy: not required, owners' fallback on. */
const DEFAULT = { requireSso: false, ownersPasswordFallback: true } as const

const toPolicy = (row: Option.Option<SsoPolicyRow>) =>
  Option.match(row, {
    onNone: () => new SsoPolicy({ ...DEFAULT, updatedAt: null }),
    onSome: ({ ownersPasswordFallback, requireSso, updatedAt }) => new SsoPolicy({ requireSso, ownersPasswordFallback, updatedAt })
  })

const make = Effect.gen(function*() {
  const repository = yield* PolicyRepository
  const enforcement = yield* SsoEnforcement
  const sso = yield* Sso
  const operator = yield* Operator

  const get = Effect.fn("Policy.get")(function*(principal: MemberContext) {
    yield* sso.allowed(principal)
    return { policy: toPolicy(yield* orUnavailable(repository.find(principal.organization.id))) }
  })

  const set = Effect.fn("Policy.set")(function*(principal: MemberContext, input: SetSsoPolicyRequest) {
    yield* sso.allowedToChange(principal)
    const organizationId = principal.organization.id
    const wanted = { requireSso: input.requireSso, ownersPasswordFallback: input.ownersPasswordFallback ?? DEFAULT.ownersPasswordFallback }
    return yield* transaction(Effect.gen(function*() {
      // The instance's operators keep a way in that no identity provider's outage closes (machine recovery's password
      // reset included): the operator organization's owners sign in with a password whatever it requires.
      if (wanted.requireSso && !wanted.ownersPasswordFallback && Option.contains(yield* operator.organizationId, organizationId)) {
        return yield* new Conflict({
          error: "operator_password_fallback",
          message:
            "This organization operates the instance: while it requires SSO its owners keep signing in with a password (ownersPasswordFallback: true), or an outage of its identity provider would leave nobody to operate the instance."
        })
      }
      if (wanted.requireSso && !(yield* repository.hasActiveConnection(organizationId))) {
        return yield* new Conflict({
          error: "sso_connection_required",
          message:
            "Requiring SSO needs an active connection serving a verified domain, or nobody could sign in: create, test and activate one first (POST /v1/sso/connections)."
        })
      }
      // The session or API key that sets the policy must still be admitted by it (a key as the session that made it).
      {
        const assurance = assuranceOrNone(
          yield* principal.credential._tag === "Session"
            ? enforcement.forSession({ sessionId: principal.credential.sessionId, organizationId })
            : enforcement.forApiKey({ apiKeyId: principal.credential.apiKeyId, organizationId })
        )
        if (Option.isSome(admission(principal.organization, principal.membership.role, assurance, wanted))) {
          return yield* new Conflict({
            error: "sso_policy_locks_you_out",
            message: principal.membership.role === "owner"
              ? "This policy would refuse the session or API key you are using: sign in through the organization's SSO first (POST /v1/sso/sign-in), or keep ownersPasswordFallback on."
              : "This policy would refuse the session or API key you are using: sign in through the organization's SSO first (POST /v1/sso/sign-in), then set it (or use a key made in such a session)."
          })
        }
      }
      const before = toPolicy(yield* repository.find(organizationId))
      const row: SsoPolicyRow = { organizationId, ...wanted, updatedAt: yield* now }
      yield* repository.upsert(row)
      const policy = toPolicy(Option.some(row))
      yield* describeChange(SsoPolicy, before, policy)
      return { policy }
    }))
  })

  return { get, set } as const
})

export class Policy extends Context.Service<Policy>()("@orgplane/server/sso/Policy", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      PolicyRepository.layer,
      SsoEnforcement.layer,
      Operator.layer
    ])
  )
}

/**
 * Who is calling: the Authentication middleware (session token or API key → Actor), and the helpers every handler
 * uses to find the caller's organization and check their role.
 */
import { HttpServerRequest } from "@effect/platform"
import {
  Authentication,
  CurrentActor,
  Forbidden,
  type Membership,
  OptionalAuthentication,
  type Organization,
  OrganizationNotFound,
  type Role,
  type SessionId,
  Unauthorized
} from "@orgplane/schema"
import { Effect, Layer, Option, Redacted } from "effect"
import { ApiKeysRepository } from "../identity/ApiKeysRepository.js"
import { OrganizationsRepository } from "../identity/OrganizationsRepository.js"
import { SessionsRepository } from "../identity/SessionsRepository.js"
import { Crypto } from "./Crypto.js"
import { now } from "./Time.js"

/** API keys record their last use at most this often, so a busy key does not write on every request. */
const TOUCH_INTERVAL_MILLIS = 60_000

/** Turns a session token or an API key into the Actor behind it, or 401. */
const authenticator = Effect.gen(function*() {
  const crypto = yield* Crypto
  const sessions = yield* SessionsRepository
  const apiKeys = yield* ApiKeysRepository

  const service: typeof Authentication.Service = {
    bearer: (token) =>
      Effect.gen(function*() {
        // The platform strips the first 7 characters without looking at them: check the scheme here.
        const request = yield* HttpServerRequest.HttpServerRequest
        const header = request.headers["authorization"] ?? ""
        if (!/^bearer /i.test(header)) return yield* new Unauthorized()
        const value = Redacted.value(token).trim()
        if (value === "") return yield* new Unauthorized()
        const session = yield* sessions.findLive(crypto.hashToken(value), yield* now)
        if (Option.isNone(session)) return yield* new Unauthorized()
        return {
          userId: session.value.userId,
          credential: {
            _tag: "Session" as const,
            sessionId: session.value.id,
            activeOrganizationId: session.value.activeOrganizationId
          }
        }
      }),
    apiKey: (key) =>
      Effect.gen(function*() {
        const value = Redacted.value(key).trim()
        if (value === "") return yield* new Unauthorized()
        const at = yield* now
        const found = yield* apiKeys.findPrincipal(crypto.hashToken(value), at)
        if (Option.isNone(found)) return yield* new Unauthorized()
        const principal = found.value
        if (principal.lastUsedAt === null || at.getTime() - principal.lastUsedAt.getTime() > TOUCH_INTERVAL_MILLIS) {
          yield* apiKeys.touch(principal.apiKeyId, at)
        }
        return {
          userId: principal.userId,
          credential: {
            _tag: "ApiKey" as const,
            apiKeyId: principal.apiKeyId,
            organizationId: principal.organizationId,
            membershipId: principal.membershipId
          }
        }
      })
  }
  return service
})

export const AuthenticationLive = Layer.merge(
  Layer.effect(Authentication, authenticator),
  Layer.effect(OptionalAuthentication, authenticator)
)

export interface MemberContext {
  readonly organization: Organization
  readonly membership: Membership
}

/**
 * The caller's organization and membership. An API key is pinned to its own; a session uses its active
 * organization, falling back to the caller's oldest membership (and remembering it) when that is unset or left.
 */
export const currentMember: Effect.Effect<
  MemberContext,
  OrganizationNotFound,
  CurrentActor | OrganizationsRepository | SessionsRepository
> = Effect.gen(function*() {
  const actor = yield* CurrentActor
  const organizations = yield* OrganizationsRepository
  const credential = actor.credential
  let membership: Option.Option<Membership>
  if (credential._tag === "ApiKey") {
    membership = yield* organizations.findMembershipById(credential.organizationId, credential.membershipId)
  } else {
    membership = credential.activeOrganizationId === null
      ? Option.none()
      : yield* organizations.findMembership(credential.activeOrganizationId, actor.userId)
    if (Option.isNone(membership)) {
      membership = yield* organizations.firstMembershipOf(actor.userId)
      if (Option.isSome(membership)) {
        const sessions = yield* SessionsRepository
        yield* sessions.setActiveOrganization(credential.sessionId, membership.value.organizationId)
      }
    }
  }
  if (Option.isNone(membership)) return yield* new OrganizationNotFound()
  const organization = yield* organizations.findById(membership.value.organizationId)
  if (Option.isNone(organization)) return yield* new OrganizationNotFound()
  return { organization: organization.value, membership: membership.value }
})

const rank: Record<Role, number> = { member: 0, admin: 1, owner: 2 }

/** Whether `role` includes everything `required` may do. */
export const hasRole = (role: Role, required: Role) => rank[role] >= rank[required]

/** Fails with 403 `insufficient_role` unless the member holds `required` or a higher role. */
export const requireRole = (context: MemberContext, required: Role) =>
  hasRole(context.membership.role, required)
    ? Effect.void
    : Effect.fail(
      new Forbidden({ reason: "insufficient_role", message: `This action requires the ${required} role or higher.` })
    )

/** The caller's organization and membership, with at least the `required` role. */
export const currentMemberWithRole = (required: Role) =>
  Effect.tap(currentMember, (context) => requireRole(context, required))

/** The session behind the request; API keys get 403 `session_required` (they cannot act as a person signing in). */
export const currentSession: Effect.Effect<
  { readonly sessionId: SessionId; readonly userId: typeof CurrentActor.Service.userId },
  Forbidden,
  CurrentActor
> = Effect.flatMap(CurrentActor, (actor) =>
  actor.credential._tag === "Session"
    ? Effect.succeed({ sessionId: actor.credential.sessionId, userId: actor.userId })
    : Effect.fail(
      new Forbidden({ reason: "session_required", message: "This action needs a signed-in session, not an API key." })
    ))

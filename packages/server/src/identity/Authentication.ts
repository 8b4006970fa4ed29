/**
 * The authentication middlewares: a session token or an API key becomes the `Actor` behind it (`Authentication`,
 * `OptionalAuthentication`) or the `MemberContext` of the organization it acts in (`MemberAuthentication`, which
 * also applies that organization's SSO enforcement to sessions and API keys: `SsoEnforcement.ts`). Each
 * request costs one statement, which resolves the credential with its person, membership and organization; the
 * API key's `lastUsedAt` is written off the request path.
 */
import { HttpServerRequest } from "@effect/platform"
import {
  type Actor,
  type ApiKeyId,
  Authentication,
  CurrentActor,
  Forbidden,
  type MemberContext,
  MemberAuthentication,
  OptionalAuthentication,
  OrganizationNotFound,
  type SessionId,
  Unauthorized
} from "@orgplane/schema"
import { Context, Duration, Effect, FiberSet, Layer, Option, Redacted } from "effect"
import { MemberStanding } from "../platform/Authority.js"
import { ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { orUnavailable } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { ApiKeysRepository, parseScopes } from "./ApiKeysRepository.js"
import { MembershipsRepository, toCaller } from "./MembershipsRepository.js"
import { SessionsRepository } from "./SessionsRepository.js"
import { admission, keyAdmission, type SessionAssurance } from "./SsoEnforcement.js"

/**
 * Refusals share one value: an API-key request first fails the bearer scheme (the platform tries it first), and a
 * fresh error would capture a stack trace on every such request for nothing.
 */
const unauthorized = new Unauthorized()

/**
 * The platform tries the `bearer` scheme, then, after any failure, `x-api-key`. A request that sent only a bearer
 * token must get the bearer's answer (404 without an organization, 503 when the database is down), not the 401 of
 * a missing API key: the bearer's failure is kept here for the rest of the request.
 */
const bearerFailures = new WeakMap<HttpServerRequest.HttpServerRequest, unknown>()

const rememberFailure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.tapError(effect, (error) => Effect.map(HttpServerRequest.HttpServerRequest, (request) => bearerFailures.set(request, error)))

/** A missing API key: the bearer token's failure when one was sent, else 401. */
const noApiKey = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
  const failure = bearerFailures.get(request)
  return Effect.fail((failure ?? unauthorized) as Unauthorized)
})

/** Sessions and API keys record their last use at most this often, so a busy one does not write on every request. */
const TOUCH_INTERVAL_MILLIS = 60_000
/** Bounds the memory of recent touches; past it, the map starts over (a few extra writes, nothing more). */
const MAX_REMEMBERED_TOUCHES = 10_000

const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const crypto = yield* Crypto
  const sessions = yield* SessionsRepository
  const apiKeys = yield* ApiKeysRepository
  // Touches run in the server's scope: they never hold up a response, and stop with the server.
  const touches = yield* FiberSet.make()
  const lastTouched = new Map<ApiKeyId | SessionId, number>()
  const idleMillis = Duration.toMillis(settings.sessionIdleTimeout)

  /**
   * Records in the background that a session or key was used at `at`, at most once per interval per credential (in
   * this process). A session's idle timeout is judged by it, so it is written before a minute passes.
   */
  const touch = (id: ApiKeyId | SessionId, lastUsedAt: Date | null, at: Date, write: Effect.Effect<void, unknown>) =>
    Effect.gen(function*() {
      const last = Math.max(lastUsedAt?.getTime() ?? 0, lastTouched.get(id) ?? 0)
      if (at.getTime() - last <= TOUCH_INTERVAL_MILLIS) return
      if (lastTouched.size >= MAX_REMEMBERED_TOUCHES) lastTouched.clear()
      lastTouched.set(id, at.getTime())
      yield* FiberSet.run(touches, Effect.ignoreLogged(write))
    })

  const bearer = (token: Redacted.Redacted) =>
    Effect.gen(function*() {
      // The platform strips the first 7 characters without looking at them: check the scheme here.
      const request = yield* HttpServerRequest.HttpServerRequest
      if (!/^bearer /i.test(request.headers["authorization"] ?? "")) return yield* unauthorized
      const value = Redacted.value(token).trim()
      if (value === "") return yield* unauthorized
      const at = yield* now
      const idleSince = new Date(at.getTime() - idleMillis)
      const found = yield* orUnavailable(sessions.resolve({ tokenHash: crypto.hashToken(value), at, idleSince }))
      if (Option.isNone(found)) return yield* unauthorized
      const { sessionCreatedAt, sessionId, sessionLastUsedAt } = found.value
      yield* touch(sessionId, sessionLastUsedAt ?? sessionCreatedAt, at, sessions.touch({ id: sessionId, at }))
      const credential = {
        _tag: "Session",
        sessionId,
        ssoConnectionId: found.value.ssoConnectionId,
        authenticatedAt: sessionCreatedAt
      } as const
      const actor = { ...toCaller(found.value), credential } satisfies Actor
      return { actor, assurance: found.value as SessionAssurance }
    })

  const apiKey = (key: Redacted.Redacted) =>
    Effect.gen(function*() {
      const value = Redacted.value(key).trim()
      if (value === "") return yield* noApiKey
      const at = yield* now
      const found = yield* orUnavailable(apiKeys.resolve({ keyHash: crypto.hashToken(value), at }))
      if (Option.isNone(found)) return yield* unauthorized
      const { apiKeyId, keyOrganizationId, lastUsedAt } = found.value
      yield* touch(apiKeyId, lastUsedAt, at, apiKeys.touch({ organizationId: keyOrganizationId, id: apiKeyId, at }))
      const scopes = found.value.scopes === null ? null : parseScopes(found.value.scopes)
      const actor = { ...toCaller(found.value), credential: { _tag: "ApiKey", apiKeyId, scopes } } satisfies Actor
      return { actor, assurance: found.value as SessionAssurance }
    })

  /** The actor as a member of the organization it acts in; 404 `organization_not_found` for a person without one. */
  const asMember = <E, R>(actor: Effect.Effect<Actor, E, R>) =>
    Effect.flatMap(actor, (resolved): Effect.Effect<MemberContext, OrganizationNotFound> =>
      resolved.organization === null || resolved.membership === null
        ? Effect.fail(new OrganizationNotFound())
        : Effect.succeed({ ...resolved, _tag: "Member", organization: resolved.organization, membership: resolved.membership }))

  /** A session as a member, if the organization it acts in admits it (SSO enforcement, `SsoEnforcement.ts`). */
  const admittedMember = (token: Redacted.Redacted) =>
    Effect.flatMap(bearer(token), ({ actor, assurance }) =>
      Effect.flatMap(asMember(Effect.succeed(actor)), (member) =>
        Option.match(admission(member.organization, member.membership.role, assurance), {
          onNone: () => Effect.succeed(member),
          onSome: Effect.fail
        })))

  /** An API key as a member, if the organization admits how its maker authenticated (`SsoEnforcement.ts` `keyAdmission`). */
  const admittedKey = (key: Redacted.Redacted) =>
    Effect.flatMap(apiKey(key), ({ actor, assurance }) =>
      Effect.flatMap(asMember(Effect.succeed(actor)), (member) =>
        Option.match(keyAdmission(member.organization, member.membership.role, assurance), {
          onNone: () => Effect.succeed(member),
          onSome: Effect.fail
        })))

  return {
    actor: {
      bearer: (token: Redacted.Redacted) => rememberFailure(Effect.map(bearer(token), ({ actor }) => actor)),
      apiKey: (key: Redacted.Redacted) => Effect.map(apiKey(key), ({ actor }) => actor)
    },
    member: {
      bearer: (token: Redacted.Redacted) => rememberFailure(admittedMember(token)),
      apiKey: admittedKey
    }
  }
})

/**
 * The three middlewares, sharing one resolver (and one set of background touches), and how a member's standing is
 * read again when a write commits (platform/Authority.ts): the membership and the credential this module resolved.
 */
export const layer = Layer.scopedContext(
  Effect.gen(function*() {
    const { actor, member } = yield* make
    const memberships = yield* MembershipsRepository
    const standing = (caller: MemberContext, at: Date) =>
      memberships.standing({
        organizationId: caller.organization.id,
        membershipId: caller.membership.id,
        userId: caller.user.id,
        credential: caller.credential,
        at
      })
    return Context.make(Authentication, actor).pipe(
      Context.add(OptionalAuthentication, actor),
      Context.add(MemberAuthentication, member),
      Context.add(MemberStanding, standing)
    )
  })
).pipe(Layer.provide([SessionsRepository.layer, ApiKeysRepository.layer, MembershipsRepository.layer]))

/** The session behind the actor; API keys get 403 `session_required` (they cannot act as a person signing in). */
export const sessionOf = (actor: Actor): Effect.Effect<SessionId, Forbidden> =>
  actor.credential._tag === "Session"
    ? Effect.succeed(actor.credential.sessionId)
    : Effect.fail(new Forbidden({ reason: "session_required", message: "This action needs a signed-in session, not an API key." }))

/** `sessionOf` the request's actor. */
export const currentSession = Effect.flatMap(CurrentActor, (actor) => Effect.map(sessionOf(actor), (sessionId) => ({ actor, sessionId })))
